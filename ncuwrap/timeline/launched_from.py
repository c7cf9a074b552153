"""Which op and which line of the user's Python code launched each hot kernel, and where the host's
time goes by user function: from the ``ops`` and ``frames`` tables of a capture
(:class:`~ncuwrap.timeline.model.TimelineData`; nsys fills ``ops`` from ``--pytorch=autograd-nvtx``,
a torch.profiler trace both). Nothing here is computed without them.

How a kernel is traced back, launch by launch (the launching CUDA call is found by the kernel's
correlation id in ``data.api``; its thread and start are the *launch*):

- **op**: the innermost op enclosing the launch on its thread;
- **stack at launch**: the user's innermost Python frame enclosing the launch on its thread. Frames of
  torch, site-packages, dist-packages, the Python standard library, ``<built-in ...>`` and
  ``<frozen ...>`` are skipped (:func:`user_frame`);
- **forward op of a backward kernel**: a launch inside a backward node (``AddmmBackward0``, an autograd
  thread's op with a sequence number) has no user frame on its thread. The forward op with the same
  sequence number (seq >= 0, not itself a backward node; the last to start before the backward node:
  PyTorch numbers a thread's ops in order, and a composite op shares its number with the inner op that
  takes it) gives the frame, taken at its start on its own thread;
- a kernel replayed from a CUDA graph was captured at another time: its launch says nothing of its op,
  and no capture read here records where the graph was captured, so it is **unknown**.

A kernel is launched many times, perhaps from several places: each launch gets (op, frame, how) and
the kernel shows the one that holds most of its time, with that share (``share_pct``).

Lines: a frame is named ``file(line): function`` as torch.profiler names it, and that line is the
first line of the function, not the line of the call (``line_is``).

Host time (:func:`host_time`): each instant of the window on the thread with the most Python frames
goes to the innermost user frame active then; the time of the library code it calls counts for it
(self time with the skipped frames folded into their user caller). The shares therefore add up to at
most 100% of the window, nothing counted twice.

Intervals on a thread nest (push/pop ranges, Python calls), so the innermost interval enclosing a
time is found level by level: the intervals of one nesting depth do not overlap, and a sorted search
per depth answers every query at once (:func:`enclosing`), with no Python object per event.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from dataclasses import dataclass

import numpy as np

from ncuwrap.timeline.events import Events
from ncuwrap.timeline.model import FIRST_LINE, HostTime, LaunchedFrom
from ncuwrap.timeline.launches import GRAPH_LAUNCH_PREFIXES, LaunchIndex, categories_of

STACK = "stack at launch"
BACKWARD = "forward op of a backward kernel"
GRAPH = "CUDA graph capture"  # not produced yet: no capture read here records where a graph was captured
UNKNOWN = "unknown"
VIA = (STACK, BACKWARD, UNKNOWN)
HOST_TOP = 10  # user functions listed in host_time
ATTRIBUTED = 10  # the top kernels traced back (Timeline.top_kernels' default)

_FRAME = re.compile(r"^(?P<file>.*)\((?P<line>\d+)\): (?P<function>.*)$", re.DOTALL)
_LIBRARIES = ("torch", "functorch", "triton")  # what a torch.profiler frame's path starts with inside torch's own code


# -- frames ----------------------------------------------------------------------------------------

def parse_frame(name: str) -> tuple[str, int, str] | None:
    """``gpt_model.py(15): forward`` -> ``("gpt_model.py", 15, "forward")``; None for a name without a line."""
    match = _FRAME.match(name)
    return (match.group("file"), int(match.group("line")), match.group("function")) if match else None


def user_frame(name: str) -> bool:
    """Whether a frame is the user's code: not torch's, an installed package's, the standard library's or
    the interpreter's. torch.profiler writes paths relative to site-packages or the standard library
    (``torch/nn/modules/module.py``, ``typing.py``), so a relative path is the library's when its first
    part is a standard-library module (``sys.stdlib_module_names``) or torch; a user file named like
    one (``queue.py``) is taken for the library's."""
    parsed = parse_frame(name)
    if parsed is None or parsed[0].startswith("<"):
        return False
    path = parsed[0].replace("\\", "/")
    parts = [p for p in path.split("/") if p]
    if not parts or any(p in ("site-packages", "dist-packages") for p in parts):
        return False
    if re.search(r"/lib(?:64)?/python3(?:\.\d+)?/", path):
        return False  # the standard library, by absolute path
    first = parts[0] if not path.startswith("/") else None
    if first is not None:
        module = first[:-3] if first.endswith(".py") else first
        if module in sys.stdlib_module_names or module.startswith(_LIBRARIES):
            return False
    return True


def is_backward(name: str) -> bool:
    """Whether an op is autograd's backward work (a node ``XBackward0``, ``AccumulateGrad``, the engine's
    ``autograd::engine::evaluate_function: ...``) rather than a forward op."""
    return name.startswith("autograd::") or "AccumulateGrad" in name or re.search(r"Backward\d*$", name) is not None


# -- intervals -------------------------------------------------------------------------------------

def enclosing(start: np.ndarray, end: np.ndarray, tid: np.ndarray, at: np.ndarray, at_tid: np.ndarray) -> np.ndarray:
    """For each query (time ``at``, thread ``at_tid``), the row of the innermost interval [start, end) of
    that thread enclosing it; -1 where none does. The intervals of a thread must nest."""
    out = np.full(at.size, -1, dtype=np.int64)
    if not start.size or not at.size:
        return out
    for thread in np.unique(at_tid).tolist():
        rows = np.flatnonzero(tid == thread)
        asked = np.flatnonzero(at_tid == thread)
        if rows.size:
            found = _innermost(start[rows], end[rows], at[asked])
            out[asked] = np.where(found >= 0, rows[np.clip(found, 0, None)], -1)
    return out


def _depths(s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The order of nested intervals by start (outer first) and each one's depth (0: enclosed by none)."""
    order = np.lexsort((-e, s))
    s, e = s[order], e[order]
    # Before an interval in that order: those enclosing it and those already ended.
    depth = np.arange(s.size) - np.searchsorted(np.sort(e), s, side="right")
    return order, np.maximum(depth, 0)


def parents(s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Each interval's innermost enclosing interval (-1: none), by row; the intervals must nest (one thread's)."""
    order, depth = _depths(s, e)
    parent = np.full(s.size, -1, dtype=np.int64)
    for level in range(1, int(depth.max()) + 1 if depth.size else 0):
        child = order[depth == level]
        up = order[depth == level - 1]
        pos = np.searchsorted(s[up], s[child], side="right") - 1  # the last interval one level up begun by its start
        ok = pos >= 0
        parent[child[ok]] = up[pos[ok]]
    return parent


def _innermost(s: np.ndarray, e: np.ndarray, at: np.ndarray) -> np.ndarray:
    order, depth = _depths(s, e)
    out = np.full(at.size, -1, dtype=np.int64)
    for level in range(int(depth.max()) + 1 if depth.size else 0):
        rows = order[depth == level]  # by start, and disjoint where the intervals nest
        pos = np.searchsorted(s[rows], at, side="right") - 1
        ok = pos >= 0
        hit = np.zeros(at.size, dtype=bool)
        hit[ok] = e[rows[pos[ok]]] > at[ok]
        out[hit] = rows[pos[hit]]
    return out


# -- kernels ---------------------------------------------------------------------------------------

@dataclass
class KernelOrigins:
    """Per kernel row: the op (a code into the ops' names), the forward op of a backward one, the user
    frame (a code into the frames' names), all -1 where unknown, and how (an index into VIA)."""

    op: np.ndarray
    forward_op: np.ndarray
    frame: np.ndarray
    via: np.ndarray


@dataclass
class OpRows:
    """Per kernel row: its launching call's row in ``data.api`` (-1: not traced or a CUDA graph replay), the
    innermost op enclosing the launch and, inside a backward node, the node and its forward op (rows of
    ``data.ops``, -1 where none)."""

    call: np.ndarray
    op: np.ndarray
    node: np.ndarray
    forward_op: np.ndarray


def op_rows(data, kernels: Events) -> OpRows:
    """Each kernel of ``kernels`` (rows of ``data.kernels``) traced to the ops that launched it, by row."""
    n = len(kernels)
    none = np.full(n, -1, dtype=np.int64)
    out = OpRows(none.copy(), none.copy(), none.copy(), none.copy())
    api = data.api
    if api is None or not len(api) or "correlation" not in kernels:
        return out
    row_of = LaunchIndex(np.asarray(api["correlation"], dtype=float), np.arange(len(api), dtype=np.int64))
    call = row_of.lookup(np.asarray(kernels["correlation"], dtype=float))
    launched = ~np.isnan(call)
    call = np.where(launched, call, 0).astype(np.int64)
    graph = categories_of(api["name"]).test(lambda t: str(t).startswith(GRAPH_LAUNCH_PREFIXES))[call]
    known = np.flatnonzero(launched & ~graph)  # a replayed graph's launch says nothing of where it was captured
    out.call[known] = call[known]
    ops = data.ops
    if ops is None or not len(ops) or not known.size:
        return out
    at = np.asarray(api["start"], dtype=np.int64)[call[known]]
    at_tid = np.nan_to_num(np.asarray(api["tid"], dtype=float)[call[known]], nan=-1).astype(np.int64)
    o_start, o_end, o_tid = (np.asarray(ops[c], dtype=np.int64) for c in ("start", "end", "tid"))
    o_seq = np.asarray(ops["seq"], dtype=np.int64)
    backward = categories_of(ops["name"]).test(is_backward)
    out.op[known] = enclosing(o_start, o_end, o_tid, at, at_tid)
    nodes = np.flatnonzero(backward & (o_seq >= 0))  # backward nodes with the sequence number of their forward op
    node = enclosing(o_start[nodes], o_end[nodes], o_tid[nodes], at, at_tid)
    in_node = node >= 0
    out.node[known[in_node]] = nodes[node[in_node]]
    out.forward_op[known[in_node]] = forward_op(o_seq, o_start, ~backward & (o_seq >= 0), o_seq[nodes[node[in_node]]],
                                                o_start[nodes[node[in_node]]])
    return out


def trace(data, kernels: Events) -> KernelOrigins:
    """Each kernel of ``kernels`` (rows of ``data.kernels``) traced back: its op, forward op, user frame and how."""
    n = len(kernels)
    op = np.full(n, -1, dtype=np.int64)
    forward = np.full(n, -1, dtype=np.int64)
    frame = np.full(n, -1, dtype=np.int64)
    via = np.full(n, VIA.index(UNKNOWN), dtype=np.int64)
    api = data.api
    if api is None or not len(api) or "correlation" not in kernels:
        return KernelOrigins(op, forward, frame, via)
    rows = op_rows(data, kernels)
    known = np.flatnonzero(rows.call >= 0)
    at = np.asarray(api["start"], dtype=np.int64)[rows.call[known]]
    at_tid = np.nan_to_num(np.asarray(api["tid"], dtype=float)[rows.call[known]], nan=-1).astype(np.int64)

    ops, frames = data.ops, data.frames
    backward_at = np.full(known.size, -1, dtype=np.int64)
    if ops is not None and len(ops):
        names = categories_of(ops["name"])
        inner = rows.op[known]
        op[known] = np.where(inner >= 0, names.codes[np.clip(inner, 0, None)], -1)
        fwd = rows.forward_op[known]
        backward_at = fwd
        found = fwd >= 0
        forward[known[found]] = names.codes[fwd[found]]
        via[known] = np.where(rows.node[known] >= 0, VIA.index(BACKWARD), VIA.index(STACK))
    else:
        via[known] = VIA.index(STACK) if frames is not None else VIA.index(UNKNOWN)
    if frames is not None and len(frames):
        f_names = categories_of(frames["name"])
        mine = np.flatnonzero(f_names.test(user_frame))
        f_start, f_end, f_tid = (np.asarray(frames[c], dtype=np.int64)[mine] for c in ("start", "end", "tid"))
        # A backward kernel's frame is its forward op's, at that op's start on its own thread.
        q_at, q_tid = at.copy(), at_tid.copy()
        if ops is not None:
            b = backward_at >= 0
            q_at[b] = np.asarray(ops["start"], dtype=np.int64)[backward_at[b]]
            q_tid[b] = np.asarray(ops["tid"], dtype=np.int64)[backward_at[b]]
        hit = enclosing(f_start, f_end, f_tid, q_at, q_tid)
        frame[known] = np.where(hit >= 0, f_names.codes[mine[np.clip(hit, 0, None)]], -1)
        if ops is None:
            via[known] = np.where(hit >= 0, VIA.index(STACK), VIA.index(UNKNOWN))
    return KernelOrigins(op, forward, frame, via)


def forward_op(seq: np.ndarray, start: np.ndarray, forward: np.ndarray, want_seq: np.ndarray, before: np.ndarray) -> np.ndarray:
    """For each backward node (its sequence number ``want_seq``, its start ``before``), the row of the
    forward op (``forward``: a mask of the ops) with that number that started last before it; -1 for none."""
    rows = np.flatnonzero(forward)
    out = np.full(want_seq.size, -1, dtype=np.int64)
    if not rows.size or not want_seq.size:
        return out
    # One sortable key of (seq, time): times ranked together, the rank below each sequence number's stride.
    times, rank = np.unique(np.concatenate([start[rows], before]), return_inverse=True)
    stride = times.size + 1
    if int(max(seq[rows].max(), want_seq.max())) >= (2**62) // stride:
        return out  # numbers no PyTorch run reaches: left unmatched rather than overflow
    key = seq[rows] * stride + rank[:rows.size]
    order = np.argsort(key, kind="stable")
    key, rows = key[order], rows[order]
    wanted = want_seq * stride + rank[rows.size:]
    pos = np.searchsorted(key, wanted, side="right") - 1
    ok = pos >= 0
    same = np.zeros(want_seq.size, dtype=bool)
    same[ok] = seq[rows[pos[ok]]] == want_seq[ok]
    out[same] = rows[pos[same]]
    return out


def attach(data, kernels: tuple, top: int = ATTRIBUTED) -> tuple:
    """``kernels`` (KernelStats, by total time, grouped by demangled name over ``data.kernels``) with the
    first ``top`` given their ``launched_from``; unchanged when the capture holds neither ops nor frames."""
    if (data.ops is None and data.frames is None) or not kernels:
        return kernels
    names = categories_of(data.kernels["demangled"])
    wanted = {k.demangled: i for i, k in enumerate(kernels[:top])}
    group_of_code = np.array([wanted.get(str(c), -1) for c in names.categories] + [-1], dtype=np.int64)
    group = group_of_code[names.codes]
    rows = np.flatnonzero(group >= 0)
    places = trace_groups(data, data.kernels.rows(rows), group[rows], len(wanted))
    return tuple(dataclasses.replace(k, launched_from=places[i]) if i < len(places) else k for i, k in enumerate(kernels))


def trace_groups(data, kernels: Events, group: np.ndarray, groups: int) -> list[LaunchedFrom]:
    """Each group 0..groups-1 of ``kernels`` (``group``: a group per row) traced back: its heaviest place."""
    launches = trace(data, kernels)
    ns = np.asarray(kernels["end"], dtype=np.int64) - np.asarray(kernels["start"], dtype=np.int64)
    op_names = categories_of(data.ops["name"]).categories if data.ops is not None else []
    frame_names = categories_of(data.frames["name"]).categories if data.frames is not None else []
    keys = np.stack([group, launches.op, launches.forward_op, launches.frame, launches.via], axis=1)
    places, which = np.unique(keys, axis=0, return_inverse=True)
    totals = np.bincount(which.ravel(), weights=ns, minlength=len(places)).astype(np.int64)
    group_ns = np.bincount(group, weights=ns, minlength=groups).astype(np.int64)
    out = []
    for g in range(groups):
        mine = np.flatnonzero(places[:, 0] == g)
        known = [i for i in mine.tolist() if places[i, 1] >= 0 or places[i, 3] >= 0]

        def text(i: int) -> tuple:  # ties by the place's names: the output does not follow the capture's order
            return tuple(str(v) for v in (_name(op_names, places[i, 1]), _name(frame_names, places[i, 3])))

        if not known:
            out.append(LaunchedFrom(None, None, None, None, None, UNKNOWN, 100.0 if group_ns[g] else 0.0))
            continue
        best = min(known, key=lambda i: (-int(totals[i]), text(i)))
        _, op, fwd, frame, via = places[best].tolist()
        parsed = parse_frame(frame_names[frame]) if frame >= 0 else None
        out.append(LaunchedFrom(
            op=_name(op_names, op), forward_op=_name(op_names, fwd),
            file=parsed[0] if parsed else None, line=parsed[1] if parsed else None, function=parsed[2] if parsed else None,
            via=VIA[via], share_pct=100.0 * int(totals[best]) / int(group_ns[g]) if group_ns[g] else 100.0,
            line_is=FIRST_LINE if parsed else None))
    return out


def _name(categories: list, code: int) -> str | None:
    return str(categories[code]) if code >= 0 else None


# -- host time -------------------------------------------------------------------------------------

def host_time(data, lo: int, hi: int, top: int = HOST_TOP) -> tuple[HostTime, ...] | None:
    """Where the host's time in [lo, hi) goes by user function (the module's docstring), the most first;
    None when the capture has no Python frames."""
    frames = data.frames
    if frames is None:
        return None
    if not len(frames) or hi <= lo:
        return ()
    tid = np.asarray(frames["tid"], dtype=np.int64)
    threads, counts = np.unique(tid, return_counts=True)
    main = threads[np.argmax(counts)]  # the thread with the most Python frames: the program's own
    names = categories_of(frames["name"])
    rows = np.flatnonzero((tid == main) & names.test(user_frame))
    s = np.clip(np.asarray(frames["start"], dtype=np.int64)[rows], lo, hi)
    e = np.clip(np.asarray(frames["end"], dtype=np.int64)[rows], lo, hi)
    inside = e > s
    rows, s, e = rows[inside], s[inside], e[inside]
    if not rows.size:
        return ()
    own = e - s
    parent = parents(s, e)
    has = parent >= 0
    own -= np.bincount(parent[has], weights=(e - s)[has], minlength=rows.size).astype(np.int64)
    codes = names.codes[rows]
    totals = np.bincount(codes, weights=np.maximum(own, 0), minlength=len(names.categories)).astype(np.int64)
    present = [c for c in np.flatnonzero(totals).tolist()]
    present.sort(key=lambda c: (-int(totals[c]), str(names.categories[c])))
    out = []
    for c in present[:top]:
        file, line, function = parse_frame(str(names.categories[c]))
        out.append(HostTime(file=file, line=line, function=function, ns=int(totals[c]), pct=100.0 * int(totals[c]) / (hi - lo)))
    return tuple(out)


