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
- **Steps**: the outermost NVTX ranges whose name matches the step pattern (default :data:`STEP_PATTERN`:
  a range named ``step``, ``train_step``, ``step 12`` or PyTorch's ``ProfilerStep#12``).
- **The window**: where a rank has steps, its window is its steps: from the first step's start to the
  last step's end (or the end of the GPU work launched in the steps, if later), holding the CUDA calls
  and GPU activity that start in it (:func:`within`). A real capture spends most of its time outside
  the steps: imports, CUDA and NCCL initialisation and building the model before them, teardown after
  (4.5-5.1 s before and 0.4-0.9 s after 0.4-0.5 s of steps in the H200 x2 DDP captures,
  tests/data/h200_ncuwrap/ranks), which would dilute every share of the window and hide a rank's waits.
  Without steps, the window is the whole capture.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter

import numpy as np
import pandas as pd

from ncuwrap.timeline import analysis as A
from ncuwrap.timeline.model import pct
from ncuwrap.timeline.ranks.model import RankRow, RankSet, RankTimeline, StepStats
from ncuwrap.timeline.ranks.metrics import CATALOGUE
from ncuwrap.timeline.sqlite import TimelineData

NCCL_PREFIX = "nccl"
STEP_PATTERN = r"(?i)(?:^|[^a-z])step(?:[^a-z]|$)|^ProfilerStep#"


def is_nccl(names: pd.Series) -> np.ndarray:
    """Whether each kernel (by nsys's short name) is an NCCL kernel."""
    return names.astype(str).str.startswith(NCCL_PREFIX).to_numpy(dtype=bool)


def steps(nvtx: pd.DataFrame | None, pattern: str = STEP_PATTERN) -> StepStats | None:
    """The steps among ``nvtx``'s ranges: matching ranges not inside another matching range."""
    if nvtx is None or nvtx.empty:
        return None
    match = nvtx[nvtx["name"].str.contains(re.compile(pattern), regex=True)]
    if match.empty:
        return None
    match = match.sort_values(["start", "end"], ascending=[True, False], kind="stable")
    starts, ends = match["start"].to_numpy(dtype=np.int64), match["end"].to_numpy(dtype=np.int64)
    reach = np.maximum.accumulate(ends)
    outer = np.ones(starts.size, dtype=bool)
    outer[1:] = ends[1:] > reach[:-1]  # not contained in an earlier (outer) range
    d = (ends - starts)[outer]
    names = Counter(match["name"].to_numpy()[outer].tolist())
    return StepStats(name=names.most_common(1)[0][0], count=int(d.size), median_ns=float(np.median(d)), min_ns=int(d.min()),
                     max_ns=int(d.max()), total_ns=int(d.sum()), start_ns=int(starts[outer].min()), end_ns=int(ends[outer].max()))


def within(data: TimelineData, start: int, end: int) -> TimelineData | None:
    """``data`` keeping only the CUDA calls and GPU activity that start in [start, end] (the steps'
    span), whole: work launched in the last step that runs on after its end is kept. None when no
    kernel starts in the span (then the whole capture is analysed)."""
    def keep(frame: pd.DataFrame | None) -> pd.DataFrame | None:
        if frame is None:
            return None
        return frame[(frame["start"] >= start) & (frame["start"] <= end)].reset_index(drop=True)

    kernels = keep(data.kernels)
    if kernels.empty:
        return None
    return dataclasses.replace(data, kernels=kernels, copies=keep(data.copies), memsets=keep(data.memsets), api=keep(data.api))


def analyze_rank(data: TimelineData, rank: int, *, path: str, kind: str, step_pattern: str = STEP_PATTERN) -> RankTimeline:
    """One rank's capture (read with ``sqlite.read(path, ranks=True)``) analysed, over its steps where
    it has any (see the module's docstring), else over the whole capture."""
    step_stats = steps(data.nvtx, step_pattern)
    lo, hi = A.traced_span(data)  # the whole capture's window, as A.analyze takes it without a span
    capture_ns = hi - lo
    in_steps = within(data, step_stats.start_ns, step_stats.end_ns) if step_stats else None
    if in_steps is not None:
        data = in_steps
    timeline = A.analyze(data, span=(step_stats.start_ns, step_stats.end_ns) if in_steps is not None else None)
    kernels = data.kernels
    nccl_rows = is_nccl(kernels["name"])
    compute_k, nccl_k = kernels[~nccl_rows], kernels[nccl_rows]
    compute = A.merge(compute_k["start"].to_numpy(), compute_k["end"].to_numpy())
    nccl = A.merge(nccl_k["start"].to_numpy(), nccl_k["end"].to_numpy())
    compute_ns, nccl_ns = A.length(compute), A.length(nccl)
    both = A.length(A.union(compute, nccl))
    hidden = compute_ns + nccl_ns - both
    # The single timeline's kernel time is the union of both: compute first, NCCL gets what is left.
    assert both == timeline.breakdown_ns["kernel"]
    breakdown = {"compute": compute_ns, "nccl": both - compute_ns,
                 **{c: v for c, v in timeline.breakdown_ns.items() if c != "kernel"}}
    top, top_ns = None, 0
    if len(compute_k):
        totals = (compute_k["end"] - compute_k["start"]).groupby(compute_k["name"].astype(str)).sum().sort_index()
        top = str(totals.idxmax())
        top_ns = int(totals.max())
    run = data.run
    return RankTimeline(
        rank=rank, path=path, kind=kind, hostname=run.hostname if run else None, command=run.command if run else None,
        start_utc_ns=run.start_utc_ns if run else None, device=data.device, nsys_version=data.nsys_version,
        timeline=timeline, breakdown_ns=breakdown, compute_ns=compute_ns, nccl_ns=nccl_ns, nccl_hidden_ns=hidden,
        nccl_kernels=int(nccl_rows.sum()), top_compute_kernel=top, top_compute_kernel_ns=top_ns,
        steps=step_stats, nvtx_ranges=None if data.nvtx is None else int(len(data.nvtx)),
        window_scope="steps" if in_steps is not None else "capture", capture_ns=capture_ns, notes=tuple(data.notes),
    )


def _median(values) -> float:
    values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return float(np.median(values)) if values else math.nan


def compare(ranks: list[RankTimeline], naming: str) -> RankSet:
    """The ranks (sorted by rank) compared, with the values the rank rules read."""
    ranks = sorted(ranks, key=lambda r: r.rank)
    compute = np.array([r.compute_ns for r in ranks], dtype=np.int64)
    nccl = np.array([r.nccl_ns for r in ranks], dtype=np.int64)
    any_nccl = bool(sum(r.nccl_kernels for r in ranks))
    straggler = ranks[int(np.argmax(compute))].rank  # the first of equals
    least = int(nccl.min())
    waits = [int(n - least) if any_nccl else None for n in nccl]
    rows = tuple(RankRow(r.rank, r.compute_ns, r.nccl_ns, w) for r, w in zip(ranks, waits))
    m: dict[str, object] = {}
    unknown: dict[str, str] = {}
    median_compute = float(np.median(compute))
    imbalance = float(compute.max()) / median_compute if median_compute else math.nan
    m.update(
        ranks=len(ranks), window_max_ns=max(r.window_ns for r in ranks),
        compute_pct=float(np.mean([r.share("compute") for r in ranks])), comm_pct=float(np.mean([r.share("nccl") for r in ranks])),
        copy_pct=float(np.mean([sum(r.share(c) for c in ("memcpy_htod", "memcpy_dtoh", "memcpy_dtod", "memcpy_other")) for r in ranks])),
        idle_pct=float(np.mean([r.share("idle") for r in ranks])),
        comm_busy_pct=float(np.mean([pct(r.breakdown_ns["nccl"], r.window_ns - r.breakdown_ns["idle"]) for r in ranks])),
        nccl_kernel_count=sum(r.nccl_kernels for r in ranks),
        compute_max_ns=int(compute.max()), compute_median_ns=median_compute, imbalance=imbalance, straggler_rank=straggler,
    )
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
                 step_max_ns=max(s.max_ns for s in with_steps), step_spread=max(medians) / min(medians) if min(medians) else math.nan)
    else:
        for name in ("step_count", "step_median_ns", "step_max_ns", "step_spread"):
            m[name] = math.nan
            unknown[name] = "no NVTX range named like a step (mark each training step with an NVTX range named 'step', or pass --step-range)"
    for name in ("kernel_count", "kernel_median_ns", "kernel_span_idle_pct", "launch_sync_span_pct", "launch_api_median_ns"):
        values = [r.timeline.metrics[name] for r in ranks if name not in r.timeline.unknown]
        m[name] = _median(values)
        if not values:
            unknown[name] = next(r.timeline.unknown[name] for r in ranks)
    missing = [n for n in CATALOGUE if n not in m]
    assert not missing, f"rank analysis does not compute {missing}"
    return RankSet(ranks=tuple(ranks), rows=rows, metrics={n: m[n] for n in CATALOGUE}, unknown=unknown, naming=naming)


def analyze_file(rank: int, path: str, step_pattern: str = STEP_PATTERN, nsys: str | None = None) -> RankTimeline:
    """Read and analyse one rank's capture: the task each Dask worker runs (module-level, so it pickles)."""
    from ncuwrap.timeline.files import read_timeline

    data, kind = read_timeline(path, nsys=nsys, ranks=True)
    return analyze_rank(data, rank, path=str(path), kind=kind, step_pattern=step_pattern)
