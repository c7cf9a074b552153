"""Progress on the terminal: what the library reports (ncuwrap.core.progress) shown as one line on stderr,
after a second of work, and only where stderr is a terminal (nothing when piped, or with -q). The line
is cleared when the work ends, so that stderr keeps only what the command says."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager


from ncuwrap.core import progress
from ncuwrap.render.escape import terminal

# Work shorter than this shows nothing.
DELAY_S = 1.0
def _stderr_is_terminal() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


@contextmanager
def shown(quiet: bool = False) -> Iterator[None]:
    """Inside the ``with`` block, the library's progress reports drive a rich progress line on stderr."""
    if quiet or not _stderr_is_terminal():
        yield
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TaskProgressColumn, TextColumn, TimeElapsedColumn

    console = Console(file=sys.stderr, force_terminal=True, highlight=False)
    # The description names files: shown as written, never read as rich markup ('[bold]run.ncu-rep').
    bar = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                   console=console, transient=True, redirect_stdout=False)  # stdout is the result's, piped or not
    lock = threading.Lock()
    state = {"started": False, "done": False, "what": "working", "task": bar.add_task("working", total=None)}

    def start() -> None:
        with lock:
            if not state["done"]:
                bar.start()
                state["started"] = True

    def listener(what: str, done: int | None, total: int | None) -> None:
        what = terminal(what)  # names files: control characters escaped
        if what == state["what"]:
            bar.update(state["task"], completed=done or 0, total=total)
        else:  # a new piece of work: a task of its own (its counts, or none), the last one hidden
            bar.update(state["task"], visible=False)
            state["what"], state["task"] = what, bar.add_task(what, total=total, completed=done or 0)
        with lock:
            if state["started"]:
                bar.refresh()  # each report shown as it comes, not at the next tick

    timer = threading.Timer(DELAY_S, start)
    timer.daemon = True
    if DELAY_S > 0:
        timer.start()
    else:
        start()
    try:
        with progress.listening(listener):
            yield
    finally:
        timer.cancel()
        with lock:
            state["done"] = True
            if state["started"]:
                bar.stop()
