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

from ncuwrap import metrics as M
from ncuwrap.errors import InputError
from ncuwrap import ruleset as R
from ncuwrap.ingest import Profile, load
from ncuwrap.ingest.names import dims
from ncuwrap.verdict import SEVERITY_ORDER, Diagnosis, KernelVerdict, NotEvaluated, SourceInfo, Step, clean


# What the HTML charts draw: Speed-of-Light bars, the roofline (FP32 and the memory levels), occupancy.
CHART_METRICS = (
    "sm_pct", "memory_pct", "dram_pct", "l2_pct", "l1tex_pct",
    "fp32_flops_per_s", "fp32_peak_flops_per_s", "arithmetic_intensity",
    "dram_bytes_per_s", "dram_peak_bytes_per_s", "l2_bytes_per_s", "l2_peak_bytes_per_s", "l1_bytes_per_s", "l1_peak_bytes_per_s",
    "achieved_occupancy_pct", "theoretical_occupancy_pct", "occupancy_limiter",
    "occ_limit_registers", "occ_limit_shared_mem", "occ_limit_warps", "occ_limit_blocks",
    "registers_per_thread", "block_size", "waves_per_sm",
)
# Without these the roofline has no roof or no point: the chart says which were not collected.
ROOFLINE_NEEDS = ("fp32_flops_per_s", "fp32_peak_flops_per_s", "dram_bytes_per_s", "dram_peak_bytes_per_s")
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
        try:
            pattern = re.compile(kernel)
        except re.error as exc:
            raise InputError(f"--kernel {kernel!r}: not a valid regular expression ({exc}); quote it or escape special characters") from None
        rows = np.array([i for i in rows if pattern.search(str(frame["name"].iat[i])) or pattern.search(str(frame["display_name"].iat[i]))], dtype=int)
        if not len(rows):
            names = ", ".join(dict.fromkeys(str(n) for n in frame["name"]))
            raise InputError(f"--kernel {kernel!r} matched no kernel of {profile.source.path}; its kernels: {names}")

    # The bound decision: first branch that holds wins (per launch).
    branch_holds = [ev.condition(b.when) for b in rules.bound]
    bound_missing = ev.missing(n for b in rules.bound for n in b.when.names)
    # Findings, in file order, so 'unless' can look at earlier ones.
    fired: dict[str, np.ndarray] = {}
    finding_missing: dict[str, list[str]] = {}
    for finding in rules.findings:
        finding_missing[finding.id] = ev.missing(finding.when.names)
        # A finding silenced by others ('unless') is unknown while any of those is unknown:
        # an unmeasured waste is not an absent one.
        for other in finding.unless:
            finding_missing[finding.id] += [m for m in finding_missing.get(other, []) if m not in finding_missing[finding.id]]
        holds = ev.condition(finding.when) if not finding_missing[finding.id] else np.zeros(ev.n, dtype=bool)
        for other in finding.unless:
            holds = holds & ~fired.get(other, np.zeros(ev.n, dtype=bool))
        fired[finding.id] = holds
    severity_holds = {
        (f.id, i): ev.condition(level.when) if level.when is not None else np.ones(ev.n, dtype=bool)
        for f in rules.findings
        for i, level in enumerate(f.severity)
    }
    display = list(dict.fromkeys(rules.display))
    evidence_names = list(dict.fromkeys([*KEY_METRICS, *(n for f in rules.findings for n in f.evidence)]))

    kernels = []
    for row in rows:
        kernels.append(_kernel(ev, rules, frame, int(row), branch_holds, bound_missing, fired, finding_missing, severity_holds, display, evidence_names))
    return Diagnosis(
        source=_source_info(profile),
        rules_path=rules.path,
        rules_version=rules.version,
        rules_name=rules.name,
        kernels=tuple(kernels),
        environment=_environment(profile, ev),
    )


def _values(ev: _Evaluator, names, row: int) -> dict:
    return {name: ev.value(name, row) for name in names}


def _kernel(ev, rules, frame, row, branch_holds, bound_missing, fired, finding_missing, severity_holds, display, evidence_names) -> KernelVerdict:
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
            break
    not_evaluated = []
    if bound_missing:
        status = "partially evaluated" if verdict != "unknown" else "not evaluated"
        not_evaluated.append(NotEvaluated("bound", tuple(bound_missing), f"{status}: {_hint(bound_missing, ev.kind)}"))

    findings = []
    for finding in rules.findings:
        if verdict not in finding.under and verdict != "unknown":
            continue
        missing = finding_missing[finding.id]
        if missing:
            not_evaluated.append(NotEvaluated(finding.id, tuple(missing), f"not evaluated: {_hint(missing, ev.kind)}"))
            continue
        if verdict == "unknown" or not fired[finding.id][row]:
            continue
        level = next(lv.level for i, lv in enumerate(finding.severity) if severity_holds[(finding.id, i)][row])  \
            if any(severity_holds[(finding.id, i)][row] for i in range(len(finding.severity))) else finding.severity[-1].level
        findings.append(finding.result(level, _values(ev, finding.value_names(), row)))
    findings.sort(key=lambda f: SEVERITY_ORDER.get(f.severity, 9))  # stable: file order within a level

    shown = {}
    for name in display:
        value = ev.value(name, row)
        if value is not None:
            shown[name] = value
    meta = {column: values[row] for column, values in ev.meta.items()}
    duration = ev.value("duration_ns", row)
    return KernelVerdict(
        id=int(meta["launch_id"]) if meta["launch_id"] is not None and not _isnan(meta["launch_id"]) else row,
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
    )


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
             kernel: str | None = None, ncu: str | None = None, label: str | None = None) -> Diagnosis:
    """Load ``report`` and diagnose it with the bundled rules or ``rules_path``.

    ``label`` replaces the report's path in outputs (used for the bundled sample)."""
    rules = R.load(rules_path, extend=extend)
    profile = load(report, ncu=ncu, metrics=needed_metrics(rules))
    if label:
        profile.source = replace(profile.source, path=label)
    return diagnose_profile(profile, rules, kernel=kernel)
