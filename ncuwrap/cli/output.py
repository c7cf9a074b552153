"""Writing a rendered result to stdout or a file (shared by the commands)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import typer

from ncuwrap.errors import NcuwrapError
from ncuwrap.render import Format, render


def emit(result, fmt: Format, output: Path | None) -> None:
    """Render ``result`` and print it, or write it atomically to ``output``."""
    color = fmt == Format.table and output is None and sys.stdout.isatty()
    text = render(result, fmt, color=color) if fmt == Format.table else render(result, fmt)
    if output is None:
        typer.echo(text, nl=False)
        return
    write_atomic(output, text)
    typer.echo(f"wrote {output}", err=True)


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file, so an error never leaves a half-written output behind."""
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise NcuwrapError(f"{path}: folder {directory} does not exist; create it or choose another -o path")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        # mkstemp makes the file owner-only; reports are meant to be shared, so use the umask.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
