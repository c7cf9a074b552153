"""HTML output of a multi-rank diagnosis: one self-contained page (``templates/ranks.html``, extending
``_base.html``) with a stacked bar per rank (:func:`ncuwrap.render.html.svg.stacked_bars`)."""

from __future__ import annotations

from ncuwrap import __version__
from ncuwrap.render import breakdown as B
from ncuwrap.render import phrasing as T
from ncuwrap.render.html import environment, svg


def chart(diagnosis):
    """Each rank's window as one stacked bar (% of the rank's window)."""
    legend = {}
    rows = []
    for r in diagnosis.set.ranks:
        segments = []
        for seg in r.segments():
            legend.setdefault(seg.category, seg.label)
            segments.append((seg.label, seg.pct, B.COLORS[seg.category], f"rank {r.rank}, {seg.label}: {T.duration(seg.ns)} ({seg.pct:.1f}%)"))
        rows.append((f"rank {r.rank}", segments))
    return svg.stacked_bars("Where each rank's window went", rows, [(label, B.COLORS[c]) for c, label in legend.items()])


def render(diagnosis, **_options) -> str:
    return environment().get_template("ranks.html").render(
        d=diagnosis, version=__version__, verdict=T.ranks_verdict(diagnosis), rows=T.rank_cells(diagnosis),
        columns=T.RANK_COLUMNS, chart=chart(diagnosis), evidence=T.evidence,
        collectives=T.collective_cells(diagnosis), collective_columns=T.COLLECTIVE_COLUMNS, collective_note=T.COLLECTIVE_NOTE,
    )
