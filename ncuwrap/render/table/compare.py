"""Terminal output of ``ncuwrap compare``: one row per kernel pair, then what changed in each (rich)."""

from __future__ import annotations

from ncuwrap.render import names as N
from ncuwrap.render import phrasing as T
from ncuwrap.render.table import Page, cell

# From this many columns the summary table has room for the findings resolved and introduced, and
# from MEDIUM for ncu's (instrumented) speedup; narrower, they leave it with a note saying where they are.
WIDE = 120
MEDIUM = 100


def _pair_name(pair, name: N.Names) -> str:
    before, after = name(pair.before.name), name(pair.after.name)
    return before if before == after else f"{before} → {after}"


def render(result, width: int | None = None, color: bool = False, names: str = N.SHORT, **_options) -> str:
    page = Page(width, color)
    name = N.of(result, names)
    b, a = result.before.source, result.after.source
    page.line(f"{b.path}  ({b.device or 'unknown GPU'}, ncu {b.ncu_version or '?'})", label="before:")
    page.line(f"{a.path}  ({a.device or 'unknown GPU'}, ncu {a.ncu_version or '?'})", label="after: ")
    # On a narrow terminal the findings and ncu's speedup (in each pair's section below) leave the table.
    wide, medium = page.width >= WIDE, page.width >= MEDIUM
    summary = page.table("kernel", "verdict", *(("ncu speedup",) if medium else ()), "estimated", "real speedup",
                         *(("resolved", "introduced") if wide else ()), names=("kernel",), prose=("verdict",))
    for p in result.pairs:
        findings = (N.Clamped(", ".join(p.resolved) or "-", "green" if p.resolved else "", lines=8),
                    N.Clamped(", ".join(p.introduced) or "-", "red" if p.introduced else "", lines=8)) if wide else ()
        summary.add_row(N.Clamped(_pair_name(p, name)), cell(T.verdict_change(p)), *((T.speedup(p.ncu_speedup),) if medium else ()),
                        T.gain_factor(p.estimated_gain_pct), T.speedup(p.speedup), *findings)
    page.print(summary)
    left_out = [*(() if medium else ("ncu speedup",)), *(() if wide else ("resolved", "introduced"))]
    if left_out:
        page.left_out(", ".join(left_out), "each pair's section", MEDIUM if not medium else WIDE)
    for p in result.pairs:
        page.heading(f"[{p.name}]  paired by {p.paired_by}")
        page.line(T.verdict_change(p), indent=2, label="verdict:")
        for label, ids, style in (("resolved", p.resolved, "green"), ("introduced", p.introduced, "red"),
                                  ("still there", p.persisting, ""), ("not comparable", p.not_comparable, "dim")):
            for fid in ids:
                f = p.finding(fid)
                page.line(f"{fid} ({f.severity}): {f.title}", style, indent=2, label=f"{label:14}")
                evidence = ", ".join(f"{name} {T.change(delta)}" for name, delta in p.evidence.get(fid, {}).items())
                if evidence:
                    page.line(evidence, indent=17, label="evidence:")
                for change in p.lines.get(fid, ()):
                    page.line(T.line_change(change), "green" if change.gone else "", indent=17, label="line:")
        for name, delta in p.deltas.items():
            page.line(T.change(delta) + (f" [{delta.label}]" if delta.label else ""), indent=2, label=f"{name:24}")
        if p.speedup is not None:
            page.line(f"{T.speedup(p.speedup)} (bench median {T.ms(p.before_timing.median_ms)} → {T.ms(p.after_timing.median_ms)}, uninstrumented)",
                      indent=2, label="real speedup:")
        if p.estimated_gain_pct is not None:
            page.line(T.estimate_vs_measured(p), indent=2, label="payoff:")
        for note in p.timing_notes:
            page.line(note, "dim", indent=2, label="timing:")
    for side, kernels in (("before", result.unpaired_before), ("after", result.unpaired_after)):
        if kernels:
            page.console.print()
            # Named whole: no section below shows a kernel only one side has.
            page.line(", ".join(f"{k.name} (launch {k.id})" for k in kernels), label=f"only in {side}:")
    for note in result.notes:
        page.line(note, "dim", label="note:")
    if result.regressions:
        page.heading(f"Regressions ({result.gate}):")
        for line in result.regressions:
            page.line(line, "red", indent=2)
    if result.not_gating:
        page.heading(f"{T.NOT_GATING}:")
        for line in result.not_gating:
            page.line(line, indent=2)
    page.console.print()
    page.line("ncu durations are instrumented (each kernel replayed under ncu); real speedups come from 'ncuwrap bench' timings.")
    return page.text()
