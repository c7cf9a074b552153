"""Why a matrix product runs far below its limit, from its sizes, its dtype and its kernel (issue 51): the
:class:`~ncuwrap.timeline.oplimits.model.MatmulAdvice` of each product under :data:`~ncuwrap.timeline.oplimits.model.FAR_BELOW_PCT`
of its limit that takes at least :data:`~ncuwrap.timeline.oplimits.model.MIN_WORK_PCT` of the steps' kernel time.

What is read, and from where:

- **The tile**: a GEMM kernel's name says its output tile in the libraries' naming (:func:`kernel_tile`: cuBLAS's
  nvjet and xmma kernels, CUTLASS 2 and 3, the older ``ampere_sgemm_128x64``); a name that does not say it (cuBLAS's
  ``sgemm_largek_lds64``, ``gemv`` kernels) leaves the tile unknown. The tile's first number is taken along m, the
  product's rows, as the grids of cuBLAS's sm80 xmma kernels in the fp32 MLP capture show (48 x 32 blocks of
  128x128 tiles for a 6144x4096 result, 24 x 32 of 256x128); where a grid fits the other way only, the other way.
- **The blocks**: the kernel's grid as the trace records it. More blocks than tiles, a whole multiple of them: k
  split that many ways (each block one slice of k, the partial sums added after). Fewer blocks than tiles, at
  most one an SM: a persistent kernel, each block looping over tiles (Hopper's cuBLAS kernels run so).
- **The SMs**: the capture's, else the bundled table's (:class:`~ncuwrap.core.peaks.Peaks`).

The causes named (each only where its numbers hold; thresholds in the model):

- **alignment**: m, n or k not a multiple of 16 bytes of the dtype (8 elements of bf16 or fp16, 16 of fp8, 4 of
  fp32 or tf32): NVIDIA's GEMM guidance for cuBLAS's fastest kernels (its tensor-core kernels load 16-byte vectors).
- **too little work**: fewer tiles than SMs (cuBLAS may split k to occupy more, and adds the partial sums after),
  or, where the tile is unknown, fewer blocks than SMs; how far m (or the batch) would have to grow to give each SM
  a tile.
- **waves**: a persistent kernel's tiles over its blocks (one an SM) in waves, the last one part full; named where
  the idle part of the waves is at least :data:`~ncuwrap.timeline.oplimits.model.NAMED_LOSS_PCT` of them. The waves
  of a kernel that is not persistent are known only where its blocks are no more than the SMs (one wave): how many
  of its blocks an SM runs at once is not recorded (:attr:`~ncuwrap.timeline.oplimits.model.Tiling.waves`).
- **tile padding**: the tiles' work past the product's edge, named from the same share.
- **short k**: each block's slice of k no more steps of the kernel's k loop than the stages its pipeline keeps in
  flight: the pipeline never reaches its steady state, and filling it and writing the output tile are not
  amortized over a longer loop.
- **memory-bound by its shape**: the product's FLOPs over its minimal bytes under the ridge point of its unit and
  HBM (peak FLOP/s over HBM's peak bytes/s): then the model already takes HBM as its limit, and the dim whose
  growth reaches the ridge soonest is named with the size it would need.
- **short calls**: an op far below HBM's peak moves, each call, bytes that HBM's peak would move in a fraction of
  the call's time.
"""

from __future__ import annotations

import math
import re

from ncuwrap.core import peaks as peak_units
from ncuwrap.timeline.oplimits import counts
from ncuwrap.timeline.oplimits.inputs import BYTES
from ncuwrap.timeline.oplimits.model import (
    FAR_BELOW_PCT, MIN_WORK_PCT, NAMED_LOSS_PCT, FewTiles, KernelTile, MatmulAdvice, MemoryBound, Misaligned, OpRow, ShortCalls, ShortK,
    TilePadding, Tiling, WaveTail,
)

GRANULE_BYTES = 16  # the alignment cuBLAS's fastest GEMM kernels want of m, n and k, in bytes of the dtype
MIN_TILE, MAX_TILE = 8, 4096  # no GEMM kernel's tile side is shorter or longer: another number in a name is not a tile

# The libraries' names of a GEMM kernel's tile, each family with the word of the name that holds it:
# (pattern, group of the tile's rows, its columns, the k step, the stages); None: the family does not name it.
_FAMILIES = (
    (re.compile(r"\bnvjet_sm\d+_[a-z]+_(\d+)x(\d+)_(\d+)x(\d+)_\w*"), 1, 2, 3, 4),  # cuBLAS nvjet: tile, k step x stages
    (re.compile(r"\bcutlass3x_\w*?_(\d+)x(\d+)x(\d+)_\d+x\d+x\d+\w*"), 1, 2, 3, None),  # CUTLASS 3: tile MxNxK, cluster
    (re.compile(r"\bcutlass_\d+_\w*?_(\d+)x(\d+)_(\d+)x(\d+)_\w*"), 1, 2, 3, 4),  # CUTLASS 2: tile, k step x stages
    (re.compile(r"\bsm\d+_xmma_\w*?_tilesize(\d+)x(\d+)x(\d+)\w*"), 1, 2, 3, None),  # cuBLAS/cuDNN xmma (stages: _stageN)
    (re.compile(r"\b(?:maxwell|volta|turing|ampere|hopper|sm\d+)_\w*?gemm\w*?_(\d+)x(\d+)_\w*"), 1, 2, None, None),  # ampere_sgemm_128x64_nn
)
_STAGES = re.compile(r"_stages?_?(?:(\d+)x)?(\d+)")
_SPLIT_K = re.compile(r"split_?k", re.I)
_STREAM_K = re.compile(r"stream_?k", re.I)


def kernel_tile(name: str) -> KernelTile | None:
    """The output tile a GEMM kernel's name says (rows x columns, the k step and pipeline stages where it says
    them), and the word of the name that says it; None where the name says none."""
    for pattern, rows, cols, step, stages in _FAMILIES:
        found = pattern.search(name)
        if found is None:
            continue
        word = found.group(0)
        r, c = int(found.group(rows)), int(found.group(cols))
        if not (MIN_TILE <= r <= MAX_TILE and MIN_TILE <= c <= MAX_TILE):
            return None
        k = int(found.group(step)) if step else None
        depth = int(found.group(stages)) if stages else None
        if stages is None:
            more = _STAGES.search(word)
            if more is not None:
                k = k if k is not None or more.group(1) is None else int(more.group(1))
                depth = int(more.group(2))
        k = k if k and k <= MAX_TILE else None
        depth = depth if depth and depth <= 64 else None
        return KernelTile(rows=r, cols=c, k=k, stages=depth, word=word, split_k=bool(_SPLIT_K.search(word)),
                          stream_k=bool(_STREAM_K.search(word)))
    return None


def gemm_kernel(names: list[str], ns: list[int]) -> int | None:
    """Which of an op's kernels (``names``, their times ``ns``) is its GEMM: the one with the most time among those whose
    name gives a tile (not a split-K reduction or an epilogue beside it), else the one with the most time."""
    if not names:
        return None
    tiled = [i for i, name in enumerate(names) if kernel_tile(name) is not None]
    return max(tiled or range(len(names)), key=lambda i: (ns[i], -i))


def granule(dtype: str | None) -> int | None:
    """The elements of ``dtype`` in :data:`GRANULE_BYTES` (None: a dtype not known, or wider than it)."""
    size = BYTES.get(dtype or "")
    return GRANULE_BYTES // size if size and size <= GRANULE_BYTES and dtype in counts.FLOATING else None


def tiling(gemm: counts.Gemm, kernel: str | None, grid: tuple[int, int, int] | None, sms: int | None) -> Tiling:
    """How ``gemm``'s output falls into the tiles of its ``kernel`` (its name) and its ``grid`` of blocks onto ``sms``."""
    tile = kernel_tile(kernel) if kernel else None
    blocks = math.prod(grid) if grid is not None and all(g > 0 for g in grid) else None
    tiles = split = None
    transposed = persistent = False
    if min(gemm.batch, gemm.m, gemm.n, gemm.k) < 1:  # an empty product: no tile holds any of it
        tile = None
    if tile is not None:
        along = _tiles(gemm, tile.rows, tile.cols)
        across = _tiles(gemm, tile.cols, tile.rows)
        tiles = along
        if blocks is None:
            pass
        elif blocks >= along and not blocks % along:
            split = blocks // along
        elif blocks >= across and not blocks % across:
            tiles, transposed, split = across, True, blocks // across
        elif blocks < min(along, across) and sms and blocks <= sms:
            persistent = True
    return Tiling(kernel=kernel, tile=tile, blocks=blocks, sms=sms, tiles=tiles, transposed=transposed, split=split, persistent=persistent,
                  padded_pct=_padded(gemm, tile, transposed) if tile is not None else None)


def _tiles(gemm: counts.Gemm, rows: int, cols: int) -> int:
    return gemm.batch * -(-gemm.m // rows) * -(-gemm.n // cols)


def _padded(gemm: counts.Gemm, tile: KernelTile, transposed: bool) -> float:
    rows, cols = (tile.cols, tile.rows) if transposed else (tile.rows, tile.cols)  # Tiling.oriented
    covered = -(-gemm.m // rows) * rows * -(-gemm.n // cols) * cols
    return 100.0 * (1 - gemm.m * gemm.n / covered)


def advise(rows: tuple[OpRow, ...], kernel_ns: int, sms: int | None) -> tuple[MatmulAdvice, ...]:
    """The advice for each matrix product of ``rows`` far below its limit with at least MIN_WORK_PCT of ``kernel_ns``
    (the steps' kernel time), most time first."""
    out = []
    for row in rows:
        gemm = row.gemm
        pct = row.pct_of_limit
        if row.kind != counts.MATMUL or gemm is None or pct is None or pct >= FAR_BELOW_PCT or not kernel_ns or row.calls <= 0:
            continue
        if min(gemm.batch, gemm.m, gemm.n, gemm.k) < 1:
            continue
        work_pct = 100.0 * row.time_ns / kernel_ns
        if work_pct < MIN_WORK_PCT:
            continue
        shape = tiling(gemm, row.kernel, row.grid, sms)
        causes = tuple(c for c in (_memory_bound(row), _few_tiles(gemm, shape), _wave_tail(shape), _tile_padding(gemm, shape),
                                   _short_k(gemm, shape), _misaligned(gemm, row.dtype), _short_calls(row)) if c is not None)
        out.append(MatmulAdvice(row=row, gemm=gemm, granule=granule(row.dtype), tiling=shape, causes=causes, work_pct=work_pct))
    return tuple(sorted(out, key=lambda a: (-a.row.time_ns, a.row.op, a.row.shapes)))


def _misaligned(gemm: counts.Gemm, dtype: str | None) -> Misaligned | None:
    g = granule(dtype)
    if g is None:
        return None
    dims = tuple((name, size, -(-size // g) * g) for name, size in (("m", gemm.m), ("n", gemm.n), ("k", gemm.k)) if size > 1 and size % g)
    return Misaligned(dims=dims, granule=g, dtype=dtype) if dims else None


def _few_tiles(gemm: counts.Gemm, shape: Tiling) -> FewTiles | None:
    """Fewer tiles than SMs (or, the tile unknown, fewer blocks), and what would give each SM one."""
    sms = shape.sms
    if not sms:
        return None
    if shape.tiles is not None and shape.tiles < sms and not shape.persistent:
        rows, cols = shape.oriented
        across = -(-gemm.n // cols)
        if gemm.batch > 1:
            dim, size, need = "batch", gemm.batch, -(-sms // (-(-gemm.m // rows) * across))
        else:
            dim, size, need = "m", gemm.m, -(-sms // across) * rows
        return FewTiles(units=shape.tiles, what="tiles", sms=sms, blocks=shape.blocks, split=shape.split,
                        dim=dim, size=size, need=need if need > size else None)
    if shape.tile is None and shape.blocks is not None and shape.blocks < sms:
        return FewTiles(units=shape.blocks, what="blocks", sms=sms, blocks=shape.blocks, split=None, dim=None, size=None, need=None)
    return None


def _wave_tail(shape: Tiling) -> WaveTail | None:
    waves = shape.waves
    if waves is None or waves < 2 or shape.idle_pct < NAMED_LOSS_PCT:
        return None
    return WaveTail(waves=waves, last=shape.last_wave, slots=shape.slots, tiles=shape.units, idle_pct=shape.idle_pct)


def _tile_padding(gemm: counts.Gemm, shape: Tiling) -> TilePadding | None:
    if shape.padded_pct is None or shape.padded_pct < NAMED_LOSS_PCT:
        return None
    rows, cols = shape.oriented
    return TilePadding(padded_pct=shape.padded_pct, rows=-(-gemm.m // rows) * rows, cols=-(-gemm.n // cols) * cols)


def _short_k(gemm: counts.Gemm, shape: Tiling) -> ShortK | None:
    tile = shape.tile
    if tile is None or not tile.k or not tile.stages or (tile.split_k and shape.split is None):
        return None
    slice_k = -(-gemm.k // (shape.split or 1))
    steps = -(-slice_k // tile.k)
    if steps > tile.stages:
        return None
    return ShortK(k=gemm.k, slice_k=slice_k, step=tile.k, steps=steps, stages=tile.stages, split=shape.split)


def _memory_bound(row: OpRow) -> MemoryBound | None:
    """Its FLOPs over its minimal bytes under the ridge of its unit and HBM, and the dim that reaches the ridge soonest."""
    if not row.bytes or not row.flop or not row.peak_flops or not row.peak_bytes_per_s:
        return None
    intensity = row.flop / row.bytes
    ridge = row.peak_flops / row.peak_bytes_per_s
    if intensity >= ridge:
        return None
    grown = _to_ridge(row.gemm, row.flop // max(row.calls, 1), row.bytes // max(row.calls, 1), ridge)
    dim, size, need = grown if grown is not None else (None, None, None)
    return MemoryBound(intensity=intensity, ridge=ridge, reach_pct=100.0 * intensity / ridge, dim=dim, size=size, need=need)


def _to_ridge(gemm: counts.Gemm, flop: int, nbytes: int, ridge: float) -> tuple[str, int, int] | None:
    """The dim of m, n, k whose growth alone reaches ``ridge`` FLOP/B at the smallest multiple of its size, and the size it
    would need; None where the operands' bytes are not known or no dim reaches it alone. Each part of the FLOPs and bytes
    grows in proportion to the dims it spans and not with the others: F(x) = F1 x/v + F0, B(x) = B1 x/v + B0."""
    parts = (gemm.a_bytes, gemm.b_bytes, gemm.out_bytes, gemm.bias_bytes)
    if any(p is None for p in parts):
        return None
    mac = 2 * gemm.batch * gemm.m * gemm.n * gemm.k
    spans = {"a": "mk", "b": "kn", "out": "mn", "bias": gemm.bias_spans}
    sizes = dict(zip(("a", "b", "out", "bias"), parts))
    fixed = nbytes - sum(parts)  # what grows with no dim (an FP8 product's scales)
    best = None
    for dim, size in (("m", gemm.m), ("n", gemm.n), ("k", gemm.k)):
        f1 = mac + (flop - mac if dim in "mn" else 0)
        f0 = flop - f1
        b1 = sum(v for name, v in sizes.items() if dim in spans[name])
        b0 = nbytes - b1
        if f1 <= ridge * b1 or fixed < 0:
            continue
        need = math.ceil(size * (ridge * b0 - f0) / (f1 - ridge * b1))
        if need > size and (best is None or need / size < best[2] / best[1]):
            best = (dim, size, need)
    return best


def _short_calls(row: OpRow) -> ShortCalls | None:
    if row.bytes_pct is None or row.bytes_pct >= FAR_BELOW_PCT or row.limit != peak_units.HBM or not row.calls:
        return None
    per_call = row.bytes / row.calls
    return ShortCalls(bytes_per_call=per_call, ns_per_call=row.time_ns / row.calls, ns_at_peak=per_call / row.peak_bytes_per_s * 1e9)
