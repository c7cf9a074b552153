"""The checks of issue 51's op limits on the real H200 captures of tests/data/h200_ncuwrap/op_limits (README there),
computed from the files and written as docs/op-limits.md's tables (tests/test_oplimits_fixtures.py keeps them equal).

- **Hand counts**: each capture's FLOPs an iteration against the program's hand count (``hand_counts.jsonl``), and
  its achieved TFLOP/s against the hand count over the program's own clock under the same tracer (``captured.jsonl``:
  nsys, ``kineto.jsonl``: the PyTorch profiler). nsys captures are judged over their steady steps; the profiler's
  traces hold only the timed loop (5 iterations, the transformer's 3), judged over their window: the steps found by
  repetition in them are not all iterations (the transformer's 3 iterations make 4 "steps").
- **ncu**: each op whose kernels ``ncu/NAME.raw.csv.gz`` profiled (ncuwrap.kernel.op_check), on the nsys capture and
  the profiler's trace of the same program.
- **Remedies**: lower_precision on the fp32 MLP against its bf16 variant, fusion on the eager chain against the
  compiled one, each over the capture's steady steps (a timeline's own judgement; their steps found by repetition are
  the iterations); the measured speedups are the plain runs' medians (``plain.jsonl``).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ncuwrap.kernel import op_check
from ncuwrap.kernel.reading import load
from ncuwrap.profile.top import read_mangled
from ncuwrap.timeline import steps as steps_module
from ncuwrap.timeline import readers
from ncuwrap.timeline.oplimits import analysis, remedies
from ncuwrap.timeline.oplimits.model import CAUSAL, NO_MASK
from ncuwrap.timeline.whatif.predict import predict

DATA = Path(__file__).parent / "data" / "h200_ncuwrap" / "op_limits"
PROGRAMS = {"matmul_fp32": ("matmul", "fp32"), "matmul_tf32": ("matmul", "tf32"), "matmul_bf16": ("matmul", "bf16"),
            "matmul_fp8": ("matmul", "fp8"), "conv": ("conv", "bf16"), "transformer": ("transformer", "bf16"),
            "mlp_train_fp32": ("mlp_train", "fp32"), "mlp_train_bf16": ("mlp_train", "bf16"),
            "elementwise_eager": ("elementwise", "eager"), "elementwise_compiled": ("elementwise", "compiled")}
NSYS, KINETO = ".sqlite.gz", ".pt.trace.json.gz"
# The folders of captures, each with its own runs' JSON lines: the folder's own (calls 1-3, 2026-12-04) and call4/
# (2026-12-05: nsys captures with shapes and Kineto traces of mlp_train and elementwise, with their plain runs).
CALLS = ("", "call4")


def program(name: str) -> tuple[str, str]:
    """(program, variant) of a capture's name (``call4/mlp_train_fp32``: its folder, then the program's name)."""
    return PROGRAMS[Path(name).name]


def call_of(name: str) -> str:
    """The folder of a capture's name ("" for the folder's own)."""
    parent = str(Path(name).parent)
    return "" if parent == "." else parent


def _lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


@lru_cache(maxsize=None)
def runs(call: str = "") -> dict:
    """A call's JSON lines (``call``: its folder, "" for the folder's own): plain (all runs), under nsys and under the
    profiler, by (program, variant); and the hand counts (the same for every call)."""
    plain: dict = {}
    for d in _lines(f"{call}/plain.jsonl" if call else "plain.jsonl"):
        plain.setdefault((d["program"], d["variant"]), []).append(d)
    return {"plain": plain, "nsys": {(d["program"], d["variant"]): d for d in _lines(f"{call}/captured.jsonl" if call else "captured.jsonl")},
            "kineto": {(d["program"], d["variant"]): d for d in _lines(f"{call}/kineto.jsonl" if call else "kineto.jsonl")},
            "hand": {(d["hand_program"], d["hand_variant"]): d for d in _lines("hand_counts.jsonl")}}


def plain_ms(program: str, variant: str, call: str = "") -> float:
    return statistics.median(d["step_ms_mean"] for d in runs(call)["plain"][(program, variant)])


@lru_cache(maxsize=None)
def read(name: str, suffix: str):
    return readers.read(DATA / f"{name}{suffix}")[0]


@lru_cache(maxsize=None)
def capture(name: str, suffix: str, steps: bool | None = None):
    """(data, op limits) of a capture over its steady steps (``steps``), else over its window; by default nsys's over
    its steps and a profiler trace's (the timed loop only) over its window."""
    data = read(name, suffix)
    steps = suffix == NSYS if steps is None else steps
    return data, analysis.measure(data, steps_module.measure(data) if steps else None)


def captures() -> list[tuple[str, str]]:
    """(name, suffix) of every capture, the folder's own first, then each call's (``call4/mlp_train_fp32``)."""
    return [(name, suffix) for call in CALLS for name in (f"{call}/{p}" if call else p for p in PROGRAMS) for suffix in (NSYS, KINETO)
            if (DATA / f"{name}{suffix}").exists()]


@dataclass(frozen=True)
class HandRow:
    """One capture's FLOPs and achieved rate against the hand count."""

    name: str
    suffix: str
    iterations: int  # the iterations the op limits' "step" holds (1 for steps; the loop's for a window)
    flop: float  # counted FLOPs an iteration
    hand_flop: int | None
    achieved: float  # FLOP/s over the capture's steps or window
    hand_rate: float | None  # the hand count over the program's own clock under the same tracer
    modelled_pct: float

    @property
    def flop_ratio(self) -> float | None:
        return self.flop / self.hand_flop if self.hand_flop else None

    @property
    def rate_ratio(self) -> float | None:
        return self.achieved / self.hand_rate if self.hand_rate else None


def hand_rows() -> list[HandRow]:
    out = []
    for name, suffix in captures():
        key = program(name)
        _, limits = capture(name, suffix)
        run = runs(call_of(name))["nsys" if suffix == NSYS else "kineto"][key]
        hand = runs()["hand"][key]
        iterations = 1 if suffix == NSYS else run["iters"]
        hand_flop = hand["hand_step_flop"]
        out.append(HandRow(name, suffix, iterations, limits.step_flop / iterations, hand_flop, limits.achieved_flops,
                           hand_flop / (run["step_ms_mean"] * 1e-3) if hand_flop else None, limits.modelled_pct))
    return out


@lru_cache(maxsize=None)
def ncu_checks(name: str, suffix: str, steps: bool | None = None):
    """(checks, unchecked) of a capture against its program's ncu report (over its steps or window: :func:`capture`)."""
    data, limits = capture(name, suffix, steps)
    base = Path(name).name  # ncu profiled each program once (call 2), whichever call captured it
    plan = next(p for p in _lines("ncu/plans.jsonl") if p["name"] == base)
    report = load(DATA / "ncu" / f"{base}.raw.csv.gz")
    mangled = read_mangled((DATA / "ncu" / f"{base}.mangled.csv").read_text(encoding="utf-8"))
    return op_check.check(limits, data, report.frame, mangled, plan["nth_launch"], from_start=suffix == NSYS)


@dataclass(frozen=True)
class RemedyRow:
    """A remedy's plain prediction on a capture against the measured after variant."""

    remedy: str
    name: str
    suffix: str
    after: str
    step_ns: float  # the capture's mean step (or window over its iterations)
    predicted_ns: float
    before_ms: float  # plain median of the before variant
    after_ms: float  # plain median of the after variant
    replayed_speedup: float  # the report's figure: the steps replayed (what_if), on the untraced clock

    @property
    def predicted_speedup(self) -> float:
        return self.step_ns / self.predicted_ns

    @property
    def measured_speedup(self) -> float:
        return self.before_ms / self.after_ms

    @property
    def error(self) -> float:
        return self.predicted_speedup / self.measured_speedup - 1

    @property
    def replayed_error(self) -> float:
        return self.replayed_speedup / self.measured_speedup - 1


def remedy_rows() -> list[RemedyRow]:
    out = []
    for call in CALLS:
        for remedy, base, after in ((remedies.LOWER_PRECISION, "mlp_train_fp32", ("mlp_train", "bf16")),
                                    (remedies.FUSION, "elementwise_eager", ("elementwise", "compiled"))):
            name = f"{call}/{base}" if call else base
            for suffix in (NSYS, KINETO):
                if not (DATA / f"{name}{suffix}").exists():
                    continue
                data = read(name, suffix)
                steps = steps_module.measure(data)
                limits = analysis.measure(data, steps)
                p = remedies.predict(limits, remedy)
                replayed = predict(data, steps, op_limits=limits).get(remedy)
                out.append(RemedyRow(remedy, name, suffix, f"{after[0]} {after[1]}", limits.step_ns, p.step_ns,
                                     plain_ms(*program(name), call), plain_ms(*after, call), replayed.speedup))
    return out


# -- the docs' tables ---------------------------------------------------------------------------------

def _kind(suffix: str) -> str:
    return "nsys" if suffix == NSYS else "Kineto"


def _pct(ratio: float | None) -> str:
    return "-" if ratio is None else f"{100 * (ratio - 1):+.1f}%"


def hand_table() -> str:
    rows = ["| capture | judged over | FLOPs an iteration | hand count | counted/hand | achieved | hand count over the program's clock | "
            "achieved/hand | modelled |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in hand_rows():
        over = "steady steps" if r.suffix == NSYS else f"window ({r.iterations} iterations)"
        rows.append(f"| {r.name} ({_kind(r.suffix)}) | {over} | {r.flop:,.0f} | {r.hand_flop:,} | {_pct(r.flop_ratio)} | "
                    f"{r.achieved / 1e12:.1f} TFLOP/s | {r.hand_rate / 1e12:.1f} TFLOP/s | {_pct(r.rate_ratio)} | {r.modelled_pct:.1f}% |"
                    if r.hand_flop else
                    f"| {r.name} ({_kind(r.suffix)}) | {over} | {r.flop:,.0f} | - | - | {r.achieved / 1e12:.2f} TFLOP/s | - | - | "
                    f"{r.modelled_pct:.1f}% |")
        limits = capture(r.name, r.suffix)[1]
        for mask, how in ((CAUSAL, "causal"), (NO_MASK, "with no mask")):
            reading = limits.reading(mask)
            if reading is not None and r.hand_flop:
                flop = reading.step_flop / r.iterations
                rows.append(f"| {r.name} ({_kind(r.suffix)}), its attention counted {how} (its mask not recorded) | {over} | {flop:,.0f} | "
                            f"{r.hand_flop:,} | {_pct(flop / r.hand_flop)} | {reading.achieved_flops / 1e12:.1f} TFLOP/s | "
                            f"{r.hand_rate / 1e12:.1f} TFLOP/s | {_pct(reading.achieved_flops / r.hand_rate)} | - |")
    return "\n".join(rows)


def ncu_table() -> str:
    rows = ["| capture | op | limit | checked | model/ncu FLOPs | model/ncu bytes | FLOP/s | bytes/s | within 15% |",
            "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |"]
    notes = []
    for name, suffix in captures():
        checks, unchecked = ncu_checks(name, suffix)
        for c in checks:
            rows.append(f"| {name} ({_kind(suffix)}) | `{c.op}` {c.shapes} | {c.limit} | {c.checked} | {_pct(c.flop_ratio)} | "
                        f"{_pct(c.bytes_ratio)} | {_pct(c.flops_rate_ratio)} | {_pct(c.bytes_rate_ratio)} | {'yes' if c.agrees else 'NO'} |")
            notes += [f"- {name} ({_kind(suffix)}), `{c.op}` {c.shapes}: {w}." for w in c.why]
        notes += [f"- {name} ({_kind(suffix)}), not checked: `{u.kernel}`: {u.why}." for u in unchecked]
    return "\n".join(rows) + "\n\n" + "\n".join(notes)


def remedy_table() -> str:
    rows = ["| remedy | capture | its step | plain: predicted step | plain: speedup | replayed: speedup (the report's) | measured after | "
            "measured speedup (plain medians) | plain/measured | replayed/measured |",
            "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
    for r in remedy_rows():
        rows.append(f"| {r.remedy} | {r.name} ({_kind(r.suffix)}) | {r.step_ns / 1e6:.3f} ms | {r.predicted_ns / 1e6:.3f} ms | "
                    f"{r.predicted_speedup:.2f}x | {r.replayed_speedup:.2f}x | {r.after}: {r.after_ms:.4f} ms | {r.measured_speedup:.2f}x | "
                    f"{_pct(1 + r.error)} | {_pct(1 + r.replayed_error)} |")
    return "\n".join(rows)


def tables() -> str:
    """docs/op-limits.md's generated part."""
    return "\n\n".join(["### Hand counts", hand_table(), "### Against ncu", ncu_table(), "### Remedies", remedy_table()]) + "\n"
