"""Markdown output of a timeline diagnosis (for a pull request or an issue): verdict, a text picture
of the breakdown, tables, Amdahl, findings."""

from __future__ import annotations

from ncuwrap.render import names as N
from ncuwrap.render import phrasing as T
from ncuwrap.render import breakdown as B
from ncuwrap.render.escape import code, escape, table
from ncuwrap.shown import COMMENT, Shown
from ncuwrap.timeline.model import CATEGORY_LABELS


def _table(header: list[str], rows: list[list], left: tuple[int, ...] = (0,)) -> list[str]:
    """A GFM table; the columns but those in ``left`` (numbers) are right-aligned."""
    return table(header, [[str(v) for v in row] for row in rows], "".join("l" if i in left else "r" for i in range(len(header)))).split("\n")


def render(diagnosis, shown: Shown = COMMENT, names: str = N.SHORT, **_options) -> str:
    name = N.of(diagnosis, names)
    t = diagnosis.timeline
    s = diagnosis.source
    out = ["## ncuwrap timeline", "", f"{code(T.display_path(s.path))}: {escape(s.device or 'unknown GPU')}, {escape(s.producer)} "
           f"({s.kind}); rules {code(diagnosis.rules_name)} version {escape(diagnosis.rules_version)}.", ""]
    out += [f"**Bound: {escape(T.timeline_verdict(diagnosis))}.** {escape(diagnosis.why)}", ""]

    if t.steps is not None:
        out += [f"### Steps ({code(t.steps.name)})" if t.steps.found is None else f"### {T.steps_title(t.steps)}", ""]
        out += [f"- **{escape(label[:-1])}:** {escape(line)}" for label, line in T.step_lines(t)] + [""]
    out += [f"### Where the {T.duration(t.window_ns)} {'of the steady steps ' if t.steps is not None else ''}went", "",
            "```text", f"[{B.text_bar(t)}]", B.legend(t), "```", ""]
    out += _table(["", "time", "share of window"], [[f"`{B.GLYPHS[seg.category]}` {seg.label}", T.duration(seg.ns), T.percent(seg.pct)]
                                                     for seg in t.segments()])
    startup = ("" if t.steps is not None else f"{T.startup_label(t)[0].upper()}{T.startup_label(t)[1:-1]}: {T.duration(t.startup.duration_ns)}"
               f"{' (host in: ' + code(t.startup.cause) + ')' if t.startup.duration_ns else ''}. ")
    out += ["", f"{startup}Each instant counts once: a copy running under a kernel is kernel time.", ""]

    out += ["### If the kernels were faster (Amdahl)", ""]
    out += _table(["kernels", "end to end", "speed-up"],
                  [[row.label, T.duration(row.end_to_end_ns), f"{row.end_to_end_speedup:.2f}x"] for row in t.amdahl])
    out += ["", T.amdahl_lesson(t), ""]

    out += findings(diagnosis)

    out += ["### Top kernels", ""]
    traced = any(k.launched_from is not None for k in t.top_kernels())
    out += _table(["kernel", "launches", "total", "median", "share"] + (["launched from"] if traced else []),
                  [[code(name(k.demangled)), T.number(k.count), T.duration(k.total_ns), T.duration(k.median_ns), T.percent(k.share_pct)]
                   + ([escape(T.launched_from(k.launched_from)) if k.launched_from is not None else ""] if traced else [])
                   for k in t.top_kernels()], left=(0, 5))
    note = T.line_is_note(t.top_kernels(), t.host_time)
    if note:
        out += ["", escape(note) + "."]
    if t.host_time:
        out += ["", "Host time by user function (Python):", ""] + [f"- {escape(T.host_time_line(h))}" for h in t.host_time]
    gaps = t.kernel_gaps
    if gaps["count"]:
        out += ["", f"Gaps between consecutive kernels: {gaps['count']}, median {T.duration(gaps['median_ns'])}, "
                    f"90th percentile {T.duration(gaps['p90_ns'])}, longest {T.duration(gaps['max_ns'])}."]
    out.append("")

    if t.copies:
        out += ["### Copies", ""]
        out += _table(["kind", "count", "size", "time", "rate", "pageable"],
                      [[CATEGORY_LABELS[c.category], T.number(c.count), T.size(c.bytes), T.duration(c.total_ns), T.gbps(c.gbps),
                        "unknown" if c.pageable_count is None else f"{c.pageable_count} of {c.count}"] for c in t.copies])
        out.append("")

    out += ["### CUDA API (host)", ""]
    if t.api_traced:
        out += _table(["category", "calls", "time", "share of window"],
                      [[r.category, T.number(r.calls), T.duration(r.total_ns), T.percent(r.pct)] for r in t.api_rows()])
        out += ["", "Slowest calls:", ""]
        out += _table(["call", "calls", "time", "median"],
                      [[code(a.name), T.number(a.calls), T.duration(a.total_ns), T.duration(a.median_ns)] for a in t.api[:shown.calls]])
    else:
        out.append("Not traced (capture with `nsys profile --trace=cuda`).")
    out.append("")

    if t.gaps:
        out += ["### Longest GPU idle gaps after start-up", ""]
        out += _table(["at", "length", "host was in"], [[T.duration(g.at_ns), T.duration(g.duration_ns), escape(g.cause or "unknown")] for g in t.gaps],
                      left=(2,))
        out.append("")
    if diagnosis.notes:
        out += ["Notes:", ""] + [f"- {escape(n)}" for n in diagnosis.notes] + [""]
    return "\n".join(out).rstrip() + "\n"


def findings(diagnosis) -> list[str]:
    """The findings and the rules not evaluated of a timeline (or rank set) diagnosis."""
    out = ["### Findings", ""]
    if not diagnosis.findings:
        out += ["None.", ""]
    for f in diagnosis.findings:
        out += [f"#### {escape(f.severity.upper())}: {escape(f.title)}", "", f"- **Evidence:** {code(T.evidence(f))}", f"- **Advice:** {escape(f.advice)}", ""]
    if diagnosis.not_evaluated:
        out += ["Not evaluated:", ""] + [f"- {code(n.rule)}: {escape(n.message)}" for n in diagnosis.not_evaluated] + [""]
    return out
