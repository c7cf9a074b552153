"""From one capture per rank to a :class:`~ncuwrap.timeline.ranks.model.RankSet`: each rank's breakdown
with NCCL communication apart, the communication hidden under compute, steps from NVTX ranges, and
the comparison that names the straggler.

- **NCCL kernels** are those whose name starts with ``nccl``: ``ncclDevKernel_AllReduce_Sum_f32_RING_LL``
  and ``ncclDevKernel_Generic`` (NCCL 2.19 and later), ``ncclKernel_AllReduce_RING_LL_Sum_float``
  (before), and NCCL's other kernels (``ncclSymk...``).
- **Hidden communication**: NCCL kernel time during which a compute (non-NCCL) kernel also ran. Kernels
  of one stream never overlap, so that compute kernel ran on another stream.
- **Waiting**: a collective ends on every rank only when the last rank has joined it, so a rank whose
  compute takes longer makes the others sit in their NCCL kernels. A rank's wait is its NCCL time
  minus the least NCCL time of any rank (which is the transfer itself); the straggler is the rank with
  the most compute, and it waits least.
- **Steps** and their warm-up are found as for a single capture (:mod:`ncuwrap.timeline.steps`).
- **The window**: where a rank has steps, its window is its steady steps (warm-up left out), holding the
  CUDA calls that start in it and the GPU work they launched (:meth:`ncuwrap.timeline.steps.Steps.steady_data`).
  A real capture spends most of its time outside them: imports, CUDA and NCCL initialisation and building
  the model before the steps, teardown after (4.5-5.1 s before and 0.4-0.9 s after 0.4-0.5 s of steps in
  the H200 x2 DDP captures, tests/data/h200_ncuwrap/ranks), and a first step of 0.37 s against 22 ms for
  the others: they would dilute every share of the window and hide a rank's waits. Without steps, the
  window is the whole capture.
- **The straggler** is compared with the other ranks (itself left out): with two ranks a median over
  all would sit halfway between them. **Per step**, the slowest rank's compute launched in that step
  against the others' median, over the steps steady on every rank.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np

from ncuwrap.timeline import analysis
from ncuwrap.timeline import launches, steps
from ncuwrap.timeline.options import TimelineOptions
from ncuwrap.timeline.events import Events
from ncuwrap.core.numbers import median
from ncuwrap.timeline.ranks.model import CollectiveTime, RankRow, RankSet, RankTimeline, StepStats
from ncuwrap.timeline.ranks.metrics import CATALOGUE
from ncuwrap.timeline.model import COPY_CATEGORIES, TimelineData, pct

NCCL_PREFIX = "nccl"
NO_STEPS = "no NVTX range named like a step (mark each training step with an NVTX range named 'step', or pass --step-range)"


# The collectives NCCL's kernel names spell (ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclKernel_ReduceScatter_
# RING_LL_Sum_bf16, ncclDevKernel_SendRecv); the longer of two names sharing a start first.
_COLLECTIVE = re.compile(r"(AllReduce|AllGather|ReduceScatter|AllToAll|Broadcast|Reduce|SendRecv|Send|Recv)")
OTHER_COLLECTIVE = "other"


def collective_of(name: str) -> str:
    """The collective an NCCL kernel runs, from its name; ``other`` where the name does not say
    (``ncclDevKernel_Generic``, NCCL 2.19 and later, runs whichever collective it is given)."""
    found = _COLLECTIVE.search(name)
    return found.group(1) if found else OTHER_COLLECTIVE


def _collectives(nccl_k: Events, compute, compute_ns: int) -> tuple[CollectiveTime, ...]:
    """Each collective's kernels on one rank: their time (union) and how much of it compute hid."""
    if not len(nccl_k):
        return ()
    names = launches.categories_of(nccl_k["name"])
    kinds = np.array([collective_of(str(c)) for c in names.categories] + [OTHER_COLLECTIVE], dtype=object)[names.codes]
    out = []
    for kind in sorted(set(kinds)):
        rows = nccl_k.rows(kinds == kind)
        spans = analysis.merge(rows["start"], rows["end"])
        ns = analysis.length(spans)
        out.append(CollectiveTime(kind, int(len(rows)), ns, compute_ns + ns - analysis.length(analysis.union(compute, spans))))
    return tuple(sorted(out, key=lambda c: (-c.ns, c.name)))


def is_nccl(names) -> np.ndarray:
    """Whether each kernel (by nsys's short name) is an NCCL kernel."""
    return launches.text_is(names, lambda n: n.startswith(NCCL_PREFIX))


def _step_stats(found: steps.Steps) -> StepStats:
    d = np.array([r.period_ns for r in found.steady], dtype=np.int64)  # each step's period, set where its pace is (ncuwrap.timeline.steps)
    return StepStats(name=found.name, count=int(d.size), median_ns=median(d), min_ns=int(d.min()), max_ns=int(d.max()),
                     total_ns=int(d.sum()), start_ns=found.steady_start_ns, end_ns=found.steady_end_ns, warmup=found.warmup,
                     warmup_why=found.warmup_why, all_count=found.count)


def analyze_rank(data: TimelineData, rank: int, *, path: str, kind: str, timeline: TimelineOptions = TimelineOptions()) -> RankTimeline:
    """One rank's capture (read with ``sqlite.read(path, ranks=True)``) analysed, over its steady steps
    where it has any (found as ``timeline`` says; see the module's docstring), else over the whole capture."""
    found = steps.measure(data, timeline.pattern, timeline.warmup, timeline.steps)
    lo, hi = launches.traced_span(data)  # the whole capture's window, as analysis.analyze takes it without a span
    capture_ns = hi - lo
    step_compute: tuple[int, ...] = ()
    if found is not None:
        compute_only = data.kernels.rows(~is_nccl(data.kernels["name"]))
        step_compute = tuple(int(v) for v in found.work_by_step(data, compute_only))
    steady = analysis.analyze_steady(data, found) if found is not None else None
    data, timeline = steady if steady is not None else (data, analysis.analyze(data))
    kernels = data.kernels
    nccl_rows = is_nccl(kernels["name"])
    compute_k, nccl_k = kernels.rows(~nccl_rows), kernels.rows(nccl_rows)
    compute = analysis.merge(compute_k["start"], compute_k["end"])
    nccl = analysis.merge(nccl_k["start"], nccl_k["end"])
    compute_ns, nccl_ns = analysis.length(compute), analysis.length(nccl)
    both = analysis.length(analysis.union(compute, nccl))
    hidden = compute_ns + nccl_ns - both
    # The single timeline's kernel time is the union of both: compute first, NCCL gets what is left.
    assert both == timeline.breakdown_ns["kernel"]
    breakdown = {"compute": compute_ns, "nccl": both - compute_ns,
                 **{c: v for c, v in timeline.breakdown_ns.items() if c != "kernel"}}
    top, top_ns = None, 0
    if len(compute_k):
        # Each kernel name's total time; of equal totals, the name first in alphabetical order.
        names = launches.categories_of(compute_k["name"])
        counts, totals, *_ = analysis.group_stats(names.codes, np.asarray(compute_k["end"] - compute_k["start"], dtype=np.int64),
                                           len(names.categories))
        best = analysis.heaviest(totals, np.flatnonzero(counts).tolist(), names.categories)
        top, top_ns = str(names.categories[best]), int(totals[best])
    run = data.run
    return RankTimeline(
        rank=rank, path=path, kind=kind, hostname=run.hostname if run else None, command=run.command if run else None,
        start_utc_ns=run.start_utc_ns if run else None, device=data.device, nsys_version=data.nsys_version,
        timeline=timeline, breakdown_ns=breakdown, compute_ns=compute_ns, nccl_ns=nccl_ns, nccl_hidden_ns=hidden,
        nccl_kernels=int(nccl_rows.sum()), top_compute_kernel=top, top_compute_kernel_ns=top_ns,
        steps=_step_stats(found) if found is not None else None, step_compute_ns=step_compute,
        nvtx_ranges=None if data.nvtx is None else int(len(data.nvtx)),
        window_scope="steps" if steady is not None else "capture", capture_ns=capture_ns, notes=tuple(data.notes),
        collectives=_collectives(nccl_k, compute, compute_ns),
    )


def _median(values) -> float:
    values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return median(values) if values else math.nan


def compare(ranks: list[RankTimeline], naming: str) -> RankSet:
    """The ranks (sorted by rank) compared, with the values the rank rules read."""
    ranks = sorted(ranks, key=lambda r: r.rank)
    compute = np.array([r.compute_ns for r in ranks], dtype=np.int64)
    nccl = np.array([r.nccl_ns for r in ranks], dtype=np.int64)
    any_nccl = bool(sum(r.nccl_kernels for r in ranks))
    at = int(np.argmax(compute))  # the first of equals
    straggler = ranks[at].rank
    others = np.delete(compute, at)
    least = int(nccl.min())
    waits = [int(n - least) if any_nccl else None for n in nccl]
    rows = tuple(RankRow(r.rank, r.compute_ns, r.nccl_ns, w) for r, w in zip(ranks, waits))
    m: dict[str, object] = {}
    unknown: dict[str, str] = {}
    median_compute = median(compute)
    others_median = median(others) if others.size else math.nan
    imbalance = float(compute.max()) / others_median if others_median else math.nan
    m.update(
        ranks=len(ranks), window_max_ns=max(r.window_ns for r in ranks),
        compute_pct=float(np.mean([r.share("compute") for r in ranks])), comm_pct=float(np.mean([r.share("nccl") for r in ranks])),
        copy_pct=float(np.mean([sum(r.share(c) for c in COPY_CATEGORIES) for r in ranks])),
        idle_pct=float(np.mean([r.share("idle") for r in ranks])),
        comm_busy_pct=float(np.mean([pct(r.breakdown_ns["nccl"], r.gpu_busy_ns) for r in ranks])),
        nccl_kernel_count=sum(r.nccl_kernels for r in ranks),
        compute_max_ns=int(compute.max()), compute_median_ns=median_compute, compute_others_median_ns=others_median,
        imbalance=imbalance, straggler_rank=straggler,
    )
    _per_step(ranks, m, unknown)
    if any_nccl:
        wait_at = int(np.argmax(waits))
        m.update(comm_hidden_pct=pct(sum(r.nccl_hidden_ns for r in ranks), int(nccl.sum())),
                 straggler_wait_ns=waits[int(np.argmax(compute))], wait_max_ns=waits[wait_at], wait_rank=ranks[wait_at].rank,
                 wait_max_pct=pct(waits[wait_at], ranks[wait_at].window_ns))
    else:
        for name in ("comm_hidden_pct", "straggler_wait_ns", "wait_max_ns", "wait_rank", "wait_max_pct"):
            m[name] = math.nan
            unknown[name] = "no NCCL kernel in any rank's capture (no collective ran, or it was not traced)"
    m["comm_limiter"] = (f"waiting for rank {straggler}" if len(ranks) > 1 and any_nccl and imbalance >= 1.05
                         else "NCCL transfers")
    totals: Counter = Counter()
    for r in ranks:
        if r.top_compute_kernel:
            totals[r.top_compute_kernel] += r.top_compute_kernel_ns
    m["top_compute_kernel"] = totals.most_common(1)[0][0] if totals else None

    with_steps = [r.steps for r in ranks if r.steps is not None]
    if with_steps:
        medians = [s.median_ns for s in with_steps]
        m.update(step_count=_median([s.count for s in with_steps]), step_median_ns=_median(medians),
                 step_max_ns=max(s.max_ns for s in with_steps), step_spread=max(medians) / min(medians) if min(medians) else math.nan,
                 warmup_steps=max(s.warmup for s in with_steps))
    else:
        for name in ("step_count", "step_median_ns", "step_max_ns", "step_spread", "warmup_steps"):
            m[name] = math.nan
            unknown[name] = NO_STEPS
    for name in ("kernel_count", "kernel_median_ns", "kernel_span_idle_pct", "launch_sync_span_pct", "launch_api_median_ns"):
        values = [r.timeline.metrics[name] for r in ranks if name not in r.timeline.unknown]
        m[name] = _median(values)
        if not values:
            unknown[name] = next(r.timeline.unknown[name] for r in ranks)
    missing = [n for n in CATALOGUE if n not in m]
    assert not missing, f"rank analysis does not compute {missing}"
    return RankSet(ranks=tuple(ranks), rows=rows, metrics={n: m[n] for n in CATALOGUE}, unknown=unknown, naming=naming)


def _per_step(ranks: list[RankTimeline], m: dict, unknown: dict) -> None:
    """Per-step imbalance: in each step steady on every rank, the slowest rank's compute launched in it
    against the other ranks' median; the median and the worst over those steps."""
    names = ("step_imbalance_median", "step_imbalance_max", "step_imbalance_max_step")
    first = max((r.steps.warmup for r in ranks if r.steps is not None), default=0)
    last = min((len(r.step_compute_ns) for r in ranks), default=0)
    if len(ranks) < 2 or any(r.steps is None for r in ranks) or last <= first:
        why = "a single rank" if len(ranks) < 2 else f"on some rank: {NO_STEPS}"
        for name in names:
            m[name] = math.nan
            unknown[name] = why
        return
    table = np.array([r.step_compute_ns[first:last] for r in ranks], dtype=float)  # ranks x steps
    slowest = table.max(axis=0)
    others = np.array([median(np.delete(table[:, j], int(np.argmax(table[:, j])))) for j in range(table.shape[1])])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(others > 0, slowest / others, np.nan)
    if np.isnan(ratio).all():
        for name in names:
            m[name] = math.nan
            unknown[name] = "no compute kernel launched in the steps"
        return
    worst = int(np.nanargmax(ratio))
    m.update(step_imbalance_median=median(ratio[~np.isnan(ratio)]), step_imbalance_max=float(ratio[worst]), step_imbalance_max_step=first + worst)


def analyze_file(rank: int, path: str, timeline: TimelineOptions = TimelineOptions()) -> RankTimeline:
    """Read and analyse one rank's capture: the task each Dask worker runs (module-level, so it pickles)."""
    from ncuwrap.timeline import readers

    data, kind = readers.read(path, nsys=timeline.nsys, ranks=True)
    return analyze_rank(data, rank, path=str(path), kind=kind, timeline=timeline)
