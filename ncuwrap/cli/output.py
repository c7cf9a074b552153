"""Writing a rendered result to stdout or a file (shared by the commands): rendering happens here, at
the command line, never in the library that computed the result."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ncuwrap.core import fileio
from ncuwrap.render import Format, render
from ncuwrap.render.escape import terminal


def check_output(output: Path | None, *inputs: Path | None, force: bool = False) -> None:
    """Refuse an -o that cannot be written, would replace an input or an existing file (without
    --force), or is not a regular file, before any work is done."""
    if output is not None:
        fileio.check_target(output, force=force, inputs=inputs)


def emit(result, fmt: Format, output: Path | None, *, force: bool = False, inputs=(), names: str = "short") -> None:
    """Every command's output: render ``result`` and print it (the terminal's width and colours for a
    table on a terminal), or write it to ``output`` through the checked writer."""
    color = fmt == Format.table and output is None and sys.stdout.isatty()
    names = getattr(names, "value", names)  # JSON has every name whole: its renderer takes no options
    text = render(result, fmt, color=color, names=names) if fmt == Format.table else render(result, fmt, names=names)
    if output is None:
        typer.echo(text, nl=False)
        return
    fileio.write_checked(output, text, force=force, inputs=inputs)
    typer.echo(f"wrote {terminal(output)}", err=True)


def write_document(result, fmt: Format, path: Path) -> Path:
    """Render ``result`` in ``fmt`` into ``path`` (a run folder's verdict or page: the run folder was
    checked, and --force given for an existing one, before the run), whole or not at all."""
    fileio.write_checked(path, render(result, fmt), force=True)
    return path
