"""Terminal output of a timeline diagnosis (rich): verdict, breakdown bar, API, kernels, copies,
Amdahl, findings."""

from __future__ import annotations

from rich.text import Text

from ncuwrap.render import names as kernel_names
from ncuwrap.render import phrasing
from ncuwrap.render.phrasing import timeline as timeline_text
from ncuwrap.render import breakdown
from ncuwrap.render import op_limits
from ncuwrap.render.escape import terminal
from ncuwrap.render.table import STYLE, Page
from ncuwrap.kernel.shown import TERMINAL_CALLS
from ncuwrap.timeline.model import CATEGORY_LABELS, GLYPHS, TERMINAL_STYLES



def render(diagnosis, width: int | None = None, color: bool = False, names: str = kernel_names.SHORT, **_options) -> str:
    page = Page(width, color)
    name = kernel_names.of(diagnosis, names)
    t = diagnosis.timeline
    page.line(timeline_text.timeline_header(diagnosis))
    page.line(diagnosis.why, label=f"Bound: {timeline_text.timeline_verdict(diagnosis)} -", label_style="bold")
    _window(page, t)
    _whatif(page, t)
    _api(page, t)
    _kernels(page, t, name)
    if t.op_limits is not None:
        _op_limits(page, t.op_limits)
    _copies(page, t)
    console = page.console
    console.print(Text("\nIf the kernels were faster (Amdahl)", style="bold"))
    amdahl = _table(page, "kernels", "end to end", "speed-up", right=("end to end", "speed-up"))
    for row in t.amdahl:
        amdahl.add_row(row.label, phrasing.duration(row.end_to_end_ns), f"{row.end_to_end_speedup:.2f}x")
    console.print(amdahl)
    page.line(timeline_text.amdahl_lesson(t), indent=2)

    findings(page, diagnosis)
    return page.text()


def _table(page: Page, *columns, right=(), names=()):
    """A table of the timeline's sections: no box, a plain list under its title."""
    return page.table(*columns, right=right, names=names, boxed=False)


def _window(page: Page, t) -> None:
    """The steady steps (when the timeline has them), the window's breakdown as a bar and a table, and the startup."""
    console = page.console
    if t.steps is not None:
        console.print(Text(f"\n{terminal(timeline_text.steps_title(t.steps))}", style="bold"))  # the NVTX name, escaped
        for label, line in timeline_text.step_lines(t):
            page.line(line, indent=2, label=label)
    console.print(Text(f"\n{timeline_text.window_title(t)}", style="bold"))
    bar = Text("  [")
    for segment, glyphs in breakdown.text_runs(t):
        bar.append(glyphs, style=TERMINAL_STYLES[segment])
    bar.append("]")
    console.print(bar)
    console.print(Text(f"   {breakdown.legend(t)}", style="dim"))
    shares = _table(page, "category", "time", "share", right=("time", "share"))
    for s in t.segments():
        shares.add_row(f"{GLYPHS[s.category]} {s.label}", phrasing.duration(s.ns), phrasing.percent(s.pct))
    console.print(shares)
    if t.steps is None:
        page.line(f"{phrasing.duration(t.startup.duration_ns)}{' (host in: ' + t.startup.cause + ')' if t.startup.duration_ns else ''}",
                  indent=2, label=timeline_text.startup_label(t))


def _whatif(page: Page, t) -> None:
    """What each remedy buys, as the steady steps' replay predicts it."""
    if t.whatif is None:
        return
    page.console.print(Text(f"\n{timeline_text.whatif_title(t.whatif)}", style="bold"))
    for label, line in timeline_text.whatif_lines(t.whatif):
        page.line(line, indent=2, label=label)


def _api(page: Page, t) -> None:
    """The CUDA API's time by category and its slowest calls, or a line saying it was not traced."""
    console = page.console
    if t.api_traced:
        console.print(Text("\nCUDA API (host)", style="bold"))
        api = _table(page, "category", "calls", "time", "share of window", right=("calls", "time", "share of window"))
        for row in t.api_rows():
            api.add_row(row.category, phrasing.number(row.calls), phrasing.duration(row.total_ns), phrasing.percent(row.pct))
        console.print(api)
        page.line(", ".join(f"{a.name} {phrasing.duration(a.total_ns)} ({a.calls}x)" for a in t.api[:TERMINAL_CALLS]), indent=2, label="slowest calls:")
    else:
        console.print(Text("\nCUDA API: not traced (capture with nsys profile --trace=cuda)", style="dim"))


def _kernels(page: Page, t, name: kernel_names.Names) -> None:
    """The top kernels (and the line that launched each), the host's time by user function, and the gaps between kernels."""
    console = page.console
    console.print(Text("\nTop kernels", style="bold"))
    kernels = _table(page, "kernel", "launches", "total", "median", "share", right=("launches", "total", "median", "share"), names=("kernel",))
    for k in t.top_kernels():
        kernels.add_row(kernel_names.Clamped(name(k.demangled)), phrasing.number(k.count), phrasing.duration(k.total_ns), phrasing.duration(k.median_ns),
                        phrasing.percent(k.share_pct))
        if k.launched_from is not None:
            kernels.add_row(kernel_names.Clamped(f"  from: {timeline_text.launched_from(k.launched_from)}", "dim"), "", "", "", "")
    console.print(kernels)
    note = timeline_text.line_is_note(t.top_kernels(), t.host_time)
    if note:
        page.line(note, "dim", indent=2)
    if t.host_time:
        console.print(Text("\nHost time by user function (Python)", style="bold"))
        for h in t.host_time:
            page.line(timeline_text.host_time_line(h), indent=2)
    gaps = t.kernel_gaps
    if gaps["count"]:
        page.line(f"{gaps['count']}, median {phrasing.duration(gaps['median_ns'])}, 90th percentile {phrasing.duration(gaps['p90_ns'])}, "
                  f"longest {phrasing.duration(gaps['max_ns'])}", indent=2, label="gaps between consecutive kernels:")


def _op_limits(page: Page, limits) -> None:
    """How far each op is from its limit: the step's MFU, its bytes, the per-op table, what is not modelled, the remedies."""
    page.console.print(Text(f"\n{op_limits.title(limits)}", style="bold"))
    page.line(op_limits.shapes_line(limits), "dim", indent=2)
    page.line(op_limits.step_line(limits), indent=2, label="step:")
    mask = op_limits.mask_line(limits)
    if mask:
        page.line(mask, indent=2, label="attention:")
    page.line(op_limits.bytes_line(limits), indent=2, label="bytes:")
    rows = [op_limits.cells(r) for r in limits.top()]

    def build(shown):
        table = page.table(*shown, right=op_limits.RIGHT, names=("op", "shapes"), boxed=False)
        for row in rows:
            table.add_row(*(row[c] for c in shown))
        return table

    table, left_out, whole = page.fit(build, op_limits.COLUMNS, op_limits.DROP)
    page.print(table)
    if left_out:
        page.line(f"{', '.join(left_out)}: in --format json (a terminal of {whole} columns shows them in the table)", "dim",
                  label="left out of the table:")
    rest = op_limits.rest_line(limits)
    if rest:
        page.line(rest, "dim", indent=2)
    _advice(page, limits)
    page.line(op_limits.coverage_line(limits), indent=2, label="modelled:")
    for line in op_limits.unit_lines(limits):
        page.line(line, "dim", indent=2)
    page.line(op_limits.peaks_line(limits), "dim", indent=2, label="peaks:")
    for label, text in op_limits.remedy_lines(limits):
        page.line(text, indent=2, label=label)


def _advice(page: Page, limits) -> None:
    """The causes of each matrix product far below its limit, where there is one."""
    shown, _, _ = limits.top_advice()
    if not shown:
        return
    page.line(op_limits.advice_title(limits) + ":", indent=2)
    for a in shown:
        page.line(op_limits.advice_head(a), indent=4)
        page.line(op_limits.tiling_text(a), "dim", indent=6, label="tiles:")
        for label, text in op_limits.cause_lines(a):
            page.line(text, indent=6, label=label)
    rest = op_limits.advice_rest(limits)
    if rest:
        page.line(rest, "dim", indent=4)


def _copies(page: Page, t) -> None:
    """The copies by kind, when the timeline has any."""
    if t.copies:
        page.console.print(Text("\nCopies", style="bold"))
        copies = _table(page, "kind", "count", "size", "time", "rate", "pageable", right=("count", "size", "time", "rate", "pageable"))
        for c in t.copies:
            copies.add_row(CATEGORY_LABELS[c.category], phrasing.number(c.count), phrasing.size(c.bytes), phrasing.duration(c.total_ns), phrasing.gbps(c.gbps),
                           "unknown" if c.pageable_count is None else f"{c.pageable_count} of {c.count}")
        page.console.print(copies)


def findings(page: Page, diagnosis) -> None:
    """The findings, the rules not evaluated and the notes of a timeline (or rank set) diagnosis."""
    page.console.print(Text("\nFindings", style="bold"))
    if not diagnosis.findings:
        page.console.print(Text("  none"))
    for f in diagnosis.findings:
        page.line(f.title, STYLE.get(f.severity, ""), indent=2, label=f"{f.severity.upper():6}")
        page.line(phrasing.evidence(f), indent=9, label="evidence:")
        page.line(f.advice, indent=9, label="advice:")
    for n in diagnosis.not_evaluated:
        page.line(n.message, "dim", indent=2, label=f"{n.rule}:")
    for note in diagnosis.notes:
        page.line(note, "dim", indent=2, label="note:")

