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


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ncuwrap {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
    debug_: bool = typer.Option(False, "--debug", help="Show the traceback of an internal error instead of one line."),
) -> None:
    """Turn Nsight Compute / Nsight Systems data into verdicts a kernel author can act on."""
    global debug
    debug = debug_
