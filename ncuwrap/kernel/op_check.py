"""A timeline's op limits (:mod:`ncuwrap.timeline.oplimits`) checked against ncu's counters of the same kernels: the
FLOPs and bytes the model counts from an op's shapes, and its rates over the trace's kernel time, against the FLOPs
ncu counted (SASS thread instructions, a fused multiply-add two; tensor-core operations by input type), the DRAM
bytes it counted, and their rates over ncu's kernel time (``ncuwrap profile --top`` collects them:
ncuwrap.profile.top.OP_LIMIT_METRICS).

An op is checked where ncu profiled the kernels that take at least :data:`COVERED` of its time in the trace (one
launch of each: ``--top`` profiles one launch per kernel): ncu's counts of those kernels, each times its launches a
call, against the model's per call. Kernels are matched by mangled name, grid and block (ncu's mangled names come
from the report's second CSV export, as ``profile --top`` matches them to nsys's ranking: ncuwrap.profile.top).

Where the two differ by more than :data:`AGREE`, :func:`why` says which is right and why, from the counters: a
tensor-core count above the product's is the tiles the kernel computes past the matrix's edge (ncu's is the work
done, the model's the work needed); DRAM bytes above the minimal are operands fetched more than once; below it,
inputs found in L2 or outputs still in L2 when the kernel ends; the model's FLOPs of an elementwise op are a
convention (one an element) that ncu's instruction counts need not meet.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ncuwrap.core.numbers import clean
from ncuwrap.timeline.oplimits import counts

COVERED = 0.9  # the share of an op's kernel time ncu must have profiled for the op to be checked
AGREE = 0.15  # model and ncu agree within this (a ratio within 1 +/- AGREE)
TENSOR_OPS = ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", "sm__ops_path_tensor_src_fp16.sum", "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
              "sm__ops_path_tensor_src_fp8_sparsity_off.sum", "sm__ops_path_tensor_src_fp8.sum", "sm__ops_path_tensor_src_fp64.sum",
              "sm__ops_path_tensor_src_int8.sum")
SASS = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
DRAM = ("dram__bytes_read.sum", "dram__bytes_write.sum")
DURATION = "gpu__time_duration.sum"
L2_HIT = "lts__t_sector_hit_rate.pct"
_TILE = re.compile(r"(?:nvjet_sm\d+_[a-z]+_|tilesize)(\d+)x(\d+)")


@dataclass(frozen=True)
class NcuCounts:
    """One profiled launch's counters: FLOPs (tensor-core and SASS), DRAM bytes, duration; None where not collected."""

    tensor_flop: float | None
    sass_flop: float | None
    dram_bytes: float | None
    duration_ns: float | None
    l2_hit_pct: float | None = None

    @property
    def flop(self) -> float | None:
        known = [v for v in (self.tensor_flop, self.sass_flop) if v is not None]
        return sum(known) if known else None


def _value(row: dict, name: str) -> float | None:
    value = row.get(name)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def ncu_counts(row: dict) -> NcuCounts:
    """The counters of one launch of ncu's report (a row of its Profile frame, as a dict)."""
    tensor = [_value(row, m) for m in TENSOR_OPS]
    tensor_known = [v for v in tensor if v is not None]
    # fp8's two names are one counter on parts that have both: the larger, not the sum.
    fp8 = [v for m, v in zip(TENSOR_OPS, tensor) if "fp8" in m and v is not None]
    tensor_flop = (sum(v for m, v in zip(TENSOR_OPS, tensor) if "fp8" not in m and v is not None) + (max(fp8) if fp8 else 0.0)) \
        if tensor_known else None
    sass = {op: _value(row, SASS.format(op)) for op in ("ffma", "fadd", "fmul", "dfma", "dadd", "dmul")}
    sass_flop = None
    if any(v is not None for v in sass.values()):
        g = {k: (v or 0.0) for k, v in sass.items()}
        sass_flop = 2 * g["ffma"] + g["fadd"] + g["fmul"] + 2 * g["dfma"] + g["dadd"] + g["dmul"]
    dram = [_value(row, m) for m in DRAM]
    return NcuCounts(tensor_flop=tensor_flop, sass_flop=sass_flop, dram_bytes=sum(dram) if all(v is not None for v in dram) else None,
                     duration_ns=_value(row, DURATION), l2_hit_pct=_value(row, L2_HIT))


@dataclass(frozen=True)
class OpCheck:
    """One op's model against ncu, a call of it: FLOPs, bytes, their rates, and why they differ."""

    op: str
    shapes: str
    kind: str
    limit: str | None  # the model's limit for the op (its compute unit or hbm)
    kernels: tuple[str, ...]  # the profiled kernels (ncu's names)
    model_flop: float
    ncu_flop: float | None
    model_bytes: float | None
    ncu_bytes: float | None
    trace_ns: float  # the profiled kernels' time a call in the trace
    ncu_ns: float | None  # their time a call under ncu
    l2_hit_pct: float | None
    why: tuple[str, ...]

    @staticmethod
    def _ratio(a, b) -> float | None:
        return a / b if a is not None and b else None

    @property
    def flop_ratio(self) -> float | None:
        """The model's FLOPs over ncu's."""
        return self._ratio(self.model_flop, self.ncu_flop)

    @property
    def bytes_ratio(self) -> float | None:
        """The model's minimal bytes over ncu's DRAM bytes."""
        return self._ratio(self.model_bytes, self.ncu_bytes)

    @property
    def flops_rate_ratio(self) -> float | None:
        """The model's FLOP/s (over the trace's time) over ncu's (over ncu's time)."""
        if self.ncu_flop is None or not self.ncu_flop or not self.ncu_ns or not self.trace_ns:
            return None
        return (self.model_flop / self.trace_ns) / (self.ncu_flop / self.ncu_ns)

    @property
    def bytes_rate_ratio(self) -> float | None:
        if self.model_bytes is None or not self.ncu_bytes or not self.ncu_ns or not self.trace_ns:
            return None
        return (self.model_bytes / self.trace_ns) / (self.ncu_bytes / self.ncu_ns)

    @property
    def checked(self) -> str:
        """What the op's limit makes the check of: 'flop/s' for an op closest to its compute peak, 'bytes/s' for one
        closest to HBM's."""
        return "bytes/s" if self.limit == "hbm" else "flop/s"

    @property
    def checked_ratio(self) -> float | None:
        return self.bytes_rate_ratio if self.checked == "bytes/s" else self.flops_rate_ratio

    @property
    def agrees(self) -> bool:
        ratio = self.checked_ratio
        return ratio is not None and abs(ratio - 1) <= AGREE

    def to_json(self) -> dict:
        return {"op": self.op, "shapes": self.shapes, "kind": self.kind, "limit": self.limit, "kernels": list(self.kernels),
                "model_flop": clean(self.model_flop), "ncu_flop": clean(self.ncu_flop), "model_bytes": clean(self.model_bytes),
                "ncu_bytes": clean(self.ncu_bytes), "trace_ns": clean(self.trace_ns), "ncu_ns": clean(self.ncu_ns),
                "flop_ratio": clean(self.flop_ratio), "bytes_ratio": clean(self.bytes_ratio), "flops_rate_ratio": clean(self.flops_rate_ratio),
                "bytes_rate_ratio": clean(self.bytes_rate_ratio), "checked": self.checked, "agrees": self.agrees, "why": list(self.why)}


def _tile_excess(kernel_names: list[str], shapes: str) -> tuple[float, float] | None:
    """How much more than an m x n product a GEMM kernel computes with its tiles (its name's ``MxN`` tile), as a ratio,
    for each way the tile may lie on the product; None where the name or the shapes do not say."""
    sizes = re.match(r"(\d+)x(\d+) @ (\d+)x(\d+)", shapes)
    tile = next((_TILE.search(n) for n in kernel_names if _TILE.search(n)), None)
    if sizes is None or tile is None:
        return None
    m, n = int(sizes.group(1)), int(sizes.group(4))
    tm, tn = int(tile.group(1)), int(tile.group(2))
    return tuple(math.ceil(m / a) * a * math.ceil(n / b) * b / (m * n) for a, b in ((tm, tn), (tn, tm)))


def why(check: OpCheck) -> tuple[str, ...]:
    """Which of model and ncu is right where they differ by more than AGREE, and why, from the counters."""
    out = []
    f = check.flop_ratio
    if f is not None and abs(f - 1) > AGREE / 3:
        if check.kind in counts.MEMORY_KINDS:
            out.append(f"FLOPs: the model counts {check.model_flop:.3g} by convention (one an element, or a fixed number for a "
                       f"normalisation); ncu counts the {check.ncu_flop:.3g} floating-point instructions the kernel ran (a transcendental "
                       "function is several): for this memory-bound op the bytes decide, not the FLOPs")
        elif f < 1:
            excess = [e for e in (_tile_excess(list(check.kernels), check.shapes) or ()) if abs(e * f - 1) < 0.005]
            tiles = f" (its tiles cover {excess[0]:.4f}x the product)" if excess else ""
            out.append(f"FLOPs: ncu counts {1 / f:.3f}x the model's: the tensor cores also computed the tiles past the matrix's edge or "
                       f"the masked diagonal blocks{tiles}; ncu's count is the work done, the model's the work the op needs")
        else:
            out.append(f"FLOPs: the model counts {f:.3f}x ncu's: ncu did not see all of the op's arithmetic in these kernels")
    b = check.bytes_ratio
    if b is not None and abs(b - 1) > AGREE:
        if b < 1:
            out.append(f"bytes: DRAM moved {1 / b:.2f}x the op's minimal bytes: the kernel fetched its operands more than once "
                       f"(tiles re-read from DRAM); ncu's count is the traffic, the model's the least any kernel must move")
        else:
            hit = f" (L2 hit rate {check.l2_hit_pct:.0f}%)" if check.l2_hit_pct is not None else ""
            out.append(f"bytes: DRAM moved {b:.2f}x less than the op's minimal bytes: some of its data was served by L2{hit} or its "
                       "output was still in L2 when it ended; the minimal bytes are right for a cold L2, ncu's for this launch")
    d = check._ratio(check.ncu_ns, check.trace_ns)
    if d is not None and abs(d - 1) > AGREE / 3:
        out.append(f"time: the kernels took {d:.2f}x as long under ncu as in the trace (ncu flushes the caches before each kernel and "
                   "replays it)")
    return tuple(out)


def check(limits, data, profile_frame, mangled: dict[int, str], nth_launch: int) -> list[OpCheck]:
    """Each op of ``limits`` (OpLimits of ``data``, a capture with mangled kernel names: nsys) whose kernels ncu profiled,
    checked. ``profile_frame``: the report's Profile frame; ``mangled``: result ID -> mangled name; ``nth_launch``: the
    launch of each kernel (by mangled name, grid and block, counted from the program's start) ncu profiled, as ``--top``
    chose it: the same launch in the capture tells which op it was (its name, recorded shapes and forward op)."""
    from ncuwrap.timeline.launched_from import op_rows
    from ncuwrap.timeline.steps import api_starts, categories_of, launch_time

    kernels = data.kernels
    mangled_col = categories_of(kernels["mangled"] if "mangled" in kernels else kernels["demangled"])
    dims = np.stack([np.asarray(kernels[c], dtype=np.int64) for c in ("gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ")], axis=1)
    order = np.argsort(launch_time(kernels, api_starts(data)), kind="stable")
    by_key: dict[tuple, list[int]] = {}
    for i in order.tolist():
        by_key.setdefault((str(mangled_col[i]), tuple(dims[i, :3].tolist()), tuple(dims[i, 3:].tolist())), []).append(i)
    ops = data.ops
    names = categories_of(ops["name"]) if ops is not None else None
    rows_by_signature = {(r.op, r.inputs, r.forward_op): r for r in limits.rows}
    profiled: dict[int, dict] = {}  # OpRow index -> key -> record
    for rec in profile_frame.to_dict("records"):
        key = (str(mangled.get(int(rec["launch_id"]), rec.get("mangled_name") or rec["name"])), _dims(rec["grid"])[:3], _dims(rec["block"])[:3])
        launches = by_key.get(key, [])
        if len(launches) < nth_launch or names is None:
            continue
        at = launches[nth_launch - 1]
        traced = op_rows(data, kernels.rows(np.array([at])))
        op, fwd = int(traced.op[0]), int(traced.forward_op[0])
        if op < 0:
            continue
        signature = (str(names[op]), ops["shapes"][op], str(names[fwd]) if fwd >= 0 else None)
        row = rows_by_signature.get(signature)
        if row is not None:
            profiled.setdefault(limits.rows.index(row), {})[key] = rec
    out = []
    for index, recs in sorted(profiled.items()):
        out.append(_check_row(limits.rows[index], recs, mangled_col, dims))
    return [c for c in out if c is not None]


def _check_row(row, recs: dict, mangled_col, dims) -> OpCheck | None:
    """``row`` (an OpRow) against ncu's records of its kernels (key -> record), a call of it; None where they cover less
    than COVERED of its time."""
    keys = [(str(mangled_col[i]), tuple(dims[i, :3].tolist()), tuple(dims[i, 3:].tolist())) for i in row.rows.tolist()]
    hit = np.array([k in recs for k in keys], dtype=bool)
    covered = float(row.ns[hit].sum())
    if not row.time_ns or covered < COVERED * row.time_ns:
        return None
    per_call: dict[tuple, float] = {}
    for k, h in zip(keys, hit.tolist()):
        if h:
            per_call[k] = per_call.get(k, 0.0) + 1.0 / row.calls
    got = {k: ncu_counts(recs[k]) for k in per_call}

    def total(field):
        values = [getattr(got[k], field) for k in got]
        return None if any(v is None for v in values) else sum(v * per_call[k] for k, v in zip(got, values))

    hits = [got[k].l2_hit_pct for k in got if got[k].l2_hit_pct is not None]
    result = OpCheck(op=row.op, shapes=row.shapes, kind=row.kind, limit=row.limit, kernels=tuple(sorted({str(recs[k]["name"]) for k in got})),
                     model_flop=row.flop / row.calls, ncu_flop=total("flop"),
                     model_bytes=row.bytes / row.calls if row.bytes is not None else None, ncu_bytes=total("dram_bytes"),
                     trace_ns=covered / row.calls, ncu_ns=total("duration_ns"), l2_hit_pct=min(hits) if hits else None, why=())
    return _with_why(result)


def _dims(value) -> tuple[int, ...]:
    """A launch's grid or block as ncu's frame holds it ("(32, 64, 1)" or a tuple) as integers; () where unreadable."""
    if isinstance(value, str):
        value = re.findall(r"-?\d+", value)
    try:
        return tuple(int(v) for v in value or ())
    except (TypeError, ValueError):
        return ()


def _with_why(result: OpCheck) -> OpCheck:
    from dataclasses import replace

    return replace(result, why=why(result))
