"""Shared test helpers. Run the suite from the repository root: report paths in outputs are relative."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = Path("tests/data")  # relative on purpose: outputs name the report as given
H200 = DATA / "h200"
GOLDEN = Path(__file__).resolve().parent / "golden"
REGEN = os.environ.get("NCUWRAP_REGEN") == "1"


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)
    # Terminal output takes the terminal's width: the same 100 columns for every test run.
    monkeypatch.setenv("COLUMNS", "100")


def plain_report(path: Path, folder: Path) -> Path:
    """``path`` itself, or for a gzipped report its unpacked copy in ``folder`` (the readers under test take a .ncu-rep)."""
    if path.suffix != ".gz":
        return path
    copy = folder / path.stem
    copy.write_bytes(gzip.decompress(path.read_bytes()))
    return copy


def has_gpu() -> bool:
    if not shutil.which("nvidia-smi"):
        return False
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (none found: nvidia-smi -L failed)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    """Run the console entry point in-process; return (exit code, stdout, stderr)."""
    from ncuwrap.cli import main

    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


# A golden file larger than this is kept gzipped (NAME.gz): the tree travels to the GPU machine whole.
GOLDEN_GZIP_BYTES = 1 << 20


def golden(name: str, actual: str) -> None:
    """Compare ``actual`` with tests/golden/NAME (or NAME.gz, for a large one); NCUWRAP_REGEN=1 rewrites the file instead."""
    import gzip

    path, packed = GOLDEN / name, GOLDEN / f"{name}.gz"
    if REGEN or not (path.exists() or packed.exists()):
        if not REGEN:
            pytest.fail(f"golden file {path} is missing; run with NCUWRAP_REGEN=1 to create it, then review it")
        data = actual.encode("utf-8")
        if len(data) > GOLDEN_GZIP_BYTES:
            path.unlink(missing_ok=True)
            packed.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
        else:
            packed.unlink(missing_ok=True)
            path.write_text(actual, encoding="utf-8")
        return
    expected = gzip.decompress(packed.read_bytes()).decode("utf-8") if packed.exists() else path.read_text(encoding="utf-8")
    assert actual == expected, f"output differs from {path}; if intended, regenerate with NCUWRAP_REGEN=1"


def golden_json(name: str, data: dict) -> None:
    golden(name, json.dumps(data, indent=2, sort_keys=False) + "\n")


# What a timeline without NVTX steps has said since the steady-state analysis (issue 19), at the end of
# the terminal output of profile --top replayed from the H200 (its recorded stdout predates it).
# What a kernel report without per-instruction counters has said since issue 20 (the lines of each
# finding), before the terminal output's closing "Durations are ncu's" line.
LINES_HINT = ("not attributed: no per-instruction counters in the report: profile with 'ncuwrap profile' (SourceCounters "
              "is collected by default) or 'ncu --section SourceCounters --import-source yes' of a build with -lineinfo.")


def with_lines_hint(text: str, width: int = 100) -> str:
    """A terminal diagnosis recorded before issue 20, as it reads now: LINES_HINT once, under a
    'Source lines' heading, wrapped at words to ``width`` columns (the tests' COLUMNS); and a kernel
    whose only findings are minor says so ('no costly issue found (N minor)', no longer 'no issue found')."""
    import re
    import textwrap

    def minor(match: re.Match) -> str:
        section = match.group(2)
        n = len(re.findall(r"^  MINOR ", section, flags=re.MULTILINE))
        return (f"\n  no costly issue found ({n} minor)\n" if n else "\n  no issue found\n") + section

    text = re.sub(r"\n  (no issue found)\n(.*?)(?=\n\n|\Z)", minor, text, flags=re.DOTALL)
    assert text.count("\nDurations are ncu's") == 1
    block = "\nSource lines\n" + textwrap.fill(LINES_HINT, width=width, initial_indent="  ", subsequent_indent="  ",
                                                break_on_hyphens=False) + "\n"
    return text.replace("\nDurations are ncu's", block + "\nDurations are ncu's", 1)


# at_roofline's advice before issue 24 (the memory one was DRAM's whatever the unit), and now.
_ROOFLINE_ADVICE = {
    ("The busiest pipe ({}) is close to its peak and the rules found no waste worth removing: this kernel has little left to win "
     "as written. More speed needs fewer or cheaper instructions: lower precision or tensor cores for the math (judge a "
     "tensor-core kernel against its data type's peak), fewer index and conversion instructions, or less work (another algorithm)."):
    ("The busiest pipe ({}) is close to its peak and the rules found no waste worth removing: this kernel has little left to win "
     "as written. The next step says what moves that limit (judge a tensor-core kernel against its data type's peak)."),
}


def with_roofline_advice(text: str, width: int = 100) -> str:
    """A terminal diagnosis recorded before issue 24 with at_roofline's advice as it reads now
    (wrapped as the table renderer wraps it, at ``width`` columns)."""
    import re
    import textwrap

    def swap(match: re.Match) -> str:
        paragraph = " ".join(line.strip() for line in match.group(0).splitlines())[len("advice: "):]
        for old, new in _ROOFLINE_ADVICE.items():
            found = re.fullmatch(re.escape(old).replace(r"\{\}", r"(\w+)"), paragraph)
            if found:
                return textwrap.fill(new.format(found.group(1)), width=width, initial_indent=" " * 9 + "advice: ",
                                     subsequent_indent=" " * 17, break_on_hyphens=False)
        return match.group(0)

    return re.sub(r"^ {9}advice: .*(?:\n {17}\S.*)*", swap, text, flags=re.MULTILINE)


# The estimates of the replayed --top report (tests/data/h200_ncuwrap/top) that issue 24's model
# changed (what a fixed kernel can reach, L2's requests): as recorded, and as they read now.
TOP_ESTIMATES_NOW = (
    ("latency (sm)        48%", "latency (sm)        45%"),
    ("latency (l2)         1%", "latency (l2)         2%"),
    ("fixing it saves ~2.0% of the program's GPU\n     time (4.1% of the time x est. 48% gain)",
     "fixing it saves ~1.9% of the program's GPU\n     time (4.1% of the time x est. 45% gain)"),
    ("[est. 48% of its time; then sm limits]", "[est. 45% of its time; then dram limits]"),
    ("[est. 1% of its time;\n         then l2 limits]", "[est. 2% of its time;\n         then l2_requests limits]"),
)


def with_estimates_now(text: str, changes=TOP_ESTIMATES_NOW) -> str:
    """A recorded diagnosis with the estimates ``changes`` lists as they read now (each must be there)."""
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def bound_apart(text: str) -> tuple[str, str]:
    """A timeline diagnosis without its 'Bound:' paragraph (up to the blank line after it), and the
    paragraph as one line."""
    import re

    match = re.search(r"^Bound: .*?\n\n", text, flags=re.MULTILINE | re.DOTALL)
    if match is None:
        return text, ""
    return text[:match.start()] + text[match.end():], " ".join(match.group(0).split())


def summary_apart(text: str) -> tuple[str, list[tuple], list[str]]:
    """A terminal diagnosis without its summary table and 'fix first' lines (issue 25 changed how names
    show and wrap there: recorded outputs predate it), with each row's numbers (rank, launch, time, share,
    verdict, gain) and each 'fix first' saving taken out."""
    import re

    header = re.search(r"^ +# +launch +kernel .*$", text, flags=re.MULTILINE)
    section = re.search(r"^1\. ", text, flags=re.MULTILINE)
    if header is None or section is None:
        return text, [], []
    region = text[header.start():section.start()]
    rows = re.findall(r"^ +(\d+) +(\d+) +\S.*? ([\d.]+ [mun]?s) +([\d.]+%) +(\w+ \(\w+\)|\w+) +(\S+)$", region, flags=re.MULTILINE)
    saves = re.findall(r"fixing it saves ~([\d.]+)%", region)
    return text[:header.start()] + text[section.start():], rows, saves


def top_kernels_apart(text: str) -> tuple[str, list[tuple]]:
    """A terminal timeline without its 'Top kernels' table (names shown short since issue 25), and each
    row's numbers (launches, total, median, share)."""
    import re

    match = re.search(r"^Top kernels\n.*?(?=^  gaps between|^\n)", text, flags=re.MULTILINE | re.DOTALL)
    if match is None:
        return text, []
    rows = re.findall(r" +([\d,]+) +([\d.]+ [mun]?s) +([\d.]+ [mun]?s) +([\d.]+%)$", match.group(0), flags=re.MULTILINE)
    return text[:match.start()] + text[match.end():], rows


def rows_within(text: str, lines: int = 3) -> bool:
    """Every row of the summary table of a terminal diagnosis takes at most ``lines`` lines."""
    import re

    header = re.search(r"^ +# +(launch +)?kernel .*$", text, flags=re.MULTILINE)
    body = text[header.end():].split("\n\n", 1)[0].splitlines()[1:]
    starts = [i for i, line in enumerate(body) if re.match(r"^ +\d+ ", line)] + [len(body)]
    return all(b - a <= lines for a, b in zip(starts, starts[1:]))


def next_steps_apart(text: str) -> tuple[str, list[str]]:
    """A terminal diagnosis without its 'next:' blocks (issue 24: recorded outputs predate them), and
    the title of each block taken out."""
    kept, titles, inside = [], [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("  next: "):
            titles.append(line[len("  next: "):].strip())
            inside = True
            continue
        if inside and line.startswith("        ") and line.strip():
            continue
        inside = False
        kept.append(line)
    return "".join(kept), titles


def charts_apart(text: str) -> tuple[str, list[str]]:
    """A terminal diagnosis without its 'Charts' section (issue 54 item 4: what the charts lack for want of counters,
    said once for the report; recorded outputs predate it), and each of its lines, unwrapped."""
    import re

    match = re.search(r"^Charts\n((?:  .*\n)+)\n", text, flags=re.MULTILINE)
    if match is None:
        return text, []
    lines = re.split(r"\n  (?=(?:DRAM|L2|L1): )", "\n" + match.group(1).rstrip("\n"))
    return text[:match.start()] + text[match.end():], [" ".join(line.split()) for line in lines if line.strip()]


def whole_capture(path):
    """The timeline diagnosis of ``path`` over its whole traced span (no steps, start-up included): the
    analysis engine as nsys stats sees a capture, for tests that check its numbers against nsys's."""
    from ncuwrap import ruleset
    from ncuwrap.timeline.analysis import analyze
    from ncuwrap.timeline.diagnosis import decide
    from ncuwrap.timeline import readers
    from ncuwrap.timeline.measured import Measured
    from ncuwrap.timeline.metrics import TIMELINE

    data, kind = readers.read(path)
    measured = Measured(timeline=analyze(data), kind=kind, nsys_version=data.nsys_version, export_schema=data.export_schema,
                        device=data.device, notes=tuple(data.notes))
    return decide(measured, ruleset.load(None, TIMELINE), source_path=str(path))


def roofline_advice_apart(text: str) -> tuple[str, list[str]]:
    """A terminal diagnosis without at_roofline's advice paragraphs ("... close to its peak ... little left to
    win as written ..."), and those paragraphs as one line each: issue 38 made the advice quote the unit at
    its roof with its numbers, which a report recorded before cannot hold."""
    import re

    found: list[str] = []

    def cut(match: re.Match) -> str:
        paragraph = " ".join(match.group(0).split())
        if "little left to win as written" not in paragraph:
            return match.group(0)
        found.append(paragraph)
        return " " * 9 + "advice: (at the roof)"

    return re.sub(r"^ {9}advice: .*(?:\n {17}\S.*)*", cut, text, flags=re.MULTILINE), found


def headers_apart(text: str) -> tuple[str, list[tuple[str, str]]]:
    """A terminal diagnosis without its kernel section headers (issue 39: they show the short names, which
    recorded outputs predate), and each header as (name, what follows it: the launch) on one line."""
    import re

    found: list[tuple[str, str]] = []

    def cut(match: re.Match) -> str:
        name, _, where = match.group(2).replace("\n", " ").rpartition("  (")
        found.append((" ".join(name.split()), " ".join(where.split())))
        return f"{match.group(1)}. (header)\n"

    # A header starts a line with its rank; its wrapped lines too start at column 0, the section's at 2.
    return re.sub(r"^(\d+)\.[ \n](.*?\n)(?=  \S)", cut, text, flags=re.MULTILINE | re.DOTALL), found
