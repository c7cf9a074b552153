"""Terminal output of a timeline diagnosis (rich): verdict, breakdown bar, API, kernels, copies,
Amdahl, findings."""

from __future__ import annotations

from rich.text import Text

from ncuwrap.render import names as N
from ncuwrap.render import phrasing as T
from ncuwrap.render import breakdown as B
from ncuwrap.render.escape import terminal
from ncuwrap.render.table import STYLE, Page
from ncuwrap.shown import TERMINAL_CALLS
from ncuwrap.timeline.model import CATEGORY_LABELS

_BAR_STYLE = {"kernel": "blue", "memcpy_htod": "dark_orange", "memcpy_dtoh": "red", "memcpy_dtod": "cyan",
              "memcpy_other": "magenta", "memset": "green", "idle": "bright_black"}


def render(diagnosis, width: int | None = None, color: bool = False, names: str = N.SHORT, **_options) -> str:
    page = Page(width, color)
    name = N.of(diagnosis, names)
    t = diagnosis.timeline
    page.line(T.timeline_header(diagnosis))
    page.line(diagnosis.why, label=f"Bound: {T.timeline_verdict(diagnosis)} -", label_style="bold")
    _window(page, t)
    _api(page, t)
    _kernels(page, t, name)
    _copies(page, t)
    console = page.console
    console.print(Text("\nIf the kernels were faster (Amdahl)", style="bold"))
    amdahl = _table(page, "kernels", "end to end", "speed-up", right=("end to end", "speed-up"))
    for row in t.amdahl:
        amdahl.add_row(row.label, T.duration(row.end_to_end_ns), f"{row.end_to_end_speedup:.2f}x")
    console.print(amdahl)
    page.line(T.amdahl_lesson(t), indent=2)

    findings(page, diagnosis)
    return page.text()


def _table(page: Page, *columns, right=(), names=()):
    """A table of the timeline's sections: no box, a plain list under its title."""
    return page.table(*columns, right=right, names=names, boxed=False)


def _window(page: Page, t) -> None:
    """The steady steps (when the timeline has them), the window's breakdown as a bar and a table, and the startup."""
    console = page.console
    if t.steps is not None:
        console.print(Text(f"\n{terminal(T.steps_title(t.steps))}", style="bold"))  # the NVTX name, escaped
        for label, line in T.step_lines(t):
            page.line(line, indent=2, label=label)
    console.print(Text(f"\n{T.window_title(t)}", style="bold"))
    bar = Text("  [")
    for segment, glyphs in B.text_runs(t):
        bar.append(glyphs, style=_BAR_STYLE[segment])
    bar.append("]")
    console.print(bar)
    console.print(Text(f"   {B.legend(t)}", style="dim"))
    breakdown = _table(page, "category", "time", "share", right=("time", "share"))
    for s in t.segments():
        breakdown.add_row(f"{B.GLYPHS[s.category]} {s.label}", T.duration(s.ns), T.percent(s.pct))
    console.print(breakdown)
    if t.steps is None:
        page.line(f"{T.duration(t.startup.duration_ns)}{' (host in: ' + t.startup.cause + ')' if t.startup.duration_ns else ''}",
                  indent=2, label=T.startup_label(t))


def _api(page: Page, t) -> None:
    """The CUDA API's time by category and its slowest calls, or a line saying it was not traced."""
    console = page.console
    if t.api_traced:
        console.print(Text("\nCUDA API (host)", style="bold"))
        api = _table(page, "category", "calls", "time", "share of window", right=("calls", "time", "share of window"))
        for row in t.api_rows():
            api.add_row(row.category, T.number(row.calls), T.duration(row.total_ns), T.percent(row.pct))
        console.print(api)
        page.line(", ".join(f"{a.name} {T.duration(a.total_ns)} ({a.calls}x)" for a in t.api[:TERMINAL_CALLS]), indent=2, label="slowest calls:")
    else:
        console.print(Text("\nCUDA API: not traced (capture with nsys profile --trace=cuda)", style="dim"))


def _kernels(page: Page, t, name: N.Names) -> None:
    """The top kernels (and the line that launched each), the host's time by user function, and the gaps between kernels."""
    console = page.console
    console.print(Text("\nTop kernels", style="bold"))
    kernels = _table(page, "kernel", "launches", "total", "median", "share", right=("launches", "total", "median", "share"), names=("kernel",))
    for k in t.top_kernels():
        kernels.add_row(N.Clamped(name(k.demangled)), T.number(k.count), T.duration(k.total_ns), T.duration(k.median_ns), T.percent(k.share_pct))
        if k.launched_from is not None:
            kernels.add_row(N.Clamped(f"  from: {T.launched_from(k.launched_from)}", "dim"), "", "", "", "")
    console.print(kernels)
    note = T.line_is_note(t.top_kernels(), t.host_time)
    if note:
        page.line(note, "dim", indent=2)
    if t.host_time:
        console.print(Text("\nHost time by user function (Python)", style="bold"))
        for h in t.host_time:
            page.line(T.host_time_line(h), indent=2)
    gaps = t.kernel_gaps
    if gaps["count"]:
        page.line(f"{gaps['count']}, median {T.duration(gaps['median_ns'])}, 90th percentile {T.duration(gaps['p90_ns'])}, "
                  f"longest {T.duration(gaps['max_ns'])}", indent=2, label="gaps between consecutive kernels:")


def _copies(page: Page, t) -> None:
    """The copies by kind, when the timeline has any."""
    if t.copies:
        page.console.print(Text("\nCopies", style="bold"))
        copies = _table(page, "kind", "count", "size", "time", "rate", "pageable", right=("count", "size", "time", "rate", "pageable"))
        for c in t.copies:
            copies.add_row(CATEGORY_LABELS[c.category], T.number(c.count), T.size(c.bytes), T.duration(c.total_ns), T.gbps(c.gbps),
                           "unknown" if c.pageable_count is None else f"{c.pageable_count} of {c.count}")
        page.console.print(copies)


def findings(page: Page, diagnosis) -> None:
    """The findings, the rules not evaluated and the notes of a timeline (or rank set) diagnosis."""
    page.console.print(Text("\nFindings", style="bold"))
    if not diagnosis.findings:
        page.console.print(Text("  none"))
    for f in diagnosis.findings:
        page.line(f.title, STYLE.get(f.severity, ""), indent=2, label=f"{f.severity.upper():6}")
        page.line(T.evidence(f), indent=9, label="evidence:")
        page.line(f.advice, indent=9, label="advice:")
    for n in diagnosis.not_evaluated:
        page.line(n.message, "dim", indent=2, label=f"{n.rule}:")
    for note in diagnosis.notes:
        page.line(note, "dim", indent=2, label="note:")

