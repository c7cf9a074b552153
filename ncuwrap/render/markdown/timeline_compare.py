"""Markdown output of a timeline comparison (a pull-request comment): the step's period before and
after, the verdicts, where a step's time went, the host and the copies, the kernels that changed most."""

from __future__ import annotations

from ncuwrap.render import names as kernel_names
from ncuwrap.render import phrasing
from ncuwrap.render.phrasing import compare as compare_text
from ncuwrap.render import timeline_diff
from ncuwrap.render.escape import code, escape, table


def _table(header: list[str], rows: list[list[str]], left: tuple[int, ...] = (0,)) -> list[str]:
    return table(header, rows, "".join("l" if i in left else "r" for i in range(len(header)))).split("\n")


def render(result, names: str = kernel_names.SHORT, **_options) -> str:
    name = kernel_names.of(result, names)
    b, a = result.before.source, result.after.source
    out = ["## ncuwrap compare (timelines)", "",
           f"{code(phrasing.display_path(b.path))} → {code(phrasing.display_path(a.path))}, {escape(timeline_diff.title(result))}.", ""]
    out += [f"**{escape(timeline_diff.headline(result))}.**", ""]
    if timeline_diff.predicted(result):
        out += [f"- **Predicted:** {escape(timeline_diff.predicted(result))}"]
    out += [f"- **Bound:** {escape(timeline_diff.verdicts(result))}",
            f"- **Findings:** {escape(timeline_diff.findings(result))}", ""]
    for title, rows in ((timeline_diff.where_title(result), timeline_diff.where_rows(result)), (timeline_diff.step_title(result),
                                                                                                timeline_diff.step_rows(result))):
        out += [f"### {escape(title)}", ""]
        out += _table(["", "before", "after", "change"], [[escape(c) for c in timeline_diff.row(ch)] for ch in rows]) + [""]
    out.pop()
    out += ["", f"### {timeline_diff.host_title(result)}", ""]
    out += _table(["", "before", "after", "change"], [[escape(c) for c in timeline_diff.row(ch)] for ch in result.activity])
    out += ["", f"### {timeline_diff.kernels_title(result)}", ""]
    out += _table(["kernel", "launches", "before", "after", "change", "speedup", ""],
                  [[code(name(k.name)), *[escape(c) for c in timeline_diff.kernel_row(k)]] for k in result.kernels_shown], left=(0, 6))
    if result.kernels_hidden:
        out += ["", escape(timeline_diff.hidden_line(result)) + "."]
    changed = [k for k in result.kernels_shown if k.status != "both"]
    if changed:
        out += [""] + [f"- {k.status}: {code(k.name)}" for k in changed]
    out.append("")
    if result.regressions:
        out += [f"**Regressions** ({escape(result.gate)}):", ""] + [f"- {escape(line)}" for line in result.regressions]
    else:
        out.append(f"**No regression** ({escape(result.gate)}).")
    if result.not_gating:
        out += ["", f"{escape(compare_text.NOT_GATING)}:", ""] + [f"- {escape(line)}" for line in result.not_gating]
    if result.notes:
        out += ["", "Notes:", ""] + [f"- {escape(n)}" for n in result.notes]
    return "\n".join(out).rstrip() + "\n"
