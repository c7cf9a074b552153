"""HTML output of a timeline diagnosis: one self-contained page (inline CSS and SVG, no script, no
external reference), drawn by ``templates/timeline.html.j2`` with autoescaping on (kernel names are
C++ signatures full of ``<`` and ``&``)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ncuwrap import __version__
from ncuwrap.render import text as T
from ncuwrap.timeline import render_common as C
from ncuwrap.timeline.model import CATEGORY_LABELS
from ncuwrap.verdict import clean

BAR_WIDTH = 1000  # SVG user units of the stacked bar


@lru_cache(maxsize=1)
def environment():
    import jinja2

    from ncuwrap.resources import data_dir

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(duration=T.duration, percent=T.percent, number=T.number, gbps=C.gbps, size=C.size)
    return env


@dataclass(frozen=True)
class Rect:
    x: float
    width: float
    color: str
    label: str
    title: str


def bar(diagnosis) -> list[Rect]:
    """The stacked bar's rectangles (SVG units), one per non-empty category."""
    parts = [s for s in C.segments(diagnosis) if s.ns > 0]
    total = sum(s.ns for s in parts) or 1
    rects, x = [], 0.0
    for s in parts:
        width = BAR_WIDTH * s.ns / total
        rects.append(Rect(round(x, 2), round(width, 2), s.color, s.label, f"{s.label}: {T.duration(s.ns)} ({s.pct:.1f}%)"))
        x += width
    return rects


def amdahl_bars(diagnosis) -> list[dict]:
    """One bar per Amdahl row, its length the end-to-end time against today's window."""
    t = diagnosis.timeline
    rows = [{"label": "today", "ns": t.window_ns, "speedup": 1.0, "kernel_ns": t.breakdown_ns["kernel"]}]
    for row in t.amdahl:
        kernel = t.breakdown_ns["kernel"] / row.kernel_speedup if row.kernel_speedup else 0.0
        rows.append({"label": row.label, "ns": row.end_to_end_ns, "speedup": row.end_to_end_speedup, "kernel_ns": kernel})
    for r in rows:
        r["width"] = round(BAR_WIDTH * 0.6 * r["ns"] / t.window_ns, 2) if t.window_ns else 0
        r["kernel_width"] = round(BAR_WIDTH * 0.6 * r["kernel_ns"] / t.window_ns, 2) if t.window_ns else 0
    return rows


def render(diagnosis, **_options) -> str:
    template = environment().get_template("timeline.html.j2")
    return template.render(
        d=diagnosis,
        t=diagnosis.timeline,
        version=__version__,
        verdict=C.verdict(diagnosis),
        segments=C.segments(diagnosis),
        rects=bar(diagnosis),
        amdahl=amdahl_bars(diagnosis),
        lesson=C.amdahl_lesson(diagnosis),
        api_rows=C.api_rows(diagnosis),
        labels=CATEGORY_LABELS,
        colors=C.COLORS,
        evidence=C.evidence,
        bar_width=BAR_WIDTH,
        metrics={name: clean(value) for name, value in diagnosis.timeline.metrics.items()},
    )
