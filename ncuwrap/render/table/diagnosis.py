"""Terminal output of a kernel diagnosis: a summary ranked by time, then each kernel's verdict and
findings, and once for the report what could not be evaluated."""

from __future__ import annotations

from ncuwrap.render import text as T
from ncuwrap.render.table import STYLE, Page, cell

# From this many columns the summary table has room for each kernel's headline.
WIDE = 110


def render(diagnosis, width: int | None = None, color: bool = False, **_options) -> str:
    page = Page(width, color)
    source = diagnosis.source
    page.line(f"{source.path}  ({source.kind}; {source.device or 'unknown GPU'}, CC {source.compute_capability or '?'}, "
              f"ncu {source.ncu_version or 'version unknown'})")
    if diagnosis.coverage:
        page.line(T.coverage_line(diagnosis.coverage))
    kernels = diagnosis.by_time()
    total = sum(k.duration_ns or 0 for k in kernels)
    processes = len(diagnosis.processes) > 1
    # On a narrow terminal the headline (first line of each kernel's section below) leaves the table.
    wide = page.width >= WIDE
    columns = ("#", "launch", "kernel", *(("process",) if processes else ()), "time (ncu)", "share", "verdict", "gain",
               *(("headline",) if wide else ()))
    summary = page.table(*columns, right=("#", "launch", "time (ncu)", "share", "gain"), names=("kernel",), prose=("headline",))
    for rank, k in enumerate(kernels, 1):
        head = k.headline
        headline = (cell(T.headline_text(k), STYLE.get(head.severity, "") if head else ""),) if wide else ()
        summary.add_row(str(rank), str(k.id), cell(k.name), *((cell(T.process(k)),) if processes else ()), T.duration(k.duration_ns),
                        T.share(k, total), T.verdict(k), T.gain(k.estimated_gain_pct), *headline)
    page.print(summary)
    first = T.fix_first(diagnosis)
    if (len(kernels) > 1 or diagnosis.coverage) and first:
        page.line(T.fix_first_title(diagnosis), "bold")
        for i, p in enumerate(first, 1):
            page.line(T.priority_line(p, bool(diagnosis.coverage)), indent=2, label=f"{i}.")
    for rank, k in enumerate(kernels, 1):
        page.heading(f"{rank}. {k.display_name}  (launch {k.id}{', ' + T.process(k) if processes else ''})")
        program = T.program_line(k, diagnosis.coverage)
        if program:
            page.line(program, indent=2, label="program:")
        page.line(k.why, indent=2, label=f"{T.verdict(k)}:", label_style="bold")
        if k.headline is None:
            page.line("no issue found", indent=2)
        for f in k.findings:
            gain = T.finding_gain(f)
            page.line(f.title + (f"  [{gain}]" if gain else ""), STYLE.get(f.severity, ""), indent=2, label=f"{f.severity.upper():6}")
            if f.minor:
                continue
            evidence = ", ".join(f"{name}={T.number(value)}" for name, value in f.evidence.items())
            page.line(evidence, indent=9, label="evidence:")
            page.line(f.advice, indent=9, label="advice:")
        for r in T.ncu_rules_shown(k):
            page.line(T.ncu_rule_line(r), "dim", indent=2, label="ncu   ")
        if k.not_evaluated:
            page.line(T.not_evaluated_count(k) + " (see the end)", "dim", indent=2)
    if diagnosis.reprofile:
        page.heading("Not evaluated")
        page.line(T.reprofile_line(diagnosis.reprofile), indent=2)
    page.console.print()
    page.line(f"Durations are ncu's, instrumented (each kernel replayed; clocks {T.clock_note(diagnosis)}): use 'ncuwrap bench' for real timings.")
    return page.text()
