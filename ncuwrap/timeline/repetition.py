"""Steps found by repetition: a program's iteration, found from the order of its GPU work launches where
the capture marks no step (no NVTX range named like one, no ``ProfilerStep#N``).

A training or decoding loop launches the same GPU work in the same order each iteration; what differs
is at its edges (the first iteration's lazy loading, autotuning and optimizer state, a last partial
iteration) and, rarely, in between (an occasional extra kernel). The search, linear but for one FFT:

1. **Launches as tokens.** Each launch of a kernel or a copy is a number: its kernel's name or its copy's
   direction (not memsets: libraries issue them beside their kernels in no fixed order); a CUDA graph
   launch once (the events of one correlationId are one launch). They are taken
   in the order the CUDA calls that launched them started, over all threads (PyTorch's backward runs on
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
   around the loop is its steps, with one longer step before it (the first iteration's extra work) and
   the last iteration up to its last launch.
6. **Several loops.** The one whose steps launched the most GPU time is judged, if it holds a tenth of the
   capture's GPU time or more; the others with a tenth of its GPU time or more are named.

A step runs from its first launch call to the next step's; the last one to the end of its last launch
call (the timeline's steps extend it to the end of its GPU work). What was launched in a step is
assigned by ncuwrap.timeline.steps as for marked steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ncuwrap.core.numbers import median, percentile

MIN_STEPS = 3
MAX_WINDOW = 1 << 18  # launches the period is looked for in (a step of more launches than a third of this is not found)
PROJECTIONS = 4  # sign maps averaged (two past SMALL: the noise of many launches is small beside their matches)
SMALL = 1 << 16
EXACT = 4096  # launches up to which the matches are counted exactly
MAX_HEAD = 64
MAX_CANDIDATES = 8
NOISE_SIGMAS = 5.0


@dataclass(frozen=True)
class Launches:
    """A capture's GPU work launches in launch order: one row per launch (a graph launch once)."""

    tokens: np.ndarray  # int64: what was launched (kernel name, copy direction, memset)
    times: np.ndarray  # int64 ns: the launching call's start (the work's own start where the call is not traced)
    correlation: np.ndarray  # float: the launching call's correlationId (NaN: not traced)
    gpu_ns: np.ndarray  # int64: the GPU time of the launch's work (a graph: its nodes' sum)
    to_host: np.ndarray  # bool per distinct token: a copy to the host
    names: list  # per distinct token: its text ("kernel", "D2H copy"...)

    def __len__(self) -> int:
        return self.tokens.size


@dataclass(frozen=True)
class Loop:
    """One loop: its steps as launch indices."""

    starts: np.ndarray  # int64: each step's first launch
    end: int  # one past the last step's last launch
    launches: int  # launches in the loop's unit (its period)
    exact: int  # steps whose launches are the unit's, in order
    gpu_ns: int  # GPU time of all the steps' launches
    start_ns: int  # when its first step's first launch was launched

    @property
    def count(self) -> int:
        return self.starts.size

    @property
    def first(self) -> int:
        return int(self.starts[0])

    def to_json(self) -> dict:
        return {"steps": self.count, "launches": self.launches, "gpu_ns": self.gpu_ns, "start_ns": self.start_ns}


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

    def describe(self, periods_ns) -> str:
        """"12 steps of 324 launches (all exactly alike), periods within 3% of their median", with the other
        loops where there are (``periods_ns``: the steady steps' periods)."""
        loop = self.loop
        alike = "all exactly alike" if loop.exact == loop.count else f"{loop.exact} exactly alike"
        text = (f"{loop.count} steps of {_launches(loop.launches)} ({alike}), "
                f"periods within {spread_pct(periods_ns):.0f}% of their median")
        if self.others:
            other = self.others[0]
            text += (f"; {len(self.others) + 1} loops found, the one with the most GPU time judged ({loop.gpu_ns / 1e6:.1f} ms; "
                     f"next: {other.count} steps of {_launches(other.launches)}, {other.gpu_ns / 1e6:.1f} ms)")
        return text

    def to_json(self, periods_ns) -> dict:
        return {"launches": self.loop.launches, "exact_steps": self.loop.exact, "gpu_ns": self.loop.gpu_ns,
                "spread_pct": round(spread_pct(periods_ns), 4),
                "other_loops": [o.to_json() for o in self.others]}


def _launches(n: int) -> str:
    return f"{n} launch" if n == 1 else f"{n} launches"


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


def _loop(launches: Launches, a: int, e: int, lag: int, lo: int, hi: int) -> Loop | None:
    """The steps of the loop that repeats over [a, e) (a region of :func:`_regions`) with period ``lag``,
    within the launches [lo, hi)."""
    tokens = launches.tokens
    unit = _consensus(tokens, _iterations(launches, a, e, lag))
    offset = _phase(launches, a, e, lag, unit)
    first = a + offset
    unit = np.roll(unit, -offset)
    tail, tol = unit[-1], _tolerance(lag)
    h = _head(tokens, unit, first, e, lag)
    if h is None:  # the head also occurs inside an iteration: the region's whole iterations only
        starts = np.arange(first, e - lag + 1, lag, dtype=np.int64)
        last_end = int(starts[-1]) + lag if starts.size else first
    else:
        anchors = np.flatnonzero(_matches(tokens[lo:hi], unit[:h])).astype(np.int64) + lo
        lengths = np.diff(anchors)
        ends_with_tail = tokens[anchors[1:] - 1] == tail
        strict = ends_with_tail & (np.abs(lengths - lag) <= tol)
        k = int(np.searchsorted(anchors, first))
        bottom = k
        while bottom > 0 and strict[bottom - 1]:
            bottom -= 1
        if bottom > 0 and ends_with_tail[bottom - 1] and lengths[bottom - 1] > lag:  # the first iteration, longer
            bottom -= 1
        top = k
        while top < strict.size and strict[top]:
            top += 1
        starts = anchors[bottom:top + 1]
        # The last step: up to the unit's last launch, about a period on (the loop's end, or the run's edge).
        last = int(starts[-1])
        window = np.arange(max(last, last + lag - 1 - tol), min(hi, last + lag + tol))
        limit = int(anchors[top + 1]) if top + 1 < anchors.size else hi
        window = window[(window < limit) & (tokens[window] == tail)] if window.size else window
        if window.size:
            last_end = int(window[np.argmin(np.abs(window - (last + lag - 1)))]) + 1
        else:
            starts = starts[:-1]
            last_end = last
    if starts.size < MIN_STEPS:
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
    # with each tensor's size: a program's iteration does the same GPU work each time.
    if spread_pct(gpu[1:]) > MAX_WORK_SPREAD_PCT:
        return None
    return Loop(starts=starts, end=last_end, launches=lag, exact=exact, gpu_ns=int(gpu.sum()), start_ns=int(launches.times[starts[0]]))


MAX_WORK_SPREAD_PCT = 25.0


OTHER_LOOP_SHARE = 10
MIN_GPU_SHARE = 10
MAX_DEPTH = 3  # loops looked for again before and after a loop found, this many times


def find(launches: Launches | None) -> Found | None:
    """The loop of ``launches`` with the most GPU time, with its steps, and the other loops before and
    after it; None where nothing repeats at least :data:`MIN_STEPS` times."""
    if launches is None or len(launches) < 2 * MIN_STEPS:
        return None
    loops = sorted(_loops_in(launches, 0, len(launches), 0), key=lambda lp: (-lp.gpu_ns, lp.first))
    if not loops:
        return None
    best = loops[0]
    # A loop holding less than a tenth of the capture's GPU time is a fragment (a benchmark's timed
    # kernel between large copies), not what the program spends its time on: no steps, the window is judged.
    if best.gpu_ns * MIN_GPU_SHARE < int(launches.gpu_ns.sum()):
        return None
    # Other loops worth naming: a tenth of its GPU time or more (not a model's set-up, repeated per layer).
    others = tuple(lp for lp in loops[1:] if lp.gpu_ns * OTHER_LOOP_SHARE >= best.gpu_ns)
    starts_ns = launches.times[best.starts]
    # The last step ends at its last launch here; ncuwrap.timeline.steps extends it to that call's end.
    ends_ns = np.append(starts_ns[1:], max(int(launches.times[best.end - 1]), int(starts_ns[-1])) + 1)
    return Found(loop=best, starts_ns=starts_ns.astype(np.int64), ends_ns=ends_ns.astype(np.int64), others=others,
                 last_correlation=float(launches.correlation[best.end - 1]))


def _loops_in(launches: Launches, lo: int, hi: int, depth: int) -> list[Loop]:
    """The loop of the launches [lo, hi) with the most GPU time, then those before and after it (each
    part searched on its own: a second loop's period may not stand out beside the first's)."""
    if hi - lo < 2 * MIN_STEPS:
        return []
    tokens = launches.tokens
    loops: list[Loop] = []
    for lag in candidate_periods(tokens[lo:hi]):  # the strongest first: the layers of a step come after it
        for a, e in _regions(tokens[lo:hi], lag):
            a, e = a + lo, e + lo
            # A region inside a loop already found (its layers, say) is part of that loop, not another.
            if any(lp.first <= a and e <= lp.end for lp in loops):
                continue
            loop = _loop(launches, a, e, _fundamental(tokens, a, e, lag), lo, hi)
            if loop is not None:
                loops.append(loop)
    if not loops:
        return []
    best = min(loops, key=lambda lp: (-lp.gpu_ns, lp.first))
    if depth >= MAX_DEPTH:
        return [best]
    return [best, *_loops_in(launches, lo, best.first, depth + 1), *_loops_in(launches, best.end, hi, depth + 1)]
