"""Property-based fuzzing of every input kind (issue 10, D): real fixtures mutated by hypothesis, the
CLI run in-process, and the contract checked: exit 0 or 2; on failure exactly one line on stderr,
starting "ncuwrap: error:" and not an internal error; no input file changed, nothing written but -o.

CI runs a fixed, small set of examples (derandomized, ~60 s in all); scripts/fuzz_soak.py runs
many more random ones (NCUWRAP_FUZZ_SCALE, NCUWRAP_FUZZ_RANDOM).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import signal
import sqlite3
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ncuwrap.core.errors import NcuwrapError
from ncuwrap.core.expr import ExpressionError, parse
from tests.conftest import DATA, H200, ROOT, run_cli

SCALE = int(os.environ.get("NCUWRAP_FUZZ_SCALE", "1"))


def fuzz(examples: int):
    return settings(max_examples=examples * SCALE, deadline=None, database=None, derandomize=not os.environ.get("NCUWRAP_FUZZ_RANDOM"),
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])


NCU_REP = H200 / "transpose" / "copyKernel.ncu-rep.gz"
RAW_CSV = H200 / "vecadd" / "bench_add.raw.csv"
SQLITE = H200 / "nsys" / "bench.sqlite"
RULES = ROOT / "rules" / "default.yaml"
BENCH = DATA / "h200_ncuwrap" / "bench_pairs" / "transpose.json"  # real, recorded on the H200
TRANSPOSE = H200 / "transpose"


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def check_contract(capsys, folder: Path, *argv) -> tuple[int, str]:
    """Run ncuwrap with -o into ``folder`` (which holds the mutated input) and check the contract."""
    output = folder / "out.json"
    before = _digest(folder)
    signal.alarm(120)  # a hang fails the example instead of stalling CI
    try:
        code, out, err = run_cli(capsys, *argv, "-f", "json", "-o", output)
    finally:
        signal.alarm(0)
    assert code in (0, 2), (code, err)
    after = _digest(folder)
    written = set(after) - set(before)
    assert {k: v for k, v in after.items() if k in before} == before, "an input file was changed"
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("ncuwrap: error: "), err
        assert "internal error" not in err, err
        assert not written, f"wrote {written} on failure"
    else:
        assert written == {"out.json"}, written
    return code, err


@pytest.fixture
def workdir(tmp_path):
    """A fresh folder per example (hypothesis reuses a test's fixtures across examples)."""
    def make() -> Path:
        return Path(tempfile.mkdtemp(dir=tmp_path))
    return make


# --- .ncu-rep: bytes replaced, or the file cut short ------------------------------------------

REP_BYTES = gzip.decompress(NCU_REP.read_bytes())  # the report itself (kept gzipped in tests/data)


# At 30 examples one mutated report makes NVIDIA's ncu_report library abort() (not an exception): the
# report is read in a child process, so that is one line too (tests/test_hostile_files.py).
@fuzz(30)
@given(edits=st.lists(st.tuples(st.integers(0, len(REP_BYTES) - 1), st.integers(0, 255)), max_size=8),
       cut=st.one_of(st.none(), st.integers(0, len(REP_BYTES))))
def test_fuzz_ncu_rep(capsys, workdir, edits, cut):
    data = bytearray(REP_BYTES)
    for offset, value in edits:
        data[offset] = value
    folder = workdir()
    path = folder / "report.ncu-rep"
    path.write_bytes(bytes(data[:cut] if cut is not None else data))
    check_contract(capsys, folder, "diagnose", path)


# --- raw CSV: cells, header names, quotes and bytes ----------------------------------------------

CSV_TEXT = RAW_CSV.read_text(encoding="utf-8")
CELL_VALUES = st.one_of(
    st.text(max_size=30), st.sampled_from(["", "n/a", "1e999", "-1", "1,234,567", "0.5", "9" * 30, "\x1b]52;c;eA==\x07", '"', "\r\n"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr), st.integers(-(2**70), 2**70).map(str))


@fuzz(40)
@given(data=st.data())
def test_fuzz_raw_csv(capsys, workdir, data):
    lines = CSV_TEXT.split("\n")
    text = CSV_TEXT
    kind = data.draw(st.sampled_from(["cell", "header", "bytes", "quote"]))
    if kind in ("cell", "header"):
        row = 0 if kind == "header" else data.draw(st.integers(1, len(lines) - 2))
        fields = lines[row].split('","')
        column = data.draw(st.integers(0, len(fields) - 1))
        fields[column] = data.draw(CELL_VALUES).replace('"', '""') if column not in (0, len(fields) - 1) else fields[column]
        lines[row] = '","'.join(fields)
        text = "\n".join(lines)
    elif kind == "bytes":
        start = data.draw(st.integers(0, len(text) - 1))
        text = text[:start] + data.draw(st.text(max_size=20)) + text[start + data.draw(st.integers(0, 50)):]
    else:
        at = data.draw(st.integers(0, len(text) - 1))
        text = text[:at] + '"' + text[at:]
    folder = workdir()
    path = folder / "report.raw.csv"
    path.write_text(text, encoding="utf-8", errors="replace")
    check_contract(capsys, folder, "diagnose", path)


# --- nsys SQLite: rows changed, removed or added with values of any type ---------------------

SQL_VALUES = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False), st.text(max_size=20),
                       st.binary(max_size=8))
TABLES = {"CUPTI_ACTIVITY_KIND_KERNEL": ["start", "end", "deviceId", "streamId", "correlationId", "gridX", "blockX", "shortName", "demangledName"],
          "CUPTI_ACTIVITY_KIND_MEMCPY": ["start", "end", "bytes", "copyKind", "srcKind", "dstKind"],
          "CUPTI_ACTIVITY_KIND_RUNTIME": ["start", "end", "nameId", "correlationId"],
          "StringIds": ["id", "value"],
          "ENUM_CUDA_MEM_KIND": ["id", "name"]}


@fuzz(30)
@given(changes=st.lists(st.tuples(st.sampled_from(sorted(TABLES)), st.integers(0, 3), st.integers(1, 60), st.data()), min_size=1, max_size=4))
def test_fuzz_sqlite(capsys, workdir, changes):
    folder = workdir()
    path = folder / "timeline.sqlite"
    shutil.copyfile(SQLITE, path)
    db = sqlite3.connect(path)
    for table, action, rowid, data in changes:
        try:
            if action == 0:
                db.execute(f"DELETE FROM {table} WHERE rowid % 7 = ?", (rowid % 7,))
            elif action == 1:
                db.execute(f"DROP TABLE IF EXISTS {table}")
            else:
                column = data.draw(st.sampled_from(TABLES[table]))
                db.execute(f'UPDATE {table} SET "{column}" = ? WHERE rowid = ?', (data.draw(SQL_VALUES), rowid))
        except sqlite3.Error:
            pass  # the table was dropped by an earlier change, or a constraint refused the value
    db.commit()
    db.close()
    check_contract(capsys, folder, "diagnose", path)


# --- rules YAML and expressions --------------------------------------------------------------

RULES_TEXT = RULES.read_text(encoding="utf-8")
TOKENS = st.sampled_from(["sm_pct", "memory_pct", "dram_pct", "busy", "1", "0.5", "1e999", "99999999999999999999", "(", ")", "+", "-",
                          "*", "/", "**", "<", ">=", "==", "and", "or", "not", "max(", "min(", "abs(", "fallback(", ",", "'l2'",
                          "metric(\"x__y\")", "memory_unit", "true", "x.y", "[0]", "lambda", "__import__('os')"])
EXPRESSIONS = st.one_of(st.lists(TOKENS, max_size=25).map(" ".join), st.text(max_size=40))


@fuzz(1000)
@given(text=EXPRESSIONS)
def test_fuzz_expressions(text):
    """Library level (fast): parse refuses with ExpressionError or gives an expression whose
    evaluation is a number or truth value per launch, or a RulesError naming the rule."""
    try:
        expression = parse(text, {"busy": 60})
    except ExpressionError:
        return
    values = {"memory_unit": np.array(["l2", "dram"], dtype=object)}
    try:
        result = expression.evaluate(lambda name: values.get(name, np.array([50.0, np.nan])), {"busy": 60})
    except NcuwrapError:
        return
    assert np.asarray(result).dtype.kind in "bfiOU"  # a bare quoted constant ('l2') is text


@fuzz(30)
@given(data=st.data())
def test_fuzz_rules_yaml(capsys, workdir, data):
    text = RULES_TEXT
    kind = data.draw(st.sampled_from(["when", "title", "bytes", "alias"]))
    if kind == "when":
        text = text.replace('"max(sm_pct, memory_pct) < busy"', '"' + data.draw(EXPRESSIONS).replace('"', "'").replace("\\", "") + '"', 1)
    elif kind == "title":
        spec = data.draw(st.from_regex(r"[<>^]?[0-9]{0,12}(\.[0-9]{1,12})?[fgde%]?", fullmatch=True))
        text = text.replace("{gld_sectors_per_request:.1f}", "{gld_sectors_per_request:" + spec + "}", 1)
    elif kind == "bytes":
        at = data.draw(st.integers(0, len(text) - 1))
        text = text[:at] + data.draw(st.text(max_size=10)) + text[at + data.draw(st.integers(0, 20)):]
    else:
        levels = data.draw(st.integers(1, 12))
        ladder = ", ".join(f"&l{i} [{', '.join([f'*l{i - 1}'] * 4) if i else 'x'}]" for i in range(levels))
        text = text.replace("version: 1\n", f"version: 1\nladder: [{ladder}]\n", 1)
    folder = workdir()
    path = folder / "rules.yaml"
    path.write_text(text, encoding="utf-8", errors="replace")
    check_contract(capsys, folder, "diagnose", RAW_CSV, "--rules", path)


# --- bench JSON ------------------------------------------------------------------------------

BENCH_TEXT = BENCH.read_text(encoding="utf-8")
JSON_VALUES = st.one_of(st.sampled_from(["1e999", "-1e999", "NaN", "Infinity", "1e-320", "1e300", "0", "-0.28", "true", "null", '"x"',
                                         "[" * 50 + "]" * 50, "9" * 400, "{}", "[]"]),
                        st.floats(allow_nan=False, allow_infinity=False).map(repr), st.integers(-(2**80), 2**80).map(str))


@fuzz(20)
@given(data=st.data())
def test_fuzz_bench_json(capsys, workdir, data):
    text = BENCH_TEXT
    if data.draw(st.booleans()):
        text = text.replace("0.28", data.draw(JSON_VALUES), 1)
    else:
        at = data.draw(st.integers(0, len(text) - 1))
        text = text[:at] + data.draw(st.text(alphabet='[]{}",:0123456789e.-\\ ', max_size=12)) + text[at + data.draw(st.integers(0, 8)):]
    folder = workdir()
    path = folder / "before.json"
    path.write_text(text, encoding="utf-8")
    check_contract(capsys, folder, "compare", TRANSPOSE / "transposeNaive.raw.csv", TRANSPOSE / "transposePadded.raw.csv",
                   "--before-timing", path)


# --- issue 22: source pages, compressed streams, option values ------------------------------------

SOURCE = DATA / "h200_ncuwrap" / "source"
PAGE_TEXT = __import__("gzip").decompress((SOURCE / "transpose-naive.source_cuda_sass.csv.gz").read_bytes()).decode()
PAGE_RAW = SOURCE / "transpose-naive.raw.csv.gz"


@fuzz(25)
@given(data=st.data())
def test_fuzz_source_page(capsys, workdir, data):
    """The real cuda,sass page of the naive transpose, a cell replaced, a line cut or bytes spliced in."""
    lines = PAGE_TEXT.split("\n")
    kind = data.draw(st.sampled_from(["cell", "cut", "splice"]))
    row = data.draw(st.integers(0, len(lines) - 1))
    if kind == "cell":
        cells = lines[row].split('","')
        at = data.draw(st.integers(0, len(cells) - 1))
        cells[at] = data.draw(CELL_VALUES).replace('"', '""')
        lines[row] = '","'.join(cells)
        text = "\n".join(lines)
    elif kind == "cut":
        text = "\n".join(lines[:row]) + "\n" + lines[row][: data.draw(st.integers(0, max(0, len(lines[row]) - 1)))]
    else:
        at = data.draw(st.integers(0, len(PAGE_TEXT)))
        text = PAGE_TEXT[:at] + data.draw(st.text(alphabet='",\n0123456789x-.=# ', max_size=10)) + PAGE_TEXT[at:]
    folder = workdir()
    page = folder / "page.csv"
    page.write_text(text, encoding="utf-8")
    check_contract(capsys, folder, "diagnose", PAGE_RAW, "--source-page", page)


@fuzz(20)
@given(data=st.data())
def test_fuzz_compressed_streams(capsys, workdir, data):
    """A gzipped export or report, cut short or with bytes changed (the stream or its trailer)."""
    name, plain = data.draw(st.sampled_from([(RAW_CSV.name, RAW_CSV.read_bytes()), (NCU_REP.stem, REP_BYTES)]))
    packed = bytearray(gzip.compress(plain, mtime=0))
    for _ in range(data.draw(st.integers(0, 3))):
        packed[data.draw(st.integers(0, len(packed) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.one_of(st.none(), st.integers(0, len(packed))))
    folder = workdir()
    path = folder / (name + ".gz")
    path.write_bytes(bytes(packed[:cut] if cut is not None else packed))
    check_contract(capsys, folder, "diagnose", path)


NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), st.integers(-(2**70), 2**70).map(str),
                    st.sampled_from(["nan", "-nan", "inf", "-inf", "1e309", "0x10", "", " ", "5%", "1_000"]))


@fuzz(15)
@given(threshold=NUMBERS)
def test_fuzz_compare_threshold(capsys, workdir, threshold):
    """--threshold: a finite percentage in [0, 1000] gates, anything else is refused, never ignored."""
    folder = workdir()
    code, err = check_contract(capsys, folder, "compare", TRANSPOSE / "transposeNaive.raw.csv", TRANSPOSE / "transposePadded.raw.csv",
                               "--threshold", threshold)
    try:
        value = float(threshold)
    except ValueError:
        value = None
    if value is not None and 0 <= value <= 1000:
        assert code == 0, err
    else:
        assert code == 2


@fuzz(15)
@given(pattern=st.one_of(st.text(max_size=40), st.sampled_from(["(a+)+$", "(?=step)", r"(\w+)\1", "[", "step|", "(?i)STEP", "x" * 600])))
def test_fuzz_step_range(capsys, workdir, pattern):
    """--step-range runs RE2 on NVTX names from the capture: any pattern ends in a verdict or one line."""
    folder = workdir()
    capture = folder / "bench.sqlite"
    shutil.copyfile(SQLITE, capture)
    check_contract(capsys, folder, "timeline", capture, "--step-range", pattern)


NAME_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_characters='"\r\n'), min_size=1, max_size=40)


@fuzz(8)
@given(name=NAME_TEXT)
def test_fuzz_names_in_every_format(capsys, workdir, name):
    """A kernel name of any characters: the terminal shows it without sending a control or bidi
    character, HTML carries it escaped, JSON gives it back exactly."""
    import json as _json

    from markupsafe import escape as html_escape

    from ncuwrap.render.escape import terminal
    from ncuwrap.core.terminal import BIDI

    folder = workdir()
    report = folder / "named.raw.csv"
    report.write_text(CSV_TEXT.replace('"coalesced_add(', f'"{name}(', 1), encoding="utf-8")
    code, out, err = run_cli(capsys, "diagnose", report, "-f", "json")
    if code != 0:  # a name ncu could not have written (the CSV reader refuses it): one line
        assert code == 2 and len(err.splitlines()) == 1
        return
    kernels = _json.loads(out)["kernels"]
    assert any(k["display_name"].startswith(name) for k in kernels)
    code, table, _ = run_cli(capsys, "diagnose", report)
    assert code == 0
    import re as _re

    assert not _re.search(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{BIDI}]", table)
    code, page, _ = run_cli(capsys, "diagnose", report, "-f", "html")
    assert code == 0
    shown = str(html_escape(terminal(name)))
    assert shown in page or shown.strip() == "" or " ".join(shown.split()) in page


# --- PyTorch profiler (Kineto) traces: events' fields replaced, bytes replaced, the file cut short ----

def _small_trace() -> dict:
    """The real small_launch trace's header with its first 4,000 events (their order kept): a trace of a
    few steps, read in a fraction of a second."""
    import gzip
    import json

    doc = json.loads(gzip.decompress((DATA / "h200_ncuwrap" / "kineto" / "small_launch.pt.trace.json.gz").read_bytes()))
    doc["traceEvents"] = doc["traceEvents"][:4000]
    return doc


KINETO = _small_trace()
FIELD_VALUES = st.one_of(st.none(), st.text(max_size=12), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
                         st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))


@fuzz(25)
@given(data=st.data())
def test_fuzz_kineto_trace(capsys, workdir, data):
    _fuzz_kineto(capsys, workdir, data)


@fuzz(25)
@given(data=st.data())
def test_fuzz_kineto_trace_streamed(capsys, workdir, data):
    """The same damage read by the stream alone: pieces of 2 KiB, and no whole-document parse behind it
    (the way a trace past MAX_TRACE_BYTES is read)."""
    from unittest import mock

    from ncuwrap.timeline.readers import kineto_json, kineto_stream

    with mock.patch.object(kineto_stream, "CHUNK_BYTES", 2048), mock.patch.object(kineto_stream, "READ_BYTES", 32 << 10), \
            mock.patch.object(kineto_json, "MAX_TRACE_BYTES", 0):
        _fuzz_kineto(capsys, workdir, data)


def _fuzz_kineto(capsys, workdir, data):
    import json

    doc = json.loads(json.dumps(KINETO))
    events = doc["traceEvents"]
    for _ in range(data.draw(st.integers(0, 6))):
        event = events[data.draw(st.integers(0, len(events) - 1))]
        key = data.draw(st.sampled_from(["ph", "cat", "name", "ts", "dur", "tid", "pid", "args"]))
        if data.draw(st.booleans()):
            event.pop(key, None)
        else:
            event[key] = data.draw(FIELD_VALUES)
    text = json.dumps(doc).encode()
    for _ in range(data.draw(st.integers(0, 3))):
        at = data.draw(st.integers(0, len(text) - 1))
        text = text[:at] + bytes([data.draw(st.integers(0, 255))]) + text[at + 1:]
    cut = data.draw(st.one_of(st.none(), st.integers(0, len(text))))
    folder = workdir()
    path = folder / "trace.pt.trace.json"
    path.write_bytes(text[:cut] if cut is not None else text)
    check_contract(capsys, folder, "diagnose", path)


# --- issue 42: bytes that are not UTF-8, documents handed to compare, names matched in bulk ------

ANY_BYTES = st.binary(min_size=1, max_size=24)


@fuzz(12)
@given(kernel=ANY_BYTES, api=ANY_BYTES)
def test_fuzz_capture_text_of_any_bytes(capsys, workdir, kernel, api):
    """A kernel and a CUDA call named with any bytes in the capture's StringIds: read and written (exit 0),
    and the terminal page sends no control character and encodes as UTF-8."""
    import re as _re

    from ncuwrap.core.terminal import BIDI

    folder = workdir()
    path = folder / "timeline.sqlite"
    shutil.copyfile(SQLITE, path)
    with sqlite3.connect(path) as db:
        for old, new in (("strided_add", kernel), ("cudaMemcpy_v3020", api)):
            db.execute("UPDATE StringIds SET value = CAST(? AS TEXT) WHERE value = ?", (new, old))
    db.close()
    code, _ = check_contract(capsys, folder, "diagnose", path)  # a capture's verdict to a file: 'diagnose -o'
    assert code == 0
    code, table, _ = run_cli(capsys, "timeline", path)
    assert code == 0 and not _re.search(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{BIDI}\\ud800-\\udfff]", table)
    table.encode("utf-8")


@fuzz(10)
@given(name=st.binary(min_size=1, max_size=60).filter(lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..")))
def test_fuzz_file_name_of_any_bytes(capsys, workdir, name):
    """A report under a file name of any bytes the file system takes: diagnosed, its JSON written."""
    folder = workdir()
    path = folder / os.fsdecode(name + b".raw.csv")
    shutil.copyfile(RAW_CSV, path)
    code, _ = check_contract(capsys, folder, "diagnose", path)
    assert code == 0


DOC_V4 = (ROOT / "tests" / "golden" / "diagnose_two_processes.json").read_text(encoding="utf-8")
ANY_JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-(2**60), 2**60), st.floats(allow_nan=False, allow_infinity=False),
                                     st.text(max_size=12)),
                           lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                           max_leaves=12)


def _paths(value, at=()):
    """Every place in a JSON document, as key paths."""
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*at, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*at, i))


DOC_PLACES = [p for p in _paths(__import__("json").loads(DOC_V4)) if p]


@fuzz(40)
@given(edits=st.lists(st.tuples(st.sampled_from(DOC_PLACES), ANY_JSON), min_size=1, max_size=3), depth=st.sampled_from([0, 0, 300]))
def test_fuzz_diagnosis_document(capsys, workdir, edits, depth):
    """A real v4 document (likes and repeats in it) with any field replaced by any JSON value (nested 300
    deep at times): compare runs or says in one line what is wrong."""
    import json as _json

    doc = _json.loads(DOC_V4)
    for place, value in edits:
        node = doc
        try:
            for key in place[:-1]:
                node = node[key]
            for _ in range(depth):
                value = [value]
            node[place[-1]] = value
        except (KeyError, IndexError, TypeError):
            pass  # an earlier edit replaced what held this place
    folder = workdir()
    path = folder / "before.json"
    path.write_text(_json.dumps(doc), encoding="utf-8")
    check_contract(capsys, folder, "compare", path, TRANSPOSE / "transposeNaive.raw.csv")


@fuzz(60)
@given(names=st.lists(st.one_of(st.text(max_size=12), st.sampled_from(["step", "STEP 3", "ſtep", "x.step", "stepx", "ProfilerStep#2",
                                                                       "train_step", "a\nstep", "\udcffstep"])), max_size=30),
       pattern=st.sampled_from([None, "step", "train_step", "p#", "^[a-z]+$", "(?i)STEP"]))
def test_fuzz_bulk_matching(names, pattern):
    """Names matched in bulk say what one RE2 call per name says, for any names."""
    from ncuwrap.core.kernel_filter import compile_filter, search_all
    from ncuwrap.timeline.options import STEP_PATTERN

    literal, folded = ("step", True) if pattern is None else (None, False)
    pattern = pattern or STEP_PATTERN
    matches = compile_filter(pattern)
    assert list(search_all(pattern, names, literal=literal, folded=folded)) == [matches(n) for n in names]
