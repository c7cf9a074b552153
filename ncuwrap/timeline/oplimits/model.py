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
from ncuwrap.timeline.oplimits.counts import Gemm

TOP_OPS = 12  # the ops a report's table shows, most time first (the JSON has them all)
TOP_UNMODELLED = 3  # the not-modelled ops a report names with their reasons
STEADY = "steady steps"
WINDOW = "window"  # no steps: launches.active_window (first GPU work's launch to the last one's end), counted as one step
TOP_ADVICE = 3  # the matrix products far below their limit a report gives the causes of, most time first (the JSON has them all)
# A matrix product is advised on where it runs under half its limit: on these H200 captures cuBLAS reaches 62-80% of the
# peaks (the maximum clock's) on large aligned products (docs/op-limits.md), so under 50% at least a third of what
# the same library reaches on a good shape is lost to this one's.
FAR_BELOW_PCT = 50.0
# ... and where it takes at least 1% of the steps' kernel time: its speed changes the GPU's work by at most its share
# of it (whether the GPU's work sets the step is the timeline's verdict).
MIN_WORK_PCT = 1.0
# A cause that costs a share of the work (the idle part of the waves, the tiles' padding) is named from a tenth: less
# explains little of an op that loses more than half of its peak.
NAMED_LOSS_PCT = 10.0


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
    gemm: Gemm | None = field(repr=False, default=None)  # a matrix product's GEMM sizes (counts.Gemm)
    kernel: str | None = field(repr=False, default=None)  # a matrix product's GEMM kernel (advice.gemm_kernel; its name as the capture has it)
    grid: tuple[int, int, int] | None = field(repr=False, default=None)  # that kernel's grid, as most of its launches had it (None: not recorded)
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
class KernelTile:
    """A GEMM kernel's output tile as its name says it (rows x columns of the product one block computes, the depth of
    its k loop's step and the stages its pipeline keeps in flight, None where the name does not say), the word of the
    name that says it, and whether the name says the kernel splits k (``split_k``) or shares the last wave's tiles
    among the SMs (``stream_k``)."""

    rows: int
    cols: int
    k: int | None
    stages: int | None
    word: str
    split_k: bool = False
    stream_k: bool = False

    def to_json(self) -> dict:
        return {"rows": self.rows, "cols": self.cols, "k": self.k, "stages": self.stages, "word": self.word, "split_k": self.split_k,
                "stream_k": self.stream_k}


@dataclass(frozen=True)
class Tiling:
    """How a matrix product's output falls into its kernel's tiles, and its work onto the SMs in waves (:attr:`waves`). ``tiles``:
    batch x ceil(m / rows) x ceil(n / cols) (``transposed``: the tile's rows along n, where only that way fits the
    grid); ``split``: blocks a tile (k split that many ways); ``persistent``: fewer blocks than tiles, at most one an
    SM, each looping over tiles. None where the name, the grid or the SM count does not say."""

    kernel: str | None
    tile: KernelTile | None
    blocks: int | None
    sms: int | None
    tiles: int | None
    transposed: bool
    split: int | None
    persistent: bool
    padded_pct: float | None  # of the tiles' work, past the product's edge

    @property
    def oriented(self) -> tuple[int, int] | None:
        """The tile's sides along m and along n."""
        if self.tile is None:
            return None
        return (self.tile.cols, self.tile.rows) if self.transposed else (self.tile.rows, self.tile.cols)

    @property
    def units(self) -> int | None:
        """What fills the waves: a persistent kernel's tiles (unknown where its name says it splits k), else its blocks."""
        if self.persistent:
            return None if self.tile is not None and self.tile.split_k else self.tiles
        return self.blocks

    @property
    def unit_name(self) -> str:
        return "tiles" if self.persistent else "blocks"

    @property
    def slots(self) -> int | None:
        """How many units run at once: a persistent kernel's blocks (one an SM), else the SMs."""
        return self.blocks if self.persistent else self.sms

    @property
    def waves(self) -> int | None:
        """The waves its work makes on the SMs, where the trace tells them: a persistent kernel's tiles over its blocks,
        or at most as many blocks as SMs (one wave). How many blocks of a kernel that is not persistent an SM runs at once
        is not recorded, so more blocks than SMs leave the waves unknown; a stream-K kernel shares its last wave's tiles."""
        units, slots = self.units, self.slots
        if not units or not slots or (self.tile is not None and self.tile.stream_k):
            return None
        if not self.persistent and units > slots:
            return None
        return -(-units // slots)

    @property
    def last_wave(self) -> int | None:
        waves = self.waves
        return self.units - (waves - 1) * self.slots if waves else None

    @property
    def idle_pct(self) -> float | None:
        """The share of the waves' slots no unit fills (the last wave's empty part)."""
        waves = self.waves
        return 100.0 * (1 - self.units / (waves * self.slots)) if waves else None

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "tile": self.tile.to_json() if self.tile else None, "blocks": self.blocks, "sms": self.sms,
                "tiles": self.tiles, "transposed": self.transposed, "split": self.split, "persistent": self.persistent,
                "padded_pct": clean(self.padded_pct), "waves": self.waves, "wave_units": self.unit_name if self.waves else None,
                "last_wave": self.last_wave, "slots": self.slots if self.waves else None, "idle_pct": clean(self.idle_pct)}


@dataclass(frozen=True)
class Misaligned:
    """Dims of m, n, k not a multiple of ``granule`` elements of ``dtype`` (16 bytes): (dim, size, padded size) each."""

    dims: tuple[tuple[str, int, int], ...]
    granule: int
    dtype: str
    cause = "alignment"

    def to_json(self) -> dict:
        return {"cause": self.cause, "granule": self.granule, "dtype": self.dtype,
                "dims": [{"dim": d, "size": size, "padded": padded} for d, size, padded in self.dims]}


@dataclass(frozen=True)
class FewTiles:
    """Fewer tiles (or, the tile unknown, blocks) than SMs; ``need``: the size ``dim`` (m, or the batch) would need for
    as many tiles as SMs (None: not known, or no growth needed)."""

    units: int
    what: str  # "tiles" or "blocks"
    sms: int
    blocks: int | None
    split: int | None
    dim: str | None
    size: int | None
    need: int | None
    cause = "too_little_work"

    def to_json(self) -> dict:
        return {"cause": self.cause, self.what: self.units, "sms": self.sms, "blocks": self.blocks, "split": self.split, "dim": self.dim,
                "size": self.size, "need": self.need}


@dataclass(frozen=True)
class WaveTail:
    """A persistent kernel's ``tiles`` over its ``slots`` blocks (one an SM) make ``waves``, the last with ``last``
    tiles: ``idle_pct`` of the waves' block time empty."""

    waves: int
    last: int
    slots: int
    tiles: int
    idle_pct: float
    cause = "waves"

    def to_json(self) -> dict:
        return {"cause": self.cause, "waves": self.waves, "last_wave": self.last, "blocks": self.slots, "tiles": self.tiles,
                "idle_pct": clean(self.idle_pct)}


@dataclass(frozen=True)
class TilePadding:
    """The share of the tiles' work past the product's edge: the tiles cover ``rows`` x ``cols`` of each product."""

    padded_pct: float
    rows: int
    cols: int
    cause = "tile_padding"

    def to_json(self) -> dict:
        return {"cause": self.cause, "padded_pct": clean(self.padded_pct), "covered": [self.rows, self.cols]}


@dataclass(frozen=True)
class ShortK:
    """Each block's ``slice_k`` of k (k split ``split`` ways) is ``steps`` of the kernel's ``step``-deep k loop, no more
    than its pipeline's ``stages``."""

    k: int
    slice_k: int
    step: int
    steps: int
    stages: int
    split: int | None
    cause = "short_k"

    def to_json(self) -> dict:
        return {"cause": self.cause, "k": self.k, "slice_k": self.slice_k, "step": self.step, "steps": self.steps, "stages": self.stages,
                "split": self.split}


@dataclass(frozen=True)
class MemoryBound:
    """FLOPs over minimal bytes (``intensity``, FLOP/B) under the ``ridge`` of its unit and HBM: at HBM's peak it reaches
    ``reach_pct`` of its unit's; ``dim`` of ``size`` would need ``need`` to reach the ridge (None: no one dim does)."""

    intensity: float
    ridge: float
    reach_pct: float
    dim: str | None
    size: int | None
    need: int | None
    cause = "memory_bound"

    def to_json(self) -> dict:
        return {"cause": self.cause, "flop_per_byte": clean(self.intensity), "ridge_flop_per_byte": clean(self.ridge),
                "reach_pct": clean(self.reach_pct), "dim": self.dim, "size": self.size, "need": self.need}


@dataclass(frozen=True)
class ShortCalls:
    """An op far below HBM's peak: each call's minimal bytes, its kernel time, and the time HBM's peak would take."""

    bytes_per_call: float
    ns_per_call: float
    ns_at_peak: float
    cause = "short_calls"

    def to_json(self) -> dict:
        return {"cause": self.cause, "bytes_per_call": clean(self.bytes_per_call), "ns_per_call": clean(self.ns_per_call),
                "ns_at_peak": clean(self.ns_at_peak)}


@dataclass(frozen=True)
class MatmulAdvice:
    """Why a matrix product runs far below its limit (:mod:`ncuwrap.timeline.oplimits.advice`): its GEMM, the
    16-byte granule of its dtype (None: dtype unknown), its tiling, and the causes its numbers show (none: no check
    here explains it); ``work_pct`` of the steps' kernel time."""

    row: OpRow
    gemm: Gemm
    granule: int | None
    tiling: Tiling
    causes: tuple
    work_pct: float

    def to_json(self) -> dict:
        g = self.gemm
        return {"op": self.row.op, "shapes": self.row.shapes, "dtype": self.row.dtype, "calls": self.row.calls, "time_ns": self.row.time_ns,
                "share_pct": clean(self.row.share_pct), "work_pct": clean(self.work_pct), "limit": self.row.limit,
                "pct_of_limit": clean(self.row.pct_of_limit), "gemm": {"batch": g.batch, "m": g.m, "n": g.n, "k": g.k},
                "granule": self.granule, "tiling": self.tiling.to_json(), "causes": [c.to_json() for c in self.causes]}


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


@dataclass(frozen=True)
class UnknownMask:
    """Attention ops of one name whose mask is not recorded (nsys records sizes only) and none of whose inputs is a
    mask: PyTorch's causal mask or none, so their FLOPs are one of two counts. They stay not modelled (Unmodelled);
    the step's totals are given under each (OpLimits.reading)."""

    op: str
    calls: int
    time_ns: int
    flop_causal: int  # over all its calls, under PyTorch's causal mask (query i sees keys 0..i)
    flop_full: int  # under no mask
    share_pct: float  # of the steady steps' time

    def to_json(self) -> dict:
        return {"op": self.op, "calls": self.calls, "time_ns": self.time_ns, "flop_causal": self.flop_causal, "flop_full": self.flop_full,
                "share_pct": clean(self.share_pct)}


@dataclass(frozen=True)
class MaskReading:
    """The step's FLOPs and rate with the attention whose mask is not recorded counted under one of its two masks."""

    mask: str  # CAUSAL | NO_MASK
    step_flop: float
    achieved_flops: float
    mfu_pct: float | None

    def to_json(self) -> dict:
        return {"mask": self.mask, "step_flop": clean(self.step_flop), "achieved_tflops": clean(self.achieved_flops / 1e12),
                "mfu_pct": clean(self.mfu_pct)}


CAUSAL, NO_MASK = "causal", "none"


# The longest row a fused kernel keeps on chip through a reduction: Inductor's limit for a persistent reduction
# over the inner dimension (torch/_inductor/codegen, should_use_persistent_reduction). A longer row is reduced in
# a loop over it, and what follows the reduction reads the row again (docs/op-limits.md, fusion).
ON_CHIP_ROW = 1024


@dataclass(frozen=True)
class Escape:
    """A value an op of a chain makes, not the chain's last op, that an op outside the chain reads (nsys's
    input_op_ids, :func:`ncuwrap.timeline.oplimits.dataflow.reads`): fused, the chain must still write it."""

    op: str  # the op that makes it
    shapes: str  # that op's sizes, as its row shows them
    output: int  # which of its outputs it is
    bytes: int | None  # a call's (None: the count does not tell this output's bytes apart)
    reader: str  # the first op outside the chain that reads it


@dataclass(frozen=True)
class OutsideInput:
    """A value an op of a chain, not its first op, reads that no op of the chain made (nsys's input_op_ids): made by an
    op outside it (the other operand of a residual add, a cast's fp32 weight), or with no producer in the capture (a
    value from before it): fused, the chain must still read it. One a value and chain call: two of its ops reading it, or
    its first op reading it too, read it once."""

    op: str | None  # the op that made it (None: no producer the capture names for sure)
    sizes: str  # its sizes, as its reader recorded them
    bytes: int | None  # a call's, at the dtype its reader's count takes (None: not known)
    reader: str  # the first op of the chain that reads it


@dataclass(frozen=True)
class Chain:
    """A run of memory-bound ops launched one after another, with no other kernel between them (cut where no value
    crosses, or at a step's start: :mod:`ncuwrap.timeline.oplimits.analysis`), counted for its calls in the steps: what
    fusing them into one pass would move (:attr:`fused_bytes`: the first op's inputs read and the last one's outputs
    written, ``ends_bytes``, the values in between that ops outside the run read written too, ``escapes``, and the
    values its later ops read that it did not make read too, ``outside_inputs``; the others kept on chip) against what
    they move now (``bytes``). ``passes``: the passes over its inputs a compiler's fused kernel makes (one, and one more
    after each reduction over rows too long to keep on chip whose result later ops use), ``rereads`` the bytes of the
    passes after the first (its first op's inputs)."""

    ops: int  # its op calls in the steady steps (a run crossing their edge has some outside)
    kernels: int
    time_ns: int
    bytes: int
    ends_bytes: int
    passes: int = 1
    rereads: int = 0
    # The values between its ops that ops outside it read, one a call and output (None: the capture does not record
    # which ops read an op's results, so they are not known: taken as read nowhere else).
    escapes: tuple[Escape, ...] | None = None
    # What its ops after the first read that none of its ops made, one a value (None: not known, as escapes).
    outside_inputs: tuple[OutsideInput, ...] | None = None
    rows: np.ndarray = field(repr=False, compare=False, default=None)  # its kernels' rows in data.kernels, in launch order
    ns: np.ndarray = field(repr=False, compare=False, default=None)  # their durations, in the same order

    @property
    def bytes_per_s(self) -> float:
        return self.bytes / (self.time_ns * 1e-9) if self.time_ns else 0.0

    @property
    def escaping_bytes(self) -> int | None:
        """The bytes of :attr:`escapes` whose size is counted (None: not known)."""
        return _known_bytes(self.escapes)

    @property
    def outside_input_bytes(self) -> int | None:
        """The bytes of :attr:`outside_inputs` whose size is known (None: not known)."""
        return _known_bytes(self.outside_inputs)

    @property
    def fused_bytes(self) -> int:
        """What one pass of the fused kernel moves at least: its ends, the escaping values it must write and the outside
        inputs it must read."""
        return self.ends_bytes + (self.escaping_bytes or 0) + (self.outside_input_bytes or 0)

    @property
    def fused_kernel_bytes(self) -> int:
        """What the fused kernel moves, its passes over the inputs counted."""
        return self.fused_bytes + self.rereads


def _known_bytes(values) -> int | None:
    """The bytes of ``values`` (each with ``bytes``, None where not known) whose size is known; None where ``values`` is."""
    return sum(v.bytes for v in values if v.bytes is not None) if values is not None else None


def _by_kind(values, kind_of) -> dict[tuple, list]:
    """``values`` (each with ``bytes``, None where not known) counted by ``kind_of(value)``: [calls, bytes or None]."""
    kinds: dict[tuple, list] = {}
    for v in values:
        kind = kinds.setdefault(kind_of(v), [0, 0])
        kind[0] += 1
        kind[1] = None if kind[1] is None or v.bytes is None else kind[1] + v.bytes
    return kinds


@dataclass(frozen=True)
class Escaping:
    """The values of one kind that fused chains must still write, over the steps: ``calls`` of ``op``'s ``output``
    read by ``reader`` outside its chain, ``bytes`` in all (None: not counted apart)."""

    op: str
    shapes: str
    output: int
    reader: str
    calls: int
    bytes: int | None

    def to_json(self) -> dict:
        return {"op": self.op, "shapes": self.shapes, "output": self.output, "reader": self.reader, "calls": self.calls, "bytes": self.bytes}


@dataclass(frozen=True)
class OutsideInputs:
    """The values of one kind that fused chains must still read, over the steps: ``calls`` of ``op``'s values (None: no
    producer named) of ``sizes`` read by ``reader`` in its chain, ``bytes`` in all (None: some not known)."""

    op: str | None
    sizes: str
    reader: str
    calls: int
    bytes: int | None

    def to_json(self) -> dict:
        return {"op": self.op, "sizes": self.sizes, "reader": self.reader, "calls": self.calls, "bytes": self.bytes}


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
    advice: tuple[MatmulAdvice, ...] = ()  # the matrix products far below their limit, most time first (ncuwrap.timeline.oplimits.advice)
    # Each remedy's kernel edits (ncuwrap.timeline.oplimits.remedies.Edits, by remedy name), computed once with the limits:
    # the predictions here and the replay's edits of the same kernels read them.
    edits: dict = field(default_factory=dict, repr=False, compare=False)
    unknown_masks: tuple[UnknownMask, ...] = ()  # attention ops whose mask is not recorded, most time first

    def edits_of(self, remedy: str):
        """``remedy``'s kernel edits (None where they were not computed with these limits)."""
        return self.edits.get(remedy)

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
    def escapes_known(self) -> bool:
        """Whether the capture tells which values between a chain's ops other ops read, and which values its ops read
        that it did not make (nsys's input_op_ids; a PyTorch profiler trace records no tensor's identity). True with no
        chain: none has a value between its ops."""
        return all(c.escapes is not None for c in self.chains)

    def _over_chains(self, bytes_of) -> int | None:
        """``bytes_of(chain)`` summed over the chains (None where the capture does not record the dataflow)."""
        return sum(bytes_of(c) for c in self.chains) if self.escapes_known else None

    def _a_step(self, total: int | None) -> float | None:
        return total / self.steps if total is not None else None

    @property
    def escaping_bytes(self) -> int | None:
        """The chains' escaping values' bytes over the steps (Chain.escaping_bytes; None: not known)."""
        return self._over_chains(lambda c: c.escaping_bytes)

    @property
    def step_escaping_bytes(self) -> float | None:
        """Of :attr:`step_min_bytes`, the values between the fused ops that ops outside them read, a step (None: not known)."""
        return self._a_step(self.escaping_bytes)

    @property
    def unsized_escapes(self) -> int:
        """The chains' escaping values whose bytes the counts do not tell, over the steps (not in the fused bytes)."""
        return sum(1 for c in self.chains for e in c.escapes or () if e.bytes is None)

    @property
    def escaping(self) -> tuple[Escaping, ...]:
        """The chains' escaping values by kind (op, its sizes, output, first reader), most bytes first."""
        kinds = _by_kind((e for c in self.chains for e in c.escapes or ()), lambda e: (e.op, e.shapes, e.output, e.reader))
        rows = (Escaping(*kind, calls, total) for kind, (calls, total) in kinds.items())
        return tuple(sorted(rows, key=lambda r: (-(r.bytes or 0), r.op, r.shapes, r.output, r.reader)))

    @property
    def outside_input_bytes(self) -> int | None:
        """The chains' outside inputs' bytes over the steps (Chain.outside_input_bytes; None: not known)."""
        return self._over_chains(lambda c: c.outside_input_bytes)

    @property
    def step_outside_input_bytes(self) -> float | None:
        """Of :attr:`step_min_bytes`, the values the fused ops read that no op of their run made, a step (None: not known)."""
        return self._a_step(self.outside_input_bytes)

    @property
    def unsized_outside_inputs(self) -> int:
        """The chains' outside inputs whose bytes are not known, over the steps (not in the fused bytes)."""
        return sum(1 for c in self.chains for i in c.outside_inputs or () if i.bytes is None)

    @property
    def outside_inputs(self) -> tuple[OutsideInputs, ...]:
        """The chains' outside inputs by kind (producer, sizes, reader), most bytes first."""
        kinds = _by_kind((i for c in self.chains for i in c.outside_inputs or ()), lambda i: (i.op, i.sizes, i.reader))
        rows = (OutsideInputs(*kind, calls, total) for kind, (calls, total) in kinds.items())
        return tuple(sorted(rows, key=lambda r: (-(r.bytes or 0), r.op or "", r.sizes, r.reader)))

    @property
    def achieved_flops(self) -> float:
        """The modelled FLOPs a step over the mean steady step."""
        return self.step_flop / (self.step_ns * 1e-9) if self.step_ns else 0.0

    def reading(self, mask: str) -> MaskReading | None:
        """The step's FLOPs, rate and MFU with :attr:`unknown_masks` counted under ``mask`` (CAUSAL or NO_MASK); None
        without such ops. The peak is the one :attr:`mfu_pct` takes."""
        if not self.unknown_masks:
            return None
        added = sum(m.flop_causal if mask == CAUSAL else m.flop_full for m in self.unknown_masks) / self.steps
        flop = self.step_flop + added
        rate = flop / (self.step_ns * 1e-9) if self.step_ns else 0.0
        peak = self.peak_flops
        return MaskReading(mask=mask, step_flop=flop, achieved_flops=rate, mfu_pct=100.0 * rate / peak if peak else None)

    @property
    def unknown_mask_pct(self) -> float:
        """The share of the steady steps' time in attention whose mask is not recorded."""
        return sum(m.share_pct for m in self.unknown_masks)

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

    def top_advice(self, n: int = TOP_ADVICE) -> tuple[tuple[MatmulAdvice, ...], int, float]:
        """The advice of the ``n`` products with the most time, and how many more there are and their share of the kernel time."""
        left = self.advice[n:]
        return self.advice[:n], len(left), sum(a.work_pct for a in left)

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
            "advice": [a.to_json() for a in self.advice],
            "attention_mask_unknown": ({"ops": [m.to_json() for m in self.unknown_masks], "share_pct": clean(self.unknown_mask_pct),
                                        "readings": [self.reading(mask).to_json() for mask in (CAUSAL, NO_MASK)]}
                                       if self.unknown_masks else None),
            "chains": {"count": len(self.chains), "bytes": sum(c.bytes for c in self.chains), "fused_bytes": sum(c.fused_bytes for c in self.chains),
                       "time_ns": sum(c.time_ns for c in self.chains),
                       "escaping_bytes": self.escaping_bytes,
                       "escaping": [e.to_json() for e in self.escaping] if self.escapes_known else None,
                       "outside_input_bytes": self.outside_input_bytes,
                       "outside_inputs": [i.to_json() for i in self.outside_inputs] if self.escapes_known else None},
        }
