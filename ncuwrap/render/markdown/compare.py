"""Markdown output of ``ncuwrap compare``: the short form for a pull-request comment (GFM, no HTML)."""

from __future__ import annotations

from ncuwrap.core.version import __version__
from ncuwrap.render import names as kernel_names
from ncuwrap.render import phrasing
from ncuwrap.render.phrasing import compare as compare_text
from ncuwrap.render.phrasing import kernel as kernel_text
from ncuwrap.render.escape import code, escape, table
from ncuwrap.kernel.shown import COMMENT, Shown


def _kernel_name(pair, name: kernel_names.Names) -> str:
    if pair.before.name == pair.after.name:
        return code(name(pair.name))
    return f"{code(name(pair.before.name))} → {code(name(pair.after.name))}"


def _ids(ids) -> str:
    return ", ".join(code(i) for i in ids) or "none"


def _verdict(pair) -> str:
    before, after = escape(kernel_text.verdict(pair.before)), escape(kernel_text.verdict(pair.after))
    return f"{before} → **{after}**" if pair.verdict_changed else f"{after} (unchanged)"


def _ncu_time(pair) -> str:
    d = pair.deltas["duration_ns"]
    return f"{phrasing.duration(d.before)} → {phrasing.duration(d.after)} ({phrasing.speedup(pair.ncu_speedup)})"


def _real(pair) -> str:
    if pair.speedup is None:
        return "n/a"
    return f"**{phrasing.speedup(pair.speedup)}** ({phrasing.ms(pair.before_timing.median_ms)} → {phrasing.ms(pair.after_timing.median_ms)})"


def pair_section(pair, name: kernel_names.Names) -> list[str]:
    out = [f"### {_kernel_name(pair, name)}", "", f"Paired by {escape(pair.paired_by)} · verdict {_verdict(pair)}", ""]
    for label, ids in (("Resolved", pair.resolved), ("Introduced", pair.introduced), ("Still there", pair.persisting),
                       ("Not comparable (not evaluated on the other side)", pair.not_comparable)):
        for fid in ids:
            f = pair.finding(fid)
            evidence = ", ".join(f"{code(name)} {escape(compare_text.change(delta))}" for name, delta in pair.evidence.get(fid, {}).items())
            out.append(f"- **{label}** {code(fid)} ({escape(f.severity)}): {escape(f.title)}" + (f". Evidence: {evidence}" if evidence else ""))
            out += [f"  - line {code(c.location)}: " + escape(compare_text.line_change(c).split(": ", 1)[1]) for c in pair.lines.get(fid, ())]
    if out[-1] != "":
        out.append("")
    if pair.estimated_gain_pct is not None:
        out += [f"*Payoff:* {escape(compare_text.estimate_vs_measured(pair))}.", ""]
    rows = [[escape(compare_text.METRIC_LABELS.get(name, name)), phrasing.metric(name, d.before), phrasing.metric(name, d.after), compare_text.change_only(d)]
            for name, d in pair.deltas.items()]
    if pair.speedup is not None:
        rows.append(["bench median (uninstrumented)", phrasing.ms(pair.before_timing.median_ms), phrasing.ms(pair.after_timing.median_ms),
                     phrasing.speedup(pair.speedup)])
    out += [table(["metric", "before", "after", "change"], rows, "lrrr"), ""]
    for note in pair.timing_notes:
        out += [f"*Timing:* {escape(note)}", ""]
    return out


def render(result, shown: Shown = COMMENT, names: str = kernel_names.SHORT, **_options) -> str:
    name = kernel_names.of(result, names)
    b, a = result.before, result.after
    out = ["## ncuwrap compare", "", f"**before** {code(phrasing.display_path(b.source.path))} → **after** {code(phrasing.display_path(a.source.path))}", ""]
    # Few, narrow columns: a pull-request comment is ~100 characters wide.
    rows = [[_kernel_name(p, name), _verdict(p), _ncu_time(p), f"{phrasing.gain_factor(p.estimated_gain_pct)} / {_real(p)}", _ids(p.resolved),
             _ids(p.introduced)]
            for p in result.pairs]
    if rows:
        out += [table(["kernel", "verdict", "ncu time (instrumented)", "speedup est. / real", "resolved", "introduced"], rows), ""]
    else:
        out += ["No kernel could be paired.", ""]
    if result.regressions:
        out.append(f"**Regressions** ({escape(result.gate)}):")
        out.append("")
        for p in result.pairs:
            for r in p.regressions:
                what = f"finding {code(r.finding)} introduced ({escape(r.severity)})" if r.finding else escape(r.text)
                out.append(f"- {_kernel_name(p, name)}: {what}")
    else:
        out.append(f"**No regression** (what counts: {escape(result.gate)}).")
    if result.not_gating:
        out += ["", f"{escape(compare_text.NOT_GATING)}:", ""]
        out += [f"- {_kernel_name(p, name)}: finding {code(r.finding)} introduced ({escape(r.severity)}), {escape(r.waived)}"
                for p in result.pairs for r in p.not_gating]
    out.append("")
    detail = shown.detail
    for p in result.pairs[:detail]:
        out += pair_section(p, name)
    if len(result.pairs) > detail:
        out += [f"… and {len(result.pairs) - detail} more pairs: see `--format html`.", ""]
    for side, kernels in (("before", result.unpaired_before), ("after", result.unpaired_after)):
        if kernels:
            out += [f"*Only in {side}:* " + ", ".join(f"{code(k.name)} (launch {k.id})" for k in kernels), ""]
    for note in result.notes:
        out += [f"*Note:* {escape(note)}", ""]
    out += ["---", "",
            f"ncu durations are instrumented (each kernel replayed under ncu); real speedups come from `ncuwrap bench` timings. "
            f"{escape(a.source.device or 'unknown GPU')} · ncuwrap {__version__} · rules {code(a.rules_name)} v{escape(a.rules_version)}"]
    return "\n".join(out) + "\n"
