"""JSON output: every result's ``to_json()`` document (``ncuwrap.diagnosis/v4``, ``ncuwrap.compare/v1``,
``ncuwrap.timeline/v1``, the bench report) through the one encoder of ncuwrap.

orjson (a well-kept C encoder) writes the same text as ``json.dumps(indent=2, ensure_ascii=False)`` at
several times the speed, which matters at 10,000 kernels; it also refuses NaN/Infinity by writing null,
so strict parsers read every document.
"""

from __future__ import annotations

import orjson

from ncuwrap.gc_pause import no_collection_pauses


def dumps(doc) -> str:
    """``doc`` as indented JSON text with a final newline."""
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE).decode("utf-8")


def render(result, **_options) -> str:
    # The document of a large report is hundreds of thousands of small dicts and lists.
    with no_collection_pauses():
        return dumps(result.to_json())
