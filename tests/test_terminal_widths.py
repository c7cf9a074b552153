"""The terminal at 80, 100 and 160 columns (issue 39), on real H200 data: a PyTorch training loop's nsys
capture (steps/gpu_train), the 5 PyTorch kernels of a training step's ncu report (top/report.raw.csv),
the transpose pair naive -> shared tile (pairs_full, ncu CSV exports) and the bundled benchmarks' list.

Goldens hold the whole output at each width (NCUWRAP_REGEN=1 rewrites them; review the diff). Beside
them: no line is wider than the terminal (a cut word is a cropped line), a headline wraps as prose,
section headers show the short names, and a narrow compare keeps its measured number before estimates."""

from __future__ import annotations

import re

import pytest

from ncuwrap.render import Format, render
from ncuwrap.render import names as N
from tests.conftest import DATA, golden, run_cli

WIDTHS = (80, 100, 160)
OURS = DATA / "h200_ncuwrap"
TRAIN = OURS / "steps" / "gpu_train.sqlite.gz"
TOP = OURS / "top" / "report.raw.csv"
NAIVE, SHARED = OURS / "pairs_full" / "transpose-naive.raw.csv.gz", OURS / "pairs_full" / "transpose-shared_tile.raw.csv.gz"


def within(text: str, width: int) -> None:
    wide = [line for line in text.splitlines() if len(line) > width]
    assert not wide, wide


def paragraph(text: str, start: str) -> list[str]:
    """The lines of the paragraph that starts with ``start``, up to the blank line after it."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    end = next((i for i in range(first + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[first:end]


def column(text: str, header: str) -> str:
    """What a table column holds below its header, its lines joined (a wrapped name whole again)."""
    lines = text.splitlines()
    top = next(i for i, line in enumerate(lines) if re.search(rf"\b{header}\b", line) and line.lstrip().startswith("kernel"))
    at = lines[top].index(header)
    cells = []
    for line in lines[top + 2:]:
        if not line.strip():
            break
        cells.append(line[at:].split("  ")[0].strip())
    return "".join(cells)


@pytest.fixture(scope="module")
def train():
    from ncuwrap.timeline.diagnosis import diagnose_timeline

    return diagnose_timeline(TRAIN)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_training_loop_timeline(train, width):
    text = render(train, Format.table, width=width)
    golden(f"terminal_timeline_gpu_train_{width}.txt", text)
    within(text, width)
    # The headline is prose: its continuation lines start two columns in and use the line's width (at 80
    # columns it hung at column 65, 10 lines of at most 15 characters).
    bound = paragraph(text, "Bound: ")
    assert all(line.startswith("  ") and not line.startswith("   ") for line in bound[1:])
    assert all(len(line) > width * 2 // 3 for line in bound[:-1]), bound
    assert len(bound) <= {80: 4, 100: 3, 160: 2}[width]


@pytest.mark.parametrize("width", WIDTHS)
def test_a_pytorch_kernel_report(capsys, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", str(width))
    code, text, _ = run_cli(capsys, "diagnose", TOP)
    assert code == 0
    golden(f"terminal_diagnose_torch_top_{width}.txt", text)
    within(text, width)
    # Each kernel's section header is its short name, as the summary shows it: one line, no parameters.
    from ncuwrap.kernel.diagnosis import diagnose

    shorts = {"".join(N.short(k.name).split()) for k in diagnose(TOP).kernels}
    headers = re.findall(r"^\d+\.[ \n](.*?)  \((?:launch|the longest)", text, flags=re.MULTILINE | re.DOTALL)
    # (a name longer than the line goes on over the next: joined again without the breaks)
    assert len(headers) == 5 and all("".join(h.split()) in shorts for h in headers), headers
    assert "at::cunn_SoftMaxForwardReg‹…›  (launch 4)" in text and "(T3 *, const T1 *, T5)" not in text


@pytest.mark.parametrize("width", WIDTHS)
def test_a_compare_of_two_reports(capsys, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", str(width))
    code, text, _ = run_cli(capsys, "compare", NAIVE, SHARED)
    assert code == 0
    golden(f"terminal_compare_transpose_{width}.txt", text)
    within(text, width)
    header = next(line for line in text.splitlines() if line.lstrip().startswith("kernel"))
    flat = " ".join(text.split())
    # ncu's speedup, the one measured number (no bench timings), stays at every width, before the estimate;
    # the real speedup, n/a for the pair, is the first to go, and the table says so.
    assert "ncu speedup" in header and header.index("ncu speedup") < header.index("estimated")
    assert ("real speedup" in header) != ("real speedup: n/a for every pair" in flat)
    assert ("real speedup" in header) == (width >= 160)
    # No word cut: each finding whole where its column is shown, else said to be in the section below.
    for name, finding in (("resolved", "uncoalesced_global_stores"), ("introduced", "shared_bank_conflicts")):
        if name in header:
            assert column(text, name) == finding
        else:
            assert re.search(rf"left out of the table: [a-z, ]*{name}[a-z, ]*: in each pair's section below", flat)
            assert f"  {finding} (high)" in " ".join(text.splitlines())


@pytest.mark.parametrize("width", WIDTHS)
def test_the_benchmark_list(capsys, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", str(width))
    code, text, _ = run_cli(capsys, "list")
    assert code == 0
    golden(f"terminal_list_{width}.txt", text)
    within(text, width)
    code, doc, _ = run_cli(capsys, "list", "--format", "json")
    import json

    flat = " ".join(text.split())
    for b in json.loads(doc):
        assert f"{b['name']} {' '.join(b['lesson'].split())}" in flat
        assert "variants: " + ", ".join(v["name"] for v in b["variants"]) in flat


@pytest.mark.parametrize("width", (80, 160))
def test_the_metric_names(capsys, monkeypatch, width):
    from ncuwrap.kernel import metrics as M

    monkeypatch.setenv("COLUMNS", str(width))
    code, text, _ = run_cli(capsys, "rules", "metrics", "--all")
    assert code == 0
    within(text, width)  # descriptions reached 249 characters
    flat = " ".join(text.split())
    for kind, entries in (("canonical", M.CANONICAL), ("derived", M.DERIVED)):
        for entry in entries.values():
            assert f"{entry.name} {kind} {' '.join(entry.description.split())}" in flat


@pytest.mark.parametrize("width", (80, 100, 160))
def test_the_bench_table(width):
    # 'ncuwrap bench --all --runs 3' on the H200 (library comparisons and the copy ceiling): rows were 111
    # characters and more at any width.
    from ncuwrap.bundled import report

    bench = report.read(OURS / "bench" / "bench_all_runs3.json")
    text = render(bench, Format.table, width=width)
    golden(f"terminal_bench_all_{width}.txt", text)
    within(text, width)
    header = next(line for line in text.splitlines() if line.lstrip().startswith("benchmark"))
    assert all(c in header for c in ("variant", "ok", "median ms", "GB/s", "%ceil"))
    # What leaves the table is said; the library's advice is never lost: in its column, or under the table.
    flat = " ".join(text.split())
    for b in bench.benchmarks:
        advice = (b.library.advice or b.library.note or "") if b.library else ""
        if advice and "library" not in header:
            assert f"{b.name}/{b.variant}: {advice}" in flat
    assert ("left out of the table: spread%" in flat) == ("spread%" not in header)


@pytest.mark.parametrize("label", ["evidence:", "Bound: kernel (a_kernel_name_of_some_length) -"])
def test_a_huge_paragraph_is_cut_to_what_is_shown(monkeypatch, label):
    # A 16 MB demangled name in a sentence (a headline, a section header with --names demangled): at most
    # MAX_TEXT_LINES full lines' worth of it, the last character an ellipsis; escaped and wrapped from its head only.
    from ncuwrap.render import table as TB

    escaped: list[int] = []
    escape = TB.terminal
    monkeypatch.setattr(TB, "terminal", lambda text: escaped.append(len(text)) or escape(text))
    page = TB.Page(80)
    page.line("void k<" + "float, " * (16 * 2**20 // 7) + ">(int)", indent=2, label=label)
    lines = page.text().rstrip("\n").splitlines()
    shown = "".join(line.strip() for line in lines)
    assert len(shown) <= TB.MAX_TEXT_LINES * 80 + len(label) and lines[-1].endswith("…") and all(len(line) <= 80 for line in lines)
    assert len(lines) < 2 * TB.MAX_TEXT_LINES
    assert sum(escaped) <= TB.MAX_TEXT_LINES * 80 + len(label)


def test_prose_wraps_at_words_in_one_pass():
    from ncuwrap.render.table import wrap

    text = "Bound: kernel (nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT) - Kernels take 100% of the GPU's busy time"
    lines = [text[a:b] for a, b in wrap(text, 40, 30)]
    # A word wider than a line goes on over the next (no character lost), the others wrap whole.
    assert lines == ["Bound: kernel", "(nvjet_sm90_tst_256x128_64x4_1", "x2_h_bz_coopA_NNT) - Kernels", "take 100% of the GPU's busy", "time"]
    assert wrap("", 10, 8) == [] and wrap("a " * 3, 1, 1) == [(0, 1), (2, 3), (4, 5)]
