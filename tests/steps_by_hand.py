"""Each step's GPU busy share computed by hand from an nsys SQLite export, with nothing of ncuwrap: the
reference the steady-state analysis (ncuwrap.timeline.steps) is checked against.

A step is an NVTX push/pop range of the given name; its GPU work is every kernel, copy, memset and graph
execution (a CUDA graph traced as a whole) whose correlationId is that of a CUDA call made inside the
range; its period runs to the next step's start (the last one's: to its end or its work's end,
whichever is later).
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
    """[{start, end, period, work, busy_pct, launches}] per step, in time order."""
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
    out = []
    for i, (start, end) in enumerate(ranges):
        mine = [c for c in calls if start <= c[0] < end]
        intervals = [iv for _, corr, _ in mine for iv in work.get(corr, [])]
        gpu_end = max((e for _, e in intervals), default=end)
        period = ranges[i + 1][0] - start if i + 1 < len(ranges) else max(end, gpu_end) - start
        busy = _union(intervals)
        out.append({"start": start, "end": end, "period": period, "work": busy, "busy_pct": min(100.0, 100.0 * busy / period),
                    "launches": sum(1 for _, _, n in mine if n.startswith(("cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch")))})
    return out
