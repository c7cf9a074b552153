"""A program's steps: the outermost NVTX ranges named like a step, each with the GPU work launched in it,
the warm-up apart from the steady state. A program is judged by its steady steps, not by an average
over its start-up (imports, CUDA and library initialisation, building the model) and warm-up (lazy
module loading, autotuning, allocator growth), which can take seconds against milliseconds a step.

- **Steps** are the NVTX ranges whose name matches the step pattern (default :data:`ncuwrap.timeline.options.STEP_PATTERN`: a
  range named ``step``, ``train_step``, ``step 12`` or PyTorch's ``ProfilerStep#12``; ``--step-range``
  sets another) that lie inside no other matching range.
- **A step's GPU work** is what was *launched* in it: each kernel, copy, memset (and CUDA graph
  execution) is matched to the CUDA call that launched it by correlationId, and belongs to the step in
  which that call started, whenever it runs; the GPU runs asynchronously, after the host returns. Work
  whose launch is not in the trace is placed by its own start.
- **A step's period** is set where its pace is set: a step begins when the host starts it or when the GPU
  has finished the work launched in the steps before it, whichever is later. Where the host runs ahead (it
  starts a step while the GPU still has more than :data:`QUEUED_NS` of earlier steps' work to run), the
  GPU sets the pace. A step's period runs from its beginning to the next step's; the last one's to its
  end or to the end of its GPU work, whichever is later. A loop whose host runs ahead (no synchronisation
  a step) thus gets the GPU's pace, not the host's start-to-start, which can be many times shorter. The
  steady steps' periods add up to the steady window, so their mean is the window over the steps: what the
  program's own clock reads around its loop.
- **A step's GPU busy share** is the GPU's busy time (with work launched in any step) within its period:
  the shares of all steps add up to the window's, with no cap.
- **Warm-up**: the leading steps that take more than :data:`WARMUP_FACTOR` times the median period of the
  steps after the first (at most half of the steps), or the first N given with ``--warmup N``. Where none
  does, in a loop whose later steps the GPU all paces: the leading steps the host paced that take longer
  than that median (the host had not yet run ahead).
- **Steady state**: the steps after the warm-up. Its window runs from the first steady step's start to the
  last one's period end; the CUDA calls that start in it and the GPU work they launched are what the
  timeline rules judge.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ncuwrap.core.errors import InputError
from ncuwrap.core.kernel_filter import search_all
from ncuwrap.timeline.events import Events
from ncuwrap.core.numbers import median
from ncuwrap.timeline.launches import (LAUNCH_PREFIXES, SYNC_CALLS, api_starts, categories_of, group_heads, launch_time, merge_intervals,
                                      text_is, traced_span, window_data)
from ncuwrap.timeline.model import pct
from ncuwrap.timeline.options import STEP_PATTERN

# "step" as a word, not after a dot: PyTorch's own ranges ("Optimizer.step#AdamW.step", recorded by
# torch.profiler and nsys --pytorch) are an optimizer's step inside the iteration, not the iteration.
FOUND_NAME = "found by repetition"
WARMUP_FACTOR = 1.5
# A host that starts a step while the GPU still has this much of the earlier steps' work to run is ahead of
# the GPU, which sets the pace (a step ending in a few microseconds of trailing work is still the host's).
QUEUED_NS = 50_000
CUT_LAST_BELOW = 0.5  # a found loop's last step shorter than this times the median step is cut short (Steps.cut_last)


@dataclass(frozen=True)
class StepRecord:
    """One step; times in ns on the capture's clock."""

    index: int  # 0-based, in time order
    start_ns: int  # the host's start (the NVTX range's, or its first launch call's)
    end_ns: int  # the NVTX range's end
    period_ns: int  # from its beginning (begin_ns) to the next step's (the last: to its end or its GPU work's end)
    gpu_work_ns: int  # union of the GPU activity launched in it
    kernels: int  # kernels (and graph executions traced as a whole) launched in it
    launches: int | None  # launch calls in it (None: the CUDA API was not traced)
    launch_api_ns: int | None  # time in those launch calls
    sync_api_ns: int | None  # time in synchronize calls started in it
    api_ns: int | None  # time within its host period in any CUDA call (union over threads)
    warmup: bool
    begin_ns: int = 0  # where its period begins: start_ns, or the end of the earlier steps' GPU work if later
    paced_by: str = "host"  # "gpu": the host started it with more than QUEUED_NS of earlier steps' GPU work to run; else "host"
    host_period_ns: int = 0  # the host's start to the next step's (the last: to its end)
    gpu_busy_ns: int = 0  # the GPU's busy time (work launched in any step) within its period
    api_calls: int | None = None  # CUDA calls the host made in it (None: the CUDA API was not traced)
    ops: int = 0  # PyTorch op ranges that started in it (nsys --pytorch, the profiler's cpu_op), 0 where none was traced
    frames: int = 0  # Python frames the profiler recorded in it (with_stack)
    host_wait_ns: int | None = None  # the step's thread's waits for other processes (poll, sleeps) in it; None: not traced

    @property
    def gpu_busy_pct(self) -> float:
        return pct(self.gpu_busy_ns, self.period_ns) if self.period_ns > 0 else math.nan

    @property
    def host_code_pct(self) -> float | None:
        """Share of the host's step (its start to the next's) in no CUDA call (Python, data preparation...)."""
        return None if self.api_ns is None else max(0.0, 100.0 - pct(self.api_ns, self.host_period_ns))

    def to_json(self, origin: int) -> dict:
        return {"index": self.index, "start_ns": self.start_ns - origin, "end_ns": self.end_ns - origin, "begin_ns": self.begin_ns - origin,
                "paced_by": self.paced_by, "period_ns": self.period_ns, "host_period_ns": self.host_period_ns,
                "gpu_work_ns": self.gpu_work_ns, "gpu_busy_ns": self.gpu_busy_ns, "gpu_busy_pct": _round(self.gpu_busy_pct), "kernels": self.kernels,
                "launches": self.launches, "launch_api_ns": self.launch_api_ns, "sync_api_ns": self.sync_api_ns,
                "host_code_pct": _round(self.host_code_pct), "warmup": self.warmup}


@dataclass(frozen=True)
class Steps:
    """The steps of one capture, the warm-up told apart."""

    name: str  # the most common matching range name
    records: tuple[StepRecord, ...]
    warmup: int  # leading steps left out as warm-up
    warmup_set: bool  # True: given with --warmup; False: detected
    warmup_why: str
    capture_start_ns: int  # the whole capture's traced span
    capture_end_ns: int
    found: object = None  # ncuwrap.timeline.repetition.Found: the steps were found by repetition, not marked
    # A found loop's last step ends at its last launch: where the host sets the pace, the host's work after it
    # (the next iteration's preparation, say) is not in the trace, and a step far shorter than the others is
    # that cut iteration, left out of the steady steps.
    cut_last: bool = False

    @property
    def found_by(self) -> str:
        """'marked' (NVTX ranges, ProfilerStep#N) or 'repetition'."""
        return "repetition" if self.found is not None else "marked"

    def found_text(self) -> str | None:
        """How the steps were found by repetition ('steps found by repetition: 12 steps of 324 launches...');
        None for marked steps."""
        return None if self.found is None else self.found.describe([r.period_ns for r in self.steady], self.warmup)

    @property
    def count(self) -> int:
        return len(self.records)

    @property
    def steady(self) -> tuple[StepRecord, ...]:
        return self.records[self.warmup:self.count - self.cut_last]

    @property
    def start_ns(self) -> int:
        return self.records[0].start_ns

    @property
    def steady_start_ns(self) -> int:
        """Where the steady window begins: the first steady step's beginning (its first GPU work's start
        where the GPU sets the pace)."""
        return self.steady[0].begin_ns

    @property
    def steady_end_ns(self) -> int:
        return max(r.begin_ns + r.period_ns for r in self.steady)

    @property
    def steady_launch_span(self) -> tuple[int, int]:
        """The host's steady steps: from the first steady step's start to the last one's end, inclusive; the
        CUDA calls made in it and the GPU work they launched are the steady steps' (the GPU may run them later)."""
        last = self.steady[-1]
        if self.cut_last:
            return self.steady[0].start_ns, self.records[-1].start_ns
        return self.steady[0].start_ns, max(last.end_ns, last.start_ns) + 1

    def steady_data(self, data):
        """``data`` keeping the CUDA calls the host made in the steady steps and the GPU work they launched (placed
        by its own start where its launch is not traced), whole: work that runs on after the window is kept, and
        calls made before it (a host that runs ahead launches a step's work before the GPU begins it). What the
        analysis of the steady steps reads (ncuwrap.timeline.analysis.analyze_steady)."""
        return window_data(data, *self.steady_launch_span)

    def work_by_step(self, data, frame: Events) -> np.ndarray:
        """Per step, the union of the intervals of ``frame``'s GPU events (a subset of ``data``'s kernels,
        say) launched in it."""
        starts = np.array([r.start_ns for r in self.records], dtype=np.int64)
        ends = np.array([r.end_ns for r in self.records], dtype=np.int64)
        which = _step_of(launch_time(frame, api_starts(data)), starts, ends)
        return _union_by_group(which, np.asarray(frame["start"], dtype=np.int64), np.asarray(frame["end"], dtype=np.int64), starts.size)

    @property
    def paced_by(self) -> str:
        """'gpu' where most steady steps have their pace set by the GPU (the host runs ahead), else 'host'."""
        gpu = sum(r.paced_by == "gpu" for r in self.steady)
        return "gpu" if 2 * gpu > len(self.steady) else "host"

    @property
    def mean_period_ns(self) -> float:
        """The steady window over its steps: the mean step, outlier steps in (the program's own clock around its loop)."""
        return self.steady_ns / len(self.steady)

    @property
    def host_period_ns(self) -> float:
        """The median of the host's start-to-start over the steady steps."""
        return self.median("host_period_ns")

    @property
    def startup_ns(self) -> int:
        """Before the first step: from the capture's first CUDA call or GPU activity."""
        return max(0, self.start_ns - self.capture_start_ns)

    @property
    def warmup_ns(self) -> int:
        return self.steady_start_ns - self.start_ns

    @property
    def steady_ns(self) -> int:
        return self.steady_end_ns - self.steady_start_ns

    @property
    def after_ns(self) -> int:
        """After the steady steps (teardown), to the capture's end."""
        return max(0, self.capture_end_ns - self.steady_end_ns)

    def median(self, field: str) -> float:
        values = [getattr(r, field) for r in self.steady]
        values = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
        return median(values) if values else math.nan

    @property
    def period_ns(self) -> float:
        return self.median("period_ns")

    @property
    def gpu_work_ns(self) -> float:
        return self.median("gpu_work_ns")

    @property
    def gpu_busy_pct(self) -> float:
        return self.median("gpu_busy_pct")

    def to_json(self) -> dict:
        origin = self.capture_start_ns
        return {
            "count": self.count, "name": self.name, "found_by": self.found_by,
            **({"repetition": self.found.to_json([r.period_ns for r in self.steady], self.warmup)} if self.found is not None else {}),
            "warmup": {"count": self.warmup, "how": "set" if self.warmup_set else "detected", "why": self.warmup_why,
                       "ns": self.warmup_ns},
            "steady_count": len(self.steady), "startup_ns": self.startup_ns, "steady_ns": self.steady_ns, "after_ns": self.after_ns,
            "period_ns": _round(self.period_ns), "mean_period_ns": _round(self.mean_period_ns), "paced_by": self.paced_by,
            "host_period_ns": _round(self.host_period_ns),
            "gpu_work_ns": _round(self.gpu_work_ns), "gpu_busy_pct": _round(self.gpu_busy_pct),
            "launches": _round(self.median("launches")), "host_code_pct": _round(self.median("host_code_pct")),
            "steps": [r.to_json(origin) for r in self.records],
        }


def _round(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return round(float(value), 4)


def ranges(nvtx: Events | None, pattern: str = STEP_PATTERN) -> tuple[str, np.ndarray, np.ndarray] | None:
    """The steps among ``nvtx``'s ranges (name, starts, ends, in time order): matching ranges inside no
    other matching range; None when none matches."""
    if nvtx is None or nvtx.empty:
        return None
    # Each distinct name is matched once (a capture repeats a step's name thousands of times), all of them
    # in bulk: the default pattern's every match holds "step" (any case).
    names = categories_of(nvtx["name"])
    literal = ("step", True) if pattern == STEP_PATTERN else (None, False)
    verdicts = search_all(pattern, names.categories, literal=literal[0], folded=literal[1], option="--step-range",
                          what="NVTX range name of a step")
    match = nvtx.rows(np.append(verdicts, False)[names.codes])
    if match.empty:
        return None
    match = match.rows(np.lexsort((-np.asarray(match["end"], dtype=np.int64), match["start"])))  # by start, the longest first
    starts, ends = np.asarray(match["start"], dtype=np.int64), np.asarray(match["end"], dtype=np.int64)
    reach = np.maximum.accumulate(ends)
    outer = np.ones(starts.size, dtype=bool)
    outer[1:] = ends[1:] > reach[:-1]  # not contained in an earlier (outer) range
    names = match["name"][outer].tolist()
    # torch.profiler numbers its steps (ProfilerStep#2, #3...): named as one.
    name = "ProfilerStep#N" if all(str(n).startswith("ProfilerStep#") for n in names) else Counter(names).most_common(1)[0][0]
    return str(name), starts[outer], np.maximum(ends[outer], starts[outer])


def _step_of(times: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The index of the step each time falls in ([start, end)), -1 for none."""
    at = (np.searchsorted(starts, times, side="right") - 1).astype(np.int32)  # steps number far below 2**31
    at[(at >= 0) & (times >= ends[np.clip(at, 0, None)])] = -1
    return at


def _union_by_group(groups: np.ndarray, s: np.ndarray, e: np.ndarray, n: int) -> np.ndarray:
    """Per group 0..n-1, the length of the union of its intervals [s, e)."""
    out = np.zeros(n, dtype=np.int64)
    keep = groups >= 0
    if not keep.all():
        groups, s, e = groups[keep], s[keep], e[keep]
    if not groups.size:
        return out
    # Sorted by group, then start (CUDA calls come sorted by start, and their steps follow it: no sort).
    if (groups[1:] < groups[:-1]).any() or ((s[1:] < s[:-1]) & (groups[1:] == groups[:-1])).any():
        order = np.lexsort((s, groups))
        groups, s, e = groups[order], s[order], e[order]
    heads = group_heads(groups)
    # Each group moved past the one before it (its times from its own first start, plus the widths of
    # the groups before), so that one running maximum over all of them never reaches back a group.
    base = s[heads]
    widths = np.maximum.reduceat(e, heads) - base + 1
    if int(widths.sum(dtype=object)) >= 2**62:  # would overflow: one running maximum per group
        for a, b in zip(heads.tolist(), [*heads[1:].tolist(), groups.size]):
            out[groups[a]] = _union_length(s[a:b], e[a:b])
        return out
    shift = np.repeat(np.cumsum(widths) - widths - base, np.diff(heads, append=groups.size))
    e2 = e + shift
    # Sorted by start, an interval adds what lies beyond the furthest end before it.
    before = np.empty_like(e2)
    np.maximum.accumulate(e2[:-1], out=before[1:])
    np.add(s, shift, out=shift)  # the starts, moved
    before[heads] = shift[heads]
    np.maximum(shift, before, out=before)
    del shift
    np.subtract(e2, before, out=before)
    np.maximum(before, 0, out=before)
    return _add_by_group(out, groups, before)


def _add_by_group(out: np.ndarray, groups: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``out`` plus each group's sum of ``values`` (integers, exactly; groups sorted)."""
    heads = group_heads(groups)
    out[groups[heads]] += np.add.reduceat(values, heads)
    return out


def _union_length(s: np.ndarray, e: np.ndarray) -> int:
    reach = np.maximum.accumulate(e)
    before = np.concatenate([[s[0]], reach[:-1]])
    return int(np.maximum(0, e - np.maximum(s, before)).sum())


def measure(data, pattern: str = STEP_PATTERN, warmup: int | None = None, find: str = "auto") -> Steps | None:
    """The steps of ``data`` (a TimelineData read with its NVTX ranges), or None without any. ``warmup``:
    how many leading steps are warm-up (None: detected, see the module's docstring). ``find``
    (:data:`ncuwrap.timeline.options.FIND_CHOICES`): with "auto", a capture without step ranges has its steps found by repetition
    (ncuwrap.timeline.repetition)."""
    if find == "none":
        return None
    found, repeated = ranges(data.nvtx, pattern), None
    if found is None and find == "auto":
        from ncuwrap.timeline import iterations

        repeated = iterations.find(launch_sequence(data, api_starts(data)))
        if repeated is not None:
            ends = repeated.ends_ns.copy()  # the last step ends with its last launch call
            ends[-1] = _call_end(data, repeated.last_correlation, int(ends[-1]))
            found = (FOUND_NAME, repeated.starts_ns, ends)
    if found is None:
        return None
    name, starts, ends = found
    n = starts.size
    api_start = api_starts(data)
    frames = [f for f in (data.kernels, data.copies, data.memsets) if f is not None]  # kernels first
    launched = [launch_time(f, api_start) for f in frames]
    which = [_step_of(t, starts, ends) for t in launched]
    gs = np.concatenate([np.asarray(f["start"], dtype=np.int64) for f in frames])
    ge = np.concatenate([np.asarray(f["end"], dtype=np.int64) for f in frames])
    gw = np.concatenate(which)
    work = _union_by_group(gw, gs, ge, n)
    gpu_end = np.full(n, np.iinfo(np.int64).min)
    inside = gw >= 0
    np.maximum.at(gpu_end, gw[inside], ge[inside])
    kernels = np.bincount(which[0][which[0] >= 0], minlength=n)
    begin, gpu_paced = _beginnings(starts, gpu_end)

    host_period = np.empty(n, dtype=np.int64)
    host_period[:-1] = starts[1:] - starts[:-1]
    host_period[-1] = max(int(ends[-1]), int(starts[-1])) - int(starts[-1])
    period = np.empty(n, dtype=np.int64)
    period[:-1] = begin[1:] - begin[:-1]
    period[-1] = max(int(ends[-1]), int(gpu_end[-1]), int(begin[-1])) - int(begin[-1])
    # The GPU busy with the loop's work (launched in some step) within each step's period: these add up to the
    # steady window's busy time, which is of the work launched in the steady steps.
    busy = _covered_in(merge_intervals(gs[inside], ge[inside]), begin, begin + period)

    del which, gs, ge, gw, inside, launched
    api = data.api
    if api is not None:
        a_start, a_end = np.asarray(api["start"], dtype=np.int64), np.asarray(api["end"], dtype=np.int64)
        a_step = _step_of(a_start, starts, ends)

        def per_step(calls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """How many of the ``calls`` (a mask) each step holds, and their time."""
            at = np.flatnonzero(calls & (a_step >= 0))
            return (np.bincount(a_step[at], minlength=n),
                    np.bincount(a_step[at], weights=a_end[at] - a_start[at], minlength=n).astype(np.int64))

        api_calls = np.bincount(a_step[a_step >= 0], minlength=n)
        launches, launch_ns = per_step(text_is(api["name"], lambda n: n.startswith(LAUNCH_PREFIXES)))
        sync_ns = per_step(text_is(api["name"], lambda n: n in SYNC_CALLS))[1]
        del a_step
        # Host time in CUDA calls within each host step (its start to the next's): calls clipped to the one they start in.
        p_step = _step_of(a_start, starts, starts + host_period)
        clipped_end = np.minimum(a_end, (starts + host_period)[np.clip(p_step, 0, None)])
        api_ns = _union_by_group(p_step, a_start, clipped_end, n)
    ops, frames = (_count_by_step(getattr(data, name, None), starts, ends) for name in ("ops", "frames"))
    waits = _host_waits(data, starts, starts, starts + host_period)
    first_start, last_end = traced_span(data)
    cut = bool(repeated is not None and n - 1 >= 3 and period[-1] < CUT_LAST_BELOW * median(period[1:-1]))
    warmup_n, why = _warmup(period[:n - cut], warmup, data.path, gpu_paced[:n - cut])
    records = tuple(StepRecord(
        index=i, start_ns=int(starts[i]), end_ns=int(ends[i]), period_ns=int(period[i]), gpu_work_ns=int(work[i]), kernels=int(kernels[i]),
        launches=int(launches[i]) if api is not None else None, launch_api_ns=int(launch_ns[i]) if api is not None else None,
        sync_api_ns=int(sync_ns[i]) if api is not None else None, api_ns=int(api_ns[i]) if api is not None else None,
        warmup=i < warmup_n, begin_ns=int(begin[i]), paced_by="gpu" if gpu_paced[i] else "host", host_period_ns=int(host_period[i]),
        gpu_busy_ns=int(busy[i]), api_calls=int(api_calls[i]) if api is not None else None, ops=int(ops[i]), frames=int(frames[i]),
        host_wait_ns=int(waits[i]) if waits is not None else None)
        for i in range(n))
    return Steps(name=name, records=records, warmup=warmup_n, warmup_set=warmup is not None, warmup_why=why,
                 capture_start_ns=min(first_start, int(starts[0])), capture_end_ns=max(last_end, int(ends[-1]), int(begin[-1] + period[-1])),
                 found=repeated, cut_last=cut)


def _host_waits(data, starts: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray | None:
    """Per host step [lo, hi), the time the step's thread (the one that makes the first CUDA call of most steps)
    spent waiting for other processes (ncuwrap.timeline.readers.nsys_sqlite.BLOCKING_CALLS); None where they were not traced
    (or the CUDA API was not)."""
    waits, api = getattr(data, "host_waits", None), data.api
    if waits is None or api is None or not len(api):
        return None
    a_start = np.asarray(api["start"], dtype=np.int64)
    first = np.searchsorted(a_start, starts, side="left")  # the calls come sorted by start
    first = first[first < a_start.size]
    tids = np.asarray(api["tid"], dtype=float)[first]
    tids = tids[~np.isnan(tids)]
    if not tids.size:
        return None
    values, counts = np.unique(tids, return_counts=True)
    mine = np.asarray(waits["tid"], dtype=float) == values[np.argmax(counts)]
    s, e = np.asarray(waits["start"], dtype=np.int64)[mine], np.asarray(waits["end"], dtype=np.int64)[mine]
    return _covered_in(merge_intervals(s, e), lo, hi)


def _count_by_step(frame: Events | None, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """How many of ``frame``'s events (ops, frames) start in each step (none: zeros)."""
    if frame is None or not len(frame):
        return np.zeros(starts.size, dtype=np.int64)
    at = _step_of(np.asarray(frame["start"], dtype=np.int64), starts, ends)
    return np.bincount(at[at >= 0], minlength=starts.size)


def _beginnings(starts: np.ndarray, gpu_end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each step's period begins, and whether the GPU set its pace: a step begins when the host starts it
    or when the GPU has finished the work launched in the steps before it, whichever is later. A host that
    runs ahead starts a step while the GPU still runs earlier steps' work (by more than QUEUED_NS: the GPU sets
    the pace); a host that waits for the GPU, or feeds an idle one, starts each step after it."""
    done = np.full(starts.size, np.iinfo(np.int64).min, dtype=np.int64)  # the work of the steps before: its end
    if starts.size > 1:
        done[1:] = np.maximum.accumulate(gpu_end[:-1])
    begin = np.maximum(starts, done)
    return begin, done > starts + QUEUED_NS  # (no subtraction: "none before" is the smallest int64)


def _covered_in(merged: tuple[np.ndarray, np.ndarray], lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """For each window [lo, hi), the length of the merged intervals inside it (two searches, no loop)."""
    s, e = merged
    if not s.size:
        return np.zeros(lo.size, dtype=np.int64)
    done = np.concatenate(([0], np.cumsum(e - s)))  # covered before interval j

    def before(x: np.ndarray) -> np.ndarray:
        j = np.searchsorted(s, x, side="right")  # intervals starting at or before x
        inside = np.clip(x - s[np.clip(j - 1, 0, None)], 0, (e - s)[np.clip(j - 1, 0, None)])
        return done[np.clip(j - 1, 0, None)] + np.where(j > 0, inside, 0)

    return (before(hi) - before(lo)).astype(np.int64)


def launch_sequence(data, api_start):
    """``data``'s GPU work launches in launch order, as ncuwrap.timeline.repetition searches them (a
    repetition.Launches; None: no GPU work). ``api_start``: :func:`api_starts` (None: the API was not traced)."""
    from ncuwrap.timeline.repetition import Launches

    tables, names, to_host, offset = [], [], [], 0
    # Memsets are left out: libraries issue them beside their kernels (cuBLASLt's workspace) in an order
    # that varies from call to call, and not every call; they are still a step's work (ncuwrap.timeline.steps).
    for frame, column in ((data.kernels, "demangled"), (data.copies, "category")):
        if frame is None or not len(frame):
            continue
        labels = categories_of(frame[column])  # its codes are the tokens: no pass over the rows to renumber them
        texts = [*labels.categories, "unnamed"]
        codes = np.where(labels.codes < 0, len(texts) - 1, labels.codes).astype(np.int64)
        tables.append((frame, codes + offset))
        names += [str(t) for t in texts]
        to_host += [column == "category" and t == "memcpy_dtoh" for t in texts]
        offset += len(texts)
    if not tables:
        return None
    start = np.concatenate([np.asarray(f["start"], dtype=np.int64) for f, _ in tables])
    end = np.concatenate([np.asarray(f["end"], dtype=np.int64) for f, _ in tables])
    token = np.concatenate([c for _, c in tables])
    kernel_rows = len(tables[0][0]) if data.kernels is not None and len(data.kernels) else 0  # the kernels' rows come first
    launched = np.concatenate([launch_time(f, api_start) for f, _ in tables])
    corr = np.concatenate([np.asarray(f["correlation"], dtype=float) if "correlation" in f else np.full(len(f), np.nan)
                           for f, _ in tables])
    # One launch per correlationId (a CUDA graph's nodes share their launch's); work without one is its own launch.
    unknown = np.isnan(corr)
    key = np.where(unknown, -1.0 - np.arange(corr.size), corr)
    order = np.lexsort((start, key))
    key = key[order]
    heads = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    gpu = np.add.reduceat((end - start)[order], heads) if heads.size else np.zeros(0, dtype=np.int64)
    rows = order[heads]
    tokens = token[rows]
    graphs = _graph_tokens(tokens, token, order, heads, kernel_rows, offset, names, to_host)
    # Launches at one instant (a library's several launches timed alike) in the order they ran.
    by_time = np.lexsort((key[heads], start[rows], launched[rows]))
    rows = rows[by_time]
    # The host's calls: PyTorch's op ranges where they were traced (their names without nsys's op_id), else NVTX's.
    calls = data.ops if data.ops is not None and len(data.ops) else data.nvtx
    return Launches(tokens=tokens[by_time], times=launched[rows], correlation=corr[rows], gpu_ns=gpu[by_time].astype(np.int64),
                    to_host=np.array(to_host, dtype=bool), names=names, graphs=graphs, calls=calls)


def _graph_tokens(tokens: np.ndarray, token: np.ndarray, order: np.ndarray, heads: np.ndarray, kernel_rows: int, offset: int,
                  names: list, to_host: list) -> dict:
    """Each CUDA graph launch traced node by node (several events of one correlationId, a kernel among them) as
    a token of its own, one per distinct node sequence, set in ``tokens`` (one per launch; ``token``: each
    event's, ``order``: the events grouped by launch from ``heads``, the first ``kernel_rows`` events kernels);
    its name added to ``names`` and ``to_host``. Returns {graph token: its nodes' tokens in order}. A copy split
    into chunks stays a copy."""
    if heads.size == order.size:  # one event a launch: no graph traced node by node
        return {}
    sizes = np.diff(np.append(heads, order.size))
    events = token[order]
    graph = (sizes > 1) & (np.add.reduceat((order < kernel_rows).astype(np.int64), heads) > 0)
    if not graph.any():
        return {}
    # A hash of each launch's node sequence: sum of (token + 1) * B**position, wrapping in 64 bits.
    position = np.arange(events.size) - np.repeat(heads, sizes)
    mixed = (events.astype(np.uint64) + np.uint64(1)) * _powers(int(sizes.max()))[position]
    digest = np.add.reduceat(mixed, heads)[graph] ^ (sizes[graph].astype(np.uint64) * np.uint64(0xD6E8FEB86659FD93))
    distinct, first, which = np.unique(digest, return_index=True, return_inverse=True)
    at = np.flatnonzero(graph)
    tokens[at] = offset + which.reshape(-1)
    out = {}
    for j, i in enumerate(at[first].tolist()):
        nodes = events[heads[i]:heads[i] + sizes[i]].copy()
        out[offset + j] = nodes
        names.append(f"CUDA graph ({nodes.size} nodes)")
        to_host.append(False)
    return out


def _powers(n: int) -> np.ndarray:
    """B**0 .. B**(n-1) for an odd 64-bit B, wrapping."""
    with np.errstate(over="ignore"):
        return np.concatenate(([np.uint64(1)], np.cumprod(np.full(n - 1, 0x9E3779B97F4A7C15, dtype=np.uint64)))).astype(np.uint64)


def _call_end(data, correlation: float, default: int) -> int:
    """The end of the CUDA call with ``correlation`` (``default`` where none has it): one lookup, not an
    index of every call."""
    if data.api is None or correlation != correlation:
        return default
    at = np.flatnonzero(np.asarray(data.api["correlation"], dtype=float) == correlation)
    return max(default, int(np.asarray(data.api["end"], dtype=np.int64)[at].max())) if at.size else default


def _warmup(period: np.ndarray, warmup: int | None, path, gpu_paced: np.ndarray | None = None) -> tuple[int, str]:
    n = period.size
    if warmup is not None:
        if warmup < 0 or warmup >= n:
            raise InputError(f"{path}: --warmup {warmup}: the capture has {n} step{'s' if n != 1 else ''}; give 0 to {n - 1} warm-up steps, "
                             "so that at least one steady step is left")
        return warmup, f"the first {warmup} step{'s' if warmup != 1 else ''}, as given (--warmup {warmup})"
    if n < 2:
        return 0, "a single step: nothing to compare it with"
    # The steps after the first: a robust median even where the first few are warm-up (at most half are),
    # and close to the steady steps' own median, which the reports quote beside it.
    reference = median(period[1:])
    k = 0
    while k < n // 2 and period[k] > WARMUP_FACTOR * reference:
        k += 1
    after = f"the {n - 1} step{'s' if n > 2 else ''} after the first"
    if not k and gpu_paced is not None:
        # A loop the GPU paces once warm: its leading steps that the host paced, each longer than that median, had not
        # yet run ahead (the fp32 MLP's first found step, 1.25x: the host launched it 8.3 ms late).
        while k < n // 2 and not gpu_paced[k] and gpu_paced[k + 1:].all() and period[k] > reference:
            k += 1
        if k:
            which = f"the first {k} steps" if k > 1 else "the first step"
            return k, (f"{which} {'were' if k > 1 else 'was'} paced by the host, the {n - k} after by the GPU, and "
                       f"{'each' if k > 1 else 'it'} took longer than the median period of {after} ({reference / 1e6:.3g} ms; "
                       f"slowest {float(period[:k].max()) / reference:.2f}x): the host had not yet run ahead")
    if not k:
        return 0, f"no leading step takes more than {WARMUP_FACTOR:g}x the median period of {after} ({reference / 1e6:.3g} ms)"
    slowest = float(period[:k].max())
    ratio = f"slowest {slowest / reference:.1f}x" if reference > 0 else "the others take no time"  # steps of no length: hostile times
    return k, (f"{f'the first {k} steps take' if k > 1 else 'the first step takes'} more than {WARMUP_FACTOR:g}x the median period of "
               f"{after} ({reference / 1e6:.3g} ms; {ratio})")
