"""Text for the terminal that came, in part, from files ncuwrap reads (kernel names, rule texts, paths).

A report or rules file can carry control characters: ESC sequences (OSC 52 writes the clipboard,
OSC 8 hides a link behind text, CSI moves the cursor or clears the screen) or a carriage return
that overwrites what was printed. What goes to stderr passes through :func:`one_line`.
"""

from __future__ import annotations

import re

# C0 controls (tab and newline included: a line must stay one line), DEL, and the C1 controls,
# which some terminals also read as escapes (U+009B is CSI, U+009D is OSC).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
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
