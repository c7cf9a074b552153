"""From the raw events of a capture to a :class:`~ncuwrap.timeline.model.Timeline`: where the time went.

The window is the traced span, from the first CUDA API call or GPU activity to the last one; all
devices and processes of the capture are one timeline (the GPU is busy when any of them is).

How overlaps are attributed: a copy running on one stream while a kernel runs on another costs no
wall time of its own. The breakdown therefore gives each instant of the window to exactly one
category, the first of ``kernel, memcpy_htod, memcpy_dtoh, memcpy_dtod, memcpy_other, memset``
active at that instant, or ``idle`` when none is. Categories are unions of intervals (two
concurrent kernels count once), and the breakdown sums to the window exactly. The copy time hidden
under kernels is reported separately (``memcpy_overlap_pct``), and ``busy_ns`` gives each
category's own time, overlaps included.

Amdahl: with K the kernel time of the breakdown and W the window, kernels s times faster give
``W - K + K / s`` end to end, and at best ``W / (W - K)`` if they took no time. This assumes the
rest of the timeline does not move; where copies overlap kernels the real gain is at most this.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ncuwrap.timeline import launched_from, tracer
from ncuwrap.timeline import metrics as timeline_metrics
from ncuwrap.timeline.events import Events
from ncuwrap.core.numbers import distinct, median, percentile
from ncuwrap.timeline.model import (API_CATEGORIES, CATEGORIES, COPY_CATEGORIES, COPY_LABELS, AmdahlRow, ApiStats, CopyStats, Gap, KernelStats, Timeline,
                                    TimelineData, launch_dims, pct)
from ncuwrap.timeline.launches import (LAUNCH_PREFIXES, SYNC_CALLS, LaunchIndex, active_window, categories_of, launch_times, traced_span,
                                       window_data)
from ncuwrap.timeline.launches import merge_intervals as merge
from ncuwrap.timeline.steps import Steps

SPEEDUPS = (2, 4, 10)
LONG_GAP_NS = 1_000_000  # gaps of 1 ms or more are counted as long
HOST_CODE = "host code (no CUDA call)"
# Before the first GPU work, untraced time is usually CUDA's own initialization (cudaSetDevice and
# friends are not traced) or the program's set-up.
STARTUP_UNTRACED = "CUDA initialization or host set-up (no traced CUDA call)"
NO_API = "unknown (CUDA API not traced)"
NO_STEPS = ("no steps: none is marked (an NVTX range named like a step) and none was found by repetition; the window runs "
            "from the first GPU work to the last (mark each iteration with an NVTX range named 'step', or pass --step-range, "
            "to judge the steady state)")
HOST_PARTS = ("launch calls", "synchronize calls", "other CUDA calls", "host code (no CUDA call)")

_MALLOC_PREFIXES = ("cudaMalloc", "cudaFree", "cudaHostAlloc", "cudaHostRegister", "cudaHostUnregister",
                    "cuMemAlloc", "cuMemFree", "cuMemHostAlloc", "cuMemHostRegister", "cuMemHostUnregister", "cuMemCreate", "cuMemRelease")


API_CODES = {c: i for i, c in enumerate(API_CATEGORIES)}


# How launch_fix_buys_pct and sync_fix_buys_pct were found (the findings quote it).
BOUND_BASIS = "at most: the host's time in those calls, no more than the GPU's idle share"
REPLAYED_BASIS = {"cuda_graphs": "the steady steps replayed with each stretch between host waits as one CUDA graph",
                  "no_sync": "the steady steps replayed without their host waits"}


def api_category(name: str) -> str:
    """launch, sync, malloc, memcpy, memset or other, from a call's name (version suffix stripped)."""
    if name.startswith(LAUNCH_PREFIXES):
        return "launch"
    if name in SYNC_CALLS:
        return "sync"
    if name.startswith(_MALLOC_PREFIXES):
        return "malloc"
    if name.startswith(("cudaMemcpy", "cuMemcpy")):
        return "memcpy"
    if name.startswith(("cudaMemset", "cuMemset", "cuMemsetD")):
        return "memset"
    return "other"


# -- intervals -------------------------------------------------------------------------------------

def length(intervals) -> int:
    s, e = intervals
    return int((e - s).sum()) if s.size else 0


def union(*sets) -> tuple[np.ndarray, np.ndarray]:
    return merge(np.concatenate([s for s, _ in sets]), np.concatenate([e for _, e in sets]))


def clip(intervals, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    s, e = intervals
    s, e = np.maximum(s, lo), np.minimum(e, hi)
    keep = e > s
    return s[keep], e[keep]


def covered(starts, ends, lo: int, hi: int) -> int:
    """``length(clip(merge(starts, ends), lo, hi))`` without building the merged intervals: events sorted by
    start (as a capture's CUDA calls come) add the part of each past the reach of those before it. Two
    arrays of the events' length instead of merge's dozen (millions of calls: their fresh pages cost more
    than the arithmetic)."""
    s, e = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    if s.size == 0:
        return 0
    if not (s[1:] >= s[:-1]).all():
        return length(clip(merge(s, e), lo, hi))
    reach = np.maximum.accumulate(e)
    begin = np.empty_like(s)
    begin[0] = s[0]
    np.maximum(s[1:], reach[:-1], out=begin[1:])
    np.maximum(begin, lo, out=begin)
    np.minimum(reach, hi, out=reach)
    np.subtract(reach, begin, out=reach)
    np.maximum(reach, 0, out=reach)
    return int(reach.sum())


def complement(intervals, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The gaps of merged ``intervals`` within [lo, hi)."""
    s, e = clip(intervals, lo, hi)
    gs, ge = np.append(lo, e), np.append(s, hi)
    keep = ge > gs
    return gs[keep], ge[keep]


def _empty():
    return np.array([], dtype=np.int64), np.array([], dtype=np.int64)


def _intervals(frame: Events | None) -> tuple[np.ndarray, np.ndarray]:
    if frame is None or frame.empty:
        return _empty()
    return merge(frame["start"], frame["end"])


# -- the analysis --------------------------------------------------------------------------------

def analyze(data: TimelineData, span: tuple[int, int] | None = None, steps: Steps | None = None) -> Timeline:
    """Where the time of ``data`` went. ``span`` (start, end): the window starts there and ends there or at
    the end of the last event, whichever is later (the steady steps, with ``data`` holding only what was
    launched in them: ncuwrap.timeline.steps.Steps.steady_data; GPU time before the span is left out); None: the
    traced span (the module's docstring).
    ``steps``: the capture's steps, whose steady-state values the rules read (None: the capture has none)."""
    kernels, copies, memsets, api = data.kernels, data.copies, data.memsets, data.api
    lo, hi = traced_span(data)
    if span is not None:
        # The window begins where the span does: a host that runs ahead made the steady steps' calls before it.
        lo, hi = span[0], max(hi, span[1])
    window = hi - lo

    sets = {"kernel": _intervals(kernels), "memset": _intervals(memsets)}
    for category in COPY_CATEGORIES:
        sets[category] = _intervals(copies.rows(copies["category"] == category))
    sets = {c: clip(v, lo, hi) for c, v in sets.items()}
    # Exposed time: what each category adds to the union of the categories before it.
    breakdown: dict[str, int] = {}
    covered, covered_len = _empty(), 0
    for category in CATEGORIES[:-1]:
        covered = union(covered, sets[category])
        new_len = length(covered)
        breakdown[category] = new_len - covered_len
        covered_len = new_len
    breakdown["idle"] = window - covered_len
    busy = {c: length(sets[c]) for c in CATEGORIES[:-1]}
    gpu = covered

    m: dict[str, object] = {}
    unknown: dict[str, str] = {}
    memcpy_ns = sum(breakdown[c] for c in COPY_CATEGORIES)
    copy_union = length(union(*(sets[c] for c in COPY_CATEGORIES)))
    m.update(
        window_ns=window, kernel_ns=breakdown["kernel"], memcpy_htod_ns=breakdown["memcpy_htod"], memcpy_dtoh_ns=breakdown["memcpy_dtoh"],
        memcpy_dtod_ns=breakdown["memcpy_dtod"], memcpy_other_ns=breakdown["memcpy_other"], memset_ns=breakdown["memset"],
        memcpy_ns=memcpy_ns, idle_ns=breakdown["idle"], gpu_busy_ns=covered_len,
        kernel_pct=pct(breakdown["kernel"], window), memcpy_pct=pct(memcpy_ns, window), memset_pct=pct(breakdown["memset"], window),
        idle_pct=pct(breakdown["idle"], window), gpu_busy_pct=pct(covered_len, window),
        kernel_busy_pct=pct(breakdown["kernel"], covered_len), memcpy_busy_pct=pct(memcpy_ns, covered_len),
        memcpy_overlap_pct=pct(copy_union - memcpy_ns, copy_union),
        # Judged against what could overlap at most: the shorter of kernel time and copy time.
        overlap_achieved_pct=pct(copy_union - memcpy_ns, min(busy["kernel"], copy_union)),
    )
    copy_time = {c: breakdown[c] for c in COPY_CATEGORIES}
    dominant = max(copy_time, key=lambda c: copy_time[c])
    m["dominant_copy"] = COPY_LABELS[dominant] if copy_time[dominant] > 0 else None
    m["dominant_copy_ns"] = copy_time[dominant]

    # Start-up: nothing runs on the GPU before its first activity.
    first_gpu = int(gpu[0][0]) if gpu[0].size else hi
    startup = Gap(0, first_gpu - lo, _cause(api, lo, first_gpu, untraced=STARTUP_UNTRACED))
    m.update(startup_ns=startup.duration_ns, startup_pct=pct(startup.duration_ns, window), startup_cause=startup.cause)
    gs, ge = complement(gpu, first_gpu, hi)
    after = hi - first_gpu
    m["idle_after_startup_pct"] = pct(int((ge - gs).sum()), after)
    order = np.argsort(-(ge - gs), kind="stable")[:5]
    gaps = tuple(Gap(int(gs[i] - lo), int(ge[i] - gs[i]), _cause(api, int(gs[i]), int(ge[i]))) for i in order)
    m["longest_gap_ns"] = gaps[0].duration_ns if gaps else 0
    m["longest_gap_at_ns"] = gaps[0].at_ns if gaps else math.nan
    m["longest_gap_cause"] = gaps[0].cause if gaps else None
    m["long_gap_count"] = int(((ge - gs) >= LONG_GAP_NS).sum())

    kernel_stats, kernel_gaps = _kernels(kernels, m)
    span_lo, span_hi = int(kernels["start"].min()), int(kernels["end"].max())
    span = span_hi - span_lo
    m["kernel_span_ns"] = span
    m["kernel_span_idle_pct"] = pct(span - length(clip(gpu, span_lo, span_hi)), span)

    copy_stats = _copies(copies, m, data.unknown.get("host_memory"), unknown, window)
    m.update(memset_count=len(memsets))
    memset_info = {"count": len(memsets), "bytes": int(_bytes(memsets).sum()) if len(memsets) else 0, "total_ns": busy["memset"]}

    m["window_lo_hi"] = (lo, hi)
    api_stats = _api(api, kernels, m, (span_lo, span_hi), window, data.unknown.get("api"), unknown)
    del m["window_lo_hi"]

    kernel_time = breakdown["kernel"]

    def speedup(end_to_end: float) -> float:
        return window / end_to_end if end_to_end > 0 else math.inf

    amdahl = tuple(AmdahlRow(float(s), window - kernel_time + kernel_time / s, speedup(window - kernel_time + kernel_time / s), kernel_time / s)
                   for s in SPEEDUPS) + (AmdahlRow(None, window - kernel_time, speedup(window - kernel_time), 0.0),)
    for row in amdahl[:-1]:
        m[f"e2e_speedup_{row.kernel_speedup:g}x"] = row.end_to_end_speedup
    m["kernel_ceiling"] = amdahl[-1].end_to_end_speedup
    m["copy_ceiling"] = speedup(window - memcpy_ns)

    _steps(steps, m, unknown, data.unknown.get("api"))
    kernel_stats = launched_from.attach(data, kernel_stats)  # the top kernels' op and Python line (ops, frames)

    missing = [n for n in timeline_metrics.CATALOGUE if n not in m]
    assert not missing, f"analysis does not compute {missing}"
    return Timeline(
        window_start_ns=lo, window_end_ns=hi, breakdown_ns=breakdown, busy_ns=busy, api=api_stats, api_traced=api is not None,
        copies=copy_stats, memsets=memset_info, kernels=kernel_stats, kernel_gaps=kernel_gaps, startup=startup, gaps=gaps,
        amdahl=amdahl, metrics={n: m[n] for n in timeline_metrics.CATALOGUE}, unknown=unknown,
        devices=_devices(kernels, copies, memsets), steps=steps, host_time=launched_from.host_time(data, lo, hi),
        tracer=tracer.estimate(steps, data.producer, tracer.has_shapes(data), tracer.launch_mean_ns(data, steps.steady_start_ns, steps.steady_end_ns))
        if steps is not None else None,
    )


def _bytes(frame: Events) -> np.ndarray:
    """Each event's bytes, 0 where the export does not say (float columns hold NaN there)."""
    column = np.asarray(frame["bytes"])
    return np.nan_to_num(column, nan=0).astype(np.int64) if column.dtype.kind == "f" else column.astype(np.int64)


def _devices(*frames: Events) -> int:
    """How many GPUs the events ran on (at least one; a device not in the export counts none)."""
    ids = np.concatenate([np.asarray(f["device"], dtype=float) for f in frames if len(f)])
    return max(1, int(distinct(ids[~np.isnan(ids)]).size))


def analyze_active(data: TimelineData) -> Timeline:
    """Without steps: the window from the first GPU work's launch to the end of the last, with what was
    launched in it; its ``startup`` is the start-up left out before it (first CUDA call to that launch)."""
    launched = launch_times(data)
    window = active_window(data, launched)
    if window is None:
        return analyze(data)
    first = traced_span(data)[0]
    timeline = analyze(window_data(data, *window, launched), span=window)
    left_out = Gap(0, max(0, window[0] - first), _cause(data.api, first, window[0], untraced=STARTUP_UNTRACED))
    return dataclasses.replace(timeline, startup=left_out, scope="active")


def analyze_steady(data: TimelineData, steps: Steps) -> tuple[TimelineData, Timeline] | None:
    """The steady steps of ``data``: what was launched in them (:meth:`Steps.steady_data`) and its
    analysis over their window, with the steps replayed on their dependency graph (:func:`steady_analysis`, then
    :func:`with_whatif` without op limits or kernel verdicts); None when they launched no kernel (then the whole
    capture is analysed)."""
    steady = steady_analysis(data, steps)
    return None if steady is None else (steady[0], with_whatif(data, steady[1]))


def steady_analysis(data: TimelineData, steps: Steps) -> tuple[TimelineData, Timeline] | None:
    """The steady steps of ``data``: what was launched in them (:meth:`Steps.steady_data`) and its analysis over
    their window, not yet replayed (:func:`with_whatif` replays them); None when they launched no kernel."""
    steady = steps.steady_data(data)
    if not len(steady.kernels):
        return None
    return steady, analyze(steady, span=(steps.steady_start_ns, steps.steady_end_ns), steps=steps)


def with_whatif(data: TimelineData, timeline: Timeline, *, op_limits=None, kernels=None) -> Timeline:
    """``timeline``, the analysis of ``data``'s steady steps (:func:`steady_analysis`), with the steps replayed on
    their dependency graph (ncuwrap.timeline.whatif: ``op_limits`` and ``kernels`` as its ``predict`` takes them) and
    the figures the replay gives: what CUDA graphs and no host waits buy, the step without the tracer. As it is
    where the CUDA API was not traced (no replay)."""
    from ncuwrap.timeline.whatif.predict import predict

    whatif = predict(data, timeline.steps, op_limits=op_limits, kernels=kernels)
    if whatif is None:
        return timeline
    metrics = dict(timeline.metrics)
    for remedy, name in (("cuda_graphs", "launch_fix"), ("no_sync", "sync_fix")):
        p = whatif.get(remedy)
        if p is not None and metrics.get(f"{name}_buys_pct") is not None:
            metrics[f"{name}_buys_pct"] = max(0.0, 100.0 * (1.0 - p.step_ns / whatif.untraced_step_ns))
            metrics[f"{name}_basis"] = REPLAYED_BASIS[remedy]
    tracer_cost = timeline.tracer
    if tracer_cost is not None:
        graphs = whatif.traced_graphs  # predict always sets it; no launch traced node by node gives zeros
        tracer_cost = dataclasses.replace(tracer_cost, replayed_untraced_ns=whatif.untraced_step_ns, graph_launches=graphs.launches,
                                          graph_nodes=graphs.nodes, graph_added_ns=graphs.added_ns)
    return dataclasses.replace(timeline, whatif=whatif, metrics=metrics, tracer=tracer_cost)


def _sync_roundtrips(calls: "_Calls", synced: np.ndarray, kernels: Events) -> int:
    """GPU idle time the synchronizations after launches cost: for each synced launch, the sync's
    wake-up (from its kernel's end, or the sync call if later, to the sync's return) plus the next
    launch's latency (from that launch call, or the kernel's end if later, to its kernel's start).
    Host code run between the sync and the next launch is not counted: it is the program's work.
    ``calls``: the launch and synchronize calls by thread, then start; ``synced``: the positions among
    them of the synced launches (their sync is the next call)."""
    correlation = np.asarray(kernels["correlation"], dtype=float)
    if not synced.size or np.isnan(correlation).all():
        return 0
    # Each correlationId's first kernel start and last kernel end.
    first = LaunchIndex(correlation, np.asarray(kernels["start"], dtype=np.int64))
    last = LaunchIndex(correlation, np.asarray(kernels["end"], dtype=np.int64), reduce=np.maximum)
    launch_at = np.flatnonzero(calls.launch)
    nxt = np.searchsorted(launch_at, synced + 1, side="right")  # the next launch after the sync
    ok = nxt < launch_at.size
    at, nxt = synced[ok], launch_at[nxt[ok]]
    same_thread = calls.tid[nxt] == calls.tid[at]
    at, nxt = at[same_thread], nxt[same_thread]
    k_end = last.lookup(calls.correlation[at])
    k_next = first.lookup(calls.correlation[nxt])
    sync_start, sync_end = calls.start[at + 1], calls.end[at + 1]
    launch_start = calls.start[nxt]
    with np.errstate(invalid="ignore"):
        wake = np.maximum(0, sync_end - np.maximum(k_end, sync_start))
        latency = np.maximum(0, k_next - np.maximum(launch_start, k_end))
        cost = np.minimum(wake + latency, np.maximum(0, k_next - k_end))
    return int(np.nansum(cost))


class _Calls:
    """The launch and synchronize calls, by thread (none known: one thread) and then by start."""

    def __init__(self, api: Events, category: np.ndarray):
        rows = np.flatnonzero((category == API_CODES["launch"]) | (category == API_CODES["sync"]))
        tid = np.nan_to_num(np.asarray(api["tid"], dtype=float)[rows], nan=0.0)
        by_thread = np.argsort(tid, kind="stable")  # the calls come sorted by start
        self.tid, order = tid[by_thread], rows[by_thread]
        self.start = np.asarray(api["start"], dtype=np.int64)[order]
        self.end = np.asarray(api["end"], dtype=np.int64)[order]
        self.correlation = np.asarray(api["correlation"], dtype=float)[order]
        self.launch = category[order] == API_CODES["launch"]


def group_stats(codes: np.ndarray, values: np.ndarray, groups: int):
    """Per group 0..groups-1 of ``codes``: count, sum (exact), median, min and max of its ``values``
    (int64), from one sort; an empty group has count 0 and NaN/0 elsewhere."""
    ranked = _ranked(codes, values, groups)
    counts = np.bincount(codes, minlength=groups)
    ends = np.cumsum(counts)
    starts = ends - counts
    present = counts > 0
    sums = np.zeros(groups, dtype=np.int64)
    if ranked.size:
        sums[present] = np.add.reduceat(ranked, starts[present])
    low, high = starts + (counts - 1) // 2, starts + counts // 2
    medians = np.full(groups, np.nan)
    medians[present] = (ranked[low[present]].astype(float) + ranked[high[present]].astype(float)) / 2
    mins, maxs = np.zeros(groups, dtype=np.int64), np.zeros(groups, dtype=np.int64)
    mins[present], maxs[present] = ranked[starts[present]], ranked[ends[present] - 1]
    return counts, sums, medians, mins, maxs, ranked, starts


def _ranked(codes: np.ndarray, values: np.ndarray, groups: int) -> np.ndarray:
    """``values`` ordered by group code, then by value. Where the group and the value's offset from the
    smallest fit one int64 together, one sort of that key (half of lexsort's time on 2.2M CUDA calls)."""
    values = np.asarray(values, dtype=np.int64)
    if values.size:
        low = int(values.min())
        bits = (int(values.max()) - low).bit_length()
        if bits + max(1, (groups - 1).bit_length()) <= 62 and int(codes.min()) >= 0:
            key = (np.asarray(codes, dtype=np.int64) << bits) | (values - low)
            key.sort()
            key &= (1 << bits) - 1
            key += low
            return key
    return values[np.lexsort((values, codes))]


def heaviest(totals: np.ndarray, present: list[int], names: list) -> int:
    """Of the groups ``present``, the one of the largest total; of equal totals, the name first in
    alphabetical order (outputs do not depend on the order the capture lists its events in)."""
    return min(present, key=lambda c: (-int(totals[c]), str(names[c])))


def _cause(api: Events | None, lo: int, hi: int, untraced: str = HOST_CODE) -> str:
    """The CUDA call the host spent most of [lo, hi) in, if it covers at least half of it; else ``untraced``
    (equal times: the name first in alphabetical order)."""
    if api is None:
        return NO_API
    if hi <= lo:
        return untraced
    start, end = np.asarray(api["start"], dtype=np.int64), np.asarray(api["end"], dtype=np.int64)
    rows = np.flatnonzero(end[:np.searchsorted(start, hi, side="left")] > lo)  # the calls come sorted by start
    if not rows.size:
        return untraced
    names = categories_of(api["name"])
    codes = names.codes[rows]
    overlap = np.minimum(end[rows], hi) - np.maximum(start[rows], lo)
    totals = np.zeros(len(names.categories), dtype=np.int64)
    np.add.at(totals, codes, overlap)
    best = heaviest(totals, distinct(codes).tolist(), names.categories)
    return str(names.categories[best]) if totals[best] >= 0.5 * (hi - lo) else untraced


def _kernels(kernels: Events, m: dict) -> tuple[tuple[KernelStats, ...], dict]:
    durations = np.asarray(kernels["end"] - kernels["start"], dtype=np.int64)
    total = int(durations.sum())
    # By whole columns: the kernels' rows grouped by demangled name (a code per row), each group's
    # durations sorted for its median; a million launches hold a few hundred distinct kernels.
    codes, names = categories_of(kernels["demangled"]).factorize()
    count, sums, medians, mins, maxs, ranked, starts = group_stats(codes, durations, len(names))
    first = np.full(len(names), codes.size)
    np.minimum.at(first, codes, np.arange(codes.size))  # each group's first row, as it read
    short = categories_of(kernels["name"])
    stats = []
    for g, demangled in enumerate(names):
        row = int(first[g])
        stats.append(KernelStats(
            name=str(short[row]), demangled=str(demangled), count=int(count[g]), total_ns=int(sums[g]),
            mean_ns=float(ranked[starts[g]:starts[g] + count[g]].mean()), median_ns=float(medians[g]), min_ns=int(mins[g]),
            max_ns=int(maxs[g]), share_pct=pct(sums[g], total),
            grid=launch_dims(kernels, row, "grid"), block=launch_dims(kernels, row, "block"),
        ))
    stats.sort(key=lambda k: (-k.total_ns, k.demangled))
    # Gaps between consecutive kernels (by start), from the latest end so far: concurrent kernels leave no gap.
    starts, ends = np.asarray(kernels["start"], dtype=np.int64), np.asarray(kernels["end"], dtype=np.int64)
    gaps = np.maximum(starts[1:] - np.maximum.accumulate(ends)[:-1], 0) if starts.size > 1 else np.array([], dtype=np.int64)
    kernel_gaps = {
        "count": int(gaps.size),
        "total_ns": int(gaps.sum()),
        "median_ns": median(gaps) if gaps.size else None,
        "p90_ns": percentile(gaps, 90) if gaps.size else None,
        "max_ns": int(gaps.max()) if gaps.size else None,
    }
    m.update(
        kernel_count=int(durations.size), distinct_kernels=len(stats), kernel_sum_ns=total,
        kernel_median_ns=median(durations), kernel_mean_ns=float(durations.mean()),
        kernel_gap_median_ns=kernel_gaps["median_ns"] if gaps.size else math.nan,
        kernel_gap_total_ns=kernel_gaps["total_ns"], kernel_gap_max_ns=kernel_gaps["max_ns"] if gaps.size else math.nan,
        top_kernel=stats[0].name, top_kernel_pct=stats[0].share_pct,
    )
    kernel_gaps = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in kernel_gaps.items()}
    return tuple(stats), kernel_gaps


def _copies(copies: Events, m: dict, host_unknown: str | None, unknown: dict, window: int) -> tuple[CopyStats, ...]:
    durations = np.asarray(copies["end"] - copies["start"], dtype=np.int64)
    nbytes = _bytes(copies)
    pageable = np.asarray(copies["pageable"], dtype=float) == 1.0
    stats = []
    for category in COPY_CATEGORIES:
        rows = copies["category"] == category
        if not rows.any():
            continue
        ns, b = int(durations[rows].sum()), int(nbytes[rows].sum())
        stats.append(CopyStats(category, int(rows.sum()), b, ns, b / ns if ns else math.nan,
                               None if host_unknown else int((rows & pageable).sum()),
                               None if host_unknown else int(nbytes[rows & pageable].sum())))
    total_ns, total_bytes = int(durations.sum()), int(nbytes.sum())
    m.update(memcpy_count=len(copies), memcpy_bytes=total_bytes, memcpy_sum_ns=total_ns,
             memcpy_gbps=total_bytes / total_ns if total_ns else math.nan)
    host = copies["category"].isin(["memcpy_htod", "memcpy_dtoh"])
    pinned = host & (copies["host_kind"] == "pinned")
    p_ns, p_bytes = int(durations[pageable].sum()), int(nbytes[pageable].sum())
    values = dict(pageable_memcpy_count=int(pageable.sum()), pageable_memcpy_bytes=p_bytes, pageable_memcpy_ns=p_ns,
                  pageable_memcpy_pct=pct(p_ns, window), pageable_memcpy_gbps=p_bytes / p_ns if p_ns else math.nan,
                  pinned_memcpy_gbps=int(nbytes[pinned].sum()) / int(durations[pinned].sum()) if pinned.any() and durations[pinned].sum() else math.nan)
    for name, value in values.items():
        m[name] = math.nan if host_unknown else value
        if host_unknown:
            unknown[name] = host_unknown
    return tuple(stats)


def _api(api: Events | None, kernels: Events, m: dict, span: tuple[int, int], window: int,
         api_unknown: str | None, unknown: dict) -> tuple[ApiStats, ...]:
    names = [n for n, item in timeline_metrics.CATALOGUE.items() if item.needs == "api"]
    if api is None:
        for name in names:
            m[name] = math.nan
            unknown[name] = api_unknown or "the CUDA API was not traced"
        return ()
    # By whole columns: a call's name is a code, its category a code looked up from the name's.
    calls = categories_of(api["name"])
    texts = [str(c) for c in calls.categories]
    codes = calls.codes
    name_category = np.array([API_CODES[api_category(t)] for t in texts], dtype=np.int8)
    category = name_category[codes]
    duration = np.asarray(api["end"], dtype=np.int64) - np.asarray(api["start"], dtype=np.int64)
    count, total_ns, median_ns, *_ = group_stats(codes, duration, len(texts))
    stats = [ApiStats(texts[i], API_CATEGORIES[name_category[i]], int(count[i]), int(total_ns[i]), float(median_ns[i]))
             for i in np.flatnonzero(count).tolist()]
    stats.sort(key=lambda a: (-a.total_ns, a.name))

    def total(kind: str) -> tuple[int, int]:
        of = name_category == API_CODES[kind]
        return int(count[of].sum()), int(total_ns[of].sum())

    launch_n, launch_ns = total("launch")
    sync_n, sync_ns = total("sync")
    malloc_n, malloc_ns = total("malloc")
    memcpy_n, memcpy_ns = total("memcpy")
    blocking = [i for i, t in enumerate(texts) if name_category[i] == API_CODES["memcpy"] and "Async" not in t]
    m.update(
        api_ns=int(duration.sum()), launch_calls=launch_n, launch_api_ns=launch_ns,
        launch_api_median_ns=median(duration[category == API_CODES["launch"]]) if launch_n else math.nan,
        launch_api_pct=pct(launch_ns, window),
        sync_calls=sync_n, sync_api_ns=sync_ns, sync_api_pct=pct(sync_ns, window),
        malloc_calls=malloc_n, malloc_api_ns=malloc_ns, malloc_api_pct=pct(malloc_ns, window),
        memcpy_calls=memcpy_n, memcpy_api_ns=memcpy_ns, blocking_memcpy_calls=int(count[blocking].sum()),
    )
    del duration
    # A launch is "synced" when the next launch-or-sync call of its thread is a sync (all calls are one
    # thread when the export has no thread ids).
    ls = _Calls(api, category)
    next_is_sync = np.zeros(ls.launch.size, dtype=bool)
    next_is_sync[:-1] = ~ls.launch[1:] & (ls.tid[1:] == ls.tid[:-1])
    synced = np.flatnonzero(ls.launch & next_is_sync)
    m["synced_launches"] = int(synced.size)
    m["synced_launch_pct"] = pct(synced.size, launch_n)
    m["sync_roundtrip_ns"] = _sync_roundtrips(ls, synced, kernels)
    m["sync_roundtrip_span_pct"] = pct(m["sync_roundtrip_ns"], span[1] - span[0])
    host = merge(ls.start, ls.end)
    m["launch_sync_span_pct"] = pct(length(clip(host, *span)), span[1] - span[0])
    m["launch_fix_buys_pct"] = min(m["launch_sync_span_pct"], m["kernel_span_idle_pct"])
    m["sync_fix_buys_pct"] = min(m["sync_roundtrip_span_pct"], m["kernel_span_idle_pct"])
    m["launch_fix_basis"] = m["sync_fix_basis"] = BOUND_BASIS
    # The host's time in the window: in launch, synchronize or other CUDA calls, or in none (host code).
    lo, hi = m["window_lo_hi"]
    in_api = covered(api["start"], api["end"], lo, hi)
    shares = {"launch calls": m["launch_api_pct"], "synchronize calls": m["sync_api_pct"],
              "other CUDA calls": max(0.0, pct(in_api, window) - m["launch_api_pct"] - m["sync_api_pct"]),
              "host code (no CUDA call)": max(0.0, 100.0 - pct(in_api, window))}
    m["host_code_pct"] = shares["host code (no CUDA call)"]
    m["window_host_limiter"] = max(HOST_PARTS, key=lambda part: shares[part])
    return tuple(stats)


def _steps(steps: Steps | None, m: dict, unknown: dict, api_unknown: str | None) -> None:
    """The steady steps' values the rules read (unknown without steps, the host's part without the API trace)."""
    names = [n for n, item in timeline_metrics.CATALOGUE.items() if item.needs == "steps"]
    if steps is None:
        for name in names:
            m[name] = math.nan
            unknown[name] = NO_STEPS
        return
    steady = steps.steady
    m.update(step_count=len(steady), warmup_steps=steps.warmup, step_period_ns=steps.period_ns, step_gpu_work_ns=steps.gpu_work_ns,
             step_gpu_busy_pct=steps.gpu_busy_pct)
    host = ("step_launches", "step_launch_api_pct", "step_sync_api_pct", "step_host_code_pct", "host_limiter")
    if steady[0].launches is None:
        for name in host:
            m[name] = math.nan
            unknown[name] = api_unknown or "the CUDA API was not traced"
        return

    shares = {
        # Shares of the host's own step (its start to the next's): where the host runs ahead, of the time it takes.
        "launch calls": median([pct(r.launch_api_ns, r.host_period_ns) for r in steady]),
        "synchronize calls": median([pct(r.sync_api_ns, r.host_period_ns) for r in steady]),
        "other CUDA calls": median([max(0.0, pct(r.api_ns - r.launch_api_ns - r.sync_api_ns, r.host_period_ns)) for r in steady]),
        "host code (no CUDA call)": median([r.host_code_pct for r in steady]),
    }
    m.update(step_launches=steps.median("launches"), step_launch_api_pct=shares["launch calls"],
             step_sync_api_pct=shares["synchronize calls"], step_host_code_pct=shares["host code (no CUDA call)"],
             host_limiter=max(HOST_PARTS, key=lambda part: shares[part]))
