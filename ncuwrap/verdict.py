"""Typed results of a diagnosis and their JSON form (schema ``ncuwrap.diagnosis/v1``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ncuwrap import __version__

SCHEMA = "ncuwrap.diagnosis/v1"


def clean(value):
    """A JSON-friendly number: None for NaN/inf, int for whole numbers, 4 decimals otherwise."""
    if value is None:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
        return round(value, 4)
    return value
SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2, "info": 3}


@dataclass(frozen=True)
class FindingResult:
    id: str
    severity: str
    title: str
    evidence: dict
    advice: str

    def to_json(self) -> dict:
        return {"id": self.id, "severity": self.severity, "title": self.title, "evidence": self.evidence, "advice": self.advice}


@dataclass(frozen=True)
class NotEvaluated:
    rule: str
    missing: tuple[str, ...]
    message: str

    def to_json(self) -> dict:
        return {"rule": self.rule, "missing": list(self.missing), "message": self.message}


@dataclass(frozen=True)
class Step:
    """One branch of the ``bound`` decision as it was tried: the path a reader can follow."""

    verdict: str
    when: str
    holds: bool
    values: dict
    constants: dict = field(default_factory=dict)  # the rules' thresholds the condition compares with

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "when": self.when, "holds": self.holds, "values": self.values, "constants": self.constants}


@dataclass(frozen=True)
class KernelVerdict:
    id: int
    name: str
    display_name: str
    grid: list[int] | None
    block: list[int] | None
    duration_ns: float | None
    bound: str
    limiter: str | None
    why: str
    findings: tuple[FindingResult, ...]
    not_evaluated: tuple[NotEvaluated, ...]
    metrics: dict
    path: tuple[Step, ...] = ()
    # What the charts draw (Speed of Light, roofline, occupancy); see engine.CHART_METRICS.
    chart: dict = field(default_factory=dict)
    # Every metric a finding's evidence or a comparison reads, known or not (None): lets 'compare'
    # show how a resolved finding's evidence moved. Not part of the JSON document.
    values: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def headline(self) -> FindingResult | None:
        return self.findings[0] if self.findings else None

    @property
    def at_roofline(self) -> bool:
        return any(f.id == "at_roofline" for f in self.findings)

    def finding_ids(self) -> list[str]:
        return [f.id for f in self.findings]

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "display_name": self.display_name,
            "launch": {"grid": self.grid, "block": self.block},
            "duration_ns": self.duration_ns,
            "bound": self.bound,
            "limiter": self.limiter,
            "why": self.why,
            "findings": [f.to_json() for f in self.findings],
            "not_evaluated": [n.to_json() for n in self.not_evaluated],
            "decision_path": [s.to_json() for s in self.path],
            "metrics": self.metrics,
            "chart": self.chart,
        }


@dataclass(frozen=True)
class SourceInfo:
    path: str
    kind: str
    ncu_version: str | None
    device: str | None
    compute_capability: str | None
    command_line: str | None = None
    sha256: str | None = None

    def to_json(self) -> dict:
        return {"path": self.path, "kind": self.kind, "ncu_version": self.ncu_version, "device": self.device,
                "compute_capability": self.compute_capability}


@dataclass(frozen=True)
class Diagnosis:
    source: SourceInfo
    rules_path: str
    rules_version: int
    rules_name: str
    kernels: tuple[KernelVerdict, ...]
    environment: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA,
            "tool": {"name": "ncuwrap", "version": __version__},
            "source": self.source.to_json(),
            "rules": {"path": self.rules_path, "version": self.rules_version, "name": self.rules_name},
            "kernels": [k.to_json() for k in self.kernels],
        }

    def by_time(self) -> list[KernelVerdict]:
        return sorted(self.kernels, key=lambda k: -(k.duration_ns or 0.0))
