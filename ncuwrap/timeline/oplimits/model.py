"""What the op limits measured (:class:`OpLimits`), typed, with its JSON form (``op_limits`` of the timeline's JSON).

Times are ns summed over the steady steps (``steps`` of them); per-step figures divide by that count. Rates
are over each op's own kernel time: FLOP/s, bytes/s. A percentage is of the named peak or of the steady
steps' time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ncuwrap.core.numbers import clean
from ncuwrap.core.peaks import HBM, UNIT_LABELS, Peaks

TOP_OPS = 12  # the ops a report's table shows, most time first (the JSON has them all)
TOP_UNMODELLED = 3  # the not-modelled ops a report names with their reasons
STEADY = "steady steps"
WINDOW = "window"  # no steps: launches.active_window (first GPU work's launch to the last one's end), counted as one step


@dataclass(frozen=True)
class OpRow:
    """One op with one set of input shapes over the steady steps: its work, kernel time, achieved rates and
    the limit it is closest to."""

    op: str
    shapes: str
    kind: str  # counts.MATMUL ... (what limits it, which remedy applies)
    dtype: str | None  # of its arithmetic (None: not recorded and not told by its kernels' names)
    dtype_how: str  # where the dtype comes from
    forward_op: str | None  # a backward op's forward op (the autograd sequence number pairs them)
    calls: int
    kernels: int
    time_ns: int
    flop: int  # over all its calls
    bytes: int | None  # minimal bytes over all its calls (None: a dtype unknown)
    unit: str | None  # the compute unit its dtype runs on (ncuwrap.core.peaks; None: no peak known for it)
    unit_how: str  # how that unit is known (the dtype, the kernels' names)
    peak_flops: float | None
    peak_bytes_per_s: float | None
    share_pct: float  # of the steady steps' time
    weights: int = 0  # elements of its weight operands, a call (counts.Work.weights)
    weight_tensors: int = 0  # how many tensors those are (counts.Work.weight_tensors)
    written: int | None = None  # of ``bytes``, those written (its outputs; None: not told apart)
    inputs: str | None = field(repr=False, default=None)  # its recorded shapes text (the ops table's), which tells its rows apart
    rows: np.ndarray = field(repr=False, compare=False, default=None)  # its kernels' rows in data.kernels
    ns: np.ndarray = field(repr=False, compare=False, default=None)  # their durations, in the same order

    @property
    def achieved_flops(self) -> float:
        return self.flop / (self.time_ns * 1e-9) if self.time_ns else 0.0

    @property
    def achieved_bytes_per_s(self) -> float | None:
        return self.bytes / (self.time_ns * 1e-9) if self.bytes is not None and self.time_ns else None

    @property
    def flop_pct(self) -> float | None:
        return 100.0 * self.achieved_flops / self.peak_flops if self.peak_flops and self.flop else None

    @property
    def bytes_pct(self) -> float | None:
        rate = self.achieved_bytes_per_s
        return 100.0 * rate / self.peak_bytes_per_s if rate is not None and self.peak_bytes_per_s else None

    @property
    def limit(self) -> str | None:
        """The unit whose peak the op runs closest to: its compute unit or HBM (None: neither known)."""
        f, b = self.flop_pct, self.bytes_pct
        if f is None and b is None:
            return None
        if b is None or (f is not None and f >= b):
            return self.unit
        return HBM

    @property
    def pct_of_limit(self) -> float | None:
        f, b = self.flop_pct, self.bytes_pct
        known = [v for v in (f, b) if v is not None]
        return max(known) if known else None

    @property
    def label(self) -> str:
        return f"{self.op} ({self.shapes})"

    def to_json(self) -> dict:
        return {"op": self.op, "shapes": self.shapes, "kind": self.kind, "dtype": self.dtype, "dtype_how": self.dtype_how,
                "forward_op": self.forward_op, "calls": self.calls, "kernels": self.kernels, "time_ns": self.time_ns,
                "share_pct": clean(self.share_pct), "flop": self.flop, "bytes": self.bytes, "achieved_flops": clean(self.achieved_flops),
                "achieved_bytes_per_s": clean(self.achieved_bytes_per_s), "unit": self.unit, "unit_how": self.unit_how,
                "flop_pct_of_peak": clean(self.flop_pct), "bytes_pct_of_peak": clean(self.bytes_pct), "limit": self.limit,
                "limit_label": UNIT_LABELS.get(self.limit) if self.limit else None, "pct_of_limit": clean(self.pct_of_limit)}


@dataclass(frozen=True)
class Unmodelled:
    """Ops (or kernels launched outside any op) whose work is not counted, with their time and why."""

    op: str
    reason: str
    calls: int
    kernels: int
    time_ns: int
    share_pct: float

    def to_json(self) -> dict:
        return {"op": self.op, "reason": self.reason, "calls": self.calls, "kernels": self.kernels, "time_ns": self.time_ns,
                "share_pct": clean(self.share_pct)}


# The longest row a fused kernel keeps on chip through a reduction: Inductor's limit for a persistent reduction
# over the inner dimension (torch/_inductor/codegen, should_use_persistent_reduction). A longer row is reduced in
# a loop over it, and what follows the reduction reads the row again (docs/op-limits.md, fusion).
ON_CHIP_ROW = 1024


@dataclass(frozen=True)
class Chain:
    """A run of memory-bound ops launched one after another in a step, with no other kernel between them: what
    fusing them into one pass would move (``fused_bytes``: the first op's inputs read and the last one's output
    written, the values in between kept on chip) against what they move now (``bytes``). ``passes``: the passes
    over its inputs a compiler's fused kernel makes (one, and one more after each reduction over rows too long to
    keep on chip whose result later ops use), ``rereads`` the bytes of the passes after the first."""

    ops: int  # op calls in it (over all steady steps)
    kernels: int
    time_ns: int
    bytes: int
    fused_bytes: int
    passes: int = 1
    rereads: int = 0
    rows: np.ndarray = field(repr=False, compare=False, default=None)  # its kernels' rows in data.kernels, in launch order
    ns: np.ndarray = field(repr=False, compare=False, default=None)  # their durations, in the same order

    @property
    def bytes_per_s(self) -> float:
        return self.bytes / (self.time_ns * 1e-9) if self.time_ns else 0.0

    @property
    def fused_kernel_bytes(self) -> int:
        """What the fused kernel moves, its passes over the inputs counted."""
        return self.fused_bytes + self.rereads


@dataclass(frozen=True)
class Prediction:
    """A remedy's mean steady step, without a replay: the measured mean step less the kernel time it saves a step."""

    remedy: str
    measured_step_ns: float
    step_ns: float
    kernels_edited: int
    assumes: str

    @property
    def speedup(self) -> float:
        return self.measured_step_ns / self.step_ns if self.step_ns > 0 else 0.0

    def to_json(self) -> dict:
        return {"remedy": self.remedy, "step_ns": clean(self.step_ns), "speedup": clean(self.speedup), "kernels_edited": self.kernels_edited,
                "assumes": self.assumes}


@dataclass(frozen=True)
class OpLimits:
    """Each op's distance from its limit over the steady steps, and the step's totals."""

    steps: int  # steady steps the sums are over
    step_ns: float  # the mean steady step
    peaks: Peaks
    shapes_from: str  # what recorded the shapes and dtypes
    rows: tuple[OpRow, ...]  # by time, most first
    unmodelled: tuple[Unmodelled, ...]  # by time, most first
    kernel_ns: int  # every kernel's time in the steady steps
    chains: tuple[Chain, ...] = ()
    tf32: str | None = None  # how TF32 is known to be on for FP32 matrix products (None: nowhere seen)
    predictions: tuple[Prediction, ...] = ()  # each remedy's mean steady step, without a replay (ncuwrap.timeline.oplimits.remedies)
    # The remedies are predicted by the steps' replay instead (the timeline's what_if): one figure each, so none here.
    replayed: bool = False
    scope: str = STEADY  # what the sums are over: the steady steps, or (no steps) the window as one step

    # -- the step's totals -----------------------------------------------------------------------
    @property
    def step_flop(self) -> float:
        return sum(r.flop for r in self.rows) / self.steps

    @property
    def step_bytes(self) -> float:
        """The modelled ops' minimal bytes a step, each op on its own (those whose bytes are known: bytes_unknown_pct)."""
        return sum(r.bytes for r in self.rows if r.bytes is not None) / self.steps

    @property
    def bytes_unknown_pct(self) -> float:
        """The share of the steps' time in modelled ops whose bytes are unknown (a dtype neither recorded nor named)."""
        return sum(r.share_pct for r in self.rows if r.bytes is None)

    @property
    def step_min_bytes(self) -> float:
        """The step's bytes with each chain of memory-bound ops fused into one pass (Chain.fused_bytes)."""
        return self.step_bytes - sum(c.bytes - c.fused_bytes for c in self.chains) / self.steps

    @property
    def achieved_flops(self) -> float:
        """The modelled FLOPs a step over the mean steady step."""
        return self.step_flop / (self.step_ns * 1e-9) if self.step_ns else 0.0

    @property
    def dtype_unit(self) -> str | None:
        """The compute unit that runs most of the step's FLOPs (None: no FLOP on a known unit)."""
        by_unit: dict[str, int] = {}
        for r in self.rows:
            if r.unit is not None and r.flop:
                by_unit[r.unit] = by_unit.get(r.unit, 0) + r.flop
        return max(sorted(by_unit), key=lambda u: by_unit[u]) if by_unit else None

    @property
    def dtype(self) -> str | None:
        """The dtype of most of the step's FLOPs."""
        by_dtype: dict[str, int] = {}
        for r in self.rows:
            if r.dtype is not None and r.flop:
                by_dtype[r.dtype] = by_dtype.get(r.dtype, 0) + r.flop
        return max(sorted(by_dtype), key=lambda d: by_dtype[d]) if by_dtype else None

    @property
    def peak_flops(self) -> float | None:
        unit = self.dtype_unit
        return self.peaks.of(unit) if unit else None

    @property
    def mfu_pct(self) -> float | None:
        peak = self.peak_flops
        return 100.0 * self.achieved_flops / peak if peak else None

    @property
    def modelled_ns(self) -> int:
        return sum(r.time_ns for r in self.rows)

    @property
    def modelled_pct(self) -> float:
        """The modelled ops' share of the kernels' time."""
        return 100.0 * self.modelled_ns / self.kernel_ns if self.kernel_ns else 0.0

    def top(self, n: int = TOP_OPS) -> tuple[OpRow, ...]:
        """The ``n`` ops with the most time."""
        return self.rows[:n]

    def rest(self, n: int = TOP_OPS) -> tuple[int, float]:
        """How many modelled ops :meth:`top` leaves out, and their share of the steady steps' time."""
        left = self.rows[n:]
        return len(left), sum(r.share_pct for r in left)

    def top_unmodelled(self, n: int = TOP_UNMODELLED) -> tuple[tuple[Unmodelled, ...], int, float]:
        """The ``n`` not-modelled entries with the most time, and how many more there are and their share of the steps."""
        left = self.unmodelled[n:]
        return self.unmodelled[:n], len(left), sum(u.share_pct for u in left)

    @property
    def unmodelled_pct(self) -> float:
        """The not-modelled ops' (and kernels outside any op's) share of the steady steps' time."""
        return sum(u.share_pct for u in self.unmodelled)

    def to_json(self) -> dict:
        unit = self.dtype_unit
        return {
            "scope": self.scope, "steps": self.steps, "step_ns": clean(self.step_ns), "shapes_from": self.shapes_from,
            "step_flop": clean(self.step_flop), "step_bytes": clean(self.step_bytes), "step_min_bytes": clean(self.step_min_bytes),
            "bytes_unknown_pct": clean(self.bytes_unknown_pct),
            "achieved_tflops": clean(self.achieved_flops / 1e12), "peak_tflops": clean(self.peak_flops / 1e12) if self.peak_flops else None,
            "mfu_pct": clean(self.mfu_pct), "dtype": self.dtype, "unit": unit, "unit_label": UNIT_LABELS.get(unit) if unit else None,
            "tf32": self.tf32, "kernel_ns": self.kernel_ns, "modelled_pct": clean(self.modelled_pct),
            "peaks": self.peaks.to_json(),
            "ops": [r.to_json() for r in self.rows],
            "not_modelled": [u.to_json() for u in self.unmodelled],
            "remedies": [p.to_json() for p in self.predictions], "remedies_replayed": self.replayed,
            "chains": {"count": len(self.chains), "bytes": sum(c.bytes for c in self.chains), "fused_bytes": sum(c.fused_bytes for c in self.chains),
                       "time_ns": sum(c.time_ns for c in self.chains)},
        }
