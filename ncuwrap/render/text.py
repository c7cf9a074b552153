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
