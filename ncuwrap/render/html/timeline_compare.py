"""HTML output of a timeline comparison: one self-contained page drawn by
``templates/timeline_compare.html`` (autoescaping on: kernel names are C++ signatures)."""

from __future__ import annotations

from ncuwrap import __version__
from ncuwrap.render import timeline_diff as D
from ncuwrap.render import names as N
from ncuwrap.render.html import environment


def render(result, names: str = N.SHORT, **_options) -> str:
    return environment().get_template("timeline_compare.html").render(
        r=result, version=__version__, name=N.of(result, names), title=D.title(result), headline=D.headline(result), verdicts=D.verdicts(result),
        where=[D.row(c) for c in D.where_rows(result)], step=[D.row(c) for c in D.step_rows(result)], step_title=D.step_title(result),
        host=[D.row(c) for c in result.activity],
        kernels=[(k, D.kernel_row(k)) for k in result.kernels_shown], hidden=D.hidden_line(result),
        where_title=D.where_title(result), kernels_title=D.kernels_title(result), host_title=D.host_title(result),
    )
