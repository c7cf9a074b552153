"""A piece of work run in a forked child while the parent goes on, its result (or its error) taken back.

A timeline's read and analysis needs numpy, Arrow and the capture; the rules' verdict needs the rules
file and the evaluator. Forked, the two import and run side by side: the parent's part is hidden under
the child's (a 200-step capture's whole diagnose, and a compare of two captures: 0.97 of the time in
process on the H200 host, docs/scale.md), and a native reader that crashes on a corrupt file takes only
the child with it. The child's answer comes back pickled through a pipe; an error raised there is raised
here as it was (one whose type does not pickle, as a RuntimeError with its text). A child that dies is
said in one line by the caller's ``crashed`` text.

Work is forked only on Linux and only from a process of one thread: a fork copies no other thread, and
a lock another thread held at that moment (logging's, the allocator's in a library) stays held in the
child for ever. Elsewhere the work runs in process, when its result is asked for.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import signal
import sys
import threading
import time
from typing import Callable, Generic, TypeVar

from ncuwrap.core.errors import NcuwrapError

T = TypeVar("T")
STOP_GRACE_S = 2.0  # a cancelled child's time to unwind before SIGKILL


def can_fork() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


class Forked(Generic[T]):
    """``work()`` under way in a child (see the module's docstring); :meth:`result` waits for it."""

    def __init__(self, work: Callable[[], T], crashed: Callable[[str], NcuwrapError]):
        self.work, self.crashed = work, crashed
        self.pid: int | None = None
        if not can_fork():
            return
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: answer, and leave without running the parent's exit handlers or flushing its buffers
            os.close(read)
            # What a dying native library prints (an abort message, a fault handler's dump) is not for the
            # user: the parent says what happened, in one line.
            faulthandler.disable()
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            # Stopped by cancel(): unwind, so that the work's temporary files (an unpacked .sqlite.gz) go.
            signal.signal(signal.SIGTERM, _unwind)
            _answer(work, write)
            os._exit(0)
        os.close(write)
        self.pid, self.pipe = pid, read

    def result(self) -> T:
        if self.pid is None:
            return self.work()
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

    def _reap(self) -> int:
        pid, self.pid = self.pid, None
        return os.waitpid(pid, 0)[1] if pid is not None else 0


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
