"""Text that is not UTF-8 (issue 42): a kernel name with byte 0xFF in a capture's StringIds, Latin-1 NVTX
text, file names with a Latin-1 byte (read, unpacked, written with -o). Each input is a real capture or
export from tests/data, copied into tmp_path with the bytes rewritten in the file itself.

What must hold: the command works (exit 0); every format shows the byte as the four characters
``\\xNN``; every output encodes as strict UTF-8; a JSON document says once (its ``not_utf8`` key) that
it holds such bytes, and says nothing when it holds none. Before issue 42 each case ended in
"internal error: UnicodeDecodeError" or "UnicodeEncodeError ... surrogates not allowed".
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sqlite3
import sys

import pytest

from ncuwrap.core import packed
from ncuwrap.render.escape import escape, terminal
from ncuwrap.render.jsonfmt import NOT_UTF8
from tests.conftest import DATA, H200, run_cli

BENCH_SQLITE = H200 / "nsys" / "bench.sqlite"
STEPS = DATA / "h200_ncuwrap" / "steps" / "small_launch.sqlite.gz"
NAIVE_CSV = H200 / "transpose" / "transposeNaive.raw.csv"
FAKE_NSYS = DATA / "profile" / "fake_nsys" / "nsys"
FORMATS = ("table", "markdown", "html", "json")
# A name as Python reads bytes that are not UTF-8 (surrogateescape), and as every output shows it.
CAFE = os.fsdecode(b"caf\xe9")
TE = os.fsdecode(b"t\xe9")


def _strict(text: str) -> str:
    text.encode("utf-8")  # raises on a lone surrogate: nothing unencodable reaches an output
    return text


def _outputs(capsys, *args) -> dict[str, str]:
    """The command's stdout in every format (each exit 0, nothing on stderr)."""
    out = {}
    for fmt in FORMATS:
        code, text, err = run_cli(capsys, *args, "-f", fmt)
        assert (code, err) == (0, ""), (fmt, err)
        out[fmt] = _strict(text)
    return out


def _said_once(doc_text: str) -> dict:
    doc = json.loads(doc_text)
    assert doc_text.count(f'"{NOT_UTF8}"') == 1 and "\\xNN" in doc[NOT_UTF8]
    return doc


@pytest.fixture
def ff_kernel(tmp_path):
    """bench.sqlite with its kernel 'strided_add' renamed to b'strid\\xff_add' in StringIds (raw bytes,
    as a program that names a kernel in Latin-1 leaves them)."""
    path = tmp_path / "bench.sqlite"
    shutil.copy(BENCH_SQLITE, path)
    with sqlite3.connect(path) as db:
        changed = db.execute("UPDATE StringIds SET value = CAST(? AS TEXT) WHERE value = 'strided_add'", (b"strid\xff_add",)).rowcount
    assert changed == 1
    return path


def test_kernel_name_with_byte_ff_shown_escaped_in_every_format(capsys, ff_kernel):
    out = _outputs(capsys, "timeline", ff_kernel)
    for fmt in ("table", "html"):
        assert "strid\\xff_add" in out[fmt], fmt
    assert escape(os.fsdecode(b"strid\xff_add")) == "strid\\\\xff\\_add" and "strid\\\\xff\\_add" in out["markdown"]
    doc = _said_once(out["json"])
    assert doc["limiter"] == "strid\\xff_add"


def test_latin1_nvtx_step_name(capsys, tmp_path):
    """The real small_launch capture's NVTX ranges 'step' rewritten as b'step\\xe9' (Latin-1 'stepé')."""
    path = tmp_path / "steps.sqlite"
    path.write_bytes(gzip.decompress(STEPS.read_bytes()))
    with sqlite3.connect(path) as db:
        assert db.execute("UPDATE NVTX_EVENTS SET text = CAST(? AS TEXT) WHERE text = 'step'", (b"step\xe9",)).rowcount == 30
    out = _outputs(capsys, "timeline", path)
    for fmt in ("table", "markdown", "html"):
        assert "step\\xe9" in out[fmt] or escape("step\udce9") in out[fmt], fmt
    assert _said_once(out["json"])["steps"]["name"] == "step\\xe9"


def test_file_names_with_a_latin1_byte(capsys, tmp_path):
    """café.raw.csv.gz, té.sqlite.gz (unpacked under a temporary name made from theirs) and -o résumé.html,
    each name with the byte 0xE9 as the file system holds it."""
    csv_gz = tmp_path / f"{CAFE}.raw.csv.gz"
    csv_gz.write_bytes(gzip.compress(NAIVE_CSV.read_bytes()))
    sqlite_gz = tmp_path / f"{TE}.sqlite.gz"
    sqlite_gz.write_bytes(gzip.compress(BENCH_SQLITE.read_bytes()))
    for given, command in ((csv_gz, "diagnose"), (sqlite_gz, "timeline")):
        out = _outputs(capsys, command, given)
        shown = terminal(given)
        assert "\\xe9" in shown
        for fmt in ("table", "markdown", "html"):
            assert shown.split("/")[-1] in out[fmt], (command, fmt)
        assert _said_once(out["json"])["source"]["path"].endswith(shown.split("/")[-1])
    target = tmp_path / os.fsdecode(b"r\xe9sum\xe9.html")
    code, _, err = run_cli(capsys, "diagnose", csv_gz, "-f", "html", "-o", target)
    assert code == 0 and _strict(err).endswith("r\\xe9sum\\xe9.html\n")
    assert os.fsencode(target.name) in os.listdir(os.fsencode(tmp_path))
    assert "caf\\xe9.raw.csv.gz" in target.read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["timeline", "diagnose"])
def test_an_nsys_rep_nsys_cannot_export_under_a_latin1_name(capsys, tmp_path, monkeypatch, command):
    """résumé.nsys-rep, named in Latin-1, that nsys cannot export: nsys's error echoes the name in those bytes
    (the stand-in nsys writes them as it got them). It ended in "internal error: UnicodeDecodeError:
    'utf-8' codec can't decode byte 0xe9" (issue 54)."""
    monkeypatch.setenv("FAKE_NSYS_EXPORT_FAILS", "1")
    report = tmp_path / os.fsdecode(b"r\xe9sum\xe9.nsys-rep")
    shutil.copy(H200 / "nsys" / "bench.nsys-rep", report)
    code, out, err = run_cli(capsys, command, report, "--nsys-path", FAKE_NSYS)
    shown = f"{tmp_path}/r\\xe9sum\\xe9.nsys-rep"
    assert (code, out, _strict(err)) == (2, "", f"ncuwrap: error: {shown}: 'nsys export --type sqlite' failed (Failed to open the report "
                                                f"{shown}: the file is corrupt.); check that the report opens in Nsight Systems and "
                                                "that this nsys is at least as new as the one that captured it\n")
    assert os.listdir(tmp_path) == [report.name]  # nothing left beside it


def test_csv_name_not_utf8_as_json(capsys, tmp_path):
    """The JSON of a report whose file name is not UTF-8: the path as the other formats show it, said once
    (orjson refused the whole document: 'str is not valid UTF-8')."""
    path = tmp_path / os.fsdecode(b"\xff\xfe.raw.csv")
    shutil.copy(NAIVE_CSV, path)
    code, text, err = run_cli(capsys, "diagnose", path, "-f", "json")
    assert (code, err) == (0, "")
    assert _said_once(text)["source"]["path"].endswith("\\xff\\xfe.raw.csv")


def test_json_says_nothing_when_every_text_is_utf8(capsys):
    code, text, _ = run_cli(capsys, "diagnose", NAIVE_CSV, "-f", "json")
    assert code == 0 and NOT_UTF8 not in json.loads(text)


def test_error_line_shows_the_byte(capsys, tmp_path):
    code, _, err = run_cli(capsys, "timeline", tmp_path / f"{TE}.sqlite")
    assert code == 2 and "t\\xe9.sqlite: no such file" in _strict(err)


def test_temporary_name_of_a_long_name_not_utf8():
    """A 250-byte name of Latin-1 bytes: cut by its bytes on the file system (it was encoded as UTF-8 and failed)."""
    name = os.fsdecode(b"\xe9" * 240 + b".sqlite.gz")
    short = packed.short_name(name)
    assert len(os.fsencode(short)) <= packed._NAME_ROOM and short.endswith(".sqlite.gz")


def test_nvtx_step_name_with_an_escape_sequence(capsys, tmp_path):
    """The steps' heading quoted the NVTX name raw on the terminal (render/table/timeline.py)."""
    path = tmp_path / "steps.sqlite"
    path.write_bytes(gzip.decompress(STEPS.read_bytes()))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE NVTX_EVENTS SET text = ? WHERE text = 'step'", ("step\x1b]0;owned\x07\u202e",))
    code, text, _ = run_cli(capsys, "timeline", path)
    assert code == 0 and "Steps ('step\\x1b]0;owned\\x07\\u202e')" in text
    assert not any(c in text for c in "\x1b\x07\u202e")


@pytest.mark.parametrize("fails", [False, True])
def test_an_ncu_export_with_bytes_not_utf8(tmp_path, fails):
    """An ncu CSV export whose output holds a Latin-1 byte (a name in the CSV on stdout, or in its error on
    stderr): the raw CSV is written byte for byte (the reader then says what is wrong with it), and a failure
    is said with the byte as \\xNN. Both ended the whole profile run in "internal error: UnicodeDecodeError"."""
    from ncuwrap.profile.ncu_tool import NcuTool
    from ncuwrap.profile.pipeline import export_csv
    from ncuwrap.profile.rundir import RunDir

    said = b'"ID","Kernel Name"\n"0","caf\xe9"\n'
    ncu = tmp_path / "ncu"
    stream = "stderr" if fails else "stdout"
    ncu.write_text(f"#!{sys.executable}\nimport sys\nsys.{stream}.buffer.write({said!r})\nsys.exit({int(fails)})\n")
    ncu.chmod(0o755)
    rd = RunDir(tmp_path / "run")
    rd.path.mkdir()
    warning = export_csv(rd, NcuTool(path=str(ncu), version=(2025, 3, 1), version_text=""))
    if fails:
        assert warning == f'raw CSV export failed ("0","{CAFE}"); the report is complete'
        assert terminal(warning).endswith('"caf\\xe9"); the report is complete')
    else:
        assert warning is None and rd.raw_csv.read_bytes() == said
