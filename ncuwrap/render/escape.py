"""Escaping of report text (kernel names, rule texts, paths) for every output format.

Names come from the profiled program: a C++ signature is full of ``<``, ``>``, ``&``, ``|`` and
backticks, and a hostile one can carry terminal escape sequences. Markdown: names go in code spans,
prose gets its punctuation backslash-escaped, ``|`` is escaped in tables, so nothing opens an HTML tag
or a link. Terminal: control characters are shown as visible escapes, never sent to the terminal.
HTML: jinja2's autoescape (ncuwrap.render.html) and :func:`markupsafe.escape` in the charts, after
:func:`terminal` (every format shows a name's control characters the same way).
"""

from __future__ import annotations

import re

from ncuwrap.core.terminal import BIDI

# C0 and C1 control characters (ESC starts terminal sequences; CR and BS overwrite what was printed),
# the bidi formatting characters (they reorder what is shown), tab and newline aside, and lone surrogates:
# a byte that is not UTF-8 in a capture's text or a file name is read as one (surrogateescape), and no
# output encodes it.
_CONTROL = re.compile(rf"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI}\ud800-\udfff]")
# The surrogates surrogateescape makes: U+DC80-U+DCFF for the bytes 0x80-0xFF.
_ESCAPED_BYTE = range(0xDC80, 0xDD00)


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    if code in _ESCAPED_BYTE:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text) -> str:
    """``text`` safe to print on a terminal: control and bidi characters as visible ``\\xNN`` /
    ``\\uNNNN`` escapes (tab and newline kept), a byte that is not UTF-8 as ``\\xNN``."""
    return _CONTROL.sub(_visible, str(text))


_SURROGATE = re.compile("[\ud800-\udfff]")


def bytes_shown(text: str) -> str:
    """``text`` with only its bytes that are not UTF-8 (lone surrogates) shown as :func:`terminal` shows
    them, the rest exact: for JSON and error lines, which cannot encode them."""
    return _SURROGATE.sub(_visible, text) if _SURROGATE.search(text) else text


# CommonMark lets any ASCII punctuation be backslash-escaped; these are the ones that can start
# emphasis, code, links, HTML, tables or strikethrough in running text.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~#])")
_ENTITY = re.compile(r"&(?=#?\w+;)")


def escape(text) -> str:
    """Prose from a report or rule, safe in running text and in table cells."""
    text = " ".join(terminal(text).split())
    return _ENTITY.sub(r"\\&", _SPECIAL.sub(r"\\\1", text))


def code(text) -> str:
    """``text`` as a code span: a fence longer than any run of backticks inside it."""
    text = " ".join(terminal(text).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_BARE_PIPE = re.compile(r"(?<!\\)\|")


def table(header: list[str], rows: list[list[str]], align: str | None = None) -> str:
    """A GFM table with padded columns. ``align``: one of 'l'/'r' per column (default: all left).

    GFM splits a row at every unescaped ``|`` before it reads code spans, so pipes in cells (in code
    spans too) are escaped here; prose from :func:`escape` has them escaped already."""
    align = align or "l" * len(header)
    header = [_BARE_PIPE.sub(r"\\|", c) for c in header]
    rows = [[_BARE_PIPE.sub(r"\\|", c) for c in row] for row in rows]
    widths = [max(3, len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(cells):
        return "| " + " | ".join(c.rjust(w) if a == "r" else c.ljust(w) for c, w, a in zip(cells, widths, align)) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if a == "r" else (":" + "-" * (w + 1)) for w, a in zip(widths, align)) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def fenced(lines: list[str], info: str = "") -> list[str]:
    """A fenced code block of ``lines`` (control characters escaped): its fence is longer than any
    run of backticks or tildes inside, so no line can close it early."""
    body = [terminal(line).replace("\n", " ") for line in lines]
    longest = max((len(run) for line in body for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *body, fence]
