"""Terminal output of a timeline diagnosis (rich): verdict, breakdown bar, API, kernels, copies,
Amdahl, findings."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ncuwrap.render import text as T
from ncuwrap.render import breakdown as B
from ncuwrap.timeline.model import CATEGORY_LABELS

_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan", "info": "green"}
_BAR_STYLE = {"kernel": "blue", "memcpy_htod": "dark_orange", "memcpy_dtoh": "red", "memcpy_dtod": "cyan",
              "memcpy_other": "magenta", "memset": "green", "idle": "bright_black"}


def _table(*columns: str, right: tuple[str, ...] = ()) -> Table:
    table = Table(show_lines=False, header_style="bold", box=None, pad_edge=False)
    for column in columns:
        table.add_column(column, justify="right" if column in right else "left", overflow="fold")
    return table


def render(diagnosis, width: int = 120, color: bool = False, **_options) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=color, color_system="standard" if color else None, highlight=False)
    t = diagnosis.timeline
    console.print(Text(T.timeline_header(diagnosis)))
    console.print(Text(f"Bound: {T.timeline_verdict(diagnosis)}", style="bold"), Text(f"- {diagnosis.why}"))

    console.print(Text(f"\nTraced window: {T.duration(t.window_ns)}", style="bold"))
    bar = Text("  [")
    for segment, glyphs in _bar_runs(diagnosis):
        bar.append(glyphs, style=_BAR_STYLE[segment])
    bar.append("]")
    console.print(bar)
    console.print(Text(f"   {B.legend(t)}", style="dim"))
    breakdown = _table("category", "time", "share", right=("time", "share"))
    for s in t.segments():
        breakdown.add_row(f"{B.GLYPHS[s.category]} {s.label}", T.duration(s.ns), T.percent(s.pct))
    console.print(breakdown)
    console.print(Text(f"  start-up (first CUDA call to first GPU work): {T.duration(t.startup.duration_ns)}"
                       f"{' (host in: ' + t.startup.cause + ')' if t.startup.duration_ns else ''}"))

    if t.api_traced:
        console.print(Text("\nCUDA API (host)", style="bold"))
        api = _table("category", "calls", "time", "share of window", right=("calls", "time", "share of window"))
        for row in t.api_rows():
            api.add_row(row.category, T.number(row.calls), T.duration(row.total_ns), T.percent(row.pct))
        console.print(api)
        console.print(Text("  slowest calls: " + ", ".join(f"{a.name} {T.duration(a.total_ns)} ({a.calls}x)" for a in t.api[:5])))
    else:
        console.print(Text("\nCUDA API: not traced (capture with nsys profile --trace=cuda)", style="dim"))

    console.print(Text("\nTop kernels", style="bold"))
    kernels = _table("kernel", "launches", "total", "median", "share", right=("launches", "total", "median", "share"))
    for k in t.top_kernels():
        kernels.add_row(Text(k.name), T.number(k.count), T.duration(k.total_ns), T.duration(k.median_ns), T.percent(k.share_pct))
    console.print(kernels)
    gaps = t.kernel_gaps
    if gaps["count"]:
        console.print(Text(f"  gaps between consecutive kernels: {gaps['count']}, median {T.duration(gaps['median_ns'])}, "
                           f"90th percentile {T.duration(gaps['p90_ns'])}, longest {T.duration(gaps['max_ns'])}"))

    if t.copies:
        console.print(Text("\nCopies", style="bold"))
        copies = _table("kind", "count", "size", "time", "rate", "pageable", right=("count", "size", "time", "rate", "pageable"))
        for c in t.copies:
            copies.add_row(CATEGORY_LABELS[c.category], T.number(c.count), T.size(c.bytes), T.duration(c.total_ns), T.gbps(c.gbps),
                           "unknown" if c.pageable_count is None else f"{c.pageable_count} of {c.count}")
        console.print(copies)

    console.print(Text("\nIf the kernels were faster (Amdahl)", style="bold"))
    amdahl = _table("kernels", "end to end", "speed-up", right=("end to end", "speed-up"))
    for row in t.amdahl:
        amdahl.add_row(row.label, T.duration(row.end_to_end_ns), f"{row.end_to_end_speedup:.2f}x")
    console.print(amdahl)
    console.print(Text(f"  {T.amdahl_lesson(t)}"))

    console.print(Text("\nFindings", style="bold"))
    if not diagnosis.findings:
        console.print(Text("  none"))
    for f in diagnosis.findings:
        console.print(Text(f"  {f.severity.upper():6} {f.title}", style=_STYLE.get(f.severity, "")))
        console.print(Text(f"         evidence: {T.evidence(f)}"))
        console.print(Text(f"         advice: {f.advice}"))
    for n in diagnosis.not_evaluated:
        console.print(Text(f"  {n.rule}: {n.message}", style="dim"))
    for note in diagnosis.notes:
        console.print(Text(f"  note: {note}", style="dim"))
    return buffer.getvalue()


def _bar_runs(diagnosis):
    bar = B.text_bar(diagnosis.timeline)
    glyph_to_category = {B.GLYPHS[s.category]: s.category for s in diagnosis.timeline.segments()}
    runs: list[tuple[str, str]] = []
    for ch in bar:
        category = glyph_to_category[ch]
        if runs and runs[-1][0] == category:
            runs[-1] = (category, runs[-1][1] + ch)
        else:
            runs.append((category, ch))
    return runs
