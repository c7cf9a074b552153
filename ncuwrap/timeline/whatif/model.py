"""What fixing it buys, as the replay predicts it: the typed result every format shows."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ncuwrap.core.numbers import clean


@dataclass(frozen=True)
class RemedyPrediction:
    """One remedy replayed: the mean step it predicts and its speedup over the step without the tracer."""

    remedy: str
    step_ns: float
    speedup: float  # the untraced step before over the step after the remedy (no_tracer: the traced over the untraced)
    assumes: str

    def to_json(self) -> dict:
        return {"remedy": self.remedy, "step_ns": clean(self.step_ns), "speedup": clean(self.speedup), "assumes": self.assumes}


@dataclass(frozen=True)
class NotPredicted:
    """A remedy the replay did not predict, and why (nothing in the steps for it to act on, or no op shapes)."""

    remedy: str
    why: str

    def to_json(self) -> dict:
        return {"remedy": self.remedy, "why": self.why}


@dataclass(frozen=True)
class WhatIf:
    """The steady steps replayed on their dependency graph, unmodified and with each remedy."""

    measured_step_ns: float  # the replayed steps' mean step on the capture's clock
    replayed_step_ns: float  # the unmodified graph replayed
    untraced_step_ns: float  # the graph without the tracer's cost, replayed: the step every speedup is taken from
    steps: int  # steady steps replayed
    calls: int  # host calls in the graph (the ones that launch GPU work or wait for it)
    events: int  # GPU events in the graph
    cross_stream: int  # cross-stream edges found
    remedies: tuple[RemedyPrediction, ...]  # no_tracer first, then the others by speedup, largest first
    not_predicted: tuple[NotPredicted, ...]
    critical_path: tuple[tuple[str, float], ...] = ()  # (part, ns a step) of the replayed steps' critical path, adding up to the step
    kernel_verdicts: object = None  # ncuwrap.timeline.kernel_join.KernelJoin: ncu's verdicts joined to the capture's kernels (faster_kernel)
    traced_graphs: object = None  # remedies.no_tracer.TracedGraphs: graph launches whose nodes the tracer recorded one by one

    def path_shares(self) -> list[tuple[str, float, float]]:
        """(part, ns a step, % of the step) of the critical path's parts that take any time."""
        total = sum(ns for _, ns in self.critical_path)
        return [(part, ns, 100.0 * ns / total) for part, ns in self.critical_path if ns > 0 and total > 0]

    @property
    def replay_error_pct(self) -> float:
        if not self.measured_step_ns:
            return math.nan
        return 100.0 * (self.replayed_step_ns / self.measured_step_ns - 1.0)

    def best(self) -> RemedyPrediction | None:
        """The remedy that buys most, the tracer's own cost aside."""
        others = [p for p in self.remedies if p.remedy != "no_tracer"]
        return max(others, key=lambda p: p.speedup) if others else None

    def get(self, remedy: str) -> RemedyPrediction | None:
        return next((p for p in self.remedies if p.remedy == remedy), None)

    def to_json(self) -> dict:
        return {"measured_step_ns": clean(self.measured_step_ns), "replayed_step_ns": clean(self.replayed_step_ns),
                "replay_error_pct": clean(round(self.replay_error_pct, 3)), "untraced_step_ns": clean(self.untraced_step_ns),
                "steps_replayed": self.steps, "graph": {"calls": self.calls, "gpu_events": self.events, "cross_stream_edges": self.cross_stream},
                "critical_path_ns": {part: clean(round(ns, 1)) for part, ns in self.critical_path},
                "remedies": [p.to_json() for p in self.remedies], "not_predicted": [n.to_json() for n in self.not_predicted],
                "kernel_verdicts": None if self.kernel_verdicts is None else self.kernel_verdicts.to_json()}
