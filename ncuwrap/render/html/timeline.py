"""HTML output of a timeline diagnosis: one self-contained page (inline CSS and SVG, no script, no
external reference), drawn by ``templates/timeline.html`` with autoescaping on (kernel names are
C++ signatures full of ``<`` and ``&``)."""

from __future__ import annotations

from dataclasses import dataclass

from ncuwrap.core.version import __version__
from ncuwrap.render import phrasing
from ncuwrap.render.phrasing import timeline as timeline_text
from ncuwrap.core.numbers import clean
from ncuwrap.render import op_limits
from ncuwrap.render import names as kernel_names
from ncuwrap.render.html import environment
from ncuwrap.timeline.model import CATEGORY_LABELS, COLORS, pct

BAR_WIDTH = 1000  # SVG user units of the stacked bar


@dataclass(frozen=True)
class Rect:
    """A segment of the timeline's breakdown bar on the HTML page: where it starts, its width, colour and tooltip (from :func:`bar`)."""
    x: float
    width: float
    color: str
    label: str
    title: str


def bar(diagnosis) -> list[Rect]:
    """The stacked bar's rectangles (SVG units), one per non-empty category."""
    parts = [s for s in diagnosis.timeline.segments() if s.ns > 0]
    total = sum(s.ns for s in parts) or 1
    rects, x = [], 0.0
    for s in parts:
        width = BAR_WIDTH * s.ns / total
        rects.append(Rect(round(x, 2), round(width, 2), COLORS[s.category], s.label, f"{s.label}: {phrasing.duration(s.ns)} ({s.pct:.1f}%)"))
        x += width
    return rects


def amdahl_bars(diagnosis) -> list[dict]:
    """One bar per Amdahl row, its length (% of the track) the end-to-end time against today's window."""
    t = diagnosis.timeline
    rows = [{"label": "today", "ns": t.window_ns, "speedup": 1.0, "kernel_ns": t.breakdown_ns["kernel"]}]
    rows += [{"label": row.label, "ns": row.end_to_end_ns, "speedup": row.end_to_end_speedup, "kernel_ns": row.kernel_ns} for row in t.amdahl]
    for r in rows:
        r["width"] = round(pct(r["ns"], t.window_ns), 2) if t.window_ns else 0
        r["kernel_width"] = round(pct(r["kernel_ns"], t.window_ns), 2) if t.window_ns else 0
    return rows


PATH_COLORS = {"host code": "#e15759", "host work": "#f28e2b", "CUDA calls": "#b07aa1", "waits for other processes": "#bab0ac",
               "launch latency": "#9c755f", "kernels": "#4e79a7", "copies and memsets": "#59a14f", "GPU gaps": "#d4d4d4"}


def path_bar(whatif) -> list[dict]:
    """The critical path's parts as rectangles of one bar (BAR_WIDTH wide), in the order of PATH_PARTS."""
    if whatif is None or not whatif.critical_path:
        return []
    rects, x = [], 0.0
    for part, ns, share in whatif.path_shares():
        width = BAR_WIDTH * share / 100.0
        rects.append({"x": round(x, 2), "width": round(width, 2), "color": PATH_COLORS.get(part, "#999999"),
                      "title": f"{part} {phrasing.duration(ns)} ({share:.1f}%)"})
        x += width
    return rects


def render(diagnosis, names: str = kernel_names.SHORT, **_options) -> str:
    template = environment().get_template("timeline.html")
    return template.render(
        d=diagnosis,
        name=kernel_names.of(diagnosis, names),
        t=diagnosis.timeline,
        version=__version__,
        times_from=timeline_text.times_from(diagnosis.source),
        verdict=timeline_text.timeline_verdict(diagnosis),
        segments=diagnosis.timeline.segments(),
        rects=bar(diagnosis),
        amdahl=amdahl_bars(diagnosis),
        lesson=timeline_text.amdahl_lesson(diagnosis.timeline),
        step_lines=timeline_text.step_lines(diagnosis.timeline) if diagnosis.timeline.steps is not None else [],
        whatif_title=timeline_text.whatif_title(diagnosis.timeline.whatif) if diagnosis.timeline.whatif is not None else "",
        path_rects=path_bar(diagnosis.timeline.whatif),
        whatif_rows=list(zip(timeline_text.whatif_rows(diagnosis.timeline.whatif), diagnosis.timeline.whatif.remedies))
        if diagnosis.timeline.whatif is not None else [],
        api_rows=diagnosis.timeline.api_rows(),
        labels=CATEGORY_LABELS,
        colors=COLORS,
        evidence=phrasing.evidence,
        launched_from=timeline_text.launched_from,
        host_time_line=timeline_text.host_time_line,
        line_is_note=timeline_text.line_is_note(diagnosis.timeline.top_kernels(), diagnosis.timeline.host_time),
        bar_width=BAR_WIDTH,
        op_limits=op_limits,
        metrics={name: clean(value) for name, value in diagnosis.timeline.metrics.items()},
    )
