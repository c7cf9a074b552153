"""Typed results of a timeline diagnosis and their JSON form (schema ``ncuwrap.timeline/v1``).

:class:`Timeline` is what the analysis measured; :class:`TimelineDiagnosis` adds the verdict of
the rules. Times are integers in ns, percentages are of the traced window unless named otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


from ncuwrap import __version__
from ncuwrap.render import Format
from ncuwrap.verdict import FindingResult, NotEvaluated, Step, clean

SCHEMA = "ncuwrap.timeline/v1"

# The breakdown's categories, in attribution order (see analysis.breakdown).
CATEGORIES = ("kernel", "memcpy_htod", "memcpy_dtoh", "memcpy_dtod", "memcpy_other", "memset", "idle")
CATEGORY_LABELS = {"kernel": "kernels", "memcpy_htod": "H2D copies", "memcpy_dtoh": "D2H copies", "memcpy_dtod": "D2D copies",
                   "memcpy_other": "other copies", "memset": "memsets", "idle": "GPU idle"}
API_CATEGORIES = ("launch", "sync", "malloc", "memcpy", "memset", "other")


def pct(part, whole) -> float:
    return 100.0 * float(part) / float(whole) if whole else math.nan


@dataclass(frozen=True)
class KernelStats:
    name: str
    demangled: str
    count: int
    total_ns: int
    mean_ns: float
    median_ns: float
    min_ns: int
    max_ns: int
    share_pct: float  # of the sum of all kernel durations
    grid: list[int] | None
    block: list[int] | None

    def to_json(self) -> dict:
        return {"name": self.name, "demangled": self.demangled, "count": self.count, "total_ns": self.total_ns,
                "mean_ns": clean(self.mean_ns), "median_ns": clean(self.median_ns), "min_ns": self.min_ns, "max_ns": self.max_ns,
                "share_pct": clean(self.share_pct), "grid": self.grid, "block": self.block}


@dataclass(frozen=True)
class CopyStats:
    category: str  # memcpy_htod ...
    count: int
    bytes: int
    total_ns: int
    gbps: float
    pageable_count: int | None  # None: memory kinds unknown
    pageable_bytes: int | None

    def to_json(self) -> dict:
        return {"kind": self.category, "label": CATEGORY_LABELS[self.category], "count": self.count, "bytes": self.bytes,
                "total_ns": self.total_ns, "gbps": clean(self.gbps), "pageable_count": self.pageable_count,
                "pageable_bytes": self.pageable_bytes}


@dataclass(frozen=True)
class ApiStats:
    name: str
    category: str
    calls: int
    total_ns: int
    median_ns: float

    def to_json(self) -> dict:
        return {"name": self.name, "category": self.category, "calls": self.calls, "total_ns": self.total_ns,
                "median_ns": clean(self.median_ns)}


@dataclass(frozen=True)
class Gap:
    """A stretch of the window with no GPU activity; ``at_ns`` is from the window's start."""

    at_ns: int
    duration_ns: int
    cause: str  # the CUDA call the host was in, 'host code (no CUDA call)', or 'unknown (CUDA API not traced)'

    def to_json(self) -> dict:
        return {"at_ns": self.at_ns, "duration_ns": self.duration_ns, "cause": self.cause}


@dataclass(frozen=True)
class AmdahlRow:
    kernel_speedup: float | None  # None: kernels take no time (the ceiling)
    end_to_end_ns: float
    end_to_end_speedup: float

    @property
    def label(self) -> str:
        return "kernels take no time" if self.kernel_speedup is None else f"kernels {self.kernel_speedup:g}x faster"

    def to_json(self) -> dict:
        return {"kernel_speedup": self.kernel_speedup, "label": self.label, "end_to_end_ns": clean(self.end_to_end_ns),
                "end_to_end_speedup": clean(self.end_to_end_speedup)}


@dataclass(frozen=True)
class Timeline:
    """What the capture shows, before any rule is applied."""

    window_start_ns: int
    window_end_ns: int
    breakdown_ns: dict[str, int]  # CATEGORIES, summing to the window
    busy_ns: dict[str, int]  # each category's own time, overlaps included
    api: tuple[ApiStats, ...]  # by total time, largest first; empty when the API was not traced
    api_traced: bool
    copies: tuple[CopyStats, ...]
    memsets: dict
    kernels: tuple[KernelStats, ...]  # every distinct kernel, by total time
    kernel_gaps: dict
    startup: Gap
    gaps: tuple[Gap, ...]  # the longest idle gaps after start-up, longest first
    amdahl: tuple[AmdahlRow, ...]
    metrics: dict  # the values timeline rules read (ncuwrap.timeline.metrics)
    unknown: dict[str, str]  # metric -> why it is unknown
    devices: int = 1

    @property
    def window_ns(self) -> int:
        return self.window_end_ns - self.window_start_ns

    def top_kernels(self, n: int = 10) -> tuple[KernelStats, ...]:
        return self.kernels[:n]

    def api_categories(self) -> dict[str, dict]:
        out = {c: {"calls": 0, "total_ns": 0} for c in API_CATEGORIES}
        for call in self.api:
            out[call.category]["calls"] += call.calls
            out[call.category]["total_ns"] += call.total_ns
        return out


@dataclass(frozen=True)
class TimelineSource:
    path: str
    kind: str  # nsys-sqlite | nsys-rep
    nsys_version: str | None
    export_schema: str | None
    device: str | None

    def to_json(self) -> dict:
        return {"path": self.path, "kind": self.kind, "nsys_version": self.nsys_version, "export_schema": self.export_schema,
                "device": self.device}


@dataclass(frozen=True)
class TimelineDiagnosis:
    RENDERERS = {
        Format.table: "ncuwrap.timeline.render_table",
        Format.json: "ncuwrap.timeline.render_json",
        Format.markdown: "ncuwrap.timeline.render_markdown",
        Format.html: "ncuwrap.timeline.render_html",
    }

    source: TimelineSource
    rules_path: str
    rules_version: int
    rules_name: str
    timeline: Timeline
    bound: str
    limiter: str | None
    why: str
    findings: tuple[FindingResult, ...]
    not_evaluated: tuple[NotEvaluated, ...]
    path: tuple[Step, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def window_ns(self) -> int:
        return self.timeline.window_ns

    def to_json(self) -> dict:
        t = self.timeline
        return {
            "schema": SCHEMA,
            "tool": {"name": "ncuwrap", "version": __version__},
            "source": self.source.to_json(),
            "rules": {"path": self.rules_path, "version": self.rules_version, "name": self.rules_name},
            "window_ns": t.window_ns,
            "window": {"start_ns": t.window_start_ns, "end_ns": t.window_end_ns, "devices": t.devices},
            "breakdown_ns": dict(t.breakdown_ns),
            "breakdown_pct": {k: clean(pct(v, t.window_ns)) for k, v in t.breakdown_ns.items()},
            "busy_ns": dict(t.busy_ns),
            "api_ns": {a.name: a.total_ns for a in t.api} if t.api_traced else None,
            "api_calls": {a.name: a.calls for a in t.api} if t.api_traced else None,
            "api_by_category": t.api_categories() if t.api_traced else None,
            "bound": self.bound,
            "limiter": self.limiter,
            "why": self.why,
            "decision_path": [s.to_json() for s in self.path],
            "findings": [f.to_json(estimates=False) for f in self.findings],
            "not_evaluated": [n.to_json() for n in self.not_evaluated],
            "top_kernels": [k.to_json() for k in t.top_kernels()],
            "kernels": {"count": t.metrics["kernel_count"], "distinct": len(t.kernels), "sum_ns": t.metrics["kernel_sum_ns"],
                        "median_ns": clean(t.metrics["kernel_median_ns"]), "span_ns": t.metrics["kernel_span_ns"]},
            "kernel_gaps": t.kernel_gaps,
            "copies": [c.to_json() for c in t.copies],
            "memsets": t.memsets,
            "startup": t.startup.to_json(),
            "idle_gaps": [g.to_json() for g in t.gaps],
            "amdahl": [row.to_json() for row in t.amdahl],
            "ceilings": {"kernels": clean(t.metrics["kernel_ceiling"]), "copies": clean(t.metrics["copy_ceiling"])},
            "metrics": {name: clean(value) for name, value in t.metrics.items()},
            "notes": list(self.notes),
        }
