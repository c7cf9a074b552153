"""Every memory level a report holds is in every chart of the main job (``ncuwrap diagnose``), and a level or a peak the
report holds no counter of is said, in every format (issue 54 item 4): computed once (KernelVerdict.level_gaps, said once
for a report by Diagnosis.level_gaps), written by each renderer. On real H200 reports: the bundled sample, re-captured on
2026-12-05 with the targeted collection of that day (the L2 sector counter, not the L1 peak: its section costs passes of
its own), its own raw and source pages, and captures of a targeted collection from before the L2 sector counter."""

from __future__ import annotations

import json
import re

import pytest

from ncuwrap.api import diagnose
from ncuwrap.kernel.document import read
from ncuwrap.kernel.json_delta import expand_launches
from tests.conftest import DATA, H200, run_cli

SAMPLE_RUN = DATA / "h200_ncuwrap" / "profile" / "sample_source"  # what the capture of the bundled sample wrote
# transpose/naive with the targeted collection of 2026-12-01: no L2 sector counter, no L1 peak.
OLD_NAIVE = DATA / "h200_ncuwrap" / "source" / "transpose-naive.raw.csv.gz"
# vecadd/coalesced with the L2 sector counter, not the L1 peak: a kernel with FP32 arithmetic, so a roofline is drawn.
VECADD = DATA / "h200_ncuwrap" / "l2_roofline" / "vecadd_coalesced.report.raw.csv.gz"

L1_PEAK = {"level": "L1", "part": "peak", "why": "not collected",
           "missing": ["derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained", "l1tex__cycles_elapsed.avg.per_second"],
           "how": "re-profile with --section SpeedOfLight_HierarchicalSingleRooflineChart (or 'ncuwrap profile --collect full': "
                  "--collect targeted leaves that section out)"}
L2_BYTES = {"level": "L2", "part": "bytes", "why": "not collected", "missing": ["lts__t_sectors.sum"],
            "how": "re-profile with --section MemoryWorkloadAnalysis_Tables (or 'ncuwrap profile --collect targeted')"}
# What the kernel's section of the HTML page says under its charts, and the terminal and Markdown once for the report.
L1_PEAK_LINE = ("L1: peak not collected{on}, so the charts{html} show L1's bytes without its peak (no roof, no share of it); "
                "re-profile with --section SpeedOfLight_HierarchicalSingleRooflineChart (or 'ncuwrap profile --collect full': "
                "--collect targeted leaves that section out)")
L2_BYTES_LINE = ("L2: not collected{on}, so the charts{html} have no L2 bar or point; re-profile with --section "
                 "MemoryWorkloadAnalysis_Tables (or 'ncuwrap profile --collect targeted')")


def _outputs(capsys, *report) -> dict[str, str]:
    outputs = {}
    for fmt in ("table", "json", "markdown", "html"):
        code, out, err = run_cli(capsys, "diagnose", *report, "-f", fmt)
        assert code == 0, err
        outputs[fmt] = out
    return outputs


def _launches(doc: dict) -> list[dict]:
    """The document's launches, each whole (v4 writes a later launch as what it differs in)."""
    return expand_launches(doc["kernels"])


def _kernel(doc: dict, name: str) -> dict:
    return next(k for k in _launches(doc) if k["name"] == name)


def _kernel_section(html: str, anchor: str) -> str:
    """A kernel's section of a diagnosis page: up to the next kernel's (it holds folded blocks of its own)."""
    start = html.index(f'<details class="kernel" id="{anchor}"')
    end = html.find('<details class="kernel"', start + 1)
    return html[start:end if end >= 0 else len(html)]


def _bandwidth_rows(html: str, anchor: str) -> list[tuple[str, str]]:
    """(level, what its row says) of the bandwidth chart in the kernel section ``anchor`` of a diagnosis page."""
    chart = re.search(r'<svg[^>]*aria-label="Memory bandwidth[^"]*".*?</svg>', _kernel_section(html, anchor), re.S).group(0)
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", chart)
    return list(zip(texts[0::2], texts[1::2]))


def _gap_notes(html: str, anchor: str) -> list[str]:
    return re.findall(r'<p class="note gap">(.*?)</p>', _kernel_section(html, anchor))


def _section(text: str, heading: str) -> str:
    """The lines of a terminal section, unwrapped (the terminal wraps at 100 columns)."""
    body = text.split(f"\n{heading}\n", 1)[1].split("\n\n", 1)[0]
    return " ".join(body.split())


def test_the_bundled_samples_charts_hold_dram_l2_and_l1_and_say_the_l1_peak_was_not_collected(capsys, tmp_path):
    """transpose_naive, which L2 limits: the old sample had no L2 sector counter and its HTML chart showed DRAM and L1
    only. Re-captured, every chart holds the three levels; the L1 peak, which targeted collection leaves out (its
    section's passes only draw a roof), is said in every format, with how to collect it."""
    out = _outputs(capsys)
    doc = json.loads(out["json"])
    naive = _kernel(doc, "transpose_naive")
    chart = naive["chart"]
    assert chart["dram_bytes_per_s"] == pytest.approx(5.25e11, rel=0.01) and chart["dram_peak_bytes_per_s"] == pytest.approx(4.81e12, rel=0.01)
    assert chart["l2_bytes_per_s"] == pytest.approx(3.57e12, rel=0.01) and chart["l2_peak_bytes_per_s"] == pytest.approx(1.54e13, rel=0.01)
    assert chart["l1_bytes_per_s"] == pytest.approx(2.34e12, rel=0.01) and chart["l1_peak_bytes_per_s"] is None
    # Every launch of the sample lacks the same, and only that.
    assert [k["level_gaps"] for k in _launches(doc)] == [[L1_PEAK]] * 6
    # The document read back (what 'compare' takes) holds the gaps its charts are drawn with.
    (tmp_path / "sample.json").write_text(out["json"], encoding="utf-8")
    assert [k.level_gaps for k in read(tmp_path / "sample.json").kernels] == [k.level_gaps for k in diagnose().kernels]

    html = out["html"]
    anchor = re.search(r'<a href="#(k\d+)">transpose_naive</a>', html).group(1)
    assert _bandwidth_rows(html, anchor) == [("DRAM", "525 GB/s of 4.81 TB/s (11%)"), ("L2", "3.57 TB/s of 15.4 TB/s (23%)"),
                                             ("L1", "2.34 TB/s (peak not collected)")]
    assert _gap_notes(html, anchor) == [L1_PEAK_LINE.format(on="", html="").replace("'", "&#39;") + "."]

    assert _section(out["table"], "Charts") == L1_PEAK_LINE.format(on=" on every launch", html=" of --format html") + "."
    markdown = out["markdown"].split("**Charts**\n\n", 1)[1].split("\n\n", 1)[0]
    assert markdown == "- " + L1_PEAK_LINE.format(on=" on every launch", html=" of --format html").replace("_", r"\_") + "."


@pytest.mark.parametrize("report", [OLD_NAIVE, OLD_NAIVE.with_name("transpose-naive.ncu-rep.gz")])
def test_a_chart_without_a_level_says_so_in_every_format(capsys, report):
    """The same transpose_naive profiled with the targeted set of 2026-12-01 (before the L2 sector counter), read
    from its raw page and from its report: L2 is kept in the chart, said not collected, and so is the L1 peak."""
    out = _outputs(capsys, report)
    naive = _kernel(json.loads(out["json"]), "transpose_naive")
    assert naive["chart"]["l2_bytes_per_s"] is None and naive["level_gaps"] == [L2_BYTES, L1_PEAK]
    assert _bandwidth_rows(out["html"], "k1") == [("DRAM", "534 GB/s of 4.81 TB/s (11%)"), ("L2", "not collected"),
                                                  ("L1", "2.39 TB/s (peak not collected)")]
    # No dashed box (the peak) where no peak is known: only DRAM's.
    assert re.findall(r'stroke="(#[0-9a-f]+)" stroke-dasharray="3 2"', out["html"]) == ["#b45309"]
    lines = [line.format(on="", html="") for line in (L2_BYTES_LINE, L1_PEAK_LINE)]
    assert _gap_notes(out["html"], "k1") == [line.replace("'", "&#39;") + "." for line in lines]
    lines = [line.format(on="", html=" of --format html") for line in (L2_BYTES_LINE, L1_PEAK_LINE)]
    assert _section(out["table"], "Charts") == " ".join(line + "." for line in lines)
    markdown = out["markdown"].split("**Charts**\n\n", 1)[1].split("\n\n", 1)[0]
    assert markdown.split("\n") == ["- " + line.replace("_", r"\_") + "." for line in lines]


def test_a_details_page_says_what_it_does_not_export():
    """ncu's details page exports no raw counter: the levels it lacks are 'not on the details page', with the export
    that has them, not a re-profile."""
    (k,) = diagnose(H200 / "transpose" / "transposeShared.details.csv").kernels
    export = "export the report with 'ncu --import REPORT --csv --page raw'"
    assert [(g.level, g.part, g.why, g.how) for g in k.level_gaps] == [("DRAM", "peak", "not on the details page", export),
                                                                       ("L2", "bytes", "not on the details page", export),
                                                                       ("L1", "bytes", "not on the details page", export)]


def test_a_roofline_without_the_l1_roof_says_so_in_its_key(capsys):
    """vecadd/coalesced adds floats: its roofline is drawn, with DRAM and L2 roofs and three points; the L1 point
    has no roof to be held against, which the key says where the roofs are named."""
    code, html, err = run_cli(capsys, "diagnose", VECADD, "-f", "html")
    assert code == 0, err
    (chart,) = re.findall(r'<svg[^>]*aria-label="Roofline[^"]*".*?</svg>', html, re.S)
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", chart)
    assert texts[texts.index("DRAM roof 4.81 TB/s"):texts.index("DRAM roof 4.81 TB/s") + 3] == ["DRAM roof 4.81 TB/s", "L2 roof 15.4 TB/s",
                                                                                                "L1 roof: not collected"]
    assert len(re.findall(r'class="point"', chart)) == 3 + 3  # DRAM, L2 and L1 points, and the key's three markers


def test_a_report_with_every_counter_has_no_gap(capsys):
    """transposeNaive profiled with the full set: every level has its bytes and its peak, and nothing is said."""
    out = _outputs(capsys, H200 / "transpose" / "transposeNaive.ncu-rep.gz")
    assert _kernel(json.loads(out["json"]), "transposeNaive")["level_gaps"] == []
    assert "\nCharts\n" not in out["table"] and "**Charts**" not in out["markdown"] and 'class="note gap"' not in out["html"]
    assert [level for level, _ in _bandwidth_rows(out["html"], "k1")] == ["DRAM", "L2", "L1"]


def _lines(kernel) -> list:
    """The source lines of each finding of a launch, where they are known."""
    return [[(h.file, h.line) for h in getattr(f.where, "lines", ())] for f in kernel.findings]


def test_the_samples_own_pages_give_what_its_report_gives():
    """The raw and source pages ncu exported from the bundled sample on the H200 (sample_source/) give its verdicts,
    findings, their lines, the same levels missing, and its chart figures to the CSV's rounding."""
    report = diagnose()
    pages = diagnose(SAMPLE_RUN / "report.raw.csv.gz", source_page=SAMPLE_RUN / "report.source.csv.gz")
    assert [k.name for k in pages.kernels] == [k.name for k in report.kernels]
    for a, b in zip(report.kernels, pages.kernels):
        assert (b.verdict_label, b.finding_ids(), b.estimated_gain_pct, b.level_gaps) == (a.verdict_label, a.finding_ids(), a.estimated_gain_pct,
                                                                                            a.level_gaps)
        assert _lines(b) == _lines(a) and any(_lines(a)) == (a.name in ("transpose_naive", "transpose_shared"))
        assert b.chart_metrics.keys() == a.chart_metrics.keys()
        for name, value in a.chart_metrics.items():
            assert b.chart_metrics[name] == (pytest.approx(value, rel=1e-3) if isinstance(value, float) else value), name
