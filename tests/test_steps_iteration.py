"""Steps that are the program's iteration (issue 49 item 3), on REAL H200 captures of programs that time
themselves (tests/data/h200_ncuwrap/clock, README there; the programs in workloads/clock/), none of them
marking its steps: ncuwrap finds them by repetition (ncuwrap.timeline.repetition, ncuwrap.timeline.shape_loops).

Each program runs ``warmup`` untimed iterations, then ``iters`` timed ones, and prints its own clock under
the capture (the last JSON line of NAME.log): ``step_ms_mean``, the timed loop over its iterations, and, for
loops that wait for the GPU each iteration (``laps_synced``), ``step_ms``, each timed iteration. The captures
hold every iteration, so the steps found are warmup + iters (two either way: an iteration cut at the
capture's edge, a warm-up iteration that ran other code), and the mean steady step is the program's clock.
The corner cases of the search are checked on small SYNTHETIC launch sequences (labelled as such below).
"""

from __future__ import annotations

import dataclasses
import json
import statistics

import numpy as np
import pytest

from ncuwrap.timeline import iterations as R
from ncuwrap.timeline import shape_loops
from ncuwrap.timeline import steps as S
from ncuwrap.timeline import readers
from ncuwrap.timeline.diagnosis import diagnose_timeline
from ncuwrap.timeline.events import Events, Labels
from tests.conftest import DATA

CLOCK = DATA / "h200_ncuwrap" / "clock"
CAPTURES = sorted(p.name[:-len(".sqlite.gz")] for p in CLOCK.glob("*.sqlite.gz"))


def _own_clock(name: str) -> dict:
    """The program's JSON line (the last line of its log that is one)."""
    line = [x for x in (CLOCK / f"{name}.log").read_text(encoding="utf-8", errors="replace").splitlines() if x.startswith("{")][-1]
    return json.loads(line)


@pytest.fixture(scope="module")
def diagnoses() -> dict:
    return {name: diagnose_timeline(CLOCK / f"{name}.sqlite.gz") for name in CAPTURES}


def _own_mean(clock: dict, steps) -> float:
    """The program's own mean step over the iterations of the report's steady steps, in ms: where it timed
    each iteration (laps_synced), the mean of those iterations' laps (the steps found are the last
    iterations: any missing are warm-up ones); else its mean over the timed loop, step_ms_mean."""
    if not clock.get("laps_synced"):
        return clock["step_ms_mean"]
    skipped = clock["warmup"] + clock["iters"] - steps.count  # iterations before the first step found
    first = skipped + steps.warmup - clock["warmup"]  # the first steady step's lap
    laps = clock["step_ms"][max(0, first):first + len(steps.steady)]
    return statistics.mean(laps)


def test_the_captures_are_all_there():
    assert set(CAPTURES) == {"decode_eager", "decode_graph", "elementwise_compiled", "elementwise_eager", "input_loop_pageable",
                             "input_loop_pinned", "item_sync_item", "item_sync_noitem", "mlp_train_bf16", "mlp_train_fp32",
                             "numpy_prep_workers0", "numpy_prep_workers6", "periodic_train", "requests", "varlen_train"}


@pytest.mark.parametrize("name", CAPTURES)
def test_the_steps_are_the_programs_iterations(diagnoses, name):
    clock = _own_clock(name)
    steps = diagnoses[name].timeline.steps
    assert steps is not None and steps.found_by == "repetition"
    assert abs(steps.count - (clock["warmup"] + clock["iters"])) <= 2, (steps.count, clock["warmup"], clock["iters"])
    # The mean steady step (the steady window over its steps) is the program's own clock under the capture.
    assert steps.mean_period_ns / 1e6 == pytest.approx(_own_mean(clock, steps), rel=0.10)
    doc = diagnoses[name].to_json()["steps"]
    assert doc["count"] == steps.count and doc["mean_period_ns"] == pytest.approx(steps.mean_period_ns, abs=1e-3)


def test_the_first_request_of_its_shape_is_warm_up(diagnoses):
    """requests: the program's first timed request took 19.6 ms (the first of its shape), the others 1.73-2.48 ms
    (1.92 mean); the report's warm-up takes it in (a leading step over 1.5x the median), so its steady mean is
    the program's clock over the other 59 requests, and with that request added back, its own step_ms_mean."""
    clock = _own_clock("requests")
    steps = diagnoses["requests"].timeline.steps
    assert steps.warmup == clock["warmup"] + 1 and clock["step_ms"][0] > 10 * statistics.median(clock["step_ms"])
    assert statistics.mean(clock["step_ms"][1:]) == pytest.approx(steps.mean_period_ns / 1e6, rel=0.02)
    first = steps.records[clock["warmup"]]
    whole = (steps.steady_ns + first.period_ns) / (len(steps.steady) + 1) / 1e6
    assert whole == pytest.approx(clock["step_ms_mean"], rel=0.10)


@pytest.mark.parametrize("name, how", [("varlen_train", "kernel classes"), ("requests", "kernel classes"),
                                      ("decode_graph", "launches"), ("periodic_train", "launches")])
def test_how_each_loop_was_found(diagnoses, name, how):
    found = diagnoses[name].timeline.steps.found
    assert found.loop.alike == how
    doc = diagnoses[name].to_json()["steps"]["repetition"]
    assert doc.get("alike", "launches") == how


def test_a_request_loop_ends_each_step_with_its_copy_to_the_host(diagnoses):
    """requests: random batch sizes and lengths change the GEMM kernels and their count (24-34 launches a
    request); each request ends with the .cpu() of its logits: that copy ends every step."""
    found = diagnoses["requests"].timeline.steps.found
    assert found.loop.to_host and (found.loop.fewest, found.loop.most) == (24, 34)
    assert diagnoses["requests"].to_json()["steps"]["repetition"]["launches_range"] == [24, 34]


def test_the_periodic_outliers_are_named_and_in_the_mean(diagnoses):
    """periodic_train: a checkpoint (torch.save: 24 copies to the host) after every 5th timed step, an
    evaluation (4 forward passes, each loss read with .item()) after every 10th. The step is the iteration
    (22 launches), not the 10 iterations the launches repeat over; the steps with extra work are named, and
    they count in the mean (they are steps) while the median is an ordinary step's."""
    steps = diagnoses["periodic_train"].timeline.steps
    loop = steps.found.loop
    assert loop.launches == 22
    saves, evals = loop.extras
    assert saves.every == evals.every == 10 and saves.steps[0] + 5 == evals.steps[0]
    assert dict(saves.launches) == {"D2H copies": 24}
    assert set(dict(evals.launches)) == {"D2H copies", "kernels"}
    text = steps.found_text()
    assert "outliers: every 5th step +" in text and "D2H copies" in text and "every 10th" in text
    doc = diagnoses["periodic_train"].to_json()["steps"]["repetition"]["outliers"]
    assert [o["every"] for o in doc] == [10, 10] and all(o["extra_ns"] > 50e6 for o in doc)
    assert steps.period_ns < 10e6 and steps.mean_period_ns > 4 * steps.period_ns  # the median an ordinary step; the mean with the outliers
    assert len(steps.steady) >= 40


def test_the_found_by_text_in_full(diagnoses):
    assert diagnoses["periodic_train"].timeline.steps.found_text() == (
        "43 steps of 22 launches (35 exactly alike, 8 with extra work), ordinary steps within 0% of their median; "
        "outliers: every 5th step +113 ms: D2H copies (9.82 ms of GPU work) and host time; every 10th +8.78 ms more: kernels")
    assert diagnoses["decode_graph"].timeline.steps.found_text() == (
        "67 steps: 3 run eagerly (35 launches each), then 64 replays of one CUDA graph of 35 nodes, periods within 0% of their "
        "median; 2 loops found, the one with the most GPU time judged (6.3 ms; next: 10 steps of 35 launches, 0.9 ms)")
    assert diagnoses["requests"].timeline.steps.found_text() == (
        "63 steps of 24-34 launches (alike by kernel class: the shapes change from step to step; each ends with a copy to the "
        "host), periods within 19% of their median")


def test_autotuning_copies_do_not_make_the_loop(diagnoses):
    """elementwise_compiled: Inductor's autotuning trials (a cache flush, the kernel, 4.9 ms of copies back)
    hold more GPU time than the 23 calls of the compiled kernel, but less kernel time: the calls are judged. The
    trials ran inside the first call of the compiled function, and are named so (with 3 iterations and 5 timed
    calls, tests/data/h200_ncuwrap/op_limits/call4, they hold more kernel time than the calls, and are still not
    judged: tests/test_oplimits_fixtures.py)."""
    steps = diagnoses["elementwise_compiled"].timeline.steps
    found = steps.found
    assert (found.loop.count, found.loop.launches) == (23, 1)
    assert found.others and found.others[0].gpu_ns > found.loop.gpu_ns and found.others[0].kernel_ns < found.loop.kernel_ns
    assert [o.inside for o in found.others] == ["Torch-Compiled Region: 0/0"] * 3
    assert ("3 inside its first call (\"Torch-Compiled Region: 0/0\", the first iteration's work), the one with the most kernel time "
            "judged (14.8 ms of kernels; next: 10 steps of 3 launches inside that call") in steps.found_text()
    doc = diagnoses["elementwise_compiled"].to_json()["steps"]["repetition"]["other_loops"]
    assert [o.get("inside_first_call") for o in doc] == ["Torch-Compiled Region: 0/0"] * 3


def test_a_benchmark_over_sizes_is_not_a_loop_of_changing_kernels():
    """tests/data/h200_ncuwrap/nsys/e2e.sqlite: the same three launches over buffers of growing sizes; the
    exact search leaves them out (their GPU work differs), and so does the search by kernel class."""
    data, _ = readers.read(DATA / "h200_ncuwrap" / "nsys" / "e2e.sqlite")
    assert S.measure(data) is None


# -- SYNTHETIC launch sequences (made here, labelled: the corner cases the real captures hold) --

def _launches(tokens, names=None, gpu=None, graphs=None, calls=None) -> R.Launches:
    tokens = np.asarray(tokens, dtype=np.int64)
    names = names or [f"k{i}" for i in range(int(tokens.max()) + 1)]
    return R.Launches(tokens=tokens, times=np.arange(tokens.size, dtype=np.int64) * 10_000, correlation=np.arange(tokens.size, dtype=float),
                      gpu_ns=np.full(tokens.size, 1_000, dtype=np.int64) if gpu is None else np.asarray(gpu, dtype=np.int64),
                      to_host=np.array([n == "memcpy_dtoh" for n in names]), names=names, graphs=graphs or {}, calls=calls)


def _calls(spans, name="Torch-Compiled Region: 0/0") -> Events:
    """The host's calls of one name around the launches [a, b) of each span (launch i is launched at 10 us * i)."""
    return Events({"start": np.array([a * 10_000 - 5_000 for a, _ in spans], dtype=np.int64),
                   "end": np.array([(b - 1) * 10_000 + 5_000 for _, b in spans], dtype=np.int64),
                   "name": Labels.of([name] * len(spans))})


def _autotuned(calls: int):
    """SYNTHETIC: a compiled function called ``calls`` times, one kernel (k0, 0.64 ms) a call; its first call
    autotunes that kernel first, ten trials of a fill (k1), the kernel and a copy of its input back (4.9 ms):
    (launches, the span of launches of each call)."""
    names = ["k0", "k1", "memcpy_htod", "k2"]
    seq, gpu, spans = [3, 3], [1_000, 1_000], []
    trials = [1, 0, 2] * 10
    seq += trials + [0]
    gpu += [14_000, 640_000, 4_900_000] * 10 + [640_000]
    spans.append((2, len(seq)))
    for _ in range(calls - 1):
        spans.append((len(seq), len(seq) + 1))
        seq.append(0)
        gpu.append(640_000)
    return _launches(seq, names, gpu), spans


def test_synthetic_autotuning_inside_the_first_call_is_not_the_loop():
    """SYNTHETIC: 8 calls of a compiled function; the autotuning in the first (ten trials) holds more kernel time
    than the 8 calls, but ran inside the first of the calls that hold one iteration each: the calls are the steps,
    the trials are named as the first call's work."""
    launches, spans = _autotuned(8)
    plain = R.find(launches)  # no calls traced: the trials, the most kernel time, are judged
    assert plain is not None and (plain.loop.count, plain.loop.launches) == (10, 3)
    found = R.find(dataclasses.replace(launches, calls=_calls(spans)))
    assert found is not None and (found.loop.count, found.loop.launches) == (8, 1)
    (trials,) = found.others
    assert (trials.count, trials.launches, trials.inside) == (10, 3, "Torch-Compiled Region: 0/0")
    assert trials.kernel_ns > found.loop.kernel_ns
    assert "1 inside its first call (\"Torch-Compiled Region: 0/0\", the first iteration's work), the one with the most kernel time of the others" in (
        found.describe([640_000] * 7, 1))


def test_synthetic_a_last_step_holds_the_iterations_launches():
    """SYNTHETIC: ten trials of a copy, a fill and a kernel (each begins at its copy, after the longest host gap),
    then 8 launches of that kernel alone. A copy and two of the kernels end with the trials' last launch and are a
    period long, but are not a trial: the trials' last step is not that (it lacks the fill), and the 8 launches
    are a loop of their own, all 8."""
    names = ["k0", "k1", "memcpy_htod", "k2"]
    seq = [3, 3] + [1, 0, 2] * 10 + [0] * 8
    launches = _launches(seq, names, [1_000, 1_000] + [14_000, 640_000, 4_900_000] * 10 + [640_000] * 8)
    times = launches.times + np.cumsum(np.asarray(seq) == 2) * 1_000_000
    found = R.find(dataclasses.replace(launches, times=times))
    assert found is not None and (found.loop.count, found.loop.launches, found.loop.end) == (9, 3, 31)
    (calls,) = found.others
    assert (calls.count, calls.launches, calls.first, calls.end) == (8, 1, 32, 40)


def test_synthetic_a_loop_in_a_later_call_or_a_call_holding_several_steps_is_judged_as_before():
    """SYNTHETIC: the same launches where the calls are not one an iteration (one call around all of them), or the
    trials are not inside the call of the first iteration: the most kernel time is judged, as without calls."""
    launches, spans = _autotuned(8)
    whole = R.find(dataclasses.replace(launches, calls=_calls([(0, len(launches))])))
    assert whole is not None and whole.loop.launches == 3
    later = R.find(dataclasses.replace(launches, calls=_calls(spans[1:])))
    assert later is not None and later.loop.launches == 3


def test_synthetic_extra_copies_every_4th_step_are_outliers_of_the_iteration():
    """SYNTHETIC: 24 iterations of 6 kernels; after every 4th, 5 copies to the host (a checkpoint): the step is
    the iteration, and the copies are named outliers every 4th step."""
    names = [f"k{i}" for i in range(6)] + ["memcpy_dtoh"]
    seq = [5, 5]
    for i in range(24):
        seq += [0, 1, 2, 3, 4, 5] + ([6] * 5 if i % 4 == 3 else [])
    found = R.find(_launches(seq, names))
    assert found is not None and found.loop.launches == 6
    assert found.loop.count >= 23
    (extra,) = found.loop.extras
    assert extra.every == 4 and dict(extra.launches) == {"D2H copies": 5}


def test_synthetic_layers_are_not_steps():
    """SYNTHETIC: 20 iterations of a model of 4 alike layers (3 kernels each) with an embedding before them
    and a head after: the layers repeat more often, but the rest of the iteration launches kernels of its
    own, so the step stays the iteration."""
    unit = [7] + [0, 1, 2] * 4 + [8, 9]
    found = R.find(_launches(unit * 20))
    assert found is not None and found.loop.launches == len(unit) and not found.loop.extras


def test_synthetic_graph_replays_after_their_eager_warm_up_are_one_loop():
    """SYNTHETIC: 3 iterations of 5 kernels run eagerly, then 30 replays of one CUDA graph of those 5 kernels
    (token 9): one loop of 33 steps."""
    names = [f"k{i}" for i in range(9)] + ["CUDA graph (5 nodes)"]
    seq = [8] + [0, 1, 2, 3, 4] * 3 + [9] * 30
    gpu = [1_000] * 16 + [5_000] * 30
    found = R.find(_launches(seq, names, gpu, graphs={9: np.array([0, 1, 2, 3, 4])}))
    assert found is not None and found.loop.count == 33
    assert (found.loop.graph_nodes, found.loop.eager) == (5, 3)


@pytest.mark.parametrize("name, family", [
    ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel_trans", "GEMM"),
    ("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nt_align1>(T1::Params)", "GEMM"),
    ("void cublasLt::splitKreduce_kernel<(int)32, (int)16, int, float, float, float, float, (bool)0>(cublasLt::KernelParams)", "GEMM"),
    ("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, (bool)1>::Params)",
     "fmha_cutlassF_f32_aligned"),
    ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, std::array<char *, (unsigned long)1>>(int, T2, T3)",
     "at::native::vectorized_elementwise_kernel"),
    ("memcpy_dtoh", "memcpy_dtoh"),
])
def test_kernel_classes_survive_a_change_of_tile(name, family):
    assert shape_loops.kernel_class(name) == family


def test_synthetic_kernels_that_change_with_the_shape_are_one_loop():
    """SYNTHETIC: 30 requests, each a copy in, 3 to 6 GEMMs of tiles that change with its size, a reduction and
    a copy to the host: no two alike launch for launch, every one alike by kernel class."""
    names = ["memcpy_htod", "sm80_xmma_gemm_tilesize64x64x8", "sm80_xmma_gemm_tilesize128x64x8", "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64>(P)",
             "void at::native::reduce_kernel<(int)4>(T)", "memcpy_dtoh"]
    rng = np.random.default_rng(3)
    seq = []
    for _ in range(30):
        seq += [0, *rng.integers(1, 4, size=int(rng.integers(3, 7))).tolist(), 4, 5]
    loop = shape_loops.find(_launches(seq, names))
    assert loop is not None and loop.count == 30 and loop.to_host and loop.alike == "kernel classes"
