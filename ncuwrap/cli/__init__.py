"""The ``ncuwrap`` command line: a thin layer over the library.

Each command group lives in its own module and registers itself on ``app`` (:mod:`ncuwrap.cli.root`). Library code raises
:class:`ncuwrap.core.errors.NcuwrapError`; only :func:`main` turns it into one line on stderr and an exit code.
Anything else that escapes is a bug: it too ends in one line (and exit code 2) unless ``--debug`` asks
for the traceback.
"""

from __future__ import annotations

import gc
import sys
import warnings

import typer

from ncuwrap.core import process
from ncuwrap.core.errors import NcuwrapError
from ncuwrap.render.escape import bytes_shown
from ncuwrap.core.terminal import one_line

from ncuwrap.cli import root
from ncuwrap.cli.root import app  # noqa: F401  (ncuwrap.cli.app: the app, for tests and docs)

# Command modules register themselves on import (they import heavy libraries lazily).
from ncuwrap.cli import diagnose, compare, bench, profile, timeline, rules  # noqa: E402,F401


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script: run the app, map library errors to one line + exit code."""
    code = _run(argv)
    if argv is None:
        # This process's own command line (the console script, python -m ncuwrap): the process ends when
        # main returns, and the interpreter's finalization would walk every object the imports left (numpy's,
        # typing's, pydantic's) in its garbage collections. Frozen, they are left to the exit, whose cost
        # that was most of a small capture's timeline after its work (docs/scale.md, figures behind the code).
        # Tests run many commands in one process and pass argv.
        gc.freeze()
    return code


def _run(argv: list[str] | None) -> int:
    root.reset()
    process.quiet_thread_pools()  # before any command imports numpy
    try:
        return _app(argv)
    finally:
        root.reset()


def _app(argv: list[str] | None) -> int:
    try:
        with warnings.catch_warnings():
            # numpy's overflow/invalid-value warnings on odd counters (1e300 * 1e300): the code
            # handles inf and nan, and stderr is for one-line errors.
            warnings.simplefilter("ignore", RuntimeWarning)
            # Not standalone: click's usage errors (a bad option value, a missing argument) are one
            # line here too, instead of click's usage block.
            result = app(args=argv, prog_name="ncuwrap", standalone_mode=False)
        if isinstance(result, int) and not isinstance(result, bool):
            return result
    except NcuwrapError as exc:
        _error(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        typer.echo("ncuwrap: interrupted", err=True)
        return 130
    except SystemExit as exc:
        if exc.code is None:
            return 0
        return exc.code if isinstance(exc.code, int) else 1
    except Exception as exc:  # a bug, or a broken input that no check caught: still one line
        handled = _click_exception(exc)
        if handled is not None:
            return handled
        if root.debug:
            raise
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        _error(f"internal error: {detail} (run with --debug for the traceback)")
        return 2
    return 0


def _click_exception(exc: Exception) -> int | None:
    """click's own exceptions (typer re-exports a vendored click in newer releases, so they are known
    by name): a usage error is one line with where to look; None for anything else."""
    names = {c.__name__ for c in type(exc).__mro__}
    if "NoArgsIsHelpError" in names:  # 'ncuwrap rules' alone: the help, as click's standalone mode prints it
        typer.echo(exc.format_message(), err=True)
        return 2
    if "UsageError" in names:
        ctx = getattr(exc, "ctx", None)
        command = ctx.command_path if ctx is not None else "ncuwrap"
        _error(f"{exc.format_message().rstrip('.')}; see '{command} --help'")
        return 2
    if "Exit" in names and hasattr(exc, "exit_code"):
        return exc.exit_code
    if "Abort" in names:
        typer.echo("ncuwrap: interrupted", err=True)
        return 130
    return None


def _error(message: str) -> None:
    """The one place error lines are printed: messages quote kernel names, paths and rule texts,
    so control characters (terminal escapes) are taken out and the line stays one line."""
    typer.echo(f"ncuwrap: error: {one_line(bytes_shown(message))}", err=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
