"""Markdown output of a timeline comparison (a pull-request comment): the step's period before and
after, the verdicts, where a step's time went, the host and the copies, the kernels that changed most."""

from __future__ import annotations

from ncuwrap.render import names as N
from ncuwrap.render import phrasing as T
from ncuwrap.render import timeline_diff as D
from ncuwrap.render.escape import code, escape, table


def _table(header: list[str], rows: list[list[str]], left: tuple[int, ...] = (0,)) -> list[str]:
    return table(header, rows, "".join("l" if i in left else "r" for i in range(len(header)))).split("\n")


def render(result, names: str = N.SHORT, **_options) -> str:
    name = N.of(result, names)
    b, a = result.before.source, result.after.source
    out = ["## ncuwrap compare (timelines)", "", f"{code(T.display_path(b.path))} → {code(T.display_path(a.path))}, {escape(D.title(result))}.", ""]
    out += [f"**{escape(D.headline(result))}.**", "", f"- **Bound:** {escape(D.verdicts(result))}", f"- **Findings:** {escape(D.findings(result))}", ""]
    for title, rows in ((D.where_title(result), D.where_rows(result)), (D.step_title(result), D.step_rows(result))):
        out += [f"### {escape(title)}", ""]
        out += _table(["", "before", "after", "change"], [[escape(c) for c in D.row(ch)] for ch in rows]) + [""]
    out.pop()
    out += ["", f"### {D.host_title(result)}", ""]
    out += _table(["", "before", "after", "change"], [[escape(c) for c in D.row(ch)] for ch in result.activity])
    out += ["", f"### {D.kernels_title(result)}", ""]
    out += _table(["kernel", "launches", "before", "after", "change", "speedup", ""],
                  [[code(name(k.name)), *[escape(c) for c in D.kernel_row(k)]] for k in result.kernels_shown], left=(0, 6))
    if result.kernels_hidden:
        out += ["", escape(D.hidden_line(result)) + "."]
    changed = [k for k in result.kernels_shown if k.status != "both"]
    if changed:
        out += [""] + [f"- {k.status}: {code(k.name)}" for k in changed]
    out.append("")
    if result.regressions:
        out += [f"**Regressions** ({escape(result.gate)}):", ""] + [f"- {escape(line)}" for line in result.regressions]
    else:
        out.append(f"**No regression** ({escape(result.gate)}).")
    if result.not_gating:
        out += ["", f"{escape(T.NOT_GATING)}:", ""] + [f"- {escape(line)}" for line in result.not_gating]
    if result.notes:
        out += ["", "Notes:", ""] + [f"- {escape(n)}" for n in result.notes]
    return "\n".join(out).rstrip() + "\n"
