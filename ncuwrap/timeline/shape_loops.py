"""Loops whose kernels change with the input shapes: steps found by kernel class, where the exact search
(ncuwrap.timeline.repetition) finds no loop or one that explains too little of the capture's kernel time.

A training loop over sequences of varying length, or a server answering requests of random sizes,
launches other kernels from step to step: cuBLAS picks another GEMM tile (another kernel name), with a
split-K reduction beside it or not; a library takes another path (PyTorch's embedding backward sorts the
indices of long inputs). The exact search then finds only the few consecutive steps whose shapes happened
to be the same. Here:

1. **Kernel classes.** Each launch by its kernel's family: the demangled name without its template
   arguments, parameters and tile suffix; every GEMM of cuBLAS and CUTLASS (their split-K reductions,
   epilogues and scalings too) is one class, ``GEMM``: the library picks among them by shape. Copies by
   direction; a CUDA graph as itself.
2. **Landmarks.** A launch that occurs once an iteration (a loss kernel, an optimizer's, a request's copy
   in) cuts the launches into iterations. Each kernel or copy that occurs more than :data:`MIN_STEPS`
   times is tried, the rarest first (:data:`LANDMARKS` of them; fewer past :data:`BUDGET` launches in
   all): the launches from one of its occurrences to the next are a segment, and two consecutive segments
   are alike when their classes differ in at most :data:`ALIKE` of their launches (counted per class, a
   run of one class once: a GEMM split in two is one GEMM). A layer's kernel cuts an iteration into
   segments that are not alike (a layer, then a layer with the head, the loss and the backward).
3. **The loop.** The run of alike segments (three at least) with the most kernel time, over all landmarks;
   of the landmarks that cut that loop (each launch that occurs once an iteration does), the one right
   after a copy to the host (a request loop: each request ends with its result's copy to the host), else
   the one after the longest host gap (median), as the exact search places a step's start. As there, the
   segment before the run is the first iteration where it is longer and ends with the class the run's
   segments end with; the last iteration runs from the landmark after the run to the first launch of
   that class about a step on. A loop whose steps launch the same kernels in the same order (90% of them)
   is not one whose kernels change: the exact search judged it (a benchmark over buffer sizes).
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from ncuwrap.core.numbers import median
from ncuwrap.timeline.repetition import COPY_KINDS, MIN_STEPS, Launches, Loop

LANDMARKS = 48
MIN_LANDMARKS = 8  # tried however many launches there are: a pass over them each, BUDGET launches in all at most
BUDGET = 1 << 22
ALIKE = 0.2
SAME_LOOP = 0.9  # runs with this share of the best one's kernel time cut the same loop (at another launch of its iteration)
TO_HOST = 0.9  # a loop whose steps end with a copy to the host this often says so
SAME_LAUNCHES = 0.9  # a loop whose steps launch the same kernels in the same order this often is not one whose kernels change

_GEMM = re.compile(r"gemm|gemv|xmma|nvjet|cutlass::Kernel|cublas|splitKreduce|scal_kernel", re.I)
_TILE = re.compile(r"_\d+x\d+\w*$|_tilesize\w*$")


def kernel_class(name: str) -> str:
    """A launch's class: ``GEMM`` for cuBLAS's and CUTLASS's kernels, else the kernel's family (its name
    without template arguments, parameters and tile suffix); copies and graphs as they are named."""
    if name in COPY_KINDS or name.startswith("CUDA graph"):
        return name
    if _GEMM.search(name):
        return "GEMM"
    kept, depth = [], 0
    for ch in name.replace("(anonymous namespace)", "anonymous"):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif not depth:
            if ch == "(":
                break
            kept.append(ch)
    words = "".join(kept).split()  # the last word: the return type ("void") left out
    return _TILE.sub("", words[-1]) if words else name


def classes(names) -> np.ndarray:
    """Per distinct token (``names``): the index of its class."""
    index: dict[str, int] = {}
    return np.array([index.setdefault(kernel_class(str(n)), len(index)) for n in names], dtype=np.int64)


def find(launches: Launches) -> Loop | None:
    """The loop of ``launches`` alike by kernel class with the most kernel time; None where no launch cuts
    three alike segments."""
    cls = classes(launches.names)[launches.tokens]
    count = np.bincount(launches.tokens)
    tried = max(MIN_LANDMARKS, min(LANDMARKS, BUDGET // max(1, cls.size)))  # a pass over the launches each
    landmarks = [t for t in np.argsort(count, kind="stable").tolist() if count[t] > MIN_STEPS][:tried]
    kernel = launches.kernel_sum
    runs = [run for t in landmarks if (run := _best_run(cls, np.flatnonzero(launches.tokens == t), kernel)) is not None]
    if not runs:
        return None
    top = max(r[3] for r in runs)
    # Every launch that occurs once an iteration cuts the same loop: the steps begin at the one a step begins with.
    pos, a, b, _ = max((r for r in runs if r[3] >= SAME_LOOP * top), key=lambda r: _placed(launches, r[0][r[1]:r[2] + 2]))
    starts, end = _steps(cls, pos, a, b)
    if starts.size < MIN_STEPS:
        return None
    loop = _loop(launches, starts, end)
    # Steps that launch the same kernels in the same order, only on data of other sizes (a benchmark over
    # sizes, a loop initialising each parameter), are the exact search's to judge: it left them out.
    return None if loop.exact >= SAME_LAUNCHES * loop.count else loop


def _best_run(cls: np.ndarray, pos: np.ndarray, kernel: np.ndarray) -> tuple[np.ndarray, int, int, int] | None:
    """The run of alike segments cut at a landmark's occurrences ``pos`` with the most kernel time (``kernel``:
    its running sum): (pos, its first segment, its last, kernel time); None where none has three."""
    if pos.size <= MIN_STEPS:
        return None
    alike = _alike(cls, pos)
    edges = np.diff(np.concatenate(([0], alike.astype(np.int8), [0])))
    first, stop = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)  # pairs first..stop-1: segments first..stop
    long_enough = stop - first + 1 >= MIN_STEPS
    if not long_enough.any():
        return None
    first, stop = first[long_enough], stop[long_enough]
    time = kernel[pos[stop + 1]] - kernel[pos[first]]
    j = int(np.argmax(time))
    return pos, int(first[j]), int(stop[j]), int(time[j])


def _placed(launches: Launches, starts: np.ndarray) -> tuple[bool, float]:
    """How well ``starts`` sit where a step begins: right after a copy to the host (most of them), then the
    host's median gap before them."""
    at = starts[starts > 0]
    after_copy = bool(at.size and launches.to_host[launches.tokens[at - 1]].mean() >= 0.5)
    return after_copy, median(launches.times[at] - launches.times[at - 1]) if at.size else 0.0


def _steps(cls: np.ndarray, pos: np.ndarray, a: int, b: int) -> tuple[np.ndarray, int]:
    """The steps of the run of segments a..b cut at ``pos``: (starts, end), the first iteration and the last added."""
    starts = pos[a:b + 2]  # b + 1: where the run's last segment ends
    lengths = np.diff(starts)
    tail = Counter(cls[starts[1:] - 1].tolist()).most_common(1)[0][0]  # the class most of its steps end with
    # The segment before, longer and ending like the run's, is the first iteration (its lazy loading, autotuning).
    if a > 0 and cls[starts[0] - 1] == tail and starts[0] - pos[a - 1] > lengths.max():
        starts = np.concatenate(([pos[a - 1]], starts))
    end = _last_iteration(cls, int(starts[-1]), int(pos[b + 2]) if b + 2 < pos.size else cls.size, lengths, tail)
    return (starts, end) if end > starts[-1] else (starts[:-1], int(starts[-1]))


def _alike(cls: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """For each two consecutive segments [pos[j], pos[j+1]) and [pos[j+1], pos[j+2]): whether their classes
    differ in at most ALIKE of their launches, a run of one class counted once (a GEMM split in two, or in
    four, is one GEMM)."""
    nc = int(cls.max()) + 1
    part = cls[pos[0]:pos[-1]]
    new = np.ones(part.size, dtype=bool)
    new[1:] = part[1:] != part[:-1]
    new[pos[:-1] - pos[0]] = True  # a segment begins a run
    seg = np.repeat(np.arange(pos.size - 1), np.diff(pos))[new]
    length = np.bincount(seg, minlength=pos.size - 1)
    keys, counts = np.unique(seg * nc + part[new], return_counts=True)
    s = keys // nc
    before = keys - nc  # the same class in the segment before
    at = np.clip(np.searchsorted(keys, before), 0, keys.size - 1)
    hit = (s >= 1) & (keys[at] == before)
    shared = np.bincount(s[hit] - 1, weights=np.minimum(counts[hit], counts[at[hit]]), minlength=length.size - 1)
    pairs = length[:-1] + length[1:]
    return 1.0 - 2.0 * shared[:pairs.size] / pairs <= ALIKE


def _last_iteration(cls: np.ndarray, start: int, limit: int, lengths: np.ndarray, tail: int) -> int:
    """The end of the iteration that begins at ``start`` after a run of steps of ``lengths``: the first launch
    of the class its steps end with (``tail``) from the shortest step's length on, within the longest one's
    and before ``limit`` (the next landmark); ``start`` where there is none."""
    limit = min(limit, start + int(lengths.max() * (1 + ALIKE)) + 1)
    window = np.flatnonzero(cls[start + int(lengths.min()) - 1:limit] == tail)
    return start + int(lengths.min()) + int(window[0]) if window.size else start


def _loop(launches: Launches, starts: np.ndarray, end: int) -> Loop:
    bounds = np.append(starts, end)
    lengths = np.diff(bounds)
    same = Counter(tuple(launches.tokens[a:b].tolist()) for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()))
    to_host = launches.to_host[launches.tokens[bounds[1:] - 1]].mean() >= TO_HOST
    return Loop(starts=starts.astype(np.int64), end=int(end), launches=int(median(lengths)), exact=same.most_common(1)[0][1],
                gpu_ns=int(launches.gpu_ns[starts[0]:end].sum()), start_ns=int(launches.times[starts[0]]),
                kernel_ns=int(launches.kernel_sum[end] - launches.kernel_sum[starts[0]]), alike="kernel classes", fewest=int(lengths.min()),
                most=int(lengths.max()), to_host=bool(to_host))
