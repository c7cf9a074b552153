"""Each op's kernels over the steady steps, its counted work, and the unit it runs on: :func:`measure` makes
the :class:`~ncuwrap.timeline.oplimits.model.OpLimits` of a capture.

- **Which op a kernel is**: the innermost op enclosing its launch on the launching thread
  (:func:`ncuwrap.timeline.launched_from.op_rows`); a backward op keeps the forward op its autograd node was
  made by (the sequence number pairs them), shown beside it. Kernels launched outside any op, or replayed
  from a CUDA graph, are counted as not modelled.
- **Which ops are one row**: the same op name with the same recorded inputs (and forward op): their calls
  over the steady steps are summed, work and kernel time.
- **Which dtype**: the one recorded (a PyTorch profiler trace); with nsys's sizes alone, the one the op's
  kernels' names say (:func:`kernel_dtype`: cuBLAS/cuDNN/CUTLASS precision tokens, PyTorch's template
  arguments), else unknown.
- **Which unit**: a matrix product, convolution or attention runs on the tensor cores of its dtype
  (BF16, FP16, FP8); in FP32 it runs on the CUDA cores unless TF32 is seen: a kernel's name says tf32, a
  convolution was allowed TF32 (``allow_tf32=True``, cuDNN's default) and no kernel's name says plain FP32,
  or the op runs faster than the FP32 peak (no CUDA-core kernel can). The memory-bound ops' arithmetic is
  compared with the FP32 CUDA cores, their bytes with HBM.
- **Chains** (for fusion): runs of memory-bound modelled ops launched one after another, no other kernel
  between them, cut where no value crosses (nsys's dataflow) or else at each step's start
  (:class:`~ncuwrap.timeline.oplimits.model.Chain`).
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

from ncuwrap.core import peaks as peak_units
from ncuwrap.core.numbers import distinct
from ncuwrap.timeline.launched_from import enclosing, is_backward, op_rows
from ncuwrap.timeline.oplimits import counts, dataflow, remedies
from ncuwrap.timeline.oplimits.advice import advise, gemm_kernel
from ncuwrap.timeline.oplimits.inputs import Tensor, parse
from ncuwrap.timeline.oplimits.model import (ON_CHIP_ROW, STEADY, WINDOW, Chain, Escape, OpLimits, OpRow, OutsideInput, UnknownMask,
                                             Unmodelled)
from ncuwrap.timeline.launches import active_window, api_starts, categories_of, launch_time

_UNIT_OF_DTYPE = {"bf16": peak_units.BF16_TENSOR, "fp16": peak_units.FP16_TENSOR, "fp8_e4m3": peak_units.FP8_TENSOR,
                  "fp8_e5m2": peak_units.FP8_TENSOR}
# Precision in a kernel's name, strongest evidence first: cuBLAS/cuDNN/CUTLASS tokens, then PyTorch's template
# arguments (a bf16 reduce kernel names float too, its accumulator).
_NAME_DTYPES = (
    ("fp8_e4m3", re.compile(r"e4m3|e5m2|fp8|_qqt", re.I)),
    ("bf16", re.compile(r"bf16|bfloat16|c10::BFloat16", re.I)),
    ("fp16", re.compile(r"f16f16|fp16|hgemm|h1688|h16816|c10::Half|__half\b", re.I)),
    ("tf32", re.compile(r"tf32", re.I)),
    ("fp32", re.compile(r"sgemm|f32f32_f32f32|<float\b|\(float\)|\bfloat,|\bfloat>", re.I)),
    ("fp64", re.compile(r"dgemm|<double\b|\bdouble,|\bdouble>", re.I)),
    *((f"{n}-byte", re.compile(rf"OpaqueType<(?:\(unsigned int\))?{n}u?>")) for n in (1, 2, 4, 8, 16)),
)
_PLAIN_FP32 = re.compile(r"sgemm|f32f32_f32f32|_ffma_", re.I)  # a CUDA-core FP32 GEMM, by its name
# cuBLAS's nvjet kernels name their types in one word after the architecture: A and B, compute, D ("tst": bf16 in,
# fp32 compute, bf16 out) or A, B, C, compute, D ("qqtst": fp8 e4m3 A and B, bf16 C and D). The letters read here
# are those the H200 captures show with their dtypes recorded (tests/data/h200_ncuwrap/op_limits).
_NVJET = re.compile(r"^nvjet_(?:sm\d+_)?([a-z]{3}|[a-z]{5})_")
_NVJET_TYPES = {"t": "bf16", "q": "fp8_e4m3", "s": "fp32"}


def gemm_types(name: str) -> tuple[str, str] | None:
    """(input dtype, output dtype) of a cuBLAS nvjet kernel by its name; None for another kernel or letters not read here."""
    found = _NVJET.match(name)
    if found is None:
        return None
    word = found.group(1)
    a, d = _NVJET_TYPES.get(word[0]), _NVJET_TYPES.get(word[-1])
    return (a, d) if a and d else None


def kernel_dtype(name: str) -> str | None:
    """The precision a kernel's name says ("tf32" for a TF32 tensor-core kernel; "2-byte" where it says only the size of
    its elements, PyTorch's OpaqueType<2>), None where it says none."""
    types = gemm_types(name)
    if types is not None:
        return types[0]
    return next((dtype for dtype, pattern in _NAME_DTYPES if pattern.search(name)), None)


def _shown(name: str) -> str:
    return name if len(name) <= 60 else name[:57] + "..."


def unit_of(work: counts.Work, kernel_names: list[str], time_ns: int, peaks: peak_units.Peaks, dtype_how: str) -> tuple[str | None, str]:
    """The compute unit ``work`` runs on, and how that is known."""
    if work.kind not in counts.TENSOR_KINDS:
        return peak_units.FP32, "a memory-bound op: its arithmetic runs on the CUDA cores"
    dtype = work.dtype
    if dtype in _UNIT_OF_DTYPE:
        return _UNIT_OF_DTYPE[dtype], f"{dtype} inputs ({dtype_how})"
    if dtype == "fp64":
        return None, "fp64: no FP64 peak is in the table"
    if dtype != "fp32":
        return None, "its dtype is unknown" if dtype is None else f"{dtype}: no peak is in the table"
    said = [n for n in kernel_names if kernel_dtype(n) == "tf32"]
    if said:
        return peak_units.TF32_TENSOR, f"fp32 inputs, and the kernel's name says tf32 ({_shown(said[0])})"
    plain = [n for n in kernel_names if _PLAIN_FP32.search(n)]
    if work.allow_tf32 and not plain:
        return peak_units.TF32_TENSOR, "fp32 inputs, and the op allowed TF32 (allow_tf32=True)"
    fp32 = peaks.of(peak_units.FP32)
    if fp32 and time_ns and work.flop / (time_ns * 1e-9) > fp32:
        return peak_units.TF32_TENSOR, "fp32 inputs at more FLOP/s than the FP32 CUDA cores' peak: only TF32 tensor cores run that fast"
    if plain:
        return peak_units.FP32, f"fp32 inputs, and the kernel's name says plain FP32 ({_shown(plain[0])})"
    return peak_units.FP32, "fp32 inputs; no kernel's name says tf32 and the rate is within the FP32 CUDA cores' peak"


def _hint(names: list[str], weights: list[int]) -> str | None:
    """The dtype most of a group's kernel time says (TF32 kernels take fp32 inputs)."""
    said: dict[str, int] = {}
    for name, w in zip(names, weights):
        dtype = kernel_dtype(name)
        if dtype is not None:
            dtype = "fp32" if dtype == "tf32" else dtype
            said[dtype] = said.get(dtype, 0) + w
    return max(sorted(said), key=lambda d: said[d]) if said else None


def measure(data, steps) -> OpLimits | None:
    """The op limits of ``data`` (a read capture) over its steady ``steps`` (ncuwrap.timeline.steps.Steps), or
    without steps over the window from the first GPU work's launch to the last one's end (one "step"); None
    without recorded shapes."""
    ops = data.ops
    if ops is None or "shapes" not in ops or not (ops["shapes"].codes >= 0).any():
        return None
    kernels = data.kernels
    launched = launch_time(kernels, api_starts(data))
    if steps is not None:
        lo, hi = steps.steady_launch_span
        starts = np.array([r.start_ns for r in steps.steady], dtype=np.int64)
        count, step_ns, scope = len(steps.steady), steps.mean_period_ns, STEADY
    else:
        span = active_window(data)
        if span is None:
            return None
        lo, hi = span[0], span[1] + 1
        starts = np.array([lo], dtype=np.int64)
        count, step_ns, scope = 1, float(span[1] - span[0]), WINDOW
    step_total = count * step_ns
    window = np.flatnonzero((launched >= lo) & (launched < hi))
    if not window.size:
        return None
    k = kernels.rows(window)
    dur = np.asarray(k["end"], dtype=np.int64) - np.asarray(k["start"], dtype=np.int64)
    traced = op_rows(data, k)
    names = categories_of(ops["name"])
    shapes = ops["shapes"]
    op = traced.op
    has = op >= 0
    name_code = np.where(has, names.codes[np.clip(op, 0, None)], -1)
    shape_code = np.where(has, shapes.codes[np.clip(op, 0, None)], -1)
    fwd = traced.forward_op
    fwd_code = np.where(fwd >= 0, names.codes[np.clip(fwd, 0, None)], -1)
    keys = np.stack([name_code, shape_code, fwd_code], axis=1)
    groups, group = np.unique(keys, axis=0, return_inverse=True)
    group = group.ravel()
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(groups.shape[0] + 1))
    kernel_names = categories_of(k["demangled"])
    peaks = peak_units.peaks(data.gpu if data.gpu is not None else peak_units.DeviceFacts(name=data.device))
    full = None

    rows, unmodelled, work_of, masks, inputs_of = [], {}, {}, {}, {}
    readers = dataflow.Readers(data)  # nsys's dataflow, sorted on its first use
    for g in range(groups.shape[0]):
        members = order[bounds[g]:bounds[g + 1]]
        name_c, shape_c, fwd_c = (int(v) for v in groups[g])
        time_ns = int(dur[members].sum())
        calls = int(np.unique(op[members]).size) if name_c >= 0 else 0
        if name_c < 0:
            why = "replayed from a CUDA graph, or its launch is not traced: no op is known" if (traced.call[members] < 0).any() \
                else "launched outside any PyTorch op"
            _add(unmodelled, "(no op)", why, calls, members.size, time_ns)
            continue
        name = str(names.categories[name_c])
        text = shapes.categories[shape_c] if shape_c >= 0 else None
        inputs = parse(text)
        full = full or (inputs is not None and inputs.full)
        codes, weights = np.unique(kernel_names.codes[members], return_inverse=True)
        weight = np.bincount(weights.ravel(), weights=dur[members]).astype(np.int64)
        k_names = [str(kernel_names.categories[c]) for c in codes.tolist()]
        hint = _hint(k_names, weight.tolist())  # for tensors whose dtype is not recorded (nsys; a list's in any trace)
        facts = _facts(name, inputs, k_names, data, np.unique(op[members]), int(fwd[members[0]]), readers)
        work = counts.count(name, inputs, hint, facts)
        if work is None or isinstance(work, counts.NotModelled):
            if work is None:
                why = f"launched by autograd's {name} outside any op" if is_backward(name) else "no formula for this op"
            else:
                why = work.reason
                if work.if_causal is not None and work.if_full is not None:
                    _add_mask(masks, name, calls, time_ns, work.if_causal.flop * calls, work.if_full.flop * calls)
            _add(unmodelled, name, why, calls, members.size, time_ns)
            continue
        recorded = work.dtype is not None and inputs.full and all(t.dtype for t in inputs.tensors())
        dtype_how = "recorded" if recorded else "the kernels' names" if work.dtype is not None else "unknown"
        unit, unit_how = unit_of(work, k_names, time_ns, peaks, dtype_how)
        main = gemm_kernel(k_names, weight.tolist()) if work.gemm is not None else None
        kernel, grid = (k_names[main], _grid(k, members[weights.ravel() == main])) if main is not None else (None, None)
        row = OpRow(op=name, shapes=work.shapes, kind=work.kind, dtype=work.dtype, dtype_how=dtype_how,
                    forward_op=str(names.categories[fwd_c]) if fwd_c >= 0 else None, calls=calls, kernels=int(members.size),
                    time_ns=time_ns, flop=work.flop * calls, bytes=work.bytes * calls if work.bytes is not None else None,
                    unit=unit, unit_how=unit_how, peak_flops=peaks.of(unit) if unit else None, peak_bytes_per_s=peaks.dram_bytes_per_s,
                    share_pct=100.0 * time_ns / step_total if step_total else 0.0, weights=work.weights, weight_tensors=work.weight_tensors,
                    inputs=text, written=work.written * calls if work.written is not None and work.bytes is not None else None, rows=window[members],
                    ns=dur[members], gemm=work.gemm, kernel=kernel, grid=grid)
        rows.append(row)
        work_of[g] = work
        inputs_of[g] = (inputs, hint, name)  # what a fused chain reads of this op's inputs is sized as its count sizes them
    rows.sort(key=lambda r: (-r.time_ns, r.op, r.shapes))
    gone = sorted(unmodelled.values(), key=lambda u: (-u["time_ns"], u["op"], u["reason"]))
    unmodelled_rows = tuple(Unmodelled(op=u["op"], reason=u["reason"], calls=u["calls"], kernels=u["kernels"], time_ns=u["time_ns"],
                                       share_pct=100.0 * u["time_ns"] / step_total if step_total else 0.0) for u in gone)
    unknown_masks = tuple(UnknownMask(op=op, calls=m[0], time_ns=m[1], flop_causal=m[2], flop_full=m[3],
                                      share_pct=100.0 * m[1] / step_total if step_total else 0.0)
                          for op, m in sorted(masks.items(), key=lambda kv: (-kv[1][1], kv[0])))
    tf32 = next((r.unit_how for r in rows if r.unit == peak_units.TF32_TENSOR), None)
    ctx = _context(data, kernels, launched, lo, hi, step_ns if steps is not None else 0.0, window, groups, names, shapes)
    chains = _chains(ctx, launched[ctx.rows], np.concatenate([dur, ctx.dur]), np.concatenate([group, ctx.group]),
                     np.concatenate([op, ctx.op]), work_of, np.append(starts, hi), step_ns, data, inputs_of)
    shapes_from = ("the PyTorch profiler trace (record_shapes: sizes, dtypes, strides, values)" if full
                   else "nsys's op ranges (autograd-shapes-nvtx: sizes only; dtypes from the kernels' names)")
    limits = OpLimits(steps=count, step_ns=step_ns, peaks=peaks, shapes_from=shapes_from, rows=tuple(rows),
                      unmodelled=unmodelled_rows, kernel_ns=int(dur.sum()), chains=chains, tf32=tf32, scope=scope, unknown_masks=unknown_masks,
                      advice=advise(tuple(rows), int(dur.sum()), peaks.sm_count))
    limits = dataclasses.replace(limits, edits={remedy: remedies.kernel_edits(limits, remedy) for remedy in remedies.REMEDIES})
    predicted = (remedies.predict(limits, remedy) for remedy in remedies.REMEDIES)
    return dataclasses.replace(limits, predictions=tuple(p for p in predicted if p is not None))


def _grid(k, members: np.ndarray) -> tuple[int, int, int] | None:
    """The grid most of ``members`` (rows of the window's kernels ``k``) were launched with; None where it is not recorded."""
    if not members.size:
        return None
    dims = np.stack([np.asarray(k[c], dtype=np.int64)[members] for c in ("gridX", "gridY", "gridZ")], axis=1)
    grids, counts_of = np.unique(dims, axis=0, return_counts=True)
    grid = tuple(int(g) for g in grids[int(np.argmax(counts_of))])
    return grid if all(g > 0 for g in grid) else None


_CONV_FORWARD = ("aten::convolution", "aten::_convolution", "aten::cudnn_convolution")


_REDUCTIONS = frozenset(n for n, counter in counts.COUNTERS.items() if counter is counts.reduction)
_SOFTMAX_LAST_DIM = re.compile(r"cunn_SoftMax|softmax_warp_")  # PyTorch's softmax kernels over the last dimension (not cunn_SpatialSoftMax*)


def _facts(name: str, inputs, kernel_names: list[str], data, calls: np.ndarray, forward_row: int,
           readers: dataflow.Readers | None = None) -> counts.KernelFacts:
    """What the op's kernels, its paired ops and the ops that read its results say that sizes alone (nsys) do not:
    ``calls`` are its calls' rows in the ops table, and ``forward_row`` the forward op of the first one's backward node
    (-1: none)."""
    row = int(calls[0])
    outputs = {t[1] for t in map(gemm_types, kernel_names) if t is not None}
    out_dtype = outputs.pop() if len(outputs) == 1 else None
    if inputs is None or inputs.full:
        return counts.KernelFacts(out_dtype=out_dtype)
    grads = None
    if name == "aten::convolution_backward":
        dgrad, wgrad = (any(word in n for n in kernel_names) for word in ("dgrad", "wgrad"))
        grads = (dgrad, wgrad, False) if dgrad or wgrad else None
    if name in _CONV_FORWARD:
        output = _backward_gradient(data, row)
    elif name in _REDUCTIONS:
        output = (readers or dataflow.Readers(data)).output_sizes(calls)
    else:
        output = None
    forward = parse(data.ops["shapes"][forward_row]) if forward_row >= 0 else None
    last_dim = bool(kernel_names) and all(_SOFTMAX_LAST_DIM.search(n) for n in kernel_names) if "softmax" in name else False
    sizes = [t.dims for t in inputs.tensors() if t.dims]
    # A tensor passed twice has its sizes twice: only then are the links looked up.
    same = (readers or dataflow.Readers(data)).same_inputs(calls, inputs) if len(set(sizes)) < len(sizes) else frozenset()
    return counts.KernelFacts(out_dtype=out_dtype, grads=grads, output=output, forward=forward, last_dim=last_dim, same=same)


def _backward_gradient(data, row: int) -> tuple[int, ...] | None:
    """A forward convolution's output sizes, as its backward's gradient has them: the forward op enclosing ``row`` with
    a sequence number, the first backward node after it with that number, and the convolution_backward inside it."""
    ops = data.ops
    start, end, tid, seq = (np.asarray(ops[c], dtype=np.int64) for c in ("start", "end", "tid", "seq"))
    names = categories_of(ops["name"])
    backward = names.test(is_backward)
    numbered = np.flatnonzero(~backward & (seq >= 0))
    outer = enclosing(start[numbered], end[numbered], tid[numbered], start[row:row + 1], tid[row:row + 1])[0]
    if outer < 0:
        return None
    number = seq[numbered[outer]]
    nodes = np.flatnonzero(backward & (seq == number) & (start > start[row]))
    if not nodes.size:
        return None
    node = nodes[np.argmin(start[nodes])]
    inside = np.flatnonzero((names == "aten::convolution_backward") & (tid == tid[node]) & (start >= start[node]) & (end <= end[node]))
    if not inside.size:
        return None
    grad = parse(ops["shapes"][int(inside[0])])
    tensor = grad.tensor(0) if grad is not None else None
    return tensor.dims if tensor is not None else None


def _add(table: dict, op: str, reason: str, calls: int, kernels: int, time_ns: int) -> None:
    entry = table.setdefault((op, reason), {"op": op, "reason": reason, "calls": 0, "kernels": 0, "time_ns": 0})
    entry["calls"] += calls
    entry["kernels"] += kernels
    entry["time_ns"] += time_ns


def _add_mask(table: dict, op: str, calls: int, time_ns: int, flop_causal: int, flop_full: int) -> None:
    """Sums by op name of the attention whose mask is not recorded: calls, time, FLOPs under either mask."""
    entry = table.setdefault(op, [0, 0, 0, 0])
    for i, v in enumerate((calls, time_ns, flop_causal, flop_full)):
        entry[i] += v


@dataclasses.dataclass(frozen=True)
class _Context:
    """The kernels runs are formed over: the window's (``inside``) and those launched within one step before and after
    it, which a run crossing the window's edge continues into (``dur``, ``group`` and ``op`` of those outside it; a
    group -1 is an op call of no group the window has)."""

    rows: np.ndarray  # rows of data.kernels: the window's, then the others
    inside: np.ndarray
    dur: np.ndarray
    group: np.ndarray
    op: np.ndarray


def _context(data, kernels, launched: np.ndarray, lo: int, hi: int, period: float, window: np.ndarray, groups: np.ndarray,
             names, shapes) -> _Context:
    """The window's kernels and those launched within ``period`` of its edges, keyed as the window's groups are."""
    empty = np.zeros(0, dtype=np.int64)
    extra = np.flatnonzero(((launched >= lo - period) & (launched < lo)) | ((launched >= hi) & (launched < hi + period))) if period else empty
    inside = np.concatenate([np.ones(window.size, dtype=bool), np.zeros(extra.size, dtype=bool)])
    if not extra.size:
        return _Context(rows=window, inside=inside, dur=empty, group=empty, op=empty)
    k = kernels.rows(extra)
    dur = np.asarray(k["end"], dtype=np.int64) - np.asarray(k["start"], dtype=np.int64)
    traced = op_rows(data, k)
    op, fwd = traced.op, traced.forward_op
    keys = np.stack([np.where(op >= 0, names.codes[np.clip(op, 0, None)], -1), np.where(op >= 0, shapes.codes[np.clip(op, 0, None)], -1),
                     np.where(fwd >= 0, names.codes[np.clip(fwd, 0, None)], -1)], axis=1)
    _, code = np.unique(np.concatenate([groups, keys]), axis=0, return_inverse=True)
    code = code.ravel()
    group_of_code = np.full(int(code.max()) + 1, -1, dtype=np.int64)
    group_of_code[code[:len(groups)]] = np.arange(len(groups))
    return _Context(rows=np.concatenate([window, extra]), inside=inside, dur=dur, group=group_of_code[code[len(groups):]], op=op)


def _chains(ctx: _Context, launched: np.ndarray, dur: np.ndarray, group: np.ndarray, op: np.ndarray, work_of: dict,
            edges: np.ndarray, period: float, data, inputs_of: dict | None = None) -> tuple[Chain, ...]:
    """Runs of memory-bound modelled op calls launched one after another, of at least two calls, over the kernels of
    ``ctx`` (``launched``, ``dur``, ``group`` and ``op``: theirs), each counted for its calls inside the window. Where the
    capture records which op read which op's results (:func:`dataflow.reads`), a run is cut where no value made before
    the cut is read after it (a loop's iteration that reads only its inputs begins a run wherever its steps begin), with
    the values between its ops that ops outside it read and the values its later ops read that none of its ops made;
    elsewhere a run is cut at each step's start (``edges``: the steps' starts and the window's end). ``inputs_of``: each
    group's recorded inputs and dtype hint. By whole columns: a capture holds a million kernels."""
    groups = int(group.max()) + 1 if group.size else 0
    fusable_group = np.zeros(groups + 1, dtype=bool)  # the last for group -1, a context kernel's op the window has not
    bytes_of, read_of, written_of = (np.zeros(groups + 1, dtype=np.int64) for _ in range(3))
    for g, work in work_of.items():
        if work.kind in counts.MEMORY_KINDS and work.bytes is not None and work.written is not None:
            fusable_group[g] = True
            bytes_of[g], read_of[g], written_of[g] = work.bytes, work.read, work.written
    order = np.lexsort((ctx.rows, launched))
    fusable = fusable_group[group[order]]
    if not fusable.any():
        return ()
    flow = dataflow.reads(data)  # only where there are runs: the whole capture's dataflow is resolved for them
    # A run starts where a fusable kernel follows a kernel that is not, or (no dataflow) another step's.
    breaks = ~fusable[:-1]
    if flow is None:
        step = np.searchsorted(edges, launched, side="right")[order]
        breaks = breaks | (step[1:] != step[:-1])
    head = fusable & np.concatenate([[True], breaks])
    members = np.flatnonzero(fusable)
    kernel = order[members]
    calls = op[kernel]
    run_of = (np.cumsum(head) - 1)[members]
    if flow is not None:
        start = np.asarray(data.ops["start"], dtype=np.int64)
        run_of = _cut(run_of, calls, flow, start[flow.producer] >= start[flow.reader] - period)
    inside_kernel = ctx.inside[kernel]
    # Each op call's bytes once, though it may run several kernels: its first kernel in the run carries them.
    _, first = np.unique(np.stack([run_of, calls], axis=1), axis=0, return_index=True)
    first_of_call = np.zeros(members.size, dtype=bool)
    first_of_call[first] = True
    bounds = np.flatnonzero(np.concatenate([[True], run_of[1:] != run_of[:-1], [True]]))
    inside_call = np.zeros(len(data.ops), dtype=bool)
    inside_call[calls[inside_kernel]] = True
    runs = _Runs.of(len(data.ops), calls, group[kernel], bounds)
    escapes = _escapes(flow, data, runs, work_of, inside_call) if flow is not None else None
    outside = _outside_inputs(flow, data, runs, calls, inputs_of or {}, inside_call) if flow is not None else None
    children = _Children(flow, runs.run) if flow is not None else None
    out = []
    for index, (lo, hi) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist())):
        inside = inside_kernel[lo:hi]
        call_firsts = first_of_call[lo:hi]  # one a call of the run
        if not inside.any() or call_firsts.sum() < 2:
            continue
        these = kernel[lo:hi][inside]
        g = group[kernel[lo:hi]]
        run_calls = calls[lo:hi][call_firsts].tolist()
        extra = _passes([work_of[int(c)] for c in g[call_firsts].tolist()],
                        None if flow is None else lambda i: _row_again(run_calls[i], children, runs.group, inputs_of or {}))
        # What the run moves is counted for its calls inside the window: its first op's reads where that op is, its
        # last op's writes where that op is, and the passes after a reduction inside it.
        counted = call_firsts & inside
        ends = int(read_of[g[0]]) * bool(inside[0]) + int(written_of[g[-1]]) * bool(inside[-1])
        reread = sum(1 for i in extra if inside[np.flatnonzero(call_firsts)[i]])
        out.append(Chain(ops=int(counted.sum()), kernels=int(these.size), time_ns=int(dur[these].sum()),
                         bytes=int(bytes_of[g][counted].sum()), ends_bytes=ends, passes=1 + len(extra), rereads=int(read_of[g[0]]) * reread,
                         escapes=escapes.get(index, ()) if escapes is not None else None,
                         outside_inputs=outside.get(index, ()) if outside is not None else None, rows=ctx.rows[these], ns=dur[these]))
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class _Runs:
    """The runs' op calls, by op row: each call's run (its last kernel's; -1: in none), its group, whether it is its
    run's first call; and each run's last call."""

    run: np.ndarray
    group: np.ndarray
    first: np.ndarray
    last: np.ndarray  # by run

    @staticmethod
    def of(n: int, calls: np.ndarray, groups: np.ndarray, bounds: np.ndarray) -> _Runs:
        """Of ``n`` ops, the runs whose kernels' calls and groups are ``calls`` and ``groups`` in launch order, each
        run's kernels between two of ``bounds``."""
        index = np.searchsorted(bounds, np.arange(calls.size), side="right") - 1  # each kernel's run, 0..runs-1
        run = np.full(n, -1, dtype=np.int64)
        np.maximum.at(run, calls, index)  # a call's result is written at its last kernel's end
        group = np.full(n, -1, dtype=np.int64)
        group[calls] = groups
        first = np.zeros(n, dtype=bool)
        first[calls[bounds[:-1]]] = True
        return _Runs(run=run, group=group, first=first, last=calls[bounds[1:] - 1])


class _Children:
    """Which calls of its run read each run call's results (``flow``'s links within a run), by producer: sorted once.
    ``run``: each call's run, by op row."""

    def __init__(self, flow: dataflow.Reads, run: np.ndarray):
        made, read = run[flow.producer], run[flow.reader]
        within = (made >= 0) & (made == read) & (flow.producer != flow.reader)
        order = np.argsort(flow.producer[within], kind="stable")
        self._producers, self._readers = flow.producer[within][order], flow.reader[within][order]

    def of(self, call: int) -> list[int]:
        lo, hi = np.searchsorted(self._producers, [call, call + 1])
        return self._readers[lo:hi].tolist()


def _row_again(call: int, children: _Children, group_of_call: np.ndarray, inputs_of: dict) -> bool:
    """Whether an op of its run that uses ``call``'s result, itself or through the ops after it, reads a tensor as large
    as ``call``'s first input: a reduction's result brought back to its rows (a mean subtracted from them), which a fused
    kernel reads again after the reduction. A bias gradient's sum cast to fp32 uses only the reduced value."""
    mine = inputs_of.get(int(group_of_call[call]))
    row = mine[0].tensor(0) if mine is not None and mine[0] is not None else None
    if row is None or not row.dims:
        return True  # not known: taken as read again
    size = math.prod(row.dims)
    seen, todo = {call}, children.of(call)
    while todo:
        c = todo.pop()
        if c in seen:
            continue
        seen.add(c)
        theirs = inputs_of.get(int(group_of_call[c]))
        if theirs is None or theirs[0] is None or any(math.prod(t.dims) >= size for t in theirs[0].tensors() if t.dims):
            return True
        todo.extend(children.of(c))
    return False


def _cut(run_of: np.ndarray, calls: np.ndarray, flow: dataflow.Reads, recent: np.ndarray) -> np.ndarray:
    """``run_of`` (each run kernel's run, in launch order; ``calls`` their op calls) with each run cut between two of its
    calls where no value a call before makes is read by a call after (``flow``), and no value made within a step of its
    reads (``recent``, by read) is read on both sides: unconnected work, such as a loop's iterations, each reading only
    the loop's inputs, made before it. Two ops reading one value the step made (a bias gradient's sum and the
    activation's backward, both reading the product's gradient) stay one run: one fused kernel reads it once."""
    new_call = np.concatenate([[True], (calls[1:] != calls[:-1]) | (run_of[1:] != run_of[:-1])])
    position = np.cumsum(new_call) - 1  # each kernel's call, numbered along the runs
    at = np.full(int(max(calls.max(), flow.producer.max(initial=0), flow.reader.max(initial=0))) + 1, -1, dtype=np.int64)
    at[calls] = position
    run_at = np.full(int(position[-1]) + 1, -1, dtype=np.int64)
    run_at[position] = run_of
    made, read = at[flow.producer], at[flow.reader]
    # A gap after call j is crossed where a value made at or before j is read after it...
    link = (made >= 0) & (read > made)
    link[link] &= run_at[made[link]] == run_at[read[link]]
    lo, hi = [made[link]], [read[link]]
    # ...or where one made within a step is read on both sides of it.
    shared = np.flatnonzero((read >= 0) & recent)
    if shared.size:
        key = np.stack([run_at[read[shared]], flow.producer[shared], flow.output[shared]], axis=1)
        key_order = np.lexsort(key.T[::-1])
        key, positions = key[key_order], read[shared][key_order]
        first = np.flatnonzero(np.concatenate([[True], (key[1:] != key[:-1]).any(axis=1)]))
        lo.append(np.minimum.reduceat(positions, first))
        hi.append(np.maximum.reduceat(positions, first))
    cover = np.zeros(run_at.size + 1, dtype=np.int64)
    np.add.at(cover, np.concatenate(lo), 1)
    np.add.at(cover, np.concatenate(hi), -1)
    crossed = np.cumsum(cover)[:-1] > 0
    cut_before = np.concatenate([[False], ~crossed[:-1] & (run_at[1:] == run_at[:-1])])  # by call
    starts = new_call & (np.concatenate([[True], run_of[1:] != run_of[:-1]]) | cut_before[position])
    return np.cumsum(starts) - 1


def _escapes(flow: dataflow.Reads, data, runs: _Runs, work_of: dict, inside_call: np.ndarray) -> dict[int, tuple[Escape, ...]]:
    """The values each run (by its index among ``bounds``) makes that an op outside it reads: the outputs of its op
    calls but the last one's (written anyway) that ``flow`` has read by a call of no run or another run; one an op
    call and output, named by its first reader; made by a call inside the window (``inside_call``, by op row)."""
    made_in = runs.run[flow.producer]
    read_in = runs.run[flow.reader]
    leaves = np.flatnonzero((made_in >= 0) & (read_in != made_in) & (flow.producer != runs.last[np.clip(made_in, 0, None)])
                            & inside_call[flow.producer])
    if not leaves.size:
        return {}
    start = np.asarray(data.ops["start"], dtype=np.int64)
    # One an op call and output, its first reader's.
    leaves = leaves[np.lexsort((start[flow.reader[leaves]], flow.output[leaves], flow.producer[leaves]))]
    key = flow.producer[leaves], flow.output[leaves]
    new = np.concatenate([[True], (key[0][1:] != key[0][:-1]) | (key[1][1:] != key[1][:-1])])
    leaves = leaves[new]
    names = categories_of(data.ops["name"])
    made: dict[tuple[int, int, int], Escape] = {}  # one Escape a kind: a capture repeats them each step
    out: dict[int, list[Escape]] = {}
    for producer, output, reader in zip(flow.producer[leaves].tolist(), flow.output[leaves].tolist(), flow.reader[leaves].tolist()):
        g, name = int(runs.group[producer]), int(names.codes[reader])
        escape = made.get((g, output, name))
        if escape is None:
            work = work_of[g]
            escape = made[(g, output, name)] = Escape(op=str(names.categories[names.codes[producer]]), shapes=work.shapes, output=output,
                                                      bytes=work.output_bytes(output), reader=str(names.categories[name]))
        out.setdefault(int(runs.run[producer]), []).append(escape)
    return {run: tuple(found) for run, found in out.items()}


def _outside_inputs(flow: dataflow.Reads, data, runs: _Runs, calls: np.ndarray, inputs_of: dict,
                    inside_call: np.ndarray) -> dict[int, tuple[OutsideInput, ...]]:
    """The values each run (by its index among ``bounds``) reads in its op calls after the first that none of its calls
    made: a read ``flow`` resolves to a producer outside the run, or a tensor input (recorded with sizes; not the first
    input of an op that only writes it) ``flow`` names no producer of. One a value and run, by its first reader; a value
    the run's first call reads is in its ends already. Counted where that first reader is inside the window
    (``inside_call``, by op row); ``calls``: the runs' kernels' calls."""
    run_of_call, group_of_call, first_call = runs.run, runs.group, runs.first
    readers = distinct(calls)
    readers = readers[~first_call[readers] & inside_call[readers]]
    # The resolved reads: by a later call of a run, of a value no call of that run made.
    run = run_of_call[flow.reader]
    later = (run >= 0) & ~first_call[flow.reader]
    outside = np.flatnonzero(later & (run_of_call[flow.producer] != run))
    firsts = np.flatnonzero((run >= 0) & first_call[flow.reader])
    # The tensor inputs of the later calls that no read resolves: no producer named, or not one for sure.
    groups_n = int(group_of_call.max()) + 1
    flat, first_at, count_of = [], np.zeros(groups_n, dtype=np.int64), np.zeros(groups_n, dtype=np.int64)
    for g, (inputs, _, name) in inputs_of.items():
        if inputs is None or g >= groups_n:
            continue
        at = [i for i, a in enumerate(inputs.args) if isinstance(a, Tensor) and a.dims and not (i == 0 and name in dataflow.WRITE_ONLY)]
        first_at[g], count_of[g] = len(flat), len(at)
        flat.extend(at)
    width = 1 + max(max(flat, default=0), int(flow.input.max()) if len(flow) else 0)
    reader_group = group_of_call[readers]
    count = count_of[reader_group]
    reader_of = np.repeat(readers, count)
    within = np.arange(reader_of.size, dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
    position = np.asarray(flat, dtype=np.int64)[np.repeat(first_at[reader_group], count) + within] if reader_of.size else reader_of
    resolved = flow.reader.astype(np.int64) * width + flow.input.astype(np.int64)
    unnamed = ~np.isin(reader_of * width + position, resolved)
    reader_of, position = reader_of[unnamed], position[unnamed]
    start = np.asarray(data.ops["start"], dtype=np.int64)
    # One a value and run, its first reader's; a value the run's first call reads counts there.
    outside = outside[np.lexsort((start[flow.reader[outside]], flow.output[outside], flow.producer[outside], run[outside]))]
    key = np.stack([run[outside], flow.producer[outside], flow.output[outside]], axis=1)
    new = np.concatenate([[True], (key[1:] != key[:-1]).any(axis=1)]) if outside.size else np.zeros(0, dtype=bool)
    outside, key = outside[new], key[new]
    inside = inside_call[flow.reader[outside]]  # counted where its first reader in the run is inside the window
    outside, key = outside[inside], key[inside]
    seen = {(int(r), int(p), int(o)) for r, p, o in zip(run[firsts], flow.producer[firsts], flow.output[firsts])}
    names = categories_of(data.ops["name"])
    made: dict[tuple, OutsideInput] = {}  # one record a kind: a capture repeats them each step
    out: dict[int, list] = {}

    def add(r: int, reader: int, at: int, producer: int | None) -> None:
        g = int(group_of_call[reader])
        inputs, hint, _ = inputs_of[g]
        tensor = inputs.tensor(at)
        if 0 in tensor.dims:
            return  # no element to read: an out= argument the op resizes (abs's)
        kind = (g, at, int(names.codes[producer]) if producer is not None else -1)
        record = made.get(kind)
        if record is None:
            record = made[kind] = OutsideInput(op=str(names.categories[names.codes[producer]]) if producer is not None else None,
                                               sizes="x".join(map(str, tensor.dims)), bytes=counts.tensor_bytes(tensor, hint),
                                               reader=str(names.categories[names.codes[reader]]))
        out.setdefault(r, []).append(record)

    for (r, p, o), i in zip(key.tolist(), outside.tolist()):
        if (r, p, o) not in seen:
            add(r, int(flow.reader[i]), int(flow.input[i]), p)
    for reader, at in zip(reader_of.tolist(), position.tolist()):
        add(int(run_of_call[reader]), reader, at, None)
    return {r: tuple(found) for r, found in out.items()}


_REDUCING = (counts.REDUCTION, counts.SOFTMAX, counts.NORM)


def _passes(works: list, row_again=None) -> list[int]:
    """The passes over a chain's inputs (its op calls' work, in launch order) a fused kernel makes after its first, by
    the call that makes each: one for each reduction over rows longer than :data:`ON_CHIP_ROW` whose result the ops
    after it use (a softmax or a normalisation uses its own: it reads its row again to scale it). ``row_again(i)``:
    whether the ops after call ``i`` bring its result back to its rows (:func:`_row_again`; None: not known, taken as
    so wherever an op follows the reduction)."""
    extra = []
    for i, work in enumerate(works):
        if work.kind not in _REDUCING or work.row is None or work.row <= ON_CHIP_ROW:
            continue
        if work.kind == counts.REDUCTION and (i == len(works) - 1 or (row_again is not None and not row_again(i))):
            continue  # its result is the chain's output, or only the reduced value is used: nothing reads the row again
        extra.append(i)
    return extra
