"""Apply a rule set to a profile: the verdict for every kernel launch.

Conditions are evaluated once per rule over all launches (numpy arrays), then read back per
launch. A rule whose metrics were not collected is reported as not evaluated, with the section
or metric to re-profile with; it never passes silently and never crashes.
"""

from __future__ import annotations

import functools
import math
import re
import shlex
from dataclasses import replace
from pathlib import Path

import numpy as np

from ncuwrap import estimate as E
from ncuwrap import kernel_filter
from ncuwrap import metrics as M
from ncuwrap import ruleset as R
from ncuwrap.ingest import Profile, load, rule_results
from ncuwrap.ingest.names import dims
from ncuwrap.verdict import SEVERITY_ORDER, Diagnosis, KernelVerdict, NcuRule, NotEvaluated, SourceInfo, Stall, Step, clean


# What the HTML charts draw: Speed-of-Light bars, the roofline (the compute roof that applies and the
# memory levels), occupancy.
CHART_METRICS = (
    "sm_pct", "memory_pct", "dram_pct", "l2_pct", "l1tex_pct",
    "roof_kind", "roof_flops_per_s", "roof_peak_flops_per_s", "arithmetic_intensity",
    "dram_bytes_per_s", "dram_peak_bytes_per_s", "l2_bytes_per_s", "l2_peak_bytes_per_s", "l1_bytes_per_s", "l1_peak_bytes_per_s",
    "achieved_occupancy_pct", "theoretical_occupancy_pct", "occupancy_limiter",
    "occ_limit_registers", "occ_limit_shared_mem", "occ_limit_warps", "occ_limit_blocks",
    "registers_per_thread", "block_size", "waves_per_sm",
)
# Without these the roofline has no roof or no point: the chart says which were not collected.
ROOFLINE_NEEDS = ("roof_flops_per_s", "roof_peak_flops_per_s", "dram_bytes_per_s", "dram_peak_bytes_per_s")
# Compared by 'ncuwrap compare' for every pair of kernels (besides each finding's evidence).
KEY_METRICS = ("duration_ns", "sm_pct", "memory_pct", "dram_pct", "l2_pct", "l1tex_pct", "achieved_occupancy_pct")


def _hint(missing: list[str], kind: str = "ncu-rep") -> str:
    if kind == "ncu-csv-details":
        # The report may well have them: the details page just does not export raw counters.
        return f"{', '.join(missing)} not on the details page; export the report with 'ncu --import REPORT --csv --page raw'"
    sections = sorted({s for s in (M.section_of(m) for m in missing) if s})
    collect = f"--section {' --section '.join(sections)}" if sections else f"--metrics {','.join(missing)}"
    return f"{', '.join(missing)} not collected; re-profile with {collect} (or 'ncuwrap profile --collect targeted')"


class _Evaluator:
    def __init__(self, profile: Profile, rules: R.RuleSet):
        self.table = M.MetricTable(profile.frame)
        self.rules = rules
        self.n = len(profile.frame)
        self._cleaned: dict[str, list] = {}
        self.kind = profile.source.kind

    def lookup(self, name: str) -> np.ndarray:
        return self.table.get(name)

    def missing(self, names) -> list[str]:
        out: list[str] = []
        for name in names:
            out.extend(m for m in self.table.missing(name) if m not in out)
        return out

    def stall_shares(self):
        """The three leading stall reasons of every launch (indices into _STALLED) and their share of
        all stall cycles (%), computed once for the whole report; None when none was collected."""
        if not hasattr(self, "_stall_shares"):
            stacked = np.vstack([np.nan_to_num(np.asarray(self.table.get(f"stall_{r}"), dtype=float), nan=0.0) for r in _STALLED])
            total = stacked.sum(axis=0)
            if not (total > 0).any():
                self._stall_shares = None
            else:
                order = np.argsort(-stacked, axis=0, kind="stable")[:3]
                top = np.take_along_axis(stacked, order, axis=0)
                share = np.where(total > 0, 100.0 * top / np.where(total > 0, total, 1.0), 0.0)
                self._stall_shares = (order, share)
        return self._stall_shares

    def number(self, expression) -> np.ndarray:
        """An expression's numeric value for every launch (estimates' shares)."""
        value = expression.evaluate(self.lookup, self.rules.constants)
        return np.broadcast_to(np.asarray(value, dtype=float), (self.n,))

    def condition(self, expression) -> np.ndarray:
        result = expression.evaluate(self.lookup, self.rules.constants)
        result = np.asarray(result)
        if result.dtype.kind == "f":
            result = np.nan_to_num(result, nan=0.0) != 0
        return np.broadcast_to(result.astype(bool), (self.n,))

    def value(self, name: str, row: int):
        # Cleaned once per metric for all launches: per-element numpy access dominates large reports.
        cleaned = self._cleaned.get(name)
        if cleaned is None:
            values = self.table.get(name)
            if values.dtype.kind == "f":
                finite = np.isfinite(values)
                whole = finite & (values == np.round(values)) & (np.abs(values) < 2**53)
                cleaned = [int(v) if w else (round(v, 4) if f else None) for v, f, w in zip(values.tolist(), finite.tolist(), whole.tolist())]
            else:
                cleaned = [clean(v) for v in values.tolist()]
            self._cleaned[name] = cleaned
        return cleaned[row]


def diagnose_profile(profile: Profile, rules: R.RuleSet, kernel: str | None = None) -> Diagnosis:
    ev = _Evaluator(profile, rules)
    frame = profile.frame
    ev.meta = {c: frame[c].tolist() if c in frame else [None] * len(frame) for c in ("launch_id", "name", "display_name", "grid", "block")}
    rows = np.arange(len(frame))
    if kernel:
        rows = kernel_filter.select(kernel, frame["name"], frame["display_name"], profile.source.path)

    # The bound decision: first branch that holds wins (per launch).
    branch_holds = [ev.condition(b.when) for b in rules.bound]
    bound_missing = ev.missing(n for b in rules.bound for n in b.when.names)
    ev.borderline = ev.condition(rules.borderline) if rules.borderline is not None else np.zeros(ev.n, dtype=bool)
    findings = _evaluate_findings(ev, rules)
    display = list(dict.fromkeys(rules.display))
    evidence_names = list(dict.fromkeys([*KEY_METRICS, *(n for f in rules.findings for n in f.evidence)]))

    kernels = []
    for row in rows:
        kernels.append(_kernel(ev, rules, profile, int(row), branch_holds, bound_missing, findings, display, evidence_names))
    return Diagnosis(
        source=_source_info(profile),
        rules_path=rules.path,
        rules_version=rules.version,
        rules_name=rules.name,
        kernels=tuple(kernels),
        environment=_environment(profile, ev),
    )


class _Evaluated:
    """Every finding evaluated over all launches at once: whether it fired, its level and estimate."""

    def __init__(self):
        self.fired: dict[str, np.ndarray] = {}
        self.missing: dict[str, list[str]] = {}
        self.estimate_missing: dict[str, list[str]] = {}
        self.level: dict[str, np.ndarray] = {}
        self.gain: dict[str, np.ndarray] = {}
        self.limited: dict[str, np.ndarray] = {}
        self.effect: dict[str, E.Effect] = {}
        self.combined: E.Estimate | None = None
        self.util: dict[str, np.ndarray] = {}


def _evaluate_findings(ev: "_Evaluator", rules: R.RuleSet) -> _Evaluated:
    out = _Evaluated()
    n = ev.n
    out.util = {u: np.asarray(ev.lookup(m), dtype=float) for u, m in rules.units.items()}
    duration = np.asarray(ev.lookup("duration_ns"), dtype=float)
    roof, floor, busy = rules.setting("roof"), rules.setting("launch_floor_ns"), rules.setting("busy")
    high, minor, saving = rules.setting("gain_high"), rules.setting("gain_minor"), rules.setting("saving_minor_ns")
    serious: dict[str, np.ndarray] = {}  # fired and not minor: what 'unless' looks at
    for finding in rules.findings:
        missing = ev.missing(finding.when.names)
        # A finding silenced by others ('unless') is unknown while any of those is unknown:
        # an unmeasured waste is not an absent one.
        for other in finding.unless:
            missing += [m for m in out.missing.get(other, []) if m not in missing]
        out.missing[finding.id] = missing
        holds = ev.condition(finding.when) if not missing else np.zeros(n, dtype=bool)
        for other in finding.unless:
            holds = holds & ~serious.get(other, np.zeros(n, dtype=bool))
        fallback = _spec_levels(ev, finding)
        if finding.estimated:
            names = [x for expr in [*finding.removes.values(), *([finding.fills] if finding.fills else [])] for x in expr.names]
            out.estimate_missing[finding.id] = ev.missing(names)
            removes = {u: ev.number(expr) for u, expr in finding.removes.items()}
            fills = ev.number(finding.fills) if finding.fills is not None else None
            fx = E.effect(n, removes, fills)
            est = E.estimate(out.util, fx, duration, roof=roof, floor_ns=floor, busy=busy)
            gain = est.gain_pct
            # Minor: under gain_minor % of the kernel's time, or under saving_minor_ns per launch.
            small = (gain < minor) | (np.nan_to_num(duration, nan=np.inf) * gain / 100.0 < saving)
            level = np.where(np.isnan(gain), fallback, np.where(small, "minor", np.where(gain >= high, "high", "medium"))).astype(object)
            out.effect[finding.id], out.gain[finding.id], out.limited[finding.id] = fx, gain, est.limited_by
        else:
            level = fallback
        out.fired[finding.id] = holds
        out.level[finding.id] = level
        serious[finding.id] = holds & (level != "minor")
    # What fixing all of a launch's estimated findings together would buy.
    together = E.no_effect(n)
    for fid, fx in out.effect.items():
        mask = out.fired[fid]
        together = together.combine(E.Effect(keep={u: np.where(mask, k, 1.0) for u, k in fx.keep.items()}, fill=np.where(mask, fx.fill, 1.0)))
    out.combined = E.estimate(out.util, together, duration, roof=roof, floor_ns=floor, busy=busy)
    return out


def _spec_levels(ev: "_Evaluator", finding) -> np.ndarray:
    """The level the rules file gives (first 'severity' entry whose condition holds, else the last)."""
    level = np.full(ev.n, finding.severity[-1].level, dtype=object)
    for entry in reversed(finding.severity):
        holds = ev.condition(entry.when) if entry.when is not None else np.ones(ev.n, dtype=bool)
        level = np.where(holds, entry.level, level).astype(object)
    return level


def _values(ev: _Evaluator, names, row: int) -> dict:
    return {name: ev.value(name, row) for name in names}


def _number(value):
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else clean(float(value))


def _kernel(ev, rules, profile, row, branch_holds, bound_missing, evaluated: _Evaluated, display, evidence_names) -> KernelVerdict:
    steps = []
    verdict, limiter, why = "unknown", None, ""
    for branch, holds in zip(rules.bound, branch_holds):
        names = branch.when.names
        step_values = _values(ev, names, row)
        ok = bool(holds[row])
        steps.append(Step(branch.verdict, branch.when.text, ok, step_values, _constants(rules, branch.when.text)))
        if ok:
            verdict = branch.verdict
            limiter = ev.value(branch.limiter, row) if ev.table.known(branch.limiter) else (branch.limiter or None)
            why = R.render_text(" ".join(branch.why.split()), _values(ev, R.placeholders(branch.why), row))
            for sentence in branch.cause:
                known = _values(ev, R.placeholders(sentence), row)
                if all(v is not None for v in known.values()):
                    why += " " + R.render_text(sentence, known)
            if ev.borderline[row] and rules.borderline_note:
                why += " " + R.render_text(rules.borderline_note, _values(ev, R.placeholders(rules.borderline_note), row))
            break
    not_evaluated = []
    if bound_missing:
        status = "partially evaluated" if verdict != "unknown" else "not evaluated"
        not_evaluated.append(NotEvaluated("bound", tuple(bound_missing), f"{status}: {_hint(bound_missing, ev.kind)}"))

    findings = []
    for finding in rules.findings:
        if verdict not in finding.under and verdict != "unknown":
            continue
        missing = evaluated.missing[finding.id]
        if missing:
            not_evaluated.append(NotEvaluated(finding.id, tuple(missing), f"not evaluated: {_hint(missing, ev.kind)}"))
            continue
        if verdict == "unknown" or not evaluated.fired[finding.id][row]:
            continue
        values = _values(ev, finding.value_names(), row)
        values["bound"] = verdict
        gain = evaluated.gain.get(finding.id)
        estimate = _number(gain[row]) if gain is not None else None
        limited = evaluated.limited[finding.id][row] if finding.id in evaluated.limited else None
        if finding.estimated and estimate is None and evaluated.estimate_missing.get(finding.id):
            missing_est = evaluated.estimate_missing[finding.id]
            not_evaluated.append(NotEvaluated(f"{finding.id} (estimate)", tuple(missing_est), f"gain not estimated: {_hint(missing_est, ev.kind)}"))
        findings.append(finding.result(str(evaluated.level[finding.id][row]), values, estimated_speedup=estimate, limited_after=limited))
    # Worst first; within a level, what fixing it buys; file order otherwise.
    findings.sort(key=lambda f: (SEVERITY_ORDER.get(f.severity, 9), -(f.estimated_speedup or 0.0)))

    shown = {}
    for name in display:
        value = ev.value(name, row)
        if value is not None:
            shown[name] = value
    meta = {column: values[row] for column, values in ev.meta.items()}
    duration = ev.value("duration_ns", row)
    launch_id = int(meta["launch_id"]) if meta["launch_id"] is not None and not _isnan(meta["launch_id"]) else row
    # The kernel's gain: every estimated finding fixed together; unknown while one of them is.
    estimated = [f for f in findings if f.id in evaluated.effect]
    if any(f.estimated_speedup is None for f in estimated) or verdict == "unknown":
        combined = None
    else:
        combined = _number(evaluated.combined.gain_pct[row]) if estimated else 0
    return KernelVerdict(
        id=launch_id,
        name=str(meta["name"]),
        display_name=str(meta["display_name"]),
        grid=dims(meta["grid"]),
        block=dims(meta["block"]),
        duration_ns=duration,
        bound=verdict,
        limiter=limiter,
        why=why,
        findings=tuple(findings),
        not_evaluated=tuple(not_evaluated),
        metrics=shown,
        path=tuple(steps),
        chart=_chart(ev, row),
        values=_values(ev, evidence_names, row),
        borderline=bool(ev.borderline[row]) and verdict != "unknown",
        pipe=ev.value("compute_pipe", row),
        pipe_pct=ev.value("compute_pipe_pct", row),
        tensor=_tensor(ev, row),
        estimated_gain_pct=combined,
        stalls=_stalls(ev, row),
        ncu_rules=_ncu_rules(profile.rules.get(launch_id, ()), findings, rules),
        effects=_effects(evaluated, findings, row, ev.value("duration_ns", row), rules),
    )


def _tensor(ev, row: int) -> dict | None:
    dtype = ev.value("tensor_dtype", row)
    if not dtype:
        return None
    return {"dtype": dtype, "flops_per_s": ev.value("tensor_flops_per_s", row), "peak_flops_per_s": ev.value("tensor_peak_flops_per_s", row),
            "pct_of_peak": ev.value("tensor_peak_pct", row)}


# Stall reasons worth naming: at least this share of all stall cycles.
_STALL_SHARE = 5.0


_STALLED = tuple(r for r in M.STALL_REASONS if r not in ("selected", "not_selected"))


def _stalls(ev, row: int) -> tuple[Stall, ...]:
    shares = ev.stall_shares()
    if shares is None:
        return ()
    order, share = shares
    return tuple(Stall(_STALLED[i], clean(float(share[j, row]))) for j, i in enumerate(order[:, row]) if share[j, row] >= _STALL_SHARE)


def _effects(evaluated: _Evaluated, findings, row: int, duration, rules) -> E.KernelEffects:
    """What compare needs to estimate a subset of this launch's findings fixed together."""
    per = {}
    for f in findings:
        fx = evaluated.effect.get(f.id)
        if fx is not None:
            per[f.id] = E.Effect(keep={u: k[row:row + 1] for u, k in fx.keep.items()}, fill=fx.fill[row:row + 1])
    util = {u: v[row:row + 1] for u, v in evaluated.util.items()}
    return E.KernelEffects(util=util, duration_ns=np.array([float(duration) if duration is not None else np.nan]), findings=per,
                           roof=rules.setting("roof"), floor_ns=rules.setting("launch_floor_ns"), busy=rules.setting("busy"))


def _ncu_rules(results, findings, rules) -> tuple[NcuRule, ...]:
    """ncu's own rule results beside ncuwrap's findings: which finding each speaks about, and whether
    the two agree on what fixing it would buy."""
    minor = rules.setting("gain_minor")
    by_id = {f.id: f for f in findings}
    out = []
    for r in results:
        counterparts = NCU_COUNTERPARTS.get(r.rule, ())
        found = [by_id[c] for c in counterparts if c in by_id]
        counterpart = found[0].id if found else (counterparts[0] if counterparts else None)
        out.append(NcuRule(rule=r.rule, section=r.section, kind=r.kind, speedup_type=r.speedup_type, estimated_speedup=_number(r.estimated_speedup),
                           message=r.message, counterpart=counterpart, agreement=_agreement(r, found, counterparts, minor)))
    return tuple(out)


def _agreement(r, found, counterparts, minor: float) -> str | None:
    if not counterparts or r.estimated_speedup is None:
        return None
    ncu_says = r.estimated_speedup >= minor
    if not found:
        return ("differ: ncuwrap found no such waste" if ncu_says else "agree: neither finds it worth fixing")
    f = max(found, key=lambda x: x.estimated_speedup or 0.0)
    ours = f.estimated_speedup
    if ours is None:
        return f"ncuwrap reports it ({f.severity}) without an estimate"
    if ncu_says == (ours >= minor):
        return f"agree: ncu {r.estimated_speedup:.0f}%, ncuwrap {ours:.0f}%"
    if ncu_says:
        return f"differ: ncuwrap estimates {ours:.0f}% (after the fix {f.limited_after or 'another unit'} still limits the kernel)"
    return f"differ: ncuwrap estimates {ours:.0f}% against ncu's {r.estimated_speedup:.0f}%"


# Nsight Compute's rules and the ncuwrap findings that speak about the same waste.
NCU_COUNTERPARTS = {
    "UncoalescedGlobalAccess": ("uncoalesced_global_loads", "uncoalesced_global_stores"),
    "SharedMemoryConflicts": ("shared_bank_conflicts",),
    "UncoalescedSharedAccess": ("shared_bank_conflicts",),
    "ThreadDivergence": ("warp_divergence",),
    "AchievedOccupancy": ("low_achieved_occupancy",),
    "TheoreticalOccupancy": ("low_achieved_occupancy",),
    "LaunchConfiguration": ("grid_too_small",),
}


def _constants(rules, text: str) -> dict:
    """The rules' constants a condition names (its thresholds), for the decision path."""
    return dict(_constants_named(tuple(rules.constants.items()), text))


@functools.lru_cache(maxsize=256)
def _constants_named(constants: tuple, text: str) -> tuple:
    # Cached: the same few conditions are shown for every launch of a large report.
    return tuple((name, value) for name, value in constants if re.search(rf"\b{re.escape(name)}\b", text))


def _chart(ev: _Evaluator, row: int) -> dict:
    chart = _values(ev, CHART_METRICS, row)
    chart["roofline_missing"] = ev.missing(ROOFLINE_NEEDS)
    return chart


def _isnan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _source_info(profile: Profile) -> SourceInfo:
    s = profile.source
    return SourceInfo(path=s.path, kind=s.kind, ncu_version=s.ncu_version, device=s.device,
                      compute_capability=s.compute_capability, command_line=s.command_line, sha256=s.sha256)


def _option(argv: list[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _environment(profile: Profile, ev: _Evaluator) -> dict:
    """Facts a reviewer needs to trust the numbers: GPU, clocks, how ncu was run."""
    s = profile.source
    # The command is read from the report's header, where a field tag can trail it (' "').
    command = s.command_line
    if command and command.endswith('"') and command.count('"') % 2:
        command = command[:-1].rstrip()
    env = {"gpu": s.device, "compute_capability": s.compute_capability, "ncu_version": s.ncu_version,
           "command_line": command, "report": s.path, "sha256": s.sha256}
    if s.command_line:
        try:
            argv = shlex.split(s.command_line.rstrip('"'))
        except ValueError:
            argv = s.command_line.split()
        # ncu's defaults: clocks locked to base, caches flushed between replay passes.
        env["clock_control"] = _option(argv, "--clock-control") or "base (ncu default)"
        env["cache_control"] = _option(argv, "--cache-control") or "all (ncu default)"
    # ncu 2025.3 records no driver version among a launch's metrics nor in CSV exports: say so, don't guess.
    env["driver"] = None
    clocks = ev.table.get("sm_cycles_per_s")
    if len(clocks) and not np.isnan(clocks).all():
        env["sm_clock_mhz"] = clean(float(np.nanmedian(clocks)) / 1e6)
    return env


def needed_metrics(rules: R.RuleSet) -> list[str]:
    """Raw metrics worth reading from a large CSV: what the rules read, every canonical alias (for
    the report's charts) and the device facts. Reading only these keeps time and memory bounded."""
    names = list(rules.raw_metrics())
    for canonical in M.CANONICAL.values():
        names.extend(a for a in canonical.aliases if a not in names)
    names += ["device__attribute_display_name", "device__attribute_compute_capability_major", "device__attribute_compute_capability_minor"]
    return names


def diagnose(report: str | Path, rules_path: str | Path | None = None, *, extend: bool = False,
             kernel: str | None = None, ncu: str | None = None, label: str | None = None,
             ncu_rules: str | Path | None = None) -> Diagnosis:
    """Load ``report`` and diagnose it with the bundled rules or ``rules_path``.

    ``label`` replaces the report's path in outputs (used for the bundled sample); ``ncu_rules``, a
    .ncu-rep or details-page CSV of the same report, supplies Nsight Compute's own rule results."""
    rules = R.load(rules_path, extend=extend)
    profile = load(report, ncu=ncu, metrics=needed_metrics(rules))
    if ncu_rules is not None:
        profile.rules = rule_results(ncu_rules, ncu=ncu)
    if label:
        profile.source = replace(profile.source, path=label)
    return diagnose_profile(profile, rules, kernel=kernel)
