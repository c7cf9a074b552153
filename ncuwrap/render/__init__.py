"""Output formats of a diagnosis. Each format is a module with ``render(diagnosis) -> str``."""

from __future__ import annotations

import importlib
from enum import Enum


class Format(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    html = "html"


_MODULES = {
    Format.table: "ncuwrap.render.table",
    Format.json: "ncuwrap.render.jsonfmt",
    Format.markdown: "ncuwrap.render.markdown",
    Format.html: "ncuwrap.render.html",
}


def render(diagnosis, fmt: Format, **options) -> str:
    """Render a Diagnosis in ``fmt`` (modules are imported lazily: jinja2 only for html)."""
    module = importlib.import_module(_MODULES[Format(fmt)])
    return module.render(diagnosis, **options)
