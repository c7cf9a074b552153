"""The replay: every start and end of a step graph recomputed from its durations and edges, once, in launch order.

Linear in the graph's events: each call and each GPU event is visited once, and each looks only at the edges
it carries (its previous call, its launch, its stream's previous event, one cross-stream event, one awaited
event). Replaying the graph as built gives back the capture; a remedy edits the graph and replays it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ncuwrap.timeline.whatif.graph import StepGraph


# The parts of the critical path, in the order a picture shows them.
PATH_PARTS = ("host code", "host work", "CUDA calls", "waits for other processes", "launch latency", "kernels", "copies and memsets",
              "GPU gaps")
_HOST_PREV, _HOST_RELEASE = 0, 1
_BY_LAUNCH, _BY_STREAM, _BY_DEP = 0, 1, 2


@dataclass(frozen=True)
class Replayed:
    """A replay's outcome: the steady window it gives, the mean step (ns), and the window's critical path by part
    (PATH_PARTS; ns over the whole window, adding up to it)."""

    window_ns: int
    steps: int
    path_ns: tuple = ()

    @property
    def step_ns(self) -> float:
        return self.window_ns / self.steps


def replay(g: StepGraph) -> Replayed:
    """Replay ``g``: the window from the first step's beginning to the next step's (or the last step's end)."""
    n, m = g.calls, g.events
    lat, qgap, dur = g.g_lat.tolist(), g.g_qgap.tolist(), g.g_dur.tolist()
    dep, dgap, stream = g.g_dep.tolist(), g.g_dgap.tolist(), g.g_stream.tolist()
    gs, ge = g.g_start.tolist(), g.g_end.tolist()
    calls = g.g_call.tolist()
    extra = g.extra_deps
    by_call: list[list[int]] = [[] for _ in range(n)]
    stream_end: dict[int, int] = {}
    for j in range(m):
        c = calls[j]
        if c < 0:  # launched before the window: where it ran
            st = stream[j]
            stream_end[st] = max(stream_end.get(st, ge[j]), ge[j])
        else:
            by_call[c].append(j)
    own, wait, ret = g.h_own.tolist(), g.h_wait.tolist(), g.h_ret.tolist()
    code, work = g.h_code.tolist(), g.h_work.tolist()
    release, after = g.h_release.tolist(), g.h_after.tolist()
    hs = [0] * n
    he = [0] * n
    h_by = [_HOST_PREV] * n  # what each call's start waited for
    h_prev = [-1] * n  # the call whose end it followed
    h_waited = [False] * n  # its end was the awaited GPU work's
    g_by = [_BY_LAUNCH] * m
    g_pred = [-1] * m  # the event it followed (stream order or another stream)
    last_stream: dict[int, int] = {}
    prev_end, prev_idx = int(g.h_start[0]), -1
    for i in range(n):
        if i == 0:
            s = int(g.h_start[0])
        else:
            s = prev_end + code[i] + work[i]
            h_prev[i] = prev_idx
            if release[i] >= 0 and release[i] + after[i] > s:
                s = release[i] + after[i]
                h_by[i] = _HOST_RELEASE
        for j in by_call[i]:
            st = stream[j]
            t = s + lat[j]
            pe = stream_end.get(st)
            if pe is not None and pe + qgap[j] > t:
                t = pe + qgap[j]
                g_by[j], g_pred[j] = _BY_STREAM, last_stream.get(st, -1)
            d = dep[j]
            if d >= 0 and ge[d] + dgap[j] > t:
                t = ge[d] + dgap[j]
                g_by[j], g_pred[j] = _BY_DEP, d
            for d2, gap2 in extra.get(j, ()):
                if ge[d2] + gap2 > t:
                    t = ge[d2] + gap2
                    g_by[j], g_pred[j] = _BY_DEP, d2
            gs[j] = t
            ge[j] = t + dur[j]
            stream_end[st] = ge[j]
            last_stream[st] = j
        e = s + own[i]
        w = wait[i]
        if w >= 0 and ge[w] + ret[i] > e:
            e = ge[w] + ret[i]
            h_waited[i] = True
        hs[i] = s
        he[i] = e
        if e > prev_end:
            prev_end, prev_idx = e, i
    arrays = [np.asarray(x, dtype=np.int64) for x in (hs, he, gs, ge)]
    window, start, end_node = _window(g, *arrays, with_end=True)
    trace = _Trace(g, hs, he, gs, ge, h_by, h_prev, h_waited, g_by, g_pred)
    return Replayed(window_ns=window, steps=g.steps, path_ns=trace.path(end_node, start, start + window))


class _Trace:
    """The critical path walked back from the window's end: each element's binding edge to its predecessor."""

    def __init__(self, g, hs, he, gs, ge, h_by, h_prev, h_waited, g_by, g_pred):
        self.g, self.hs, self.he, self.gs, self.ge = g, hs, he, gs, ge
        self.h_by, self.h_prev, self.h_waited, self.g_by, self.g_pred = h_by, h_prev, h_waited, g_by, g_pred

    def path(self, end_node: tuple, lo: int, hi: int) -> tuple:
        parts = dict.fromkeys(PATH_PARTS, 0)
        g = self.g
        kind, k = end_node
        t = hi
        if kind == "call" and k >= 0:  # the next step's first call: the window ends at its start, less its lead
            t, kind, k = self._call_start(k, min(t, self.hs[k]), lo, parts)
        for _ in range(g.calls + g.events + 1):  # each element once at most: the walk goes back in time
            if t <= lo or k < 0:
                break
            if kind == "call":
                t, kind, k = self._call(k, t, lo, parts)
            elif kind == "start":  # a call reached by the work it launched: what its start waited for
                t, kind, k = self._call_start(k, t, lo, parts)
            else:
                t, kind, k = self._event(k, t, lo, parts)
        if t > lo:
            parts["host code"] += t - lo  # before the first call replayed: the host's, as the step's lead
        return tuple(parts[p] for p in PATH_PARTS)

    @staticmethod
    def _add(parts: dict, part: str, a: int, b: int, lo: int) -> None:
        if b > a:
            parts[part] += b - max(a, lo) if b > lo else 0

    def _call(self, i: int, t: int, lo: int, parts: dict):
        g = self.g
        if t > self.he[i]:
            self._add(parts, "host code", self.he[i], t, lo)
            t = self.he[i]
        if self.h_waited[i]:
            w = int(g.h_wait[i])
            self._add(parts, "CUDA calls", self.ge[w], t, lo)
            return min(t, self.ge[w]), "event", w
        self._add(parts, "CUDA calls", self.hs[i], t, lo)
        return self._call_start(i, min(t, self.hs[i]), lo, parts)

    def _call_start(self, i: int, t: int, lo: int, parts: dict):
        """What call ``i``'s start waited for, from ``t`` (at or before it) back."""
        g = self.g
        if self.h_by[i] == _HOST_RELEASE:
            self._add(parts, "host code", int(g.h_release[i]), t, lo)
            self._add(parts, "waits for other processes", lo, int(g.h_release[i]), lo)
            return lo, "call", -1
        prev = self.h_prev[i]
        if prev < 0:
            return t, "call", -1
        work = min(int(g.h_work[i]), t - self.he[prev])
        self._add(parts, "host work", t - work, t, lo)
        self._add(parts, "host code", self.he[prev], t - work, lo)
        return min(t, self.he[prev]), "call", prev

    def _event(self, j: int, t: int, lo: int, parts: dict):
        g = self.g
        if t > self.ge[j]:
            self._add(parts, "GPU gaps", self.ge[j], t, lo)
            t = self.ge[j]
        self._add(parts, "kernels" if g.g_kind[j] == 0 else "copies and memsets", self.gs[j], t, lo)
        t = min(t, self.gs[j])
        pred = self.g_pred[j]
        if self.g_by[j] != _BY_LAUNCH and pred >= 0:
            return t, "event", pred
        c = int(g.g_call[j])
        if c < 0:
            return t, "event", -1
        self._add(parts, "launch latency", self.hs[c], t, lo)
        return min(t, self.hs[c]), "start", c


def measured(g: StepGraph) -> Replayed:
    """The graph's own times put through the same window: what an exact replay gives."""
    return Replayed(window_ns=_window(g, g.h_start, g.h_end, g.g_start, g.g_end), steps=g.steps)


def _window(g: StepGraph, hs: np.ndarray, he: np.ndarray, gs: np.ndarray, ge: np.ndarray, with_end: bool = False):
    """From the first step's beginning to the next step's beginning (or the last step's end): a step begins
    when the host starts it or when the GPU has finished the work launched before it, whichever is later.
    ``with_end``: also the window's start and the element that ends it (("call" | "event", index))."""
    k_steps = g.step_first.size  # steps, plus the next step where it is in the window
    host_start = hs[g.step_first] - g.step_lead
    launched_step = np.where(g.g_call >= 0, g.h_step[np.clip(g.g_call, 0, None)], -1)
    floor = np.iinfo(np.int64).min // 4
    last_end = np.full(k_steps + 1, floor, dtype=np.int64)  # per step (index + 1; 0: launched before the window)
    np.maximum.at(last_end, np.clip(launched_step + 1, 0, k_steps), ge)
    done = np.maximum.accumulate(last_end)[:k_steps]  # the work launched in the steps before each
    begin = np.maximum(host_start, done)
    if g.last_period_ns is None:
        window = int(begin[-1] - begin[0])
        if not with_end:
            return window
        k = k_steps - 1
        if done[k] > host_start[k]:
            before = np.flatnonzero(launched_step < k)
            return window, int(begin[0]), ("event", int(before[np.argmax(ge[before])]))
        return window, int(begin[0]), ("call", int(g.step_first[k]))
    last = g.steps - 1
    mine = launched_step == last
    end = max(int(he[g.h_step == last].max(initial=begin[-1])), int(ge[mine].max(initial=begin[-1])), int(begin[-1]))
    if not with_end:
        return int(end - begin[0])
    ends = [(int(ge[j]), ("event", int(j))) for j in np.flatnonzero(mine)] + [(int(he[i]), ("call", int(i))) for i in np.flatnonzero(g.h_step == last)]
    return int(end - begin[0]), int(begin[0]), max(ends)[1] if ends else ("call", -1)
