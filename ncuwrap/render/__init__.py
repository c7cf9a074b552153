"""Output formats, one subpackage each (table, markdown, html) and one JSON renderer.

Renderers only format: every number, hint and decision they show is computed in the model
(ncuwrap.verdict, ncuwrap.compare, ncuwrap.timeline.model). :func:`render` picks the renderer from the
result's type; modules are imported lazily (jinja2 only for html).
"""

from __future__ import annotations

import importlib
from enum import Enum


class Format(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    html = "html"


# Result type (class name) -> the module, per format, whose ``render(result, **options) -> str`` draws it.
_KINDS = {"Diagnosis": "diagnosis", "CompareResult": "compare", "TimelineDiagnosis": "timeline", "BenchReport": "bench",
          "RanksDiagnosis": "ranks", "TimelineCompare": "timeline_compare"}


def render(result, fmt: Format, **options) -> str:
    """Render ``result`` in ``fmt``."""
    fmt = Format(fmt)
    if fmt == Format.json:
        from ncuwrap.render.jsonfmt import render as render_json

        return render_json(result)
    kind = _KINDS[type(result).__name__]
    module = importlib.import_module(f"ncuwrap.render.{fmt.value}.{kind}")
    return module.render(result, **options)
