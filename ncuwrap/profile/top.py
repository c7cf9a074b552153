"""``ncuwrap profile --top N``: nsys first (where the GPU time goes), then ncu on the N kernels that take most.

1. The program runs once under nsys; its kernels are grouped by function (mangled name) and launch
   configuration and ranked by total GPU time (:mod:`ncuwrap.profile.kernel_times`).
2. ncu runs the program again and profiles one launch of each of the first N groups: ``--kernel-name-base
   mangled --kernel-id ::regex:^(m1|m2|...)$:K``, K = 2 (the first launch is often a warm-up: autotuning,
   cold caches, lazy loading) unless one of them was launched only once, then K = 1 for all.
3. Each profiled result is matched back to its group by mangled name (a second, small CSV export of the
   report with ``--print-kernel-base mangled``), grid and block, which gives the diagnosis a
   :class:`~ncuwrap.kernel.verdict.Coverage`: launches and total time per kernel, and the share of the program's
   GPU time the profiled kernels cover; the "fix first" ranking then weighs each kernel's estimated gain
   by its share of the whole program.
"""

from __future__ import annotations

from ncuwrap.core.errors import OptionError

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from ncuwrap.kernel.verdict import KernelTime, KernelTimes
from ncuwrap.timeline.kernel_join import DiagnosedKernels, KernelEstimate, matching
from ncuwrap.kernel.verdict import Coverage, CoveredKernel

# ncu's first launch of a kernel is often not the steady state (autotuning, cold caches, module loading).
PREFERRED_LAUNCH = 2
# What --top adds to the collection, so that the timeline's op limits (ncuwrap.timeline.oplimits) can be checked
# against the same kernels (ncuwrap.kernel.op_limits): the FLOPs as SASS thread instruction counts (FP32, FP16,
# FP64; a fused multiply-add counts two), the tensor-core instructions, and the bytes through L2 with its hit
# rate (where DRAM bytes fall short of an op's minimal bytes). The tensor-core operations by input type and
# the DRAM bytes read and written are in the targeted collection already.
OP_LIMIT_METRICS = tuple(
    [f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ("fadd", "fmul", "ffma", "hadd", "hmul", "hfma", "dadd", "dmul", "dfma")]
    + ["sm__inst_executed_pipe_tensor_op_gmma.sum", "sm__inst_executed_pipe_tensor_op_hmma.sum", "lts__t_bytes.sum", "lts__t_sector_hit_rate.pct",
       "dram__bytes_read.sum", "dram__bytes_write.sum"])
MANGLED_IDS = "report.mangled.csv"


@dataclass(frozen=True)
class TopPlan:
    """Which kernels ncu profiles for --top N, and how to ask ncu for them."""

    top: int
    groups: tuple[KernelTime, ...]
    nth_launch: int
    steady: bool = False  # nth_launch skips every launch made before the steady steps

    @property
    def regex(self) -> str:
        """One regular expression for ncu's --kernel-id over the groups' mangled names (no ':' in them)."""
        names = list(dict.fromkeys(g.mangled for g in self.groups))
        return "^(" + "|".join(re.escape(n).replace(":", ".") for n in names) + ")$"

    def why(self) -> str:
        if self.steady:
            return f"launch {self.nth_launch} of each: past every launch made before the steady steps (start-up, warm-up)"
        if self.nth_launch == 1:
            return "launch 1 of each: one of them ran only once under nsys"
        return f"launch {self.nth_launch} of each: the first is often a warm-up"


def plan(times: KernelTimes, top: int, before: dict | None = None) -> TopPlan:
    """The first ``top`` groups of ``times`` and the launch of each to profile. ``before``: launches of each
    group (by :func:`group_key`) made before the steady steps, when ``times`` are the steady steps': ncu then
    profiles a launch past all of them (one launch number serves every kernel)."""
    if top < 1:
        raise OptionError(f"--top must be 1 or more (got {top})")
    groups = times.groups[:top]
    if before is not None and groups:
        nth = max(PREFERRED_LAUNCH, 1 + max(before.get(group_key(g), 0) for g in groups))
        if all(g.launches + before.get(group_key(g), 0) >= nth for g in groups):
            return TopPlan(top=top, groups=groups, nth_launch=nth, steady=True)
    nth = PREFERRED_LAUNCH if groups and all(g.launches >= PREFERRED_LAUNCH for g in groups) else 1
    return TopPlan(top=top, groups=groups, nth_launch=nth)


def group_key(group: KernelTime) -> tuple:
    return (group.mangled, group.grid, group.block)


def mangled_export_argv(report: str | Path, ncu: str = "ncu") -> list[str]:
    """The raw-page CSV export that names each result by its mangled name (stdout is the CSV)."""
    return [str(ncu), "--import", str(report), "--csv", "--page", "raw", "--print-kernel-base", "mangled",
            "--metrics", "launch__grid_size"]


def read_mangled(text: str) -> dict[int, str]:
    """Result ID -> mangled kernel name, from :func:`mangled_export_argv`'s CSV."""
    rows = csv.DictReader(io.StringIO(text))
    out = {}
    for row in rows:
        try:
            out[int(str(row.get("ID", "")).replace(",", ""))] = str(row.get("Kernel Name", ""))
        except ValueError:
            continue  # the units row
    return out


def _key(grid, block) -> tuple:
    return (tuple(grid) if grid else None, tuple(block) if block else None)


def coverage(kernels, plan: TopPlan, times: KernelTimes, mangled: dict[int, str], capture: str) -> Coverage:
    """Match each profiled launch (``kernels``: KernelVerdicts) to its nsys group: by mangled name, grid
    and block; without the mangled names, by short name, grid and block when that is unambiguous (the rule:
    ncuwrap.timeline.kernel_join.matching, which joins a report's verdicts to a timeline the same way)."""
    rank = {id(g): i for i, g in enumerate(times.groups, 1)}
    found: dict[int, list[int]] = {}
    for k in kernels:
        config = _key(k.grid, k.block)
        candidates = [g for g in times.groups if _key(g.grid, g.block) == config]
        match = matching(candidates, name=k.name, display_name=k.display_name, mangled=mangled.get(k.id))
        if len(match) == 1:
            found.setdefault(rank[id(match[0])], []).append(k.id)
    covered = tuple(CoveredKernel(time=times.groups[r - 1], rank=r, launch_ids=tuple(ids)) for r, ids in sorted(found.items()))
    hit = {c.rank for c in covered}
    missed = tuple(g for g in plan.groups if rank[id(g)] not in hit)
    return Coverage(capture=capture, top=plan.top, nth_launch=plan.nth_launch, gpu_ns=times.total_ns, launches=times.launches,
                    distinct=len(times.groups), kernels=covered, missed=missed, scope=times.scope)


def verdict_estimates(diagnosis, mangled: dict[int, str] | None, report: str) -> DiagnosedKernels:
    """The estimates of ``diagnosis``' launches (ncuwrap.kernel.verdict.Diagnosis); ``mangled``: each launch's mangled
    name by its ID, where known (None: those of the groups ``profile --top`` matched the launches to, if it did)."""
    if mangled is None and diagnosis.coverage is not None:
        mangled = {launch: c.time.mangled for c in diagnosis.coverage.kernels for launch in c.launch_ids}
    names = mangled or {}
    return DiagnosedKernels(report=report, estimates=tuple(
        KernelEstimate(launch=k.id, name=k.name, display_name=k.display_name, mangled=names.get(k.id), grid=tuple(k.grid) if k.grid else None,
                       block=tuple(k.block) if k.block else None, gain_pct=k.estimated_gain_pct, findings=tuple(f.id for f in k.issues))
        for k in diagnosis.kernels))
