"""JSON output of a timeline diagnosis: the stable ``ncuwrap.timeline/v1`` document."""

from __future__ import annotations

import json


def render(diagnosis, **_options) -> str:
    return json.dumps(diagnosis.to_json(), indent=2, ensure_ascii=False) + "\n"
