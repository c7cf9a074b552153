"""Where a program's GPU time goes, kernel by kernel: the kernels of an nsys capture grouped by name and
launch configuration, the most total time first. ``ncuwrap profile --top N`` profiles the first N with ncu.

A group is what ncu counts as one kernel when it numbers invocations (``--kernel-id``): the same function
(its mangled name, which tells template instances apart) with the same grid and block.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ncuwrap.timeline.events import Events
from ncuwrap.timeline.launched_from import trace_groups
from ncuwrap.timeline.model import LAUNCH_DIMS, launch_dims
from ncuwrap.kernel.verdict import KernelTime, KernelTimes


def kernel_times(kernels: Events, scope: str = "capture", data=None, traced: int = 0) -> KernelTimes:
    """Group ``kernels`` (the timeline model's table: start, end, name, demangled, mangled, gridX..blockZ);
    ``scope`` says which of the capture's kernels they are. ``data``: the capture they are of (TimelineData), whose
    ops and frames name the op and Python line of the first ``traced`` groups (ncuwrap.timeline.launched_from)."""
    if kernels is None or not len(kernels):
        return KernelTimes((), 0.0, 0, scope)
    dims = [d for d in LAUNCH_DIMS if d in kernels]
    frame = pd.DataFrame({
        "name": kernels["name"].to_pandas(), "demangled": kernels["demangled"].to_pandas(),
        "mangled": kernels["mangled" if "mangled" in kernels else "demangled"].to_pandas(),
        **{d: kernels[d] for d in dims},
        "ns": (kernels["end"] - kernels["start"]).astype("float64"), "row": np.arange(len(kernels)),
    })
    total = float(frame["ns"].sum())
    grouped = frame.groupby(["mangled", *dims], sort=False, observed=True)
    stats = grouped.agg(
        name=("name", "first"), demangled=("demangled", "first"), row=("row", "first"),
        launches=("ns", "size"), total_ns=("ns", "sum"), median_ns=("ns", "median"), min_ns=("ns", "min"), max_ns=("ns", "max"))
    stats["group"] = np.arange(len(stats))  # sort=False: pandas numbers the groups in this order (ngroup)
    groups, numbers = [], []
    for key, row in stats.sort_values("total_ns", ascending=False, kind="stable").iterrows():
        first = int(row["row"])
        grid, block = launch_dims(kernels, first, "grid"), launch_dims(kernels, first, "block")
        groups.append(KernelTime(name=str(row["name"]), demangled=str(row["demangled"]), mangled=str(key[0] if isinstance(key, tuple) else key),
                                 grid=tuple(grid) if grid else None, block=tuple(block) if block else None,
                                 launches=int(row["launches"]), total_ns=float(row["total_ns"]), median_ns=float(row["median_ns"]),
                                 min_ns=float(row["min_ns"]), max_ns=float(row["max_ns"]),
                                 share_pct=100.0 * float(row["total_ns"]) / total if total else 0.0))
        numbers.append(int(row["group"]))
    if data is not None and traced and (data.ops is not None or data.frames is not None) and groups:
        # Each launch's rank among the first ``traced`` groups (-1: beyond them), traced back by its launches.
        rank = np.full(len(stats), -1, dtype=np.int64)
        rank[numbers[:traced]] = np.arange(min(traced, len(numbers)))
        group = rank[grouped.ngroup().to_numpy()]
        rows = np.flatnonzero(group >= 0)
        places = trace_groups(data, kernels.rows(rows), group[rows], int(rank.max()) + 1)
        groups = [replace(g, launched_from=places[i]) if i < len(places) else g for i, g in enumerate(groups)]
    return KernelTimes(tuple(groups), total, int(len(frame)), scope)
