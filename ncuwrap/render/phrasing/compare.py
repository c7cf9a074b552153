"""The sentences of a comparison of two kernel diagnoses (``ncuwrap compare``): each metric's change, the verdict's,
the estimate against the measured speed-up, a finding's lines before and after."""

from __future__ import annotations

from ncuwrap.render.phrasing import gain, gain_factor, metric, number, speedup
from ncuwrap.render.phrasing.kernel import verdict


def change(delta) -> str:
    """A compare Delta as '22.0% → 64.6% (+42.6 pts)', '108.13 us → 36.19 us (-66.5%)', 'l1tex → l2'."""
    before, after = metric(delta.name, delta.before), metric(delta.name, delta.after)
    if delta.delta is None:
        return f"{before} → {after}"
    if delta.unit == "%":
        return f"{before} → {after} ({delta.delta:+.1f} pts)"
    if delta.change_pct is not None:
        return f"{before} → {after} ({delta.change_pct:+.1f}%)"
    return f"{before} → {after}"


def estimate_vs_measured(pair) -> str:
    """'estimated 4.50x, measured 6.42x' for a compare pair: what BEFORE's counters said the resolved
    findings cost, against the bench timings."""
    if pair.estimated_gain_pct is None:
        return "no estimate (no resolved finding with one)"
    est = f"estimated {gain_factor(pair.estimated_gain_pct)} ({gain(pair.estimated_gain_pct)} of the time)"
    return f"{est}, measured {speedup(pair.speedup)}" if pair.speedup is not None else f"{est}; measured: give both bench timings"


def verdict_change(pair) -> str:
    before, after = verdict(pair.before), verdict(pair.after)
    return f"{before} → {after}" if pair.verdict_changed else f"{after} (unchanged)"


def change_only(delta) -> str:
    """Just the change of a compare Delta: '+42.6 pts', '-66.5%', '' when it has none."""
    if delta.delta is None:
        return ""
    if delta.unit == "%":
        return f"{delta.delta:+.1f} pts"
    if delta.change_pct is not None:
        return f"{delta.change_pct:+.1f}%"
    return f"{delta.delta:+g}"

# Plain names of the key metrics compared by 'ncuwrap compare'.
# The heading of the findings a comparison introduced but did not gate on (ncuwrap.kernel.compare.gates_on).
NOT_GATING = "Introduced, not gating (the change made it measurably faster; --fail-on-finding LEVEL counts them)"

METRIC_LABELS = {
    "duration_ns": "ncu duration (instrumented)",
    "sm_pct": "SM throughput",
    "memory_pct": "memory throughput (busiest unit)",
    "dram_pct": "DRAM throughput",
    "l2_pct": "L2 throughput",
    "l1tex_pct": "L1/TEX throughput",
    "achieved_occupancy_pct": "achieved occupancy",
}


def line_change(change) -> str:
    """'transpose.cu:31: 14,680,064 excess global store sectors -> gone' (a line of a finding, before and after)."""
    after = "the finding no longer fires" if change.after is None else ("gone" if change.gone else number(change.after))
    return f"{change.location}: {number(change.before)} {change.label} ({100 * change.before_share:.0f}% before) -> {after}"
