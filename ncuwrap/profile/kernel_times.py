"""Where a program's GPU time goes, kernel by kernel: the kernels of an nsys capture grouped by name and
launch configuration, the most total time first. ``ncuwrap profile --top N`` profiles the first N with ncu.

A group is what ncu counts as one kernel when it numbers invocations (``--kernel-id``): the same function
(its mangled name, which tells template instances apart) with the same grid and block.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ncuwrap.verdict import KernelTime, KernelTimes


def _dims(value) -> tuple[int, ...] | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return tuple(int(v) for v in value)


def kernel_times(kernels: pd.DataFrame, scope: str = "capture") -> KernelTimes:
    """Group ``kernels`` (ncuwrap.timeline.sqlite's frame: start, end, name, demangled, mangled, grid, block);
    ``scope`` says which of the capture's kernels they are."""
    if kernels is None or not len(kernels):
        return KernelTimes((), 0.0, 0, scope)
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
    return KernelTimes(tuple(groups), total, int(len(frame)), scope)
