"""JSON output: the stable ``ncuwrap.diagnosis/v2`` document tools consume."""

from __future__ import annotations

import json


def render(diagnosis, **_options) -> str:
    return json.dumps(diagnosis.to_json(), indent=2, ensure_ascii=False) + "\n"
