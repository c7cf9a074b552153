"""Every step time a timeline report prints, held against the program's own clock, on REAL H200 captures (and, at
the end, six REAL PyTorch profiler traces taken on a lent H100 machine).

Each program of tests/data/h200_ncuwrap/{steps,unmarked,pinned} timed its own steps while nsys captured it
(time.perf_counter() at each step's start, the last step to the loop's end: the JSON line at the end of
NAME.log), and so did each program of tests/data/h200_ncuwrap/clock (perf_counter around its timed loop,
one synchronize before and after it). The report's mean steady step (the steady window over its steps),
its median step and the step without the tracer are checked against those clocks: the period of a
step is where its pace is set, not the host's start-to-start (ncuwrap.timeline.steps).
"""

from __future__ import annotations

import html
import json
import statistics
from pathlib import Path

import pytest

from ncuwrap.timeline.diagnosis import diagnose_timeline
from tests.conftest import DATA

ROOT = DATA / "h200_ncuwrap"


def _own_clock(log: Path) -> dict:
    """The program's JSON line (the last line of its log that is one)."""
    line = [x for x in log.read_text(encoding="utf-8", errors="replace").splitlines() if x.startswith("{")][-1]
    return json.loads(line)


# Programs that timed each step (a step synchronises with the GPU, so its host time is its time).
PER_STEP = sorted(p for folder in ("steps", "unmarked", "pinned") for p in (ROOT / folder).glob("*.sqlite.gz")
                  if (p.parent / p.name.replace(".sqlite.gz", ".log")).exists())


@pytest.mark.parametrize("capture", PER_STEP, ids=lambda p: f"{p.parent.name}/{p.name[:-len('.sqlite.gz')]}")
def test_the_step_is_the_programs_own_clock(capture):
    clock = _own_clock(capture.parent / capture.name.replace(".sqlite.gz", ".log"))
    walls = clock["step_wall_ms"]
    d = diagnose_timeline(capture)
    steps = d.timeline.steps
    assert steps is not None
    # The program's steps after the report's warm-up: the same iterations (one step each, marked or found; a
    # found loop's last step cut short at its last launch is left out of the steady steps).
    assert steps.count == len(walls), (steps.count, len(walls))
    own = walls[steps.warmup:steps.warmup + len(steps.steady)]
    mean, median = statistics.mean(own), statistics.median(own)
    assert steps.mean_period_ns / 1e6 == pytest.approx(mean, rel=0.02)
    assert steps.period_ns / 1e6 == pytest.approx(median, rel=0.03)
    # The headline of compare and the JSON say the same figures.
    doc = d.to_json()["steps"]
    assert doc["mean_period_ns"] == pytest.approx(steps.mean_period_ns, abs=1e-3)
    assert doc["period_ns"] == pytest.approx(steps.period_ns, abs=1e-3)
    # Busy shares add up: the steady steps' busy time is the window's.
    assert sum(r.gpu_busy_ns for r in steps.steady) == d.timeline.window_ns - d.timeline.breakdown_ns["idle"]


# -- tests/data/h200_ncuwrap/clock: programs that time their whole loop (perf_counter, one synchronize before and
# after), under the capture and in three plain runs each (plain.jsonl) ---------------------------------------------

CLOCK = ROOT / "clock"


def _plain_runs(full: bool = False, folder: Path = CLOCK) -> dict[tuple[str, str], list]:
    """Each program-variant's three plain runs (``folder``'s plain.jsonl): their step_ms_mean, or (``full``) their whole
    JSON lines."""
    runs: dict[tuple[str, str], list] = {}
    for line in (folder / "plain.jsonl").read_text(encoding="utf-8").splitlines():
        run = json.loads(line)
        runs.setdefault((run["program"], run["variant"]), []).append(run if full else run["step_ms_mean"])
    return runs


def _over_the_steady_steps(clock: dict, steps) -> float:
    """A run's mean step, in ms, over the iterations of the report's steady steps: where the program timed each
    iteration (laps_synced), the mean of those iterations' laps (the steps found are the last iterations: any
    missing are warm-up ones); else its mean over the timed loop, step_ms_mean."""
    if not clock.get("laps_synced"):
        return clock["step_ms_mean"]
    first = clock["warmup"] + clock["iters"] - steps.count + steps.warmup - clock["warmup"]  # the first steady step's lap
    return statistics.mean(clock["step_ms"][max(0, first):first + len(steps.steady)])


# capture -> who sets its pace: every capture of the folder
CLOCKED = {"mlp_train_fp32": "gpu", "mlp_train_bf16": "gpu", "decode_eager": "host", "decode_graph": "gpu", "elementwise_eager": "gpu",
           "elementwise_compiled": "gpu", "input_loop_pageable": "host", "input_loop_pinned": "gpu", "numpy_prep_workers6": "host",
           "item_sync_item": "host", "item_sync_noitem": "host", "numpy_prep_workers0": "host", "periodic_train": "gpu",
           "requests": "host", "varlen_train": "host"}
# Their median step is not their mean: 6 workers' uneven batches (3.38 ms against 5.21), inline numpy (44.4 ms against 48.4),
# the checkpoint every 5th step (an ordinary step 4.05 ms, the mean 25.8).
MEDIAN_IS_NOT_MEAN = {"numpy_prep_workers0", "numpy_prep_workers6", "periodic_train"}
# periodic_train's steady steps hold two ordinary warm-up iterations (~4 ms) beside the 40 timed ones and their 8
# checkpoints: 1082 ms over 42 steps (25.77 ms), where the program's loop took 1078 ms over 40 (26.95 ms).
MEAN_REL = {"periodic_train": 0.05}
# varlen_train, requests and the item_sync pair are call 4's captures (README there): call 2's, with their plain runs
# beside them, missed the untraced bar (varlen_train +41%, requests -42%, item_sync --noitem +26%; docs/timeline.md,
# "The tracer's cost"). numpy_prep_workers0 passes at +24% (its inline numpy varies 33.8-44.2 ms plain).


def test_every_clock_capture_is_held_to_its_clocks():
    assert set(CLOCKED) == {p.name[:-len(".sqlite.gz")] for p in CLOCK.glob("*.sqlite.gz")}


@pytest.mark.parametrize("name", sorted(CLOCKED))
def test_a_loop_timed_as_a_whole(name):
    own = _own_clock(CLOCK / f"{name}.log")
    d = diagnose_timeline(CLOCK / f"{name}.sqlite.gz")
    steps = d.timeline.steps
    # Every iteration is a step (the warm-up's too), give or take the first and last.
    assert abs(steps.count - (own["iters"] + own["warmup"])) <= 2
    assert steps.paced_by == CLOCKED[name]
    # The mean steady step and the median are the program's own clock under the capture over the same iterations
    # (the steady steps include the program's warm-up iterations after the first; requests' first timed request,
    # the first of its shape at 19.6 ms, is the report's warm-up).
    clock = _over_the_steady_steps(own, steps)
    assert steps.mean_period_ns / 1e6 == pytest.approx(clock, rel=MEAN_REL.get(name, 0.035))
    if name not in MEDIAN_IS_NOT_MEAN:
        assert steps.period_ns / 1e6 == pytest.approx(clock, rel=0.05)
    # Without the tracer: within 25% of the program's plain clock over the same iterations (the median of its
    # three plain runs, each over those iterations where it timed each one).
    runs = _plain_runs(full=True)[(own["program"], own["variant"])]
    plain = [_over_the_steady_steps(run, steps) for run in runs]
    untraced = d.timeline.tracer.untraced_ns / 1e6
    assert len(plain) == 3
    assert untraced == pytest.approx(statistics.median(plain), rel=0.25), (untraced, sorted(plain))


# docs/timeline.md's table of the tracer's cost ("How the reference was fitted, and checked"): its rows of clock/'s captures
TRACER_ROWS = {"decode eager (clock)": "decode_eager", "item_sync --item (clock)": "item_sync_item", "item_sync --noitem (clock)": "item_sync_noitem",
               "numpy_prep, inline numpy (clock)": "numpy_prep_workers0", "numpy_prep, 6 workers (clock)": "numpy_prep_workers6",
               "mlp_train bf16, GPU pace (clock)": "mlp_train_bf16", "input_loop pageable (clock)": "input_loop_pageable",
               "periodic_train, GPU pace (clock)": "periodic_train", "varlen_train (clock)": "varlen_train", "requests (clock)": "requests"}


def test_the_docs_give_each_untraced_step_against_the_spread_of_its_plain_runs():
    """The issue's 'with the spread of three plain runs reported': each clock/ row of the docs' tracer table says the
    traced mean step, the untraced step at the rules' reference against the plain runs' median, and their range, as the
    captures and plain.jsonl give them now."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "timeline.md").read_text(encoding="utf-8")
    table = doc.split("**How the reference was fitted, and checked.**", 1)[1].split("\n\n| capture |", 1)[1].split("\n\n", 1)[0]
    rows = {cells[0]: cells for cells in ([c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:])}
    assert {label for label in rows if label.endswith("(clock)")} == set(TRACER_ROWS)
    runs = _plain_runs()
    for label, name in TRACER_ROWS.items():
        own = _own_clock(CLOCK / f"{name}.log")
        d = diagnose_timeline(CLOCK / f"{name}.sqlite.gz")
        plain = runs[(own["program"], own["variant"])]
        median, untraced = statistics.median(plain), d.timeline.tracer.untraced_ns / 1e6
        _, traced, _, _, rules, said_plain = rows[label]
        assert traced == f"{d.timeline.steps.mean_period_ns / 1e6:.2f} ms", label
        assert rules == f"{untraced:.2f} ms ({untraced / median - 1:+.0%})", label
        assert said_plain == f"{median:.2f} ms ({min(plain):.2f}-{max(plain):.2f})", label


def test_a_gpu_bound_loop_whose_host_runs_ahead():
    """mlp_train fp32 (no synchronisation a step): the host starts a step every ~1.9 ms, the GPU takes 18 ms; the
    step is the GPU's, its busy share is whole, and the tracer's host time costs it nothing."""
    d = diagnose_timeline(CLOCK / "mlp_train_fp32.sqlite.gz")
    steps, tracer = d.timeline.steps, d.timeline.tracer
    assert steps.host_period_ns < steps.period_ns / 5
    assert steps.gpu_busy_pct > 99.0
    # The replay takes the tracer's cost off the host, which waits for the GPU anyway: the step hardly moves.
    assert tracer.paced_by == "gpu" and tracer.saved_ns < 0.001 * tracer.traced_ns
    assert tracer.untraced_ns == pytest.approx(tracer.traced_ns, rel=0.001)
    doc = d.to_json()
    no_tracer = doc["what_if"]["remedies"][0]
    assert no_tracer["remedy"] == "no_tracer" and no_tracer["step_ns"] == doc["tracer"]["untraced_step_ns"]
    assert no_tracer["speedup"] == pytest.approx(1.0, abs=0.001)


def test_a_host_paced_first_step_of_a_gpu_paced_loop_is_warm_up():
    """mlp_train fp32's first step found (the program's last warm-up iteration but one) was launched late: the host
    paced it, the GPU every step after. Within 1.5x of the others (1.32x), it is warm-up by its pace: the steady mean
    is then the program's own clock over the same iterations, which it was not with it."""
    steps = diagnose_timeline(CLOCK / "mlp_train_fp32.sqlite.gz").timeline.steps
    first, rest = steps.records[0], steps.records[1:]
    assert first.paced_by == "host" and {r.paced_by for r in rest} == {"gpu"} and steps.warmup == 1
    assert round(first.period_ns / statistics.median(r.period_ns for r in rest), 2) == 1.32
    assert steps.warmup_why == ("the first step was paced by the host, the 21 after by the GPU, and it took longer than the median period "
                                "of the 21 steps after the first (18 ms; slowest 1.32x): the host had not yet run ahead")
    # A loop the host paces throughout is not judged by its pace: decode eager's steps are all the host's, and its one
    # warm-up step is the one 54x the others.
    decode = diagnose_timeline(CLOCK / "decode_eager.sqlite.gz").timeline.steps
    assert {r.paced_by for r in decode.records} == {"host"} and decode.warmup == 1 and "slowest 54.0x" in decode.warmup_why


def test_a_launch_bound_loop_without_its_tracer():
    """decode eager: 1.92 ms a token under nsys with its op ranges, 0.98 ms plain; the estimate takes its ~67 CUDA calls
    and ~198 op ranges a token off at the calibrated costs times 1.14 (its kernel-launch calls took 8.78 us each, against
    the 7.7 us the costs hold at): 0.97 ms, 1% under the plain runs' median, and says so in every format."""
    d = diagnose_timeline(CLOCK / "decode_eager.sqlite.gz")
    t = d.timeline.tracer
    assert (round(t.calls), round(t.ops)) == (67, 198)
    assert t.launch_mean_ns == pytest.approx(8_783, abs=1) and t.scale == pytest.approx(8_783 / 7_700, rel=1e-3)
    assert t.added_ns == pytest.approx((67 * 5_400 + 198 * 2_400) * t.scale, rel=0.01)
    assert t.saved_ns == pytest.approx(t.added_ns, rel=0.01)  # the replay takes it all off: the host sets the pace
    assert t.untraced_bound == "host"
    from ncuwrap.render import Format, render

    for fmt in (Format.table, Format.markdown, Format.html):
        text = render(d, fmt, width=200) if fmt == Format.table else render(d, fmt)
        text = html.unescape(text) if fmt == Format.html else text.replace("\\~", "~")  # Markdown escapes the tilde
        assert "nsys added ~953.85 us of host time a step (67 CUDA calls, 198 op ranges" in text, fmt
        assert "times 1.14: this capture's kernel-launch calls took 8.78 us each (mean, as recorded)" in text, fmt
        assert "~971.89 us untraced, host-bound" in text, fmt


# The before/after pairs: precision, copies, fusion, a CUDA graph, DataLoader workers.
PAIRS = [("mlp_train_fp32", "mlp_train_bf16"), ("input_loop_pageable", "input_loop_pinned"), ("elementwise_eager", "elementwise_compiled"),
         ("decode_eager", "decode_graph"), ("numpy_prep_workers0", "numpy_prep_workers6")]


@pytest.mark.parametrize("before, after", PAIRS, ids=[f"{b}->{a}" for b, a in PAIRS])
def test_compare_headline_is_the_programs_own_ratio(capsys, before, after):
    from ncuwrap.timeline.compare import compare_timeline_files
    from tests.conftest import run_cli

    r = compare_timeline_files(CLOCK / f"{before}.sqlite.gz", CLOCK / f"{after}.sqlite.gz")
    own = _own_clock(CLOCK / f"{before}.log")["step_ms_mean"] / _own_clock(CLOCK / f"{after}.log")["step_ms_mean"]
    assert r.speedup == pytest.approx(own, rel=0.10)
    assert r.to_json()["speedup"] == pytest.approx(r.speedup, rel=1e-4)
    # A measured win passes the gate.
    code, out, _ = run_cli(capsys, "compare", CLOCK / f"{before}.sqlite.gz", CLOCK / f"{after}.sqlite.gz", "--fail-on-regression")
    assert code == 0 and f"{r.speedup:.2f}x faster" in out


def test_without_the_tracer_a_graph_buys_what_the_programs_measured():
    """decode eager -> graph: 18.75x under nsys (the tracer's ~0.95 ms a token is most of the eager step), 9.98x untraced
    (9.80x before the graph launch's node tracing was taken off too); the programs ran 10.4x apart plain (the medians of
    three runs each)."""
    from ncuwrap.timeline.compare import compare_timeline_files

    r = compare_timeline_files(CLOCK / "decode_eager.sqlite.gz", CLOCK / "decode_graph.sqlite.gz")
    runs = _plain_runs()
    plain = statistics.median(runs[("decode", "eager")]) / statistics.median(runs[("decode", "graph")])
    assert r.untraced_speedup == pytest.approx(plain, rel=0.10)
    assert r.speedup > 1.5 * r.untraced_speedup
    assert any(n.startswith("without the tracer the change would be ~9.98x, not the 18.75x traced") for n in r.notes)


# -- tests/data/h100_ncuwrap/tracer_copy: the profiler's pageable input_loop again, on a lent H100 machine, each trace
# followed at once by a plain run (workloads/clock/tracer_copy.sh, two calls; README there) --------------------------

TRACER_COPY = DATA / "h100_ncuwrap" / "tracer_copy"
TRACER_COPY_TRACES = sorted(TRACER_COPY.glob("call*/input_loop_pageable_*.pt.trace.json.gz"))


def _tracer_copy_runs(trace: Path) -> tuple[dict, list[dict]]:
    """A trace's traced run (the JSON line of its log) and its call's three plain runs."""
    own = _own_clock(trace.parent / trace.name.replace(".pt.trace.json.gz", ".kineto.log"))
    return own, _plain_runs(full=True, folder=trace.parent)[(own["program"], own["variant"])]


def test_the_tracer_copy_calls_hold_six_traces():
    assert [f"{p.parent.name}/{p.name}" for p in TRACER_COPY_TRACES] == [
        f"call{c}/input_loop_pageable_{n}.pt.trace.json.gz" for c in (1, 2) for n in (1, 2, 3)]


@pytest.mark.parametrize("trace", TRACER_COPY_TRACES, ids=lambda p: f"{p.parent.name}/{p.name.split('.')[0]}")
def test_a_pageable_loop_under_the_profiler_beside_its_plain_runs(trace):
    """The H200's profiler trace of this loop is the one capture whose untraced step misses its plain clock (+30%):
    here, on another machine, each trace beside a plain run, the report's step is the program's own clock under the
    profiler, the profiler's events cost a few % of it, and the untraced step is within 25% of the plain runs."""
    own, runs = _tracer_copy_runs(trace)
    d = diagnose_timeline(trace)
    steps, tracer = d.timeline.steps, d.timeline.tracer
    assert abs(steps.count - own["iters"]) <= 2 and steps.paced_by == "host"
    clock = _over_the_steady_steps(own, steps)
    assert steps.mean_period_ns / 1e6 == pytest.approx(clock, rel=0.01)
    assert steps.period_ns / 1e6 == pytest.approx(clock, rel=0.03)
    assert tracer.added_ns < 0.03 * tracer.traced_ns
    plain = [_over_the_steady_steps(run, steps) for run in runs]
    assert len(plain) == 3
    assert tracer.untraced_ns / 1e6 == pytest.approx(statistics.median(plain), rel=0.25), (tracer.untraced_ns, sorted(plain))


def test_the_docs_give_the_h100_traces_against_their_plain_runs():
    """docs/timeline.md's table under "The miss left": each H100 trace's own clock under the profiler, the report's
    mean step, the profiler's cost, the untraced step against its call's plain runs' median, and their range."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "timeline.md").read_text(encoding="utf-8")
    table = doc.split("| trace (H100) |", 1)[1].split("\n\n", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    assert len(rows) == len(TRACER_COPY_TRACES)
    for trace, row in zip(TRACER_COPY_TRACES, rows):
        own, runs = _tracer_copy_runs(trace)
        d = diagnose_timeline(trace)
        steps, tracer = d.timeline.steps, d.timeline.tracer
        clock = _over_the_steady_steps(own, steps)
        plain = [_over_the_steady_steps(run, steps) for run in runs]
        median, untraced = statistics.median(plain), tracer.untraced_ns / 1e6
        assert row == [f"{trace.parent.name}/{trace.name.split('.')[0][len('input_loop_pageable_'):]}",
                       f"{clock:.2f} ms ({clock / median - 1:+.0%})", f"{steps.mean_period_ns / 1e6:.2f} ms",
                       f"{tracer.added_ns / 1e3:.0f} us", f"{untraced:.2f} ms ({untraced / median - 1:+.0%})",
                       f"{median:.2f} ms ({min(plain):.2f}-{max(plain):.2f})"], row
