"""A piece of work run in a forked child while the parent goes on, its result (or its error) taken back.

A timeline's read and analysis needs numpy, Arrow and the capture; the rules' verdict needs the rules
file and the evaluator. Forked, the two import and run side by side: the parent's part is hidden under
the child's (what that buys, measured: docs/scale.md, figures behind the code), and a native reader that crashes on a corrupt file takes only
the child with it. The child's answer comes back pickled through a pipe; an error raised there is raised
here as it was (one whose type does not pickle, as a RuntimeError with its text). A child that dies is
said in one line by the caller's ``crashed`` text.

Work is forked only on Linux and only from a process of one thread: a fork copies no other thread, and
a lock another thread held at that moment (logging's, the allocator's in a library) stays held in the
child for ever. Elsewhere the work runs in process, when its result is asked for. ``with_threads``: forked
even where other threads run, for work that takes no lock of theirs and must not run in process (the
.ncu-rep reader's: NVIDIA's native reader can crash on a corrupt report, and leaves state behind that a
child forked later can hang on; a gzipped report is read while the digest's thread runs).

``asks``: the work takes the requests the parent sends it (:meth:`Forked.ask`) while it runs, one at a time,
as an iterator that ends when the parent asks for the result (NVIDIA's reader answering each launch's lines
as the file is parsed beside it). In process, it is given them all at the end.
"""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import os
import pickle
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import Callable, Generic, TypeVar

T = TypeVar("T")
STOP_GRACE_S = 2.0  # a cancelled child's time to unwind before SIGKILL


def platform_forks() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def can_fork() -> bool:
    return platform_forks() and threading.active_count() == 1


class Forked(Generic[T]):
    """``work()`` under way in a child (see the module's docstring); :meth:`result` waits for it."""

    def __init__(self, work: Callable[..., T], crashed: Callable[[str], BaseException], *, with_threads: bool = False, asks: bool = False):
        """``crashed``: the error a child that died says, given how (``signal SIGSEGV``, ``exit code 1``)."""
        self.work, self.crashed, self.asks = work, crashed, asks
        self.pid: int | None = None
        self.asked: list | None = [] if asks else None  # in process: the requests, given to the work at the end
        self.requests: Connection | None = None
        if not (platform_forks() if with_threads else can_fork()):
            return
        read, write = os.pipe()
        if asks:
            theirs, mine = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: answer, and leave without running the parent's exit handlers or flushing its buffers
            os.close(read)
            if asks:
                os.close(mine)
                work = functools.partial(work, _received(Connection(theirs, writable=False)))
            # What a dying native library prints (an abort message, a fault handler's dump) is not for the
            # user: the parent says what happened, in one line.
            faulthandler.disable()
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            # Stopped by cancel(): unwind, so that the work's temporary files (an unpacked .sqlite.gz) go.
            signal.signal(signal.SIGTERM, _unwind)
            _answer(work, write)
            os._exit(0)
        os.close(write)
        if asks:
            os.close(theirs)
            self.requests, self.asked = Connection(mine, readable=False), None
        self.pid, self.pipe = pid, read

    def ask(self, request) -> None:
        """Send ``request`` to the work (``asks``); a child that has stopped is said by :meth:`result`."""
        if self.asked is not None:
            self.asked.append(request)
            return
        try:
            self.requests.send(request)
        except OSError:
            pass

    def result(self) -> T:
        if self.pid is None:
            return self.work(iter(self.asked)) if self.asks else self.work()
        self._end_requests()
        try:
            with os.fdopen(self.pipe, "rb") as answer:
                self.pipe = None
                payload = answer.read()
        except BaseException:  # interrupted while waiting: the child is not waited for to its end
            self.cancel()
            raise
        status = self._reap()
        if not payload:  # the child died before it could answer
            code = os.waitstatus_to_exitcode(status)
            how = f"signal {signal.Signals(-code).name}" if code < 0 and -code in signal.valid_signals() else f"exit code {code}"
            raise self.crashed(how)
        kind, value = pickle.loads(payload)
        if kind == "ok":
            return value
        raise value  # as the work raised it (an error whose type does not pickle: a RuntimeError with its text)

    def cancel(self) -> None:
        """Stop the work (the parent failed, or was interrupted, before asking for it): SIGTERM, which
        the child unwinds from, and SIGKILL after STOP_GRACE_S."""
        if self.pid is None:
            return
        self._end_requests()
        if self.pipe is not None:
            os.close(self.pipe)
            self.pipe = None
        pid, self.pid = self.pid, None
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return
            time.sleep(0.005)

    def _end_requests(self) -> None:
        if self.requests is not None:
            # Said, not only closed: a child forked after this one holds a copy of this end, so closing it
            # is no end of file for the work.
            with contextlib.suppress(OSError):
                self.requests.send(_End())
            self.requests.close()
            self.requests = None

    def _reap(self) -> int:
        pid, self.pid = self.pid, None
        return os.waitpid(pid, 0)[1] if pid is not None else 0


class _End:
    """The end of the requests (see :meth:`Forked._end_requests`)."""


def _received(requests: Connection):
    """The requests the parent sends, until it says they end (or is gone)."""
    try:
        while not isinstance(request := requests.recv(), _End):
            yield request
    except (EOFError, OSError):
        return


def _unwind(signum, frame) -> None:
    raise SystemExit(1)


def _answer(work: Callable, fd: int) -> None:
    try:
        try:
            answer = ("ok", work())
        except Exception as exc:  # the parent raises it
            answer = ("error", exc)
        try:
            payload = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # an error (or a result) that does not pickle: its text still does
            payload = pickle.dumps(("error", RuntimeError(f"{type(answer[1]).__name__}: {answer[1]}" if answer[0] == "error" else str(exc))))
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
    except BaseException:  # interrupted, or the parent is gone (a broken pipe): no answer, the parent says so
        pass
