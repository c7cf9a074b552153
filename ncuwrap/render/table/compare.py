"""Terminal output of ``ncuwrap compare``: one row per kernel pair, then what changed in each (rich)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ncuwrap.render import text as T


def render(result, width: int = 120, color: bool = False, **_options) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=color, color_system="standard" if color else None, highlight=False)
    b, a = result.before.source, result.after.source
    console.print(Text(f"before: {b.path}  ({b.device or 'unknown GPU'}, ncu {b.ncu_version or '?'})"))
    console.print(Text(f"after:  {a.path}  ({a.device or 'unknown GPU'}, ncu {a.ncu_version or '?'})"))
    summary = Table(header_style="bold")
    for column in ("kernel", "verdict", "ncu duration (instrumented)", "estimated", "real speedup", "resolved", "introduced"):
        summary.add_column(column, overflow="fold")
    for p in result.pairs:
        d = p.deltas["duration_ns"]
        summary.add_row(Text(p.name), Text(T.verdict_change(p)),
                        Text(f"{T.duration(d.before)} → {T.duration(d.after)} ({T.speedup(p.ncu_speedup)})"),
                        Text(T.gain_factor(p.estimated_gain_pct)), Text(T.speedup(p.speedup)),
                        Text(", ".join(p.resolved) or "-", style="green" if p.resolved else ""),
                        Text(", ".join(p.introduced) or "-", style="red" if p.introduced else ""))
    console.print(summary)
    for p in result.pairs:
        console.print(Text(f"\n[{p.name}]  paired by {p.paired_by}", style="bold"))
        console.print(Text(f"  verdict: {T.verdict_change(p)}"))
        titles = {f.id: f for f in (*p.before.findings, *p.after.findings)}
        for label, ids, style in (("resolved", p.resolved, "green"), ("introduced", p.introduced, "red"),
                                  ("still there", p.persisting, ""), ("not comparable", p.not_comparable, "dim")):
            for fid in ids:
                f = titles[fid]
                console.print(Text(f"  {label:14} {fid} ({f.severity}): {f.title}", style=style))
                evidence = ", ".join(f"{name} {T.change(delta)}" for name, delta in p.evidence.get(fid, {}).items())
                if evidence:
                    console.print(Text(f"                 evidence: {evidence}"))
        for name, delta in p.deltas.items():
            label = f" [{delta.label}]" if delta.label else ""
            console.print(Text(f"  {name:24} {T.change(delta)}{label}"))
        if p.speedup is not None:
            console.print(Text(f"  real speedup: {T.speedup(p.speedup)} (bench median {p.before_timing.median_ms:g} → {p.after_timing.median_ms:g} ms, uninstrumented)"))
        if p.estimated_gain_pct is not None:
            console.print(Text(f"  payoff: {T.estimate_vs_measured(p)}"))
        for note in p.timing_notes:
            console.print(Text(f"  timing: {note}", style="dim"))
    for side, kernels in (("before", result.unpaired_before), ("after", result.unpaired_after)):
        if kernels:
            console.print(Text(f"\nonly in {side}: " + ", ".join(f"{k.name} (launch {k.id})" for k in kernels)))
    for note in result.notes:
        console.print(Text(f"note: {note}", style="dim"))
    if result.regressions:
        console.print(Text("\nregressions:", style="bold red"))
        for line in result.regressions:
            console.print(Text(f"  {line}", style="red"))
    console.print(Text("\nncu durations are instrumented (each kernel replayed under ncu); real speedups come from 'ncuwrap bench' timings."))
    return buffer.getvalue()
