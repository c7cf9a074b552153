"""Steps found by repetition: a program's iteration, found from the order of its GPU work launches where
the capture marks no step (no NVTX range named like one, no ``ProfilerStep#N``).

A training or decoding loop launches the same GPU work in the same order each iteration; what differs
is at its edges (the first iteration's lazy loading, autotuning and optimizer state, a last partial
iteration) and, rarely, in between (an occasional extra kernel). The search, linear but for one FFT:

1. **Launches as tokens.** Each launch of a kernel or a copy is a number: its kernel's name or its copy's
   direction (not memsets: libraries issue them beside their kernels in no fixed order); a CUDA graph
   launch once (the events of one correlationId are one launch), one token per distinct graph. They are
   taken in the order the CUDA calls that launched them started, over all threads (PyTorch's backward runs on
   its own thread while the main thread waits: the order is the program's).
2. **Candidate periods.** The lags at which the sequence matches itself most: counted exactly up to
   :data:`EXACT` launches, else its autocorrelation with each token mapped to random signs
   (:data:`PROJECTIONS` maps averaged, two for long sequences), by FFT, over the middle
   :data:`MAX_WINDOW` launches at most. A lag is kept where its matches stand above the noise and add up to
   at least two periods (three iterations).
3. **Loops.** For each candidate period p, the stretches where launch i equals launch i + p for at least
   two periods, broken by no more than a period and a tenth (an extra launch shifts the match for one
   period).
4. **Where a step begins.** Right after the unit's copy to the host where it has one (a loop that reads a
   result each iteration, ``loss.item()``, ends its step there), else at the launch that follows the
   longest host gap (median over the loop's iterations).
5. **The steps.** Every occurrence of the unit's first launches (the shortest head, up to
   :data:`MAX_HEAD` launches, that occurs once per iteration) begins a step. A step is kept when it ends
   with the unit's last launch and is within :func:`_tolerance` launches of p long; the run of kept steps
   around the loop is its steps, with the warm-up iterations before it that hold the unit's launches and
   up to half a period more (a check of their results), one longer step before them (the first
   iteration's extra work: not when it holds another loop with more kernel time than the rest, which is
   that loop, not a first iteration) and the last iteration up to its last launch, where it holds the
   unit's launches but for a tenth (:func:`_holds`: not the next loop's first launches, which may end with
   that launch too).
6. **Several loops.** The one whose steps launched the most kernel time is judged (copies left out: a
   compiler's autotuning copies its inputs back between trials), if it holds a tenth of the capture's GPU
   time or more; the others with a tenth of its GPU time or more are named. A loop inside the call of
   another loop's first iteration is never judged before it (:func:`inside_first_call`): where the capture
   holds the host's calls (op or NVTX ranges), one call that holds all its launches and the other loop's
   first step, of a name in which each of that loop's steps begins, one call a step. A compiled function's
   first call autotunes its kernels, and with few iterations that loop holds more kernel time than the
   program's; it is named as that call's work, and counts as the judged loop's own (its first iteration's)
   for the shares of the capture's GPU and kernel time. Without the host's calls the nesting is not known.
7. **Periodic extra work.** A loop whose period is several iterations with extra work between some of
   them (a checkpoint every 5th step, an evaluation every 10th) is taken at the shortest period that
   explains it: the shorter period's steps run through the steps with extra work when that work is
   copies or more of the loop's own kernels (a model's layers are not its steps: the rest of its
   iteration launches kernels of its own). Those steps are named outliers (:class:`Extra`).
8. **CUDA graphs.** A loop replaying one graph a step, right after a loop of the graph's own launches
   (the iterations run eagerly before the graph was captured: its warm-up), is one loop.
9. **Kernels that change with the shapes.** Where the loop found explains less than half of the capture's
   kernel time (or none is found), the steps are looked for by kernel class instead
   (ncuwrap.timeline.shape_loops): a sequence length or a request's size changes the GEMM tiles, the
   split-K reductions and the library paths from step to step.

A step runs from its first launch call to the next step's; the last one to the end of its last launch
call (the timeline's steps extend it to the end of its GPU work). What was launched in a step is
assigned by ncuwrap.timeline.steps as for marked steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from ncuwrap.core.numbers import median, percentile
from ncuwrap.timeline.events import Events
from ncuwrap.timeline.launches import categories_of
from ncuwrap.timeline.model import CATEGORY_LABELS, COPY_CATEGORIES

MIN_STEPS = 3
MAX_WINDOW = 1 << 18  # launches the period is looked for in (a step of more launches than a third of this is not found)
PROJECTIONS = 4  # sign maps averaged (two past SMALL: the noise of many launches is small beside their matches)
SMALL = 1 << 16
EXACT = 4096  # launches up to which the matches are counted exactly
MAX_HEAD = 64
MAX_CANDIDATES = 8
NOISE_SIGMAS = 5.0
# The loop found must hold this share of the capture's kernel time, else the steps are also looked for by
# kernel class (ncuwrap.timeline.shape_loops), which wins where its loop holds more kernel time.
EXPLAINS = 0.5
COPY_KINDS = {c: CATEGORY_LABELS[c] for c in COPY_CATEGORIES}  # a copy launch's token, with its label


@dataclass(frozen=True)
class Launches:
    """A capture's GPU work launches in launch order: one row per launch (a graph launch once)."""

    tokens: np.ndarray  # int64: what was launched (kernel name, copy direction, CUDA graph)
    times: np.ndarray  # int64 ns: the launching call's start (the work's own start where the call is not traced)
    correlation: np.ndarray  # float: the launching call's correlationId (NaN: not traced)
    gpu_ns: np.ndarray  # int64: the GPU time of the launch's work (a graph: its nodes' sum)
    to_host: np.ndarray  # bool per distinct token: a copy to the host
    names: list  # per distinct token: its text ("kernel", "memcpy_dtoh", "CUDA graph (35 nodes)"...)
    graphs: dict = field(default_factory=dict)  # graph token -> its nodes' tokens in order (graphs traced node by node)
    # The host's calls: its op ranges (nsys --pytorch, the profiler's), else its NVTX ranges (Events: start, end, name as
    # Labels); None where the capture holds none. A loop inside the call of another loop's first iteration is that
    # iteration's work (:func:`inside_first_call`).
    calls: Events | None = None

    def __len__(self) -> int:
        return self.tokens.size

    @cached_property
    def copy_tokens(self) -> np.ndarray:
        """Per distinct token: a copy (any direction)."""
        return np.array([str(n) in COPY_KINDS for n in self.names], dtype=bool)

    @cached_property
    def kernel_ns(self) -> np.ndarray:
        """Per launch, its GPU time where it is a kernel or a graph, 0 for a copy."""
        return np.where(self.copy_tokens[self.tokens], 0, self.gpu_ns)

    @cached_property
    def kernel_sum(self) -> np.ndarray:
        """The running sum of :attr:`kernel_ns`, 0 first: the kernel time of launches [a, b) is sum[b] - sum[a]."""
        return np.concatenate(([0], np.cumsum(self.kernel_ns)))

    def kind(self, token: int) -> str:
        """'D2H copies', 'kernels'...: what a token is, in the plural."""
        return COPY_KINDS.get(str(self.names[token]), "kernels")

    @cached_property
    def call_columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list] | None:
        """The host's calls as (starts, ends, name codes, names), sorted by start; None where none was traced."""
        calls = self.calls
        if calls is None or not len(calls):
            return None
        start, end = np.asarray(calls["start"], dtype=np.int64), np.asarray(calls["end"], dtype=np.int64)
        names = categories_of(calls["name"])
        order = np.argsort(start, kind="stable")
        return start[order], end[order], names.codes[order], names.categories


@dataclass(frozen=True)
class Extra:
    """Steps of a loop that did extra work beside its unit (a checkpoint's copies, an evaluation), alike in what."""

    steps: tuple[int, ...]  # their indices among the loop's steps
    launches: tuple[tuple[str, int], ...]  # the extra launches by kind, median over the steps: (("D2H copies", 24),)
    gpu_ns: int = 0  # their GPU time beyond an ordinary step's (median)

    @property
    def every(self) -> int | None:
        """k where the steps come every k-th step (at least two of them), else None."""
        gaps = np.diff(self.steps)
        return int(gaps[0]) if gaps.size and (gaps == gaps[0]).all() else None


@dataclass(frozen=True)
class Loop:
    """One loop: its steps as launch indices."""

    starts: np.ndarray  # int64: each step's first launch
    end: int  # one past the last step's last launch
    launches: int  # launches in the loop's unit (its period); alike by kernel class: a step's median
    exact: int  # steps whose launches are the unit's, in order
    gpu_ns: int  # GPU time of all the steps' launches
    start_ns: int  # when its first step's first launch was launched
    kernel_ns: int = 0  # of it, the kernels' (and graphs'): copies left out
    alike: str = "launches"  # what its steps share: "launches" (the unit's, in order) or "kernel classes" (ncuwrap.timeline.shape_loops)
    fewest: int = 0  # alike by kernel class: the fewest and most launches of a step
    most: int = 0
    graph_nodes: int = 0  # each step replays one CUDA graph of this many nodes (0: no graph)
    eager: int = 0  # leading steps that ran the graph's launches eagerly (its warm-up)
    extras: tuple[Extra, ...] = ()  # steps with periodic extra work
    to_host: bool = False  # each step ends with a copy to the host (alike by kernel class: a request loop)
    inside: str = ""  # the name of the judged loop's call that holds this loop, in that loop's first iteration ("": none)

    @property
    def count(self) -> int:
        return self.starts.size

    @property
    def first(self) -> int:
        return int(self.starts[0])

    @property
    def outlier_steps(self) -> set[int]:
        return {i for x in self.extras for i in x.steps}

    def to_json(self) -> dict:
        return {"steps": self.count, "launches": self.launches, "gpu_ns": self.gpu_ns, "start_ns": self.start_ns,
                **({"inside_first_call": self.inside} if self.inside else {})}


@dataclass(frozen=True)
class Found:
    """The loop judged, with its steps' times, and the other loops the capture holds."""

    loop: Loop
    starts_ns: np.ndarray  # each step's start (its first launch call's start)
    ends_ns: np.ndarray  # each step's end: the next step's start; the last, its last launch call's end
    others: tuple[Loop, ...]  # other loops, most GPU time first
    # The correlationId of the last step's last launch (NaN: not traced), whose call ends the step. Only
    # this is kept of the launches: the steps travel back from the forked reader, the launches need not.
    last_correlation: float

    def describe(self, periods_ns, first: int = 0) -> str:
        """"12 steps of 324 launches (all exactly alike), periods within 3% of their median", with the steps
        that did extra work and the other loops where there are (``periods_ns``: the steady steps' periods;
        ``first``: the first steady step's index among the loop's steps)."""
        loop = self.loop
        ordinary = [p for i, p in enumerate(periods_ns) if first + i not in loop.outlier_steps]
        text = (f"{loop.count} steps{self._what()}, "
                f"{'ordinary steps' if loop.extras else 'periods'} within {spread_pct(ordinary):.0f}% of their median")
        if loop.extras:
            text += "; " + _outliers_text(loop, periods_ns, first)
        if self.others:
            other = self.others[0]
            inside = [o for o in self.others if o.inside]
            # Loops inside the judged loop's first call (its first iteration's work) are named as such; they may hold
            # more kernel time than it.
            first_call = f"{len(inside)} inside its first call (\"{inside[0].inside}\", the first iteration's work), " if inside else ""
            if all(o.gpu_ns <= loop.gpu_ns for o in self.others):
                judged, next_ = f"GPU time judged ({loop.gpu_ns / 1e6:.1f} ms", f"{other.gpu_ns / 1e6:.1f} ms"
            else:  # another loop has more GPU time, in copies, or is inside its first call
                of_others = " of the others" if any(o.kernel_ns > loop.kernel_ns for o in inside) else ""
                judged = f"kernel time{of_others} judged ({loop.kernel_ns / 1e6:.1f} ms of kernels"
                next_ = f"{other.gpu_ns / 1e6:.1f} ms of GPU work, {other.kernel_ns / 1e6:.1f} ms of it kernels"
            where = " inside that call" if other.inside else ""
            text += (f"; {len(self.others) + 1} loops found, {first_call}the one with the most {judged}; "
                     f"next: {other.count} steps of {_launches(other.launches)}{where}, {next_})")
        return text

    def _what(self) -> str:
        loop = self.loop
        if loop.graph_nodes:
            eager = f"{loop.eager} run eagerly ({_launches(loop.graph_nodes)} each), then " if loop.eager else ""
            return f": {eager}{loop.count - loop.eager} replays of one CUDA graph of {loop.graph_nodes} nodes"
        if loop.alike == "kernel classes":
            ends = "; each ends with a copy to the host" if loop.to_host else ""
            return f" of {loop.fewest}-{loop.most} launches (alike by kernel class: the shapes change from step to step{ends})"
        alike = "all exactly alike" if loop.exact == loop.count else f"{loop.exact} exactly alike"
        if loop.extras:
            alike += f", {len(loop.outlier_steps)} with extra work"
        return f" of {_launches(loop.launches)} ({alike})"

    def to_json(self, periods_ns, first: int = 0) -> dict:
        loop = self.loop
        ordinary = [p for i, p in enumerate(periods_ns) if first + i not in loop.outlier_steps]
        doc = {"launches": loop.launches, "exact_steps": loop.exact, "gpu_ns": loop.gpu_ns,
               "spread_pct": round(spread_pct(ordinary), 4),
               "other_loops": [o.to_json() for o in self.others]}
        if loop.alike != "launches":
            doc["alike"] = loop.alike
            doc["launches_range"] = [loop.fewest, loop.most]
        if loop.graph_nodes:
            doc["graph"] = {"nodes": loop.graph_nodes, "eager_steps": loop.eager}
        if loop.extras:
            doc["outliers"] = [{"steps": list(x.steps), "every": x.every, "extra_launches": dict(x.launches),
                                "extra_ns": _extra_ns(loop, x.steps, periods_ns, first)} for x in loop.extras]
        return doc


def _launches(n: int) -> str:
    return f"{n} launch" if n == 1 else f"{n} launches"


def _ordinal(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def _extra_ns(loop: Loop, steps, periods_ns, first: int) -> float | None:
    """How much longer the given steps' periods are than the ordinary steps' (medians over the steady steps);
    None where the steady steps hold none of them."""
    outliers = loop.outlier_steps
    mine = [p for i, p in enumerate(periods_ns) if first + i in set(steps)]
    ordinary = [p for i, p in enumerate(periods_ns) if first + i not in outliers]
    if not mine or not ordinary:
        return None
    return round(median(mine) - median(ordinary), 4)


def _outliers_text(loop: Loop, periods_ns, first: int) -> str:
    """'outliers: every 5th step +65 ms: D2H copies (9.8 ms of GPU work) and host time; every 10th +40 ms
    more: kernels': the steps with extra work, all of them first, then those with more kinds of work than the rest."""
    steps = tuple(sorted(loop.outlier_steps))
    every = Extra(steps, ()).every
    common = set.intersection(*({kind for kind, _ in x.launches} for x in loop.extras))
    base = _extra_ns(loop, steps, periods_ns, first)
    gpu = median([x.gpu_ns for x in loop.extras for _ in x.steps])
    text = f"every {_ordinal(every)} step" if every else f"{len(steps)} steps"
    text += "" if base is None else f" +{base / 1e6:.3g} ms"
    text += f": {', '.join(sorted(common)) or 'launches'} ({gpu / 1e6:.3g} ms of GPU work)"
    if base is not None and base > HOST_TIME_ABOVE * gpu:
        text += " and host time"
    for x in loop.extras:
        more = sorted({kind for kind, _ in x.launches} - common)
        if not more or len(x.steps) == len(steps):
            continue
        mine = _extra_ns(loop, x.steps, periods_ns, first)
        when = f"every {_ordinal(x.every)}" if x.every else f"{len(x.steps)} of them"
        extra = "" if mine is None or base is None else f" +{(mine - base) / 1e6:.3g} ms more"
        text += f"; {when}{extra}: {', '.join(more)}"
    return "outliers: " + text


HOST_TIME_ABOVE = 1.25  # an outlier step longer by more than this times its extra GPU work spent host time too


def spread_pct(periods_ns) -> float:
    """How far the periods stray from their median: the 90th percentile of |period / median - 1|, in %."""
    p = np.asarray(periods_ns, dtype=float)
    if p.size < 2:
        return 0.0
    mid = median(p)
    return float(percentile(np.abs(p / mid - 1.0), 90) * 100.0) if mid > 0 else 0.0


def candidate_periods(tokens: np.ndarray) -> list[int]:
    """Lags at which ``tokens`` repeat, the strongest first (at most :data:`MAX_CANDIDATES`; none for a
    sequence too short to hold three iterations of anything)."""
    n = tokens.size
    if n < 2 * MIN_STEPS:
        return []
    lo = max(0, (n - MAX_WINDOW) // 2)
    w = tokens[lo:lo + MAX_WINDOW]
    m = w.size
    lags = np.arange(m)
    top = m // MIN_STEPS
    if top < 1:
        return []
    if m <= EXACT:
        # Few launches: the matches at every lag counted exactly (a few ms), no noise to stand above.
        score = np.array([m] + [int(np.count_nonzero(w[lag:] == w[:-lag])) for lag in range(1, top + 1)], dtype=float)
        noise = np.zeros(top + 1)
    else:
        rng = np.random.default_rng(0x5EED)  # fixed: the same capture gives the same steps
        maps = PROJECTIONS if m <= SMALL else 2
        signs = (rng.integers(0, 2, size=(maps, int(tokens.max()) + 1)) * 2 - 1).astype(np.float32)
        size = 1 << int(2 * m - 1).bit_length()
        spectrum = np.fft.rfft(signs[:, w], n=size, axis=1)
        spectrum *= np.conj(spectrum)
        score = np.fft.irfft(spectrum, n=size, axis=1)[:, :top + 1].mean(axis=0)  # at lag L: matches + noise
        del spectrum
        noise = NOISE_SIGMAS * np.sqrt(np.maximum(m - lags[:top + 1], 1) / maps)
    ok = (score >= 2 * lags[:top + 1]) & (score >= noise)
    ok[0] = False
    # Local maxima over the lags (lag 1 against lag 2 only: lag 0 is every launch matching itself).
    peak = np.zeros_like(ok)
    if top >= 2:
        peak[1] = score[1] >= score[2]
        peak[2:-1] = (score[2:-1] >= score[1:-2]) & (score[2:-1] >= score[3:])
        peak[-1] = score[-1] >= score[-2]
    else:
        peak[1] = True
    cand = np.flatnonzero(ok & peak)
    cand = cand[np.argsort(-score[cand], kind="stable")]
    chosen: list[int] = []
    for lag in cand.tolist():
        # A multiple of a stronger period matches no more than it: the same loop.
        if any(lag % c == 0 for c in chosen):
            continue
        chosen.append(int(lag))
        if len(chosen) == MAX_CANDIDATES:
            break
    return chosen


MATCH_DENSITY = 0.9  # a loop's launches equal the ones a period earlier at least this often, over every period


def _regions(tokens: np.ndarray, lag: int) -> list[tuple[int, int]]:
    """The stretches [a, e) of ``tokens`` that repeat with period ``lag`` for at least three periods: every
    period-long window in them matches the period before it at :data:`MATCH_DENSITY` of its launches or
    more (launches of two threads, or of one library call, swap places now and then)."""
    eq = (tokens[lag:] == tokens[:-lag]).astype(np.int32)
    if eq.size < lag:
        return []
    total = np.concatenate(([0], np.cumsum(eq)))
    dense = (total[lag:] - total[:-lag]) >= MATCH_DENSITY * lag  # window [i, i + lag) of eq
    edges = np.diff(np.concatenate(([0], dense.astype(np.int8), [0])))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    # Dense windows from i to j - 1 cover eq[i, j - 1 + lag): tokens [i, j - 1 + 2 lag) are periodic.
    return [(a, b - 1 + 2 * lag) for a, b in zip(starts.tolist(), stops.tolist()) if b - 1 + lag - a >= 2 * lag]


def _fundamental(tokens: np.ndarray, a: int, e: int, lag: int) -> int:
    """The shortest period of [a, e) that divides ``lag`` (a loop of two launches also matches itself
    every six)."""
    for d in range(1, lag):
        if lag % d == 0 and e - a >= 3 * d:
            eq = tokens[a + d:e] == tokens[a:e - d]
            if eq.mean() >= MATCH_DENSITY:
                return d
    return lag


def _tolerance(lag: int) -> int:
    return max(1, lag // 20)


def _iterations(launches: Launches, a: int, e: int, lag: int) -> np.ndarray:
    """The launch indices of the whole periods of [a, e), one row per iteration."""
    reps = (e - a) // lag
    return a + np.arange(reps)[:, None] * lag + np.arange(lag)[None, :]


def _phase(launches: Launches, a: int, e: int, lag: int, unit: np.ndarray) -> int:
    """Where in the unit (the period starting at ``a``) a step begins (an offset): after a copy to the
    host, else after the longest host gap, both by their median over the region's iterations."""
    idx = _iterations(launches, a, e, lag)
    if a == 0:
        idx = idx[1:]
    gaps = launches.times[idx] - launches.times[idx - 1]
    gaps.sort(axis=0)
    gap = gaps[gaps.shape[0] // 2].astype(float)
    after_host = launches.to_host[np.roll(unit, 1)]
    if after_host.any():
        gap = np.where(after_host, gap, -np.inf)
    return int(np.argmax(gap))


def _consensus(tokens: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Per position of the period, the launch most iterations have there (the middle of the sorted
    column: a majority's, where one holds, as it does in a dense region)."""
    column = np.sort(tokens[idx], axis=0)
    return column[column.shape[0] // 2]


def _head(tokens: np.ndarray, unit: np.ndarray, first: int, e: int, lag: int) -> int | None:
    """The shortest head of ``unit`` (up to MAX_HEAD launches) that occurs in [first, e) only where an
    iteration begins (an iteration that swapped its first launches may lack it); None if none does."""
    h = 1
    cap = min(lag, MAX_HEAD)
    while True:
        h = min(h, cap)
        if e - first - h + 1 <= 0:
            return None
        hits = np.flatnonzero(_matches(tokens[first:e], unit[:h]))
        if hits.size >= MIN_STEPS and not (hits % lag).any():
            return h
        if h >= cap:
            return None
        h *= 2


def _matches(tokens: np.ndarray, head: np.ndarray) -> np.ndarray:
    """Where ``head`` occurs in ``tokens`` (a mask of start positions)."""
    n = tokens.size - head.size + 1
    if n <= 0:
        return np.zeros(0, dtype=bool)
    hit = tokens[:n] == head[0]
    for q in range(1, head.size):
        hit &= tokens[q:q + n] == head[q]
    return hit


def _loop(launches: Launches, a: int, e: int, lag: int, lo: int, hi: int, periodic: bool = False) -> Loop | None:
    """The steps of the loop that repeats over [a, e) (a region of :func:`_regions`) with period ``lag``,
    within the launches [lo, hi). ``periodic``: the steps also run through steps with extra work (copies,
    more of the unit's kernels), and the loop must hold two of them at least."""
    tokens = launches.tokens
    unit = _consensus(tokens, _iterations(launches, a, e, lag))
    offset = _phase(launches, a, e, lag, unit)
    first = a + offset
    unit = np.roll(unit, -offset)
    tail, tol = unit[-1], _tolerance(lag)
    h = _head(tokens, unit, first, e, lag)
    extended = np.zeros(0, dtype=np.int64)  # the steps (indices among the starts) with extra work
    if h is None:  # the head also occurs inside an iteration: the region's whole iterations only
        if periodic:
            return None
        starts = np.arange(first, e - lag + 1, lag, dtype=np.int64)
        last_end = int(starts[-1]) + lag if starts.size else first
    else:
        anchors = np.flatnonzero(_matches(tokens[lo:hi], unit[:h])).astype(np.int64) + lo
        lengths = np.diff(anchors)
        ends_with_tail = tokens[anchors[1:] - 1] == tail
        strict = ends_with_tail & (np.abs(lengths - lag) <= tol)
        more = _extra_work(launches, unit, anchors, lengths > lag + tol) if periodic else np.zeros_like(strict)
        keep = strict | more
        k = int(np.searchsorted(anchors, first))
        bottom = k
        while bottom > 0 and keep[bottom - 1]:
            bottom -= 1
        run = bottom
        need = np.bincount(unit, minlength=len(launches.names))
        while bottom > 0 and _warmup_step(tokens, need, int(anchors[bottom - 1]), int(anchors[bottom]), lag):
            bottom -= 1
        if bottom > 0 and ends_with_tail[bottom - 1] and lengths[bottom - 1] > lag:  # the first iteration, longer
            bottom -= 1
        top = k
        while top < keep.size and keep[top]:
            top += 1
        starts = anchors[bottom:top + 1]
        extended = np.flatnonzero(more[run:top] & ~strict[run:top]) + (run - bottom)
        # The last step: up to the unit's last launch, about a period on (the loop's end, or the run's edge),
        # holding the unit's launches (not the next loop's first launches, which may end with that launch too).
        last = int(starts[-1])
        window = np.arange(max(last, last + lag - 1 - tol), min(hi, last + lag + tol))
        limit = int(anchors[top + 1]) if top + 1 < anchors.size else hi
        window = window[(window < limit) & (tokens[window] == tail)] if window.size else window
        window = np.array([w for w in window.tolist() if _holds(tokens, need, last, w + 1)], dtype=np.int64)
        if window.size:
            last_end = int(window[np.argmin(np.abs(window - (last + lag - 1)))]) + 1
        elif extended.size and (last_end := _extra_tail(launches, unit, last, limit, np.diff(anchors)[run:top][extended - (run - bottom)])) > last:
            extended = np.append(extended, starts.size - 1)  # the last iteration, its extra work after the unit's last launch
        else:
            starts = starts[:-1]
            last_end = last
    if starts.size < MIN_STEPS or (periodic and extended.size < 2):
        return None
    bounds = np.append(starts, last_end)
    lengths = np.diff(bounds)
    same = lengths == lag
    exact = 0
    if same.any():
        rows = starts[same][:, None] + np.arange(lag)[None, :]
        exact = int((tokens[rows] == unit[None, :]).all(axis=1).sum())
    gpu = np.add.reduceat(launches.gpu_ns[:last_end], bounds[:-1]) if bounds.size > 1 else np.zeros(0, dtype=np.int64)
    # A loop over a model's parameters (initialising each) repeats too, but its iterations' work differs
    # with each tensor's size: a program's iteration does the same GPU work each time (steps with extra work apart).
    ordinary = np.ones(gpu.size, dtype=bool)
    ordinary[extended] = False
    if spread_pct(gpu[1:][ordinary[1:]]) > MAX_WORK_SPREAD_PCT:
        return None
    extras = _extras(launches, unit, bounds, extended, gpu - median(gpu[ordinary])) if extended.size else ()
    return Loop(starts=starts, end=last_end, launches=lag, exact=exact, gpu_ns=int(gpu.sum()), start_ns=int(launches.times[starts[0]]),
                kernel_ns=_kernel_ns(launches, starts, last_end), extras=extras)


MAX_WORK_SPREAD_PCT = 25.0


def _kernel_ns(launches: Launches, starts: np.ndarray, end: int) -> int:
    """The kernel time (copies left out) of the launches [starts[0], end)."""
    return int(launches.kernel_sum[end] - launches.kernel_sum[int(starts[0])])


def _holds(tokens: np.ndarray, need: np.ndarray, a: int, b: int) -> bool:
    """Whether the launches [a, b) hold the unit's (``need``: how many of each token), but for a tenth of them
    (:data:`MATCH_DENSITY`, as the loop's periods match each other)."""
    return int(np.minimum(np.bincount(tokens[a:b], minlength=need.size), need).sum()) >= MATCH_DENSITY * int(need.sum())


def _warmup_step(tokens: np.ndarray, need: np.ndarray, a: int, b: int, lag: int) -> bool:
    """Whether the launches [a, b) are a warm-up iteration: the unit's launches (``need``: how many of each
    token) and a few more, up to half a period (a check of its results, a first allocation)."""
    if not lag + _tolerance(lag) < b - a <= lag + lag // 2:
        return False
    return bool((np.bincount(tokens[a:b], minlength=need.size) >= need).all())


def _extra_tail(launches: Launches, unit: np.ndarray, start: int, limit: int, extended_lengths: np.ndarray) -> int:
    """The end of a periodic loop's last iteration, which begins at ``start`` and holds extra work after the
    unit's launches that began it (a checkpoint saved after the last step): the launches up to ``limit`` that
    are copies or the unit's own kernels, at most as many as the longest step with extra work holds, and
    at least as many as the shortest; ``start`` where there are fewer."""
    stop = min(limit, start + int(extended_lengths.max()))
    allowed = np.isin(launches.tokens[start:stop], unit) | launches.copy_tokens[launches.tokens[start:stop]]
    bad = np.flatnonzero(~allowed)
    end = start + (int(bad[0]) if bad.size else allowed.size)
    return end if end - start >= int(extended_lengths.min()) - len(unit) else start


def _extra_work(launches: Launches, unit: np.ndarray, anchors: np.ndarray, longer: np.ndarray) -> np.ndarray:
    """Per step between ``anchors``, whether it is one of the unit's iterations with extra work: longer than a
    period (``longer``), holding the unit's launches, and launching only copies and the unit's own kernels
    besides (a checkpoint's copies to the host, an evaluation's forward pass; not a layer's step, whose
    iteration goes on with kernels of its own)."""
    if not longer.any():
        return longer
    allowed = np.isin(launches.tokens, unit) | launches.copy_tokens[launches.tokens]
    other = np.concatenate(([0], np.cumsum(~allowed)))
    out = longer & (other[anchors[1:]] == other[anchors[:-1]])
    need = np.bincount(unit, minlength=len(launches.names))
    for k in np.flatnonzero(out).tolist():
        out[k] = bool((np.bincount(launches.tokens[anchors[k]:anchors[k + 1]], minlength=need.size) >= need).all())
    return out


def _extras(launches: Launches, unit: np.ndarray, bounds: np.ndarray, extended: np.ndarray, more_gpu: np.ndarray) -> tuple[Extra, ...]:
    """The steps with extra work, grouped by what it was: the launches each held beyond the unit's, by kind
    (``more_gpu``: each step's GPU time beyond an ordinary step's)."""
    size = len(launches.names)
    need = np.bincount(unit, minlength=size)
    groups: dict[tuple, list] = {}
    for i in extended.tolist():
        beyond = np.maximum(np.bincount(launches.tokens[bounds[i]:bounds[i + 1]], minlength=size) - need, 0)
        kinds: dict[str, int] = {}
        for t in np.flatnonzero(beyond).tolist():
            kinds[launches.kind(t)] = kinds.get(launches.kind(t), 0) + int(beyond[t])
        groups.setdefault(tuple(sorted(kinds)), []).append((i, kinds))
    out = []
    for kinds, members in groups.items():
        counts = tuple((k, int(median([m[1][k] for m in members]))) for k in kinds)
        steps = tuple(m[0] for m in members)
        out.append(Extra(steps=steps, launches=counts, gpu_ns=int(median(more_gpu[list(steps)]))))
    return tuple(sorted(out, key=lambda x: x.steps[0]))


OTHER_LOOP_SHARE = 10
MIN_GPU_SHARE = 10
MAX_DEPTH = 3  # loops looked for again before and after a loop found, this many times


def _rank(loop: Loop) -> tuple:
    """The loop judged first: the most kernel time, then the most GPU time, then the earliest."""
    return -loop.kernel_ns, -loop.gpu_ns, loop.first


def inside_first_call(launches: Launches, inner: Loop, outer: Loop) -> str | None:
    """The name of the host's call (an op or NVTX range) that holds all of ``inner``'s launches and ``outer``'s
    first one, where each of ``outer``'s steps begins in a call of that name, a call of its own (a function the
    program calls once an iteration); the outermost such call. None where none does, or the capture holds no calls.

    A compiled function's first call autotunes its kernels: Inductor runs each configuration of a kernel several
    times, copying the inputs back between runs, and that loop can hold more kernel time than a short program's
    own iterations. Inside that one call, it is the first iteration's work, not the program's iteration."""
    calls = launches.call_columns
    if calls is None or outer.count < MIN_STEPS or inner.end > int(outer.starts[1]):
        return None
    start, end, codes, names = calls
    times = launches.times
    first = int(times[outer.first])
    lo, hi = min(int(times[inner.first]), first), max(int(times[inner.end - 1]), first)
    holding = np.flatnonzero((start <= lo) & (end >= hi) & (codes >= 0))
    steps = times[outer.starts]
    seen: set[int] = set()
    for i in holding[np.lexsort((-end[holding], start[holding]))].tolist():  # the outermost first
        code = int(codes[i])
        if code in seen:
            continue
        seen.add(code)
        same = np.flatnonzero(codes == code)  # sorted by start, as the calls are
        at = np.searchsorted(start[same], steps, side="right") - 1  # the latest call of the name begun at each step's start
        if at[0] < 0 or int(same[at[0]]) != i or not (np.diff(at) > 0).all() or (end[same[at]] < steps).any():
            continue
        return str(names[code])
    return None


def _judged_first(launches: Launches, loops: list[Loop]) -> list[Loop]:
    """``loops`` by :func:`_rank`, the one judged first: the first that is not inside the call of another loop's first
    iteration (:func:`inside_first_call`)."""
    ranked = sorted(loops, key=_rank)
    for k, lp in enumerate(ranked):
        if not any(inside_first_call(launches, lp, o) for o in ranked if o is not lp):
            return [lp, *ranked[:k], *ranked[k + 1:]]
    return ranked


def exact_loops(launches: Launches) -> list[Loop]:
    """The loops of ``launches`` that repeat their launches exactly (a CUDA graph replay joined to its eager
    warm-up), the one judged first (:func:`_judged_first`), marked (:func:`marked`)."""
    return marked(launches, _judged_first(launches, _graph_warmups(launches, _loops_in(launches, 0, len(launches), 0))))


def marked(launches: Launches, loops: list[Loop]) -> list[Loop]:
    """``loops`` (the judged one first) with those inside the judged loop's first call marked with its name
    (:attr:`Loop.inside`), the others not."""
    if not loops:
        return loops
    judged = loops[0]
    return [judged, *(replace(lp, inside=inside_first_call(launches, lp, judged) or "") for lp in loops[1:])]


def own_ns(loops: list[Loop], what: str) -> int:
    """The judged loop's (the first of ``loops``) time (``what``: "gpu_ns", "kernel_ns") with that of the loops
    inside its first call: its first iteration's work."""
    return sum(getattr(lp, what) for lp in loops[:1]) + sum(getattr(lp, what) for lp in loops[1:] if lp.inside)


def explains_too_little(launches: Launches, loops: list[Loop]) -> bool:
    """Whether the best exact loop (with the loops inside its first call) holds too little of the capture's kernel
    time (a loop of kernel classes, ncuwrap.timeline.shape_loops, is then looked for)."""
    return not loops or own_ns(loops, "kernel_ns") < EXPLAINS * int(launches.kernel_sum[-1])


def found(launches: Launches, loops: list[Loop]) -> Found | None:
    """The steps of the first of ``loops`` (the one judged), with the others worth naming; None where there is
    none, or it is a fragment of the capture's GPU time."""
    if not loops:
        return None
    best = loops[0]
    # A loop holding less than a tenth of the capture's GPU time is a fragment (a benchmark's timed
    # kernel between large copies), not what the program spends its time on: no steps, the window is judged.
    # The loops inside its first iteration's call are that iteration's work (a compiled function's autotuning).
    if own_ns(loops, "gpu_ns") * MIN_GPU_SHARE < int(launches.gpu_ns.sum()):
        return None
    # Other loops worth naming: a tenth of its GPU time or more (not a model's set-up, repeated per layer).
    others = tuple(sorted((lp for lp in loops[1:] if lp.gpu_ns * OTHER_LOOP_SHARE >= best.gpu_ns), key=lambda lp: (-lp.gpu_ns, lp.first)))
    starts_ns = launches.times[best.starts]
    # The last step ends at its last launch here; ncuwrap.timeline.steps extends it to that call's end.
    ends_ns = np.append(starts_ns[1:], max(int(launches.times[best.end - 1]), int(starts_ns[-1])) + 1)
    return Found(loop=best, starts_ns=starts_ns.astype(np.int64), ends_ns=ends_ns.astype(np.int64), others=others,
                 last_correlation=float(launches.correlation[best.end - 1]))


def _loops_in(launches: Launches, lo: int, hi: int, depth: int) -> list[Loop]:
    """The loop of the launches [lo, hi) with the most kernel time, then those before and after it (each
    part searched on its own: a second loop's period may not stand out beside the first's)."""
    if hi - lo < 2 * MIN_STEPS:
        return []
    tokens = launches.tokens
    regions = {lag: [(a + lo, e + lo) for a, e in _regions(tokens[lo:hi], lag)] for lag in candidate_periods(tokens[lo:hi])}
    loops: list[Loop] = []
    spans: list[tuple[int, int, int, int]] = []  # per loop: where its iterations proper begin, its first launch, end, kernel time
    ksum = launches.kernel_sum
    for lag, found in regions.items():  # the strongest first: the layers of a step come after it
        for a, e in found:
            # A region inside a loop already found (its layers, say) is part of that loop, not another; in its
            # longer first step, unless it holds half the loop's kernel time or more (another loop: see _first_step_apart).
            if any(first <= a and e <= end and (settled <= a or 2 * int(ksum[e] - ksum[a]) < kernel) for settled, first, end, kernel in spans):
                continue
            loop = _loop(launches, a, e, _fundamental(tokens, a, e, lag), lo, hi)
            if loop is not None:
                loops.append(loop)
                spans.append((_settled(loop), loop.first, loop.end, loop.kernel_ns))
    loops = [lp for lp in (_first_step_apart(launches, lp, loops) for lp in loops) if lp is not None]
    if not loops:
        return []
    best = _judged_first(launches, loops)[0]
    best = _periodic(launches, best, lo, hi, regions) or best
    if depth >= MAX_DEPTH:
        return [best]
    return [best, *_loops_in(launches, lo, best.first, depth + 1), *_loops_in(launches, best.end, hi, depth + 1)]


def _long_first(loop: Loop) -> bool:
    return loop.count > 1 and int(loop.starts[1] - loop.starts[0]) > loop.launches + _tolerance(loop.launches)


def _settled(loop: Loop) -> int:
    """Where a loop's iterations proper begin: after its first step where that one is longer (the first
    iteration's extra work may hold another loop)."""
    return int(loop.starts[1]) if _long_first(loop) and not loop.extras else loop.first


def _first_step_apart(launches: Launches, loop: Loop, loops: list[Loop]) -> Loop | None:
    """``loop`` without its longer first step where that step holds another loop with more kernel time than
    the rest of ``loop`` (a graph's replays between eager runs of its work): that is another loop, not
    the first iteration's extra work. None where too few steps are left."""
    if not _long_first(loop) or loop.extras:
        return loop
    lo, hi = loop.first, int(loop.starts[1])
    inner = sum(o.kernel_ns for o in loops if o is not loop and lo <= o.first and o.end <= hi)
    if inner <= loop.kernel_ns - inner:
        return loop
    return _remade(launches, loop, loop.starts[1:])


def _remade(launches: Launches, loop: Loop, starts: np.ndarray, **changes) -> Loop | None:
    """``loop`` with other steps (the same end), its GPU and kernel time measured again."""
    if starts.size < MIN_STEPS:
        return None
    bounds = np.append(starts, loop.end)
    gpu = int(np.add.reduceat(launches.gpu_ns[:loop.end], bounds[:-1]).sum())
    exact = changes.pop("exact", min(loop.exact, starts.size))
    return Loop(starts=starts, end=loop.end, launches=loop.launches, exact=exact, gpu_ns=gpu, start_ns=int(launches.times[starts[0]]),
                kernel_ns=_kernel_ns(launches, starts, loop.end), **changes)


def _periodic(launches: Launches, best: Loop, lo: int, hi: int, regions: dict) -> Loop | None:
    """``best`` taken at the shortest period that explains it, where its period is several iterations with
    extra work between some of them (a checkpoint every 5th step, an evaluation every 10th): the loop of a
    shorter candidate period (``regions``: the stretches each candidate repeats over) that runs through
    ``best``'s launches, its steps with extra work included; None where no shorter period does."""
    tokens = launches.tokens
    if best.count < 2:
        return None
    step = tokens[int(best.starts[-2]):int(best.starts[-1])]
    step = step[~launches.copy_tokens[step]]
    for lag in sorted(regions):
        if 2 * lag > best.launches:
            break
        near = [(a, e) for a, e in regions[lag] if e > best.first and a < best.end]
        if not near:
            continue
        a, e = max(near, key=lambda r: r[1] - r[0])
        # Each of best's steps launches only the shorter period's kernels (and copies): else the shorter
        # period is a part of its iteration (a model's layers), not the iteration.
        if not np.isin(step, tokens[a:e]).all():
            continue
        p = _fundamental(tokens, a, e, lag)
        loop = _loop(launches, a, e, p, lo, hi, periodic=True)
        if loop is not None and loop.count > best.count and loop.first <= best.first + p and loop.end >= best.end - p:
            return loop
    return None


def _graph_warmups(launches: Launches, loops: list[Loop]) -> list[Loop]:
    """``loops`` with each loop that replays one CUDA graph a step joined to the loop just before it whose
    unit is the graph's own launches, run eagerly (PyTorch runs a graph's work before capturing it)."""
    out = list(loops)
    for graph in loops:
        nodes = launches.graphs.get(int(launches.tokens[graph.first])) if graph.launches == 1 else None
        if nodes is None:
            continue
        for eager in loops:
            if eager is graph or eager.launches != nodes.size or not 0 <= graph.first - eager.end <= nodes.size:
                continue
            unit = launches.tokens[eager.end - eager.launches:eager.end]
            if not _matches(np.concatenate([nodes, nodes]), unit).any():
                continue
            joined = _remade(launches, Loop(starts=graph.starts, end=graph.end, launches=1, exact=0, gpu_ns=0, start_ns=0),
                             np.concatenate([eager.starts, graph.starts]), exact=graph.exact + eager.exact,
                             graph_nodes=int(nodes.size), eager=eager.count)
            out = [joined if lp is graph else lp for lp in out if lp is not eager]
            break
    return out
