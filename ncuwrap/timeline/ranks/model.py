"""What the analysis of a set of rank captures measured, typed: one :class:`RankTimeline` per rank and
the :class:`RankSet` comparing them. The verdict of the rank rules is added by
:mod:`ncuwrap.timeline.ranks.diagnosis`; renderers only format these.

A rank's window is its steps where it has NVTX step ranges, else the whole capture
(ncuwrap.timeline.ranks.analysis). It is split like a single timeline's (ncuwrap.timeline.analysis),
with kernels split in two: each instant goes to the first of ``compute`` (a non-NCCL kernel ran), ``nccl`` (only NCCL
kernels ran: exposed communication), the copy categories, ``memset``, else ``idle``. compute + nccl
is therefore exactly the single timeline's ``kernel`` time, and the rest is identical to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ncuwrap.core.numbers import clean
from ncuwrap.timeline.model import CATEGORY_LABELS, COPY_CATEGORIES, Segment, Timeline, pct

RANK_CATEGORIES = ("compute", "nccl", *COPY_CATEGORIES, "memset", "idle")
RANK_LABELS = {"compute": "compute kernels", "nccl": "NCCL (exposed)",
               **{c: CATEGORY_LABELS[c] for c in RANK_CATEGORIES[2:]}}


@dataclass(frozen=True)
class StepStats:
    """A rank's steady steps (ncuwrap.timeline.steps: the warm-up left out); times are the steps' periods, set where
    each step's pace is (the GPU's start-to-start where the host runs ahead)."""

    name: str  # the most common matching range name
    count: int  # steady steps
    median_ns: float
    min_ns: int
    max_ns: int
    total_ns: int
    start_ns: int = 0  # the first steady step's start, the last one's end (the capture's clock): the rank's window
    end_ns: int = 0
    warmup: int = 0  # leading steps left out as warm-up
    warmup_why: str = ""
    all_count: int = 0  # every step, warm-up included

    def to_json(self) -> dict:
        return {"name": self.name, "count": self.count, "median_ns": clean(self.median_ns), "min_ns": self.min_ns,
                "max_ns": self.max_ns, "total_ns": self.total_ns, "warmup": self.warmup, "warmup_why": self.warmup_why,
                "all_count": self.all_count}


@dataclass(frozen=True)
class CollectiveTime:
    """One NCCL collective (AllReduce, AllGather, ReduceScatter...) on a rank, or summed over ranks: its
    kernels, their time (union), and how much of it ran while a compute kernel ran. Exposed is the rest;
    collectives that overlap each other each count the overlap, so exposed times add up to at least the
    breakdown's ``nccl``."""

    name: str  # ncuwrap.timeline.ranks.analysis.collective_of
    kernels: int
    ns: int
    hidden_ns: int

    @property
    def exposed_ns(self) -> int:
        return self.ns - self.hidden_ns

    @property
    def hidden_pct(self) -> float:
        return pct(self.hidden_ns, self.ns)

    def to_json(self) -> dict:
        return {"name": self.name, "kernels": self.kernels, "ns": self.ns, "hidden_ns": self.hidden_ns, "exposed_ns": self.exposed_ns,
                "hidden_pct": clean(self.hidden_pct)}


@dataclass(frozen=True)
class RankTimeline:
    """One rank's capture, analysed."""

    rank: int
    path: str
    kind: str  # nsys-sqlite | nsys-rep
    hostname: str | None
    command: str | None
    start_utc_ns: int | None
    device: str | None
    nsys_version: str | None
    timeline: Timeline  # the single-timeline analysis of the same capture
    breakdown_ns: dict[str, int]  # RANK_CATEGORIES, summing to the window
    compute_ns: int  # time any non-NCCL kernel ran (union)
    nccl_ns: int  # time any NCCL kernel ran (union), hidden or not
    nccl_hidden_ns: int  # NCCL time during which a compute kernel ran
    nccl_kernels: int
    top_compute_kernel: str | None
    top_compute_kernel_ns: int
    steps: StepStats | None  # None: no NVTX range matched the step pattern
    step_compute_ns: tuple[int, ...]  # per step (warm-up included), the compute (non-NCCL) kernel time launched in it
    nvtx_ranges: int | None  # NVTX ranges in the capture (None: no NVTX_EVENTS table)
    window_scope: str = "capture"  # "steps": the window is the rank's steps; "capture": the whole capture
    capture_ns: int = 0  # the whole capture's window (equal to window_ns when window_scope is "capture")
    notes: tuple[str, ...] = ()
    collectives: tuple[CollectiveTime, ...] = ()  # by time, most first

    @property
    def window_ns(self) -> int:
        return self.timeline.window_ns

    @property
    def gpu_busy_ns(self) -> int:
        """The window's time with some GPU work: all of it but idle."""
        return self.window_ns - self.breakdown_ns["idle"]

    @property
    def nccl_exposed_ns(self) -> int:
        return self.breakdown_ns["nccl"]

    @property
    def hidden_pct(self) -> float:
        return pct(self.nccl_hidden_ns, self.nccl_ns)

    def share(self, category: str) -> float:
        return pct(self.breakdown_ns[category], self.window_ns)

    def segments(self) -> list[Segment]:
        """The breakdown in attribution order; empty copy / memset categories left out."""
        return [Segment(c, RANK_LABELS[c], self.breakdown_ns[c], self.share(c)) for c in RANK_CATEGORIES
                if self.breakdown_ns[c] or c in ("compute", "nccl", "idle")]


@dataclass(frozen=True)
class RankRow:
    """A rank as the set compares it."""

    rank: int
    compute_ns: int
    nccl_ns: int
    wait_ns: int | None  # NCCL time beyond the least of any rank: waiting for the others (None: no NCCL kernel anywhere)


@dataclass(frozen=True)
class RankSet:
    """The ranks compared: imbalance, the straggler, the waits, the values the rank rules read."""

    ranks: tuple[RankTimeline, ...]  # by rank
    rows: tuple[RankRow, ...]
    metrics: dict  # ncuwrap.timeline.ranks.metrics names -> value
    unknown: dict[str, str]  # metric -> why it is unknown
    naming: str  # how ranks were numbered (file names or sorted order)

    def row(self, rank: int) -> RankRow:
        return next(r for r in self.rows if r.rank == rank)

    def collectives(self) -> tuple[CollectiveTime, ...]:
        """Each collective summed over the ranks, most time first."""
        total: dict[str, list[int]] = {}
        for r in self.ranks:
            for c in r.collectives:
                t = total.setdefault(c.name, [0, 0, 0])
                t[0] += c.kernels
                t[1] += c.ns
                t[2] += c.hidden_ns
        return tuple(sorted((CollectiveTime(name, k, ns, hidden) for name, (k, ns, hidden) in total.items()), key=lambda c: (-c.ns, c.name)))
