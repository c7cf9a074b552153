"""The words of a timeline comparison, shared by the table, Markdown and HTML renderers: each
quantity with its unit, its change, the headline, the verdicts and the findings."""

from __future__ import annotations

from ncuwrap.render import phrasing
from ncuwrap.render.phrasing import timeline as timeline_text


def amount(value, unit: str) -> str:
    """A quantity of a step or a window: '2.35 ms', '123', '7.5', '32.0 KiB'."""
    if value is None:
        return "n/a"
    if unit == "ns":
        return phrasing.duration(value)
    if unit == "bytes":
        return phrasing.size(value)
    return phrasing.number(round(float(value), 1))


def signed(d, unit: str) -> str:
    """A change: '-1.88 ms', '+12.02 us', '-122', 'same'."""
    if d is None:
        return "n/a"
    if abs(d) < 0.05:
        return "same"
    return ("+" if d > 0 else "-") + amount(abs(d), unit)


def delta(change) -> str:
    return signed(change.delta, change.unit)


def row(change) -> list[str]:
    return [change.label, amount(change.before, change.unit), amount(change.after, change.unit), delta(change)]


def title(result) -> str:
    """'per step (the steady steps: 64 of 64 -> 63 of 64)' or 'whole captures (no steps)'."""
    if result.per_step:
        b, a = result.before.timeline.steps, result.after.timeline.steps
        return f"per step (the steady steps: {len(b.steady)} of {b.count} → {len(a.steady)} of {a.count})"
    return "whole captures (no steps on both sides)"


def where_title(result) -> str:
    """The breakdown's title: its statistic, and that its rows add up to its last (the mean step, or the window)."""
    scope = "a step: the mean over the steady steps" if result.per_step else "the traced window"
    return f"Where the time went ({scope}; the rows add up to the last)"


def where_rows(result) -> list:
    return [*result.breakdown, result.breakdown_total]


def step_title(result) -> str:
    """The table of the step (the headline's mean, the median beside it) and each whole capture."""
    return "The step (over the steady steps) and the whole capture" if result.per_step else "The captures"


def step_rows(result) -> list:
    return [c for c in (result.period, result.median_period, result.untraced, result.gpu_work, result.end_to_end) if c is not None]


def host_title(result) -> str:
    return f"Host and copies ({'a step: the mean over the steady steps' if result.per_step else 'the window'})"


def kernels_title(result) -> str:
    return f"Kernels, by change of time ({'a step: the mean over the steady steps' if result.per_step else 'the window'})"


def headline(result) -> str:
    """'a step (mean): 2.35 ms → 468.96 us, 5.02x faster (median: 2.35 ms → 468.81 us)'."""
    p, m = result.period, result.median_period
    median = f" (median: {amount(m.before, m.unit)} → {amount(m.after, m.unit)})" if m is not None else ""
    u = result.untraced
    untraced = (f"; without the tracer (estimated): {amount(u.before, u.unit)} → {amount(u.after, u.unit)}, "
                f"{phrasing.speedup(result.untraced_speedup)}") if u is not None and result.untraced_speedup else ""
    return f"{p.label}: {amount(p.before, p.unit)} → {amount(p.after, p.unit)}, {phrasing.speedup(result.speedup)}{median}{untraced}"


def predicted(result) -> str | None:
    """'BEFORE's replay predicted pinned_overlap 2.85x, measured 2.83x (both without the tracer); the others: ...'; None without predictions."""
    best = result.closest_prediction
    if best is None:
        return None
    others = ", ".join(f"{p.remedy} {p.speedup:.2f}x" for p in result.predictions if p is not best)
    return (f"BEFORE's replay predicted {best.remedy} {best.speedup:.2f}x, measured {result.untraced_speedup:.2f}x (both without the tracer)"
            + (f"; the others: {others}" if others else ""))


def verdicts(result) -> str:
    before, after = timeline_text.timeline_verdict(result.before), timeline_text.timeline_verdict(result.after)
    return f"{before} → {after}" if result.verdict_changed else f"{after} (unchanged)"


def findings(result) -> str:
    """'resolved: a; introduced: b' and, where the verdict moved a finding between the lists without its
    condition changing, '; now reported, held before too: c; no longer reported, still holds: d'."""
    resolved = ", ".join(result.resolved) or "none"
    introduced = ", ".join(result.introduced) or "none"
    out = f"resolved: {resolved}; introduced: {introduced}"
    if result.held_before:
        out += f"; now reported, held before too: {', '.join(result.held_before)}"
    if result.still_holds:
        out += f"; no longer reported, still holds: {', '.join(result.still_holds)}"
    return out


def kernel_note(k) -> str:
    if k.status != "both":
        return k.status
    return "launch configuration changed" if k.config_changed else ""


def kernel_row(k) -> list[str]:
    """[launches a step, time before, time after, change, speedup, note]."""
    launches = f"{phrasing.number(round(k.before_launches, 1))} → {phrasing.number(round(k.after_launches, 1))}"
    return [launches, phrasing.duration(k.before_ns), phrasing.duration(k.after_ns), signed(k.delta_ns, "ns"),
            phrasing.speedup(k.speedup) if k.speedup else "", kernel_note(k)]


def hidden_line(result) -> str:
    n = result.kernels_hidden
    return f"{n} more kernel{'s' if n != 1 else ''} changed less (all are in --format json)" if n else ""
