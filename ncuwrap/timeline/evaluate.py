"""Apply a ``kind: timeline`` rule set to a :class:`~ncuwrap.timeline.model.Timeline`.

The same decision tree as the kernel rules (first ``bound`` branch that holds, then the findings
listed under that verdict, ``unless`` looking at earlier findings), evaluated with
:mod:`ncuwrap.expr` over one "row": the capture. A rule that reads a quantity the capture does not
have (no CUDA API trace...) is reported as not evaluated, with the reason; it never passes silently.
"""

from __future__ import annotations

import re

import numpy as np

from ncuwrap import ruleset as R
from ncuwrap.timeline import metrics as TM
from ncuwrap.timeline.model import Timeline
from ncuwrap.verdict import clean
from ncuwrap.verdict import SEVERITY_ORDER, FindingResult, NotEvaluated, Step


class _Table:
    def __init__(self, timeline: Timeline):
        self.values = timeline.metrics
        self.unknown = timeline.unknown

    def value(self, name: str):
        base = TM.base_of(name)
        value = self.values.get(base)
        if name in TM.VARIANTS and value is not None:
            value = float(value) / TM.VARIANTS[name][1]
        return value

    def lookup(self, name: str) -> np.ndarray:
        value = self.value(name)
        if value is None or isinstance(value, str):
            return np.array([value], dtype=object)
        return np.array([float(value)])

    def missing(self, names) -> list[str]:
        return [n for n in dict.fromkeys(names) if TM.base_of(n) in self.unknown]

    def reason(self, missing: list[str]) -> str:
        by_reason: dict[str, list[str]] = {}
        for name in missing:
            by_reason.setdefault(self.unknown[TM.base_of(name)], []).append(name)
        return "; ".join(f"{', '.join(names)} unknown: {why}" for why, names in by_reason.items())


def _holds(table: _Table, expression, constants) -> bool:
    result = np.asarray(expression.evaluate(table.lookup, constants))
    if result.dtype.kind == "f":
        result = np.nan_to_num(result, nan=0.0) != 0
    return bool(np.asarray(result, dtype=bool).reshape(-1)[0]) if result.size else False


def _constants(rules: R.RuleSet, text: str) -> dict:
    """The rules' constants a condition names (its thresholds), for the decision path."""
    return {name: value for name, value in rules.constants.items() if re.search(rf"\b{re.escape(name)}\b", text)}


def _values(table: _Table, names) -> dict:
    return {name: clean(table.value(name)) for name in names}


def evaluate(timeline: Timeline, rules: R.RuleSet):
    """Return ``(bound, limiter, why, steps, findings, not_evaluated)``."""
    table = _Table(timeline)
    steps: list[Step] = []
    bound, limiter, why = "unknown", None, ""
    not_evaluated: list[NotEvaluated] = []
    bound_missing: list[str] = []
    for branch in rules.bound:
        missing = table.missing(branch.when.names)
        bound_missing += [m for m in missing if m not in bound_missing]
        ok = not missing and _holds(table, branch.when, rules.constants)
        steps.append(Step(branch.verdict, branch.when.text, ok, _values(table, branch.when.names), _constants(rules, branch.when.text)))
        if ok:
            bound = branch.verdict
            limiter = table.value(branch.limiter) if branch.limiter in TM.NAMES else (branch.limiter or None)
            why = R.render_text(" ".join(branch.why.split()), _values(table, R.placeholders(branch.why)))
            break
    if bound_missing:
        status = "partially evaluated" if bound != "unknown" else "not evaluated"
        not_evaluated.append(NotEvaluated("bound", tuple(bound_missing), f"{status}: {table.reason(bound_missing)}"))

    fired: dict[str, bool] = {}
    missing_of: dict[str, list[str]] = {}
    findings: list[FindingResult] = []
    for finding in rules.findings:
        missing = table.missing(finding.when.names)
        for other in finding.unless:  # silenced by an unknown finding: unknown too
            missing += [m for m in missing_of.get(other, []) if m not in missing]
        missing_of[finding.id] = missing
        holds = not missing and _holds(table, finding.when, rules.constants) and not any(fired.get(o) for o in finding.unless)
        fired[finding.id] = holds
        if bound != "unknown" and bound not in finding.under:
            continue
        if missing:
            not_evaluated.append(NotEvaluated(finding.id, tuple(missing), f"not evaluated: {table.reason(missing)}"))
            continue
        if not holds or bound == "unknown":
            continue
        level = next((lv.level for lv in finding.severity if lv.when is None or _holds(table, lv.when, rules.constants)),
                     finding.severity[-1].level)
        findings.append(finding.result(level, _values(table, finding.value_names())))
    findings.sort(key=lambda f: SEVERITY_ORDER.get(f.severity, 9))  # stable: file order within a level
    return bound, (clean(limiter) if limiter is not None else None), why, tuple(steps), tuple(findings), tuple(not_evaluated)
