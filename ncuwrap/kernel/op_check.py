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
from ncuwrap.timeline.oplimits.advice import kernel_tile

COVERED = 0.8  # the share of an op's kernel time ncu must have profiled for the op to be checked
AGREE = 0.15  # model and ncu agree within this (a ratio within 1 +/- AGREE)
FLOP_EXPLAINED = 0.005  # FLOP counts are exact where they agree: a difference past this is explained
TENSOR_OPS = ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", "sm__ops_path_tensor_src_fp16.sum", "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
              "sm__ops_path_tensor_src_fp8_sparsity_off.sum", "sm__ops_path_tensor_src_fp8.sum", "sm__ops_path_tensor_src_fp64.sum",
              "sm__ops_path_tensor_src_int8.sum")
SASS = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
DRAM = ("dram__bytes_read.sum", "dram__bytes_write.sum")
DURATION = "gpu__time_duration.sum"
L2_HIT = "lts__t_sector_hit_rate.pct"


@dataclass(frozen=True)
class NcuCounts:
    """One profiled launch's counters: FLOPs (tensor-core and SASS), DRAM bytes, duration; None where not collected."""

    tensor_flop: float | None
    sass_flop: float | None
    dram_read: float | None
    dram_write: float | None
    duration_ns: float | None
    l2_hit_pct: float | None = None

    @property
    def dram_bytes(self) -> float | None:
        return self.dram_read + self.dram_write if self.dram_read is not None and self.dram_write is not None else None

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
    return NcuCounts(tensor_flop=tensor_flop, sass_flop=sass_flop, dram_read=_value(row, DRAM[0]), dram_write=_value(row, DRAM[1]),
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
    model_written: float | None  # of model_bytes, the outputs written
    ncu_read: float | None
    ncu_write: float | None
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
    tile = next((t for t in map(kernel_tile, kernel_names) if t is not None), None)
    if sizes is None or tile is None:
        return None
    m, n = int(sizes.group(1)), int(sizes.group(4))
    tm, tn = tile.rows, tile.cols
    return tuple(math.ceil(m / a) * a * math.ceil(n / b) * b / (m * n) for a, b in ((tm, tn), (tn, tm)))


def _mb(value: float) -> str:
    return f"{value / 1e6:,.1f} MB"


def why(check: OpCheck) -> tuple[str, ...]:
    """Which of model and ncu is right where they differ by more than AGREE, and why, from the counters."""
    out = []
    f = check.flop_ratio
    if f is not None and abs(f - 1) > FLOP_EXPLAINED:
        if check.kind in counts.MEMORY_KINDS:
            out.append(f"FLOPs: the model counts {check.model_flop:.3g} by its convention for memory-bound ops (one an element, a fixed "
                       f"number for a normalisation); ncu counts {check.ncu_flop:.3g} from the instructions the kernel ran (an FFMA is "
                       "two, and an add done as a fused multiply-add is one; a transcendental function is several): for this op the bytes "
                       "decide, not the FLOPs")
        elif f < 1:
            excess = [e for e in (_tile_excess(list(check.kernels), check.shapes) or ()) if abs(e * f - 1) < 0.005]
            tiles = f" (its tiles cover {excess[0]:.4f}x the product)" if excess else ""
            out.append(f"FLOPs: ncu counts {1 / f:.3f}x the model's: the tensor cores also computed the tiles past the matrix's edge or "
                       f"the masked diagonal blocks{tiles}; ncu's count is the work done, the model's the work the op needs")
        else:
            out.append(f"FLOPs: the model counts {f:.3f}x ncu's: ncu did not see all of the op's arithmetic in these kernels")
    b = check.bytes_ratio
    if b is not None and abs(b - 1) > AGREE:
        out.append(_bytes_why(check, b))
    d = check._ratio(check.ncu_ns, check.trace_ns)
    if d is not None and abs(d - 1) > AGREE:
        out.append(f"time: the kernels took {d:.2f}x as long under ncu as in the trace (ncu flushes the caches before each kernel and "
                   "replays it)")
    return tuple(out)


def _bytes_why(check: OpCheck, ratio: float) -> str:
    """Why DRAM's bytes differ from the model's minimal bytes, reads and writes apart where both are known."""
    read = check.model_bytes - check.model_written if check.model_written is not None and check.model_bytes is not None else None
    parts = []
    if read is not None and check.ncu_read is not None:
        r = check.ncu_read / read if read else None
        if r is not None and r > 1 + AGREE:
            parts.append(f"DRAM reads {_mb(check.ncu_read)} for {_mb(read)} of inputs ({r:.2f}x): the kernel fetched its operands more than "
                         "once (tiles re-read from DRAM)")
        elif r is not None and r < 1 - AGREE:
            hit = f" (L2 hit rate {check.l2_hit_pct:.0f}%)" if check.l2_hit_pct is not None else ""
            parts.append(f"DRAM reads {_mb(check.ncu_read)} for {_mb(read)} of inputs: some were served by L2{hit}")
    if check.model_written is not None and check.ncu_write is not None and check.model_written:
        w = check.ncu_write / check.model_written
        if w < 1 - AGREE:
            parts.append(f"DRAM writes {_mb(check.ncu_write)} for {_mb(check.model_written)} of outputs: the rest was still in L2 "
                         "(write-back) when the kernel ended, written to DRAM after it")
    if not parts:
        parts.append(f"DRAM moved {1 / ratio:.2f}x the op's minimal bytes")
    return ("bytes: " + "; ".join(parts) + "; the minimal bytes are the least any kernel must move, ncu's the traffic of this launch")


@dataclass(frozen=True)
class Unchecked:
    """A profiled launch no op's check used, and why."""

    kernel: str
    why: str

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "why": self.why}


def kernel_key(name: str) -> str:
    """A kernel's name as both ncu's report (its function name) and a PyTorch profiler trace (``void f<...>(args)``) write
    an extern "C" or namespaced kernel's: without a leading ``void`` and the argument list."""
    name = name.strip()
    if name.startswith("void "):
        name = name[5:]
    depth = 0
    for i, ch in enumerate(name):
        if ch in "<[":
            depth += 1
        elif ch in ">]":
            depth -= 1
        elif ch == "(" and depth == 0 and i:
            return name[:i]
    return name


def _period(values: list) -> int:
    """The shortest period the sequence repeats with (its length where none)."""
    for p in range(1, len(values)):
        if all(values[i] == values[i + p] for i in range(len(values) - p)):
            return p
    return len(values)


def check(limits, data, profile_frame, mangled: dict[int, str], nth_launch: int, *, from_start: bool = True) -> tuple[list[OpCheck], list[Unchecked]]:
    """Each op of ``limits`` (OpLimits of ``data``) whose kernels ncu profiled, checked, and the profiled launches no check
    used. ``profile_frame``: the report's Profile frame; ``mangled``: result ID -> mangled name; ``nth_launch``: the
    launch of each kernel (by name, grid and block, counted from the program's start) ncu profiled, as ``--top`` chose it.
    That launch in the capture tells which op it was (its name, recorded shapes and forward op): the same launch where
    the capture holds the program from its start (``from_start``: nsys), else the launch at the same place in the
    sequence the kernel's launches repeat with (a profiler trace of the timed loop only: the iterations before it are
    taken to launch the same sequence). Kernels are named by mangled name where the capture has them (nsys), else by
    :func:`kernel_key` of both names (a PyTorch profiler trace writes demangled names only)."""
    from ncuwrap.timeline.launched_from import op_rows
    from ncuwrap.timeline.launches import api_starts, categories_of, launch_time

    kernels = data.kernels
    # A PyTorch profiler trace writes no mangled name (its reader fills the column with the demangled one).
    by_mangled = "mangled" in kernels and any(str(m).startswith("_Z") for m in categories_of(kernels["mangled"]).categories)
    names_col = categories_of(kernels["mangled"] if by_mangled else kernels["demangled"]).relabel(lambda n: n if by_mangled else kernel_key(n))
    dims = np.stack([np.asarray(kernels[c], dtype=np.int64) for c in ("gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ")], axis=1)
    order = np.argsort(launch_time(kernels, api_starts(data)), kind="stable")
    by_key: dict[tuple, list[int]] = {}
    for i in order.tolist():
        by_key.setdefault((str(names_col[i]), tuple(dims[i, :3].tolist()), tuple(dims[i, 3:].tolist())), []).append(i)
    ops = data.ops
    names = categories_of(ops["name"]) if ops is not None else None
    rows_by_signature = {(r.op, r.inputs, r.forward_op): i for i, r in enumerate(limits.rows)}
    profiled: dict[int, dict] = {}
    unchecked = []
    for rec in profile_frame.to_dict("records"):
        shown = str(rec["name"])
        name = str(mangled.get(int(rec["launch_id"]), rec.get("mangled_name") or shown)) if by_mangled else kernel_key(shown)
        key = (name, _dims(rec["grid"])[:3], _dims(rec["block"])[:3])
        launches = by_key.get(key, [])
        if not launches or names is None:
            why = ("the capture has no launch of it (by mangled name, grid and block)" if by_mangled else
                   "no launch of the trace has its name, grid and block (the trace writes demangled names only, and ncu's "
                   "demangling of a templated kernel differs from the trace's)")
            unchecked.append(Unchecked(shown, why))
            continue
        signatures = _signatures(data, kernels, launches, names, op_rows)
        if from_start:
            if len(launches) < nth_launch:
                unchecked.append(Unchecked(shown, f"the capture launched it {len(launches)} times, not {nth_launch}"))
                continue
            signature = signatures[nth_launch - 1]
        else:
            signature = signatures[(nth_launch - 1) % _period(signatures)]
        index = rows_by_signature.get(signature) if signature is not None else None
        if index is None:
            op = signature[0] if signature is not None else "no op"
            gone = next((u.reason for u in limits.unmodelled if u.op == op), "outside the steady steps' ops")
            unchecked.append(Unchecked(shown, f"its launch is of {op}, not modelled: {gone}"))
            continue
        profiled.setdefault(index, {})[key] = rec
    out = []
    for index, recs in sorted(profiled.items()):
        row = limits.rows[index]
        if row.limit is None:  # no FLOPs and no bytes known: neither rate has a peak to be checked against
            unchecked.append(Unchecked(", ".join(sorted(str(r["name"]) for r in recs.values())),
                                       f"{row.label} has no limit to check against: {_no_limit(row)}"))
            continue
        result = _check_row(row, recs, names_col, dims)
        if result is None:
            unchecked.append(Unchecked(", ".join(sorted(str(r["name"]) for r in recs.values())),
                                       f"the profiled kernels are less than {COVERED:.0%} of {limits.rows[index].label}'s time"))
        else:
            out.append(result)
    return out, unchecked


def _no_limit(row) -> str:
    """Why an op row has no limit: 'it counts no FLOPs, and its bytes are not known (its dtype: unknown)'."""
    flop = "its unit's peak is not known" if row.flop else "it counts no FLOPs"
    bytes_ = "HBM's peak is not known" if row.bytes is not None else f"its bytes are not known (its dtype: {row.dtype_how})"
    return f"{flop}, and {bytes_}"


def _signatures(data, kernels, launches: list[int], names, op_rows) -> list:
    """Each launch's op as (name, recorded shapes, forward op); None where it has no op."""
    traced = op_rows(data, kernels.rows(np.array(launches, dtype=np.int64)))
    ops = data.ops
    out = []
    for op, fwd in zip(traced.op.tolist(), traced.forward_op.tolist()):
        out.append(None if op < 0 else (str(names[op]), ops["shapes"][op], str(names[fwd]) if fwd >= 0 else None))
    return out


def _check_row(row, recs: dict, names_col, dims) -> OpCheck | None:
    """``row`` (an OpRow) against ncu's records of its kernels (key -> record), a call of it; None where they cover less
    than COVERED of its time."""
    keys = [(str(names_col[i]), tuple(dims[i, :3].tolist()), tuple(dims[i, 3:].tolist())) for i in row.rows.tolist()]
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
                     model_written=row.written / row.calls if row.written is not None else None, ncu_read=total("dram_read"),
                     ncu_write=total("dram_write"),
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
