"""Compare two timelines of the same program (before and after a change): what it did end to end.

Both captures are judged as ``ncuwrap timeline`` judges one: by their steady steps where they have
steps (NVTX ranges), else over the whole capture. With steps on both sides, every quantity is per
step (the breakdown, kernels, copies and launches as the mean over the steady steps; the headline's step
as the steady window over its steps, the mean the program's own clock reads, with the median beside it),
so captures of 20 and of 200 steps compare; without, the totals of the two windows (start-up included:
said in a note). Kernels are matched by name; a kernel whose launch
configuration changed is still the same kernel, flagged. The regression gate is the mean step (or the
window) slower by more than the threshold, or a finding introduced at the gated severity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ncuwrap.core.version import __version__
from ncuwrap.ruleset.gate import (DEFAULT_FAIL_ON_FINDING, DEFAULT_THRESHOLD_PCT, FAIL_ON_FINDING_CHOICES, check_threshold, gates_on,
                                  introduced_gate, measurably_faster)
from ncuwrap.core.display import Displayed, short_path
from ncuwrap.core.errors import InputError
from ncuwrap.core.numbers import clean
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.timeline.verdict import TimelineDiagnosis
from ncuwrap.timeline.model import CATEGORIES, CATEGORY_LABELS, KernelStats
from ncuwrap.timeline.options import TimelineOptions

SCHEMA = "ncuwrap.timeline-compare/v1"
# The kernels every format lists (by how much their time changed); the rest are counted, and all are in the JSON.
KERNELS_SHOWN = 12
# The untraced ratio differing from the traced one by more than this is said in a note.
TRACER_CHANGES_PCT = 10.0
PER_STEP = "per step"
WHOLE_CAPTURE = "whole capture"


def _ratio(before: float | None, after: float | None) -> float | None:
    """before / after: above 1 is faster."""
    if before is None or after is None or not after or math.isnan(before) or math.isnan(after):
        return None
    return before / after


@dataclass(frozen=True)
class Change:
    """One quantity before and after (per step, or over the window), with its name."""

    name: str
    label: str
    before: float | None
    after: float | None
    unit: str  # ns | count | bytes | %

    @property
    def delta(self) -> float | None:
        return None if self.before is None or self.after is None else self.after - self.before

    def to_json(self) -> dict:
        return {"label": self.label, "before": clean(self.before), "after": clean(self.after), "delta": clean(self.delta), "unit": self.unit}


@dataclass(frozen=True)
class KernelChange:
    """One kernel (by name) before and after: launches and time per step (or in the window)."""

    name: str  # demangled
    before: KernelStats | None
    after: KernelStats | None
    per: tuple[float, float]  # what divides each side's totals: its steady steps (1 without steps)

    @property
    def status(self) -> str:
        return "added" if self.before is None else "removed" if self.after is None else "both"

    def _per_side(self, side: int, total: str) -> float:
        """A side's ``total`` (a KernelStats field) per step, or in the window; 0 where it lacks the kernel."""
        stats = (self.before, self.after)[side]
        return getattr(stats, total) / self.per[side] if stats else 0.0

    @property
    def before_ns(self) -> float:
        return self._per_side(0, "total_ns")

    @property
    def after_ns(self) -> float:
        return self._per_side(1, "total_ns")

    @property
    def before_launches(self) -> float:
        return self._per_side(0, "count")

    @property
    def after_launches(self) -> float:
        return self._per_side(1, "count")

    @property
    def delta_ns(self) -> float:
        return self.after_ns - self.before_ns

    @property
    def config_changed(self) -> bool:
        """Both sides launched it, with another grid or block (of their first launch)."""
        return bool(self.before and self.after and (self.before.grid, self.before.block) != (self.after.grid, self.after.block))

    @property
    def speedup(self) -> float | None:
        return _ratio(self.before_ns, self.after_ns) if self.before and self.after else None

    def to_json(self) -> dict:
        side = lambda k, ns, n: None if k is None else {"ns": clean(ns), "launches": clean(n), "median_ns": clean(k.median_ns),  # noqa: E731
                                                        "grid": k.grid, "block": k.block}
        return {"name": self.name, "status": self.status, "before": side(self.before, self.before_ns, self.before_launches),
                "after": side(self.after, self.after_ns, self.after_launches), "delta_ns": clean(self.delta_ns),
                "speedup": clean(self.speedup), "config_changed": self.config_changed}


@dataclass(frozen=True)
class TimelineCompare(Displayed):
    """What ``ncuwrap compare`` found between two timelines: per step or over the whole capture, what moved and the findings; made by
    :func:`compare_timelines`."""
    before: TimelineDiagnosis
    after: TimelineDiagnosis
    scope: str  # PER_STEP | WHOLE_CAPTURE
    period: Change  # the mean step over the steady steps (the headline's), or the window
    median_period: Change | None  # the steps' median period (None: no steps)
    end_to_end: Change  # each capture's whole traced span
    gpu_work: Change  # GPU work a step launches (median), or the GPU's busy time in the window
    breakdown: tuple[Change, ...]  # CATEGORIES, per step (mean) or in the window
    activity: tuple[Change, ...]  # kernels, launch calls, their time, synchronize time, copies' count, bytes and time
    kernels: tuple[KernelChange, ...]  # by how much their time changed, most first
    resolved: tuple[str, ...]
    introduced: tuple[str, ...]
    threshold_pct: float = DEFAULT_THRESHOLD_PCT
    # Reported on one side only, while the rule's condition holds on both: the verdict changed, and the
    # finding applies under one verdict and not the other. Neither got worse (or better) by the change.
    held_before: tuple[str, ...] = ()  # reported after only
    still_holds: tuple[str, ...] = ()  # reported before only
    fail_on_finding: str | None = DEFAULT_FAIL_ON_FINDING
    notes: tuple[str, ...] = field(default=())
    untraced: Change | None = None  # the mean step without the tracer, estimated (ncuwrap.timeline.tracer; None: not on both sides)

    @property
    def breakdown_total(self) -> Change:
        """The breakdown's rows added up: the mean step (per step; not the median period, which the
        headline gives), or the traced window. A table of the breakdown shows it as its total."""
        label = "a step (mean), the rows' sum" if self.per_step else "traced window, the rows' sum"
        return Change("breakdown_total", label, sum(c.before or 0.0 for c in self.breakdown), sum(c.after or 0.0 for c in self.breakdown), "ns")

    @property
    def speedup(self) -> float | None:
        """BEFORE's mean step (or window) over AFTER's: above 1, the change made the program faster."""
        return _ratio(self.period.before, self.period.after)

    @property
    def untraced_speedup(self) -> float | None:
        """BEFORE's step over AFTER's, each without its tracer (estimated)."""
        return _ratio(self.untraced.before, self.untraced.after) if self.untraced is not None else None

    @property
    def predictions(self) -> tuple:
        """What BEFORE's replay predicted of each remedy (ncuwrap.timeline.whatif; the tracer's own cost aside)."""
        w = self.before.timeline.whatif
        return () if w is None else tuple(p for p in w.remedies if p.remedy != "no_tracer")

    @property
    def closest_prediction(self):
        """The remedy whose predicted speedup is nearest the measured one (both untraced): the change most like it; None
        without predictions or a measured speedup."""
        measured = self.untraced_speedup
        if not self.predictions or not measured:
            return None
        return min(self.predictions, key=lambda p: abs(math.log(p.speedup / measured)) if p.speedup > 0 else math.inf)

    @property
    def added(self) -> tuple[KernelChange, ...]:
        return tuple(k for k in self.kernels if k.status == "added")

    @property
    def removed(self) -> tuple[KernelChange, ...]:
        return tuple(k for k in self.kernels if k.status == "removed")

    @property
    def changed(self) -> tuple[KernelChange, ...]:
        return tuple(k for k in self.kernels if k.status == "both")

    @property
    def kernels_shown(self) -> tuple[KernelChange, ...]:
        return self.kernels[:KERNELS_SHOWN]

    @property
    def kernels_hidden(self) -> int:
        return max(0, len(self.kernels) - KERNELS_SHOWN)

    @property
    def gate(self) -> str:
        """What counts as a regression, in words."""
        return f"{self.period_words} more than {self.threshold_pct:g}% longer" + introduced_gate(self.fail_on_finding, self.threshold_pct, "step")

    @property
    def period_words(self) -> str:
        """What the headline and the gate measure, in words: 'the mean step' or 'the traced window'."""
        return "the mean step" if self.per_step else f"the {self.period.label}"

    @property
    def per_step(self) -> bool:
        return self.scope == PER_STEP

    @property
    def verdict_changed(self) -> bool:
        return (self.before.bound, self.before.limiter) != (self.after.bound, self.after.limiter)

    @property
    def regressions(self) -> list[str]:
        lines = []
        speedup = self.speedup
        if speedup is not None and (1.0 / speedup - 1.0) * 100.0 > self.threshold_pct:
            lines.append(f"{self.period_words} is {100.0 * (1.0 / speedup - 1.0):.1f}% longer after the change "
                         f"(more than {self.threshold_pct:g}%)")
        severity = {f.id: f.severity for f in self.after.findings}
        faster = measurably_faster(speedup, self.threshold_pct)
        for finding in self.introduced:
            if gates_on(severity[finding], self.fail_on_finding, faster):
                lines.append(f"{finding}: a finding introduced ({severity[finding]})")
        return lines

    @property
    def not_gating(self) -> list[str]:
        """Findings introduced while the step got measurably faster: reported, not failing the gate
        (``--fail-on-finding LEVEL`` makes them count)."""
        severity = {f.id: f.severity for f in self.after.findings}
        if not measurably_faster(self.speedup, self.threshold_pct):
            return []
        return [f"{finding}: a finding introduced ({severity[finding]}), while {self.period_words} is {self.speedup:.2f}x shorter"
                for finding in self.introduced if gates_on(severity[finding], self.fail_on_finding)
                and not gates_on(severity[finding], self.fail_on_finding, True)]

    def to_json(self) -> dict:
        side = lambda d: {"source": d.source.to_json(), "bound": d.bound, "limiter": d.limiter,  # noqa: E731
                          "findings": [f.id for f in d.findings], "steps": d.timeline.steps.count if d.timeline.steps else None,
                          "steady_steps": len(d.timeline.steps.steady) if d.timeline.steps else None}
        return {
            "schema": SCHEMA,
            "tool": {"name": "ncuwrap", "version": __version__},
            "before": side(self.before),
            "after": side(self.after),
            "rules": {"path": self.after.rules_path, "version": self.after.rules_version, "name": self.after.rules_name},
            "scope": self.scope,
            "speedup": clean(self.speedup),
            "period": self.period.to_json(),
            "median_period": self.median_period.to_json() if self.median_period is not None else None,
            "untraced": self.untraced.to_json() if self.untraced is not None else None,
            "untraced_speedup": clean(self.untraced_speedup),
            "predicted": ({"closest": self.closest_prediction.remedy if self.closest_prediction is not None else None,
                           "measured_untraced_speedup": clean(self.untraced_speedup),
                           "remedies": [{"remedy": p.remedy, "speedup": clean(p.speedup)} for p in self.predictions]}
                          if self.predictions else None),
            "end_to_end": self.end_to_end.to_json(),
            "gpu_work": self.gpu_work.to_json(),
            "breakdown": {c.name: c.to_json() for c in self.breakdown},
            "breakdown_total": self.breakdown_total.to_json(),
            "activity": {c.name: c.to_json() for c in self.activity},
            "kernels": [k.to_json() for k in self.kernels],
            "added": [k.name for k in self.added],
            "removed": [k.name for k in self.removed],
            "findings": {"resolved": list(self.resolved), "introduced": list(self.introduced), "held_before": list(self.held_before),
                         "still_holds": list(self.still_holds)},
            "threshold_pct": self.threshold_pct,
            "fail_on_finding": self.fail_on_finding,
            "regressions": self.regressions,
            "not_gating": self.not_gating,
            "notes": list(self.notes),
        }

    def __repr__(self) -> str:
        speedup = f"{self.speedup:.2f}x" if self.speedup is not None else "n/a"
        found = "".join(f"; {what}: {', '.join(ids)}" for what, ids in (("resolved", self.resolved), ("introduced", self.introduced)) if ids)
        return (f"<TimelineCompare {short_path(self.before.source.path, 40)} → {short_path(self.after.source.path, 40)}: {self.scope}, "
                f"period {speedup} faster{found}>")

    def to_frame(self):
        """One row per kernel (pandas): its time and launches per step (or in the window) on each side."""
        import pandas as pd

        return pd.DataFrame([{"kernel": k.name, "status": k.status, "before_ns": k.before_ns, "after_ns": k.after_ns, "delta_ns": k.delta_ns,
                              "speedup": k.speedup, "before_launches": k.before_launches, "after_launches": k.after_launches,
                              "config_changed": k.config_changed} for k in self.kernels],
                            columns=["kernel", "status", "before_ns", "after_ns", "delta_ns", "speedup", "before_launches", "after_launches",
                                     "config_changed"])


def _per(d: TimelineDiagnosis, per_step: bool) -> float:
    return float(len(d.timeline.steps.steady)) if per_step else 1.0


def _span(d: TimelineDiagnosis) -> int:
    s = d.timeline.steps
    return s.capture_end_ns - s.capture_start_ns if s is not None else d.window_ns


def _activity(d: TimelineDiagnosis, per_step: bool) -> dict[str, float | None]:
    t, n = d.timeline, _per(d, per_step)
    categories = t.api_categories() if t.api_traced else {}
    launch, sync = categories.get("launch"), categories.get("sync")
    return {
        "kernels": t.metrics["kernel_count"] / n,
        "launch_calls": launch["calls"] / n if launch else None,
        "launch_api_ns": launch["total_ns"] / n if launch else None,
        "sync_api_ns": sync["total_ns"] / n if sync else None,
        "copies": sum(c.count for c in t.copies) / n,
        "copy_bytes": sum(c.bytes for c in t.copies) / n,
        "copy_ns": sum(c.total_ns for c in t.copies) / n,
        "memsets": (t.memsets.get("count") or 0) / n,
    }


_ACTIVITY = {"kernels": ("kernels", "count"), "launch_calls": ("launch calls", "count"), "launch_api_ns": ("in launch calls", "ns"),
             "sync_api_ns": ("in synchronize calls", "ns"), "copies": ("copies", "count"), "copy_bytes": ("copied", "bytes"),
             "copy_ns": ("copying", "ns"), "memsets": ("memsets", "count")}


def compare_timelines(before: TimelineDiagnosis, after: TimelineDiagnosis, *, threshold_pct: float = DEFAULT_THRESHOLD_PCT,
                      fail_on_finding: str | None = DEFAULT_FAIL_ON_FINDING, rules=None) -> TimelineCompare:
    """What changed from ``before`` to ``after`` (two diagnoses made with the same rules; ``rules``: that
    RuleSet, loaded again from the diagnoses' rules path when not given). A finding is introduced only
    where its condition did not hold before, and resolved only where it no longer holds."""
    check_threshold(threshold_pct)
    if fail_on_finding not in (None, *FAIL_ON_FINDING_CHOICES):
        raise InputError(f"--fail-on-finding {fail_on_finding}: give one of {', '.join(FAIL_ON_FINDING_CHOICES)}")
    steps_b, steps_a = before.timeline.steps, after.timeline.steps
    per_step = steps_b is not None and steps_a is not None
    notes = []
    if not per_step:
        which = "neither capture has" if steps_b is None and steps_a is None else ("BEFORE has no" if steps_b is None else "AFTER has no")
        notes.append(f"{which} steps (NVTX ranges named like a step): the whole captures are compared, start-up included; "
                     "mark each iteration with an NVTX range named 'step' (or pass --step-range) to compare steady steps")
    nb, na = _per(before, per_step), _per(after, per_step)
    if per_step:
        # The mean step (the steady window over its steps) is what the program's own clock reads around its
        # loop; the median leaves outlier steps (a checkpoint every 5th) out, and stands beside it.
        period = Change("period_ns", "a step (mean)", steps_b.mean_period_ns, steps_a.mean_period_ns, "ns")
        median_period = Change("median_period_ns", "a step (median)", steps_b.period_ns, steps_a.period_ns, "ns")
        gpu_work = Change("gpu_work_ns", "GPU work a step (median)", steps_b.gpu_work_ns, steps_a.gpu_work_ns, "ns")
    else:
        period = Change("window_ns", "traced window", float(before.window_ns), float(after.window_ns), "ns")
        median_period = None
        gpu_work = Change("gpu_busy_ns", "GPU busy", float(before.timeline.gpu_busy_ns), float(after.timeline.gpu_busy_ns), "ns")
    end_to_end = Change("capture_ns", "whole capture", float(_span(before)), float(_span(after)), "ns")
    untraced = None
    tb, ta = before.timeline.tracer, after.timeline.tracer
    if per_step and tb is not None and ta is not None:
        untraced = Change("untraced_step_ns", "a step without the tracer (estimated)", tb.untraced_ns, ta.untraced_ns, "ns")
        traced_ratio, untraced_ratio = _ratio(period.before, period.after), _ratio(tb.untraced_ns, ta.untraced_ns)
        if traced_ratio and untraced_ratio and abs(untraced_ratio / traced_ratio - 1.0) * 100.0 > TRACER_CHANGES_PCT:
            notes.append(f"without the tracer the change would be ~{untraced_ratio:.2f}x, not the {traced_ratio:.2f}x traced: the tracer "
                         f"takes ~{(tb.traced_ns - tb.untraced_ns) / 1e6:.3g} ms of BEFORE's {tb.traced_ns / 1e6:.3g} ms step and "
                         f"~{(ta.traced_ns - ta.untraced_ns) / 1e6:.3g} ms of AFTER's {ta.traced_ns / 1e6:.3g} ms (each side's tracer line)")
    breakdown = tuple(Change(c, CATEGORY_LABELS[c], before.timeline.breakdown_ns[c] / nb, after.timeline.breakdown_ns[c] / na, "ns")
                      for c in CATEGORIES if before.timeline.breakdown_ns[c] or after.timeline.breakdown_ns[c] or c in ("kernel", "idle"))
    act_b, act_a = _activity(before, per_step), _activity(after, per_step)
    activity = tuple(Change(name, label, act_b[name], act_a[name], unit) for name, (label, unit) in _ACTIVITY.items()
                     if act_b[name] is not None or act_a[name] is not None)
    kb = {k.demangled: k for k in before.timeline.kernels}
    ka = {k.demangled: k for k in after.timeline.kernels}
    kernels = [KernelChange(name, kb.get(name), ka.get(name), (nb, na)) for name in dict.fromkeys([*kb, *ka])]
    kernels.sort(key=lambda k: (-abs(k.delta_ns), k.name))
    ids_b, ids_a = [f.id for f in before.findings], [f.id for f in after.findings]
    if before.rules_path != after.rules_path:
        notes.append("the two sides were diagnosed with different rules: findings may differ for that alone")
        held_b = held_a = set()
    else:
        held_b, held_a = _conditions_held(before, rules), _conditions_held(after, rules)
    new, gone = [i for i in ids_a if i not in ids_b], [i for i in ids_b if i not in ids_a]
    # What each capture's own reading said (CUDA graphs traced as a whole, a missing table...).
    notes += [f"BEFORE: {n}" for n in before.notes] + [f"AFTER: {n}" for n in after.notes]
    return TimelineCompare(before=before, after=after, scope=PER_STEP if per_step else WHOLE_CAPTURE, period=period,
                           median_period=median_period, untraced=untraced, end_to_end=end_to_end,
                           gpu_work=gpu_work, breakdown=breakdown, activity=activity, kernels=tuple(kernels),
                           resolved=tuple(i for i in gone if i not in held_a), introduced=tuple(i for i in new if i not in held_b),
                           threshold_pct=threshold_pct, fail_on_finding=fail_on_finding, notes=tuple(notes),
                           held_before=tuple(i for i in new if i in held_b), still_holds=tuple(i for i in gone if i in held_a))


def _conditions_held(d: TimelineDiagnosis, rules) -> set[str]:
    """The findings whose condition holds on ``d``'s capture whatever its verdict (a rule's ``under``
    left aside): what "introduced" and "resolved" are judged against. ``rules``: the loaded RuleSet both
    sides were diagnosed with, or None to load the one ``d`` names (the bundled rules, or a file)."""
    from ncuwrap import ruleset
    from ncuwrap.ruleset.evaluate import Evaluation
    from ncuwrap.timeline.metrics import TIMELINE
    from ncuwrap.timeline.values import CaptureValues

    if rules is None:
        bundled = ruleset.load(None, TIMELINE)
        rules = bundled if d.rules_path == bundled.path else ruleset.load(d.rules_path, TIMELINE)
    fired = Evaluation(CaptureValues(d.timeline.metrics, d.timeline.unknown), rules).fired
    return {fid for fid, holds in fired.items() if bool(holds[0])}


def compare_timeline_files(before: str | Path, after: str | Path, rules: RulesChoice = RulesChoice(), *,
                           timeline: TimelineOptions = TimelineOptions(), **options) -> TimelineCompare:
    """Diagnose two captures (.sqlite, .sqlite.gz, .nsys-rep) with the same rules (``rules``), their steps
    found as ``timeline`` says, and compare them."""
    from ncuwrap.timeline.diagnosis import Diagnosing

    check_threshold(options.get("threshold_pct", DEFAULT_THRESHOLD_PCT))  # before any work
    # The two captures are read side by side (each in a child, where the platform forks).
    diagnosing = Diagnosing([before, after], rules, timeline)
    sides = diagnosing.results()
    return compare_timelines(*sides, rules=diagnosing.rules, **options)
