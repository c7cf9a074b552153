"""Terminal output: a summary table ranked by time, then each kernel's findings (rich)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ncuwrap.render import text as T

_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan", "info": "green", "minor": "dim"}


def render(diagnosis, width: int = 120, color: bool = False, **_options) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=color, color_system="standard" if color else None, highlight=False)
    source = diagnosis.source
    console.print(Text(f"{source.path}  ({source.kind}; {source.device or 'unknown GPU'}, CC {source.compute_capability or '?'}, "
                       f"ncu {source.ncu_version or 'version unknown'})"))
    kernels = diagnosis.by_time()
    total = sum(k.duration_ns or 0 for k in kernels)
    summary = Table(show_lines=False, header_style="bold")
    for column in ("#", "launch", "kernel", "time (ncu)", "share", "verdict", "gain", "headline"):
        summary.add_column(column, overflow="fold")
    for rank, k in enumerate(kernels, 1):
        head = k.headline
        summary.add_row(str(rank), str(k.id), Text(k.name), T.duration(k.duration_ns), T.share(k, total), T.verdict(k),
                        T.gain(k.estimated_gain_pct), Text(T.headline_text(k), style=_STYLE.get(head.severity, "") if head else ""))
    console.print(summary)
    first = T.fix_first(diagnosis)
    if len(kernels) > 1 and first:
        console.print(Text("Fix first (share of the time x estimated gain):", style="bold"))
        for i, p in enumerate(first, 1):
            console.print(Text(f"  {i}. {T.priority_line(p)}"))
    for rank, k in enumerate(kernels, 1):
        console.print(Text(f"\n{rank}. {k.display_name}  (launch {k.id})", style="bold"))
        console.print(Text(f"  {T.verdict(k)}: {k.why}"))
        for f in k.findings:
            gain = T.finding_gain(f)
            console.print(Text(f"  {f.severity.upper():6} {f.title}" + (f"  [{gain}]" if gain else ""), style=_STYLE.get(f.severity, "")))
            if f.minor:
                continue
            evidence = ", ".join(f"{name}={T.number(value)}" for name, value in f.evidence.items())
            console.print(Text(f"         evidence: {evidence}"))
            console.print(Text(f"         advice: {f.advice}"))
        for r in T.ncu_rules_shown(k):
            console.print(Text(f"  ncu    {T.ncu_rule_line(r)}", style="dim"))
        for n in k.not_evaluated:
            console.print(Text(f"  {n.rule}: {n.message}", style="dim"))
    console.print(Text(f"\nDurations are ncu's, instrumented (each kernel replayed; clocks {T.clock_note(diagnosis)}): "
                       "use 'ncuwrap bench' for real timings."))
    return buffer.getvalue()
