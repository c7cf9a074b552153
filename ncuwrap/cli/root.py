"""The ``ncuwrap`` app: the Typer object every command module registers on, and its own options
(``--version``, ``--debug``). A module of its own, not :mod:`ncuwrap.cli` (which imports the command
modules), so that the command modules import it downward."""

from __future__ import annotations

import typer

from ncuwrap.core.version import __version__

app = typer.Typer(
    name="ncuwrap",
    help="Turn Nsight Compute / Nsight Systems data into verdicts a kernel author can act on.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help: the rich help panel shows every flag with a '<bool>' placeholder, as if it took a value.
    rich_markup_mode=None,
    # -h as --help, on every command (click passes the names on to subcommands).
    context_settings={"help_option_names": ["-h", "--help"]},
)


# Set by the --debug option for the run in progress (ncuwrap.cli.main resets it: tests run many in one process).
debug = False
# Under --debug, what the library says on the 'ncuwrap' logger (a report's launches read by NVIDIA's reader, and
# what ncuwrap's own reader met in them) goes to stderr through this handler, removed when the run ends.
_handler = None


def show_debug() -> None:
    """The 'ncuwrap' logger's debug lines on stderr, each as 'ncuwrap: debug: ...', until :func:`reset`."""
    import logging
    import sys

    global _handler
    if _handler is None:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter("ncuwrap: debug: %(message)s"))
        logger = logging.getLogger("ncuwrap")
        logger.addHandler(_handler)
        logger.setLevel(logging.DEBUG)
        logger.propagate = False


def reset() -> None:
    """No --debug: the flag down and the logger as it was (tests run many commands in one process)."""
    global debug, _handler
    debug = False
    if _handler is not None:
        import logging

        logger = logging.getLogger("ncuwrap")
        logger.removeHandler(_handler)
        logger.setLevel(logging.NOTSET)
        logger.propagate = True
        _handler = None


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ncuwrap {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
    debug_: bool = typer.Option(False, "--debug", help="Show the traceback of an internal error instead of one line, and why a report's launches "
                                                       "were read by NVIDIA's reader."),
) -> None:
    """Turn Nsight Compute / Nsight Systems data into verdicts a kernel author can act on."""
    global debug
    debug = debug_
    if debug_:
        show_debug()
