"""Terminal output of a timeline comparison (rich): the step's period before and after, the verdicts,
where a step's time went, the host's launches and the copies, the kernels that changed most."""

from __future__ import annotations

from rich.text import Text

from ncuwrap.render import names as kernel_names
from ncuwrap.render.phrasing import compare as compare_text
from ncuwrap.render import timeline_diff
from ncuwrap.render.table import Page


def render(result, width: int | None = None, color: bool = False, names: str = kernel_names.SHORT, **_options) -> str:
    page = Page(width, color)
    name = kernel_names.of(result, names)
    console = page.console

    def table(*columns, right=(), names=()):
        return page.table(*columns, right=right, names=names, boxed=False)

    page.line(f"{result.before.source.path} → {result.after.source.path}", label="ncuwrap compare (timelines):", label_style="bold")
    page.line(timeline_diff.title(result), indent=2)
    page.line(timeline_diff.headline(result), "bold" if result.speedup else "", label="Faster?", label_style="bold")
    if timeline_diff.predicted(result):
        page.line(timeline_diff.predicted(result), label="Predicted?", label_style="bold")
    page.line(timeline_diff.verdicts(result), label="Bound:", label_style="bold")
    page.line(timeline_diff.findings(result), label="Findings:", label_style="bold")

    for title, rows in ((timeline_diff.where_title(result), timeline_diff.where_rows(result)), (timeline_diff.step_title(result),
                                                                                                timeline_diff.step_rows(result))):
        console.print(Text(f"\n{title}", style="bold"))
        where = table("", "before", "after", "change", right=("before", "after", "change"))
        for change in rows:
            where.add_row(*timeline_diff.row(change))
        console.print(where)

    console.print(Text(f"\n{timeline_diff.host_title(result)}", style="bold"))
    host = table("", "before", "after", "change", right=("before", "after", "change"))
    for change in result.activity:
        host.add_row(*timeline_diff.row(change))
    console.print(host)

    console.print(Text(f"\n{timeline_diff.kernels_title(result)}", style="bold"))
    kernels = table("kernel", "launches", "before", "after", "change", "speedup", "", right=("launches", "before", "after", "change", "speedup"),
                    names=("kernel",))
    for k in result.kernels_shown:
        kernels.add_row(kernel_names.Clamped(name(k.name)), *timeline_diff.kernel_row(k))
    console.print(kernels)
    if result.kernels_hidden:
        page.line(timeline_diff.hidden_line(result), "dim", indent=2)
    for k in result.kernels_shown:
        if k.status != "both":
            page.line(k.name, indent=2, label=f"{k.status}:")

    console.print()
    if result.regressions:
        for line in result.regressions:
            page.line(line, "bold red", indent=2, label="regression:")
        page.line(result.gate, "dim", indent=2, label="gate:")
    else:
        page.line(f"(what counts: {result.gate})", label="No regression", label_style="bold green")
    if result.not_gating:
        page.line(compare_text.NOT_GATING + ":", indent=2)
    for line in result.not_gating:
        page.line(line, indent=4)
    for note in result.notes:
        page.line(note, "dim", indent=2, label="note:")
    return page.text()
