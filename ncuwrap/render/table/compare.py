"""Terminal output of ``ncuwrap compare``: one row per kernel pair, then what changed in each (rich)."""

from __future__ import annotations

from ncuwrap.render import names as kernel_names
from ncuwrap.render import phrasing
from ncuwrap.render.phrasing import compare as compare_text
from ncuwrap.render.table import Page, cell

# The summary's columns, and the order they leave it on a narrow terminal: a column that holds nothing but
# "n/a" first, then the findings (each pair's section lists them), then the estimate; measured speedups last.
COLUMNS = ("kernel", "verdict", "ncu speedup", "estimated", "real speedup", "resolved", "introduced")
DROP = (("resolved", "introduced"), ("estimated",), ("ncu speedup",), ("real speedup",))


def _pair_name(pair, name: kernel_names.Names) -> str:
    before, after = name(pair.before.name), name(pair.after.name)
    return before if before == after else f"{before} → {after}"


def render(result, width: int | None = None, color: bool = False, names: str = kernel_names.SHORT, **_options) -> str:
    page = Page(width, color)
    name = kernel_names.of(result, names)
    b, a = result.before.source, result.after.source
    page.line(f"{b.path}  ({b.device or 'unknown GPU'}, ncu {b.ncu_version or '?'})", label="before:")
    page.line(f"{a.path}  ({a.device or 'unknown GPU'}, ncu {a.ncu_version or '?'})", label="after: ")
    _summary(page, result, name)
    for p in result.pairs:
        _pair_section(page, p, name)
    _closing(page, result)
    page.console.print()
    page.line("ncu durations are instrumented (each kernel replayed under ncu); real speedups come from 'ncuwrap bench' timings.")
    return page.text()


def _summary(page: Page, result, name: kernel_names.Names) -> None:
    """The summary table, a row per pair, fitted to the terminal; says which columns it left out and where they are."""
    rows = [{"kernel": kernel_names.Clamped(_pair_name(p, name)), "verdict": cell(compare_text.verdict_change(p)),
             "ncu speedup": phrasing.speedup(p.ncu_speedup),
             "estimated": phrasing.gain_factor(p.estimated_gain_pct), "real speedup": phrasing.speedup(p.speedup),
             "resolved": kernel_names.Clamped(", ".join(p.resolved) or "-", "green" if p.resolved else "", lines=8),
             "introduced": kernel_names.Clamped(", ".join(p.introduced) or "-", "red" if p.introduced else "", lines=8)} for p in result.pairs]
    empty = tuple(c for group in DROP for c in group if rows and all(str(row[c]) == phrasing.speedup(None) for row in rows))

    def build(columns):
        summary = page.table(*columns, names=("kernel",), prose=("verdict",))
        for row in rows:
            summary.add_row(*(row[c] for c in columns))
        return summary

    summary, left_out, whole = page.fit(build, COLUMNS, (*((c,) for c in empty), *(g for g in DROP if not set(g) & set(empty))))
    page.print(summary)
    blank = [c for c in left_out if c in empty]
    if blank:
        page.line(f"{', '.join(blank)}: n/a for every pair", "dim", label="left out of the table:")
    if len(blank) < len(left_out):
        page.left_out(", ".join(c for c in left_out if c not in empty), "each pair's section", whole)


def _pair_section(page: Page, p, name: kernel_names.Names) -> None:
    """One pair's section: its verdicts, its findings by what became of them, the metrics that moved, its timings."""
    page.heading(f"[{_pair_name(p, name)}]  paired by {p.paired_by}")
    page.line(compare_text.verdict_change(p), indent=2, label="verdict:")
    for label, ids, style in (("resolved", p.resolved, "green"), ("introduced", p.introduced, "red"),
                              ("still there", p.persisting, ""), ("not comparable", p.not_comparable, "dim")):
        for fid in ids:
            f = p.finding(fid)
            page.line(f"{fid} ({f.severity}): {f.title}", style, indent=2, label=f"{label:14}")
            evidence = ", ".join(f"{metric} {compare_text.change(delta)}" for metric, delta in p.evidence.get(fid, {}).items())
            if evidence:
                page.line(evidence, indent=17, label="evidence:")
            for change in p.lines.get(fid, ()):
                page.line(compare_text.line_change(change), "green" if change.gone else "", indent=17, label="line:")
    for metric, delta in p.deltas.items():
        page.line(compare_text.change(delta) + (f" [{delta.label}]" if delta.label else ""), indent=2, label=f"{metric:24}")
    if p.speedup is not None:
        page.line(f"{phrasing.speedup(p.speedup)} (bench median {phrasing.ms(p.before_timing.median_ms)} → "
                  f"{phrasing.ms(p.after_timing.median_ms)}, uninstrumented)",
                  indent=2, label="real speedup:")
    if p.estimated_gain_pct is not None:
        page.line(compare_text.estimate_vs_measured(p), indent=2, label="payoff:")
    for note in p.timing_notes:
        page.line(note, "dim", indent=2, label="timing:")


def _closing(page: Page, result) -> None:
    """After the pairs: the kernels only one side has, the notes, and the regressions the gate found."""
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
        page.heading(f"{compare_text.NOT_GATING}:")
        for line in result.not_gating:
            page.line(line, indent=2)
