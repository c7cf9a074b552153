"""Small formatting helpers shared by the text renderers (table, markdown, html)."""

from __future__ import annotations


def duration(ns) -> str:
    """Human duration from ns: '36.19 us'."""
    if ns is None:
        return "n/a"
    ns = float(ns)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.0f} ns"


def percent(value) -> str:
    return "n/a" if value is None else f"{float(value):.1f}%"


def number(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return value
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def launch(dims) -> str:
    return "x".join(str(d) for d in dims) if dims else "n/a"


def verdict(kernel) -> str:
    """'memory (l1tex)' style label."""
    return f"{kernel.bound} ({kernel.limiter})" if kernel.limiter else kernel.bound


def share(kernel, total_ns: float) -> str:
    if not total_ns or kernel.duration_ns is None:
        return "n/a"
    return f"{100.0 * kernel.duration_ns / total_ns:.1f}%"


def si(value, unit: str) -> str:
    """``3.1e12, 'B/s'`` -> ``'3.11 TB/s'``."""
    if value is None or isinstance(value, str):
        return "n/a" if value is None else value
    value = float(value)
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


_SI_UNITS = {"byte/s": "B/s", "flop/s": "FLOP/s", "hz": "Hz"}


def metric(name: str, value) -> str:
    """A metric's value with its unit, as a reader expects it: '64.6%', '3.11 TB/s', '36.19 us', '16,378,009'."""
    from ncuwrap import metrics as M

    if value is None or isinstance(value, str):
        return number(value)
    unit = M.unit(name)
    if unit == "%":
        return percent(value)
    if unit == "ns":
        return duration(value)
    if unit in _SI_UNITS:
        return si(value, _SI_UNITS[unit])
    return number(value)


def signed(value, digits: int = 1, suffix: str = "") -> str:
    """'+12.3' / '-4.0' / 'n/a'."""
    return "n/a" if value is None else f"{float(value):+.{digits}f}{suffix}"


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


def speedup(ratio) -> str:
    """before/after time ratio: '2.99x faster', '1.25x slower', 'n/a'."""
    if ratio is None:
        return "n/a"
    return f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"


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
METRIC_LABELS = {
    "duration_ns": "ncu duration (instrumented)",
    "sm_pct": "SM throughput",
    "memory_pct": "memory throughput (busiest unit)",
    "dram_pct": "DRAM throughput",
    "l2_pct": "L2 throughput",
    "l1tex_pct": "L1/TEX throughput",
    "achieved_occupancy_pct": "achieved occupancy",
}


def clock_note(diagnosis) -> str:
    """How the GPU clocks were handled while ncu measured, from the report's command line."""
    control = (diagnosis.environment or {}).get("clock_control")
    if control is None:
        return "are set by ncu (its default locks them to base)"
    if control.startswith("none"):
        return "were left alone (--clock-control none)"
    if control.startswith("base"):
        return "were locked to base by ncu (--clock-control base, its default)"
    return f"were set by ncu (--clock-control {control})"


def headline_text(kernel) -> str:
    """The summary line of a kernel: its first finding, and how many rules could not be evaluated."""
    head = kernel.headline
    text = head.title if head else "no issue found"
    if kernel.not_evaluated:
        n = len(kernel.not_evaluated)
        text += f" ({n} rule{'s' if n != 1 else ''} not evaluated)"
    return text
