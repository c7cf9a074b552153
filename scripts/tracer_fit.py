"""The tracer's cost scale (rules/tracer_cost.yaml's reference_launch_ns), fitted and checked leave-one-program-out on
the real captures of tests/data/h200_ncuwrap against the programs' own plain clocks.

ncuwrap takes the tracer's cost off each steady step (ncuwrap.timeline.tracer, the what-if's no_tracer): the calls,
op ranges and frames it recorded at per-event costs measured on one machine, times the capture's mean recorded
kernel-launch call over ``reference_launch_ns``. For each reference on a grid this script replays every capture's
steady steps without the tracer (the same replay and remedy the report uses), then, for each program, picks the
reference that fits all the OTHER programs' captures best (least squared log error of the untraced step against the
plain clock's median) and predicts the held-out program's captures with it. It prints, per capture: the traced step,
the untraced step without the scale (every capture x1), the held-out prediction, the plain clock's median and range.

    python scripts/tracer_fit.py            # the table (Markdown), the fit on all captures, the held-out summary

The captures whose steps ncuwrap does not find as the program's iterations (their step is not the program's clock
under the capture: op_limits' Kineto traces of the transformer, conv and mlp_train bf16) are left out: their
error is the step-finding's, not the tracer's.
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ncuwrap.timeline import steps as steps_module  # noqa: E402
from ncuwrap.timeline import tracer  # noqa: E402
from ncuwrap.timeline import readers  # noqa: E402
from ncuwrap.timeline.whatif import graph as graph_module  # noqa: E402
from ncuwrap.timeline.whatif.predict import MAX_EVENTS, context_of  # noqa: E402
from ncuwrap.timeline.whatif.remedies import TRACER  # noqa: E402
from ncuwrap.timeline.whatif.replay import replay  # noqa: E402

DATA = ROOT / "tests" / "data" / "h200_ncuwrap"
GRID_NS = range(5000, 11001, 100)  # reference launch calls tried
BAR = 0.25  # the bar: the untraced step within 25% of the plain clock


def _plain(jsonl: str, program: str, variant: str | None = None) -> list[float]:
    """The plain runs' step_ms_mean of ``program`` (``variant``) in ``jsonl`` (runs with no tracer only)."""
    out = []
    for line in (DATA / jsonl).read_text(encoding="utf-8").splitlines():
        run = json.loads(line)
        if run.get("traced") is None and run["program"] == program and (variant is None or run.get("variant") == variant):
            out.append(run["step_ms_mean"])
    return out


SMALL_LAUNCH_PLAIN = [4.07, 3.97]  # kineto/cost_small_launch_plain{1,2}.log, steady medians


def captures() -> list[tuple[str, str, str, list[float]]]:
    """(label, program, path under tests/data/h200_ncuwrap, plain clocks in ms a step) of every capture checked."""
    clock = [(f"{p}_{v}" if v else p, p, v) for p, v in (
        ("decode", "eager"), ("decode", "graph"), ("item_sync", "item"), ("item_sync", "noitem"), ("numpy_prep", "workers0"),
        ("numpy_prep", "workers6"), ("mlp_train", "fp32"), ("mlp_train", "bf16"), ("input_loop", "pageable"), ("input_loop", "pinned"),
        ("elementwise", "eager"), ("elementwise", "compiled"), ("periodic_train", None), ("varlen_train", None), ("requests", None))]
    out = [(name, program, f"clock/{name}.sqlite.gz", _plain("clock/plain.jsonl", program, variant)) for name, program, variant in clock]
    out += [("steps/small_launch", "small_launch", "steps/small_launch.sqlite.gz", SMALL_LAUNCH_PLAIN),
            ("steps/graph_decode", "graph_decode", "steps/graph_decode.sqlite.gz", [0.3434, 0.3409]),  # steps/graph_trace_cost.txt
            ("kineto/small_launch whole loop", "small_launch", "kineto/small_launch_nosched.pt.trace.json.gz", SMALL_LAUNCH_PLAIN),
            ("kineto/small_launch scheduled", "small_launch", "kineto/small_launch.pt.trace.json.gz", SMALL_LAUNCH_PLAIN),
            ("kineto/gpu_train", "gpu_train", "kineto/gpu_train.pt.trace.json.gz", [28.01, 28.03])]  # kineto/README.md
    for program, variant in (("decode", "eager"), ("decode", "graph"), ("input_loop", "pageable"), ("input_loop", "pinned")):
        out.append((f"clock/kineto/{program}_{variant}", program, f"clock/kineto/{program}_{variant}.pt.trace.json.gz",
                    _plain("clock/kineto/plain.jsonl", program, variant)))
    for name, program, variant in (("matmul_fp32", "matmul", "fp32"), ("matmul_tf32", "matmul", "tf32"), ("matmul_bf16", "matmul", "bf16"),
                                   ("matmul_fp8", "matmul", "fp8"), ("conv", "conv", "bf16"), ("transformer", "transformer", "bf16"),
                                   ("elementwise_eager", "elementwise", "eager")):
        out.append((f"op_limits/{name}", program, f"op_limits/{name}.sqlite.gz", _plain("op_limits/plain.jsonl", program, variant)))
    out.append(("op_limits/elementwise_eager kineto", "elementwise", "op_limits/elementwise_eager.pt.trace.json.gz",
                _plain("op_limits/plain.jsonl", "elementwise", "eager")))
    # Call 4's nsys captures with shapes, against the same call's plain runs.
    for name, program, variant in (("mlp_train_fp32", "mlp_train", "fp32"), ("mlp_train_bf16", "mlp_train", "bf16"),
                                   ("elementwise_eager", "elementwise", "eager"), ("elementwise_compiled", "elementwise", "compiled")):
        out.append((f"op_limits/call4/{name}", program, f"op_limits/call4/{name}.sqlite.gz", _plain("op_limits/call4/plain.jsonl", program, variant)))
    return out


@dataclasses.dataclass
class Capture:
    label: str
    program: str
    plain_ms: list[float]
    traced_ns: float
    launch_mean_ns: float | None
    untraced_ns: dict  # reference launch ns (None: unscaled) -> the replayed step without the tracer

    @property
    def plain_ns(self) -> float:
        return statistics.median(self.plain_ms) * 1e6


def measure(label: str, program: str, path: str, plain: list[float]) -> Capture | None:
    data, _ = readers.read(DATA / path)
    steps = steps_module.measure(data)
    if steps is None:
        return None
    graph = graph_module.build(data, steps, max_events=MAX_EVENTS)
    context = context_of(data, graph, steps=steps)
    untraced = {}
    for reference in (None, *GRID_NS):
        scale = 1.0 if reference is None or context.launch_mean_ns is None else context.launch_mean_ns / reference
        edited = graph.copy()
        TRACER.apply(edited, dataclasses.replace(context, tracer_scale=scale))
        untraced[reference] = replay(edited).step_ns
    return Capture(label, program, plain, steps.mean_period_ns, context.launch_mean_ns, untraced)


def _loss(caps: list[Capture], reference: int) -> float:
    return sum(math.log(c.untraced_ns[reference] / c.plain_ns) ** 2 for c in caps)


def best_reference(caps: list[Capture]) -> int:
    return min(GRID_NS, key=lambda r: _loss(caps, r))


def main() -> int:
    caps = [c for c in (measure(*row) for row in captures()) if c is not None]
    held: dict[str, tuple[int, float]] = {}
    for program in sorted({c.program for c in caps}):
        reference = best_reference([c for c in caps if c.program != program])
        for c in caps:
            if c.program == program:
                held[c.label] = (reference, c.untraced_ns[reference])
    shipped = int(tracer.calibration().reference_launch_ns)  # rules/tracer_cost.yaml's (on the grid)
    print(f"| capture | traced | launch calls (mean) | untraced, unscaled | untraced, held-out scale (reference) | untraced at "
          f"{shipped / 1e3:.1f} us (rules) | plain: median (runs) |")
    print("|---|---|---|---|---|---|---|")
    passed = {"old": 0, "new": 0}
    squares = {"old": 0.0, "new": 0.0}
    for c in caps:
        old, (reference, new) = c.untraced_ns[None], held[c.label]
        errors = {"old": old / c.plain_ns - 1, "new": new / c.plain_ns - 1}
        for key, error in errors.items():
            passed[key] += abs(error) <= BAR
            squares[key] += math.log(1 + error) ** 2
        launch = f"{c.launch_mean_ns / 1e3:.2f} us" if c.launch_mean_ns else "-"
        runs = ", ".join(f"{x:g}" for x in c.plain_ms)
        print(f"| {c.label} | {c.traced_ns / 1e6:.3f} ms | {launch} | {old / 1e6:.3f} ms ({errors['old']:+.0%}) | "
              f"{new / 1e6:.3f} ms ({errors['new']:+.0%}; {reference / 1e3:.1f} us) | {c.untraced_ns[shipped] / 1e6:.3f} ms "
              f"({c.untraced_ns[shipped] / c.plain_ns - 1:+.0%}) | {c.plain_ns / 1e6:.3f} ms ({runs}) |")
    n = len(caps)
    best = best_reference(caps)
    within = {r: sum(abs(c.untraced_ns[r] / c.plain_ns - 1) <= BAR for c in caps) for r in (shipped, best)}
    rms = {r: math.sqrt(_loss(caps, r) / n) for r in (shipped, best)}
    newly_failed = [c.label for c in caps
                    if abs(c.untraced_ns[None] / c.plain_ns - 1) <= BAR < abs(held[c.label][1] / c.plain_ns - 1)]
    print()
    print(f"{n} captures of {len({c.program for c in caps})} programs; fitted on all: reference {best / 1e3:.1f} us; "
          f"held out: {min(r for r, _ in held.values()) / 1e3:.1f}-{max(r for r, _ in held.values()) / 1e3:.1f} us")
    print(f"within {BAR:.0%} of the plain clock: unscaled {passed['old']}, held-out scale {passed['new']}; "
          f"rms log error unscaled {math.sqrt(squares['old'] / n):.3f}, held-out {math.sqrt(squares['new'] / n):.3f}; "
          f"within before, not after: {', '.join(newly_failed) or 'none'}")
    print(f"within {BAR:.0%} at the rules' {shipped / 1e3:.1f} us: {within[shipped]} (rms log error {rms[shipped]:.3f}); "
          f"at the fit on all, {best / 1e3:.1f} us: {within[best]} (rms {rms[best]:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
