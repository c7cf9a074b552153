"""Markdown output of a kernel diagnosis: the short form for a pull-request comment (GFM, escaped
with ncuwrap.render.escape)."""

from __future__ import annotations

from ncuwrap.core.version import __version__
import html

from ncuwrap.render import names as kernel_names
from ncuwrap.render import phrasing
from ncuwrap.render.phrasing import bench as bench_text
from ncuwrap.render.phrasing import kernel as kernel_text
from ncuwrap.render.escape import fenced, code, escape, table, terminal
from ncuwrap.kernel.shown import COMMENT, Shown, layout


def verdict(kernel) -> str:
    return escape(kernel_text.verdict(kernel))


def headline(kernel) -> str:
    head = kernel.headline
    return (f"**{escape(head.severity)}** " if head else "") + escape(kernel_text.headline_text(kernel))


def ncu_rules(kernel) -> list[str]:
    rules = kernel.ncu_rules_shown
    if not rules:
        return []
    rows = [[code(r.rule), phrasing.gain(r.estimated_speedup) + (f" ({r.speedup_type})" if r.speedup_type and r.estimated_speedup is not None else ""),
             code(r.counterpart) if r.counterpart else "", escape(r.agreement or "")] for r in rules]
    return [table(["ncu rule", "ncu est.", "ncuwrap finding", "comparison"], rows), ""]


def evidence(finding) -> str:
    return ", ".join(f"{code(name)} {escape(phrasing.metric(name, value))}" for name, value in finding.evidence.items())


def reprofile(diagnosis) -> list[str]:
    """Once for the report: which rules were not evaluated, on how many launches, and what to do."""
    r = diagnosis.reprofile
    if r is None:
        return []
    n, m = r.launches, len(r.missing)
    return ["**Not evaluated** " + f"on {n} launch{'es' if n != 1 else ''}: " + ", ".join(code(rule) for rule in r.rules)
            + f". {m} metric{'s' if m != 1 else ''} missing; {escape(r.how)}.", ""]


def level_gaps(diagnosis) -> list[str]:
    """Once for the report: the memory levels the charts (HTML's) lack for want of counters."""
    gaps = diagnosis.level_gaps()
    if not gaps:
        return []
    return ["**Charts**", "", *(f"- {escape(kernel_text.level_gap(g.gap, g.launches, len(diagnosis.kernels)))}." for g in gaps), ""]


def environment_line(diagnosis) -> str:
    src = diagnosis.source
    parts = [escape(src.device or "unknown GPU")]
    if src.compute_capability:
        parts.append(f"CC {escape(src.compute_capability)}")
    parts.append(f"ncu {escape(src.ncu_version or 'version not recorded')}")
    if src.clock_control:
        parts.append(f"clock control {escape(src.clock_control)}")
    if src.sm_clock_mhz is not None:
        parts.append(f"SM clock {phrasing.number(src.sm_clock_mhz)} MHz")
    report = code(phrasing.display_path(src.path)) + (f" (sha256 {code(src.sha256[:16])}…)" if src.sha256 else "")
    rules = f"rules {code(diagnosis.rules_name)} v{escape(diagnosis.rules_version)}"
    return f"{' · '.join(parts)} · report {report} · ncuwrap {__version__} · {rules}"


class _Seen:
    """Advice already printed in this comment: a second kernel with the same finding points back to
    the first instead of repeating the paragraph."""

    def __init__(self):
        self.first: dict[str, int] = {}

    def advice(self, text: str, rank: int) -> str:
        first = self.first.setdefault(text, rank)
        return escape(text) if first == rank else f"(Advice as for kernel {first}.)"


def launches_table(group, processes: bool, streams: bool) -> list[str]:
    """A kernel's launches in the order they ran, folded: the process and stream where the report has several."""
    listed = group.listed()
    rows = [[str(k.id), *([escape(kernel_text.process(k))] if processes else []), *([escape(k.stream or "n/a")] if streams else []),
             phrasing.duration(k.duration_ns), verdict(k)] for k in listed]
    header = ["launch", *(["process"] if processes else []), *(["stream"] if streams else []), "ncu time", "verdict"]
    align = "r" + "l" * (processes + streams) + "rl"
    more = ([f"The longest and those that differ from the rest; {group.count - len(listed)} more like the rest "
             "(`--format json` lists them all).", ""] if group.count > len(listed) else [])
    return details(f"The {group.count} launches", [table(header, rows, align), "", *more])


def kernel_section(rank: int, group, share_pct: float | None, seen: _Seen, processes: bool = False, streams: bool = False,
                   coverage=None, *, name: kernel_names.Names) -> list[str]:
    """The body of a kernel's section (under its heading or a folded block's summary)."""
    kernel = group.longest
    out = []
    program = kernel_text.program_line(kernel, coverage)
    if program:
        out += [f"In the program: {escape(program)}.", ""]
    launches = len(group.launches)
    where = (f"{launches} launches, {phrasing.duration(group.total_ns)} in all ({phrasing.percent(group.share_pct)} of the profiled time), "
             f"median {phrasing.duration(group.median_ns)}, min {phrasing.duration(group.min_ns)}, max {phrasing.duration(group.max_ns)}; the longest: "
             if launches > 1 else "")
    out.append(f"{where}{phrasing.duration(kernel.duration_ns)} ncu (instrumented)"
               + ("" if launches > 1 else f", {phrasing.share(share_pct)} of the profiled time")
               + f" · grid {kernel_text.launch(kernel.grid)}, block {kernel_text.launch(kernel.block)}")
    if len(group.verdicts) > 1:
        out.append("")
        out.append("Verdicts over the launches: " + ", ".join(f"{escape(label)} ×{count}" for label, count in group.verdicts) + ".")
    if kernel.name != name(kernel.name):
        out += ["", f"Full name: {code(kernel.name)}"]
    out.append("")
    out.append(f"**Why:** {escape(kernel.why) if kernel.why else 'undecided: the metrics the rules need were not collected.'}")
    out.append("")
    if kernel.where is not None:
        out += [line.removeprefix("  ") for line in where_lines(kernel.where, "  ", "- Stalls at")] + [""]
    if kernel.stop:
        out += [f"**Stop here:** {escape(kernel.stop.title)}. {seen.advice(kernel.stop.advice, rank)}", ""]
    issues = kernel.issues
    if issues:
        out.append(table(["severity", "est. gain", "finding", "evidence"],
                         [[escape(f.severity), phrasing.gain(f.estimated_speedup), escape(f.title), evidence(f)] for f in issues], "lrll"))
        out.append("")
        for f in issues:
            out.append(f"- {code(f.id)}: {seen.advice(f.advice, rank)}")
            out += where_lines(f.where, "  ", "- At")
        out.append("")
    step = kernel.next_step
    if step is not None and step.id is not None:
        out += [f"**Next:** {escape(step.title)}. {seen.advice(step.advice, rank)}", ""]
    if step is not None and step.undecided:
        out += [f"*Next step {escape(kernel_text.undecided_line(step))}.*", ""]
    minor = kernel.minor_findings
    if minor:
        out += ["*Minor (estimated to cost little time):* " + ", ".join(f"{code(f.id)} est. {phrasing.gain(f.estimated_speedup)}" for f in minor), ""]
    rules = ncu_rules(kernel)
    if rules:
        out += details("Nsight Compute's own rules on this launch", rules)
    if kernel.not_evaluated:
        out += [f"*{kernel_text.not_evaluated_count(kernel)}* (see the end).", ""]
    if launches > 1:
        out += launches_table(group, processes, streams)
    return out


def where_lines(where, indent: str, lead: str) -> list[str]:
    """The lines holding a waste as list items under ``lead``, then a snippet of the source with the
    hot lines marked (where the report carries the text)."""
    if where is None:
        return []
    note = kernel_text.where_note(where)
    out = [f"{indent}*{escape(note)}*"] if note else []
    for i, hot in enumerate(getattr(where, "lines", ())):
        out.append(f"{indent}{lead} {code(hot.location)}: " + escape(kernel_text.hot_line(where, hot, i == 0, location=False)))
    snippet = getattr(where, "snippet", ())
    if snippet:
        width = len(str(max(s.line for s in snippet)))
        body = [f"{'>>' if s.hot else '  '} {s.line:>{width}} | {s.text}" + (f"    // {100 * s.share:.0f}%" if s.hot else "")
                for s in snippet]
        out += ["", *(indent + line for line in fenced(body)), ""]
    return out


def details(summary: str, lines: list[str]) -> list[str]:
    """A folded block (GitHub renders Markdown inside it). The summary is HTML, so it is escaped as HTML."""
    return [f"<details><summary>{html.escape(terminal(summary), quote=False)}</summary>", "", *lines, "</details>", ""]


def render(diagnosis, shown: Shown = COMMENT, names: str = kernel_names.SHORT, **_options) -> str:
    name = kernel_names.of(diagnosis, names)
    parts = layout(diagnosis, shown)
    total = diagnosis.total_ns
    groups = parts.groups
    n = len(parts.launches)
    out = [f"## ncuwrap: {code(phrasing.display_path(diagnosis.source.path))}", ""]
    what = f"{n} kernel launch{'es' if n != 1 else ''}" + (f" of {len(groups)} kernel{'s' if len(groups) != 1 else ''}" if len(groups) != n else "")
    out.append(f"{what}, {phrasing.duration(total) if total else 'n/a'} ncu time in all. "
               f"ncu durations are instrumented (each kernel replayed; {kernel_text.clock_note(diagnosis)}): compare them with each other only.")
    out.append("")
    if diagnosis.coverage:
        out += [escape(kernel_text.coverage_line(diagnosis.coverage)), ""]
    grouped = len(groups) != n
    spread = (lambda g: [phrasing.duration(g.median_ns), phrasing.duration(g.min_ns), phrasing.duration(g.max_ns)]) if grouped else (lambda g: [])
    rows = [[str(i), code(name(g.name)), *([str(len(g.launches))] if grouped else []), verdict(g.longest), headline(g.longest),
             phrasing.gain(g.longest.estimated_gain_pct), phrasing.duration(g.total_ns), *spread(g), phrasing.percent(g.share_pct)]
            for i, g in enumerate(parts.summary_groups, start=1)]
    header = ["#", "kernel", *(["launches"] if grouped else []), "verdict", "headline", "est. gain", "ncu time",
              *(["median", "min", "max"] if grouped else []), "share"]
    out.append(table(header, rows, "rl" + ("r" if grouped else "") + "lllr" + ("rrr" if grouped else "") + "r"))
    if grouped:
        out += ["", "One row per kernel (its launches together): ncu time is their total, median, min and max are per launch; "
                "verdict, headline and gain are its longest launch's."]
    rest = parts.groups_below
    if rest:
        out += ["", f"… and {len(rest)} more kernel{'s' if len(rest) != 1 else ''} ({phrasing.share(parts.groups_rest_share_pct)} of the ncu time): "
                "see the HTML report (`--format html`)."]
    if parts.fix_first:
        out += ["", f"**Fix first** ({kernel_text.fix_first_scope(diagnosis)} × estimated gain):", ""]
        out += [f"{i}. {escape(kernel_text.priority_line(p, bool(diagnosis.coverage), name))}" for i, p in enumerate(parts.fix_first, 1)]
    out.append("")
    if diagnosis.stop_line is not None:
        out += [f"**Stop line:** {escape(bench_text.stop_line_text(diagnosis.stop_line))}", ""]
    seen = _Seen()
    for i, g in enumerate(parts.section_groups, start=1):
        section = kernel_section(i, g, diagnosis.share_pct([g.longest]), seen, len(diagnosis.processes) > 1, len(diagnosis.streams) > 1,
                                 diagnosis.coverage, name=name)
        # The first kernels open; the rest fold, so a long report stays a short comment.
        if parts.unfolded(i):
            out += [f"### {i}. {code(name(g.name))}: {verdict(g.longest)}", "", *section]
        else:
            out += details(f"{i}. {name(g.name)}: {g.longest.verdict_label}", section)
    out += reprofile(diagnosis)
    out += level_gaps(diagnosis)
    if diagnosis.lines_hint:
        out += [f"*Source lines not attributed: {escape(diagnosis.lines_hint)}.*", ""]
    if diagnosis.notes:
        out += ["Notes:", ""] + [f"- {escape(n)}" for n in diagnosis.notes] + [""]
    out.append("---")
    out.append("")
    out.append(environment_line(diagnosis))
    return "\n".join(out) + "\n"
