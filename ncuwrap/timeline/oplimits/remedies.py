"""What the op limits say two remedies would buy: new durations for the kernels they change
(:func:`kernel_edits`, for the replay of the steps: issue 50's "what fixing it buys") and, on its own, the
mean steady step they predict (:func:`predict`: the kernel time saved taken off the step).

- ``lower_precision`` (bf16 autocast): each matrix product, convolution and attention in FP32 or TF32 runs on
  the BF16 tensor cores; its kernels take its FLOPs at the BF16 peak times an efficiency: by default the
  fraction of its own unit's peak it reaches now (:data:`SAME_FRACTION`), or a given one (a calibrated
  efficiency: docs/op-limits.md says which and where it was measured), and no less than half its bytes at
  HBM's peak; a forward one's weights are cast to bf16 once a step, and their gradients back to fp32 (that
  time is added to its kernels: a cast kernel a tensor, each the capture's shortest memory-bound kernel plus its
  bytes at the rate its memory-bound kernels of :data:`CAST_MIN_BYTES` or more reach; the replay adds their
  launches to the host). The fp32 elementwise ops and copies and the backward ops of the lowered
  products move half their bytes at the bandwidth they reach now; the ops autocast keeps in fp32
  (:data:`AUTOCAST_FP32`: normalisations, softmax, reductions, losses) and the optimizer are left as they are.
  A step whose matrix products are already in bf16, fp16 or fp8 is not edited.
- ``fusion``: each chain of memory-bound ops (:class:`~ncuwrap.timeline.oplimits.model.Chain`) becomes one
  kernel that moves the chain's fused minimum bytes (the values between its ops that other ops read written too,
  and the values its later ops read from outside it read, where the capture records them) and the passes a
  reduction adds, at the bandwidth the chain reaches now; its first kernel in the steps takes that time, the
  others are removed (0 ns). A chain whose fused kernel would move as much as its ops do now is left as it is.

Only the kernels of the steady steps the op limits measured are edited.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ncuwrap.core import peaks as peak_units
from ncuwrap.timeline.oplimits import counts
from ncuwrap.timeline.oplimits.model import ON_CHIP_ROW, OpLimits, Prediction

LOWER_PRECISION = "lower_precision"
FUSION = "fusion"
REMEDIES = (LOWER_PRECISION, FUSION)
SAME_FRACTION = None  # lower_precision's default efficiency: each op's own fraction of its unit's peak now
_LOWERED = (peak_units.FP32, peak_units.TF32_TENSOR)
_HALVED = (counts.ELEMENTWISE, counts.COPY)


@dataclass(frozen=True)
class Edits:
    """New durations (ns) for kernels of ``data.kernels`` by row (0: the kernel is removed), and what the
    prediction assumes."""

    remedy: str
    rows: np.ndarray = field(repr=False)
    durations_ns: np.ndarray = field(repr=False)
    assumes: str
    old_ns: np.ndarray = field(repr=False, default=None)
    # Launches the remedy adds before each kernel (autocast's casts, spread over the op's kernels; None: none): the
    # host makes them, which the replay counts (ncuwrap.timeline.whatif.remedies.kernel_times).
    launches: np.ndarray = field(repr=False, default=None)

    def as_dict(self) -> dict[int, int]:
        return dict(zip(self.rows.tolist(), self.durations_ns.tolist()))

    def launches_by_row(self) -> dict[int, float]:
        """The launches added before each kernel, by row (those with some)."""
        if self.launches is None:
            return {}
        some = self.launches > 0
        return dict(zip(self.rows[some].tolist(), self.launches[some].tolist()))

    @property
    def added_launches(self) -> float:
        return float(self.launches.sum()) if self.launches is not None else 0.0

    @property
    def removed(self) -> np.ndarray:
        """The rows of the kernels the remedy removes."""
        return self.rows[self.durations_ns == 0]

    @property
    def saved_ns(self) -> int:
        """Kernel time saved over the steady steps edited."""
        return int((self.old_ns - self.durations_ns).sum()) if self.old_ns is not None else 0

    def __len__(self) -> int:
        return int(self.rows.size)


# The ops autocast runs in fp32 whatever their inputs (PyTorch's CUDA autocast fp32 list, the ops of it counted
# here), by name without "aten::" and a trailing underscore: they, and their backward ops, keep their bytes.
AUTOCAST_FP32 = frozenset({"exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt", "pow", "softplus", "native_layer_norm",
                           "layer_norm", "native_layer_norm_backward", "group_norm", "native_group_norm", "nll_loss_forward",
                           "nll_loss_backward", "mse_loss", "mse_loss_backward", "l1_loss", "smooth_l1_loss", "huber_loss",
                           "binary_cross_entropy_with_logits", "kl_div", "cumsum", "cumprod", "prod", "sum", "_softmax", "_log_softmax",
                           "_softmax_backward_data", "_log_softmax_backward_data", "norm", "linalg_vector_norm", "_fused_rms_norm"})


def _base(name: str | None) -> str:
    return (name or "").removeprefix("aten::").rstrip("_")


def _lowered(r) -> bool:
    return r.kind in counts.TENSOR_KINDS and r.unit in _LOWERED


def _halved(r, lowered_ops: set[str]) -> bool:
    """Whether a memory-bound op moves bf16 instead of fp32 under autocast: an fp32 elementwise op or copy outside
    autocast's fp32 list, or the backward of a lowered product (its bias's gradient)."""
    if r.dtype != "fp32" or not r.bytes or r.kind == counts.OPTIMIZER or r.kind in counts.TENSOR_KINDS:
        return False
    if _base(r.op) in AUTOCAST_FP32 or _base(r.forward_op) in AUTOCAST_FP32:
        return False
    return r.forward_op in lowered_ops or r.kind in _HALVED


# A memory-bound kernel that moves at least this a launch is held up by bandwidth, not by its launch: the rate such
# kernels reach is the one a cast of weights reaches (tiny ones reach a few GB/s whatever their bytes).
CAST_MIN_BYTES = 1 << 20


@dataclass(frozen=True)
class CastModel:
    """How long autocast's casts take on this capture's GPU: a cast kernel takes ``floor_ns`` plus its bytes at
    ``bytes_per_s``."""

    bytes_per_s: float  # the rate the capture's memory-bound kernels of CAST_MIN_BYTES or more reach together; HBM's peak where none does
    floor_ns: float  # the capture's shortest memory-bound kernel: what a kernel moving next to nothing takes (0: none)

    def ns(self, kernels: float, nbytes: float) -> float:
        return kernels * self.floor_ns + nbytes / self.bytes_per_s * 1e9


def cast_model(limits: OpLimits) -> CastModel | None:
    """The casts' model of ``limits``' capture (None: no rate known)."""
    memory = [r for r in limits.rows if r.kind in counts.MEMORY_KINDS and r.bytes and r.time_ns]
    big = [r for r in memory if r.bytes / max(r.kernels, 1) >= CAST_MIN_BYTES]
    rate = (sum(r.bytes for r in big) / (sum(r.time_ns for r in big) * 1e-9)) if big else limits.peaks.dram_bytes_per_s
    floor = min((int(r.ns[r.ns > 0].min()) for r in memory if r.ns is not None and (r.ns > 0).any()), default=0)
    return CastModel(bytes_per_s=rate, floor_ns=float(floor)) if rate else None


def _lower_precision(limits: OpLimits, efficiency: float | None) -> Edits:
    bf16 = limits.peaks.of(peak_units.BF16_TENSOR)
    hbm = limits.peaks.dram_bytes_per_s
    rows, new, old, launches = [], [], [], []
    if not any(_lowered(r) for r in limits.rows) or not bf16:
        return _edits(LOWER_PRECISION, rows, new, old, "no matrix product, convolution or attention runs in FP32 or TF32: nothing to lower")
    lowered_ops = {r.op for r in limits.rows if _lowered(r)}
    has_backward = {r.forward_op for r in limits.rows if r.forward_op}
    casting = cast_model(limits)
    for r in limits.rows:
        if _lowered(r) and r.peak_flops and r.time_ns:
            fraction = r.achieved_flops / r.peak_flops if efficiency is None else efficiency
            compute = r.flop / (fraction * bf16) * 1e9 if fraction > 0 else float(r.time_ns)
            memory = r.bytes / 2.0 / hbm * 1e9 if r.bytes is not None and hbm else 0.0  # half its bytes at HBM's peak
            # A forward op's fp32 weights cast to bf16 once a step (6 bytes an element), and their gradients back to fp32
            # where the step has a backward: the casts' time goes to the op's kernels, which wait for them.
            casts, cast_launches = 0.0, 0
            if r.forward_op is None and r.weights and casting is not None:
                passes = 2 if r.op in has_backward else 1
                cast_launches = r.calls * r.weight_tensors * passes  # one cast kernel a tensor, each way
                casts = casting.ns(cast_launches, r.calls * r.weights * 6 * passes)
            durations = r.ns * (max(compute, memory) / r.time_ns) + casts / r.kernels
            added = np.full(r.rows.size, cast_launches / r.kernels)
        elif _halved(r, lowered_ops):
            durations = r.ns * 0.5
            added = np.zeros(r.rows.size)
        else:
            continue
        rows.append(r.rows)
        old.append(r.ns)
        new.append(np.rint(durations).astype(np.int64))
        launches.append(added)
    how = ("the fraction of its own unit's peak it reaches now" if efficiency is None
           else f"{100 * efficiency:.0f}% of the BF16 peak (a calibrated efficiency: docs/op-limits.md)")
    assumes = ("bf16 autocast: each FP32/TF32 matrix product, convolution and attention runs on the BF16 tensor cores at " + how +
               ", no faster than half its bytes at HBM's peak, and a forward one's weights are cast to bf16 once a step (their gradients "
               "back to fp32 where the step has a backward), each cast a kernel as long as the capture's shortest memory-bound one plus "
               "its bytes at the bandwidth the capture's memory-bound kernels of 1 MiB or more reach (HBM's peak where none does); "
               "fp32 elementwise ops "
               "and copies, and the backward ops of the lowered products, move half their bytes at the bandwidth they reach now; the ops "
               "autocast keeps in fp32 (normalisations, softmax, reductions, losses) and the optimizer are left as they are")
    return _edits(LOWER_PRECISION, rows, new, old, assumes, launches)


def _fusion(limits: OpLimits) -> Edits:
    rows, new, old = [], [], []
    for c in limits.chains:
        if not c.time_ns or not c.bytes or c.fused_kernel_bytes >= c.bytes:
            continue  # a compiler does not fuse a run into a kernel that moves as much as its ops do, or more
        durations = np.zeros(c.rows.size, dtype=np.int64)
        durations[0] = int(round(c.fused_kernel_bytes / c.bytes_per_s * 1e9))
        rows.append(c.rows)
        old.append(c.ns)
        new.append(durations)
    writes = ("writes once the last op's outputs and the values between its ops that ops outside the run read (the others kept on "
              "chip), reads once the values its later ops read that no op of the run made (both from nsys's input_op_ids)"
              if limits.escapes_known else
              "writes the last op's outputs once (the values between its ops taken as read nowhere else, and its later ops as reading "
              "nothing made outside it: the capture does not record which ops read them)")
    runs = ("each run of memory-bound ops launched one after another, cut where no value made before is read after"
            if limits.escapes_known else "each run of memory-bound ops launched one after another within a step")
    assumes = (f"{runs} becomes one kernel that {writes}, "
               "and reads the first op's inputs once, and again after each reduction "
               f"over rows longer than {ON_CHIP_ROW:,} elements that later ops use (a compiler keeps shorter rows on chip), "
               "at the bandwidth the run reaches now; a run whose fused kernel would move as many bytes as its ops do now, or more, "
               "is left as it is")
    return _edits(FUSION, rows, new, old, assumes)


def _edits(remedy: str, rows: list, new: list, old: list, assumes: str, launches: list | None = None) -> Edits:
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return Edits(remedy, empty, empty, assumes, empty)
    return Edits(remedy, np.concatenate(rows).astype(np.int64), np.concatenate(new).astype(np.int64), assumes,
                 np.concatenate(old).astype(np.int64), np.concatenate(launches) if launches else None)


def kernel_edits(limits: OpLimits, remedy: str, *, efficiency: float | None = SAME_FRACTION) -> Edits:
    """The kernels ``remedy`` (:data:`REMEDIES`) changes, by row of ``data.kernels``, with their predicted durations.
    ``efficiency``: lower_precision's fraction of the BF16 peak (None: each op's own fraction of its unit's peak now)."""
    if remedy == LOWER_PRECISION:
        return _lower_precision(limits, efficiency)
    if remedy == FUSION:
        return _fusion(limits)
    raise ValueError(f"remedy {remedy!r}: expected one of {', '.join(REMEDIES)}")


def predict(limits: OpLimits, remedy: str, *, efficiency: float | None = SAME_FRACTION) -> Prediction | None:
    """The mean steady step ``remedy`` predicts on its own (no replay): the kernel time it saves a step taken off the
    measured mean step, as if the GPU set the step's pace; None where it changes no kernel."""
    edits = limits.edits_of(remedy) if efficiency is SAME_FRACTION else None
    if edits is None:
        edits = kernel_edits(limits, remedy, efficiency=efficiency)
    if not len(edits):
        return None
    saved = edits.saved_ns / limits.steps
    assumes = edits.assumes + "; the GPU sets the step's pace, so each ns of kernel time saved is a ns of the step"
    return Prediction(remedy=remedy, measured_step_ns=limits.step_ns, step_ns=max(limits.step_ns - saved, 0.0), kernels_edited=len(edits),
                      assumes=assumes)
