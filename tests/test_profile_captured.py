"""`ncuwrap profile` on the lent H200: what it wrote, and ncu's real console parsed back.

Everything here came from device runs of workloads/profile/capture.sh and
benchmarks/targeted_vs_full.py (tests/data/h200_ncuwrap/profile, README there).
"""

from __future__ import annotations

import json

import pytest

from ncuwrap.kernel.diagnosis import diagnose
from ncuwrap.profile.console import NcuRun, parse_console
from ncuwrap.profile.failure import failure
from tests.conftest import DATA

PROFILE = DATA / "h200_ncuwrap" / "profile"
CONSOLES = PROFILE / "consoles"


def _verdicts(diagnosis) -> list[tuple]:
    return [(k.name, k.bound, k.limiter, k.finding_ids()) for k in diagnosis.kernels]


@pytest.mark.parametrize("variant", ["transpose-naive", "transpose-shared_tile", "divergence-per_lane"])
def test_targeted_report_gives_the_same_verdict_as_full(variant):
    targeted = diagnose(PROFILE / "pairs" / f"{variant}.targeted.ncu-rep.gz")
    full = diagnose(PROFILE / "pairs" / f"{variant}.full.ncu-rep.gz")
    assert _verdicts(targeted) == _verdicts(full)
    assert all(k.not_evaluated == () for k in targeted.kernels), [n.message for k in targeted.kernels for n in k.not_evaluated]


def test_targeted_vs_full_on_the_bundled_variants():
    from ncuwrap.bundled.manifest import load_manifest

    profiled = {f"{b.name}/{v.name}" for b in load_manifest().benchmarks for v in b.variants if v.profile is not None}
    # Variants added in issue 12 were never captured (no GPU then): the recording covers all the others.
    profiled -= {"gemm_hopper/pipelined", "gemm_hopper/single_stage", "transpose/swizzled128x64"}
    # The layout family (issue 24's pairs) came later: its captures are the pairs' (pairs_full/layout-*).
    profiled -= {"layout/aos_field", "layout/soa", "layout/soa_float4", "vecadd/one_per_thread",
                 *(f"bytes_in_flight/{v}" for v in ("w4_k1", "w8_k1", "w4_k4", "w16_k1", "w16_k4"))}
    # The rules of a2661b9 (before estimates): all 42 variants, 14 passes.
    old = json.loads((PROFILE / "targeted_vs_full_a2661b9.json").read_text())
    assert {v["name"] for v in old["variants"]} == profiled
    assert all(v["same_verdict"] for v in old["variants"]) and {v["targeted"]["passes"] for v in old["variants"]} == {14}
    # Today's targeted set (the warp stall ratios left out) on all 42: the verdicts of --set full at 17
    # passes against 37-38, in 35-63% of its wall time.
    doc = json.loads((PROFILE / "targeted_vs_full.json").read_text())
    assert [v["name"] for v in doc["variants"]] == [v["name"] for v in old["variants"]]
    assert all(v["same_verdict"] for v in doc["variants"])
    assert {v["targeted"]["passes"] for v in doc["variants"]} == {17}
    assert min(v["full"]["passes"] for v in doc["variants"]) >= 37
    summary = doc["summary"]
    assert (summary["measured"], summary["identical"], summary["median_ratio"], summary["target_met"]) == (42, 42, 0.441, False)
    # What the passes are spent on (workloads/l2_roofline/pass_cost.py on transpose/naive): the four SOL
    # throughputs alone take 10, so no targeted set that decides bound as --set full does fits in 10.
    cost = json.loads((PROFILE / "pass_cost_order2.json").read_text())
    rows = {(r["kind"], r["label"]): r["passes"] for r in cost["rows"]}
    assert rows[("alone", "throughputs + clocks + duration")] == 10
    assert rows[("all", "targeted, all")] == 23 and rows[("cumulative", "warp stall reasons")] == 23
    before_stalls = [r["passes"] for r in cost["rows"] if r["kind"] == "cumulative"][-2]
    assert before_stalls == 17
    single = {r["label"]: r["passes"] for r in json.loads((PROFILE / "pass_cost.json").read_text())["rows"] if r["kind"] == "metric"}
    assert single["sm__throughput.avg.pct_of_peak_sustained_elapsed"] == 9


def test_no_verdict_flips_between_three_runs():
    doc = json.loads((PROFILE / "verdict_stability.json").read_text())
    assert doc["runs"] == 3 and len(doc["variants"]) == 8
    assert [v["name"] for v in doc["variants"] if v["flipped"]] == []
    # The two whose numbers sit near a line are flagged, and still did not flip in 3 runs.
    assert sorted(v["name"] for v in doc["variants"] if v["borderline"]) == ["gather/random", "gemm/tensor_core"]


def test_sample_run_folder_verdict_is_reproduced_from_its_csv():
    run = PROFILE / "sample_run"
    recorded = json.loads((run / "verdict.json").read_text())
    again = diagnose(run / "report.raw.csv")
    assert [(k["name"], k["bound"], k["limiter"], [f["id"] for f in k["findings"]]) for k in recorded["kernels"]] == _verdicts(again)
    assert [k["name"] for k in recorded["kernels"]] == ["transpose_copy", "transpose_naive", "transpose_shared", "transpose_padded", "transpose_swizzled64"]
    profile = json.loads((run / "profile.json").read_text())
    assert profile["status"] == "ok"
    assert "--clock-control none" in (run / "commands.txt").read_text()


def _console(name: str) -> NcuRun:
    text = (CONSOLES / f"{name}.stdout").read_text() + (CONSOLES / f"{name}.stderr").read_text()
    run = parse_console(text)
    run.argv = ["ncu"]
    return run


def test_real_no_match_console_lists_the_launched_kernels():
    run = _console("nomatch")
    assert run.no_kernels_profiled and run.available_kernels == ["fill", "scale_columns", "scale_rows"]
    error = failure(run, log="ncu.log", kernel_filter="no_such_kernel")
    assert str(error) == ("the kernel filter -k 'no_such_kernel' matched no launch; the program launched: fill, scale_columns, "
                          "scale_rows; pass -k with one of these (a regular expression)")


def test_real_failing_program_console_gives_its_exit_code_and_last_lines():
    run = _console("appfail")
    assert run.app_exit_code == 3
    error = failure(run, log="ncu.log", report_exists=True)
    assert str(error).startswith("the program failed under ncu with exit code 3; its last lines: ")
    assert "failing on purpose (--fail)" in str(error)


def test_real_successful_console_counts_passes():
    run = _console("ok")
    assert [k.passes for k in run.kernels] == [1]
    assert failure(run, log="ncu.log", report_exists=True) is None
