"""HTML output of a timeline comparison: one self-contained page drawn by
``templates/timeline_compare.html`` (autoescaping on: kernel names are C++ signatures)."""

from __future__ import annotations

from ncuwrap.core.version import __version__
from ncuwrap.render import timeline_diff
from ncuwrap.render.phrasing import timeline as timeline_text
from ncuwrap.render import names as kernel_names
from ncuwrap.render.html import environment


def render(result, names: str = kernel_names.SHORT, **_options) -> str:
    return environment().get_template("timeline_compare.html").render(
        r=result, version=__version__, times_from=timeline_text.times_from(result.before.source, result.after.source),
        name=kernel_names.of(result, names), title=timeline_diff.title(result), headline=timeline_diff.headline(result),
        verdicts=timeline_diff.verdicts(result), predicted=timeline_diff.predicted(result),
        where=[timeline_diff.row(c) for c in timeline_diff.where_rows(result)], step=[timeline_diff.row(c) for c in timeline_diff.step_rows(result)],
        step_title=timeline_diff.step_title(result),
        host=[timeline_diff.row(c) for c in result.activity],
        kernels=[(k, timeline_diff.kernel_row(k)) for k in result.kernels_shown], hidden=timeline_diff.hidden_line(result),
        where_title=timeline_diff.where_title(result), kernels_title=timeline_diff.kernels_title(result), host_title=timeline_diff.host_title(result),
    )
