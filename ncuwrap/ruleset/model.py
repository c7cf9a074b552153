"""The typed form of a rules file: bound branches, findings with their severities and estimates, next
steps, and the rule set that holds them (what the evaluator reads)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field


from ncuwrap.core.catalogue import Catalogue
from ncuwrap.core.expr import Expression
from ncuwrap.ruleset.texts import placeholders, text_names

SUPPORTED_VERSIONS = (1,)
# Estimate settings a rules file may set among its constants (documented in rules/reference.yaml).
ESTIMATE_DEFAULTS = {"roof": 90.0, "launch_floor_ns": 2000.0, "gain_minor": 5.0, "gain_high": 20.0, "saving_minor_ns": 1000.0, "busy": 60.0}
# Facts of the verdict (not metrics) that texts and advice_by may name.
SEVERITIES = ("high", "medium", "low", "minor", "info")
ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")
# Bounds of a placeholder's format spec ({dram_pct:8.2f}): {x:200000000f} is 800 MB per text.


@dataclass(frozen=True)
class Branch:
    """One step of the ``bound`` decision: the first branch whose condition holds gives the verdict."""

    verdict: str
    when: Expression
    why: str
    limiter: str  # metric holding the limiting unit's name, or a literal unit
    # Sentences naming the cause (stall reasons, the busiest pipe): each shown only when every
    # metric it reads is known for the launch.
    cause: tuple[str, ...] = ()
    # The per-instruction waste (attribution.WASTES) whose lines go with the cause line.
    where: str | None = None


@dataclass(frozen=True)
class SeverityLevel:
    """One level of a finding's severity, with the condition under which it applies (none: always)."""
    level: str
    when: Expression | None


@dataclass(frozen=True)
class Finding:
    """A finding rule as the rules file declares it: when it applies, its title, evidence, advice and estimate; evaluated on each launch or capture."""
    id: str
    under: tuple[str, ...]  # verdicts this cause applies to
    when: Expression
    severity: tuple[SeverityLevel, ...]
    title: str
    evidence: tuple[str, ...]
    advice: str | dict[str, str]
    advice_by: str | None = None
    unless: tuple[str, ...] = ()
    # What fixing it buys (ncuwrap.kernel.estimate): the share of each unit's work the fix removes, and the
    # share of the GPU the launch keeps busy. A finding with either has its severity set by the gain.
    removes: dict[str, Expression] = field(default_factory=dict)
    fills: Expression | None = None
    # The per-instruction waste (attribution.WASTES) that points at the lines causing it.
    where: str | None = None
    # What the finding means to ncuwrap itself (its catalogue's roles: "stop", the kernel is done;
    # "straggler", the slow rank), and the Nsight Compute rules that speak about the same waste: declared in the rules file,
    # so a user's own rules keep these features whatever their ids.
    role: str | None = None
    ncu_rules: tuple[str, ...] = ()

    @property
    def estimated(self) -> bool:
        return bool(self.removes) or self.fills is not None

    def value_names(self) -> list[str]:
        """Every metric its output shows: the evidence, and the placeholders of title and advice."""
        return list(dict.fromkeys([*self.evidence, *text_names(self.title, self.advice, self.advice_by)]))


@dataclass(frozen=True)
class NextStepRule:
    """A next step as the rules file declares it (an entry of ``next``): for a kernel no costly finding
    explains, the first entry whose verdict and condition match is taken (the lever for its limiting unit,
    kernel kind or stall reason). What was decided for a kernel is :class:`ncuwrap.ruleset.outcome.NextStep`."""

    id: str
    under: tuple[str, ...]
    when: Expression
    title: str
    advice: str | dict[str, str]
    advice_by: str | None = None

    def value_names(self) -> list[str]:
        return text_names(self.title, self.advice, self.advice_by)


@dataclass(frozen=True)
class RuleSet:
    """A parsed, checked rules file (kernel, timeline or ranks): its verdict branches, findings and next steps; made by the parser, evaluated by the
    diagnoses."""
    path: str
    version: int
    name: str
    kind: str  # kernel | timeline | ranks
    constants: dict[str, float]
    bound: tuple[Branch, ...]
    findings: tuple[Finding, ...]
    display: tuple[str, ...] = field(default=())  # metrics shown per kernel besides the evidence
    # The units estimates move work between: unit name -> the metric giving its utilization (%).
    units: dict[str, str] = field(default_factory=dict)
    # When the bound decision is too close to call (another run may decide otherwise), and what to say.
    borderline: Expression | None = None
    borderline_note: str = ""
    # The next step for a kernel without a costly finding, tried in order.
    next: tuple[NextStepRule, ...] = ()
    # What a fixed kernel can reach on a unit (% of its peak) where less than `roof`: unit -> expression.
    reach: dict[str, Expression] = field(default_factory=dict)
    # What the rules were checked against: their names, text names, raw inputs and estimates' time.
    catalogue: Catalogue | None = field(default=None, compare=False, repr=False)

    def with_role(self, role: str) -> Finding | None:
        """The finding that holds ``role`` (one of its catalogue's roles), if the rules give it to one."""
        return next((f for f in self.findings if f.role == role), None)

    @functools.cached_property
    def ncu_counterparts(self) -> dict[str, tuple[str, ...]]:
        """Nsight Compute's rule -> the findings that speak about the same waste, in the rules' order."""
        out: dict[str, list[str]] = {}
        for f in self.findings:
            for rule in f.ncu_rules:
                out.setdefault(rule, []).append(f.id)
        return {rule: tuple(ids) for rule, ids in out.items()}

    def setting(self, name: str) -> float:
        """An estimate setting: the rules' constant, else ESTIMATE_DEFAULTS."""
        return float(self.constants.get(name, ESTIMATE_DEFAULTS[name]))

    def metric_names(self) -> list[str]:
        """Every metric name (canonical, derived or raw) the rules read."""
        names: list[str] = []

        def add(items):
            names.extend(n for n in items if n not in names)

        for branch in self.bound:
            add(branch.when.names + branch.when.optional)
            add([n for text in (branch.why, *branch.cause) for n in placeholders(text)])
            if branch.limiter in self._names:  # a limiter is a metric's value or a word of the branch's own
                add([branch.limiter])
        for finding in self.findings:
            add(finding.when.names + finding.when.optional)
            for level in finding.severity:
                if level.when:
                    add(level.when.names + level.when.optional)
            for expr in [*finding.removes.values(), *([finding.fills] if finding.fills else [])]:
                add(expr.names + expr.optional)
            add(finding.value_names())
        if any(f.estimated for f in self.findings):
            add(list(self.units.values()) + ([self.catalogue.time_metric] if self.catalogue and self.catalogue.time_metric else []))
            for expr in self.reach.values():
                add(expr.names + expr.optional)
        if self.borderline is not None:
            add(self.borderline.names + self.borderline.optional)
        add(self.display)
        for step in self.next:
            add(step.when.names + step.when.optional)
            add(step.value_names())
        return names

    def raw_metrics(self) -> list[str]:
        """The raw ncu metrics needed to evaluate every rule (what targeted profiling collects)."""
        out: list[str] = []
        inputs = self.catalogue.inputs if self.catalogue else (lambda name: [name])
        for name in self.metric_names():
            out.extend(m for m in inputs(name) if m not in out)
        return out

    @property
    def _names(self) -> frozenset[str]:
        return self.catalogue.names if self.catalogue else frozenset()
