"""What applying a rule set gives, in any domain (kernel launches, a timeline, ranks): the findings that
held, the rules that could not be evaluated, the ``bound`` decision's path, the next step. Made by
:mod:`ncuwrap.ruleset.evaluate`; the kernel's and the timeline's results hold them."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
# Minor findings come last: listed, never the headline.
SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2, "info": 3, "minor": 4}


@dataclass(frozen=True, slots=True)
class FindingResult:
    """A finding that held on a launch: its severity, title, evidence, advice and estimated gain; made by the evaluation, shown by the renderers."""
    id: str
    severity: str
    title: str
    evidence: dict
    advice: str
    # The share of the kernel's time fixing it would save (%), ncuwrap.kernel.estimate; None when the
    # finding has no estimate or its inputs are unknown for this launch.
    estimated_speedup: float | None = None
    # What would limit the kernel once it is fixed: a unit, "parallelism" or "launch floor".
    limited_after: str | None = None
    # The source lines (or instructions) holding the waste, or why they are not known (a kernel's
    # ncuwrap.kernel.attribution.Where or Unattributed: the engine only carries it); None where the rule
    # names no per-instruction waste or the report has no per-instruction counters at all.
    where: object | None = None
    role: str | None = None  # the rules' role of the finding (ruleset.ROLES: "stop", "straggler"); not in the JSON

    @property
    def minor(self) -> bool:
        return self.severity == "minor"

    def to_json(self, estimates: bool = True) -> dict:
        """``estimates``: kernel findings carry the estimate (null when there is none) and where the
        waste is; timeline findings (ncuwrap.timeline/v1) have no such keys."""
        out = {"id": self.id, "severity": self.severity, "title": self.title}
        if estimates:
            out.update(estimated_speedup=self.estimated_speedup, limited_after=self.limited_after,
                       where=self.where.to_json() if self.where is not None else None)
        out.update(evidence=self.evidence, advice=self.advice)
        return out


@dataclass(frozen=True)
class NotEvaluated:
    """A rule that could not be evaluated on a launch, the metrics it lacked and why, in words."""
    rule: str  # a finding's id, "bound", or "<finding id> (estimate)"
    missing: tuple[str, ...]
    message: str

    @property
    def of_finding(self) -> bool:
        """Whether a finding could not be evaluated (not the bound's inputs, not only an estimate)."""
        return self.rule != "bound" and not self.rule.endswith(" (estimate)")

    def to_json(self) -> dict:
        # One object is shared by every launch it applies to: its document is built once (read-only).
        return self._json

    @functools.cached_property
    def _json(self) -> dict:
        return {"rule": self.rule, "missing": list(self.missing), "message": self.message}


@dataclass(frozen=True)
class Undecided:
    """A next step the rules could not decide on for lack of metrics: what it would have said, what
    it reads, and how to collect that."""

    id: str
    title: str
    missing: tuple[str, ...]
    how: str

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "missing": list(self.missing), "how": self.how}


@dataclass(frozen=True, slots=True)
class NextStep:
    """The next step decided for a kernel no costly finding explains (from the rules' declared
    :class:`~ncuwrap.ruleset.model.NextStepRule`, its texts filled in): the lever for what limits it.
    ``id`` is None when no step could be decided; ``undecided`` lists the steps tried before it whose
    metrics were not collected."""

    id: str | None
    title: str | None
    advice: str | None
    undecided: tuple[Undecided, ...] = ()

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "advice": self.advice, "undecided": [u.to_json() for u in self.undecided]}


@dataclass(frozen=True, slots=True)
class Step:
    """One branch of the ``bound`` decision as it was tried: the path a reader can follow."""

    verdict: str
    when: str
    holds: bool
    values: dict
    constants: dict = field(default_factory=dict)  # the rules' thresholds the condition compares with

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "when": self.when, "holds": self.holds, "values": self.values, "constants": self.constants}
