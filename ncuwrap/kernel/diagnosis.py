"""Apply a rule set to a profile: the verdict for every kernel launch.

Conditions are evaluated once per rule over all launches (numpy arrays), then read back per
launch. A rule whose metrics were not collected is reported as not evaluated, with the section
or metric to re-profile with; it never passes silently and never crashes.
"""

from __future__ import annotations

import functools
import math
import shlex
from dataclasses import replace
from pathlib import Path

import numpy as np

from ncuwrap.kernel import estimate
from ncuwrap.core import progress
from ncuwrap.core.launch_selection import LaunchSelection
from ncuwrap.kernel.attribution import NO_COUNTERS, attribute
from ncuwrap.kernel.launch_records import RecordColumns
from ncuwrap.core.gc_pause import no_collection_pauses
from ncuwrap.kernel import metrics as kernel_metrics
from ncuwrap import ruleset
from ncuwrap.kernel.reading import Profile, load, rule_results
from ncuwrap.kernel.reading import source_page as ingest_source_page
from ncuwrap.core.kernel_names import dims
from ncuwrap.ruleset.evaluate import Evaluation
from ncuwrap.core.numbers import clean, clean_all
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.kernel.verdict import Diagnosis, LaunchVerdicts, LevelGap, MetricRow, NcuRule, Reprofile, Roofline, RooflinePoint, SourceInfo, Stall, column
from ncuwrap.ruleset.outcome import FindingResult


# What the HTML charts draw: Speed-of-Light bars, memory bandwidth, occupancy (the roofline is
# KernelVerdict.roofline).
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


def _how(missing, kind: str, decides: bool = True) -> str:
    """How to get ``missing`` into a report of ``kind``: one clause, the same wherever it is shown (``decides``: a
    rule decides on them; else only a chart or evidence shows them)."""
    return _how_to_get(tuple(missing), kind, decides)


@functools.lru_cache(maxsize=256)
def _how_to_get(missing: tuple, kind: str, decides: bool = True) -> str:
    if kind == "ncu-csv-details":
        # The report may well have them: the details page just does not export raw counters.
        return "export the report with 'ncu --import REPORT --csv --page raw'"
    sections = sorted({s for s in (kernel_metrics.section_of(m) for m in missing) if s})
    collect = f"--section {' --section '.join(sections)}" if sections else f"--metrics {','.join(missing)}"
    # Targeted collection leaves the warp stall reasons out (their passes only explain a verdict), and a section that
    # costs passes when no rule decides on what it gives (ncuwrap.profile.collection: only shown, not worth them).
    if all(m in _STALL_RAW for m in missing):
        return f"re-profile with {collect} (or 'ncuwrap profile --collect full')"
    if not decides and any(kernel_metrics.costs_a_section(m) for m in missing):
        return f"re-profile with {collect} (or 'ncuwrap profile --collect full': --collect targeted leaves that section out)"
    return f"re-profile with {collect} (or 'ncuwrap profile --collect targeted')"


_STALL_RAW = frozenset(raw for r in kernel_metrics.STALL_REASONS for raw in kernel_metrics.raw_inputs(f"stall_{r}"))


def _hint(missing: list[str], kind: str = "ncu-rep") -> str:
    where = "not on the details page" if kind == "ncu-csv-details" else "not collected"
    return f"{', '.join(missing)} {where}; {_how(missing, kind)}"


class _Launches:
    """The report's launches as the evaluator's metric source (ncuwrap.ruleset.evaluate.MetricSource)."""

    def __init__(self, profile: Profile):
        self.table = kernel_metrics.MetricTable(profile.table)
        self.n = len(profile.table)
        self.kind = profile.source.kind
        self._cleaned: dict[str, list] = {}
        self._stall_shares = False

    def lookup(self, name: str) -> np.ndarray:
        return self.table.get(name)

    def missing(self, names) -> list[str]:
        out: list[str] = []
        for name in names:
            out.extend(m for m in self.table.missing(name) if m not in out)
        return out

    def known(self, name: str) -> bool:
        return self.table.known(name)

    def hint(self, missing: list[str]) -> str:
        return _hint(missing, self.kind)

    def value(self, name: str, row: int):
        return self.column(name)[row]

    def column(self, name: str) -> list:
        # Cleaned once per metric for all launches: per-element numpy access dominates large reports.
        cleaned = self._cleaned.get(name)
        if cleaned is None:
            cleaned = self._cleaned[name] = clean_all(self.table.get(name))
        return cleaned

    def stall_shares(self):
        """The three leading stall reasons of every launch (indices into _STALLED) and their share of
        all stall cycles (%), computed once for the whole report; None when none was collected."""
        if self._stall_shares is False:
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


def diagnose_profile(profile: Profile, rules: ruleset.RuleSet, select: LaunchSelection | None = None) -> Diagnosis:
    """Every launch of ``profile`` (or those ``select`` keeps) judged by ``rules``."""
    progress.report(f"diagnosing {Path(profile.source.path).name}")
    source = _Launches(profile)
    table = profile.table
    meta = {c: table.values(c) if c in table else [None] * len(table)
            for c in ("launch_id", "name", "display_name", "grid", "block", "process_id", "process_name", "stream")}
    rows = np.arange(len(table))
    if select is not None and select.active:
        from ncuwrap.core import kernel_filter  # its regular expressions (re2) only where launches are picked

        rows = kernel_filter.select_launches(select, meta["name"], meta["display_name"], meta["process_id"], meta["process_name"],
                                             profile.source.path)
    evaluation = Evaluation(source, rules, estimate)  # kernel rules' estimates: ncuwrap.kernel.estimate
    with no_collection_pauses():
        kernels, columns = _kernels(evaluation, profile, [int(r) for r in rows], meta, rules)
    return Diagnosis(
        source=_source_info(profile, source),
        rules_path=rules.path,
        rules_version=rules.version,
        rules_name=rules.name,
        kernels=kernels,
        reprofile=_reprofile(kernels, source.kind),
        lines_hint=None if profile.sources or not _points_at_lines(rules) else NO_COUNTERS,
        notes=(profile.fallback.note(),) if profile.fallback is not None else (),
        columns=columns,
    )


def _points_at_lines(rules: ruleset.RuleSet) -> bool:
    return any(b.where for b in rules.bound) or any(f.where for f in rules.findings)


def _located(findings: tuple[FindingResult, ...], wastes: dict[str, str], counters, gap: str | None = None) -> tuple[FindingResult, ...]:
    """Each finding whose rule names a per-instruction waste (``wastes``: finding id -> waste), with the
    lines that hold it (``gap``: why the launch has no counters, where known)."""
    if not any(f.id in wastes for f in findings):
        return findings
    return tuple(replace(f, where=attribute(counters, wastes[f.id], gap)) if f.id in wastes else f for f in findings)


def _source_counters(counters) -> dict | None:
    if counters is None:
        return None
    return {"origin": counters.origin, "by": "line" if counters.has_lines else "instruction", "instructions": len(counters.table)}


def _reprofile(kernels, kind: str) -> Reprofile | None:
    """Every rule not evaluated on some launch, once for the report, with one way to get its metrics."""
    lacking = [n for n in column(kernels, "not_evaluated") if n]
    if not lacking:
        return None
    # Launches with the same bound share one tuple: each distinct one is read once, in launch order.
    distinct = list({id(n): n for n in lacking}.values())
    rules = tuple(dict.fromkeys(n.rule for t in distinct for n in t))
    missing = tuple(dict.fromkeys(m for t in distinct for n in t for m in n.missing))
    return Reprofile(rules=rules, missing=missing, launches=len(lacking), how=_how(missing, kind))


def _kernels(evaluation: Evaluation, profile: Profile, rows: list[int], meta: dict,
             rules: ruleset.RuleSet) -> tuple[LaunchVerdicts, RecordColumns]:
    """The verdict of each launch of ``rows``, kept as columns, and what their document's records are shared by.
    Everything is read or computed by whole columns (the decisions, the metrics shown, the charts); a launch's
    verdict is put together only where it is read: a report of 10,000 launches costs about as much as reading it."""
    source: _Launches = evaluation.source
    display = list(dict.fromkeys(rules.display))
    evidence_names = list(dict.fromkeys([*KEY_METRICS, *(n for f in rules.findings for n in f.evidence)]))
    decisions = evaluation.decide_columns(rows)
    compared = {name: source.column(name) for name in evidence_names}
    duration, pipe, pipe_pct = source.column("duration_ns"), source.column("compute_pipe"), source.column("compute_pipe_pct")
    grids, blocks = _dims_of(meta["grid"]), _dims_of(meta["block"])
    roofline, stalls, tensors, level_gaps = _rooflines(source), _stalls_of(source), _tensors(source), _level_gaps(source)
    launch_ids = [int(launch) if launch is not None and not _isnan(launch) else row for launch, row in zip((meta["launch_id"][r] for r in rows), rows)]
    findings = decisions.findings
    columns = {
        "id": launch_ids,
        "name": [str(meta["name"][row]) for row in rows],
        "display_name": [str(meta["display_name"][row]) for row in rows],
        "duration_ns": [duration[row] for row in rows],
        "bound": decisions.bound, "limiter": decisions.limiter, "why": decisions.why, "not_evaluated": decisions.not_evaluated,
        "borderline": decisions.borderline,
        "pipe": [pipe[row] for row in rows], "pipe_pct": [pipe_pct[row] for row in rows],
        "estimated_gain_pct": decisions.estimated_gain_pct,
        "process_id": [_ident(meta["process_id"][row]) for row in rows],
        "process_name": [_text(meta["process_name"][row]) for row in rows],
        "stream": [_ident(meta["stream"][row]) for row in rows],
        "next_step": decisions.next_step,
    }
    if profile.sources:  # each finding's lines, and the verdict branch's
        branch_where = {b.verdict: b.where for b in rules.bound if b.where}
        finding_where = {f.id: f.where for f in rules.findings if f.where}
        counters = [profile.sources.get(launch) for launch in launch_ids]
        gaps = [profile.source_gaps.get(launch) for launch in launch_ids]
        findings = [_located(f, finding_where, c, gap) for f, c, gap in zip(findings, counters, gaps)]
        wastes = [branch_where.get(bound) for bound in decisions.bound]
        columns["where"] = [attribute(c, waste, gap) if waste else None for c, waste, gap in zip(counters, wastes, gaps)]
        columns["source_counters"] = [_source_counters(c) for c in counters]
    else:
        columns["where"] = columns["source_counters"] = [None] * len(rows)
    columns["findings"] = findings
    results = [profile.rules.get(launch, ()) for launch in launch_ids] if profile.rules else None
    shown, charted = evaluation.columns(display, rows), evaluation.columns(CHART_METRICS, rows)  # by launch
    made = {
        # Evaluation.records' dicts, one launch's at a time
        "display_metrics": lambda i: {name: c[i] for name, c in shown.items() if c[i] is not None},
        "chart_metrics": lambda i: {name: c[i] for name, c in charted.items()},
        "grid": lambda i: grids(rows[i]),
        "block": lambda i: blocks(rows[i]),
        "path": decisions.path,
        "compared_metrics": lambda i: MetricRow(compared, rows[i]),
        "tensor": lambda i: tensors(rows[i]),
        "stalls": lambda i: stalls(rows[i]),
        "ncu_rules": (lambda i: _ncu_rules(results[i], findings[i], evaluation.rules, decisions.not_evaluated[i]) if results[i] else ()) if results
        else (lambda i: ()),
        "effects": lambda i: evaluation.effects(decisions.findings[i], rows[i], duration[rows[i]]),
        "roofline": lambda i: roofline(rows[i]),
        "level_gaps": lambda i: level_gaps(rows[i]),
    }
    whole = {"display_metrics": lambda: evaluation.records(display, rows, known_only=True), "chart_metrics": lambda: evaluation.records(CHART_METRICS, rows)}
    kernels = LaunchVerdicts(len(rows), columns, made, whole)
    # The launch's grid and block as the report wrote them (their dimensions where that is not a text): equal
    # keys are equal dimensions.
    dims = tuple([text if type(text) is str else _dims_key(parsed(row)) for text, row in zip((meta[c][r] for r in rows), rows)]
                 for c, parsed in (("grid", grids), ("block", blocks)))
    return kernels, RecordColumns(kernels, decisions, rows, source.lookup, display, CHART_METRICS, compared, dims)


def _dims_key(dims: list | None) -> tuple | None:
    return tuple(dims) if dims is not None else None


def _dims_of(texts: list):
    """Row -> the launch dimensions of ``texts[row]`` ("(32, 8, 1)" -> [32, 8, 1]), each distinct
    text read once; every launch gets a list of its own."""
    parsed: dict = {}

    def at(row: int):
        text = texts[row]
        try:
            value = parsed[text]
        except KeyError:
            value = parsed[text] = dims(text)
        except TypeError:  # not hashable: not a text ncu writes
            value = dims(text)
        return list(value) if value is not None else None

    return at


def _text(value) -> str | None:
    if type(value) is str:  # a CSV's every launch: the rest is for a .ncu-rep's numbers and NaN
        return value or None
    return None if value is None or _isnan(value) or value == "" else str(value)


def _ident(value) -> str | None:
    """A process or stream ID as text: "7" whether the report gave "7" (CSV) or 7.0 (.ncu-rep)."""
    if type(value) is str:
        return value or None
    if isinstance(value, float) and not _isnan(value) and value.is_integer():
        return str(int(value))
    return _text(value)


def _rooflines(source: "_Launches"):
    """Row -> the launch's roofline. Without its counters, one Roofline (per kind) serves every launch."""
    missing = tuple(source.missing(ROOFLINE_NEEDS))
    kinds = source.column("roof_kind")
    if missing:
        unmeasured: dict[str, Roofline] = {}

        def empty(row: int) -> Roofline:
            kind = str(kinds[row] or "fp32")
            if kind not in unmeasured:
                unmeasured[kind] = Roofline(kind, None, (), None, (), missing=missing, how=_how(missing, source.kind))
            return unmeasured[kind]

        return empty
    peaks, flops_per_s = _positives(source.column("roof_peak_flops_per_s")), source.column("roof_flops_per_s")
    levels = [(level, _positives(source.column(achieved_key)), _positives(source.column(peak_key)))
              for level, achieved_key, peak_key in kernel_metrics.MEMORY_LEVELS]
    l1_sectors, l2_requests = source.column("l1_sectors"), source.column("l2_tex_requests")

    def roofline(row: int) -> Roofline:
        flops = flops_per_s[row]
        roofs, points = [], []
        for level, achieved_column, peak_column in levels:
            bw, achieved = peak_column[row], achieved_column[row]
            if bw:
                roofs.append((level, bw))
            if achieved and flops and flops > 0:
                points.append(RooflinePoint(level, flops / achieved, float(flops), achieved))
        points, l1_left_out = _l1_where_it_carries(points, l1_sectors[row], l2_requests[row])
        return Roofline(str(kinds[row] or "fp32"), peaks[row], tuple(roofs), flops, tuple(points), l1_left_out=l1_left_out)

    return roofline


def _level_gaps(source: "_Launches"):
    """Row -> the memory levels the launch's charts lack for want of counters (LevelGap): the counters are the
    report's, so the gaps are worked out once and every launch lacking the same shares one tuple."""
    why = "not on the details page" if source.kind == "ncu-csv-details" else "not collected"
    levels = []
    for level, achieved, peak in kernel_metrics.MEMORY_LEVELS:
        lacks_bytes = tuple(source.missing([achieved]))
        lacks_peak = tuple(m for m in source.missing([peak]) if m not in lacks_bytes)
        # A peak computed from the bytes (L2's) is lacking with them: the level's one gap says both.
        levels.append((source.column(achieved), source.column(peak),
                       LevelGap(level, "bytes", lacks_bytes, why, _how(lacks_bytes, source.kind, decides=False)) if lacks_bytes else None,
                       LevelGap(level, "peak", lacks_peak, why, _how(lacks_peak, source.kind, decides=False)) if lacks_peak else None))
    if not any(bytes_gap or peak_gap for _, _, bytes_gap, peak_gap in levels):
        return lambda row: ()
    shared: dict[tuple, tuple[LevelGap, ...]] = {}

    def at(row: int) -> tuple[LevelGap, ...]:
        # Only a value the launch lacks is a gap; one it lacks though the report has its counters is unknown ('n/a').
        found = []
        for achieved, peak, bytes_gap, peak_gap in levels:
            if achieved[row] is None and bytes_gap:
                found.append(bytes_gap)
            elif peak[row] is None and peak_gap:
                found.append(peak_gap)
        return shared.setdefault(tuple(found), tuple(found))

    return at


def _positives(column: list) -> list:
    """Each value of a column as a float when it is a positive number, else None."""
    return [float(v) if isinstance(v, (int, float)) and v > 0 else None for v in column]


def _tensors(source: "_Launches"):
    """Row -> the launch's tensor-core work (None: none), its input type read once for all launches."""
    dtypes = source.column("tensor_dtype")

    def at(row: int) -> dict | None:
        dtype = dtypes[row]
        if not dtype:
            return None
        return {"dtype": dtype, "flops_per_s": source.value("tensor_flops_per_s", row), "peak_flops_per_s": source.value("tensor_peak_flops_per_s", row),
                "pct_of_peak": source.value("tensor_peak_pct", row)}

    return at


# Stall reasons worth naming: at least this share of all stall cycles.
_STALL_SHARE = 5.0


_STALLED = tuple(r for r in kernel_metrics.STALL_REASONS if r not in ("selected", "not_selected"))


def _stalls_of(source: "_Launches"):
    """Row -> the launch's leading stall reasons (at least _STALL_SHARE % of its stall cycles each),
    their names, shares and whether each is named worked out for all launches at once."""
    shares = source.stall_shares()
    if shares is None:
        return lambda row: ()
    order, share = shares
    names = [[_STALLED[i] for i in column] for column in order.T.tolist()]
    values = list(zip(*(clean_all(rank) for rank in share)))
    named = (share >= _STALL_SHARE).T.tolist()

    def at(row: int) -> tuple[Stall, ...]:
        return tuple(Stall(name, value) for name, value, keep in zip(names[row], values[row], named[row]) if keep)

    return at


def _ncu_rules(results, findings, rules, not_evaluated=()) -> tuple[NcuRule, ...]:
    """ncu's own rule results beside ncuwrap's findings: which finding each speaks about, and whether
    the two agree on what fixing it would buy (``not_evaluated``: the launch's rules ncuwrap could
    not evaluate, which neither agree nor differ)."""
    minor = rules.setting("gain_minor")
    by_id = {f.id: f for f in findings}
    unknown = {n.rule for n in not_evaluated}
    out = []
    for r in results:
        counterparts = rules.ncu_counterparts.get(r.rule, ())
        found = [by_id[c] for c in counterparts if c in by_id]
        counterpart = found[0].id if found else (counterparts[0] if counterparts else None)
        blind = [c for c in counterparts if c in unknown]
        out.append(NcuRule(rule=r.rule, section=r.section, kind=r.kind, speedup_type=r.speedup_type, estimated_speedup=clean(r.estimated_speedup),
                           message=r.message, counterpart=counterpart, agreement=_agreement(r, found, counterparts, minor, blind)))
    return tuple(out)


def _agreement(r, found, counterparts, minor: float, blind=()) -> str | None:
    if not counterparts or r.estimated_speedup is None:
        return None
    ncu_says = r.estimated_speedup >= minor
    if not found and blind:
        # An unmeasured waste is not an absent one: ncuwrap has no opinion to set against ncu's.
        return f"not evaluated here: ncuwrap could not evaluate {', '.join(blind)} (metrics missing)"
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


def _chart(source: _Launches, row: int) -> dict:
    chart = {name: source.value(name, row) for name in CHART_METRICS}
    return chart


def _isnan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _option(argv: list[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _source_info(profile: Profile, source: _Launches) -> SourceInfo:
    """The report's facts (verdict.SourceInfo): what recorded it, and how ncu was run."""
    s = profile.source
    # The command is read from the report's header, where a field tag can trail it (' "').
    command = s.command_line
    if command and command.endswith('"') and command.count('"') % 2:
        command = command[:-1].rstrip()
    clock_control = cache_control = None
    if s.command_line:
        try:
            argv = shlex.split(s.command_line.rstrip('"'))
        except ValueError:
            argv = s.command_line.split()
        # ncu's defaults: clocks locked to base, caches flushed between replay passes.
        clock_control = _option(argv, "--clock-control") or "base (ncu default)"
        cache_control = _option(argv, "--cache-control") or "all (ncu default)"
    clocks = source.table.get("sm_cycles_per_s")
    clock = clean(float(np.nanmedian(clocks)) / 1e6) if len(clocks) and not np.isnan(clocks).all() else None
    return SourceInfo(path=s.path, kind=s.kind, ncu_version=s.ncu_version, device=s.device, compute_capability=s.compute_capability,
                      command_line=command or s.command_line, sha256=s.sha256, clock_control=clock_control, cache_control=cache_control,
                      sm_clock_mhz=clock)


# L1 looking up fewer sectors than this share of the requests the SMs send to L2: their traffic bypasses L1.
# A request asks for 1 to 4 sectors of a line, and each one that comes from L1 follows a lookup of at least
# one sector there, so traffic that goes through L1 looks up at least one sector per request (1.0 to 8 on
# every kernel of tests/data). TMA copies and wgmma operands reach L2 as requests L1 never looked up: 0.00
# to 0.20 on the Hopper GEMMs, convolutions and attention kernels there (docs/roofline.md).
L1_CARRIES = 0.5


def _l1_where_it_carries(points: list, l1_sectors, l2_requests) -> tuple[list, tuple[float, float] | None]:
    """The L1 point only where L1 carries the kernel's traffic; otherwise the point says nothing about L1
    and sits at 10^4-10^6 FLOP/byte (Hopper GEMMs), stretching the chart, or at no bytes at all: left
    out, with (L1's sector lookups, the requests the SMs sent to L2) to say why."""
    if not points or not _number(l1_sectors) or not _number(l2_requests) or l2_requests <= 0 or l1_sectors >= L1_CARRIES * l2_requests:
        return points, None
    return [p for p in points if p.level != "L1"], (float(l1_sectors), float(l2_requests))


def _number(value) -> bool:
    return isinstance(value, (int, float)) and value == value


def needed_metrics(rules: ruleset.RuleSet) -> list[str]:
    """Raw metrics worth reading from a report (ncuwrap.kernel.metrics.report_metrics)."""
    return kernel_metrics.report_metrics(rules)


def diagnose(report: str | Path, rules: RulesChoice = RulesChoice(), *, ncu: str | None = None, label: str | None = None,
             ncu_rules: str | Path | None = None, select: LaunchSelection | None = None,
             source_page: str | Path | None = None, started=None) -> Diagnosis:
    """Load ``report`` and diagnose the launches ``select`` keeps (default: all) with ``rules`` (default: the bundled rules).

    ``label`` replaces the report's path in outputs (used for the bundled sample); ``ncu_rules``, a
    .ncu-rep or details-page CSV of the same report, supplies Nsight Compute's own rule results;
    ``source_page``, the source page of a CSV export's report, its per-instruction counters; ``started``,
    (rules, ncuwrap.kernel.reading.Loading of ``report``) when the caller loaded the rules and started the read."""
    if started is None:
        rule_set = ruleset.chosen(rules, kernel_metrics.KERNEL)
        profile = load(report, ncu=ncu, metrics=needed_metrics(rule_set))
    else:  # the caller loaded the rules and started reading the report (ncuwrap.api.diagnose)
        rule_set, profile = started[0], started[1].result()
    if ncu_rules is not None:
        profile.rules = rule_results(ncu_rules, ncu=ncu, of=profile)
    if source_page is not None:
        profile.sources, profile.source_gaps = ingest_source_page(source_page, profile)
    if label:
        profile.source = replace(profile.source, path=label)
    return diagnose_profile(profile, rule_set, select=select)
