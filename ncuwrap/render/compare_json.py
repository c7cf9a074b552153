"""JSON output of ``ncuwrap compare``: the ``ncuwrap.compare/v1`` document (kernels as in diagnosis/v2)."""

from __future__ import annotations

from ncuwrap.render.jsonfmt import dumps


def render(result, **_options) -> str:
    return dumps(result.to_json())
