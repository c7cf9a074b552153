"""Markdown output of a timeline diagnosis (for a pull request or an issue): verdict, a text picture
of the breakdown, tables, Amdahl, findings."""

from __future__ import annotations

from ncuwrap.render import names as kernel_names
from ncuwrap.render import phrasing
from ncuwrap.render.phrasing import timeline as timeline_text
from ncuwrap.render import breakdown
from ncuwrap.render import op_limits
from ncuwrap.render.escape import code, escape, table
from ncuwrap.kernel.shown import COMMENT, Shown
from ncuwrap.timeline.model import CATEGORY_LABELS, GLYPHS


def _table(header: list[str], rows: list[list], left: tuple[int, ...] = (0,)) -> list[str]:
    """A GFM table; the columns but those in ``left`` (numbers) are right-aligned."""
    return table(header, [[str(v) for v in row] for row in rows], "".join("l" if i in left else "r" for i in range(len(header)))).split("\n")


def render(diagnosis, shown: Shown = COMMENT, names: str = kernel_names.SHORT, **_options) -> str:
    name = kernel_names.of(diagnosis, names)
    t = diagnosis.timeline
    s = diagnosis.source
    out = ["## ncuwrap timeline", "", f"{code(phrasing.display_path(s.path))}: {escape(s.device or 'unknown GPU')}, {escape(s.producer)} "
           f"({s.kind}); rules {code(diagnosis.rules_name)} version {escape(diagnosis.rules_version)}.", ""]
    out += [f"**Bound: {escape(timeline_text.timeline_verdict(diagnosis))}.** {escape(diagnosis.why)}", ""]

    if t.steps is not None:
        out += [f"### Steps ({code(t.steps.name)})" if t.steps.found is None else f"### {timeline_text.steps_title(t.steps)}", ""]
        out += [f"- **{escape(label[:-1])}:** {escape(line)}" for label, line in timeline_text.step_lines(t)] + [""]
    if t.whatif is not None:
        out += [f"### {escape(timeline_text.whatif_title(t.whatif))}", ""]
        if t.whatif.critical_path:
            out += [f"Critical path: {escape(timeline_text.critical_path_text(t.whatif))}.", ""]
        out += _table(["remedy", "predicted step", "speed-up"],
                      [[code(r), escape(step), escape(gain)] for r, _, step, gain in timeline_text.whatif_rows(t.whatif)])
        out += [""] + [f"- **{escape(p.remedy)}** assumes {escape(p.assumes)}." for p in t.whatif.remedies]
        out += [f"- **{escape(n.remedy)}**: not predicted, {escape(n.why)}." for n in t.whatif.not_predicted] + [""]
    out += [f"### Where the {phrasing.duration(t.window_ns)} {'of the steady steps ' if t.steps is not None else ''}went", "",
            "```text", f"[{breakdown.text_bar(t)}]", breakdown.legend(t), "```", ""]
    out += _table(["", "time", "share of window"], [[f"`{GLYPHS[seg.category]}` {seg.label}", phrasing.duration(seg.ns), phrasing.percent(seg.pct)]
                                                     for seg in t.segments()])
    startup = ("" if t.steps is not None else f"{timeline_text.startup_label(t)[0].upper()}{timeline_text.startup_label(t)[1:-1]}: "
               f"{phrasing.duration(t.startup.duration_ns)}"
               f"{' (host in: ' + code(t.startup.cause) + ')' if t.startup.duration_ns else ''}. ")
    out += ["", f"{startup}Each instant counts once: a copy running under a kernel is kernel time.", ""]

    out += ["### If the kernels were faster (Amdahl)", ""]
    out += _table(["kernels", "end to end", "speed-up"],
                  [[row.label, phrasing.duration(row.end_to_end_ns), f"{row.end_to_end_speedup:.2f}x"] for row in t.amdahl])
    out += ["", timeline_text.amdahl_lesson(t), ""]

    out += findings(diagnosis)

    out += ["### Top kernels", ""]
    traced = any(k.launched_from is not None for k in t.top_kernels())
    out += _table(["kernel", "launches", "total", "median", "share"] + (["launched from"] if traced else []),
                  [[code(name(k.demangled)), phrasing.number(k.count), phrasing.duration(k.total_ns), phrasing.duration(k.median_ns),
                    phrasing.percent(k.share_pct)]
                   + ([escape(timeline_text.launched_from(k.launched_from)) if k.launched_from is not None else ""] if traced else [])
                   for k in t.top_kernels()], left=(0, 5))
    note = timeline_text.line_is_note(t.top_kernels(), t.host_time)
    if note:
        out += ["", escape(note) + "."]
    if t.host_time:
        out += ["", "Host time by user function (Python):", ""] + [f"- {escape(timeline_text.host_time_line(h))}" for h in t.host_time]
    gaps = t.kernel_gaps
    if gaps["count"]:
        out += ["", f"Gaps between consecutive kernels: {gaps['count']}, median {phrasing.duration(gaps['median_ns'])}, "
                    f"90th percentile {phrasing.duration(gaps['p90_ns'])}, longest {phrasing.duration(gaps['max_ns'])}."]
    out.append("")

    if t.op_limits is not None:
        out += _op_limits(t.op_limits)

    if t.copies:
        out += ["### Copies", ""]
        out += _table(["kind", "count", "size", "time", "rate", "pageable"],
                      [[CATEGORY_LABELS[c.category], phrasing.number(c.count), phrasing.size(c.bytes), phrasing.duration(c.total_ns), phrasing.gbps(c.gbps),
                        "unknown" if c.pageable_count is None else f"{c.pageable_count} of {c.count}"] for c in t.copies])
        out.append("")

    out += ["### CUDA API (host)", ""]
    if t.api_traced:
        out += _table(["category", "calls", "time", "share of window"],
                      [[r.category, phrasing.number(r.calls), phrasing.duration(r.total_ns), phrasing.percent(r.pct)] for r in t.api_rows()])
        out += ["", "Slowest calls:", ""]
        out += _table(["call", "calls", "time", "median"],
                      [[code(a.name), phrasing.number(a.calls), phrasing.duration(a.total_ns), phrasing.duration(a.median_ns)] for a in t.api[:shown.calls]])
    else:
        out.append("Not traced (capture with `nsys profile --trace=cuda`).")
    out.append("")

    if t.gaps:
        out += ["### Longest GPU idle gaps after start-up", ""]
        out += _table(["at", "length", "host was in"], [[phrasing.duration(g.at_ns), phrasing.duration(g.duration_ns),
                                                         escape(g.cause or "unknown")] for g in t.gaps],
                      left=(2,))
        out.append("")
    if diagnosis.notes:
        out += ["Notes:", ""] + [f"- {escape(n)}" for n in diagnosis.notes] + [""]
    return "\n".join(out).rstrip() + "\n"


def _op_limits(limits) -> list[str]:
    """How far each op is from its limit: the step's MFU, its bytes, the per-op table, what is not modelled, the remedies."""
    out = [f"### {escape(op_limits.title(limits))}", "", escape(op_limits.shapes_sentence(limits)), "",
           f"- **Step:** {escape(op_limits.step_line(limits))}."]
    mask = op_limits.mask_line(limits)
    out += ([f"- **Attention:** {escape(mask)}."] if mask else []) + [f"- **Bytes:** {escape(op_limits.bytes_line(limits))}.", ""]
    columns = op_limits.COLUMNS
    out += _table(list(columns), [[escape(cells[c]) if c not in ("op", "shapes") else code(cells[c]) for c in columns]
                                  for cells in (op_limits.cells(r) for r in limits.top())], left=(0, 1, 8))
    rest = op_limits.rest_line(limits)
    out += [""] + ([escape(rest) + ".", ""] if rest else [])
    out += _advice(limits)
    out += [f"- **Modelled:** {escape(op_limits.coverage_line(limits))}."]
    out += [f"- {escape(line)}." for line in op_limits.unit_lines(limits)]
    out += [f"- **Peaks:** {escape(op_limits.peaks_line(limits))}."]
    out += [f"- **{escape(label[:-1])}:** {escape(text)}." for label, text in op_limits.remedy_lines(limits)]
    return out + [""]


def _advice(limits) -> list[str]:
    """The causes of each matrix product far below its limit, where there is one."""
    shown, _, _ = limits.top_advice()
    if not shown:
        return []
    out = [f"**{escape(op_limits.advice_title(limits))}:**", ""]
    for a in shown:
        out.append(f"- {escape(op_limits.advice_head(a))}.")
        out.append(f"  - Tiles: {escape(op_limits.tiling_text(a))}.")
        out += [f"  - **{escape(label[:-1])}:** {escape(text)}." for label, text in op_limits.cause_lines(a)]
    rest = op_limits.advice_rest(limits)
    return out + ([f"- {escape(rest)}."] if rest else []) + [""]


def findings(diagnosis) -> list[str]:
    """The findings and the rules not evaluated of a timeline (or rank set) diagnosis."""
    out = ["### Findings", ""]
    if not diagnosis.findings:
        out += ["None.", ""]
    for f in diagnosis.findings:
        out += [f"#### {escape(f.severity.upper())}: {escape(f.title)}", "", f"- **Evidence:** {code(phrasing.evidence(f))}",
                f"- **Advice:** {escape(f.advice)}", ""]
    if diagnosis.not_evaluated:
        out += ["Not evaluated:", ""] + [f"- {code(n.rule)}: {escape(n.message)}" for n in diagnosis.not_evaluated] + [""]
    return out
