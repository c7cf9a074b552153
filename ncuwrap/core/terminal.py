"""Text for the terminal that came, in part, from files ncuwrap reads (kernel names, rule texts, paths).

A report or rules file can carry control characters: ESC sequences (OSC 52 writes the clipboard,
OSC 8 hides a link behind text, CSI moves the cursor or clears the screen), a carriage return
that overwrites what was printed, or a right-to-left override that shows text reversed. What goes to stderr passes through :func:`one_line`.
"""

from __future__ import annotations

import re

# C0 controls (tab and newline included: a line must stay one line), DEL, and the C1 controls,
# which some terminals also read as escapes (U+009B is CSI, U+009D is OSC).
# BIDI: the bidi formatting characters (marks, embeddings, overrides, isolates), which make a terminal
# or browser show text in another order than it is (CVE-2021-42574, "Trojan Source").
BIDI = r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(rf"[\x00-\x1f\x7f-\x9f{BIDI}]+")
# Long enough for any message ncuwrap writes; past it the middle goes, keeping the fix at the end.
MAX_LINE = 2000


def one_line(text: str, limit: int = MAX_LINE) -> str:
    """``text`` as one printable line: control characters become one space, and a line over
    ``limit`` characters keeps its start and its end (where messages say what to do)."""
    line = _CONTROL.sub(" ", str(text)).strip()
    if len(line) > limit:
        keep = (limit - 5) // 2
        line = f"{line[:keep]} ... {line[-keep:]}"
    return line
