"""Where a program's GPU time goes, kernel by kernel: the kernels of an nsys capture grouped by name and
launch configuration, the most total time first. ``ncuwrap profile --top N`` profiles the first N with ncu.

A group is what ncu counts as one kernel when it numbers invocations (``--kernel-id``): the same function
(its mangled name, which tells template instances apart) with the same grid and block.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ncuwrap.numbers import clean


@dataclass(frozen=True)
class KernelTime:
    """Every launch of one kernel with one launch configuration, timed by nsys (uninstrumented)."""

    name: str  # nsys's short name (the function)
    demangled: str
    mangled: str
    grid: tuple[int, ...] | None
    block: tuple[int, ...] | None
    launches: int
    total_ns: float
    median_ns: float
    min_ns: float
    max_ns: float
    share_pct: float  # of the capture's summed kernel time

    def to_json(self) -> dict:
        return {"name": self.name, "demangled": self.demangled, "mangled": self.mangled,
                "grid": list(self.grid) if self.grid else None, "block": list(self.block) if self.block else None,
                "launches": self.launches, "total_ns": clean(self.total_ns), "median_ns": clean(self.median_ns),
                "min_ns": clean(self.min_ns), "max_ns": clean(self.max_ns), "share_pct": clean(self.share_pct)}


@dataclass(frozen=True)
class KernelTimes:
    """A capture's kernels, grouped and ranked."""

    groups: tuple[KernelTime, ...]  # most total time first
    total_ns: float  # summed kernel time (concurrent kernels count in full)
    launches: int


def _dims(value) -> tuple[int, ...] | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return tuple(int(v) for v in value)


def kernel_times(kernels: pd.DataFrame) -> KernelTimes:
    """Group ``kernels`` (ncuwrap.timeline.sqlite's frame: start, end, name, demangled, mangled, grid, block)."""
    if kernels is None or not len(kernels):
        return KernelTimes((), 0.0, 0)
    grids = kernels["grid"] if "grid" in kernels else pd.Series([None] * len(kernels), index=kernels.index)
    blocks = kernels["block"] if "block" in kernels else pd.Series([None] * len(kernels), index=kernels.index)
    frame = pd.DataFrame({
        "name": kernels["name"].astype(str),
        "demangled": kernels["demangled"].astype(str),
        "mangled": (kernels["mangled"] if "mangled" in kernels else kernels["demangled"]).astype(str),
        # Lists do not group: the launch configuration is grouped by its text, and kept as dims.
        "grid_key": grids.map(lambda g: str(_dims(g))), "block_key": blocks.map(lambda b: str(_dims(b))),
        "grid": grids.map(_dims), "block": blocks.map(_dims),
        "ns": (kernels["end"] - kernels["start"]).astype("float64"),
    })
    total = float(frame["ns"].sum())
    stats = frame.groupby(["mangled", "grid_key", "block_key"], sort=False).agg(
        name=("name", "first"), demangled=("demangled", "first"), grid=("grid", "first"), block=("block", "first"),
        launches=("ns", "size"), total_ns=("ns", "sum"), median_ns=("ns", "median"), min_ns=("ns", "min"), max_ns=("ns", "max"))
    groups = []
    for key, row in stats.sort_values("total_ns", ascending=False, kind="stable").iterrows():
        groups.append(KernelTime(name=row["name"], demangled=row["demangled"], mangled=key[0], grid=_dims(row["grid"]), block=_dims(row["block"]),
                                 launches=int(row["launches"]), total_ns=float(row["total_ns"]), median_ns=float(row["median_ns"]),
                                 min_ns=float(row["min_ns"]), max_ns=float(row["max_ns"]),
                                 share_pct=100.0 * float(row["total_ns"]) / total if total else 0.0))
    return KernelTimes(tuple(groups), total, int(len(frame)))
