"""HTML output: one self-contained page per result (inline CSS and SVG, no script, no external
reference), drawn by the jinja2 templates in ``templates/`` over one environment and one base
template (``_base.html``).

Autoescaping is on for every template and string: kernel names are C++ signatures full of ``<``,
``>`` and ``&`` and must show as text, never as markup. Control and bidi characters in a text are
shown as visible escapes, as on the terminal (:func:`ncuwrap.render.escape.terminal`, the environment's
``finalize``). Charts are built in Python (:mod:`ncuwrap.render.html.svg`), which does the same for
every text it puts in them.
"""

from __future__ import annotations

from functools import lru_cache

from ncuwrap.kernel import metrics as kernel_metrics
from ncuwrap.render import phrasing
from ncuwrap.render.phrasing import compare as compare_text
from ncuwrap.render.phrasing import kernel as kernel_text
from ncuwrap.render.escape import terminal


def _finalize(value):
    """Every ``{{ value }}``: a text with its control characters made visible (markup is left as is)."""
    from markupsafe import Markup

    return terminal(value) if isinstance(value, str) and not isinstance(value, Markup) else value


@lru_cache(maxsize=1)
def environment():
    """The jinja2 environment over the shipped templates: autoescape on, undefined names are errors."""
    import jinja2

    from ncuwrap.core.resources import data_dir

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_finalize,
    )
    env.filters.update(
        duration=phrasing.duration,
        percent=phrasing.percent,
        number=phrasing.number,
        launch=kernel_text.launch,
        signed=phrasing.signed,
        speedup=phrasing.speedup,
        gain=phrasing.gain,
        gain_factor=phrasing.gain_factor,
        estimate_vs_measured=compare_text.estimate_vs_measured,
        change_only=compare_text.change_only,
        metric=lambda name, value: phrasing.metric(name, value),
        describe=kernel_metrics.description,
        gbps=phrasing.gbps,
        size=phrasing.size,
        ms=phrasing.ms,
        not_evaluated_count=kernel_text.not_evaluated_count,
        where_note=kernel_text.where_note,
        no_issue=kernel_text.no_issue,
        undecided=kernel_text.undecided_line,
        hot_line=kernel_text.hot_line,
        line_change=compare_text.line_change,
    )
    return env
