"""What the op limits say two remedies would buy: new durations for the kernels they change
(:func:`kernel_edits`, for the replay of the steps: issue 50's "what fixing it buys") and, on its own, the
mean steady step they predict (:func:`predict`: the kernel time saved taken off the step).

- ``lower_precision`` (bf16 autocast): each matrix product, convolution and attention in FP32 or TF32 runs on
  the BF16 tensor cores; its kernels take its FLOPs at the BF16 peak times an efficiency: by default the
  fraction of its own unit's peak it reaches now (:data:`SAME_FRACTION`), or a given one (a calibrated
  efficiency: docs/op-limits.md says which and where it was measured), and no less than half its bytes at
  HBM's peak. The fp32 elementwise ops and copies move half their bytes at the bandwidth
  they reach now (autocast keeps reductions, normalisations and softmax in fp32: those are left as they are).
  The casts autocast adds are not counted.
- ``fusion``: each chain of memory-bound ops (:class:`~ncuwrap.timeline.oplimits.model.Chain`) becomes one
  kernel that moves the chain's fused minimum bytes at the bandwidth the chain reaches now; its first kernel
  takes that time, the others are removed (0 ns).

Only the kernels of the steady steps the op limits measured are edited.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ncuwrap.core import peaks as peak_units
from ncuwrap.timeline.oplimits import counts
from ncuwrap.timeline.oplimits.model import OpLimits, Prediction

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

    def as_dict(self) -> dict[int, int]:
        return dict(zip(self.rows.tolist(), self.durations_ns.tolist()))

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


def _lower_precision(limits: OpLimits, efficiency: float | None) -> Edits:
    bf16 = limits.peaks.of(peak_units.BF16_TENSOR)
    rows, new, old = [], [], []
    if not any(r.kind in counts.TENSOR_KINDS and r.unit in _LOWERED for r in limits.rows):
        return _edits(LOWER_PRECISION, rows, new, old, "no matrix product, convolution or attention runs in FP32 or TF32: nothing to lower")
    for r in limits.rows:
        if r.kind in counts.TENSOR_KINDS and r.unit in _LOWERED and bf16 and r.peak_flops and r.time_ns:
            fraction = r.achieved_flops / r.peak_flops if efficiency is None else efficiency
            compute = r.flop / (fraction * bf16) * 1e9 if fraction > 0 else float(r.time_ns)
            hbm = limits.peaks.dram_bytes_per_s
            memory = r.bytes / 2.0 / hbm * 1e9 if r.bytes is not None and hbm else 0.0  # half its bytes at HBM's peak
            factor = max(compute, memory) / r.time_ns
        elif r.kind in _HALVED and r.dtype == "fp32" and r.bytes:
            factor = 0.5
        else:
            continue
        rows.append(r.rows)
        old.append(r.ns)
        new.append(np.rint(r.ns * factor).astype(np.int64))
    how = ("the fraction of its own unit's peak it reaches now" if efficiency is None
           else f"{100 * efficiency:.0f}% of the BF16 peak (a calibrated efficiency: docs/op-limits.md)")
    assumes = ("bf16 autocast: each FP32/TF32 matrix product, convolution and attention runs on the BF16 tensor cores at " + how +
               ", and its bytes halve; fp32 elementwise ops and copies move half their bytes at the bandwidth they reach now; reductions, "
               "normalisations and softmax stay fp32, and the casts autocast adds are not counted")
    return _edits(LOWER_PRECISION, rows, new, old, assumes)


def _fusion(limits: OpLimits) -> Edits:
    rows, new, old = [], [], []
    for c in limits.chains:
        if not c.time_ns or not c.bytes:
            continue
        durations = np.zeros(c.rows.size, dtype=np.int64)
        durations[0] = int(round(c.fused_bytes / c.bytes_per_s * 1e9))
        rows.append(c.rows)
        old.append(c.ns)
        new.append(durations)
    assumes = ("each run of memory-bound ops launched one after another becomes one kernel that reads the first op's inputs and writes "
               "the last op's outputs once (the values between them used nowhere else), at the bandwidth the run reaches now")
    return _edits(FUSION, rows, new, old, assumes)


def _edits(remedy: str, rows: list, new: list, old: list, assumes: str) -> Edits:
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return Edits(remedy, empty, empty, assumes, empty)
    return Edits(remedy, np.concatenate(rows).astype(np.int64), np.concatenate(new).astype(np.int64), assumes,
                 np.concatenate(old).astype(np.int64))


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
    edits = kernel_edits(limits, remedy, efficiency=efficiency)
    if not len(edits):
        return None
    saved = edits.saved_ns / limits.steps
    assumes = edits.assumes + "; the GPU sets the step's pace, so each ns of kernel time saved is a ns of the step"
    return Prediction(remedy=remedy, measured_step_ns=limits.step_ns, step_ns=max(limits.step_ns - saved, 0.0), kernels_edited=len(edits),
                      assumes=assumes)
