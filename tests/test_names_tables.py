"""Names and tables that hold (issue 25), on real H200 reports of PyTorch, cuBLAS and CUB kernels
(tests/data/realworld: ops = PyTorch ops, blas = cuBLAS/cuBLASLt through torch), the 5-kernel torch
training profile (h200_ncuwrap/top) and the eager/graph decoder captures (h200_ncuwrap/steps).

One shortening for every format (ncuwrap.render.names): the function name, template arguments as ‹…›,
told apart where two kernels would read the same; no summary row taller than 3 lines; a column left
out on a narrow terminal named with where it is; the whole name on demand (--names)."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ncuwrap.kernel.diagnosis import diagnose
from ncuwrap.render import Format, render
from ncuwrap.render import names as N
from ncuwrap.timeline.compare import compare_timeline_files
from ncuwrap.timeline.diagnosis import diagnose_timeline
from tests.conftest import DATA, golden, rows_within, run_cli

REAL = DATA / "realworld"
STEPS = DATA / "h200_ncuwrap" / "steps"
WIDTHS = (80, 100, 160)


@pytest.fixture(scope="module")
def reports():
    return {name: diagnose(REAL / f"{name}.raw.csv.gz") for name in ("ops", "blas")}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["ops", "blas"])
def test_diagnosis_tables_at_each_width(reports, name, width):
    text = render(reports[name], Format.table, width=width)
    golden(f"names_{name}_{width}.txt", text)
    assert max(len(line) for line in text.splitlines()) <= width
    assert rows_within(text, 3)
    # Narrower than 110 columns the headline leaves the table, narrower than 100 the launch number too,
    # saying so; no word of a name is split.
    flat = " ".join(text.split())
    assert ("left out of the table: headline" in flat) == (100 <= width < 110)
    assert ("left out of the table: launch and headline" in flat) == (width < 100)


def test_no_two_kernels_read_the_same(reports):
    # A torch training step and the op corpus: every distinct kernel has a distinct short name.
    for d in (*reports.values(), diagnose(DATA / "h200_ncuwrap" / "top" / "report.raw.csv")):
        names = N.of(d)
        distinct = {k.name for k in d.kernels}
        assert len({names(n) for n in distinct}) == len(distinct)
    timeline = diagnose_timeline(STEPS / "decode_eager.sqlite.gz")
    names = N.of(timeline)
    assert len({names(k.demangled) for k in timeline.timeline.kernels}) == len(timeline.timeline.kernels) == 21
    # The 13 elementwise kernels of the decoder, by what they compute.
    shown = sorted(names(k.demangled) for k in timeline.timeline.kernels if "vectorized_elementwise_kernel" in k.demangled)
    assert "at::native::vectorized_elementwise_kernel‹rsqrt_kernel_cuda…›" in shown
    assert "at::native::vectorized_elementwise_kernel‹silu_kernel…›" in shown


def test_the_short_form():
    assert N.short("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, "
                   "at::native::binary_internal::MulFunctor<float>>, std::array<char *, 3>>(int, T2, T3)") == \
        "at::native::vectorized_elementwise_kernel‹…›"
    # Short template arguments are the name: kept whole, with their own brackets.
    assert N.short("void scale_add<float, 4>(T1 *, const T1 *, T1, int)") == "scale_add<float, 4>"
    # Anonymous namespaces name nothing; a long identifier with no template stays whole.
    assert N.short("void at::<unnamed>::cunn_SoftMaxForwardReg<float, float, float, at::<unnamed>::LogSoftMaxForwardEpilogue, long, 8>"
                   "(T3 *, const T1 *, T5)") == "at::cunn_SoftMaxForwardReg‹…›"
    cutlass = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"
    assert N.short(cutlass) == cutlass
    assert N.Names([cutlass], N.DEMANGLED)(cutlass + "(float)") == cutlass + "(float)"


def test_a_row_wraps_at_word_joints_and_stops_at_three_lines():
    from rich.console import Console
    from rich.table import Table

    def cell(text, width):
        console = Console(width=width + 4, record=True, color_system=None)
        table = Table(show_header=False, box=None, pad_edge=False)
        table.add_column(width=width)
        table.add_row(N.Clamped(text))
        console.print(table)
        return [line.rstrip() for line in console.export_text().splitlines()]

    assert cell("native::vectorized_elementwise_kernel‹rsqrt_kernel_cuda…›", 24) == [
        "native::vectorized_", "elementwise_kernel", "‹rsqrt_kernel_cuda…›"]
    long = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_execute_kernel"
    lines = cell(long, 30)
    assert len(lines) == 3 and lines[-1].endswith("…") and all(len(line) <= 30 for line in lines)
    # Every line but the last ends where the name may break: after '_' or '::'.
    assert all(re.search(r"(_|::)$", line) for line in lines[:-1])
    # A word wider than its cell breaks at a camel-case joint, not at the cell's edge.
    radix = cell("radix_sort::DeviceRadixSortOnesweepKernel‹…›", 22)
    assert "".join(radix) == "radix_sort::DeviceRadixSortOnesweepKernel‹…›" and all(len(line) <= 22 for line in radix)
    assert all(re.search(r"(::|[a-z])$", a) and re.match(r"[A-Z]", b) for a, b in zip(radix, radix[1:])), radix


def _wrap_whole(text: str, width: int, most: int) -> list[str]:
    """The cell's wrapping as first written (the whole name read, every fold re-slicing the rest): the
    reference the head-only wrapping must agree with."""
    lines, current = [], ""
    pieces = [part for piece in N._BREAK.split(text) if piece for part in (N._CAMEL.split(piece) if len(piece) > width else (piece,)) if part]
    for piece in pieces:
        while len(piece) > width:
            if current:
                lines.append(current)
                current = ""
            lines.append(piece[:width])
            piece = piece[width:]
        if len(current) + len(piece) > width:
            lines.append(current)
            current = piece
        else:
            current += piece
    if current:
        lines.append(current)
    if len(lines) > most:
        last = lines[most - 1]
        lines = lines[: most - 1] + [(last[: width - 1] if len(last) >= width else last) + "…"]
    return [line.rstrip() if i == 0 else line.strip() for i, line in enumerate(lines)]


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet="ab_:, ‹…›AZx", min_size=1, max_size=200), width=st.integers(1, 40), most=st.integers(1, 8))
def test_a_cell_reads_only_the_head_of_a_name_and_lays_it_out_as_the_whole(text, width, most):
    assert N.Clamped(text, lines=most)._wrap(width) == _wrap_whole(text, width, most)


class _Counted:
    """A compiled pattern that adds up the characters each call hands it (issue 42: a 16 MB name was read
    whole, and re-sliced for every folded line: 413 s in the terminal)."""

    def __init__(self, pattern, seen: list[int]):
        self.pattern, self.seen = pattern, seen

    def split(self, text):
        self.seen.append(len(text))
        return self.pattern.split(text)


@pytest.mark.parametrize("name", [
    "void at::native::kernel<" + "float, " * (16 * 2**20 // 7) + ">(int)",  # 16 MB of template arguments
    "k" * (16 * 2**20),  # 16 MB with no joint at all: every line folded
])
def test_a_huge_name_is_laid_out_from_its_head(monkeypatch, name):
    seen: list[int] = []
    escaped: list[int] = []
    monkeypatch.setattr(N, "_BREAK", _Counted(N._BREAK, seen))
    monkeypatch.setattr(N, "_CAMEL", _Counted(N._CAMEL, seen))
    escape = N.terminal
    monkeypatch.setattr(N, "terminal", lambda text: escaped.append(len(text)) or escape(text))
    from ncuwrap.render.table import Page

    page = Page(80)
    table = page.table("kernel", "launches", names=("kernel",))
    table.add_row(N.Clamped(name), "1")
    page.print(table)
    rows = [r for r in page.text().split("─\n", 1)[1].splitlines() if r.strip()]
    # Three lines of it, the last ending in an ellipsis; what was read is a few cells' worth, not the name.
    assert len(rows) == N.MAX_LINES and rows[-1].endswith("…") and rows[0].endswith(" 1")
    assert sum(escaped) <= (N.MAX_LINES + 1) * N.MAX_CELL + 1
    assert sum(seen) < 20 * (N.MAX_LINES + 1) * 80, sum(seen)


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_keeps_its_speedups_at_each_width(capsys, width, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(width))
    top = DATA / "h200_ncuwrap" / "top" / "report.raw.csv"
    code, out, _ = run_cli(capsys, "compare", top, top)
    assert code == 0
    golden(f"names_compare_top_{width}.txt", out)
    header = next(line for line in out.splitlines() if line.lstrip().startswith("kernel"))
    flat = " ".join(out.split())
    # ncu's speedup, the one number measured here, stays at every width; the estimate and the real speedup
    # (no bench timings: n/a for every pair) go first when columns must, and the table says so.
    assert "ncu speedup" in header
    assert ("estimated" in header) == (width >= 160) and ("real speedup" in header) == (width >= 100)
    assert ("estimated, real speedup: n/a for every pair" in flat) == (width < 100)
    assert ("estimated: n/a for every pair" in flat) == (100 <= width < 160)
    assert ("resolved" in header) == (width >= 100)
    assert max(len(line) for line in out.splitlines()) <= width
    assert rows_within_compare(out)


def rows_within_compare(text: str, lines: int = 3) -> bool:
    """Each pair's row of the compare summary takes at most ``lines`` lines."""
    body = text.split("─", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    starts = [i for i, line in enumerate(body) if line.startswith(" ") and not line.startswith("  ") and line.strip()] + [len(body)]
    return all(b - a <= lines for a, b in zip(starts, starts[1:]))


@pytest.mark.parametrize("width", WIDTHS)
def test_timeline_compare_at_each_width(width):
    result = compare_timeline_files(STEPS / "decode_eager.sqlite.gz", STEPS / "graph_decode.sqlite.gz")
    text = render(result, Format.table, width=width)
    golden(f"names_timeline_compare_{width}.txt", text)
    assert max(len(line) for line in text.splitlines()) <= width


@pytest.mark.parametrize("style, expect", [
    ("short", "at::native::reduce_kernel‹MeanOps…›"),
    # ncu's CSV form of integer template arguments (ncuwrap.core.kernel_names), the parameters left out.
    ("function", "at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps"),
    ("demangled", "void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::MeanOps"),
])
def test_names_option_in_every_format(capsys, style, expect):
    path = STEPS / "decode_eager.sqlite.gz"
    for fmt in ("markdown", "html"):
        code, out, _ = run_cli(capsys, "timeline", path, "--names", style, "-f", fmt)
        text = html.unescape(out) if fmt == "html" else out
        assert code == 0 and expect in " ".join(text.split()), (fmt, style)
    code, out, err = run_cli(capsys, "diagnose", REAL / "ops.raw.csv.gz", "--names", "nonsense")
    assert code == 2 and "--names" in err
