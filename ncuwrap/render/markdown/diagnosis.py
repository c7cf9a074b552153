"""Markdown output of a kernel diagnosis: the short form for a pull-request comment (GFM, escaped
with ncuwrap.render.escape)."""

from __future__ import annotations

from ncuwrap import __version__
from ncuwrap import metrics as M
from ncuwrap.render import text as T
from ncuwrap.render.escape import code, escape, table

DETAIL = 5
SUMMARY = 15

def verdict(kernel) -> str:
    return escape(T.verdict(kernel))


def headline(kernel) -> str:
    head = kernel.headline
    return (f"**{head.severity}** " if head else "") + escape(T.headline_text(kernel))


def ncu_rules(kernel) -> list[str]:
    rules = T.ncu_rules_shown(kernel)
    if not rules:
        return []
    rows = [[code(r.rule), T.gain(r.estimated_speedup) + (f" ({r.speedup_type})" if r.speedup_type and r.estimated_speedup is not None else ""),
             code(r.counterpart) if r.counterpart else "", escape(r.agreement or "")] for r in rules]
    return ["Nsight Compute's own rules on this launch:", "", table(["ncu rule", "ncu est.", "ncuwrap finding", "comparison"], rows), ""]


def evidence(finding) -> str:
    return ", ".join(f"{code(name)} {escape(T.metric(name, value))}" for name, value in finding.evidence.items())


def not_evaluated(kernel) -> str | None:
    """One line: which rules were not evaluated and what to re-profile with."""
    if not kernel.not_evaluated:
        return None
    missing = [m for n in kernel.not_evaluated for m in n.missing]
    sections = sorted({s for s in (M.section_of(m) for m in missing) if s})
    how = " ".join(f"--section {s}" for s in sections) if sections else "--metrics " + ",".join(dict.fromkeys(missing))
    rules = ", ".join(code(n.rule) for n in kernel.not_evaluated)
    return f"*Not evaluated:* {rules}: {len(set(missing))} metric(s) not collected; re-profile with {code(how)}."


def environment_line(diagnosis) -> str:
    env = diagnosis.environment or {}
    src = diagnosis.source
    parts = [escape(env.get("gpu") or src.device or "unknown GPU")]
    cc = env.get("compute_capability") or src.compute_capability
    if cc:
        parts.append(f"CC {escape(cc)}")
    parts.append(f"ncu {escape(env.get('ncu_version') or src.ncu_version or 'version not recorded')}")
    if env.get("clock_control"):
        parts.append(f"clock control {escape(env['clock_control'])}")
    if env.get("sm_clock_mhz") is not None:
        parts.append(f"SM clock {T.number(env['sm_clock_mhz'])} MHz")
    sha = env.get("sha256") or src.sha256
    report = code(src.path) + (f" (sha256 {code(sha[:16])}…)" if sha else "")
    rules = f"rules {code(diagnosis.rules_name)} v{diagnosis.rules_version}"
    return f"{' · '.join(parts)} · report {report} · ncuwrap {__version__} · {rules}"


def kernel_section(rank: int, kernel, share: str) -> list[str]:
    out = [f"### {rank}. {code(kernel.name)}: {verdict(kernel)}", ""]
    out.append(f"{T.duration(kernel.duration_ns)} ncu (instrumented), {share} of the profiled time · grid {T.launch(kernel.grid)}, block {T.launch(kernel.block)}")
    out.append("")
    out.append(f"**Why:** {escape(kernel.why) if kernel.why else 'undecided: the metrics the rules need were not collected.'}")
    out.append("")
    stop = next((f for f in kernel.findings if f.id == "at_roofline"), None)
    if stop:
        out += [f"**Stop here:** {escape(stop.title)}. {escape(stop.advice)}", ""]
    issues = [f for f in kernel.findings if f.id != "at_roofline" and not f.minor]
    if issues:
        out.append(table(["severity", "est. gain", "finding", "evidence"],
                         [[f.severity, T.gain(f.estimated_speedup), escape(f.title), evidence(f)] for f in issues], "lrll"))
        out.append("")
        out += [f"- {code(f.id)}: {escape(f.advice)}" for f in issues]
        out.append("")
    minor = [f for f in kernel.findings if f.minor]
    if minor:
        out += ["*Minor (estimated to cost little time):* " + ", ".join(f"{code(f.id)} est. {T.gain(f.estimated_speedup)}" for f in minor), ""]
    out += ncu_rules(kernel)
    note = not_evaluated(kernel)
    if note:
        out += [note, ""]
    return out


def render(diagnosis, detail: int = DETAIL, summary: int = SUMMARY, **_options) -> str:
    kernels = diagnosis.by_time()
    total = sum(k.duration_ns or 0 for k in kernels)
    n = len(kernels)
    out = [f"## ncuwrap: {code(diagnosis.source.path)}", ""]
    out.append(f"{n} kernel launch{'es' if n != 1 else ''}, {T.duration(total) if total else 'n/a'} ncu time in all. "
               f"ncu durations are instrumented (each kernel replayed; clocks {T.clock_note(diagnosis)}): compare them with each other only.")
    out.append("")
    shown = kernels[: max(summary, detail)]
    rows = [[str(i), code(k.name), verdict(k), headline(k), T.gain(k.estimated_gain_pct), T.duration(k.duration_ns), T.share(k, total)]
            for i, k in enumerate(shown, start=1)]
    out.append(table(["#", "kernel", "verdict", "headline", "est. gain", "ncu time", "share"], rows, "rllllrr"))
    if n > len(shown):
        rest = kernels[len(shown):]
        rest_ns = sum(k.duration_ns or 0 for k in rest)
        share = f"{100.0 * rest_ns / total:.1f}%" if total else "n/a"
        out += ["", f"… and {len(rest)} more launch{'es' if len(rest) != 1 else ''} ({share} of the ncu time): see the HTML report (`--format html`)."]
    first = T.fix_first(diagnosis)
    if n > 1 and first:
        out += ["", "**Fix first** (share of the time × estimated gain):", ""]
        out += [f"{i}. {escape(T.priority_line(p))}" for i, p in enumerate(first, 1)]
    out.append("")
    for i, k in enumerate(kernels[:detail], start=1):
        out += kernel_section(i, k, T.share(k, total))
    out.append("---")
    out.append("")
    out.append(environment_line(diagnosis))
    return "\n".join(out) + "\n"
