"""JSON output of a timeline diagnosis: the stable ``ncuwrap.timeline/v1`` document."""

from __future__ import annotations

from ncuwrap.render.jsonfmt import dumps


def render(diagnosis, **_options) -> str:
    return dumps(diagnosis.to_json())
