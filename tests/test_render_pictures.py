"""Pictures of the HTML reports (issue 25) on real H200 reports: the rank chart inside its SVG, the
diagnosis summary readable on a phone (420 px: rows become cards), findings before the decision path,
a report-level hierarchical roofline (each kernel a point per memory level) and the "fix first" bars.
Checked in headless Chromium at 1280 and 420 px where it is installed (CI installs it)."""

from __future__ import annotations

import re

import pytest

from ncuwrap.kernel.diagnosis import diagnose
from ncuwrap.render import Format, render
from ncuwrap.timeline.ranks.diagnosis import diagnose_ranks
from tests.conftest import DATA
from tests.test_render_html import Page, _chromium, _console, _png_size

TOP = DATA / "h200_ncuwrap" / "top" / "report.raw.csv"
BLAS = DATA / "realworld" / "blas.raw.csv.gz"


def _svgs(html: str) -> list[str]:
    return re.findall(r"<svg .*?</svg>", html, flags=re.S)


def _texts_inside(svg: str) -> list[tuple[float, str, str]]:
    width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
    out = []
    for x, anchor, text in re.findall(r'<text x="([\d.]+)"[^>]*?(?:text-anchor="(\w+)")?[^>]*>([^<]*)', svg):
        # ~7.5 px a character at the legend's 12 px, half of it each side when centred.
        extent = 7.5 * len(text) * (0.5 if anchor == "middle" else 0 if anchor == "end" else 1)
        out.append((float(x) + extent, text, width))
    return out


def test_the_rank_chart_stays_inside_its_svg():
    html = render(diagnose_ranks(DATA / "h200_ncuwrap" / "ranks" / "slow1", workers=0), Format.html)
    (chart,) = [s for s in _svgs(html) if "Where each rank" in s]
    for right, text, width in _texts_inside(chart):
        assert right <= width, (text, right, width)
    # Every category of the legend is there whole, "GPU idle" and "memsets" included.
    assert {"compute kernels", "NCCL (exposed)", "D2D copies", "memsets", "GPU idle"} <= {t for _, t, _ in _texts_inside(chart)}


def test_the_legend_wraps_before_the_edge():
    from ncuwrap.render.html import svg

    items = [(f"a kernel name of some length {i}", "#000") for i in range(6)]
    assert svg.legend_rows(items, 90, 720) == 3
    body = "".join(svg._legend(items, 90, 16, 720))
    ys = sorted({float(y) for y in re.findall(r'<text x="[\d.]+" y="([\d.]+)"', body)})
    assert ys == [16.0, 32.0, 48.0]


def test_findings_come_before_the_decision_path():
    html = render(diagnose(TOP), Format.html)
    sections = html.split('<details class="kernel"')[1:]
    assert len(sections) == 5
    for section in sections:
        assert section.index("<h3>Findings</h3>") < section.index("<h3>Decision path</h3>")


def test_the_report_roofline_draws_every_kernel_at_each_level():
    html = render(diagnose(BLAS), Format.html)
    report = html[html.index("<h3>Roofline of the report</h3>"):html.index('<details class="kernel"')]
    charts = _svgs(report)
    # One chart per kind of arithmetic among the cuBLAS kernels (FP32 SIMT, FP64, tensor types).
    titles = [re.search(r"<title>(.*?)</title>", c).group(1) for c in charts]
    assert len(charts) >= 3 and all(t.startswith("Roofline of the report (") for t in titles), titles
    def points_of(chart):  # the kernels' points (not the marker key's "DRAM point")
        return [p for p in re.findall(r'class="point"[^>]*><title>([^<]*)</title>', chart) if not p.endswith(" point")]

    for chart in charts:
        points = points_of(chart)
        levels = {p.split(": ")[1] for p in points}
        assert levels <= {"DRAM", "L2", "L1"} and "DRAM" in levels
        # Each kernel is named in the legend, and each of its points says which kernel it is.
        kernels = {p.split(": ")[0] for p in points}
        for kernel in kernels:
            assert f">{kernel}</text>" in chart
    # The hierarchy: the corpus was profiled with --set full, so every chart has DRAM and L2; an L1 point
    # only for a kernel whose traffic L1 carries (issue 38: cuBLAS's Hopper GEMMs feed wgmma by TMA).
    assert all({"DRAM", "L2"} <= {p.split(": ")[1] for p in points_of(c)} for c in charts)
    d = diagnose(BLAS)
    for k in d.kernels:
        levels = {p.level for p in k.roofline.points}
        by = {p.level: p.bytes_per_s for p in k.roofline.points}
        if "L2" in by:
            assert by["L2"] >= by["DRAM"] * 0.99, k.name  # L2 serves at least what DRAM does
        if k.roofline.l1_left_out is not None:
            assert "L1" not in levels and k.roofline.l1_left_out[0] < k.roofline.l1_left_out[1]
    assert any(k.roofline.l1_left_out for k in d.kernels) and any("L1" in {p.level for p in k.roofline.points} for k in d.kernels)


def test_fix_first_bars():
    d = diagnose(DATA / "realworld" / "ops.raw.csv.gz")
    html = render(d, Format.html)
    (bars,) = [s for s in _svgs(html) if "Fix first" in s]
    first = d.fix_first()
    assert len(re.findall(r'class="bar saves"', bars)) == len(first) >= 1
    assert all(f"saves ~{p.saves_pct:.1f}% of {p.share_pct:.1f}%" in bars for p in first)


def test_the_summary_is_cards_on_a_phone():
    html = render(diagnose(TOP), Format.html)
    page = Page(html)
    summary = html[html.index('<table class="summary">'):]
    summary = summary[:summary.index("</table>")]
    cells = re.findall(r"<td [^>]*>", summary)
    assert len(cells) == 5 * 8 and all("data-label=" in c for c in cells)
    assert "table.summary td::before { content:attr(data-label)" in html
    assert page.with_class("table", "summary")


@pytest.mark.parametrize("width", [1280, 420])
def test_reports_in_headless_chromium(tmp_path, width):
    for name, result in (("top", diagnose(TOP)), ("blas", diagnose(BLAS)),
                         ("ranks", diagnose_ranks(DATA / "h200_ncuwrap" / "ranks" / "slow1", workers=0))):
        page = tmp_path / f"{name}.html"
        page.write_text(render(result, Format.html), encoding="utf-8")
        shot = tmp_path / f"{name}_{width}.png"
        run = _chromium(tmp_path, page.as_uri(), f"--screenshot={shot}", f"--window-size={width},1600")
        assert run.returncode == 0, run.stderr[-2000:]
        assert _console(run.stderr) == []
        assert shot.is_file() and _png_size(shot) == (width, 1600) and shot.stat().st_size > 20_000


def test_each_kernel_of_a_report_chart_has_its_own_peak():
    """Issue 38: a bf16 chart drew its roof at 980 TFLOP/s while the text said a kernel was at 93% of 856
    (the kernels ran at different clocks). Each kernel's peak, the one its text divides by, is drawn."""
    d = diagnose(BLAS)
    html = render(d, Format.html)
    peaks = re.findall(r'class="peak"[^>]*><title>([^<]*)</title>', html)
    k = next(k for k in d.kernels if k.id == 2)  # nvjet bf16 GEMM at 93% of its type's peak
    own = f"{k.roofline.peak_flops_per_s / 1e12:.3g} TFLOP/s"
    assert own == "856 TFLOP/s" and k.tensor["peak_flops_per_s"] == k.roofline.peak_flops_per_s
    assert any(p.endswith(f": bf16 tensor peak {own} at its clock") and p.startswith(k.name[:20]) for p in peaks)
    assert "bf16 tensor peak 980 TFLOP/s, the highest of these kernels" in html
