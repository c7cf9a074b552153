"""Notebook display of results (``_repr_html_``): the result's HTML report, in a sandboxed frame.

The report is a whole page with its own style sheet; inside a notebook it goes into an ``<iframe
srcdoc>`` so that its CSS never restyles the notebook and the notebook's never restyles it, and
``sandbox`` with nothing allowed (the report has no script; the frame may run none). The renderer
is handed in by the API layer (:mod:`ncuwrap.api` installs ``ncuwrap.render``'s HTML) so that the
results, computed below the renderers, do not import them; without it a result has no HTML form
and a notebook shows its text repr.
"""

from __future__ import annotations

from typing import Callable

HEIGHT_PX = 640
_page: Callable[[object], str] | None = None


def use(page: Callable[[object], str]) -> None:
    """Draw results with ``page`` (result -> a whole HTML document)."""
    global _page
    _page = page


class Displayed:
    """A result a notebook shows as its HTML report."""

    def _repr_html_(self) -> str | None:
        if _page is None:
            return None
        import html  # only in a notebook: every result's module imports this one

        document = html.escape(_page(self), quote=True)
        return (f'<iframe srcdoc="{document}" sandbox="" title="ncuwrap report" '
                f'style="width:100%;height:{HEIGHT_PX}px;border:1px solid #e2e8f0;border-radius:4px"></iframe>')


def plural(n: int, word: str, words: str | None = None) -> str:
    """'1 launch', '3 launches'."""
    return f"{n:,} {word if n == 1 else words or word + 's'}"


def short(text: str, limit: int = 60) -> str:
    """A name quoted as Python writes a string (control characters escaped), cut at its end with an ellipsis."""
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def short_path(text: str, limit: int = 60) -> str:
    """A path as :func:`short`, its leading folders cut to an ellipsis: the file's own name stays whole."""
    if len(text) <= limit:
        return repr(text)
    parts = text.split("/")
    kept = parts[-1]
    for part in reversed(parts[:-1]):
        if len(part) + len(kept) + 3 > limit:
            break
        kept = f"{part}/{kept}"
    return repr(f"…/{kept}")
