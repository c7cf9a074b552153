"""What one ncu run collects (``--collect``): a section set, sections, metrics, and what is left out and why.

Pure: the tests call it without a GPU (tests/test_profile_argv.py).

What ``--collect targeted`` measures
------------------------------------
The metrics the active rules read (``RuleSet.raw_metrics()``) plus what the report draws
(``kernel_diagnosis.CHART_METRICS``, the SM clock of the environment block), and nothing else:

* a metric ncu can collect by name (a hardware counter or SASS-instrumented metric: its base name is
  listed by ``ncu --query-metrics``) goes to ``--metrics``, under the exact name the rules read;
* ``launch__*`` attributes, the occupancy calculator (``sm__maximum_warps_per_active_cycle_pct``) and
  ``derived__*`` metrics exist only inside a section file, so their section is collected instead.
  LaunchStats and Occupancy cost no replay pass of their own beyond achieved occupancy, so they are
  always taken when a rule or the report reads one of their metrics. Any other section is taken only
  when a rule's *condition* (bound, limiter, finding, severity, advice case) needs it: a metric
  shown only as evidence or on a chart is not worth a section's extra passes. The default rules need
  none: ``spill_requests`` (evidence of local_memory_spill, a ``derived__`` metric of
  MemoryWorkloadAnalysis) and the L2/L1 points of the hierarchical roofline (``derived__`` metrics
  of SpeedOfLight_HierarchicalSingleRooflineChart) are left out and listed in ``Collection.skipped``;
* a ``--metrics`` metric whose section is collected anyway is not named again (the sections give it).

SpeedOfLight itself is not collected: the four throughput metrics the rules read are asked for by
name, which skips the section's breakdown tables and its gpu__compute_memory_throughput (a max over
more memory units than the rules look at).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

from ncuwrap.kernel import metrics as kernel_metrics
from ncuwrap import ruleset
from ncuwrap.core.errors import OptionError

# Which metrics ncu gives by name, and which sections cost no pass: facts of the metrics, which a diagnosis
# also reads (how to collect what a chart lacks).
FREE_SECTIONS = kernel_metrics.FREE_SECTIONS
OCCUPANCY_CALCULATOR = kernel_metrics.OCCUPANCY_CALCULATOR
ALWAYS_RECORDED_PREFIX = kernel_metrics.ALWAYS_RECORDED_PREFIX
by_name = kernel_metrics.by_name
_SECTION_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
# The environment block of a diagnosis shows the SM clock (kernel_diagnosis._source_info).
ENVIRONMENT_NAMES = ("sm_cycles_per_s",)


class CollectMode:
    """What ``ncuwrap profile --collect`` asks ncu for: the rules' metrics only, ncu's basic or full set, or named sections."""
    TARGETED = "targeted"
    BASIC = "basic"
    FULL = "full"
    SECTIONS = "sections"


COLLECT_CHOICES = ("targeted", "basic", "full")
# Nsight Compute's section of per-instruction counters (SASS, source lines, sampled stalls).
SOURCE_SECTION = "SourceCounters"


@dataclass(frozen=True)
class Skipped:
    """A quantity --collect targeted does not measure, and why."""

    name: str  # canonical / derived name (or a raw metric a rule names)
    missing: tuple[str, ...]  # the raw metrics that only a section gives (or that cost passes)
    section: str | None  # the section that would give them (None: unknown)
    why: str = ""  # a costly metric group: what it would cost

    def reason(self) -> str:
        if self.why:
            return f"{self.name}: {self.why}"
        where = f"section {self.section}" if self.section else "a section ncuwrap cannot name"
        return f"{self.name}: needs {', '.join(self.missing)} from {where}; only shown (evidence or chart), not worth its passes"

    def to_json(self) -> dict:
        return {"name": self.name, "missing": list(self.missing), "section": self.section, **({"why": self.why} if self.why else {})}


@dataclass(frozen=True)
class Collection:
    """What one ncu run collects: a section set, sections, metrics."""

    mode: str  # targeted | basic | full | sections
    set_name: str | None = None
    sections: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    skipped: tuple[Skipped, ...] = field(default=())
    # The per-instruction counters (SourceCounters) and the source files ncu finds on disk, for the
    # lines of each finding: replay passes of their own (what they cost: docs/source-lines.md).
    source: bool = False

    @property
    def label(self) -> str:
        label = self.mode if self.mode != CollectMode.SECTIONS else ",".join(self.sections)
        return label + (" + SourceCounters" if self.source and self.set_name != CollectMode.FULL else "")

    def argv(self) -> list[str]:
        out: list[str] = []
        if self.set_name:
            out += ["--set", self.set_name]
        for section in self.sections:
            out += ["--section", section]
        # The full set has SourceCounters already; a section named twice is collected once anyway.
        if self.source and self.set_name != CollectMode.FULL and SOURCE_SECTION not in self.sections:
            out += ["--section", SOURCE_SECTION]
        if self.metrics:
            out += ["--metrics", ",".join(self.metrics)]
        if self.source:
            out += ["--import-source", "yes"]
        return out

    def to_json(self) -> dict:
        return {"mode": self.mode, "set": self.set_name, "sections": list(self.sections), "metrics": list(self.metrics),
                "source": self.source, "skipped": [s.to_json() for s in self.skipped]}


def section_for(metric: str) -> str | None:
    """The section that gives a metric --metrics cannot ask for (None: unknown)."""
    section = kernel_metrics.section_of(metric)
    if section:
        return section
    if metric in OCCUPANCY_CALCULATOR or metric.startswith("launch__occupancy"):
        return "Occupancy"
    if metric.startswith("launch__"):
        return "LaunchStats"
    return None


# Metrics that cost replay passes of their own and that no default rule decides on: collected by
# targeted only when a rule's condition reads them. The warp stall ratios cost more passes than anything else
# targeted collects and only fill the 'cause' line of a verdict (measured: docs/profile.md, by
# workloads/l2_roofline/pass_cost.py).
STALL_RATIOS = frozenset(raw for r in kernel_metrics.STALL_REASONS for raw in kernel_metrics.raw_inputs(f"stall_{r}"))
COSTLY_WHY = ("the warp stall reasons add 6 replay passes (17 -> 23 on an H200) and only explain a verdict (its cause "
              "line); --metrics smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio or --collect full has them")


def costly(name: str) -> str | None:
    """Why ``name`` is not worth its passes unless a decision reads it (None: cheap enough)."""
    raws = kernel_metrics.raw_inputs(name)
    return COSTLY_WHY if raws and all(r in STALL_RATIOS for r in raws) else None


def report_names() -> tuple[str, ...]:
    """Quantities the report draws besides the rules: the charts and the environment's SM clock."""
    try:
        from ncuwrap.kernel.diagnosis import CHART_METRICS
    except ImportError:  # an engine without charts
        CHART_METRICS = ()
    return tuple(dict.fromkeys((*CHART_METRICS, *ENVIRONMENT_NAMES)))


def decisive_names(rules) -> list[str]:
    """Names whose value can change a verdict: bound conditions and limiters, finding conditions,
    severity conditions and the metric that picks a finding's advice."""
    names: list[str] = []

    def add(items: Iterable[str]) -> None:
        names.extend(n for n in items if n and n not in names)

    for branch in rules.bound:
        add(branch.when.names + branch.when.optional)
        if branch.limiter in kernel_metrics.CANONICAL or branch.limiter in kernel_metrics.DERIVED:
            add([branch.limiter])
    for finding in rules.findings:
        add(finding.when.names + finding.when.optional)
        for level in finding.severity:
            if level.when is not None:
                add(level.when.names + level.when.optional)
        if finding.advice_by and finding.advice_by not in ruleset.VERDICT_FIELDS:
            add([finding.advice_by])
        # An estimate sets the severity, and a minor finding does not silence 'unless'.
        for expr in [*finding.removes.values(), *([finding.fills] if finding.fills else [])]:
            add(expr.names + expr.optional)
    if any(f.estimated for f in rules.findings):
        add(list(rules.units.values()) + ["duration_ns"])
        for expr in rules.reach.values():
            add(expr.names + expr.optional)
    return names


def _order_sections(sections: Iterable[str]) -> tuple[str, ...]:
    unique = list(dict.fromkeys(sections))
    known = [s for s in FREE_SECTIONS if s in unique]
    return tuple(known + [s for s in unique if s not in known])


def targeted(rules, extra_metrics: Sequence[str] = ()) -> Collection:
    """The smallest collection that evaluates every rule of ``rules`` and draws the report."""
    names = list(dict.fromkeys([*rules.metric_names(), *report_names()]))
    decisive = set(decisive_names(rules))

    # 1. Sections: for a section-only metric a decision needs, or one of the free sections.
    sections: list[str] = []
    for name in names:
        for raw in kernel_metrics.raw_inputs(name):
            if by_name(raw) or raw.startswith(ALWAYS_RECORDED_PREFIX):
                continue
            section = section_for(raw)
            if section and (name in decisive or section in FREE_SECTIONS) and section not in sections:
                sections.append(section)
    ordered = _order_sections(sections)

    # 2. Metrics: every input of a quantity that can be measured, minus what the sections give.
    metrics: list[str] = []
    skipped: list[Skipped] = []
    for name in names:
        why = costly(name)
        if why and name not in decisive:
            skipped.append(Skipped(name, tuple(kernel_metrics.raw_inputs(name)), None, why))
            continue
        raws = kernel_metrics.raw_inputs(name)
        missing = [r for r in raws if not by_name(r) and not r.startswith(ALWAYS_RECORDED_PREFIX) and section_for(r) not in ordered]
        if missing:
            skipped.append(Skipped(name, tuple(missing), section_for(missing[0])))
            continue
        for raw in raws:
            if by_name(raw) and kernel_metrics.section_of(raw) not in ordered and raw not in metrics:
                metrics.append(raw)
    metrics += [m for m in extra_metrics if m not in metrics]
    return Collection(mode=CollectMode.TARGETED, sections=ordered, metrics=tuple(metrics), skipped=tuple(skipped))


def plan_collection(collect: str, rules=None, extra_metrics: Sequence[str] = (), *, source: bool = False) -> Collection:
    """``--collect`` value -> Collection. ``targeted`` (default) needs ``rules`` (default: bundled).
    ``source``: add the SourceCounters section and ``--import-source yes`` (``--source``)."""
    return replace(_plan_collection(collect, rules, extra_metrics), source=source)


def _plan_collection(collect: str, rules=None, extra_metrics: Sequence[str] = ()) -> Collection:
    value = (collect or CollectMode.TARGETED).strip()
    extra = tuple(dict.fromkeys(m.strip() for m in extra_metrics if m and m.strip()))
    if value == CollectMode.TARGETED:
        if rules is None:
            from ncuwrap.kernel.metrics import KERNEL

            rules = ruleset.load(None, KERNEL)
        return targeted(rules, extra)
    if value in (CollectMode.BASIC, CollectMode.FULL):
        return Collection(mode=value, set_name=value, metrics=extra)
    sections = tuple(s.strip() for s in value.split(",") if s.strip())
    if len(sections) == 1 and sections[0] in COLLECT_CHOICES:  # "full," is still full
        return _plan_collection(sections[0], rules, extra)
    bad = [s for s in sections if not _SECTION_NAME.match(s) or s in COLLECT_CHOICES]
    if not sections or bad:
        raise OptionError(f"--collect {value!r}: expected targeted, basic, full or a comma list of ncu section names "
                         f"(e.g. SpeedOfLight,Occupancy; 'ncu --list-sections' lists them)")
    return Collection(mode=CollectMode.SECTIONS, sections=tuple(dict.fromkeys(sections)), metrics=extra)
