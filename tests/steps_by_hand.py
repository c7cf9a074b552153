"""Each step's GPU busy share computed by hand from an nsys SQLite export, with nothing of ncuwrap: the
reference the steady-state analysis (ncuwrap.timeline.steps) is checked against.

A step is an NVTX push/pop range of the given name; its GPU work is every kernel, copy, memset and graph
execution (a CUDA graph traced as a whole) whose correlationId is that of a CUDA call made inside the
range. A step begins at its start, or where the work launched in the steps before it ends later, there (the GPU
sets the pace where that is more than 50 us after its start); its period
runs to the next step's beginning (the last one's: to its end or its work's end, whichever is later); its
GPU busy time is the union of the work launched in any step, within its period.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from pathlib import Path


def _union(intervals: list[tuple[int, int]]) -> int:
    total, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def steps(path: Path, name: str) -> list[dict]:
    """[{start, end, begin, paced_by, host_period, period, work, busy, busy_pct, launches}] per step, in time order."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    ranges = db.execute("SELECT n.start, n.\"end\" FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
                        "WHERE COALESCE(n.text, s.value) = ? AND n.\"end\" IS NOT NULL ORDER BY n.start", (name,)).fetchall()
    calls = db.execute("SELECT r.start, r.correlationId, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                       "JOIN StringIds s ON s.id = r.nameId ORDER BY r.start").fetchall()
    work: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"):
        if table in tables:
            for start, end, corr in db.execute(f'SELECT start, "end", correlationId FROM {table}'):
                work[corr].append((start, end))
    db.close()
    call_start = {}
    for start, corr, _ in calls:
        call_start.setdefault(corr, start)
    out, launched_by_step = [], []
    for i, (start, end) in enumerate(ranges):
        mine = [c for c in calls if start <= c[0] < end]
        launched = [(iv, c_start) for c_start, corr, _ in mine for iv in work.get(corr, [])]
        intervals = [iv for iv, _ in launched]
        launched_by_step.append(intervals)
        gpu_end = max((e for _, e in intervals), default=end)
        first = min(launched, key=lambda x: x[0][0], default=None)
        out.append({"first": first, "start": start})
        host_period = ranges[i + 1][0] - start if i + 1 < len(ranges) else max(end, start) - start
        out[-1].update({"start": start, "end": end, "gpu_end": gpu_end,
                    "host_period": host_period, "work": _union(intervals),
                    "launches": sum(1 for _, _, n in mine if n.startswith(("cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch")))})
    everything = [iv for ivs in launched_by_step for iv in ivs]
    done = None  # the end of the work launched in the steps before
    for step in out:
        step.pop("first")
        paced = done is not None and done - step["start"] > 50_000
        step["begin"] = step["start"] if done is None else max(step["start"], done)
        step["paced_by"] = "gpu" if paced else "host"
        launched_end = max((e for _, e in launched_by_step[out.index(step)]), default=None)
        done = launched_end if done is None else max(done, launched_end) if launched_end is not None else done
    for i, step in enumerate(out):
        nxt = out[i + 1]["begin"] if i + 1 < len(out) else max(step["end"], step["gpu_end"], step["begin"])
        step["period"] = nxt - step["begin"]
        lo, hi = step["begin"], nxt
        step["busy"] = _union([(max(s, lo), min(e, hi)) for s, e in everything if min(e, hi) > max(s, lo)])
        step["busy_pct"] = 100.0 * step["busy"] / step["period"]
    return out
