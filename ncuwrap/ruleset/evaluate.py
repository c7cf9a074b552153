"""The decision tree applied to a table of measurements: the one evaluator of kernel and timeline rules.

A rule set is a ``bound`` decision (the first branch whose condition holds gives the verdict) and
findings listed under verdicts (``unless`` silences one when another, more serious, fired). The
evaluator reads measurements through a :class:`MetricSource`: one row per kernel launch for a report,
one row for a timeline capture. Conditions are evaluated once per rule over all rows (numpy arrays),
then read back per row. A rule that reads a measurement the source does not have is reported as not
evaluated, with the source's hint on how to get it; it never passes silently.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ncuwrap.ruleset import texts as rule_texts
from ncuwrap import ruleset
from ncuwrap.core.numbers import clean
from ncuwrap.ruleset.outcome import SEVERITY_ORDER, FindingResult, NextStep, NotEvaluated, Step, Undecided

class EstimateModel(Protocol):
    """What fixing a finding buys, as the evaluation asks it (kernel rules: the module ncuwrap.kernel.estimate).
    The rules engine computes no estimate itself: a rule set with estimated findings is evaluated with
    the model of its domain, which scales the time of a row (the catalogue's time_metric). What it gives
    back (an effect, an estimate, a kernel's effects, column lists) are the model's own types: the engine
    only hands them from one call to the next, so it names none of them."""

    def effect(self, n: int, removes: dict, fills) -> object: ...

    def no_effect(self, n: int) -> object: ...

    def Effect(self, keep: dict, fill) -> object: ...  # noqa: N802  (the model's effect type)

    def estimate(self, util: dict, effect, duration, *, roof: float, floor_ns: float, busy: float, reach: dict) -> object: ...

    def KernelEffects(self, **fields) -> object: ...  # noqa: N802  (what compare re-estimates from)

    def ColumnLists(self) -> object: ...  # noqa: N802  (the arrays as lists, converted once for all launches)


class MetricSource(Protocol):
    """Measurements of ``n`` rows (launches, or one capture), by the names rules read."""

    n: int

    def lookup(self, name: str) -> np.ndarray:
        """The values of ``name`` for every row (NaN where a launch lacks it)."""

    def missing(self, names) -> list[str]:
        """Those of ``names`` the source does not have (not collected, not traced)."""

    def known(self, name: str) -> bool:
        """Whether ``name`` is a measurement (as opposed to a literal in a rules file)."""

    def value(self, name: str, row: int):
        """One row's value, JSON-ready (None when unknown)."""

    def column(self, name: str) -> list:
        """Every row's value, JSON-ready (what :meth:`value` gives, for all rows at once)."""

    def hint(self, missing: list[str]) -> str:
        """Why ``missing`` are unknown and how to get them: one clause."""


@dataclass(frozen=True, slots=True)
class Decision:
    """The rules' answer for one row."""

    bound: str
    limiter: object
    why: str
    path: tuple[Step, ...]
    findings: tuple[FindingResult, ...]
    not_evaluated: tuple[NotEvaluated, ...]
    borderline: bool
    # What fixing every estimated finding together would save (%); None when unknown or not estimated.
    estimated_gain_pct: float | None
    # The rules' next step, where no finding costs time.
    next_step: NextStep | None = None


class Decided:
    """A result the rules judge as a whole (a timeline, a set of ranks): its answer is one Decision,
    kept whole (``decision``) rather than copied field by field; these read it."""

    decision: Decision

    @property
    def bound(self) -> str:
        return self.decision.bound

    @property
    def limiter(self):
        return self.decision.limiter

    @property
    def why(self) -> str:
        return self.decision.why

    @property
    def findings(self) -> tuple[FindingResult, ...]:
        return self.decision.findings

    @property
    def not_evaluated(self) -> tuple[NotEvaluated, ...]:
        return self.decision.not_evaluated

    @property
    def path(self) -> tuple[Step, ...]:
        return self.decision.path


# Severities of findings that cost time: one of them is the next step (its advice), not the rules' 'next'.
COSTLY = ("high", "medium", "low")


def finding_result(finding: ruleset.Finding, level: str, values: dict, estimated_speedup: float | None = None,
                   limited_after: str | None = None) -> FindingResult:
    """The finding as reported, its texts filled from ``values`` (see Finding.value_names)."""
    advice = rule_texts.chosen_advice(finding.advice, finding.advice_by, values)
    return FindingResult(
        id=finding.id,
        severity=level,
        title=rule_texts.render_text(_squeezed(finding.title), values),
        evidence={name: values.get(name) for name in finding.evidence},
        advice=rule_texts.render_text(_squeezed(advice), values),
        estimated_speedup=estimated_speedup,
        limited_after=limited_after,
        role=finding.role,
    )


class Evaluation:
    """Every rule of ``rules`` evaluated over every row of ``source``; :meth:`decide` reads one row."""

    def __init__(self, source: MetricSource, rules: ruleset.RuleSet, model: EstimateModel | None = None):
        """``model``: what fixing a finding buys, needed when ``rules`` has estimated findings."""
        self.source, self.rules, self.n, self.model = source, rules, source.n, model
        self.branch_holds = [self.condition(b.when) for b in rules.bound]
        self.bound_missing = source.missing(n for b in rules.bound for n in b.when.names)
        self.borderline = self.condition(rules.borderline) if rules.borderline is not None else np.zeros(self.n, dtype=bool)
        self.fired: dict[str, np.ndarray] = {}
        self.finding_missing: dict[str, list[str]] = {}
        self.estimate_missing: dict[str, list[str]] = {}
        self.level: dict[str, np.ndarray] = {}
        self.gain: dict[str, np.ndarray] = {}
        self.limited: dict[str, np.ndarray] = {}
        self.effect: dict[str, object] = {}  # the model's effects
        self.util: dict[str, np.ndarray] = {}
        self.reach: dict[str, np.ndarray] = {}
        self.combined = None  # the model's estimate of all findings fixed
        # The launches' effects documents read the arrays above through it (the model's column cache).
        self._lists = model.ColumnLists() if model is not None else None
        self._estimate_settings = (rules.setting("roof"), rules.setting("launch_floor_ns"), rules.setting("busy"))
        self._findings()
        self.next_missing = {step.id: source.missing(step.when.names) for step in rules.next}
        self.next_holds = {step.id: self.condition(step.when) if not self.next_missing[step.id] else np.zeros(self.n, dtype=bool)
                           for step in rules.next}
        self._undecided: dict[str, Undecided] = {}
        self._steps_for: dict[str, tuple] = {}  # bound -> its next steps, and each row's first that holds

    def condition(self, expression) -> np.ndarray:
        result = np.asarray(expression.evaluate(self.source.lookup, self.rules.constants))
        if result.dtype.kind == "f":
            result = np.nan_to_num(result, nan=0.0) != 0
        return np.broadcast_to(result.astype(bool), (self.n,))

    def number(self, expression) -> np.ndarray:
        """An expression's numeric value for every row (estimates' shares)."""
        value = expression.evaluate(self.source.lookup, self.rules.constants)
        return np.broadcast_to(np.asarray(value, dtype=float), (self.n,))

    def values(self, names, row: int) -> dict:
        return {name: self.source.value(name, row) for name in names}

    def records(self, names, rows, *, known_only: bool = False) -> list[dict]:
        """:meth:`values` of ``rows``: one dict per row, built from whole columns (``known_only``:
        without the names whose value is None)."""
        rows = list(rows)
        by_name = self.columns(names, rows)
        if not by_name:
            return [{} for _ in rows]
        names, columns = list(by_name), list(by_name.values())
        if known_only:
            return [{name: value for name, value in zip(names, values) if value is not None} for values in zip(*columns)]
        return [dict(zip(names, values)) for values in zip(*columns)]

    def columns(self, names, rows: list[int]) -> dict[str, list]:
        """Each of ``names`` (once) -> its values in ``rows``, as :meth:`values` gives them."""
        columns = {name: self.source.column(name) for name in dict.fromkeys(names)}
        if not (len(rows) == self.n and rows == list(range(self.n))):
            columns = {name: [c[r] for r in rows] for name, c in columns.items()}
        return columns

    def _findings(self) -> None:
        rules, n = self.rules, self.n
        estimated = any(f.estimated for f in rules.findings)
        if estimated:
            self.util = {u: np.asarray(self.source.lookup(m), dtype=float) for u, m in rules.units.items()}
            time_metric = rules.catalogue.time_metric if rules.catalogue else None
            if self.model is None or time_metric is None:
                raise ValueError(f"{rules.path}: estimated findings need an estimate model and the rows' time (its catalogue's time_metric)")
            duration = np.asarray(self.source.lookup(time_metric), dtype=float)
            # Unknown where its metrics were not collected: the unit's roof then.
            self.reach = {u: self.number(e) if not self.source.missing(e.names) else np.full(n, np.nan) for u, e in rules.reach.items()}
        roof, floor, busy = rules.setting("roof"), rules.setting("launch_floor_ns"), rules.setting("busy")
        high, minor, saving = rules.setting("gain_high"), rules.setting("gain_minor"), rules.setting("saving_minor_ns")
        serious: dict[str, np.ndarray] = {}  # fired and not minor: what 'unless' looks at
        for finding in rules.findings:
            missing = self.source.missing(finding.when.names)
            # A finding silenced by others ('unless') is unknown while any of those is unknown:
            # an unmeasured waste is not an absent one.
            for other in finding.unless:
                missing += [m for m in self.finding_missing.get(other, []) if m not in missing]
            self.finding_missing[finding.id] = missing
            holds = self.condition(finding.when) if not missing else np.zeros(n, dtype=bool)
            for other in finding.unless:
                holds = holds & ~serious.get(other, np.zeros(n, dtype=bool))
            level = self._spec_levels(finding)
            if finding.estimated:
                names = [x for expr in [*finding.removes.values(), *([finding.fills] if finding.fills else [])] for x in expr.names]
                self.estimate_missing[finding.id] = self.source.missing(names)
                removes = {u: self.number(expr) for u, expr in finding.removes.items()}
                fx = self.model.effect(n, removes, self.number(finding.fills) if finding.fills is not None else None)
                est = self.model.estimate(self.util, fx, duration, roof=roof, floor_ns=floor, busy=busy, reach=self.reach)
                gain = est.gain_pct
                # Minor: under gain_minor % of the kernel's time, or under saving_minor_ns per launch.
                small = (gain < minor) | (np.nan_to_num(duration, nan=np.inf) * gain / 100.0 < saving)
                level = np.where(np.isnan(gain), level, np.where(small, "minor", np.where(gain >= high, "high", "medium"))).astype(object)
                self.effect[finding.id], self.gain[finding.id], self.limited[finding.id] = fx, gain, est.limited_by
            self.fired[finding.id] = holds
            self.level[finding.id] = level
            serious[finding.id] = holds & (level != "minor")
        if estimated:
            # What fixing all of a row's estimated findings together would buy.
            together = self.model.no_effect(n)
            for fid, fx in self.effect.items():
                mask = self.fired[fid]
                together = together.combine(self.model.Effect(keep={u: np.where(mask, k, 1.0) for u, k in fx.keep.items()},
                                                     fill=np.where(mask, fx.fill, 1.0)))
            self.combined = self.model.estimate(self.util, together, duration, roof=roof, floor_ns=floor, busy=busy, reach=self.reach)

    def _spec_levels(self, finding) -> np.ndarray:
        """The level the rules file gives (first 'severity' entry whose condition holds, else the last)."""
        level = np.full(self.n, finding.severity[-1].level, dtype=object)
        for entry in reversed(finding.severity):
            holds = self.condition(entry.when) if entry.when is not None else np.ones(self.n, dtype=bool)
            level = np.where(holds, entry.level, level).astype(object)
        return level

    def decide(self, row: int) -> Decision:
        return self.decide_rows([row])[0]

    def decide_rows(self, rows) -> list[Decision]:
        """The decision for each of ``rows``."""
        return list(self.decide_columns(rows))

    def decide_columns(self, rows) -> "Decisions":
        """The decisions of ``rows``, kept as columns (:class:`Decisions`). What is the same for every row with
        the same bound (the rules not evaluated, which findings can fire) is worked out once per bound; values
        are read by whole columns, and a row's decision path is made only where it is read."""
        rules = self.rules
        rows = [int(r) for r in rows]
        branches = len(rules.bound)
        if branches:
            holds = np.vstack(self.branch_holds)[:, rows]
            chosen = np.where(holds.any(axis=0), holds.argmax(axis=0), branches).tolist()
        else:
            chosen = [0] * len(rows)
        borderline = self.borderline[rows].tolist()
        limiter = [None] * len(rows)
        why = [""] * len(rows)
        for j, branch in enumerate(rules.bound):
            mine = [i for i, c in enumerate(chosen) if c == j]
            at = [rows[i] for i in mine]
            for i, text, unit in zip(mine, self._whys(branch, at, [borderline[i] for i in mine]), self._limiters(branch, at)):
                why[i], limiter[i] = text, unit
        plans: dict[str, _BoundPlan] = {}
        bounds, findings, not_evaluated, gains, next_steps = [], [], [], [], []
        for i, row in enumerate(rows):
            bound = rules.bound[chosen[i]].verdict if chosen[i] < branches else "unknown"
            plan = plans.get(bound) or plans.setdefault(bound, self._plan(bound))
            if plan.may_fire is not None and plan.may_fire[row]:
                fired, lacking = self._fired(plan, bound, row)
                gain = self._combined(fired, bound, row)
            else:
                fired, lacking = (), plan.not_evaluated
                # Nothing fired: nothing to win, unless an estimated finding could not be evaluated.
                gain = None if self.combined is None or bound == "unknown" or plan.blind else 0
            bounds.append(bound)
            findings.append(fired)
            not_evaluated.append(lacking)
            gains.append(gain)
            next_steps.append(self._next(bound, row, fired, lacking, plan))
        return Decisions(rules=rules, chosen=chosen, tried=[self.columns(b.when.names, rows) for b in rules.bound],
                         constants=[constants_in(rules, b.when.text) for b in rules.bound], bound=bounds, limiter=limiter, why=why,
                         borderline=[b and bound != "unknown" for b, bound in zip(borderline, bounds)], findings=findings,
                         not_evaluated=not_evaluated, estimated_gain_pct=gains, next_step=next_steps)

    def _next(self, bound: str, row: int, findings, not_evaluated, plan: "_BoundPlan") -> NextStep | None:
        """The first of the rules' next steps for ``bound`` that holds for ``row``, with those before it
        that could not be decided; None where a finding costs time (its advice comes first) or could
        not be evaluated (collecting its metrics comes first: the waste may be there)."""
        if bound == "unknown" or any(f.severity in COSTLY for f in findings):
            return None
        # A row where nothing fired has its bound's rules not evaluated: looked at once for all such rows.
        if (plan.finding_unknown if not_evaluated is plan.not_evaluated else any(n.of_finding for n in not_evaluated)):
            return None
        steps, first = self._steps_of(bound)
        chosen = int(first[row])
        undecided = tuple(self._undecided_step(step) for step in steps[:chosen if chosen >= 0 else len(steps)] if self.next_missing[step.id])
        if chosen < 0:
            return NextStep(None, None, None, undecided) if undecided else None
        step = steps[chosen]
        values = self.values(step.value_names(), row)
        values["bound"] = bound
        advice = rule_texts.chosen_advice(step.advice, step.advice_by, values)
        return NextStep(step.id, rule_texts.render_text(_squeezed(step.title), values), rule_texts.render_text(_squeezed(advice), values), undecided)

    def _steps_of(self, bound: str):
        """The next steps listed under ``bound``, and for every row the index of the first that holds
        (-1: none), worked out once for all rows."""
        if bound not in self._steps_for:
            steps = [step for step in self.rules.next if bound in step.under]
            holds = np.vstack([self.next_holds[step.id] for step in steps]) if steps else np.zeros((1, self.n), dtype=bool)
            first = np.where(holds.any(axis=0), holds.argmax(axis=0), -1)
            self._steps_for[bound] = (steps, first)
        return self._steps_for[bound]

    def _undecided_step(self, step) -> Undecided:
        # One object per step, shared by every launch it applies to. Its title is shown as written
        # (placeholders unfilled would read "n/a": the values are what is missing).
        if step.id not in self._undecided:
            missing = self.next_missing[step.id]
            title = rule_texts.render_text(_squeezed(step.title), {}) if not rule_texts.placeholders(step.title) else step.id.replace("_", " ")
            self._undecided[step.id] = Undecided(step.id, title, tuple(missing), self.source.hint(missing))
        return self._undecided[step.id]

    def _limiters(self, branch, rows: list[int]) -> list:
        """A branch's limiter for each of ``rows``: a measurement's value, or the name the rules give."""
        if self.source.known(branch.limiter):
            column = self.source.column(branch.limiter)
            return [column[r] for r in rows]
        return [branch.limiter or None] * len(rows)

    def _whys(self, branch, rows: list[int], borderline: list[bool]) -> list[str]:
        """The branch's explanation for each of ``rows`` (all of which took it): its text, each
        cause sentence whose values are all known, and the borderline note where it applies."""
        rules = self.rules
        out = rule_texts.render_rows(_squeezed(branch.why), self.columns(rule_texts.placeholders(branch.why), rows), len(rows))
        for sentence in branch.cause:
            columns = self.columns(rule_texts.placeholders(sentence), rows)
            known = [i for i, values in enumerate(zip(*columns.values())) if all(v is not None for v in values)] if columns else range(len(rows))
            said = rule_texts.render_rows(sentence, {name: [column[i] for i in known] for name, column in columns.items()}, len(known))
            for i, text in zip(known, said):
                out[i] += " " + text
        if rules.borderline_note:
            close = [i for i, b in enumerate(borderline) if b]
            note = rules.borderline_note
            for i, values in zip(close, self.records(rule_texts.placeholders(note), [rows[i] for i in close])):
                out[i] += " " + rule_texts.render_text(note, values)
        return out

    def _plan(self, bound: str) -> "_BoundPlan":
        """For rows with ``bound``: the findings that apply, the rules not evaluated (the same for
        each such row, until a finding fires), and which rows have a finding that fired."""
        rules, source = self.rules, self.source
        not_evaluated = []
        if self.bound_missing:
            status = "partially evaluated" if bound != "unknown" else "not evaluated"
            not_evaluated.append(NotEvaluated("bound", tuple(self.bound_missing), f"{status}: {source.hint(self.bound_missing)}"))
        applies = [f for f in rules.findings if bound in f.under or bound == "unknown"]
        hints = {}
        for finding in applies:
            missing = self.finding_missing[finding.id]
            if missing:
                hints[finding.id] = NotEvaluated(finding.id, tuple(missing), f"not evaluated: {source.hint(missing)}")
                not_evaluated.append(hints[finding.id])
        may_fire = None
        if bound != "unknown":
            for finding in applies:
                if finding.id not in hints:
                    fired = self.fired[finding.id]
                    may_fire = fired if may_fire is None else (may_fire | fired)
        return _BoundPlan(applies=applies, hints=hints, not_evaluated=tuple(not_evaluated),
                          may_fire=may_fire.tolist() if may_fire is not None else None,
                          blind=any(f.estimated and f.id in hints for f in applies), finding_unknown=any(n.of_finding for n in not_evaluated))

    def _fired(self, plan: "_BoundPlan", bound: str, row: int) -> tuple[tuple[FindingResult, ...], tuple[NotEvaluated, ...]]:
        """The findings of a row where one fired, and the rules not evaluated, in the rules' order."""
        source = self.source
        not_evaluated = list(plan.not_evaluated[:1]) if self.bound_missing else []
        findings = []
        for finding in plan.applies:
            if finding.id in plan.hints:
                not_evaluated.append(plan.hints[finding.id])
                continue
            if not self.fired[finding.id][row]:
                continue
            values = self.values(finding.value_names(), row)
            values["bound"] = bound
            gain = self.gain.get(finding.id)
            estimate = _number(gain[row]) if gain is not None else None
            limited = self.limited[finding.id][row] if finding.id in self.limited else None
            if finding.estimated and estimate is None and self.estimate_missing.get(finding.id):
                missing_est = self.estimate_missing[finding.id]
                not_evaluated.append(NotEvaluated(f"{finding.id} (estimate)", tuple(missing_est), f"gain not estimated: {source.hint(missing_est)}"))
            findings.append(finding_result(finding, str(self.level[finding.id][row]), values, estimated_speedup=estimate, limited_after=limited))
        # Worst first; within a level, what fixing it buys; file order otherwise.
        findings.sort(key=lambda f: (SEVERITY_ORDER.get(f.severity, 9), -(f.estimated_speedup or 0.0)))
        return tuple(findings), tuple(not_evaluated)

    def _combined(self, findings, bound: str, row: int) -> float | None:
        """Every estimated finding of the row fixed together; unknown while one of them is."""
        if self.combined is None:
            return None
        estimated = [f for f in findings if f.id in self.effect]
        if any(f.estimated_speedup is None for f in estimated) or bound == "unknown":
            return None
        return _number(self.combined.gain_pct[row]) if estimated else 0

    def effects(self, findings, row: int, duration) -> object:
        """What compare needs to estimate a subset of this row's findings fixed together (the model's KernelEffects)."""
        per = {f.id: self.effect[f.id] for f in findings if f.id in self.effect}
        roof, floor, busy = self._estimate_settings
        return self.model.KernelEffects(util=self.util, duration_ns=duration, findings=per, roof=roof, floor_ns=floor, busy=busy, row=row,
                                        reach=self.reach, lists=self._lists)


class Decisions:
    """The rules' answers for many rows (Evaluation.decide_columns), kept as columns: one list per field of
    :class:`Decision`, by row. A row's decision path (its Steps, each with the values its condition read) and its
    Decision are made when read: a report of 10,000 launches is documented from the columns."""

    def __init__(self, *, rules, chosen: list[int], tried: list[dict], constants: list[dict], bound: list[str], limiter: list, why: list[str],
                 borderline: list[bool], findings: list[tuple], not_evaluated: list[tuple], estimated_gain_pct: list, next_step: list):
        # chosen: each row's branch of the bound decision (len(rules.bound): none held); tried: each branch's
        # condition's values, by name, of every row; constants: the thresholds each branch's condition names.
        self.rules, self.chosen, self.tried, self.constants = rules, chosen, tried, constants
        self.bound, self.limiter, self.why, self.borderline = bound, limiter, why, borderline
        self.findings, self.not_evaluated, self.estimated_gain_pct, self.next_step = findings, not_evaluated, estimated_gain_pct, next_step

    def __len__(self) -> int:
        return len(self.chosen)

    def __getitem__(self, i: int) -> Decision:
        return Decision(bound=self.bound[i], limiter=self.limiter[i], why=self.why[i], path=self.path(i), findings=self.findings[i],
                        not_evaluated=self.not_evaluated[i], borderline=self.borderline[i], estimated_gain_pct=self.estimated_gain_pct[i],
                        next_step=self.next_step[i])

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def path(self, i: int) -> tuple[Step, ...]:
        """Row ``i``'s decision path: each branch tried, up to the one taken (every one where none held)."""
        chosen = self.chosen[i]
        return tuple(Step(branch.verdict, branch.when.text, chosen == j, {name: column[i] for name, column in self.tried[j].items()},
                          dict(self.constants[j]))
                     for j, branch in enumerate(self.rules.bound) if chosen >= j)

    def verdicts_tried(self, i: int) -> tuple[str, ...]:
        """The verdicts of row ``i``'s decision path (its steps' ``verdict``), without making the steps."""
        return tuple(branch.verdict for branch in self.rules.bound[:self.chosen[i] + 1])


@dataclass(frozen=True)
class _BoundPlan:
    """What every row with one bound shares (Evaluation._plan)."""

    applies: list  # the findings listed under the bound, in the rules' order
    hints: dict  # finding id -> NotEvaluated, for those whose metrics are missing
    not_evaluated: tuple  # the bound's own (when partly missing) and those, in order
    may_fire: list | None  # by row: whether some evaluated finding fired (None: none can)
    blind: bool = False  # an estimated finding could not be evaluated: a row where none fired has no known gain
    finding_unknown: bool = False  # a finding among the rules not evaluated: no next step where none fired


def _number(value):
    return None if value is None or (isinstance(value, float) and value != value) else clean(float(value))


@functools.lru_cache(maxsize=1024)
def _squeezed(text: str) -> str:
    """``text`` on one line, runs of white space as one space (a rules file's folded texts)."""
    return " ".join(text.split())


def constants_in(rules: ruleset.RuleSet, text: str) -> dict:
    """The rules' constants a condition names (its thresholds), for the decision path."""
    return dict(_constants_named(tuple(rules.constants.items()), text))


@functools.lru_cache(maxsize=256)
def _constants_named(constants: tuple, text: str) -> tuple:
    # Cached: the same few conditions are shown for every row of a large report.
    return tuple((name, value) for name, value in constants if re.search(rf"\b{re.escape(name)}\b", text))
