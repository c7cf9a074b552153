"""Writing a rendered result to stdout or a file (shared by the commands): rendering happens here, at
the command line, never in the library that computed the result."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ncuwrap import fileio
from ncuwrap.errors import NcuwrapError
from ncuwrap.render import Format, render


def check_output(output: Path | None, *inputs: Path | None) -> None:
    """Refuse an -o that cannot be written or would replace an input, before any work is done."""
    if output is None:
        return
    if output.is_dir():
        raise NcuwrapError(f"{output}: is a folder; give a file name for -o")
    for given in inputs:
        if given is not None and given.exists() and output.exists() and output.resolve() == given.resolve():
            raise NcuwrapError(f"{output}: -o names the input report; choose another output file")


def emit(result, fmt: Format, output: Path | None) -> None:
    """Render ``result`` and print it, or write it atomically to ``output``."""
    color = fmt == Format.table and output is None and sys.stdout.isatty()
    text = render(result, fmt, color=color) if fmt == Format.table else render(result, fmt)
    if output is None:
        typer.echo(text, nl=False)
        return
    write_atomic(output, text)
    typer.echo(f"wrote {output}", err=True)


def write_document(result, fmt: Format, path: Path) -> Path:
    """Render ``result`` in ``fmt`` into ``path`` (a run folder's verdict or page), whole or not at all."""
    write_atomic(path, render(result, fmt))
    return path


def write_atomic(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all; a missing folder is a user error, not a traceback."""
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise NcuwrapError(f"{path}: folder {directory} does not exist; create it or choose another -o path")
    try:
        fileio.write_atomic(path, text)
    except OSError as exc:
        raise NcuwrapError(f"{path}: cannot write ({exc.strerror or exc}); choose another -o path") from None
