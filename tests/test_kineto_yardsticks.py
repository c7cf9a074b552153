"""ncuwrap's verdict on the real H200 torch.profiler traces against two yardsticks (issue 37, "Done when").

The traces (tests/data/h200_ncuwrap/kineto/{gpu_train,small_launch,host_prep}.pt.trace.json.gz, a schedule,
``with_stack``, ``record_shapes``) are compared with:

(a) HolisticTraceAnalysis's temporal breakdown of the same trace, recorded by benchmarks/hta_temporal_breakdown.py
    in hta_temporal_breakdown.json (HTA 0.5.0; HTA is never imported here). HTA's busy share is
    (compute + non-compute) / kernel_time of the GPU. Its scope differs from ncuwrap's: HTA measures one window,
    from the first to the last GPU event launched before the last ProfilerStep (the last step is left out, the
    gaps between steps are in), where ncuwrap takes the median steady step (each step from its ProfilerStep range,
    all of them). The two agree within 2 points:

    | trace | ncuwrap (steady steps) | HTA, ns kept | HTA by default |
    |---|---:|---:|---:|
    | gpu_train | 89.1% (4 steps, 29.9 ms each) | 87.6% (steps 2-4, 91.3 ms) | 86.4% |
    | small_launch | 4.2% (10 steps, 7.7 ms) | 4.3% (steps 2-10, 67.8 ms) | fails |
    | host_prep | 1.2% (8 steps, 37.8 ms) | 1.2% (steps 2-8, 274.6 ms) | 1.1% |

    gpu_train's 1.6 points: both hold the same GPU work a step (HTA: 79.94 ms over steps 2-4, 26.65 ms a step;
    ncuwrap: 26.65 ms), but HTA's share is of its whole window, in which step 2 is the longest (32.7 ms, against
    29.6 and 29.9 ms), where ncuwrap's is of the median steady step (29.9 ms). "By default" HTA rounds every event of a
    nanosecond trace inward to whole microseconds, which shortens each of gpu_train's GPU events by up to a
    microsecond (1.2 points of busy lost) and makes small_launch's sub-microsecond kernels last 0 or -1 us, so
    that its breakdown stops on its own ``assert non_compute_time >= 0``. The comparison is with the
    breakdown with ``HTA_DISABLE_NS_ROUNDING=1``; the default's numbers are checked too where it has them.

(b) the nsys capture of the same program (tests/data/h200_ncuwrap/unmarked/*_marked.sqlite.gz, NVTX steps, no
    torch.profiler): the same verdict, the same launches a step, and the same GPU work a step (within 0.1% and
    0.7%; host_prep's 24 small kernels 3.2%: a test allows 4%). The busy share differs where
    the profiler's own overhead lengthens the step: torch.profiler with ``with_stack`` runs Python hooks on every
    call and op, so the host takes longer a step while the GPU does the same work:

    | program | Kineto: period, GPU work, busy | nsys: period, GPU work, busy |
    |---|---|---|
    | gpu_train | 29.94 ms, 26.65 ms, 89.1% | 28.11 ms, 26.63 ms, 95.0% |
    | small_launch | 7.68 ms, 0.325 ms, 4.2% | 5.02 ms, 0.323 ms, 6.4% |
    | host_prep | 37.84 ms, 0.456 ms, 1.2% | 37.73 ms, 0.471 ms, 1.3% |

    gpu_train's 5.8 points are the 1.8 ms the profiler adds to a 28 ms step: nsys's busy scaled by the period
    ratio, 95.0% x 28.11 / 29.94 = 89.1%, is Kineto's. The GPU work a step is the check there (within 1%),
    and the busy within a point once the period is scaled. small_launch and host_prep are within 3 points as they
    stand (small_launch's step is 2.7 ms longer under the profiler, but its GPU is idle either way).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

import ncuwrap.api

DATA = Path(__file__).parent / "data/h200_ncuwrap"
KINETO = DATA / "kineto"
HTA = json.loads((KINETO / "hta_temporal_breakdown.json").read_text())
PROGRAMS = {"gpu_train": "kernel", "small_launch": "launch", "host_prep": "launch"}
POINTS = 3.0  # "within a few points"


@cache
def _timeline(path: Path) -> dict:
    return ncuwrap.api.diagnose_timeline(path).to_json()


def kineto(program: str) -> dict:
    return _timeline(KINETO / f"{program}.pt.trace.json.gz")


def nsys(program: str) -> dict:
    return _timeline(DATA / "unmarked" / f"{program}_marked.sqlite.gz")


def test_the_record_says_what_was_run():
    assert HTA["hta_version"] == "0.5.0"
    assert HTA["call"] == "TraceAnalysis(trace_dir=DIR).get_temporal_breakdown(visualize=False)"
    assert HTA["date"] and set(HTA["traces"]) == set(PROGRAMS)


@pytest.mark.parametrize("program", PROGRAMS)
def test_verdict_matches_the_nsys_capture(program):
    assert kineto(program)["bound"] == nsys(program)["bound"] == PROGRAMS[program]
    assert kineto(program)["steps"]["found_by"] == "marked"  # the ProfilerStep ranges


@pytest.mark.parametrize("program", PROGRAMS)
def test_busy_share_within_points_of_hta(program):
    ours = kineto(program)["steps"]["gpu_busy_pct"]
    hta = HTA["traces"][program]
    assert ours == pytest.approx(hta["ns_rounding_disabled"]["busy_pct"], abs=POINTS)
    if "busy_pct" in hta["default"]:
        assert ours == pytest.approx(hta["default"]["busy_pct"], abs=POINTS)
    else:  # HTA's rounding to whole microseconds breaks its own sums on sub-microsecond kernels
        assert program == "small_launch" and "AssertionError" in hta["default"]["error"]


@pytest.mark.parametrize("program", PROGRAMS)
def test_gpu_work_a_step_matches_the_nsys_capture(program):
    ours, theirs = kineto(program)["steps"], nsys(program)["steps"]
    assert ours["gpu_work_ns"] == pytest.approx(theirs["gpu_work_ns"], rel=0.04)
    assert ours["launches"] == theirs["launches"]


@pytest.mark.parametrize("program", ["small_launch", "host_prep"])
def test_busy_share_within_points_of_the_nsys_capture(program):
    assert kineto(program)["steps"]["gpu_busy_pct"] == pytest.approx(nsys(program)["steps"]["gpu_busy_pct"], abs=POINTS)


def test_gpu_train_busy_differs_from_nsys_by_the_profilers_overhead():
    ours, theirs = kineto("gpu_train")["steps"], nsys("gpu_train")["steps"]
    assert ours["period_ns"] - theirs["period_ns"] == pytest.approx(1.8e6, abs=0.5e6)  # with_stack's cost a step
    assert ours["gpu_work_ns"] == pytest.approx(theirs["gpu_work_ns"], rel=0.01)
    scaled = theirs["gpu_busy_pct"] * theirs["period_ns"] / ours["period_ns"]
    assert ours["gpu_busy_pct"] == pytest.approx(scaled, abs=1.0)
