"""What the timeline renderers (table, Markdown, HTML) share: the breakdown's segments, the text bar,
and the one-line Amdahl lesson."""

from __future__ import annotations

from dataclasses import dataclass

from ncuwrap.render import text as T
from ncuwrap.timeline.model import CATEGORIES, CATEGORY_LABELS, TimelineDiagnosis, pct

COLORS = {"kernel": "#4e79a7", "memcpy_htod": "#f28e2b", "memcpy_dtoh": "#e15759", "memcpy_dtod": "#76b7b2",
          "memcpy_other": "#b07aa1", "memset": "#59a14f", "idle": "#d4d0cc"}
GLYPHS = {"kernel": "#", "memcpy_htod": ">", "memcpy_dtoh": "<", "memcpy_dtod": "=", "memcpy_other": "~", "memset": "-", "idle": "."}


@dataclass(frozen=True)
class Segment:
    category: str
    label: str
    ns: int
    pct: float
    color: str
    glyph: str


def segments(diagnosis: TimelineDiagnosis, *, all_categories: bool = False) -> list[Segment]:
    """The breakdown in attribution order; empty categories (other than kernels and idle) left out
    unless ``all_categories``."""
    t = diagnosis.timeline
    out = []
    for category in CATEGORIES:
        ns = t.breakdown_ns[category]
        if ns or all_categories or category in ("kernel", "idle"):
            out.append(Segment(category, CATEGORY_LABELS[category], ns, pct(ns, t.window_ns), COLORS[category], GLYPHS[category]))
    return out


def text_bar(diagnosis: TimelineDiagnosis, width: int = 60) -> str:
    """The breakdown as ``width`` characters, one glyph per category (largest remainders; any
    category present gets at least one character)."""
    parts = [s for s in segments(diagnosis) if s.ns > 0]
    total = sum(s.ns for s in parts)
    if not total:
        return GLYPHS["idle"] * width
    exact = [s.ns * width / total for s in parts]
    counts = [max(1, int(x)) for x in exact]
    while sum(counts) > width:
        i = max((k for k in range(len(counts)) if counts[k] > 1), key=lambda k: counts[k] - exact[k])
        counts[i] -= 1
    while sum(counts) < width:
        i = max(range(len(counts)), key=lambda k: exact[k] - counts[k])
        counts[i] += 1
    return "".join(s.glyph * n for s, n in zip(parts, counts))


def legend(diagnosis: TimelineDiagnosis) -> str:
    return "  ".join(f"{s.glyph} {s.label}" for s in segments(diagnosis))


def amdahl_lesson(diagnosis: TimelineDiagnosis) -> str:
    """'Kernels are 7.4% of the window: 4x faster kernels make the run 1.06x faster end to end, and even
    kernels taking no time only 1.08x.'"""
    t = diagnosis.timeline
    rows = {row.kernel_speedup: row for row in t.amdahl}
    four, ceiling = rows.get(4.0), rows.get(None)
    share = pct(t.breakdown_ns["kernel"], t.window_ns)
    if four is None or ceiling is None:
        return ""
    return (f"Kernels are {share:.1f}% of the window: 4x faster kernels make the run {four.end_to_end_speedup:.2f}x faster "
            f"end to end, and even kernels taking no time only {ceiling.end_to_end_speedup:.2f}x.")


def verdict(diagnosis: TimelineDiagnosis) -> str:
    return f"{diagnosis.bound} ({diagnosis.limiter})" if diagnosis.limiter else diagnosis.bound


def header(diagnosis: TimelineDiagnosis) -> str:
    s = diagnosis.source
    return f"{s.path}  ({s.kind}; {s.device or 'unknown GPU'}; nsys {s.nsys_version or '?'})"


def gbps(value) -> str:
    return "n/a" if value is None or value != value else f"{float(value):.1f} GB/s"


def size(nbytes) -> str:
    """'64.0 MiB', '4.0 KiB', '12 B'."""
    if nbytes is None:
        return "n/a"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:,.1f} {unit}"
    return f"{int(nbytes)} B"


def evidence(finding) -> str:
    return ", ".join(f"{name}={T.number(value)}" for name, value in finding.evidence.items())


def api_rows(diagnosis: TimelineDiagnosis) -> list[tuple[str, int, int]]:
    """(category, calls, ns) for the categories with calls, largest time first."""
    cats = diagnosis.timeline.api_categories()
    return sorted(((c, v["calls"], v["total_ns"]) for c, v in cats.items() if v["calls"]), key=lambda r: -r[2])
