"""HTML output of a multi-rank diagnosis: one self-contained page (``templates/ranks.html``, extending
``_base.html``) with a stacked bar per rank (:func:`ncuwrap.render.html.svg.stacked_bars`)."""

from __future__ import annotations

from ncuwrap.core.version import __version__
from ncuwrap.timeline.model import COLORS
from ncuwrap.render import phrasing
from ncuwrap.render.phrasing import ranks as ranks_text
from ncuwrap.render.html import environment, svg


def chart(diagnosis):
    """Each rank's window as one stacked bar (% of the rank's window)."""
    legend = {}
    rows = []
    for r in diagnosis.set.ranks:
        segments = []
        for seg in r.segments():
            legend.setdefault(seg.category, seg.label)
            segments.append((seg.label, seg.pct, COLORS[seg.category], f"rank {r.rank}, {seg.label}: {phrasing.duration(seg.ns)} ({seg.pct:.1f}%)"))
        rows.append((f"rank {r.rank}", segments))
    return svg.stacked_bars("Where each rank's window went", rows, [(label, COLORS[c]) for c, label in legend.items()])


def render(diagnosis, **_options) -> str:
    return environment().get_template("ranks.html").render(
        d=diagnosis, version=__version__, verdict=ranks_text.ranks_verdict(diagnosis), rows=ranks_text.rank_cells(diagnosis),
        columns=ranks_text.RANK_COLUMNS, chart=chart(diagnosis), evidence=phrasing.evidence,
        collectives=ranks_text.collective_cells(diagnosis), collective_columns=ranks_text.COLLECTIVE_COLUMNS, collective_note=ranks_text.COLLECTIVE_NOTE,
    )
