"""Progress of work that takes seconds (a report read in child processes, a capture measured, two
reports compared), told to whoever listens.

The library only reports, through :func:`report`; it never prints. The command line listens (it shows
a line on a terminal's stderr: ncuwrap.cli.progress), a Python caller may pass a listener of its own to
:func:`listening`; with none listening a report costs a lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# (what is being done, how many parts of it are done, of how many), the counts None where not known.
Listener = Callable[[str, "int | None", "int | None"], None]

_listener: ContextVar[Listener | None] = ContextVar("ncuwrap_progress", default=None)


def report(what: str, done: int | None = None, total: int | None = None) -> None:
    """Tell the listener, if any, that ``what`` is under way (``done`` of ``total`` parts)."""
    listener = _listener.get()
    if listener is not None:
        listener(what, done, total)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Send the reports made inside the ``with`` block to ``listener``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)
