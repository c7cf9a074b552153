"""Compare two kernel reports: what a change did to each kernel.

Kernels are paired by name, repeated names in launch order; ``--pair OLD=NEW`` pairs renamed kernels,
and when exactly one kernel is left unpaired on each side those two are paired too (the usual
"before/after" of one kernel that was renamed, e.g. transposeShared -> transposePadded). For each
pair: the verdict change, findings resolved and introduced, the change of the key metrics and of
each finding's evidence, and the speedup.

ncu's durations are instrumented (the kernel is replayed, under ncu's clock control): they are labelled so.
When both sides come with uninstrumented timings (``ncuwrap.bench/v1`` JSON from ``ncuwrap bench``),
the real speedup is shown as well, and that is what the regression gate uses.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from ncuwrap.core.version import __version__
from ncuwrap.kernel import metrics as kernel_metrics
from ncuwrap.bundled.report import SCHEMA as BENCH_SCHEMA, BenchTimings, Timing, load_bench  # noqa: F401 (public names)
from ncuwrap.kernel.diagnosis import KEY_METRICS  # the metrics compared for every pair, in this order
from ncuwrap.core.display import Displayed, plural, short_path
from ncuwrap.core.errors import InputError
from ncuwrap.core.launch_selection import LaunchSelection
from ncuwrap.core.numbers import clean
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.kernel.verdict import Diagnosis, KernelVerdict
from ncuwrap.ruleset.gate import (DEFAULT_FAIL_ON_FINDING, DEFAULT_THRESHOLD_PCT, FAIL_ON_FINDING_CHOICES, check_threshold, gates_on, introduced_gate,
                                  measurably_faster)

SCHEMA = "ncuwrap.compare/v1"
NCU_DURATION_LABEL = "ncu duration, instrumented"
BENCH_LABEL = "bench median, uninstrumented"
PAIRED_BY_NAME = "name"
PAIRED_BY_ORDER = "name, then launch order"
PAIRED_BY_OPTION = "--pair"
PAIRED_BY_ELIMINATION = "elimination (the only unpaired kernel on each side)"


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Delta:
    """One metric before and after. Percentages change by points; other units by a ratio too."""

    name: str
    before: object
    after: object
    label: str = ""

    @property
    def unit(self) -> str:
        return kernel_metrics.unit(self.name)

    @property
    def delta(self) -> float | None:
        b, a = _number(self.before), _number(self.after)
        return None if b is None or a is None else a - b

    @property
    def change_pct(self) -> float | None:
        b, a = _number(self.before), _number(self.after)
        if b is None or a is None or b == 0 or self.unit == "%":
            return None
        return 100.0 * (a - b) / abs(b)

    def to_json(self) -> dict:
        out = {"before": self.before, "after": self.after, "delta": clean(self.delta), "unit": self.unit}
        if self.change_pct is not None:
            out["change_pct"] = clean(self.change_pct)
        if self.label:
            out["label"] = self.label
        return out


@dataclass(frozen=True)
class Regression:
    """Why a pair fails the gate: a finding introduced (``finding`` set) or a slowdown."""

    name: str  # the pair's name
    text: str  # what happened, without the name
    finding: str | None = None
    severity: str | None = None
    waived: str = ""  # why a finding introduced does not fail the gate after all (the speedup)

    @property
    def message(self) -> str:
        return f"{self.name}: {self.text}" + (f", {self.waived}" if self.waived else "")


@dataclass(frozen=True)
class Pair:
    """One kernel before and after a change: the findings resolved, introduced and kept, the metrics that moved and the timings; made by
    :func:`compare_kernels`."""
    name: str
    paired_by: str
    before: KernelVerdict
    after: KernelVerdict
    resolved: tuple[str, ...]
    introduced: tuple[str, ...]
    persisting: tuple[str, ...]
    # Reported on one side while the other side could not evaluate the rule: neither resolved nor new.
    not_comparable: tuple[str, ...]
    deltas: dict  # name -> Delta, KEY_METRICS order
    evidence: dict  # finding id -> {metric -> Delta}
    before_timing: Timing | None = None
    after_timing: Timing | None = None
    timing_notes: tuple[str, ...] = ()
    regressions: tuple[Regression, ...] = ()
    # Findings introduced that would fail the gate but for the kernel getting measurably faster.
    not_gating: tuple[Regression, ...] = ()
    # What the findings this change resolved were estimated to cost (% of BEFORE's time), fixed together.
    estimated_gain_pct: float | None = None
    # finding id -> how the waste of each of its lines moved (both sides with per-instruction counters).
    lines: dict = field(default_factory=dict)

    @property
    def estimated_speedup(self) -> float | None:
        """The estimate as a speedup factor, to hold against the measured one."""
        p = self.estimated_gain_pct
        return None if p is None or p >= 100 else 1.0 / (1.0 - p / 100.0)

    def finding(self, fid: str):
        """The finding ``fid`` as the comparison speaks of it: BEFORE's for one the change resolved
        (what was fixed), AFTER's otherwise."""
        before = {f.id: f for f in self.before.findings}
        after = {f.id: f for f in self.after.findings}
        return before[fid] if fid in self.resolved or fid not in after else after[fid]

    @property
    def good_news(self) -> tuple[str, ...]:
        """Findings introduced that are good news: the kernel reached its roofline (info)."""
        severities = {f.id: f.severity for f in self.after.findings}
        return tuple(i for i in self.introduced if severities.get(i) == "info")

    @property
    def verdict_changed(self) -> bool:
        return (self.before.bound, self.before.limiter) != (self.after.bound, self.after.limiter)

    @property
    def speedup(self) -> float | None:
        """Real speedup, before median / after median (uninstrumented), when both sides have one."""
        if self.before_timing and self.after_timing:
            return self.before_timing.median_ms / self.after_timing.median_ms
        return None

    @property
    def ncu_speedup(self) -> float | None:
        b, a = _number(self.before.duration_ns), _number(self.after.duration_ns)
        return b / a if b and a else None

    def to_json(self) -> dict:
        timing = None
        if self.before_timing or self.after_timing:
            timing = {"before": self.before_timing.to_json() if self.before_timing else None,
                      "after": self.after_timing.to_json() if self.after_timing else None,
                      "speedup": clean(self.speedup), "label": "uninstrumented (bench median)"}
        return {
            "name": self.name,
            "paired_by": self.paired_by,
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "verdict": {"before": self.before.bound, "before_limiter": self.before.limiter,
                        "after": self.after.bound, "after_limiter": self.after.limiter, "changed": self.verdict_changed},
            "resolved": list(self.resolved),
            "introduced": list(self.introduced),
            "persisting": list(self.persisting),
            "not_comparable": list(self.not_comparable),
            "deltas": {name: d.to_json() for name, d in self.deltas.items()},
            "evidence": {fid: {name: d.to_json() for name, d in ds.items()} for fid, ds in self.evidence.items()},
            "ncu_speedup": {"value": clean(self.ncu_speedup), "label": NCU_DURATION_LABEL},
            "estimate": {"resolved": list(self.resolved), "gain_pct": clean(self.estimated_gain_pct), "speedup": clean(self.estimated_speedup),
                         "label": "estimated from BEFORE's counters for the findings resolved"},
            "timing": timing,
            "timing_notes": list(self.timing_notes),
            "regressions": [r.message for r in self.regressions],
            "not_gating": [r.message for r in self.not_gating],
            "lines": {fid: [c.to_json() for c in changes] for fid, changes in self.lines.items()},
        }


@dataclass(frozen=True)
class CompareResult(Displayed):
    """What ``ncuwrap compare`` found between two diagnoses: the kernel pairs, the kernels only one side has, the regressions; made by
    :func:`compare`, drawn by the renderers."""
    before: Diagnosis
    after: Diagnosis
    pairs: tuple[Pair, ...]
    unpaired_before: tuple[KernelVerdict, ...]
    unpaired_after: tuple[KernelVerdict, ...]
    threshold_pct: float = DEFAULT_THRESHOLD_PCT
    before_timing: str | None = None  # bench JSON paths
    after_timing: str | None = None
    notes: tuple[str, ...] = field(default=())
    fail_on_finding: str | None = DEFAULT_FAIL_ON_FINDING

    @property
    def gate(self) -> str:
        """What counts as a regression, in words."""
        return f"more than {self.threshold_pct:g}% slower" + introduced_gate(self.fail_on_finding, self.threshold_pct)

    @property
    def regressions(self) -> list[str]:
        """One line per regression, for the CLI and the JSON document. A gate that compared nothing
        fails, and a kernel that only AFTER has counts with its findings."""
        lines = [r.message for p in self.pairs for r in p.regressions]
        if not self.pairs:
            lines.append("no kernel of BEFORE could be paired with one of AFTER, so nothing was compared (use --pair OLD=NEW)")
        for kernel in self.unpaired_after:
            found = [f.id for f in kernel.findings if gates_on(f.severity, self.fail_on_finding)]
            if found:
                lines.append(f"{kernel.name}: a kernel only AFTER has, with {', '.join(found)}")
        return lines

    @property
    def not_gating(self) -> list[str]:
        """Findings introduced to kernels that got measurably faster: reported, not failing the gate
        (``--fail-on-finding LEVEL`` makes them count)."""
        return [r.message for p in self.pairs for r in p.not_gating]

    def __repr__(self) -> str:
        regressions = self.regressions
        gate = f"{plural(len(regressions), 'regression')} ({self.gate})" if regressions else "no regression"
        return (f"<CompareResult {short_path(self.before.source.path, 40)} → {short_path(self.after.source.path, 40)}: "
                f"{plural(len(self.pairs), 'kernel pair')}; {gate}>")

    def to_frame(self):
        """One row per pair of kernels (pandas): the verdicts, ncu's durations, the real speedup where
        both timings were given, the estimate for the findings resolved, and the findings' changes."""
        import pandas as pd

        rows = [{"kernel": p.name, "paired_by": p.paired_by, "before_verdict": p.before.verdict_label, "after_verdict": p.after.verdict_label,
                 "before_ns": p.before.duration_ns, "after_ns": p.after.duration_ns, "ncu_speedup": p.ncu_speedup, "speedup": p.speedup,
                 "estimated_speedup": p.estimated_speedup, "resolved": list(p.resolved), "introduced": list(p.introduced),
                 "persisting": list(p.persisting), "regression": bool(p.regressions)} for p in self.pairs]
        return pd.DataFrame(rows, columns=["kernel", "paired_by", "before_verdict", "after_verdict", "before_ns", "after_ns", "ncu_speedup",
                                           "speedup", "estimated_speedup", "resolved", "introduced", "persisting", "regression"])

    def to_json(self) -> dict:
        side = lambda d, t: {"source": d.source.to_json(), "timing": t}  # noqa: E731
        return {
            "schema": SCHEMA,
            "tool": {"name": "ncuwrap", "version": __version__},
            "before": side(self.before, self.before_timing),
            "after": side(self.after, self.after_timing),
            "rules": {"path": self.after.rules_path, "version": self.after.rules_version, "name": self.after.rules_name},
            "threshold_pct": self.threshold_pct,
            "fail_on_finding": self.fail_on_finding,
            "pairs": [p.to_json() for p in self.pairs],
            "unpaired": {"before": [k.to_json() for k in self.unpaired_before], "after": [k.to_json() for k in self.unpaired_after]},
            "regressions": self.regressions,
            "not_gating": self.not_gating,
            "notes": list(self.notes),
        }


# ---------------------------------------------------------------------------------------------


def parse_pair_option(text: str) -> tuple[str, str]:
    """``"old=new"`` -> ("old", "new")."""
    old, sep, new = text.partition("=")
    if not sep or not old.strip() or not new.strip():
        raise InputError(f"--pair {text!r}: write it as BEFORE_NAME=AFTER_NAME (kernel names as the summary shows them)")
    return old.strip(), new.strip()


def pair_kernels(before: Diagnosis, after: Diagnosis, explicit=()) -> tuple[list, list, list]:
    """[(before kernel, after kernel, paired_by)], unpaired before, unpaired after (launch order)."""
    left_b, left_a = list(before.kernels), list(after.kernels)
    pairs: list[tuple[KernelVerdict, KernelVerdict, str]] = []

    def take(name_b: str, name_a: str, how: str) -> int:
        bs = [k for k in left_b if k.name == name_b]
        as_ = [k for k in left_a if k.name == name_a]
        for b, a in zip(bs, as_):
            pairs.append((b, a, how))
            left_b.remove(b)
            left_a.remove(a)
        return min(len(bs), len(as_))

    for old, new in explicit:
        if not any(k.name == old for k in before.kernels):
            raise InputError(f"{before.source.path}: --pair {old}={new}: no kernel named {old!r} in this report")
        if not any(k.name == new for k in after.kernels):
            raise InputError(f"{after.source.path}: --pair {old}={new}: no kernel named {new!r} in this report")
        take(old, new, PAIRED_BY_OPTION)
    for name in list(dict.fromkeys(k.name for k in left_b)):
        repeated = sum(k.name == name for k in left_b) > 1 or sum(k.name == name for k in left_a) > 1
        take(name, name, PAIRED_BY_ORDER if repeated else PAIRED_BY_NAME)
    if len(left_b) == 1 and len(left_a) == 1:
        pairs.append((left_b[0], left_a[0], PAIRED_BY_ELIMINATION))
        left_b, left_a = [], []
    return pairs, left_b, left_a


def _value(kernel: KernelVerdict, name: str):
    for source in (kernel.compared_metrics, kernel.display_metrics, kernel.chart_metrics):
        if source and name in source:
            return source[name]
    if name == "duration_ns":
        return kernel.duration_ns
    for f in kernel.findings:
        if name in f.evidence:
            return f.evidence[name]
    return None


def _evaluated(kernel: KernelVerdict, finding_id: str) -> bool:
    return not any(n.rule == finding_id for n in kernel.not_evaluated)


def compare_kernels(before: KernelVerdict, after: KernelVerdict, paired_by: str, *, before_bench: BenchTimings | None = None,
                    after_bench: BenchTimings | None = None, threshold_pct: float = DEFAULT_THRESHOLD_PCT,
                    fail_on_finding: str | None = DEFAULT_FAIL_ON_FINDING) -> Pair:
    # A minor finding costs little time: one that drops to minor is resolved, one that rises from
    # minor is introduced.
    # (A finding minor on both sides was neither: comparing a report with itself resolves nothing.)
    serious_b = [f.id for f in before.findings if not f.minor]
    serious_a = [f.id for f in after.findings if not f.minor]
    gone = [f for f in serious_b if f not in serious_a]
    new = [f for f in serious_a if f not in serious_b]
    resolved = tuple(f for f in gone if _evaluated(after, f))
    introduced = tuple(f for f in new if _evaluated(before, f))
    not_comparable = tuple(f for f in gone + new if f not in resolved and f not in introduced)
    persisting = tuple(f for f in serious_a if f in serious_b)

    deltas = {name: Delta(name, _value(before, name), _value(after, name), NCU_DURATION_LABEL if name == "duration_ns" else "")
              for name in KEY_METRICS}
    evidence = {}
    findings = {f.id: f for f in (*after.findings, *before.findings)}
    for fid in (*resolved, *introduced, *persisting, *not_comparable):
        evidence[fid] = {name: Delta(name, _value(before, name), _value(after, name)) for name in findings[fid].evidence}

    notes: list[str] = []
    before_t = after_t = None
    if before_bench:
        before_t, note = before_bench.find(before)
        notes += [note] if note else []
    if after_bench:
        after_t, note = after_bench.find(after)
        notes += [note] if note else []
    name = before.name if before.name == after.name else f"{before.name} -> {after.name}"

    # The gate judges speed by the bench medians where both sides have one, else by ncu's durations.
    if before_t and after_t:
        b, a, label = before_t.median_ms, after_t.median_ms, BENCH_LABEL
        measured = f"bench median {b:.4g} -> {a:.4g} ms"
    else:
        b, a, label = _number(before.duration_ns), _number(after.duration_ns), NCU_DURATION_LABEL
        measured = f"{NCU_DURATION_LABEL}: {b / 1e3:.2f} -> {a / 1e3:.2f} us" if b and a else ""
    speedup = b / a if b and a else None
    faster = measurably_faster(speedup, threshold_pct)
    regressions, not_gating = [], []
    severities = {f.id: f.severity for f in after.findings}
    for fid in introduced:
        finding = Regression(name, f"finding {fid} introduced ({severities[fid]})", fid, severities[fid])
        if gates_on(severities[fid], fail_on_finding, faster):
            regressions.append(finding)
        elif gates_on(severities[fid], fail_on_finding):
            not_gating.append(dataclasses.replace(finding, waived=f"while {speedup:.2f}x faster ({label})"))
    if speedup is not None and a > b * (1.0 + threshold_pct / 100.0):
        regressions.append(Regression(name, f"{100.0 * (a / b - 1.0):.1f}% slower ({measured}; threshold {threshold_pct:g}%)"))
    estimate = before.effects.gain_pct(resolved) if before.effects is not None and resolved else None
    return Pair(name, paired_by, before, after, resolved, introduced, persisting, not_comparable, deltas, evidence,
                before_t, after_t, tuple(notes), tuple(regressions), tuple(not_gating), estimate, lines=_line_changes(before, after, resolved, persisting))


@dataclass(frozen=True)
class LineChange:
    """One hot line of a finding and its waste before and after the change: ``after`` None when AFTER
    has no per-instruction counters and the finding no longer fires there."""

    location: str
    text: str | None
    label: str
    before: float
    after: float | None
    before_share: float

    @property
    def gone(self) -> bool:
        return self.after is None or self.after <= 0.05 * self.before

    def to_json(self) -> dict:
        return {"location": self.location, "text": self.text, "waste": self.label, "before": clean(self.before),
                "after": clean(self.after), "before_share": clean(self.before_share), "gone": self.gone}


def _line_changes(before: KernelVerdict, after: KernelVerdict, resolved, persisting) -> dict:
    """For each finding resolved or still there whose lines BEFORE knows: each hot line's waste after
    (AFTER's lines of the same finding, matched by file and line), or gone with the finding."""
    b_findings = {f.id: f for f in before.findings}
    a_findings = {f.id: f for f in after.findings}
    out = {}
    for fid in (*resolved, *persisting):
        where = getattr(b_findings.get(fid), "where", None)
        if where is None or not hasattr(where, "lines") or not where.lines:
            continue
        after_where = getattr(a_findings.get(fid), "where", None)
        if fid in persisting and after.source_counters is None:
            continue  # no counters after the change: nothing to say per line
        # AFTER with per-instruction counters says each line's waste after: a line its finding (still
        # there, or dropped to minor) does not list holds none of it.
        measured = after.source_counters is not None
        after_lines = {(h.location, h.text): h.value for h in getattr(after_where, "lines", ())}
        out[fid] = tuple(LineChange(h.location, h.text, where.label, h.value,
                                    after_lines.get((h.location, h.text), 0.0) if measured else None, h.share)
                         for h in where.lines)
    return out


def compare(before: Diagnosis, after: Diagnosis, *, pairs=(), before_timing: str | Path | None = None,
            after_timing: str | Path | None = None, threshold_pct: float = DEFAULT_THRESHOLD_PCT,
            fail_on_finding: str | None = DEFAULT_FAIL_ON_FINDING) -> CompareResult:
    """Compare two diagnoses (made with the same rules)."""
    check_threshold(threshold_pct)
    if fail_on_finding not in (None, *FAIL_ON_FINDING_CHOICES):
        raise InputError(f"--fail-on-finding {fail_on_finding}: give one of {', '.join(FAIL_ON_FINDING_CHOICES)}")
    before_bench = load_bench(before_timing) if before_timing else None
    after_bench = load_bench(after_timing) if after_timing else None
    matched, left_b, left_a = pair_kernels(before, after, pairs)
    result_pairs = [compare_kernels(b, a, how, before_bench=before_bench, after_bench=after_bench, threshold_pct=threshold_pct,
                                    fail_on_finding=fail_on_finding)
                    for b, a, how in matched]
    # Most time first: what matters most to a reviewer (either side's ncu duration).
    result_pairs.sort(key=lambda p: -max(_number(p.before.duration_ns) or 0.0, _number(p.after.duration_ns) or 0.0))
    notes = []
    if "ncu-csv-details" in {before.source.kind, after.source.kind} and before.source.kind != after.source.kind:
        # The details page shows L1/TEX throughput over active cycles, the raw metrics over elapsed ones.
        notes.append("one side is a --page details export: its L1/TEX % (and a memory % taken from it) counts active "
                     "cycles, the other side's elapsed cycles; compare reports of the same kind for exact deltas")
    if bool(before_timing) != bool(after_timing):
        notes.append("real speedup needs uninstrumented timings of both sides (--before-timing and --after-timing)")
    if left_b and left_a:
        notes.append("some kernels could not be paired by name: pair renamed kernels with --pair BEFORE_NAME=AFTER_NAME")
    notes += [f"BEFORE: {n}" for n in before.notes] + [f"AFTER: {n}" for n in after.notes]
    return CompareResult(before, after, tuple(result_pairs), tuple(left_b), tuple(left_a), threshold_pct,
                         str(before_timing) if before_timing else None, str(after_timing) if after_timing else None, tuple(notes),
                         fail_on_finding)


def compare_files(before: str | Path, after: str | Path, rules: RulesChoice = RulesChoice(), *,
                  launches: LaunchSelection = LaunchSelection(), ncu: str | None = None, run_folder=None, **options) -> CompareResult:
    """Diagnose two reports of any supported kind (.ncu-rep, ncu CSV) with the same rules (``rules``) and
    launches (``launches``, e.g. ``-k``) and compare them. Either may instead be a diagnosis document
    (``diagnose --format json``, ncuwrap.diagnosis/v2, v3 or v4): it was judged when it was written, so the
    rules and the launch filter apply to the reports only. ``run_folder``: a function giving the diagnosis
    of a run folder of ``ncuwrap profile`` (None for a path that is none), handed in by the API: run
    folders are the profile wing's, above this one."""
    from ncuwrap.kernel import document as diagnosis_doc
    from ncuwrap.kernel.diagnosis import diagnose
    from ncuwrap.kernel.reading import is_document

    check_threshold(options.get("threshold_pct", DEFAULT_THRESHOLD_PCT))  # before any work

    def judged(path):
        folder = run_folder(Path(path), rules, ncu=ncu, select=launches) if run_folder else None
        if folder is not None:
            return folder
        if is_document(Path(path)):
            return diagnosis_doc.read(path)
        return diagnose(path, rules, ncu=ncu, select=launches)

    return compare(judged(before), judged(after), **options)

