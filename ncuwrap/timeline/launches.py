"""The events stage of a capture (after the readers, before the steps): what launched each GPU event and
when (its CUDA call, by correlationId), the calls by kind, texts asked once per distinct text, unions of
intervals, and a capture cut to a window by launch time. The steps (:mod:`ncuwrap.timeline.steps`), the
analysis and every later stage take these from here; nothing here knows of steps.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ncuwrap.timeline.events import Events, Labels

# CUDA calls by kind (names without their version suffix).
GRAPH_LAUNCH_PREFIXES = ("cudaGraphLaunch", "cuGraphLaunch")
LAUNCH_PREFIXES = ("cudaLaunch", "cuLaunch") + GRAPH_LAUNCH_PREFIXES
SYNC_CALLS = frozenset({"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaThreadSynchronize",
                        "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize"})


def categories_of(names) -> Labels:
    """An event table's name column as labels (the reader's already are: ncuwrap.timeline.readers.nsys_sqlite)."""
    return names if isinstance(names, Labels) else Labels.of(names)


def text_is(names, test) -> np.ndarray:
    """``test`` of each row's text, asked once per distinct text (a capture repeats its names millions
    of times)."""
    return categories_of(names).test(test)


def group_heads(groups: np.ndarray) -> np.ndarray:
    """Where each run of equal values of ``groups`` begins."""
    first = np.ones(groups.size, dtype=bool)
    first[1:] = groups[1:] != groups[:-1]
    return np.flatnonzero(first)


class LaunchIndex:
    """correlationId -> a value of the events with it, as sorted arrays: by default the start of the CUDA
    call with it (the first, if an export repeats one); ``reduce`` picks another (np.maximum of kernel
    ends: the last). A capture holds millions of calls, and a hash map of them costs more than their columns."""

    def __init__(self, correlation: np.ndarray, values: np.ndarray, reduce=np.minimum):
        known = ~np.isnan(correlation) if correlation.dtype.kind == "f" else np.ones(correlation.size, dtype=bool)
        ids, values = correlation[known].astype(np.int64), values[known]
        order = np.argsort(ids, kind="stable")
        ids, values = ids[order], values[order]
        heads = group_heads(ids)
        self.ids = ids[heads]
        self.values = reduce.reduceat(values, heads) if ids.size else values

    def lookup(self, correlation) -> np.ndarray:
        """The value of each correlationId (float, NaN where no event has it)."""
        correlation = np.asarray(correlation, dtype=float)
        out = np.full(correlation.size, np.nan)
        if not self.ids.size:
            return out
        known = ~np.isnan(correlation)
        wanted = correlation[known].astype(np.int64)
        at = np.clip(np.searchsorted(self.ids, wanted), 0, self.ids.size - 1)
        hit = self.ids[at] == wanted
        found = np.full(wanted.size, np.nan)
        found[hit] = self.values[at[hit]]
        out[known] = found
        return out


def launch_time(frame: Events, api_start: LaunchIndex | None) -> np.ndarray:
    """When each GPU event of ``frame`` was launched: its launching CUDA call's start (by correlationId),
    else (launch not traced) the event's own start."""
    own = np.asarray(frame["start"], dtype=np.int64)
    if api_start is None or "correlation" not in frame or not len(frame):
        return own
    at = api_start.lookup(np.asarray(frame["correlation"], dtype=float))
    return np.where(np.isnan(at), own, at).astype(np.int64)


def api_starts(data) -> LaunchIndex | None:
    """The launches of ``data``'s CUDA calls by correlationId (None: no call has one); made once per API frame."""
    api = data.api
    if api is None or not len(api) or np.isnan(np.asarray(api["correlation"], dtype=float)).all():
        return None
    cached = getattr(data, "launch_index", None)
    if cached is not None and cached[0] is api:
        return cached[1]
    index = LaunchIndex(np.asarray(api["correlation"]), np.asarray(api["start"], dtype=np.int64))
    data.launch_index = (api, index)
    return index


def merge_intervals(starts, ends) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals [start, end) as sorted, disjoint intervals."""
    starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    if starts.size == 0:
        return starts, ends
    if (starts[1:] >= starts[:-1]).all():  # events come sorted by start: no sort (the order of equal starts does not matter)
        s, e = starts, ends
    else:
        order = np.lexsort((ends, starts))
        s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    first = np.empty(s.size, dtype=bool)
    first[0] = True
    first[1:] = s[1:] > reach[:-1]
    heads = np.flatnonzero(first)
    tails = np.append(heads[1:] - 1, s.size - 1)
    return s[heads], reach[tails]


def traced_span(data) -> tuple[int, int]:
    """The first CUDA call or GPU activity's start and the last one's end (the capture's clock)."""
    events = [f for f in (data.kernels, data.copies, data.memsets, data.api) if f is not None and len(f)]
    return int(min(f["start"].min() for f in events)), int(max(f["end"].max() for f in events))


def active_window(data, launched: dict | None = None) -> tuple[int, int] | None:
    """From the launch of the first GPU work (the start of the framework op that launched it, where the capture
    records ops) to the end of the last (start-up and teardown left out); None without GPU work. ``launched``:
    :func:`launch_times` of ``data``, where the caller has them."""
    launched = launch_times(data) if launched is None else launched
    frames = [(f, launched[name]) for name, f in _gpu_frames(data) if f is not None and len(f)]
    if not frames:
        return None
    lo = min(int(t.min()) for _, t in frames)
    hi = max(int(np.asarray(f["end"], dtype=np.int64).max()) for f, _ in frames)
    return launching_op_start(data, lo), max(hi, lo + 1)


def launching_op_start(data, at: int) -> int:
    """The start of the outermost framework op (a user's range is not one) around the CUDA call that starts at
    ``at``, on its thread; ``at`` where no op holds it. The host's work for that call began there: a program
    timing its loop counts it (a profiled GEMM's op ran 0.26 ms before its first launch)."""
    api, ops = data.api, data.ops
    if api is None or ops is None or not len(api) or not len(ops):
        return at
    calls = np.flatnonzero(np.asarray(api["start"], dtype=np.int64) == at)
    if not calls.size:
        return at
    start, end = np.asarray(ops["start"], dtype=np.int64), np.asarray(ops["end"], dtype=np.int64)
    holds = (start <= at) & (end > at) & np.isin(np.asarray(ops["tid"]), np.asarray(api["tid"])[calls])
    if "user" in ops:
        holds &= ~np.asarray(ops["user"], dtype=bool)
    return int(start[holds].min()) if holds.any() else at


def _gpu_frames(data):
    return (("kernels", data.kernels), ("copies", data.copies), ("memsets", data.memsets))


def launch_times(data) -> dict:
    """:func:`launch_time` of each GPU frame of ``data`` (kernels, copies, memsets; None where it has none),
    each computed once for the window and the rows in it (a million launches' lookup is not free)."""
    api_start = api_starts(data)
    return {name: launch_time(f, api_start) if f is not None else None for name, f in _gpu_frames(data)}


def window_data(data, lo: int, hi: int, launched: dict | None = None):
    """``data`` keeping the CUDA calls that start in [lo, hi) and the GPU work they launched, as steady_data.
    ``launched``: :func:`launch_times` of ``data``, where the caller has them."""
    launched = launch_times(data) if launched is None else launched

    def launched_in(name: str, frame):
        if frame is None:
            return None
        t = launched[name]
        return _rows(frame, (t >= lo) & (t < hi))

    api = None
    if data.api is not None:  # sorted by start: the calls of the window are one run of rows
        first, last = np.searchsorted(data.api["start"], [lo, hi], side="left")
        api = data.api.rows(slice(int(first), int(last)))
    return dataclasses.replace(data, kernels=launched_in("kernels", data.kernels), copies=launched_in("copies", data.copies),
                               memsets=launched_in("memsets", data.memsets), api=api)


def _rows(frame: Events, keep: np.ndarray) -> Events:
    """``frame``'s rows where ``keep``; a single run of rows is a slice, not a copy."""
    at = np.flatnonzero(keep)
    if at.size and at[-1] - at[0] + 1 == at.size:
        return frame.rows(slice(int(at[0]), int(at[-1]) + 1))
    return frame.rows(keep)
