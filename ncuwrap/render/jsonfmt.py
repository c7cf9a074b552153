"""JSON output: every result's ``to_json()`` document (``ncuwrap.diagnosis/v4``, ``ncuwrap.compare/v1``,
``ncuwrap.timeline/v1``, the bench report) through the one encoder of ncuwrap.

orjson (a well-kept C encoder) writes the same text as ``json.dumps(indent=2, ensure_ascii=False)`` at
several times the speed, which matters at 10,000 kernels; it also refuses NaN/Infinity by writing null,
so strict parsers read every document. The characters a screen would obey (C1 controls, bidi formatting,
line separators) are then written with JSON's own ``\\uXXXX`` escapes: the text reads back the same.
"""

from __future__ import annotations

import re

import orjson

from ncuwrap.core.gc_pause import no_collection_pauses
from ncuwrap.core.terminal import BIDI
from ncuwrap.render.escape import bytes_shown


# Said once, at the top of a document that held text with bytes that are not UTF-8 (a file name, a
# kernel or NVTX name read with surrogateescape): JSON text is Unicode and cannot hold those bytes.
NOT_UTF8 = "not_utf8"
NOT_UTF8_NOTE = ("some text in the input was not UTF-8: each byte that is not is written as the four characters \\xNN, "
                 "as every other output shows it")
_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
# Characters a JSON text may hold raw but a terminal, an editor or a browser obeys, written with JSON's own
# \uXXXX escape: DEL and the C1 controls (U+009B is CSI to some terminals), the bidi formatting characters
# (they reorder what is shown: CVE-2021-42574) and U+2028/U+2029 (line breaks to JavaScript and some editors).
# orjson escapes the C0 controls itself (\u0000, \u001b). The document reads back every character as
# written; only its text, shown by `cat` or a diff in a review, no longer acts on the reader's screen.
# They can stand only inside JSON strings, where no escape sequence holds them: each is replaced whole.
_OBEYED = re.compile(rf"[\x7f-\x9f{BIDI}\u2028\u2029]")


def _text(raw: bytes) -> str:
    """orjson's bytes as text, with the characters of _OBEYED escaped. The JSON of ncuwrap's own words is
    ASCII: only a document holding other text (a name) is searched (0.4 s for 50 MB of text, 10 ms to tell ASCII)."""
    if raw.isascii() and b"\x7f" not in raw:
        return raw.decode("ascii")
    text = raw.decode("utf-8")
    return _OBEYED.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dumps(doc) -> str:
    """``doc`` as indented JSON text with a final newline: every text exactly as it is, the characters a
    screen would obey as JSON escapes (_OBEYED); text holding bytes that are not UTF-8 has them as ``\\xNN``
    and the document says so once (its ``not_utf8`` key)."""
    try:
        return _text(orjson.dumps(doc, option=_OPTIONS))
    except orjson.JSONEncodeError as exc:
        if "not valid UTF-8" not in str(exc) or not isinstance(doc, dict):
            raise
    doc = {**unicode_only(doc), NOT_UTF8: NOT_UTF8_NOTE}
    return _text(orjson.dumps(doc, option=_OPTIONS))


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
