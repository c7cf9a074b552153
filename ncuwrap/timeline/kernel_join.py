"""The kernels ncu diagnosed, joined to a timeline's kernels: which launches of the capture each verdict is of.

ncu profiles one launch of a kernel; nsys times every launch. A verdict is of the capture's launches of the
same function (its mangled name, which tells template instances apart) with the same grid and block: the
group ncu numbers as one kernel and ``profile --top`` ranks (:mod:`ncuwrap.profile.top`). Without the
mangled name (a report exported without ``--print-kernel-base mangled``), the function's name decides where
it names one group of that launch configuration: :func:`matching` is the one rule, for ``profile --top``'s
coverage and for this join.

The timeline knows no kernel verdict: the layers above hand it :class:`KernelEstimate` values
(ncuwrap.profile.kernel_estimates makes them from a report or a run folder), and :func:`join` finds their
launches; the what-if's ``faster_kernel`` shortens them (ncuwrap.timeline.whatif.remedies.faster_kernel).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ncuwrap.core.kernel_names import short_name, telling_name
from ncuwrap.core.numbers import clean, distinct, median

# A remaining share below this (an estimate of 100.0% after rounding) is taken as this: a kernel never takes no time.
MIN_REMAINING = 1e-3
DIMS = ("gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ")


@dataclass(frozen=True)
class KernelEstimate:
    """One launch ncu diagnosed, as a timeline joins it: its names and launch configuration, and the share of
    its time its verdict estimates fixing its findings saves (ncuwrap.kernel.estimate: all its findings fixed
    together, as ``compare`` checks against measured pairs)."""

    launch: int  # ncu's ID of the launch
    name: str  # ncu's name of the kernel (demangled)
    display_name: str
    mangled: str | None  # where known (profile --top's report.mangled.csv)
    grid: tuple[int, ...] | None
    block: tuple[int, ...] | None
    gain_pct: float | None  # None: the verdict has no estimate
    findings: tuple[str, ...] = ()  # the findings that cost time, whose fixes the estimate is of

    @property
    def remaining(self) -> float | None:
        """The share of the launch's time left once fixed, or None without an estimate."""
        if self.gain_pct is None or not np.isfinite(self.gain_pct):
            return None
        return min(1.0, max(MIN_REMAINING, 1.0 - float(self.gain_pct) / 100.0))


@dataclass(frozen=True)
class DiagnosedKernels:
    """A kernel report's verdicts as the timeline is given them to join: where they came from, and each launch's
    estimate (ncuwrap.profile.kernel_estimates reads them from a report or a run folder)."""

    report: str
    estimates: tuple[KernelEstimate, ...]


@dataclass(frozen=True)
class JoinedKernel:
    """A kernel group of the capture (function, grid, block) and the verdicts of its launches ncu diagnosed."""

    name: str  # the capture's short name of the function
    mangled: str
    grid: tuple[int, ...] | None
    block: tuple[int, ...] | None
    launches: int  # of the capture
    verdicts: tuple[KernelEstimate, ...]
    remaining: float | None  # the share of each launch's time left once fixed (the median over the verdicts with an estimate)

    @property
    def speedup(self) -> float | None:
        return None if self.remaining is None else 1.0 / self.remaining

    def to_json(self) -> dict:
        return {"name": self.name, "mangled": self.mangled, "grid": list(self.grid) if self.grid else None,
                "block": list(self.block) if self.block else None, "launches": self.launches, "ncu_launches": [v.launch for v in self.verdicts],
                "estimated_gain_pct": clean(None if self.remaining is None else round(100.0 * (1.0 - self.remaining), 4)),
                "speedup": clean(None if self.speedup is None else round(self.speedup, 4)),
                "findings": sorted({f for v in self.verdicts for f in v.findings})}


@dataclass(frozen=True)
class KernelJoin:
    """The verdicts of a kernel report joined to a capture's kernels: the groups they are of, the verdicts that
    match no group (or several), and each kernel row's share of its time left once fixed."""

    report: str  # where the verdicts came from
    joined: tuple[JoinedKernel, ...]
    unmatched: tuple[KernelEstimate, ...]
    row_remaining: np.ndarray = field(repr=False, compare=False)  # per row of the capture's kernel table (NaN: no verdict with an estimate)

    @property
    def estimated(self) -> tuple[JoinedKernel, ...]:
        """The joined groups whose verdicts estimate a gain (None aside), the largest speedup first."""
        return tuple(sorted((j for j in self.joined if j.remaining is not None), key=lambda j: (j.remaining, j.name)))

    def to_json(self) -> dict:
        return {"report": self.report, "joined": [j.to_json() for j in self.joined],
                "unmatched": [{"launch": u.launch, "name": u.display_name, "grid": list(u.grid) if u.grid else None,
                               "block": list(u.block) if u.block else None} for u in self.unmatched]}


def matching(groups, *, name: str, display_name: str, mangled: str | None) -> list:
    """The ``groups`` (each with ``name``, ``demangled``, ``mangled``; of the launch's grid and block already) that
    are the kernel ncu named: by mangled name where it is known, else by the function's name (ncu's and nsys's
    demanglers spell templates differently: the short name, or the whole demangled signature)."""
    match = [g for g in groups if g.mangled == mangled] if mangled else []
    if not match:
        names = (name, display_name, short_name(name), telling_name(name))
        match = [g for g in groups if g.name in names or g.demangled == name]
    return match


@dataclass(frozen=True)
class _Group:
    name: str
    demangled: str
    mangled: str
    rows: np.ndarray


def _config_rows(kernels, grid, block) -> np.ndarray:
    """The rows of ``kernels`` launched with ``grid`` and ``block`` (None: the export does not say; so must the rows)."""
    n = len(kernels)
    want = [*(grid or (-1, -1, -1)), *(block or (-1, -1, -1))]
    ok = np.ones(n, dtype=bool)
    for d, v in zip(DIMS, want):
        column = np.asarray(kernels[d], dtype=np.int64) if d in kernels else np.full(n, -1, dtype=np.int64)
        ok &= column == int(v)
    return np.flatnonzero(ok)


def _groups(kernels, rows: np.ndarray) -> list[_Group]:
    """The functions among ``rows`` (one launch configuration), each with its rows."""
    mangled = kernels["mangled" if "mangled" in kernels else "demangled"]
    codes = mangled.codes[rows]
    out = []
    for code in distinct(codes[codes >= 0]).tolist():
        mine = rows[codes == code]
        first = int(mine[0])
        out.append(_Group(name=str(kernels["name"][first]), demangled=str(kernels["demangled"][first]), mangled=str(mangled[first]), rows=mine))
    return out


def join(kernels, diagnosed: DiagnosedKernels) -> KernelJoin:
    """Each of ``diagnosed``'s estimates joined to the group of ``kernels`` (a capture's kernel table: name,
    demangled, mangled, grid and block) it is of; a group several verdicts are of takes their median."""
    report, estimates = diagnosed.report, diagnosed.estimates
    n = 0 if kernels is None else len(kernels)
    remaining = np.full(n, np.nan)
    if not n:
        return KernelJoin(report=report, joined=(), unmatched=tuple(estimates), row_remaining=remaining)
    found: dict[str, tuple[_Group, list]] = {}
    unmatched = []
    for e in estimates:
        rows = _config_rows(kernels, e.grid, e.block)
        match = matching(_groups(kernels, rows), name=e.name, display_name=e.display_name, mangled=e.mangled) if rows.size else []
        if len(match) != 1:
            unmatched.append(e)
            continue
        g = match[0]
        key = f"{g.mangled}|{e.grid}|{e.block}"
        found.setdefault(key, (g, []))[1].append(e)
    joined = []
    for (g, verdicts) in found.values():
        known = [v.remaining for v in verdicts if v.remaining is not None]
        left = float(median(np.asarray(known))) if known else None
        if left is not None:
            remaining[g.rows] = left
        joined.append(JoinedKernel(name=g.name, mangled=g.mangled, grid=verdicts[0].grid, block=verdicts[0].block, launches=int(g.rows.size),
                                   verdicts=tuple(verdicts), remaining=left))
    return KernelJoin(report=report, joined=tuple(joined), unmatched=tuple(unmatched), row_remaining=remaining)
