"""Run a profiler (ncu or nsys) with a program under it: stream its output, stop it cleanly on Ctrl-C.

The child runs in its own process group (a new session), with stdin closed, so that Ctrl-C reaches
ncuwrap only: ncuwrap then stops the profiler and the program together (SIGINT, then SIGTERM, then
SIGKILL to the group) and keeps what was written. Both output streams are read as they come, in
chunks, so a line still being written (ncu's "0%....50%....100% - 10 passes") can be followed; every
complete line is appended to the log file as it arrives (lines of the two streams never mix inside a
line). What the output means is the caller's business: a :class:`Listener` gets each line.
"""

from __future__ import annotations

import codecs
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

STOP_GRACE_S = (3.0, 2.0)  # after SIGINT, after SIGTERM; then SIGKILL

# How the output of a tool run to the end is decoded (``subprocess.run(argv, capture_output=True, **TOOL_TEXT)``):
# as Python reads file names (UTF-8 here; each byte that is not kept as a surrogate escape). A tool echoes
# the file names it is given (nsys: "cannot open résumé.nsys-rep", the name in Latin-1), and a byte that is
# not UTF-8 failed the whole read ("internal error: UnicodeDecodeError"); so decoded, the name reads back
# as the one given, every output shows the byte as ``\xNN`` (ncuwrap.render.escape) and a file written
# from it with errors="surrogateescape" holds the tool's own bytes.
TOOL_TEXT = {"encoding": sys.getfilesystemencoding(), "errors": sys.getfilesystemencodeerrors()}


@dataclass
class ProcessRun:
    """What one process did: its exit code, wall time and output lines."""

    argv: list[str]
    returncode: int | None = None
    wall_s: float = 0.0
    lines: list[tuple[str, str]] = field(default_factory=list)  # (stream, line) in arrival order
    interrupted: bool = False

    def text(self, stream: str | None = None) -> list[str]:
        return [line for s, line in self.lines if stream is None or s == stream]

    @property
    def stdout(self) -> str:
        return "\n".join(self.text("stdout"))

    @property
    def stderr(self) -> str:
        return "\n".join(self.text("stderr"))


class Listener:
    """Told what the process does while it runs. The default does nothing."""

    def started(self, argv: Sequence[str]) -> None: ...

    def line(self, stream: str, line: str) -> None:
        """A complete line (already in ``run.lines`` and the log)."""

    def partial(self, stream: str, text: str) -> None:
        """The start of a line still being written (called again as it grows)."""


class StartError(Exception):
    """``argv[0]`` could not be started; the caller names the tool and the fix."""

    def __init__(self, argv: Sequence[str], cause: OSError):
        super().__init__(str(cause))
        self.argv = list(argv)
        self.cause = cause


class LineSplitter:
    """Turns the byte chunks of one stream into lines (``\\r``, ``\\n`` and ``\\r\\n`` all end one)."""

    def __init__(self, stream: str, run: ProcessRun, listener: Listener, log=None):
        self.stream = stream
        self.run = run
        self.listener = listener
        self.log = log  # complete lines go there: two streams never interleave inside a line
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.pending = ""

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self.pending + self.decoder.decode(data, final)
        hold = "\r" if text.endswith("\r") and not final else ""  # a "\r\n" may be cut between two chunks
        text = (text[:-1] if hold else text).replace("\r\n", "\n").replace("\r", "\n")
        *complete, self.pending = text.split("\n")
        for line in complete:
            self._line(line)
        if final and self.pending:
            self._line(self.pending)
            self.pending = ""
        elif self.pending:
            self.listener.partial(self.stream, self.pending)
        self.pending += hold

    def _line(self, line: str) -> None:
        self.run.lines.append((self.stream, line))
        if self.log is not None:
            self.log.write(line + "\n")
            self.log.flush()
        self.listener.line(self.stream, line)


def _reader(stream: str, pipe, sink: queue.Queue) -> None:
    fd = pipe.fileno()
    try:
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            sink.put((stream, data))
    finally:
        sink.put((stream, None))


def stop_group(proc: subprocess.Popen, grace: Sequence[float] | None = None) -> None:
    """Stop ``proc`` and everything in its process group: SIGINT (a profiler then stops the program
    and finishes its report), then SIGTERM, then SIGKILL."""
    grace = grace or STOP_GRACE_S  # read at call time: tests shorten it
    try:
        pgid = os.getpgid(proc.pid)
    except ProcessLookupError:
        return
    for sig, wait_s in ((signal.SIGINT, grace[0]), (signal.SIGTERM, grace[1]), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            continue
        # The profiler is gone; make sure nothing of its group (the program) lingers.
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return


# What ncuwrap's command line sets in its own environment and never passes on (name -> value).
_OWN_ENV: dict[str, str] = {}


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def quiet_thread_pools() -> None:
    """Hold numpy's OpenBLAS to one thread in this process, unless the user chose a count. OpenBLAS starts a
    thread per core when numpy is imported, and they cost CPU though ncuwrap multiplies no matrices: on a
    many-core host, several times the wall time of a small capture's whole `ncuwrap timeline` (docs/scale.md, figures behind the code).
    Called by the command
    line before numpy is imported; the programs ncuwrap runs get the environment as it was (environment())."""
    if "OPENBLAS_NUM_THREADS" not in os.environ:
        os.environ["OPENBLAS_NUM_THREADS"] = _OWN_ENV["OPENBLAS_NUM_THREADS"] = "1"


def release_freed_memory() -> None:
    """Give the C heap's freed pages back to the system where glibc keeps them (malloc_trim): a report's parse
    frees large numpy temporaries launch after launch, which the reading child otherwise held while nvdisasm
    ran beside it (docs/scale.md, figures behind the code). Elsewhere (another libc) nothing is done."""
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):
        pass


def environment(env: dict | None = None) -> dict:
    """The environment for a program ncuwrap runs: ``env`` (default: ncuwrap's own) without what
    :func:`quiet_thread_pools` set for ncuwrap itself."""
    out = dict(os.environ if env is None else env)
    for name, value in _OWN_ENV.items():
        if out.get(name) == value:
            del out[name]
    return out


def run(
    argv: Sequence[str],
    log_path: Path | None = None,
    listener: Listener | None = None,
    *,
    record: ProcessRun | None = None,
    env: dict | None = None,
    cwd: str | Path | None = None,
    popen: Callable[..., subprocess.Popen] | None = None,
) -> ProcessRun:
    """Run ``argv`` to the end and return what it did (``record``, filled in, when given: a subclass
    carries what the listener parsed). Raises :class:`StartError` when it cannot be started.

    Ctrl-C does not raise here: the process group is stopped and the returned run has
    ``interrupted=True`` (the caller records the run, then raises KeyboardInterrupt).
    """
    listener = listener or Listener()
    result = record if record is not None else ProcessRun(argv=list(argv))
    log = open(log_path, "a", encoding="utf-8") if log_path else None
    start = time.perf_counter()
    try:
        try:
            proc = (popen or subprocess.Popen)(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                               start_new_session=True, env=environment(env), cwd=cwd)
        except OSError as exc:
            raise StartError(argv, exc) from None
        listener.started(argv)
        sink: queue.Queue = queue.Queue()
        splitters = {name: LineSplitter(name, result, listener, log) for name in ("stdout", "stderr")}
        threads = [threading.Thread(target=_reader, args=(name, getattr(proc, name), sink), daemon=True) for name in splitters]
        for thread in threads:
            thread.start()
        open_streams = set(splitters)
        try:
            while open_streams:
                _pump(sink, splitters, open_streams)
            proc.wait()
        except KeyboardInterrupt:
            result.interrupted = True
            stop_group(proc)
            _drain(sink, splitters, open_streams)
        result.returncode = proc.returncode
    finally:
        result.wall_s = time.perf_counter() - start
        if log:
            log.close()
    return result


def _pump(sink: queue.Queue, splitters: dict, open_streams: set) -> None:
    """Hand the next chunk a reader thread delivered to its stream's splitter (None: the stream closed)."""
    try:
        stream, data = sink.get(timeout=0.1)
    except queue.Empty:
        return
    if data is None:
        splitters[stream].feed(b"", final=True)
        open_streams.discard(stream)
    else:
        splitters[stream].feed(data)


def _drain(sink: queue.Queue, splitters: dict, open_streams: set) -> None:
    """After a stop: keep what the readers still hold (a second Ctrl-C gives up on it)."""
    deadline = time.monotonic() + 2.0
    try:
        while open_streams and time.monotonic() < deadline:
            _pump(sink, splitters, open_streams)
    except KeyboardInterrupt:
        pass
    for stream in list(open_streams):  # what the readers did not deliver in time: keep the partial line
        splitters[stream].feed(b"", final=True)
