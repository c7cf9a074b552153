"""Terminal output of the listing commands, wrapped to the terminal's width: ``ncuwrap list`` (each bundled
benchmark, what it teaches, its variants) and ``ncuwrap rules metrics --all`` (every name the rules may read)."""

from __future__ import annotations

from ncuwrap.render.table import Page


def benchmarks(documents: list[dict], width: int | None = None) -> str:
    """``documents``: those of ``ncuwrap list --format json`` (name, lesson, variants)."""
    page = Page(width)
    column = max((len(b["name"]) for b in documents), default=0)
    for b in documents:
        page.line(b["lesson"], label=f"{b['name']:<{column}} ", label_style="bold")
        page.line(", ".join(v["name"] for v in b["variants"]), indent=column + 2, label="variants:")
    return page.text()


def metrics(rows: list[dict], width: int | None = None) -> str:
    """``rows``: those of ``ncuwrap rules metrics --all --json`` (name, kind, description)."""
    page = Page(width)
    column = max((len(row["name"]) for row in rows), default=0)
    for row in rows:
        page.line(row["description"], label=f"{row['name']:<{column}} {row['kind']:9}")
    return page.text()
