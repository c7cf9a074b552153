"""The steady steps' dependency graph: what each event waited for, so that a replay can move it.

Nodes are the host's CUDA calls that launch GPU work or wait for it (merged over the threads that make them,
in start order: the host's critical path through a PyTorch step runs on the main thread and the autograd
thread in turn) and the GPU's kernels, copies and memsets (a CUDA graph's kernels traced as nodes carry their
graph launch's correlation, so they hang off that one call). Every other CUDA call, PyTorch op range and
Python frame falls in the host time before the next node; that time is split into its parts (the host's
code between calls, long stretches outside any op range, waits for other processes).

Edges, each found in the capture itself:

- program order: a node call starts after the previous one ends and the host time between them;
- launch: a GPU event starts after its launch call starts (by correlation) and the launch latency;
- stream order: after the previous event on its stream and the gap the GPU left between them;
- cross-stream: an event that started later than its call and its stream allow waited for work on another
  stream (an event wait, a graph's dependency): it hangs off the event on another stream that ended just
  before it. Event handles are reused, so this is read from the timing, not from the handle;
- synchronization: a call that returned just after some GPU work ended waited for it (a stream, device or
  event synchronize, a blocking copy, ``.item()``, a launch into a full queue, an implicit sync);
- external: the host's waits for other processes (OS runtime polls, timed waits: DataLoader workers) release
  the host at the time they ended, which no change to this process moves.

Every measured time is reproduced by the graph: each event's binding edge carries the gap it showed, so a
replay of the unmodified graph gives back the capture (the replay error says how far it does not).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ncuwrap.core.numbers import distinct, median
from ncuwrap.timeline.launches import api_starts, launch_time, merge_intervals

# A GPU event that started within this of its stream's previous event's end was queued behind it; later, it
# waited for its launch (or for another stream).
QUEUED_NS = 5_000
# A copy from pageable memory whose call came before its stream's previous event ended, and that started within this
# of its end, was queued behind it.
STAGED_NS = 20_000
# A launch-bound event whose latency from its call exceeds this (and LATENCY_FACTOR x the typical) waited for
# something other than its call: another stream's work is looked for.
SLOW_LAUNCH_NS = 30_000
LATENCY_FACTOR = 3.0
# Another stream's event that ended at most this before an event's start is what it waited for.
CROSS_STREAM_NS = 20_000
# A call returned within this of some GPU work's end: it waited for that work (when its kind may wait).
RETURN_NS = 50_000
# Calls that are not synchronisations or copies wait only if they last this long and LONG_CALL_FACTOR x their kind's median.
LONG_CALL_NS = 20_000
LONG_CALL_FACTOR = 3.0
# Host time outside every op range, in one stretch at least this long, is host work that is not launching
# GPU work (data preparation, I/O): a CUDA graph does not take it away.
HOST_WORK_NS = 500_000
DEFAULT_LATENCY_NS = 5_000

KERNEL, COPY, MEMSET = 0, 1, 2
LAUNCH, WAIT, COPY_CALL = 1, 2, 4  # call flags


def is_sync_name(name: str) -> bool:
    return "Synchronize" in name


def is_copy_name(name: str) -> bool:
    return name.startswith(("cudaMemcpy", "cuMemcpy"))


@dataclass
class StepGraph:
    """The steady steps' events as the replay's arrays (host calls in order, GPU events in order) and their
    edges; times in ns on the capture's clock. Made by :func:`build`; remedies edit a copy (:meth:`copy`)."""

    lo: int  # the first call's start
    steps: int  # steady steps replayed
    # Host calls (node calls) in order
    h_start: np.ndarray
    h_end: np.ndarray
    h_name: list
    h_tid: np.ndarray
    h_step: np.ndarray  # the step it belongs to (0 .. steps: the last is the next step's first call)
    h_flags: np.ndarray  # LAUNCH | WAIT | COPY_CALL
    h_own: np.ndarray  # its own time when it does not wait
    h_wait: np.ndarray  # the GPU event it waited for (-1: none)
    h_ret: np.ndarray  # from that event's end to its return (negative: a copy call that returned before its copy ended)
    h_code: np.ndarray  # the host's time before it (after the previous call's end), outside waits and long host work
    h_work: np.ndarray  # long stretches outside op ranges before it (host work that is not launching GPU work)
    h_release: np.ndarray  # the end of the last external wait before it (-1: none)
    h_after: np.ndarray  # from that release to its start
    h_calls: np.ndarray  # other CUDA calls before it (traced calls that are not nodes), plus itself
    h_ops: np.ndarray  # op ranges (nsys --pytorch, the profiler's cpu_op) that started before it
    h_frames: np.ndarray  # Python frames (the profiler's) that started before it
    # GPU events in launch order
    g_start: np.ndarray
    g_end: np.ndarray
    g_dur: np.ndarray
    g_kind: np.ndarray  # KERNEL | COPY | MEMSET
    g_row: np.ndarray  # its row in data.kernels / copies / memsets
    g_stream: np.ndarray  # stream index
    g_call: np.ndarray  # its launch call (-1: launched before the window: its times are fixed)
    g_lat: np.ndarray  # from its call's start to its start, when launch-bound
    g_qgap: np.ndarray  # from its stream's previous event's end, when queued
    g_dep: np.ndarray  # the event on another stream it waited for (-1: none)
    g_dgap: np.ndarray
    g_bytes: np.ndarray
    g_pageable_h2d: np.ndarray  # a host-to-device copy from pageable memory
    step_lead: np.ndarray  # per step: from the step's start to its first call's start
    step_first: np.ndarray  # per step: its first call (steps + 1 entries where the next step is in the window)
    measured_window_ns: int  # the same window on the capture's clock (begin of the first step to that of the one after)
    last_period_ns: int | None  # without a next step: the last step's own length
    extra_deps: dict = field(default_factory=dict)  # event -> [(event, gap)] added by remedies
    stream_count: int = 0
    unmatched: int = 0  # GPU events whose launch call is not in the window (kept where they ran)
    cross_stream: int = 0  # cross-stream edges found
    unexplained: int = 0  # events that started late with no other stream's work to explain it
    typical_latency_ns: float = DEFAULT_LATENCY_NS

    def sort_by_launch(self) -> None:
        """The GPU events back in launch order (by launch call, those launched before the window first), every
        index into them remapped: a remedy that re-hangs events on other calls leaves them out of order."""
        order = np.lexsort((np.arange(self.events), self.g_call))
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.size)
        for name in ("g_start", "g_end", "g_dur", "g_kind", "g_row", "g_stream", "g_call", "g_lat", "g_qgap", "g_dep", "g_dgap", "g_bytes",
                     "g_pageable_h2d"):
            setattr(self, name, getattr(self, name)[order])
        self.g_dep = np.where(self.g_dep >= 0, inverse[np.clip(self.g_dep, 0, None)], -1)
        self.h_wait = np.where(self.h_wait >= 0, inverse[np.clip(self.h_wait, 0, None)], -1)
        self.extra_deps = {int(inverse[k]): [(int(inverse[d]), gap) for d, gap in v] for k, v in self.extra_deps.items()}

    def copy(self) -> "StepGraph":
        out = StepGraph(**{k: (v.copy() if isinstance(v, np.ndarray) else list(v) if isinstance(v, list) else v)
                           for k, v in self.__dict__.items() if k != "extra_deps"})
        out.extra_deps = {k: list(v) for k, v in self.extra_deps.items()}
        return out

    @property
    def calls(self) -> int:
        return int(self.h_start.size)

    def drain_queue(self) -> None:
        """The GPU work launched before the steps taken as done when they begin. A remedy that makes the GPU's
        work faster makes that work faster too, and the queue the capture carried (a GPU-bound host runs steps
        ahead) is not the remedied program's: left in, it would hide a host that now sets the pace."""
        before = self.g_call < 0
        self.g_end[before] = np.minimum(self.g_end[before], self.lo)
        self.g_start[before] = np.minimum(self.g_start[before], self.g_end[before])

    def host_ns_per_launch(self) -> float | None:
        """What a kernel launch costs this step's host on average: the calls that launch kernels, each with the host's
        code before it (waits and long host work left out; copies and syncs, whose calls are the copy or the wait,
        are not launches); None without kernel launches."""
        calls = distinct(self.g_call[(self.g_kind == KERNEL) & (self.g_call >= 0)])
        return float((self.h_code[calls] + self.h_own[calls]).mean()) if calls.size else None

    @property
    def events(self) -> int:
        return int(self.g_start.size)


def _gpu_frames(data):
    return [(KERNEL, data.kernels), (COPY, data.copies), (MEMSET, data.memsets)]


def _column(frame, name, default=np.nan) -> np.ndarray:
    if frame is None or name not in frame:
        return np.full(0 if frame is None else len(frame), default, dtype=float)
    return np.asarray(frame[name], dtype=float)


def build(data, steps, max_events: int | None = None) -> StepGraph | None:
    """The dependency graph of ``steps``' steady steps in ``data`` (a TimelineData with its CUDA API traced);
    None where the API was not traced or the steady steps launch nothing. ``max_events``: replay at most about
    this many GPU events (the steady steps nearest the middle), so that a huge capture costs a bounded time."""
    api = data.api
    if api is None or not len(api) or steps is None:
        return None
    starts, lo, hi, has_next, measured_window, last_period = _steps_window(steps, max_events)
    a_start = np.asarray(api["start"], dtype=np.int64)
    a_end = np.asarray(api["end"], dtype=np.int64)
    a_corr = np.asarray(api["correlation"], dtype=float)
    a_tid = np.asarray(api["tid"], dtype=float)
    names = api["name"]
    in_window = np.flatnonzero((a_start >= lo) & (a_start < hi))
    if has_next:  # the next step's first call, whose start the window ends at
        after = np.flatnonzero(a_start >= hi)
        first_next = _first_launch_at(after, a_corr, data)
        if first_next is not None:
            in_window = np.append(in_window, first_next)

    # GPU events launched by calls in the window, or running in it
    g = _gpu_events(data, a_corr, a_start, in_window, lo)
    if g is None:
        return None

    # Which calls wait for GPU work: the latest GPU end inside each call
    ends_sorted_idx = np.argsort(g["end"], kind="stable")
    ends_sorted = g["end"][ends_sorted_idx]
    codes = names.codes[in_window]
    categories = list(names.categories)
    w_start, w_end = a_start[in_window], a_end[in_window]
    durations = w_end - w_start
    median_by_code = np.zeros(len(categories) + 1)
    present = distinct(codes)
    for c in present.tolist():
        median_by_code[c] = median(durations[codes == c])
    sync_code = np.array([is_sync_name(c) for c in categories] + [False], dtype=bool)
    copy_code = np.array([is_copy_name(c) for c in categories] + [False], dtype=bool)
    async_code = np.array(["Async" in c for c in categories] + [False], dtype=bool)
    # A copy call blocks the host only when it is synchronous or one side is pageable memory.
    blocking_rows = distinct(g["call_row"][g["pageable"] & (g["call_row"] >= 0)])
    blocking_copy = copy_code[codes] & (~async_code[codes] | _member(in_window, blocking_rows))
    long_call = (durations >= LONG_CALL_NS) & (durations >= LONG_CALL_FACTOR * median_by_code[codes])
    k = np.searchsorted(ends_sorted, w_end, side="right") - 1
    has = k >= 0
    gpu_end = np.where(has, ends_sorted[np.clip(k, 0, None)], np.iinfo(np.int64).min // 4)
    # A synchronize waited for the last GPU work that ended inside it, however long it took to return; another
    # call that may wait, only if it returned right after.
    returned = (w_end - gpu_end <= RETURN_NS) & (blocking_copy | long_call)
    waits_gpu = has & (gpu_end > w_start) & (sync_code[codes] | returned)
    waited = np.where(waits_gpu, ends_sorted_idx[np.clip(k, 0, None)], -1).astype(np.int64)
    # A blocking copy waits for its own copy, and may return before it ends: a pageable one returns once its last
    # chunk is staged, with that chunk still in flight (up to 29 us before its end in the real captures). Waiting
    # for the work that ended last inside the call would miss it, and leave the call its whole length when a
    # remedy lets the copy start earlier.
    own_copy = _own_copy(g, in_window)
    own_end = g["end"][np.clip(own_copy, 0, None)]
    own_wait = blocking_copy & (own_copy >= 0) & (own_end > w_start) & (np.abs(w_end - own_end) <= RETURN_NS)
    waited = np.where(own_wait, own_copy, waited)
    launched_rows = distinct(g["call_row"][g["call_row"] >= 0])
    is_node = _member(in_window, launched_rows) | (waited >= 0) | sync_code[codes]
    node_rows = in_window[is_node]
    order = np.argsort(a_start[node_rows], kind="stable")
    node_rows = node_rows[order]
    node_wait = waited[is_node][order]
    n = node_rows.size
    if n == 0:
        return None
    h_start = a_start[node_rows]
    h_end = a_end[node_rows]
    node_codes = names.codes[node_rows]
    h_name = [([*categories, None])[c] for c in node_codes.tolist()]
    flags = (np.where(_member(node_rows, launched_rows), LAUNCH, 0) | np.where(node_wait >= 0, WAIT, 0)
             | np.where(copy_code[node_codes], COPY_CALL, 0)).astype(np.int64)
    # Own time: a waiting call's own part is its return after the work (before it, for a copy that returned
    # first: then negative, and the call's own part none); else its whole length.
    ret = np.zeros(n, dtype=np.int64)
    own = np.maximum(0, h_end - h_start).astype(np.int64)
    waiting = node_wait >= 0
    ret[waiting] = h_end[waiting] - g["end"][node_wait[waiting]]
    own[waiting] = np.maximum(0, ret[waiting])

    # Host time before each call: the previous node's end to its start (0 where threads overlap)
    prev_end = np.empty(n, dtype=np.int64)
    prev_end[0] = h_start[0]
    prev_end[1:] = np.maximum.accumulate(h_end)[:-1]
    gap = np.maximum(0, h_start - prev_end)
    gap_lo = np.minimum(prev_end, h_start)

    # External waits on the resuming call's thread within that time
    h_tid = a_tid[node_rows]
    wait_ns, release, after_release = _external_waits(data, h_tid, gap_lo, h_start)
    # Long stretches outside op ranges (host work that launches nothing)
    work = _host_work(data, gap_lo, h_start, release, wait_ns, h_start[(flags & LAUNCH) != 0])
    code = np.maximum(0, gap - wait_ns - work)

    # Traced calls, op ranges and frames before each node (for the tracer's cost)
    other = in_window[~_member(in_window, node_rows)]
    calls_before = _count_between(a_start[other], gap_lo, h_start) + 1
    ops_before = _count_between(_starts(data.ops), gap_lo, h_start)
    frames_before = _count_between(_starts(getattr(data, "frames", None)), gap_lo, h_start)

    # Steps
    step_of = np.searchsorted(np.asarray(starts + ([hi] if has_next else []), dtype=np.int64), h_start, side="right") - 1
    step_of = np.clip(step_of, 0, len(starts) - (0 if has_next else 1))
    step_first = np.searchsorted(h_start, np.asarray(starts + ([hi] if has_next else []), dtype=np.int64), side="left")
    step_first = np.minimum(step_first, n - 1)
    step_lead = np.maximum(0, h_start[step_first] - np.asarray(starts + ([hi] if has_next else []), dtype=np.int64))

    # GPU events: their calls as nodes, their edges
    at = np.searchsorted(node_rows_sorted := np.sort(node_rows), g["call_row"])
    found = (g["call_row"] >= 0) & (at < n) & (node_rows_sorted[np.clip(at, 0, n - 1)] == g["call_row"])
    node_of_sorted = np.argsort(node_rows)  # position in node order of each sorted row
    g_call = np.where(found, node_of_sorted[np.clip(at, 0, n - 1)], -1).astype(np.int64)
    graph = StepGraph(
        lo=int(lo), steps=len(starts), h_start=h_start, h_end=h_end, h_name=h_name, h_tid=h_tid, h_step=step_of.astype(np.int64),
        h_flags=flags, h_own=own, h_wait=node_wait.astype(np.int64), h_ret=ret, h_code=code, h_work=work, h_release=release,
        h_after=after_release, h_calls=calls_before, h_ops=ops_before, h_frames=frames_before,
        g_start=g["start"], g_end=g["end"], g_dur=g["end"] - g["start"], g_kind=g["kind"], g_row=g["row"], g_stream=g["stream"],
        g_call=g_call, g_lat=np.zeros(g["start"].size, dtype=np.int64), g_qgap=np.zeros(g["start"].size, dtype=np.int64),
        g_dep=np.full(g["start"].size, -1, dtype=np.int64), g_dgap=np.zeros(g["start"].size, dtype=np.int64),
        g_bytes=g["bytes"], g_pageable_h2d=g["pageable_h2d"], step_lead=step_lead.astype(np.int64), step_first=step_first.astype(np.int64),
        measured_window_ns=int(measured_window), last_period_ns=last_period, stream_count=int(g["stream"].max() + 1) if g["stream"].size else 0)
    graph.h_flags = flags
    _edges(graph)
    return graph


def _steps_window(steps, max_events: int | None):
    """The steady steps replayed (all, or about ``max_events`` GPU events' worth nearest the middle): their starts,
    the window's first and last host time, whether the next step's first call closes it, and the same window on
    the capture's clock (steps.py's beginnings), or the last step's own length where no step follows."""
    steady = list(steps.steady)
    records = list(steps.records)
    if max_events:
        per_step = max(1, sum(r.kernels for r in steady) // len(steady))
        keep = max(2, max_events // per_step)
        if keep < len(steady):
            cut = (len(steady) - keep) // 2
            steady = steady[cut:cut + keep]
    first_index, last_index = records.index(steady[0]), records.index(steady[-1])
    has_next = last_index + 1 < len(records)
    starts = [r.start_ns for r in records[first_index:last_index + 1]]
    if has_next:
        nxt = records[last_index + 1]
        return starts, starts[0], nxt.start_ns, True, nxt.begin_ns - steady[0].begin_ns, None
    hi = max(steady[-1].end_ns, steady[-1].start_ns) + 1
    return starts, starts[0], hi, False, steady[-1].begin_ns + steady[-1].period_ns - steady[0].begin_ns, steady[-1].period_ns


def _external_waits(data, h_tid: np.ndarray, gap_lo: np.ndarray, h_start: np.ndarray):
    """Per node call: the time the resuming thread waited for other processes in the host time before it, the
    end of its last such wait (-1: none) and the time from there to the call."""
    n = h_start.size
    release = np.full(n, -1, dtype=np.int64)
    after_release = np.zeros(n, dtype=np.int64)
    wait_ns = np.zeros(n, dtype=np.int64)
    waits = getattr(data, "host_waits", None)
    if waits is None or not len(waits):
        return wait_ns, release, after_release
    w_tid = np.asarray(waits["tid"], dtype=float)
    for tid in distinct(h_tid[~np.isnan(h_tid)]):
        mine = w_tid == tid
        if not mine.any():
            continue
        ws, we = merge_intervals(np.asarray(waits["start"], dtype=np.int64)[mine], np.asarray(waits["end"], dtype=np.int64)[mine])
        for i in np.flatnonzero(h_tid == tid).tolist():
            a, b = int(gap_lo[i]), int(h_start[i])
            j0, j1 = int(np.searchsorted(we, a, side="right")), int(np.searchsorted(ws, b, side="left"))
            if b <= a or j1 <= j0:
                continue
            cs, ce = np.clip(ws[j0:j1], a, b), np.clip(we[j0:j1], a, b)
            covered = int((ce - cs).sum())
            if covered > 0:
                wait_ns[i], release[i], after_release[i] = covered, int(ce[-1]), b - int(ce[-1])
    return wait_ns, release, after_release


def _first_launch_at(rows: np.ndarray, corr: np.ndarray, data) -> int | None:
    """The first call among ``rows`` (sorted; the first 10,000 looked at) that launches GPU work; None if none does."""
    rows = rows[:10_000]
    launched = np.zeros(rows.size, dtype=bool)
    for _, frame in _gpu_frames(data):
        if frame is not None and len(frame) and "correlation" in frame:
            launched |= _member(corr[rows], np.asarray(frame["correlation"], dtype=float))
    hit = np.flatnonzero(launched)
    return int(rows[hit[0]]) if hit.size else None


def _gpu_events(data, a_corr: np.ndarray, a_start: np.ndarray, window_rows: np.ndarray, lo: int) -> dict | None:
    """The GPU events launched by the window's calls or still running at its start, in launch order."""
    launches = api_starts(data)
    w_corr = a_corr[window_rows]
    ok = ~np.isnan(w_corr)
    order = np.argsort(w_corr[ok], kind="stable")
    sorted_corr, sorted_rows = w_corr[ok][order], window_rows[ok][order]
    parts = []
    for kind, frame in _gpu_frames(data):
        if frame is None or not len(frame):
            continue
        s = np.asarray(frame["start"], dtype=np.int64)
        e = np.asarray(frame["end"], dtype=np.int64)
        corr = _column(frame, "correlation")
        rows = np.arange(len(frame))
        at = np.clip(np.searchsorted(sorted_corr, corr), 0, max(0, sorted_corr.size - 1))
        hit = sorted_corr.size > 0
        call_row = np.where(hit & (sorted_corr[at] == corr) if hit else np.zeros(len(frame), dtype=bool),
                            sorted_rows[at] if hit else -1, -1).astype(np.int64)
        # launched in the window, or launched before it and still to run or running at its start (a host that
        # runs ahead leaves the GPU a queue of earlier steps' work)
        launched = launch_time(frame, launches)
        keep = (call_row >= 0) | ((e > lo) & (launched < lo))
        if not keep.any():
            continue
        by = np.asarray(frame["bytes"], dtype=float) if "bytes" in frame else np.zeros(len(frame))
        pageable = np.zeros(len(frame), dtype=bool)
        pageable_h2d = np.zeros(len(frame), dtype=bool)
        if kind == COPY and "pageable" in frame and "category" in frame:
            pageable = np.asarray(frame["pageable"], dtype=float) == 1
            pageable_h2d = pageable & (frame["category"] == "memcpy_htod")
        stream = np.stack([np.nan_to_num(_column(frame, "device", -1), nan=-1), np.nan_to_num(_column(frame, "stream", -1), nan=-1)], axis=1)
        parts.append({"start": s[keep], "end": np.maximum(e[keep], s[keep]), "kind": np.full(int(keep.sum()), kind), "row": rows[keep],
                      "stream": stream[keep], "call_row": call_row[keep], "bytes": np.nan_to_num(by[keep]),
                      "pageable_h2d": pageable_h2d[keep], "pageable": pageable[keep]})
    if not parts:
        return None
    out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    out["stream"] = _pair_ids(out["stream"][:, 0], out["stream"][:, 1])
    # launch order: by call (fixed events first), then start
    call_start = np.where(out["call_row"] >= 0, a_start[np.clip(out["call_row"], 0, None)], np.iinfo(np.int64).min)
    order = np.lexsort((out["start"], call_start))
    return {k: v[order] for k, v in out.items()}


def _own_copy(g: dict, rows: np.ndarray) -> np.ndarray:
    """Each call row's own copy that ends last (an index into ``g``'s events; -1: it launched none)."""
    copies = np.flatnonzero((g["kind"] == COPY) & (g["call_row"] >= 0))
    out = np.full(rows.size, -1, dtype=np.int64)
    if not copies.size:
        return out
    copies = copies[np.lexsort((g["end"][copies], g["call_row"][copies]))]
    by = g["call_row"][copies]
    last = np.append(by[1:] != by[:-1], True)  # the latest-ending copy of each call row
    by, copies = by[last], copies[last]
    at = np.clip(np.searchsorted(by, rows), 0, by.size - 1)
    return np.where(by[at] == rows, copies[at], -1).astype(np.int64)


def _edges(graph: StepGraph) -> None:
    """Each GPU event's binding edges (launch, stream order, cross-stream) and the gaps they showed."""
    g = graph
    m = g.events
    fixed = g.g_call < 0
    call_start = np.where(fixed, 0, g.h_start[np.clip(g.g_call, 0, None)])
    lat = g.g_start - call_start
    prev = np.full(m, -1, dtype=np.int64)
    last: dict[int, int] = {}
    for j, st in enumerate(g.g_stream.tolist()):
        prev[j] = last.get(st, -1)
        last[st] = j
    prev_end = np.where(prev >= 0, g.g_end[np.clip(prev, 0, None)], np.iinfo(np.int64).min // 4)
    since_prev = g.g_start - prev_end
    # Queued behind its stream's previous event: it started right after it; or it is a copy from pageable memory whose
    # call came before that event ended, and it started soon after (the call syncs the stream, then stages the first
    # chunk: 1-8.5 us after the event's end in the real captures, where the call came milliseconds before).
    staged = g.g_pageable_h2d & ~fixed & (call_start < prev_end) & (since_prev <= STAGED_NS)
    queued = (prev >= 0) & ((since_prev <= QUEUED_NS) | staged)
    launch_bound = ~fixed & ~queued
    typical = median(lat[launch_bound]) if launch_bound.any() else DEFAULT_LATENCY_NS
    typical = max(0.0, min(typical, SLOW_LAUNCH_NS))
    g.typical_latency_ns = typical
    g.g_lat = np.where(queued, np.minimum(lat, int(typical)), lat).astype(np.int64)
    g.g_qgap = np.where(queued, np.maximum(0, since_prev), min(QUEUED_NS, 2_000)).astype(np.int64)
    slow = launch_bound & (lat > max(SLOW_LAUNCH_NS, LATENCY_FACTOR * typical))
    if slow.any():
        order = np.argsort(g.g_end, kind="stable")
        ends = g.g_end[order]
        for j in np.flatnonzero(slow).tolist():
            s = int(g.g_start[j])
            k = int(np.searchsorted(ends, s, side="right")) - 1
            found = -1
            while k >= 0 and s - ends[k] <= CROSS_STREAM_NS:
                cand = int(order[k])
                if g.g_stream[cand] != g.g_stream[j] and cand != j and (g.g_call[cand] < g.g_call[j] or g.g_call[cand] < 0):
                    found = cand
                    break
                k -= 1
            if found >= 0:
                g.g_dep[j] = found
                g.g_dgap[j] = s - int(g.g_end[found])
                g.g_lat[j] = int(typical)
                g.cross_stream += 1
            else:
                g.unexplained += 1
    g.unmatched = int(fixed.sum())


def _member(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """Whether each of ``values`` is in ``pool`` (np.isin without numpy.ma, which np.unique imports to ask)."""
    pool = distinct(pool[~np.isnan(pool)] if pool.dtype.kind == "f" else pool)
    if not pool.size:
        return np.zeros(values.shape, dtype=bool)
    at = np.clip(np.searchsorted(pool, values), 0, pool.size - 1)
    return pool[at] == values


def _pair_ids(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One small id per distinct (a, b) pair (a device and a stream)."""
    if not a.size:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((b, a))
    new = np.ones(a.size, dtype=bool)
    new[1:] = (a[order][1:] != a[order][:-1]) | (b[order][1:] != b[order][:-1])
    ids = np.empty(a.size, dtype=np.int64)
    ids[order] = np.cumsum(new) - 1
    return ids


def _starts(frame) -> np.ndarray:
    if frame is None or not len(frame):
        return np.empty(0, dtype=np.int64)
    return np.sort(np.asarray(frame["start"], dtype=np.int64))


def _count_between(times: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """How many of ``times`` fall in each [lo, hi)."""
    times = np.sort(times)
    return (np.searchsorted(times, hi, side="left") - np.searchsorted(times, lo, side="left")).astype(np.int64)


def _is_user_range(name: str) -> bool:
    """A range the program (or a library's Python) put around its own code, not an op: record_function's
    "enumerate(DataLoader)#...", "Optimizer.step#AdamW.step", ProfilerStep#N. Time in it is not the framework's."""
    return "#" in name


def _host_work(data, lo: np.ndarray, hi: np.ndarray, release: np.ndarray, wait_ns: np.ndarray, launch_starts: np.ndarray) -> np.ndarray:
    """Per host gap [lo, hi): the time in stretches of at least HOST_WORK_NS outside every op range that
    launched GPU work (a call in ``launch_starts`` within it) and outside external waits (counted apart).
    Without op ranges, a whole gap that long, less its waits."""
    n = lo.size
    out = np.zeros(n, dtype=np.int64)
    ops = data.ops
    if ops is None or not len(ops):
        free = hi - lo - wait_ns
        long = free >= HOST_WORK_NS
        out[long] = free[long]
        return out
    o_start, o_end = np.asarray(ops["start"], dtype=np.int64), np.asarray(ops["end"], dtype=np.int64)
    launching = ~ops["name"].test(_is_user_range)
    if "user" in ops:
        launching &= np.asarray(ops["user"], dtype=float) != 1
    # an op that launched no GPU work (a CPU tensor's stack, say) is host work too
    launches = np.sort(launch_starts)
    launching &= np.searchsorted(launches, o_end, side="right") > np.searchsorted(launches, o_start, side="left")
    os_, oe = merge_intervals(o_start[launching], o_end[launching])
    for i in np.flatnonzero(hi - lo - wait_ns >= HOST_WORK_NS).tolist():
        a, b = int(lo[i]), int(hi[i])
        if release[i] >= 0:
            a = max(a, int(release[i]))  # the stretch after the last external wait
        j0 = int(np.searchsorted(oe, a, side="right"))
        j1 = int(np.searchsorted(os_, b, side="left"))
        cursor, total = a, 0
        for j in range(j0, j1):
            s = max(int(os_[j]), a)
            if s - cursor >= HOST_WORK_NS:
                total += s - cursor
            cursor = max(cursor, min(int(oe[j]), b))
        if b - cursor >= HOST_WORK_NS:
            total += b - cursor
        out[i] = total
    return out
