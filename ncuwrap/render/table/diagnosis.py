"""Terminal output of a kernel diagnosis: a summary ranked by time, then each kernel's verdict and
findings, and once for the report what could not be evaluated."""

from __future__ import annotations

from ncuwrap.render import names as kernel_names
from ncuwrap.render import phrasing
from ncuwrap.render.phrasing import bench as bench_text
from ncuwrap.render.phrasing import kernel as kernel_text
from ncuwrap.render.table import STYLE, Page, summary_columns

# From this many columns the summary table has room for each kernel's headline, and from MEDIUM for
# the launch number (each kernel's section names it): narrower, a kernel's name needs the room.
WIDE = 110
MEDIUM = 100
# The launches of a kernel listed under its section (in launch order).


def _group_rows(groups, name: kernel_names.Names) -> list[dict]:
    """One row per kernel: its launches, ncu's total, median, min and max time, and its longest launch's verdict."""
    rows = []
    for rank, g in enumerate(groups, 1):
        k = g.longest
        rows.append({"#": str(rank), "kernel": kernel_names.Clamped(name(g.name)), "launches": str(g.count), "total (ncu)": phrasing.duration(g.total_ns),
                     "median": phrasing.duration(g.median_ns), "min": phrasing.duration(g.min_ns), "max": phrasing.duration(g.max_ns),
                     "share": phrasing.percent(g.share_pct),
                     "verdict": kernel_text.verdict(k), "gain": phrasing.gain(k.estimated_gain_pct),
                     "headline": _headline(k)})
    return rows


def _launch_rows(diagnosis, name: kernel_names.Names) -> list[dict]:
    """One row per launch, by time."""
    rows = []
    for rank, k in enumerate(diagnosis.by_time(), 1):
        rows.append({"#": str(rank), "launch": str(k.id), "kernel": kernel_names.Clamped(name(k.name)),
                     "process": kernel_names.Clamped(kernel_text.process(k)), "stream": k.stream or "n/a",
                     "time (ncu)": phrasing.duration(k.duration_ns), "share": phrasing.share(diagnosis.share_pct([k])), "verdict": kernel_text.verdict(k),
                     "gain": phrasing.gain(k.estimated_gain_pct),
                     "headline": _headline(k)})
    return rows


def _headline(k) -> kernel_names.Clamped:
    """A launch's headline in the summary, in its severity's style."""
    head = k.headline
    return kernel_names.Clamped(kernel_text.headline_text(k), STYLE.get(head.severity, "") if head else "")


def _listed(columns: list[str]) -> str:
    return columns[0] if len(columns) == 1 else f"{', '.join(columns[:-1])} and {columns[-1]}"


def group_line(group) -> str:
    """'2 launches, 50.56 us in all (45.6% of the ncu time); per launch median 25.28 us, min 24.93 us, max 25.63 us'."""
    return (f"{group.count} launches, {phrasing.duration(group.total_ns)} in all ({phrasing.percent(group.share_pct)} of the ncu time); "
            f"per launch median {phrasing.duration(group.median_ns)}, min {phrasing.duration(group.min_ns)}, max {phrasing.duration(group.max_ns)}")


def _launches(page: Page, listed, processes: bool, streams: bool):
    """A kernel's listed launches (KernelGroup.listed), in the order they ran: the process and stream where
    the report has several."""
    # A process's name comes from the program: wrapped like a kernel's, not to squeeze the numbers.
    table = page.table("launch", *(("process",) if processes else ()), *(("stream",) if streams else ()), "time (ncu)", "verdict", "gain",
                       right=("launch", "time (ncu)", "gain"), names=("process",))
    for k in listed:
        table.add_row(str(k.id), *((kernel_names.Clamped(kernel_text.process(k)),) if processes else ()), *((k.stream or "n/a",) if streams else ()),
                      phrasing.duration(k.duration_ns), kernel_text.verdict(k), phrasing.gain(k.estimated_gain_pct))
    return table


def render(diagnosis, width: int | None = None, color: bool = False, names: str = kernel_names.SHORT, **_options) -> str:
    page = Page(width, color)
    name = kernel_names.of(diagnosis, names)
    source = diagnosis.source
    page.line(f"{source.path}  ({source.kind}; {source.device or 'unknown GPU'}, CC {source.compute_capability or '?'}, "
              f"ncu {source.ncu_version or 'version unknown'})")
    if diagnosis.coverage:
        page.line(kernel_text.coverage_line(diagnosis.coverage))
    processes = len(diagnosis.processes) > 1
    streams = len(diagnosis.streams) > 1
    groups = diagnosis.groups()
    _summary(page, diagnosis, groups, name, processes, streams)
    first = diagnosis.fix_first()
    if first:
        page.line(kernel_text.fix_first_title(diagnosis), "bold")
        for i, p in enumerate(first, 1):
            page.line(kernel_text.priority_line(p, bool(diagnosis.coverage), name), indent=2, label=f"{i}.")
    told: dict[str, int] = {}  # next-step advice already printed -> the kernel it was printed for
    for rank, group in enumerate(groups, 1):
        _kernel_section(page, diagnosis, group, rank, name, (processes, streams), told)
    if diagnosis.reprofile:
        page.heading("Not evaluated")
        page.line(kernel_text.reprofile_line(diagnosis.reprofile), indent=2)
    gaps = diagnosis.level_gaps()
    if gaps:  # the charts are HTML's; what they lack is said here too
        page.heading("Charts")
        for g in gaps:
            page.line(kernel_text.level_gap(g.gap, g.launches, len(diagnosis.kernels)) + ".", indent=2)
    if diagnosis.lines_hint:
        page.heading("Source lines")
        page.line(f"not attributed: {diagnosis.lines_hint}.", indent=2)
    if diagnosis.stop_line is not None:
        page.heading("Stop line")
        page.line(bench_text.stop_line_text(diagnosis.stop_line), indent=2)
    if diagnosis.notes:
        page.heading("Notes")
        for note in diagnosis.notes:
            page.line(note, "dim", indent=2)
    page.console.print()
    page.line(f"Durations are ncu's, instrumented (each kernel replayed; {kernel_text.clock_note(diagnosis)}): use 'ncuwrap bench' for real timings.")
    return page.text()


def _summary(page: Page, diagnosis, groups, name: kernel_names.Names, processes: bool, streams: bool) -> None:
    """The summary table, a row per kernel (grouped) or per launch, fitted to the terminal's width."""
    # The headline (first line of each kernel's section below) is in the table from WIDE columns, the launch
    # number from MEDIUM; narrower, a kernel's name needs the room. Columns that still do not fit leave the
    # table too (the spread of a kernel's times, then the process and stream), each kernel's section has them.
    wide, medium = page.width >= WIDE, page.width >= MEDIUM
    if diagnosis.grouped:
        rows = _group_rows(groups, name)
        every = ("#", "kernel", "launches", "total (ncu)", "median", "min", "max", "share", "verdict", "gain", "headline")
        drop = (("min", "max"), ("median",))
    else:
        rows = _launch_rows(diagnosis, name)
        every = ("#", "launch", "kernel", *(("process",) if processes else ()), *(("stream",) if streams else ()), "time (ncu)", "share", "verdict",
                 "gain", "headline")
        drop = (("stream",), ("process",))
    narrow = () if wide else ("headline",) if medium or diagnosis.grouped else ("launch", "headline")
    narrow += () if wide or not diagnosis.grouped else ("min", "max")

    def build(columns):
        summary = page.table(*columns, right=("#", "launch", "launches", "total (ncu)", "median", "min", "max", "time (ncu)", "share", "gain"),
                             names=("kernel", "process"), prose=("headline",))
        for row in rows:
            summary.add_row(*(row[c] for c in columns))
        return summary

    summary, _, _ = page.fit(build, tuple(c for c in every if c not in narrow), drop)
    page.print(summary)
    left_out = [c for c in every if c not in summary_columns(summary)]
    if left_out:
        page.left_out(_listed(left_out), "each kernel's section", max(WIDE, page.narrowest(build, every)))


def _kernel_section(page: Page, diagnosis, group, rank: int, name: kernel_names.Names, several: tuple[bool, bool], told: dict) -> None:
    """A kernel's section: its longest launch's verdict, findings and next step, then its launches."""
    processes, streams = several
    k = group.longest
    where = ", ".join([f"launch {k.id}", *([kernel_text.process(k)] if processes else []), *([f"stream {k.stream or 'n/a'}"] if streams else [])])
    if group.count > 1:
        where = f"the longest of {group.count} launches: {where}"
    # The name as the summary shows it (short by default); --names demangled: the whole signature.
    shown = k.display_name if name.style == kernel_names.DEMANGLED else name(k.name)
    page.heading(f"{rank}. {shown}  ({where})")
    program = kernel_text.program_line(k, diagnosis.coverage)
    if program:
        page.line(program, indent=2, label="program:")
    if group.count > 1:
        page.line(group_line(group), indent=2)
    if len(group.verdicts) > 1:
        page.line(", ".join(f"{label} x{count}" for label, count in group.verdicts), indent=2, label="verdicts over the launches:")
    page.line(k.why, indent=2, label=f"{kernel_text.verdict(k)}:", label_style="bold")
    _where(page, k.where, indent=4, label="stalls at:")
    if k.headline is None:
        page.line(kernel_text.no_issue(k), indent=2)
    _findings(page, k.findings)
    _next_step(page, k.next_step, told, rank)
    for r in k.ncu_rules_shown:
        page.line(kernel_text.ncu_rule_line(r), "dim", indent=2, label="ncu   ")
    if k.not_evaluated:
        page.line(kernel_text.not_evaluated_count(k) + " (see the end)", "dim", indent=2)
    if group.count > 1:
        listed = group.listed()
        page.print(_launches(page, listed, processes, streams))
        left_out = group.count - len(listed)
        if left_out:
            page.line(f"the longest and those that differ from the rest; {left_out} more like the rest (--format json lists them all)",
                      "dim", indent=2)


def _findings(page: Page, findings) -> None:
    """A launch's findings: the title and estimated gain of each, the evidence, lines and advice of those not minor."""
    for f in findings:
        gain = kernel_text.finding_gain(f)
        page.line(f.title + (f"  [{gain}]" if gain else ""), STYLE.get(f.severity, ""), indent=2, label=f"{f.severity.upper():6}")
        if f.minor:
            continue
        evidence = ", ".join(f"{name}={phrasing.number(value)}" for name, value in f.evidence.items())
        page.line(evidence, indent=9, label="evidence:")
        _where(page, f.where, indent=9, label="at:")
        page.line(f.advice, indent=9, label="advice:")


def _next_step(page, step, told: dict, rank: int) -> None:
    """The rules' next step for a kernel no costly finding explains, and what could not be decided;
    advice already printed for a kernel above is pointed at, not repeated."""
    if step is None:
        return
    if step.id is not None:
        first = told.setdefault(step.advice, rank)
        page.line(step.title + (f" (as for kernel {first})" if first != rank else ""), "bold", indent=2, label="next:")
        if first == rank:
            page.line(step.advice, indent=8)
    if step.undecided:
        page.line(kernel_text.undecided_line(step), "dim", indent=8 if step.id is not None else 2, label="" if step.id is not None else "next:")


def _where(page, where, *, indent: int, label: str) -> None:
    """The lines holding a waste (location, share, SASS), each with its source text beneath it."""
    note = kernel_text.where_note(where)
    if note:
        page.line(note, "dim", indent=indent, label=label)
        label = " " * len(label)
    for head, text in kernel_text.hot_lines(where):
        page.line(head, indent=indent, label=label)
        label = " " * len(label)
        if text:
            page.line(text, "dim", indent=indent + len(label) + 3)
