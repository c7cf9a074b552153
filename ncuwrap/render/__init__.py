"""Output formats. Each result type (kernel diagnosis, timeline, comparison) names, per format, the
module whose ``render(result, **options) -> str`` draws it."""

from __future__ import annotations

import importlib
from enum import Enum


class Format(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    html = "html"


# Renderers of a kernel Diagnosis; other result types set a RENDERERS class attribute of the same shape.
DIAGNOSIS_RENDERERS = {
    Format.table: "ncuwrap.render.table",
    Format.json: "ncuwrap.render.jsonfmt",
    Format.markdown: "ncuwrap.render.markdown",
    Format.html: "ncuwrap.render.html",
}


def render(result, fmt: Format, **options) -> str:
    """Render ``result`` in ``fmt``; modules are imported lazily (jinja2 only for html)."""
    renderers = getattr(result, "RENDERERS", DIAGNOSIS_RENDERERS)
    module = importlib.import_module(renderers[Format(fmt)])
    return module.render(result, **options)
