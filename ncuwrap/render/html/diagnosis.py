"""HTML output of a kernel diagnosis (templates/diagnosis.html): a table of contents, the summary, a
collapsible section per kernel, what could not be evaluated (once), the environment.

A report with many launches stays small; what it shows is decided by ncuwrap.kernel.shown (its PAGE preset):
each kernel's longest launch gets the full section (decision path, findings, charts) before any
kernel's second launch does; the summary lists the top launches; of the others, each kernel's listed
launches (KernelGroup.listed: all of a few, else the longest and those that differ) are one row of a
table. Where some kernel ran more than once, a "By kernel" table comes first: one row per kernel
(Diagnosis.groups(): count, total, median, min, max) with its listed launches inside.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ncuwrap.core.version import __version__
from ncuwrap.render import names as kernel_names
from ncuwrap.render.html import environment, svg
from ncuwrap.render import phrasing
from ncuwrap.render.phrasing import bench as bench_text
from ncuwrap.render.phrasing import kernel as kernel_text
from ncuwrap.kernel.shown import PAGE, Shown, layout


@dataclass(frozen=True)
class FindingView:
    """A finding of a kernel on the HTML page, with the anchor that links to it."""
    finding: object  # FindingResult
    anchor: str


@dataclass(frozen=True)
class KernelView:
    """A kernel as the HTML diagnosis page draws it: its rank, share, findings, charts and occupancy limits (from :func:`kernel_view`)."""
    rank: int
    anchor: str
    kernel: object  # KernelVerdict
    share: str
    detailed: bool
    findings: list = field(default_factory=list)
    charts: dict = field(default_factory=dict)
    occupancy_limits: list = field(default_factory=list)
    open: bool = False  # the section starts unfolded
    program: str | None = None  # profile --top: its launches and GPU time in the whole program


_LIMITS = (("registers", "occ_limit_registers"), ("shared memory", "occ_limit_shared_mem"),
           ("warps", "occ_limit_warps"), ("block limit", "occ_limit_blocks"))


def roofline_note(rooflines: list) -> str | None:
    """Why there is no roofline chart, in one line (None when there is one): its counters were not
    collected, or the kernel does no arithmetic of the kind (a point at 0 FLOP/s says nothing)."""
    shown = [r for r in rooflines if r is not None]
    if any(r.says_something for r in shown):
        return None
    lacking = next((r for r in shown if r.missing), None)
    if lacking is not None or not shown:
        if lacking is None:
            return "No roofline: the report has none of its counters."
        n = len(lacking.missing)
        return f"No roofline: {n} of its counter{'s' if n != 1 else ''} not collected; {lacking.how}."
    last = shown[-1]
    if any(r.points for r in shown):
        return f"No roofline: the report's peak {last.label} rate or memory peaks are zero."
    return f"No roofline: the kernel does no {last.label} arithmetic (0 FLOP/s); the bandwidth chart shows where it stands."


def kernel_charts(kernels: list, series: list[str] | None = None) -> dict:
    """The charts of one kernel's verdict (or of a before/after pair's, ``series``), as Markup, and their notes: why
    there is no roofline, the L1 point left out, the memory levels the report holds no counter of."""
    charts, rooflines, gaps = [k.chart_metrics or {} for k in kernels], [k.roofline for k in kernels], [k.level_gaps for k in kernels]
    return {
        "roofline_note": roofline_note(rooflines),
        "roofline_left_out": [kernel_text.l1_left_out(r, name) for r, name in zip(rooflines, series or [""]) if r is not None and r.l1_left_out],
        "roofline": svg.roofline(rooflines, series, gaps=gaps),
        "bandwidth": svg.bandwidth(charts, series, gaps),
        "level_gaps": kernel_text.level_gap_lines(gaps, series or [""]),
        "sol": svg.sol(charts, series),
        "occupancy": svg.occupancy(charts, series),
    }


def kernel_view(kernel, rank: int, share_pct: float | None, detailed: bool, coverage=None, unfolded: bool = False) -> KernelView:
    share = phrasing.share(share_pct)
    anchor = f"k{rank}"
    if not detailed:
        return KernelView(rank, anchor, kernel, share, False)
    findings = [FindingView(f, f"{anchor}-{f.id}") for f in kernel.findings if not f.minor]
    chart = kernel.chart_metrics or {}
    limits = [(label, chart.get(key)) for label, key in _LIMITS if chart.get(key) is not None]
    return KernelView(rank, anchor, kernel, share, True, findings, kernel_charts([kernel]), limits, unfolded,
                      kernel_text.program_line(kernel, coverage))


def environment_rows(diagnosis) -> list[tuple[str, object]]:
    """(label, value) rows of the environment block (the report's facts, verdict.SourceInfo); None
    shows as 'not recorded in the report'."""
    source = diagnosis.source
    clock = source.sm_clock_mhz
    return [
        ("GPU", source.device),
        ("compute capability", source.compute_capability),
        ("driver", source.driver),
        ("Nsight Compute", source.ncu_version),
        ("clock control", source.clock_control),
        ("cache control", source.cache_control),
        ("SM clock while profiled", f"{phrasing.number(clock)} MHz (median over the launches)" if clock is not None else None),
        ("command line", source.command_line),
        ("report", source.path),
        ("report kind", source.kind),
        ("report sha256", source.sha256),
        ("ncuwrap", __version__),
        ("rules", f"{diagnosis.rules_name} version {diagnosis.rules_version} ({diagnosis.rules_path})"),
    ]


clock_note = kernel_text.clock_note


def page(diagnosis, name: kernel_names.Names, shown: Shown = PAGE) -> dict:
    """What the diagnosis template draws."""
    parts = layout(diagnosis, shown)
    kernels = parts.launches
    total = diagnosis.total_ns
    views = [kernel_view(k, rank, diagnosis.share_pct([k]), k.id in parts.sections, diagnosis.coverage, parts.unfolded(rank))
             for rank, k in enumerate(kernels, start=1)]
    rest = {k.id for k in parts.rest}
    first = [(p, kernel_text.priority_line(p, bool(diagnosis.coverage), name)) for p in parts.fix_first]
    return {
        "title": diagnosis.source.path,
        "device": diagnosis.source.device or "unknown GPU",
        "count": len(kernels),
        "total": phrasing.duration(total) if total else "n/a",
        "summary": views[:parts.summary],
        "detailed": [v for v in views if v.detailed],
        "rest": [v for v in views[parts.summary:] if v.kernel.id in rest],
        "below": parts.below,
        "rest_left_out": parts.rest_left_out,
        "rest_share": phrasing.share(parts.rest_share_pct),
        "environment": environment_rows(diagnosis),
        "clock_note": clock_note(diagnosis),
        "fix_first": [line for _, line in first],
        "fix_first_bars": svg.fix_first_bars([(name(p.name), p.share_pct or 0.0, p.saves_pct or 0.0, line) for p, line in first]),
        "rooflines": svg.report_rooflines([(label, [(name(g.name), g.longest.roofline, g.longest.level_gaps) for g in groups])
                                           for label, groups in parts.rooflines]),
        # What the report's rooflines lack, of the kernels they draw (their longest launches).
        "roofline_gaps": kernel_text.level_gap_lines([g.longest.level_gaps for _, groups in parts.rooflines for g in groups],
                                                     [name(g.name) for _, groups in parts.rooflines for g in groups]),
        "fix_first_note": ("Share of the program's GPU time (nsys)" if diagnosis.coverage else "Share of the profiled time"),
        "coverage": kernel_text.coverage_line(diagnosis.coverage) if diagnosis.coverage else None,
        "processes": len(diagnosis.processes) > 1,
        "streams": len(diagnosis.streams) > 1,
        # One row per kernel (with its launches inside) where some kernel ran more than once.
        "groups": [(g, parts.listed[g.name]) for g in parts.groups] if diagnosis.grouped else [],
        "anchors": {v.kernel.id: v.anchor for v in views if v.detailed},
        "reprofile": diagnosis.reprofile,
        "lines_hint": diagnosis.lines_hint,
        "notes": list(diagnosis.notes),
        "stop_line": bench_text.stop_line_text(diagnosis.stop_line) if diagnosis.stop_line is not None else None,
        "stop_line_decision": diagnosis.stop_line.decision if diagnosis.stop_line is not None else None,
        "toc": len(kernels) > 1,
    }


def render(diagnosis, shown: Shown = PAGE, names: str = kernel_names.SHORT, **_options) -> str:
    template = environment().get_template("diagnosis.html")
    name = kernel_names.of(diagnosis, names)
    return template.render(page=page(diagnosis, name, shown), version=__version__, name=name)
