"""The sentences of a kernel's diagnosis (``ncuwrap diagnose`` of a report, ``profile``): its verdict, findings and
their estimates, the next step, what was not evaluated, the program's share under ``--top``, a finding's hot source
lines. Every format (table, Markdown, HTML) takes them from here."""

from __future__ import annotations

from ncuwrap.render.phrasing import duration, gain
from ncuwrap.render.phrasing.timeline import launched_from


def launch(dims) -> str:
    return "x".join(str(d) for d in dims) if dims else "n/a"


def verdict(kernel) -> str:
    return kernel.verdict_label


def finding_gain(finding) -> str:
    """'est. 74% of the time (after the fix: dram limits)' for a finding with an estimate."""
    if finding.estimated_speedup is None:
        return ""
    after = f"; then {finding.limited_after} limits" if finding.limited_after else ""
    return f"est. {gain(finding.estimated_speedup)} of its time{after}"


def ncu_rule_line(rule) -> str:
    """One of Nsight Compute's rules beside ncuwrap's: 'UncoalescedGlobalAccess: est. 39% (global); differ: ...'."""
    est = f"est. {gain(rule.estimated_speedup)}" + (f" ({rule.speedup_type})" if rule.speedup_type else "") if rule.estimated_speedup is not None else rule.kind
    tail = f"; {rule.agreement}" if rule.agreement else ""
    return f"{rule.rule}: {est}{tail}"


def clock_note(diagnosis) -> str:
    """How the GPU clocks were handled while ncu measured, from the report's command line; a report
    without one (a CSV export) does not say, and neither does this."""
    control = diagnosis.source.clock_control
    if control is None:
        return "clock control unknown (the report does not record ncu's command line)"
    if control.startswith("none"):
        return "clocks were left alone (--clock-control none)"
    if control.startswith("base"):
        return "clocks were locked to base by ncu (--clock-control base, its default)"
    return f"clocks were set by ncu (--clock-control {control})"


def l1_left_out(roofline, series: str = "") -> str:
    """Why a roofline has no L1 point (Roofline.l1_left_out): the SMs' traffic reaches L2 without L1."""
    sectors, requests = roofline.l1_left_out
    return (f"{series + ': ' if series else ''}no L1 point: L1 looked up {round(sectors):,} sectors while the SMs sent "
            f"{round(requests):,} requests to L2: their traffic bypasses L1 (as TMA copies and wgmma operands do), so L1 does not "
            f"carry this kernel's traffic.")


def level_gap(gap, launches: int | None = None, of: int | None = None) -> str:
    """A memory level the charts lack for want of counters (verdict.LevelGap), in one line: what the charts cannot
    draw and how to collect it. ``launches`` of ``of``: said once for a report, in a format that draws no chart."""
    if launches is None:
        on, charts = "", "the charts"
    else:
        on = (f" on {launches} of {of} launches" if launches != of else " on every launch" if launches > 1 else "")
        charts = "the charts of --format html"
    if gap.part == "peak":
        return f"{gap.level}: peak {gap.why}{on}, so {charts} show {gap.level}'s bytes without its peak (no roof, no share of it); {gap.how}"
    return f"{gap.level}: {gap.why}{on}, so {charts} have no {gap.level} bar or point; {gap.how}"


def level_gap_lines(gaps: list, series: list[str]) -> list[str]:
    """The lines of the memory levels the charts of one kernel, or of a before/after pair (``series``), lack: a
    gap of one series only names it."""
    out = []
    for gap in dict.fromkeys(g for own in gaps for g in own):
        having = [name for own, name in zip(gaps, series) if gap in own]
        named = ", ".join(n for n in having if n) if len(having) < len(gaps) else ""
        out.append(f"{named + ': ' if named else ''}{level_gap(gap)}.")
    return out


def priority_line(p, program: bool, name) -> str:
    """``program``: the shares are of the whole program's GPU time (profile --top), not of the profiled time;
    ``name``: the document's kernel names (ncuwrap.render.names.Names)."""
    scope = "the program's GPU time" if program else "the profiled time"
    return (f"{name(p.name)}: fixing it saves ~{p.saves_pct:.1f}% of {scope} ({p.share_pct:.1f}% of the time x est. "
            f"{gain(p.gain_pct)} gain){f'; first: {p.headline}' if p.headline else ''}")


def fix_first_scope(diagnosis) -> str:
    """What the 'fix first' shares are of: the program's GPU time (profile --top) or the profiled time."""
    return f"share of {gpu_time_of(diagnosis.coverage)}" if diagnosis.coverage else "share of the time"


def fix_first_title(diagnosis) -> str:
    return f"Fix first ({fix_first_scope(diagnosis)} x estimated gain):"


def gpu_time_of(coverage) -> str:
    """Whose GPU time the shares of profile --top are of."""
    return "the steady steps' GPU time" if coverage.scope == "steady steps" else "the program's GPU time"


def coverage_line(c) -> str:
    """profile --top: the whole program as nsys measured it, and what the profiled kernels cover of it."""
    n = len(c.kernels)
    where = "Steady steps" if c.scope == "steady steps" else "Whole program"
    return (f"{where} (nsys, not instrumented): {duration(c.gpu_ns)} of GPU time in {c.launches:,} launches of "
            f"{c.distinct:,} kernels (by name and launch configuration); the {n} profiled kernel{'s' if n != 1 else ''} "
            f"(top {c.top} by GPU time, launch {c.nth_launch} of each) cover {c.covered_pct:.1f}% of it.")


def program_line(kernel, coverage) -> str | None:
    """A profiled kernel's launches and GPU time in the whole program (profile --top)."""
    covered = coverage.of(kernel.id) if coverage else None
    if covered is None:
        return None
    t = covered.time
    return (f"#{covered.rank} by GPU time: {t.launches:,} launch{'es' if t.launches != 1 else ''}, {duration(t.total_ns)} in total "
            f"({t.share_pct:.1f}% of {gpu_time_of(coverage)}); per launch median {duration(t.median_ns)}, "
            f"min {duration(t.min_ns)}, max {duration(t.max_ns)}"
            + (f"; from: {launched_from(t.launched_from)}" if t.launched_from is not None else ""))


def headline_text(kernel) -> str:
    """The summary line of a kernel: its first finding, and how many rules could not be evaluated."""
    head = kernel.headline
    text = head.title if head else no_issue(kernel)
    if kernel.not_evaluated:
        text += f" ({not_evaluated_count(kernel)})"
    return text


def no_issue(kernel) -> str:
    """What a kernel without a costly finding says: 'no issue found' only when nothing was found at all
    (a minor finding below it would make that false) and every rule could be evaluated (an
    unmeasured waste is not an absent one)."""
    minor = len(kernel.minor_findings)
    text = f"no costly issue found ({minor} minor)" if minor else "no issue found"
    if any(n.of_finding for n in kernel.not_evaluated):
        text += " by the rules evaluated"
    return text

_STALLED = "smsp__average_warps_issue_stalled_"


def undecided_line(step) -> str:
    """The next steps the rules could not decide on, grouped by what they lack: 'not decided without
    the warp stall reasons: More bytes in flight; Fewer synchronizations per byte (re-profile with ...)'."""
    groups: dict[tuple, list[str]] = {}
    for u in step.undecided:
        groups.setdefault((u.missing, u.how), []).append(u.title.split(":")[0])
    parts = []
    for (missing, how), titles in groups.items():
        what = ("the warp stall reasons" if all(m.startswith(_STALLED) for m in missing)
                else ", ".join(missing[:2]) + (f" and {len(missing) - 2} more" if len(missing) > 2 else ""))
        # The hint names the metrics and then how to collect them: the list is said above already.
        parts.append(f"without {what}: {'; '.join(titles)} ({how.split('; ', 1)[-1]})")
    return "not decided " + "; ".join(parts)


def not_evaluated_count(kernel) -> str:
    n = len(kernel.not_evaluated)
    return f"{n} rule{'s' if n != 1 else ''} not evaluated"


def reprofile_line(reprofile) -> str:
    """The report's one 'not evaluated' sentence: which rules, on how many launches, what to do."""
    n = reprofile.launches
    missing = len(reprofile.missing)
    return (f"{', '.join(reprofile.rules)} on {n} launch{'es' if n != 1 else ''}: {missing} metric{'s' if missing != 1 else ''} "
            f"missing (listed in --format json); {reprofile.how}.")


def process(kernel) -> str:
    """'pid 2709' or 'pid 2709 (templated)'."""
    if kernel.process_id is None:
        return "n/a"
    return f"pid {kernel.process_id}" + (f" ({kernel.process_name})" if kernel.process_name else "")


def where_note(where) -> str | None:
    """What a reader must know about a finding's lines: why there are none, or that they are SASS
    instructions only (code without line information), or how much of the waste they hold."""
    if where is None:
        return None
    if not hasattr(where, "lines"):
        return f"lines not known: {where.why}"
    if not where.by_line:
        return (f"SASS only (no line information for {where.function}: built without -lineinfo); "
                f"the instructions below hold {100 * where.covered:.0f}% of the waste")
    if where.spread_out:
        return f"spread out: the lines below hold {100 * where.covered:.0f}% of the {where.label}"
    return None


def hot_line(where, hot, first: bool = True, location: bool = True) -> str:
    """'transpose.cu:31  100% of the excess global store sectors  [@!P0 STG.E desc[UR4][R12.64], R7 +3 more]';
    the lines after the ``first`` give the share alone (the same waste); without ``location`` for
    formats that show it apart (a code span, a link)."""
    text = (f"{hot.location}  " if location else "") + f"{100 * hot.share:.0f}%" + (f" of the {where.label}" if first else "")
    if where.waste == "stall_samples" and hot.stalls:
        text += " (" + ", ".join(f"{reason} {100 * share:.0f}%" for reason, share in hot.stalls) + ")"
    sass = [i.sass for i in hot.instructions if i.sass]
    if sass:
        more = hot.contributors - 1
        text += f"  [{sass[0]}{f' +{more} more' if more > 0 else ''}]"
    return text


def hot_lines(where) -> list[tuple[str, str | None]]:
    """Each hot line's head (hot_line) and its source text (None where the report has none)."""
    if where is None or not hasattr(where, "lines"):
        return []
    return [(hot_line(where, hot, i == 0), hot.text) for i, hot in enumerate(where.lines)]
