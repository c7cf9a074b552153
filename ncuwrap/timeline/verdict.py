"""A timeline's verdict, the type, and its JSON form (schema ``ncuwrap.timeline/v1``): what the analysis measured
(:class:`~ncuwrap.timeline.model.Timeline`) with the rules' verdict, findings and decision path. The process that
makes it is :mod:`ncuwrap.timeline.diagnosis`, as ``kernel/verdict.py`` and ``kernel/diagnosis.py`` are the kernel's."""

from __future__ import annotations

from dataclasses import dataclass, field

from ncuwrap.core.version import __version__
from ncuwrap.core.display import Displayed, plural, short_path
from ncuwrap.ruleset.evaluate import Decided, Decision
from ncuwrap.core.numbers import clean
from ncuwrap.timeline.model import Timeline, pct

SCHEMA = "ncuwrap.timeline/v1"


# The kinds whose documents name their producer by nsys_version alone (the key they have always had).
NSYS_KINDS = ("nsys-sqlite", "nsys-rep")


@dataclass(frozen=True)
class TimelineSource:
    """The file a timeline verdict is of: its path, kind (its reader's, ncuwrap.timeline.readers) and
    what wrote it."""

    path: str
    kind: str  # nsys-sqlite | nsys-rep | kineto
    nsys_version: str | None
    export_schema: str | None  # nsys's export schema; a PyTorch profiler trace's schemaVersion
    device: str | None
    producer: str | None = None  # the program that wrote the file, as the reports name it ("nsys 2025.3.2.0")

    @property
    def recorded_by(self) -> str:
        """What recorded the times: 'the Nsight Systems trace' or 'the PyTorch profiler trace'."""
        return "the Nsight Systems trace" if self.kind in NSYS_KINDS else "the PyTorch profiler trace"

    def to_json(self) -> dict:
        out = {"path": self.path, "kind": self.kind, "nsys_version": self.nsys_version, "export_schema": self.export_schema,
               "device": self.device}
        if self.kind not in NSYS_KINDS:
            out["producer"] = self.producer  # added for other producers; an nsys document stays as it was
        return out


@dataclass(frozen=True)
class TimelineDiagnosis(Decided, Displayed):
    """The verdict on one timeline capture: the timeline model and the rules' decision on it; made by
    :func:`ncuwrap.timeline.diagnosis.decide`, drawn by the renderers."""
    source: TimelineSource
    rules_path: str
    rules_version: int
    rules_name: str
    timeline: Timeline
    decision: Decision  # the rules' answer: bound, limiter, why, findings, not evaluated, path (Decided)
    notes: tuple[str, ...] = field(default=())

    @property
    def window_ns(self) -> int:
        return self.timeline.window_ns

    def __repr__(self) -> str:
        bound = f"{self.bound} ({self.limiter})" if self.limiter else self.bound
        steps = self.timeline.steps
        scope = "whole window" if steps is None else plural(len(steps.records), "step")
        findings = ", ".join(f.id for f in self.findings) or "no finding"
        return f"<TimelineDiagnosis {short_path(self.source.path)}: {bound}; {scope}; {findings}>"

    def to_frame(self):
        """One row per step (pandas), warm-up included and flagged; no rows for a capture without steps
        (its kernels: :meth:`kernels_frame`)."""
        import pandas as pd

        columns = ["step", "start_ns", "end_ns", "begin_ns", "paced_by", "period_ns", "host_period_ns", "gpu_work_ns", "gpu_busy_ns",
                   "gpu_busy_pct", "kernels", "launches", "launch_api_ns", "sync_api_ns", "api_ns", "host_code_pct", "warmup"]
        steps = self.timeline.steps
        if steps is None:
            return pd.DataFrame([], columns=columns)
        origin = steps.capture_start_ns
        return pd.DataFrame([[r.index, r.start_ns - origin, r.end_ns - origin, r.begin_ns - origin, r.paced_by, r.period_ns, r.host_period_ns,
                              r.gpu_work_ns, r.gpu_busy_ns, r.gpu_busy_pct, r.kernels, r.launches, r.launch_api_ns, r.sync_api_ns, r.api_ns,
                              r.host_code_pct, r.warmup] for r in steps.records], columns=columns)

    def kernels_frame(self):
        """One row per kernel (pandas) over the window judged: launches, total, median, share of the kernels' time."""
        import pandas as pd

        return pd.DataFrame([{"kernel": k.demangled, "name": k.name, "launches": k.count, "total_ns": k.total_ns, "median_ns": k.median_ns,
                              "min_ns": k.min_ns, "max_ns": k.max_ns, "share_pct": k.share_pct, "grid": k.grid, "block": k.block}
                             for k in self.timeline.kernels],
                            columns=["kernel", "name", "launches", "total_ns", "median_ns", "min_ns", "max_ns", "share_pct", "grid", "block"])

    def to_json(self) -> dict:
        t = self.timeline
        out = {
            "schema": SCHEMA,
            "tool": {"name": "ncuwrap", "version": __version__},
            "source": self.source.to_json(),
            "rules": {"path": self.rules_path, "version": self.rules_version, "name": self.rules_name},
            "window_ns": t.window_ns,
            "window": {"start_ns": t.window_start_ns, "end_ns": t.window_end_ns, "devices": t.devices,
                       "scope": "steady steps" if t.steps is not None else "first to last GPU work" if t.scope == "active" else "capture"},
            "steps": t.steps.to_json() if t.steps is not None else None,
            "tracer": t.tracer.to_json() if t.tracer is not None else None,
            "what_if": t.what_if(),
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
            "host_time": [h.to_json() for h in t.host_time] if t.host_time is not None else None,
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
        if t.op_limits is not None:  # only where the capture recorded the ops' shapes
            out["op_limits"] = t.op_limits.to_json()
        return out
