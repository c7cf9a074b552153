"""HTML output of ``ncuwrap compare``: one self-contained page (templates/compare.html).

Each pair gets its findings grouped as resolved / introduced / still there, the key metrics before
and after, and the charts with both points (roofline, bandwidth, Speed of Light, occupancy).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ncuwrap.core.version import __version__
from ncuwrap.render import names as kernel_names
from ncuwrap.render.html import diagnosis as diagnosis_page
from ncuwrap.render.html import environment
from ncuwrap.render.phrasing import compare as compare_text
from ncuwrap.kernel.shown import PAGE, Shown

SERIES = ["before", "after"]


@dataclass(frozen=True)
class Group:
    """A pair's findings under one heading of the HTML page (resolved, introduced, ...), with the style of that heading."""
    label: str
    css: str
    findings: list


@dataclass(frozen=True)
class PairView:
    """A kernel pair as the HTML compare page draws it: its anchor, its finding groups and its charts (from :func:`pair_view`)."""
    pair: object
    anchor: str
    detailed: bool
    groups: list = field(default_factory=list)
    charts: dict = field(default_factory=dict)


def pair_view(pair, index: int, detailed: bool) -> PairView:
    anchor = f"p{index}"
    if not detailed:
        return PairView(pair, anchor, False)
    before = {f.id: f for f in pair.before.findings}
    after = {f.id: f for f in pair.after.findings}
    groups = [
        Group("resolved", "down", [before[i] for i in pair.resolved]),
        Group("introduced", "up", [after[i] for i in pair.introduced if i not in pair.good_news]),
        Group("introduced (good news)", "down", [after[i] for i in pair.good_news]),
        Group("still there", "", [after[i] for i in pair.persisting]),
        Group("not comparable", "note", [after.get(i) or before[i] for i in pair.not_comparable]),
    ]
    charts = diagnosis_page.kernel_charts([pair.before, pair.after], SERIES)
    return PairView(pair, anchor, True, [g for g in groups if g.findings], charts)


def environment_rows(result) -> list[tuple[str, object, object]]:
    """(label, before, after) rows: the two environments side by side."""
    before = diagnosis_page.environment_rows(result.before) + [("uninstrumented timings", result.before_timing or "none given (--before-timing)")]
    after = dict(diagnosis_page.environment_rows(result.after) + [("uninstrumented timings", result.after_timing or "none given (--after-timing)")])
    rows = [(label, value, after.pop(label, None)) for label, value in before]
    return rows + [(label, None, value) for label, value in after.items()]


def render(result, shown: Shown = PAGE, names: str = kernel_names.SHORT, **_options) -> str:
    env = environment()
    views = [pair_view(p, i, i <= shown.detail) for i, p in enumerate(result.pairs, start=1)]
    page = {
        "before": result.before,
        "after": result.after,
        "pairs": views,
        "detailed": [v for v in views if v.detailed],
        "regressions": result.regressions,
        "gate": result.gate,
        "not_gating": result.not_gating,
        "notes": list(result.notes),
        "unpaired_before": [("before", k) for k in result.unpaired_before],
        "unpaired_after": [("after", k) for k in result.unpaired_after],
        "environment": environment_rows(result),
    }
    return env.get_template("compare.html").render(page=page, labels=compare_text.METRIC_LABELS, version=__version__, name=kernel_names.of(result, names))
