"""The words every result kind's sentences share: durations, shares, sizes, rates, counts and estimates as the
reports write them. The sentences of each kind of result are this package's modules: :mod:`.kernel` (a kernel's
diagnosis), :mod:`.compare` (two of them), :mod:`.timeline` (a timeline, and two), :mod:`.ranks` (a set of ranks),
:mod:`.bench` (a bundled lesson's stop line). The renderers (table, Markdown, HTML) only format with them."""

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


def ms(value) -> str:
    """A bench median: '0.08186 ms' (4 significant digits: the runs' spread is larger)."""
    return "n/a" if value is None else f"{float(value):.4g} ms"


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


def display_path(path) -> str:
    """A report path as a shared document shows it: relative to the current folder when inside it;
    otherwise the file name (an absolute path names someone's machine, not the report)."""
    from pathlib import Path

    text = str(path)
    p = Path(text)
    if not p.is_absolute():
        return text
    try:
        return str(p.relative_to(Path.cwd()))
    except ValueError:
        return p.name


def gain(value) -> str:
    """An estimated speedup (% of the kernel's time) as a reader wants it: '74%', '<1%', 'n/a'."""
    if value is None:
        return "n/a"
    value = float(value)
    return "<1%" if 0 < value < 1 else f"{value:.0f}%"


def gain_factor(value) -> str:
    """The same estimate as a speedup factor: 74% of the time saved is '3.85x'."""
    if value is None:
        return "n/a"
    value = float(value)
    return "n/a" if value >= 100 else f"{1.0 / (1.0 - value / 100.0):.2f}x"


def share(pct: float | None) -> str:
    """A share of the profiled time (Diagnosis.share_pct), as the reports print it."""
    return "n/a" if pct is None else f"{pct:.1f}%"


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
    from ncuwrap.kernel import metrics as kernel_metrics

    if value is None or isinstance(value, str):
        return number(value)
    unit = kernel_metrics.unit(name)
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


def speedup(ratio) -> str:
    """before/after time ratio: '2.99x faster', '1.25x slower', 'n/a'."""
    if ratio is None:
        return "n/a"
    return f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"


def gbps(value) -> str:
    return "n/a" if value is None or value != value else f"{float(value):.1f} GB/s"


def size(nbytes, spec: str = ",.1f", missing: str = "n/a") -> str:
    """'64.0 MiB', '4.0 KiB', '12 B' (``spec``: how the scaled number is written; ``missing``: for None)."""
    if nbytes is None:
        return missing
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{format(nbytes / scale, spec)} {unit}"
    return f"{int(nbytes)} B"


def evidence(finding) -> str:
    """'name=value, ...' of a finding's evidence."""
    return ", ".join(f"{name}={number(value)}" for name, value in finding.evidence.items())
