"""JSON output of ``ncuwrap compare``: the ``ncuwrap.compare/v1`` document (kernels as in diagnosis/v2)."""

from __future__ import annotations

import json


def render(result, **_options) -> str:
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n"
