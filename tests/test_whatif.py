"""What fixing it buys: the steady steps replayed on their dependency graph (ncuwrap.timeline.whatif), on REAL captures.

- Replaying the unmodified graph gives back every capture in tests/data that has steps and its CUDA API
  traced, within 5% of its mean steady step.
- Each remedy predicted from the BEFORE capture of a real H200 pair (tests/data/h200_ncuwrap/clock: each
  program timed by its own clock, three plain runs interleaved with its pair) is within 25% of the measured
  speedup, or within the pair's range widened by 25%; the remedy that does not help predicts little.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import numpy as np
import pytest

from ncuwrap.timeline import steps as steps_module
from ncuwrap.timeline import readers
from ncuwrap.timeline.whatif import graph as graph_module
from ncuwrap.timeline.whatif.predict import predict
from ncuwrap.timeline.whatif.replay import measured, replay
from tests.conftest import DATA, golden_json

ROOT = DATA / "h200_ncuwrap"
CLOCK = ROOT / "clock"

# Every capture in tests/data with steps and its CUDA API traced (the .nsys-rep twins need nsys; e2e.sqlite and
# launch_graph have no steps).
REPLAYED = sorted(p for pattern in ("**/*.sqlite", "**/*.sqlite.gz", "**/*.pt.trace.json.gz") for p in DATA.glob(pattern)
                  if not {"bad", "timeline_bad"} & set(p.parts) and p.name not in ("e2e.sqlite", "launch_graph.sqlite.gz"))


def _read(path: Path):
    data, _ = readers.read(path)
    return data, steps_module.measure(data)


# The captures the replay misses by more than 5%, with their error (%). None now: call 4's profiler trace of the eager
# chain (op_limits/call4) read -8.9% while its first step was steady: 5.50 ms, paced by the host, with 1.60 ms of idle GPU
# (the three after: 3.96 ms, 0.05 ms idle, paced by the GPU). It is warm-up now (ncuwrap.timeline.steps), and the three
# steady steps replay exactly.
REPLAY_MISSES: dict[str, float] = {}


@pytest.mark.parametrize("capture", REPLAYED, ids=lambda p: str(p.relative_to(DATA)))
def test_the_unmodified_replay_gives_back_the_capture(capture):
    data, steps = _read(capture)
    if steps is None:
        pytest.skip("no steps: a few iterations, not found by repetition")
    w = predict(data, steps)
    assert w is not None
    miss = REPLAY_MISSES.get(str(capture.relative_to(DATA)))
    if miss is not None:
        assert round(w.replay_error_pct, 1) == miss
    else:
        assert abs(w.replay_error_pct) <= 5.0, f"{capture}: replayed {w.replayed_step_ns:.0f} ns a step, measured {w.measured_step_ns:.0f}"
    doc = w.to_json()
    assert all(math.isfinite(p["step_ns"]) and math.isfinite(p["speedup"]) and p["assumes"] for p in doc["remedies"])
    assert doc["remedies"][0]["remedy"] == "no_tracer"


def test_the_replay_window_is_the_steps_own():
    """The graph's window on the capture's clock is the steady steps' (steps.py's beginnings), not a window of its own."""
    data, steps = _read(CLOCK / "decode_eager.sqlite.gz")
    g = graph_module.build(data, steps)
    assert g.steps == len(steps.steady) == 65
    assert g.measured_window_ns == steps.steady_ns
    assert measured(g).window_ns == replay(g).window_ns == steps.steady_ns


KINETO = CLOCK / "kineto"  # the same programs under the PyTorch profiler, with plain runs on that machine


def _plain(program: str, variant: str, folder: Path = CLOCK) -> list[float]:
    runs = [json.loads(line) for line in (folder / "plain.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    out = [r["step_ms_mean"] for r in runs if r["program"] == program and r["variant"] == variant]
    assert len(out) == 3
    return out


# (before capture, relative to clock/, remedy, (program, before variant), (program, after variant), workers)
OPS = "../op_limits/"  # issue 51's captures with op shapes, their plain runs beside them
PAIRS = [
    ("decode_eager.sqlite.gz", "cuda_graphs", ("decode", "eager"), ("decode", "graph"), None),
    ("input_loop_pageable.sqlite.gz", "pinned_overlap", ("input_loop", "pageable"), ("input_loop", "pinned"), None),
    ("numpy_prep_workers0.sqlite.gz", "host_parallel", ("numpy_prep", "workers0"), ("numpy_prep", "workers6"), 6),
    ("item_sync_item.sqlite.gz", "no_sync", ("item_sync", "item"), ("item_sync", "noitem"), None),
    ("kineto/decode_eager.pt.trace.json.gz", "cuda_graphs", ("decode", "eager"), ("decode", "graph"), None),
    (OPS + "mlp_train_fp32.pt.trace.json.gz", "lower_precision", ("mlp_train", "fp32"), ("mlp_train", "bf16"), None),
    (OPS + "matmul_fp32.sqlite.gz", "lower_precision", ("matmul", "fp32"), ("matmul", "bf16"), None),
    (OPS + "elementwise_eager.sqlite.gz", "fusion", ("elementwise", "eager"), ("elementwise", "compiled"), None),
    (OPS + "elementwise_eager.pt.trace.json.gz", "fusion", ("elementwise", "eager"), ("elementwise", "compiled"), None),
    # Under the profiler the pageable copy itself ran slower (25.4 ms a step traced, 19.7 plain): KNOWN_MISS.
    ("kineto/input_loop_pageable.pt.trace.json.gz", "pinned_overlap", ("input_loop", "pageable"), ("input_loop", "pinned"), None),
    ("../whatif_faster_kernel/timeline.sqlite.gz", "faster_kernel", ("whatif_faster_kernel", "slow"), ("whatif_faster_kernel", "fixed"), None),
]
# The BEFORE captures that come with ncu's verdicts: profile --top's run folder, joined as `timeline CAPTURE --kernels RUN` does.
VERDICTS = {"../whatif_faster_kernel/timeline.sqlite.gz": ROOT / "whatif_faster_kernel"}
TOLERANCE = {"fusion": 0.50}  # the issue's: fusion within 50%, every other remedy within 25%


def _measured(capture: str, before: tuple, after: tuple) -> tuple[float, float, float]:
    folder = (CLOCK / capture).parent
    b, a = _plain(*before, folder=folder), _plain(*after, folder=folder)
    return statistics.median(b) / statistics.median(a), min(b) / max(a), max(b) / min(a)


def _kernels(capture: str, data):
    from ncuwrap.inputs import kind_of
    from ncuwrap.profile.kernel_estimates import read as read_verdicts
    from ncuwrap.timeline.kernel_join import join

    run = VERDICTS.get(capture)
    return join(data.kernels, read_verdicts(run, kind_of)) if run else None


def _predicted(capture: str, remedy: str, workers) -> float:
    from ncuwrap.timeline.oplimits import analysis as op_limits

    data, steps = _read(CLOCK / capture)
    p = predict(data, steps, workers=workers, op_limits=op_limits.measure(data, steps), kernels=_kernels(capture, data)).get(remedy)
    assert p is not None
    return p.speedup


def _within(predicted: float, measured: tuple[float, float, float], remedy: str) -> bool:
    median, low, high = measured
    tol = TOLERANCE.get(remedy, 0.25)
    return abs(predicted / median - 1.0) <= tol or low / (1 + tol) <= predicted <= high * (1 + tol)


# The pair whose BEFORE step the capture does not give: in that call the pageable copies ran slower under the profiler
# than in the program's plain runs (25.4 ms a step traced, 19.7 plain; docs/timeline.md, "The miss left"), which
# taking the profiler's per-event cost off does not undo. The step the remedy predicts is the AFTER program's own; the
# speedup is off by as much as the untraced BEFORE step is.
KNOWN_MISS = {"kineto/input_loop_pageable.pt.trace.json.gz"}


@pytest.mark.parametrize("capture,remedy,before,after,workers", [p for p in PAIRS if p[0] not in KNOWN_MISS],
                         ids=[f"{p[1]}-{p[0].replace('../', '')}" for p in PAIRS if p[0] not in KNOWN_MISS])
def test_each_remedy_predicts_its_measured_fix(capture, remedy, before, after, workers):
    predicted, measured_ = _predicted(capture, remedy, workers), _measured(capture, before, after)
    assert _within(predicted, measured_, remedy), f"{remedy}: predicted {predicted:.2f}x, measured {measured_}"


@pytest.mark.parametrize("capture,remedy,before,after,workers", [p for p in PAIRS if p[0] in KNOWN_MISS])
def test_a_known_miss_is_its_before_steps(capture, remedy, before, after, workers):
    from ncuwrap.timeline.oplimits import analysis as op_limits

    folder = (CLOCK / capture).parent
    data, steps = _read(CLOCK / capture)
    w = predict(data, steps, workers=workers, op_limits=op_limits.measure(data, steps))
    p = w.get(remedy)
    plain_before, plain_after = statistics.median(_plain(*before, folder=folder)), statistics.median(_plain(*after, folder=folder))
    assert not _within(p.speedup, _measured(capture, before, after), remedy)
    assert p.step_ns / 1e6 == pytest.approx(plain_after, rel=0.02)  # the fixed program's step, as its plain runs took it
    before_off = w.untraced_step_ns / 1e6 / plain_before
    assert before_off > 1.25  # the untraced BEFORE step misses the bar
    assert p.speedup / (plain_before / plain_after) == pytest.approx(before_off, rel=0.02)  # and the speedup by as much


def test_lower_precision_counts_the_casts_the_host_launches():
    """The fp32 MLP under the profiler is GPU-bound with its host far ahead (two steps of work queued). bf16 autocast
    makes its kernels 10x faster, and its plain bf16 runs are host-bound (2.14 ms a step for 1.77 ms of kernels):
    autocast's casts are launches too. The prediction starts the steps with the capture's queue drained and counts
    the casts on the host; with the queue the GPU alone set the step (10.51x, where 8.40x was measured)."""
    import dataclasses

    from ncuwrap.timeline.oplimits import analysis as op_limits
    from ncuwrap.timeline.whatif import graph as graph_module
    from ncuwrap.timeline.whatif.predict import context_of
    from ncuwrap.timeline.whatif.remedies import TRACER
    from ncuwrap.timeline.whatif.remedies import lower_precision
    from ncuwrap.timeline.whatif.replay import replay

    data, steps = _read(CLOCK / OPS / "mlp_train_fp32.pt.trace.json.gz")
    limits = op_limits.measure(data, steps)
    p = predict(data, steps, op_limits=limits).get("lower_precision")
    # 3 linears a step, each a weight and a bias cast forward and their gradients cast back: 12 (the bf16 trace
    # runs 15 aten::to a step, its input's and the loss's casts among them).
    assert ("its 12 casts a step are launches the host makes, each taking the host's time a kernel launch takes in this step without "
            "the tracer (47.0 us, the mean)") in p.assumes
    assert "GPU work the capture had queued before the steps is taken as done when they begin" in p.assumes
    assert p.step_ns == pytest.approx(2_218_913, abs=10) and p.speedup == pytest.approx(8.09, abs=0.01)
    measured_ = _measured(OPS + "mlp_train_fp32.pt.trace.json.gz", ("mlp_train", "fp32"), ("mlp_train", "bf16"))
    assert abs(p.speedup / measured_[0] - 1) < 0.05

    g = graph_module.build(data, steps)
    ctx = context_of(data, g, None, limits, None, steps)
    base = g.copy()
    TRACER.apply(base, ctx)

    def lowered(launch_host_ns):
        edited = base.copy()
        assert lower_precision.DRAINS_QUEUE
        edited.drain_queue()  # as predict does before every remedy that makes the GPU faster
        lower_precision.apply(edited, dataclasses.replace(ctx, launch_host_ns=launch_host_ns))
        launched = edited.g_call >= 0
        return replay(edited).step_ns, float(edited.g_dur[launched].sum()) / edited.steps

    # The host sets the predicted step: the GPU is busy 1.66 ms of its 2.22.
    step, busy = lowered(base.host_ns_per_launch())
    assert step == pytest.approx(p.step_ns) and busy < 0.85 * step
    # Casts that cost the host nothing: 9.81x, 17% over the measured.
    step, busy = lowered(None)
    assert step == pytest.approx(1_829_590, abs=10)


def test_a_cast_of_weights_is_a_kernel_not_a_tiny_kernels_rate():
    """Eager decoding (batch 1) under the profiler: its memory-bound kernels move a few KB each, at 2 GB/s together.
    A cast of its 1 MiB weights at that rate took 0.5 ms and predicted autocast 14x slower. A cast kernel takes the
    capture's shortest memory-bound kernel (0.67 us) plus its bytes at HBM's peak (no kernel of 1 MiB or more to
    measure a rate by); its 15 casts a step then cost mostly the launch-bound host (16.7 us a kernel launch): 0.70x."""
    from ncuwrap.timeline.oplimits import analysis as op_limits
    from ncuwrap.timeline.oplimits import remedies as op_remedies

    data, steps = _read(CLOCK / "kineto" / "decode_eager.pt.trace.json.gz")
    limits = op_limits.measure(data, steps)
    assert op_remedies.cast_model(limits) == op_remedies.CastModel(bytes_per_s=limits.peaks.dram_bytes_per_s, floor_ns=672.0)
    p = predict(data, steps, op_limits=limits).get("lower_precision")
    assert "its 15 casts a step are launches the host makes" in p.assumes and "(16.7 us, the mean)" in p.assumes
    assert p.step_ns == pytest.approx(831_942, abs=10) and p.speedup == pytest.approx(0.70, abs=0.005)


def test_a_fused_kernel_reads_its_row_again_after_each_long_reduction():
    """The eager chain of 31 ops under the profiler (shapes and dims recorded): its five reductions over rows of
    4,096 elements (softmax, three means, a sum), each used by the ops after it, make the fused kernel pass over its
    256 MiB input six times (Inductor's one kernel, triton_red_fused_..., loops over each row once per reduction)."""
    from ncuwrap.timeline.oplimits import analysis as op_limits

    data, steps = _read(CLOCK / OPS / "elementwise_eager.pt.trace.json.gz")
    chains = op_limits.measure(data, steps).chains
    assert {(c.ops, c.passes) for c in chains} == {(31, 6)}
    assert all(c.fused_bytes == 2 * 256 * 2 ** 20 and c.rereads == 5 * 256 * 2 ** 20 for c in chains)


def test_the_passes_of_a_fused_chain():
    """The rule on its own (SYNTHETIC works, labelled): a row of 1,024 elements or fewer stays on chip; a reduction
    that ends the chain is written, not read again; a softmax or a normalisation reads its row again to scale it."""
    from ncuwrap.timeline.oplimits.analysis import _passes
    from ncuwrap.timeline.oplimits.counts import ELEMENTWISE, NORM, REDUCTION, SOFTMAX, Work

    def w(kind, row=None):
        return Work(kind, 1, 8, "fp32", "", written=4, row=row)

    # The passes after the first, by the op that makes each.
    assert _passes([w(ELEMENTWISE), w(ELEMENTWISE)]) == []
    assert _passes([w(ELEMENTWISE), w(REDUCTION, 4096), w(ELEMENTWISE)]) == [1]
    assert _passes([w(ELEMENTWISE), w(REDUCTION, 4096)]) == []
    assert _passes([w(ELEMENTWISE), w(SOFTMAX, 4096)]) == [1]
    assert _passes([w(NORM, 8192), w(REDUCTION, 1024), w(ELEMENTWISE), w(SOFTMAX, None)]) == [0]
    # Where the dataflow says the ops after a reduction use only the reduced value, no pass reads its rows again; a
    # normalisation reads its own row again whatever follows.
    assert _passes([w(REDUCTION, 4096), w(ELEMENTWISE)], lambda i: False) == []
    assert _passes([w(REDUCTION, 4096), w(ELEMENTWISE)], lambda i: i == 0) == [0]
    assert _passes([w(NORM, 8192), w(ELEMENTWISE)], lambda i: False) == [0]


def test_the_workers_are_the_captures_cores():
    """numpy_prep's nsys capture records the H200 host's 16 cores: host_parallel's default is 8 workers (16 less 2,
    at most 8), said in its assumption; given N, it is N; a PyTorch profiler trace records no cores: 4, said so."""
    from ncuwrap.timeline.whatif.predict import context_of

    data, steps = _read(CLOCK / "numpy_prep_workers0.sqlite.gz")
    assert data.cpu_cores == 16
    g = graph_module.build(data, steps)
    assert (context_of(data, g).workers, context_of(data, g).workers_how) == (8, "the capture's 16 cores less 2, at most 8")
    assert (context_of(data, g, workers=6).workers, context_of(data, g, workers=6).workers_how) == (6, "as given, on a host of 16 cores")
    default = predict(data, steps).get("host_parallel")
    assert "runs in 8 worker processes (the capture's 16 cores less 2, at most 8)" in default.assumes
    kineto, _ = _read(CLOCK / "kineto/decode_eager.pt.trace.json.gz")
    assert kineto.cpu_cores is None
    assert context_of(kineto, graph_module.build(kineto, _)).workers_how == "assumed: the capture does not record the host's cores"


@pytest.mark.parametrize("value", ["0", "-4", "abc", "16 cores", "99999999", "", "١٦"])
def test_a_core_count_that_is_not_one_is_unknown(tmp_path, value):
    """CpuCores as nsys writes it is a count; anything else (hostile or damaged) reads as not recorded."""
    import shutil
    import sqlite3

    path = tmp_path / "bench.sqlite"
    shutil.copyfile(DATA / "h200" / "nsys" / "bench.sqlite", path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE TARGET_INFO_SYSTEM_ENV SET value = ? WHERE name = 'CpuCores'", (value,))
    data, _ = readers.read(path)
    assert data.cpu_cores is None


def test_the_sync_that_does_not_help_predicts_little():
    """item_sync's per-step .item() waits for a GPU long done: removing it changed the step by less than the noise."""
    assert 1.0 <= _predicted("item_sync_item.sqlite.gz", "no_sync", None) < 1.05


def test_a_remedy_that_has_nothing_to_act_on_says_why():
    data, steps = _read(CLOCK / "decode_eager.sqlite.gz")
    w = predict(data, steps)
    why = {n.remedy: n.why for n in w.not_predicted}
    shapes = "no op shapes in the capture (Kineto record_shapes=True, or nsys --pytorch=autograd-shapes-nvtx)"
    assert why == {"no_sync": "no step waits for the GPU", "pinned_overlap": "no pageable host-to-device copy in the steps",
                   "host_parallel": "no stretch of host work outside op ranges of over 0.5 ms in the steps",
                   "lower_precision": shapes, "fusion": shapes,
                   "faster_kernel": "no kernel verdicts joined to the capture (ncuwrap profile --top N, or ncuwrap timeline CAPTURE --kernels REPORT)"}


@pytest.mark.parametrize("capture", [p[0] for p in PAIRS])
def test_what_if_json(capture):
    """The whole what_if document of each BEFORE capture, as recorded."""
    data, steps = _read(CLOCK / capture)
    name = capture.replace("../", "").replace("/", "_").replace(".sqlite.gz", "").replace(".pt.trace.json.gz", "_kineto")
    from ncuwrap.timeline.oplimits import analysis as op_limits

    golden_json(f"whatif_{name}.json", predict(data, steps, op_limits=op_limits.measure(data, steps), kernels=_kernels(capture, data)).to_json())


def _table_rows() -> list[str]:
    rows = []
    for capture, remedy, before, after, workers in PAIRS:
        predicted, (median, low, high) = _predicted(capture, remedy, workers), _measured(capture, before, after)
        source = "PyTorch profiler" if capture.endswith(".json.gz") else "nsys"
        verdict = "within" if _within(predicted, (median, low, high), remedy) else "MISS"
        rows.append(f"| {before[0]} {before[1]} -> {after[1]} | {source} | `{remedy}`{f' (N={workers})' if workers else ''} | {predicted:.2f}x "
                    f"| {median:.2f}x ({low:.2f}-{high:.2f}) | {verdict} |")
    return rows


def test_the_docs_table_of_predicted_against_measured():
    """docs/whatif.md's table is these pairs' predictions, as computed now (NCUWRAP_REGEN=1 rewrites it)."""
    import os

    doc = Path(__file__).resolve().parent.parent / "docs" / "whatif.md"
    text = doc.read_text(encoding="utf-8")
    head, rest = text.split("<!-- whatif-table -->\n", 1)
    table, tail = rest.split("<!-- /whatif-table -->", 1)
    lines = table.splitlines()[:2] + _table_rows()
    fresh = head + "<!-- whatif-table -->\n" + "\n".join(lines) + "\n<!-- /whatif-table -->" + tail
    if os.environ.get("NCUWRAP_REGEN"):
        doc.write_text(fresh, encoding="utf-8")
    assert text == fresh, "docs/whatif.md's table is stale: regenerate with NCUWRAP_REGEN=1"


def test_a_graph_launch_traced_node_by_node_costs_what_an_untraced_launch_does():
    """graph_decode (steps/): one 128-node CUDA graph a token, captured with nsys --cuda-graph-trace=node. Its launch
    took 97 us (5.8 us plain by calibrate.py) and released the nodes one by one: untraced, the launch costs the
    calibrated 5.4 us + 3 ns a node and the nodes are queued at once, 0.350 ms a token against 0.342 plain (it read
    0.443, +30%, when only the calls' per-event cost was taken off). The same program traced graph by graph (one
    event a launch) has no node-traced launch, and its untraced step is what it was."""
    import statistics

    from ncuwrap.timeline.diagnosis import diagnose_timeline

    data, steps = _read(ROOT / "steps" / "graph_decode.sqlite.gz")
    w = predict(data, steps)
    t = w.traced_graphs
    assert (t.calls.size, t.launches, t.nodes) == (63, 1.0, 128.0) and set(t.untraced_ns.tolist()) == {5400 + 3 * 128}
    assert t.added_ns == pytest.approx(88_667.6, abs=1)
    plain = statistics.median([0.3434, 0.3409])  # steps/graph_trace_cost.txt's plain runs, ms a token
    assert w.untraced_step_ns == pytest.approx(350_227, abs=5) and abs(w.untraced_step_ns / 1e6 / plain - 1) < 0.05
    assert "its CUDA graph launch a step, its 128 nodes traced one by one, cost what an untraced launch does" in w.get("no_tracer").assumes
    tracer = diagnose_timeline(ROOT / "steps" / "graph_decode.sqlite.gz").timeline.tracer
    assert (tracer.graph_launches, tracer.graph_nodes) == (1.0, 128.0) and tracer.added_ns > tracer.saved_ns > tracer.graph_added_ns

    data, steps = _read(ROOT / "steps" / "graph_decode_pergraph.sqlite.gz")
    w = predict(data, steps)
    assert w.traced_graphs.calls.size == 0 and "CUDA graph" not in w.get("no_tracer").assumes
    assert w.untraced_step_ns == pytest.approx(343_405, abs=5)


@pytest.mark.parametrize("capture", [CLOCK / "input_loop_pageable.sqlite.gz", CLOCK / "kineto" / "input_loop_pageable.pt.trace.json.gz",
                                     DATA / "h100_ncuwrap" / "tracer_copy" / "call1" / "input_loop_pageable_1.pt.trace.json.gz"],
                         ids=["nsys", "profiler", "profiler-h100"])
def test_a_pageable_copy_waits_for_the_work_before_it_and_returns_with_its_copy(capture):
    """input_loop --mode pageable: each step's 64 MiB x.cuda() is called while the step before computes; the driver
    syncs the stream, stages the batch and returns once the last chunk is staged: up to 18 us before the copy ends in
    these captures (or up to 12 us after). The copy call waits for its own copy (its return, that copy's end give or
    take those microseconds), and the copy is
    queued behind the compute (it started 1-8.5 us after it, milliseconds after its call): the replay is the capture,
    and work that ends sooner lets the copy start sooner, as lower_precision's faster products do."""
    data, steps = _read(capture)
    g = graph_module.build(data, steps)
    assert replay(g).window_ns == measured(g).window_ns
    calls = [i for i in range(g.calls) if g.h_flags[i] & graph_module.COPY_CALL and g.h_step[i] < g.steps
             and g.g_pageable_h2d[g.g_call == i].any()]
    assert len(calls) >= g.steps - 1
    queued, copies = 0, []
    for i in calls:
        copy = int(np.flatnonzero((g.g_call == i) & g.g_pageable_h2d)[-1])
        copies.append(copy)
        assert g.h_wait[i] == copy and g.h_own[i] == max(0, g.h_ret[i])
        assert g.h_ret[i] == g.h_end[i] - g.g_end[copy] and -30_000 < g.h_ret[i] < 20_000
        before = np.flatnonzero(g.g_stream[:copy] == g.g_stream[copy])
        if g.h_start[i] < g.g_end[before[-1]]:  # called while the work before it ran (all but one of nsys's 21)
            queued += 1
            assert g.g_lat[copy] <= g.typical_latency_ns  # it starts when that work ends, not its call's latency after
    assert queued >= len(calls) - 1
    if capture.name.endswith(".json.gz"):  # the profiler's traces carry the shapes lower_precision needs
        from ncuwrap.timeline.oplimits import analysis as op_limits

        w = predict(data, steps, op_limits=op_limits.measure(data, steps))
        per_step = g.g_dur[copies].mean()
        bf16 = w.get("lower_precision")
        # The products (5.3 ms a step on the H100, 5.5 on the H200) go to the BF16 tensor cores; the copy stays.
        assert per_step < bf16.step_ns < per_step + 1.5e6, (per_step, bf16.step_ns)
