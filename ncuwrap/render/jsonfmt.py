"""JSON output: every result's ``to_json()`` document (``ncuwrap.diagnosis/v4``, ``ncuwrap.compare/v1``,
``ncuwrap.timeline/v1``, the bench report) through the one encoder of ncuwrap.

orjson (a well-kept C encoder) writes the same text as ``json.dumps(indent=2, ensure_ascii=False)`` at
several times the speed, which matters at 10,000 kernels; it also refuses NaN/Infinity by writing null,
so strict parsers read every document.
"""

from __future__ import annotations

import orjson

from ncuwrap.core.gc_pause import no_collection_pauses
from ncuwrap.render.escape import bytes_shown


# Said once, at the top of a document that held text with bytes that are not UTF-8 (a file name, a
# kernel or NVTX name read with surrogateescape): JSON text is Unicode and cannot hold those bytes.
NOT_UTF8 = "not_utf8"
NOT_UTF8_NOTE = ("some text in the input was not UTF-8: each byte that is not is written as the four characters \\xNN, "
                 "as every other output shows it")
_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE


def dumps(doc) -> str:
    """``doc`` as indented JSON text with a final newline; text holding bytes that are not UTF-8 has them
    as ``\\xNN`` and the document says so once (its ``not_utf8`` key)."""
    try:
        return orjson.dumps(doc, option=_OPTIONS).decode("utf-8")
    except orjson.JSONEncodeError as exc:
        if "not valid UTF-8" not in str(exc) or not isinstance(doc, dict):
            raise
    doc = {**unicode_only(doc), NOT_UTF8: NOT_UTF8_NOTE}
    return orjson.dumps(doc, option=_OPTIONS).decode("utf-8")


def unicode_only(value):
    """``value`` with every text (keys too) holding a lone surrogate escaped as the other outputs show it."""
    if isinstance(value, str):
        return bytes_shown(value)
    if isinstance(value, dict):
        return {unicode_only(k) if isinstance(k, str) else k: unicode_only(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [unicode_only(v) for v in value]
    return value



def render(result, **_options) -> str:
    # The document of a large report is hundreds of thousands of small dicts and lists.
    with no_collection_pauses():
        return dumps(result.to_json())
