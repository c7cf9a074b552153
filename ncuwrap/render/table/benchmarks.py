"""Terminal output of ``ncuwrap list``: each bundled benchmark, what it teaches, and its variants, wrapped to
the terminal's width."""

from __future__ import annotations

from ncuwrap.render.table import Page


def render(benchmarks: list[dict], width: int | None = None, **_options) -> str:
    """``benchmarks``: the documents of ``ncuwrap list --format json`` (name, lesson, variants)."""
    page = Page(width)
    column = max((len(b["name"]) for b in benchmarks), default=0)
    for b in benchmarks:
        page.line(b["lesson"], label=f"{b['name']:<{column}} ", label_style="bold")
        page.line(", ".join(v["name"] for v in b["variants"]), indent=column + 2, label="variants:")
    return page.text()
