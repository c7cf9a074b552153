"""compare for timelines (issue 25): two real H200 captures of one program, before and after a change.

decode_eager -> graph_decode (tests/data/h200_ncuwrap/steps): the same 4-layer decoder, one token a step,
launched kernel by kernel, then replayed as one CUDA graph. The program's own uninstrumented medians
(steps/*.log): 2.351 -> 0.469 ms a token. launch_sync_each -> launch_graph (h200_ncuwrap/nsys): 2,000
tiny kernels with a synchronize after each, then in a CUDA graph; no NVTX steps (whole captures)."""

from __future__ import annotations

import json

import pytest

from ncuwrap.render import Format, render
from ncuwrap.timeline.compare import compare_timeline_files, compare_timelines
from ncuwrap.timeline.diagnosis import diagnose_timeline
from ncuwrap.timeline.options import TimelineOptions
from tests.conftest import DATA, golden, run_cli

STEPS = DATA / "h200_ncuwrap" / "steps"
EAGER, GRAPH = STEPS / "decode_eager.sqlite.gz", STEPS / "graph_decode.sqlite.gz"
CAPTURED = DATA / "h200_ncuwrap" / "nsys"


@pytest.fixture(scope="module")
def sides():
    return diagnose_timeline(EAGER), diagnose_timeline(GRAPH)


@pytest.fixture(scope="module")
def graphs(sides):
    return compare_timelines(*sides)


def _program_mean(log) -> float:
    """The program's own mean step (ms) over its steady steps (all but the first), from the JSON summary that ends its log."""
    summary = json.loads(next(line for line in log.read_text().splitlines() if line.startswith("{")))
    walls = summary["step_wall_ms"][1:]
    return sum(walls) / len(walls)


def _program_median(log) -> float:
    """The program's own steady median step (ms), from the JSON summary that ends its log."""
    summary = json.loads(next(line for line in log.read_text().splitlines() if line.startswith("{")))
    return summary["step_wall_ms_median"] if "step_wall_ms_median" in summary else sorted(summary["step_wall_ms"][1:])[len(summary["step_wall_ms"][1:]) // 2]


def test_cuda_graphs_per_step_against_the_programs_own_timing(graphs):
    assert graphs.scope == "per step"
    # Steady steps: 63 of 64 on both sides (the first token of each is slower: warm-up).
    assert (len(graphs.before.timeline.steps.steady), len(graphs.after.timeline.steps.steady)) == (63, 63)
    # The headline is the mean step (the steady window over its steps), the median beside it.
    assert graphs.period.before == pytest.approx(2_960_847, abs=1) and graphs.period.after == pytest.approx(471_822, abs=1)
    assert graphs.median_period.before == pytest.approx(2_351_930) and graphs.median_period.after == pytest.approx(468_961)
    assert graphs.speedup == pytest.approx(6.275, abs=0.001)
    # The program timed itself (time.perf_counter between steps, under the capture): the same mean step within 1%,
    # and the same ratio; its medians too.
    assert graphs.period.before / 1e6 == pytest.approx(_program_mean(STEPS / "decode_eager.log"), rel=0.01)
    assert graphs.period.after / 1e6 == pytest.approx(_program_mean(STEPS / "graph_decode.log"), rel=0.01)
    measured = _program_mean(STEPS / "decode_eager.log") / _program_mean(STEPS / "graph_decode.log")
    assert graphs.speedup == pytest.approx(measured, rel=0.01)
    medians = _program_median(STEPS / "decode_eager.log") / _program_median(STEPS / "graph_decode.log")
    assert graphs.median_period.before / graphs.median_period.after == pytest.approx(medians, rel=0.03)
    # The GPU does the same work (kernels a little longer back to back), the idle time goes.
    by = {c.name: c for c in graphs.breakdown}
    assert by["idle"].before == pytest.approx(2_695_572.8, abs=1) and by["idle"].after == pytest.approx(194_535.1, abs=1)
    assert by["kernel"].after / by["kernel"].before == pytest.approx(1.0434, abs=0.001)


def test_launches_copies_and_kernels_matched_by_name(graphs):
    act = {c.name: c for c in graphs.activity}
    assert (act["kernels"].before, act["kernels"].after) == (123, 123)
    assert (act["launch_calls"].before, act["launch_calls"].after) == (123, 1)  # 123 cudaLaunchKernel -> 1 cudaGraphLaunch
    assert (act["copies"].before, act["copies"].after) == (6, 6) and act["copy_bytes"].delta == 0
    # Every kernel of the decoder on both sides, with the same launches a step and configuration.
    assert len(graphs.kernels) == 21 and not graphs.added and not graphs.removed
    assert all(k.before_launches == k.after_launches and not k.config_changed for k in graphs.kernels)
    assert sum(k.before_launches for k in graphs.kernels) == 123
    # Sorted by how much their time a step changed, most first.
    deltas = [abs(k.delta_ns) for k in graphs.kernels]
    assert deltas == sorted(deltas, reverse=True)


def test_the_verdict_and_findings_before_and_after(graphs):
    assert (graphs.before.bound, graphs.after.bound) == ("launch", "kernel") and graphs.verdict_changed
    assert graphs.resolved == ("kernels_not_the_bottleneck",)
    # The GPU idled 91% of an eager step and 41% of a graph step: gpu_idle_gaps applies only under the
    # kernel verdict, and its condition held before too. Introduced is what got worse: the syncs.
    assert graphs.introduced == ("sync_after_each_launch",) and graphs.held_before == ("gpu_idle_gaps",) and graphs.still_holds == ()
    assert graphs.regressions == []  # faster, and nothing HIGH introduced


def test_every_format_is_the_recorded_one(graphs):
    golden("compare_timelines_decode.txt", render(graphs, Format.table, width=100))
    golden("compare_timelines_decode.md", render(graphs, Format.markdown))
    golden("compare_timelines_decode.json", render(graphs, Format.json))
    page = render(graphs, Format.html)
    assert page.startswith("<!DOCTYPE html>") and "6.28x faster" in page and "cudaGraphLaunch" not in page
    assert page.count("<tr><td class=\"kname\"") == 12  # the 12 kernels that changed most
    assert "9 more kernels changed less" in page


def test_the_reverse_change_is_a_regression(sides, capsys):
    back = compare_timelines(sides[1], sides[0])
    assert back.speedup == pytest.approx(1 / 6.275, abs=0.001)
    assert back.regressions == ["the mean step is 527.5% longer after the change (more than 5%)"]
    code, out, err = run_cli(capsys, "compare", GRAPH, EAGER, "--fail-on-regression")
    assert code == 1 and "6.28x slower" in out
    assert err.strip().splitlines() == ["ncuwrap: regression: the mean step is 527.5% longer after the change (more than 5%)"]
    code, _, _ = run_cli(capsys, "compare", EAGER, GRAPH, "--fail-on-regression", "-f", "json")
    assert code == 0


def test_captures_without_steps_compare_as_wholes():
    r = compare_timeline_files(CAPTURED / "launch_sync_each.sqlite.gz", CAPTURED / "launch_graph.sqlite.gz", timeline=TimelineOptions(steps="marked"))
    assert r.scope == "whole capture" and r.period.label == "traced window"
    assert r.notes[0].startswith("neither capture has steps")
    # Its graphs were traced as a whole: 2,000 kernels a run become one execution of a graph, which the
    # compare passes on from AFTER's own reading.
    act = {c.name: c for c in r.activity}
    assert (act["kernels"].before, act["kernels"].after) == (10_000, 5)
    assert any(n.startswith("AFTER: 5 CUDA graph executions traced as a whole") for n in r.notes)
    assert {k.name for k in r.added} == {"CUDA graph 1", "CUDA graph 4"} and len(r.removed) == 1
    assert r.speedup > 1 and r.regressions == []


@pytest.mark.parametrize("args, message", [
    (["--pair", "a=b"], "--pair: applies to kernel reports; two timelines are compared as wholes (drop --pair)"),
    (["-k", "gemv"], "--kernel: applies to kernel reports; two timelines are compared as wholes (drop --kernel)"),
])
def test_kernel_report_options_are_refused_for_timelines(capsys, args, message):
    code, out, err = run_cli(capsys, "compare", EAGER, GRAPH, *args)
    assert (code, out) == (2, "") and err.strip() == f"ncuwrap: error: {message}"


def test_a_timeline_and_a_kernel_report_do_not_compare(capsys):
    ncu = DATA / "h200" / "transpose" / "transposeNaive.raw.csv"
    code, out, err = run_cli(capsys, "compare", EAGER, ncu)
    assert (code, out) == (2, "")
    assert err.strip() == (f"ncuwrap: error: {ncu}: not an nsys capture, while {EAGER} is; compare two timelines (.sqlite, .sqlite.gz, "
                           ".nsys-rep) or two kernel reports")
    code, _, err = run_cli(capsys, "compare", ncu, ncu, "--step-range", "step")
    assert code == 2 and "--step-range: applies to two nsys captures" in err


def test_step_options_reach_both_sides(capsys):
    code, out, _ = run_cli(capsys, "compare", EAGER, GRAPH, "--warmup", "4", "-f", "json")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == "ncuwrap.timeline-compare/v1"
    assert (doc["before"]["steady_steps"], doc["after"]["steady_steps"]) == (60, 60)


PINNED = DATA / "h200_ncuwrap" / "pinned"


def test_a_transfer_fix_pageable_to_pinned():
    """input_bound.py, its batch pageable and fresh each step, then one reused pinned buffer copied with
    non_blocking=True (tests/data/h200_ncuwrap/pinned)."""
    r = compare_timeline_files(PINNED / "input_bound_pageable.sqlite.gz", PINNED / "input_bound_pinned.sqlite.gz")
    assert r.scope == "per step" and r.speedup == pytest.approx(13.28, abs=0.01)
    # The programs timed themselves in the captured runs: the same ratio within 1%.
    measured = _program_mean(PINNED / "input_bound_pageable.log") / _program_mean(PINNED / "input_bound_pinned.log")
    assert r.speedup == pytest.approx(measured, rel=0.01)
    by = {c.name: c for c in r.breakdown}
    assert by["memcpy_htod"].before == pytest.approx(68.15e6, rel=1e-3) and by["memcpy_htod"].after == pytest.approx(5.07e6, rel=1e-3)
    act = {c.name: c for c in r.activity}
    assert act["copy_bytes"].before == act["copy_bytes"].after == 256 * 2**20 + 4  # the batch and the 4-byte .item()
    # Still transfer-bound (the copy is still most of a step), without the pageable-copy finding.
    assert (r.before.bound, r.after.bound) == ("transfer", "transfer") and not r.verdict_changed
    assert r.resolved == ("pageable_memcpy",) and r.introduced == () and r.regressions == []
    # Uninstrumented, 3 runs each: a faster program still, by the median of the runs.
    runs = [json.loads(line) for line in (PINNED / "uninstrumented.jsonl").read_text().splitlines()]
    pageable = sorted(x["steady_wall_ms_median"] for x in runs if not x["pinned"])
    pinned = sorted(x["steady_wall_ms_median"] for x in runs if x["pinned"])
    assert len(pageable) == len(pinned) == 3 and pageable[1] / pinned[1] == pytest.approx(16.2, abs=0.1)


def test_the_gate_waives_findings_a_faster_step_introduced_unless_asked(sides):
    """docs/compare.md: 6.28x faster, the findings introduced are reported as not gating; a level given counts them."""
    severity = {f.id: f.severity for f in sides[1].findings}
    default = compare_timelines(*sides)
    assert default.regressions == [] and default.not_gating == [
        f"{fid}: a finding introduced ({severity[fid]}), while the mean step is 6.28x shorter"
        for fid in default.introduced if severity[fid] == "high"]
    strict = compare_timelines(*sides, fail_on_finding="low")
    assert strict.regressions == [f"{fid}: a finding introduced ({severity[fid]})" for fid in ("sync_after_each_launch",)
                                  if severity[fid] in ("high", "medium", "low")]
    assert strict.regressions and strict.not_gating == []
    assert strict.gate == "the mean step more than 5% longer, or a finding of severity low or worse introduced"


def test_each_table_says_its_statistic_and_its_rows_add_up_to_its_total(graphs):
    """Issue 38: the breakdown's rows are means over the steady steps and add up to the mean step shown
    under them; the median period (the headline) is in a table of medians of its own."""
    total = graphs.breakdown_total
    assert total.before == pytest.approx(sum(c.before for c in graphs.breakdown))
    assert total.after == pytest.approx(sum(c.after for c in graphs.breakdown))
    # The rows add up to the mean step, which is the headline's.
    assert total.before == pytest.approx(graphs.period.before, rel=1e-9) and graphs.median_period.before == pytest.approx(2_351_930)
    text = render(graphs, Format.table, width=100)
    assert "Where the time went (a step: the mean over the steady steps; the rows add up to the last)" in text
    assert "a step (mean), the rows' sum    2.96 ms  471.82 us   -2.49 ms" in text
    assert "The step (over the steady steps) and the whole capture" in text
    for fmt in (Format.markdown, Format.html):
        page = render(graphs, fmt)
        assert "the rows add up to the last" in page and "a step (mean), the rows&#39; sum" in page or "a step (mean), the rows' sum" in page
    # Without steps the rows add up to the traced window, which the other table shows too.
    whole = compare_timeline_files(CAPTURED / "launch_sync_each.sqlite.gz", CAPTURED / "launch_graph.sqlite.gz")
    assert whole.breakdown_total.before == pytest.approx(whole.period.before)
    assert whole.breakdown_total.after == pytest.approx(whole.period.after)
