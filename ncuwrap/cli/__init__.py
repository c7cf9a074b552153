"""The ``ncuwrap`` command line: a thin layer over the library.

Each command group lives in its own module and registers itself on ``app``. Library code raises
:class:`ncuwrap.errors.NcuwrapError`; only :func:`main` turns it into one line on stderr and an exit code.
"""

from __future__ import annotations

import sys

import typer

from ncuwrap import __version__
from ncuwrap.errors import NcuwrapError

app = typer.Typer(
    name="ncuwrap",
    help="Turn Nsight Compute / Nsight Systems data into verdicts a kernel author can act on.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help: the rich help panel shows every flag with a '<bool>' placeholder, as if it took a value.
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ncuwrap {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Turn Nsight Compute / Nsight Systems data into verdicts a kernel author can act on."""


# Command modules register themselves on import (they import heavy libraries lazily).
from ncuwrap.cli import diagnose, compare, bench, profile, timeline, rules  # noqa: E402,F401


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script: run the app, map library errors to one line + exit code."""
    try:
        app(args=argv, prog_name="ncuwrap")  # standalone: click reports usage errors itself (exit 2)
    except NcuwrapError as exc:
        typer.echo(f"ncuwrap: error: {exc}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        typer.echo("ncuwrap: interrupted", err=True)
        return 130
    except SystemExit as exc:
        if exc.code is None:
            return 0
        return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
