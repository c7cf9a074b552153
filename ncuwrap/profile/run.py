"""Run a program under ncu: stream its output, follow the replay passes, turn failures into one line.

The child runs in its own process group (a new session), with stdin closed, so that Ctrl-C reaches
ncuwrap only: ncuwrap then stops ncu and the program together (SIGINT, then SIGTERM, then SIGKILL to
the group) and keeps what was written. Both output streams are read as they come, in chunks, so the
progress ncu prints on one line ("0%....50%....100% - 10 passes") is shown while a kernel replays;
every complete line is appended to the run's log file as it arrives (lines of the two streams never
mix inside a line).
"""

from __future__ import annotations

import codecs
import os
import queue
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ncuwrap.errors import NcuwrapError, ProfilerError, ToolNotFoundError

# ncu 2023+: ==PROF== Profiling "kernel": 0%....50%....100% - 38 passes
# ncu 2022:  ==PROF== Profiling "kernel" - 3: 0%....50%....100% - 10 passes
_PROFILING = re.compile(r'^==PROF== Profiling "(?P<name>.*?)"(?: - (?P<id>\d+))?:\s*(?P<progress>[0-9%.]*)(?:\s*-\s*(?P<passes>\d+) pass(?:es)?)?')
_APP_EXIT = re.compile(r"==ERROR== The application returned an error code \((?P<code>-?\d+)\)")
_AVAILABLE = re.compile(r"^\s*\d+\.\s+(?P<name>\S.*?)\s*$")
_PERCENT = re.compile(r"(\d+)%")
PERMISSION_FIX = (
    "no permission to read the GPU performance counters (ERR_NVGPUCTRPERM): run ncuwrap as root (sudo -E), "
    "or let all users profile with 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d/ and a reboot, "
    "or in a container start it with --cap-add SYS_ADMIN"
)
# ncu messages that mean this ncu cannot work with this driver or GPU.
_INCOMPATIBLE = (
    "LibraryNotLoaded",
    "failed to connect to the CUDA driver",
    "Failed to initialize the profiler",
    "device is not supported",
    "GPU is not supported",
    "not supported by this version",
    "unsupported GPU",
    "unsupported device",
    "not supported on this device",
    "driver version",
    "driver is too old",
    "newer driver",
    "update the driver",
    "not compatible with",
)
STOP_GRACE_S = (3.0, 2.0)  # after SIGINT, after SIGTERM; then SIGKILL


@dataclass
class ProfiledKernel:
    """One ``==PROF== Profiling`` line: a kernel launch ncu replayed."""

    name: str
    passes: int | None = None
    percent: int = 0


@dataclass
class NcuRun:
    """What one ncu process did, from its output."""

    argv: list[str]
    returncode: int | None = None
    wall_s: float = 0.0
    kernels: list[ProfiledKernel] = field(default_factory=list)
    lines: list[tuple[str, str]] = field(default_factory=list)  # (stream, line) in arrival order
    interrupted: bool = False

    # -- what the output says

    def text(self, stream: str | None = None) -> list[str]:
        return [line for s, line in self.lines if stream is None or s == stream]

    @property
    def errors(self) -> list[str]:
        return [line.strip() for line in self.text() if line.lstrip().startswith("==ERROR==")]

    @property
    def warnings(self) -> list[str]:
        return [line.strip() for line in self.text() if line.lstrip().startswith("==WARNING==")]

    @property
    def permission_denied(self) -> bool:
        return any("ERR_NVGPUCTRPERM" in line for line in self.text())

    @property
    def app_exit_code(self) -> int | None:
        for line in self.text():
            match = _APP_EXIT.search(line)
            if match:
                return int(match.group("code"))
        return None

    @property
    def no_kernels_profiled(self) -> bool:
        return any("No kernels were profiled" in line for line in self.text())

    @property
    def available_kernels(self) -> list[str]:
        """The kernel names ncu lists after "No kernels were profiled." when a filter matched none."""
        names: list[str] = []
        listing = False
        for line in self.text():
            if line.strip().startswith("Available Kernels"):
                listing = True
                continue
            if listing:
                match = _AVAILABLE.match(line)
                if not match:
                    listing = False
                    continue
                if match.group("name") not in names:
                    names.append(match.group("name"))
        return names

    def program_lines(self, count: int = 5) -> list[str]:
        """The program's own last lines (ncu's ==PROF==/==ERROR==/==WARNING== lines left out),
        from its stderr when it wrote any there."""

        def own(stream: str | None) -> list[str]:
            return [ln.rstrip() for ln in self.text(stream) if ln.strip() and not ln.lstrip().startswith("==")]

        lines = own("stderr") or own(None)
        return lines[-count:]

    @property
    def passes(self) -> list[int | None]:
        return [k.passes for k in self.kernels]


class Progress:
    """Receives what ncu reports while it runs. The default does nothing (library use)."""

    def started(self, argv: Sequence[str]) -> None: ...

    def kernel(self, index: int, name: str, percent: int) -> None: ...

    def kernel_done(self, index: int, name: str, passes: int | None) -> None: ...

    def output(self, stream: str, line: str) -> None: ...

    def stage(self, text: str) -> None:
        """A step other than ncu's replay starts (e.g. the nsys capture)."""

    def finished(self, run: NcuRun) -> None: ...


class _Parser:
    """Turns the chunks of one stream into lines, and ==PROF== Profiling lines into kernel events.
    A progress line is parsed while it is still being written (no newline yet)."""

    def __init__(self, stream: str, run: NcuRun, progress: Progress, log=None):
        self.stream = stream
        self.run = run
        self.progress = progress
        self.log = log  # complete lines go there: two streams never interleave inside a line
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.pending = ""
        self.current: ProfiledKernel | None = None  # the kernel whose progress line is open

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
        elif self.pending.startswith("==PROF== Profiling"):
            self._profiling(self.pending, done=False)
        self.pending += hold

    def _line(self, line: str) -> None:
        self.run.lines.append((self.stream, line))
        if self.log is not None:
            self.log.write(line + "\n")
            self.log.flush()
        if line.startswith("==PROF== Profiling"):
            self._profiling(line, done=True)
        self.progress.output(self.stream, line)

    def _profiling(self, line: str, done: bool) -> None:
        match = _PROFILING.match(line)
        if not match:
            return
        if self.current is None or self.current.name != match.group("name"):
            self.current = ProfiledKernel(match.group("name"))
            self.run.kernels.append(self.current)
        kernel, index = self.current, len(self.run.kernels) - 1
        percents = [int(p) for p in _PERCENT.findall(match.group("progress") or "")]
        if percents and percents[-1] != kernel.percent:
            kernel.percent = percents[-1]
        if match.group("passes"):
            kernel.passes = int(match.group("passes"))
        self.progress.kernel(index, kernel.name, kernel.percent)
        if done:
            self.progress.kernel_done(index, kernel.name, kernel.passes)
            self.current = None


def parse_console(text: str, progress: Progress | None = None) -> NcuRun:
    """Parse a recorded ncu console log (one stream) as if it had been streamed."""
    run = NcuRun(argv=[])
    parser = _Parser("stdout", run, progress or Progress())
    parser.feed(text.encode("utf-8"), final=True)
    return run


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


def stop_group(proc: subprocess.Popen, grace: Sequence[float] = STOP_GRACE_S) -> None:
    """Stop ``proc`` and everything in its process group: SIGINT (ncu then stops the program and
    finishes its report), then SIGTERM, then SIGKILL."""
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
        # ncu is gone; make sure nothing of its group (the program) lingers.
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return


def run_ncu(
    argv: Sequence[str],
    log_path: Path | None = None,
    progress: Progress | None = None,
    *,
    env: dict | None = None,
    cwd: str | Path | None = None,
    popen: Callable[..., subprocess.Popen] | None = None,
) -> NcuRun:
    """Run ``argv`` (an ncu command line) to the end and return what it did.

    Ctrl-C does not raise here: the process group is stopped and the returned run has
    ``interrupted=True`` (the caller records the run, then raises KeyboardInterrupt).
    """
    progress = progress or Progress()
    run = NcuRun(argv=list(argv))
    log = open(log_path, "a", encoding="utf-8") if log_path else None
    start = time.perf_counter()
    try:
        try:
            proc = (popen or subprocess.Popen)(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, env=env, cwd=cwd)
        except FileNotFoundError:
            raise ToolNotFoundError(f"{argv[0]}: not found; install Nsight Compute or pass --ncu /path/to/ncu") from None
        except PermissionError:
            raise ToolNotFoundError(f"{argv[0]}: not executable; pass --ncu the path of a working ncu") from None
        progress.started(argv)
        sink: queue.Queue = queue.Queue()
        parsers = {"stdout": _Parser("stdout", run, progress, log), "stderr": _Parser("stderr", run, progress, log)}
        threads = [threading.Thread(target=_reader, args=(name, getattr(proc, name), sink), daemon=True) for name in parsers]
        for thread in threads:
            thread.start()
        open_streams = set(parsers)
        try:
            while open_streams:
                _pump(sink, parsers, open_streams)
            proc.wait()
        except KeyboardInterrupt:
            run.interrupted = True
            stop_group(proc)
            _drain(sink, parsers, open_streams)
        run.returncode = proc.returncode
    finally:
        run.wall_s = time.perf_counter() - start
        if log:
            log.close()
    progress.finished(run)
    return run


def _pump(sink: queue.Queue, parsers: dict, open_streams: set) -> None:
    """Hand the next chunk a reader thread delivered to its stream's parser (None: the stream closed)."""
    try:
        stream, data = sink.get(timeout=0.1)
    except queue.Empty:
        return
    if data is None:
        parsers[stream].feed(b"", final=True)
        open_streams.discard(stream)
    else:
        parsers[stream].feed(data)


def _drain(sink: queue.Queue, parsers: dict, open_streams: set) -> None:
    """After a stop: keep what the readers still hold (a second Ctrl-C gives up on it)."""
    deadline = time.monotonic() + 2.0
    try:
        while open_streams and time.monotonic() < deadline:
            _pump(sink, parsers, open_streams)
    except KeyboardInterrupt:
        pass
    for stream in list(open_streams):  # what the readers did not deliver in time: keep the partial line
        parsers[stream].feed(b"", final=True)


# ----------------------------------------------------------------------------------- failures


def _quote_lines(lines: list[str]) -> str:
    return " | ".join(line.strip()[:200] for line in lines)


def failure(run: NcuRun, *, log: str, known_kernels: Sequence[str] = (), kernel_filter: str | None = None,
            report_exists: bool = False) -> NcuwrapError | None:
    """The error a finished ncu run amounts to (None: it profiled something). One line each, with the fix.

    When a filter matched nothing, ncu (2023.1 and newer) lists the kernels the program launched
    under "Available Kernels:"; that list is quoted. Where ncu printed none, the kernels a bundled
    benchmark is known to launch are quoted instead. ncuwrap does not run an arbitrary program a second
    time just to list its kernels: it may be slow or have side effects; the message says how to list them.
    """
    if run.permission_denied:
        return ProfilerError(PERMISSION_FIX)
    incompatible = [e for e in run.errors if any(p.lower() in e.lower() for p in _INCOMPATIBLE)]
    if incompatible:
        text = incompatible[0].replace("==ERROR==", "").strip()
        return ToolNotFoundError(
            f"{run.argv[0]} cannot profile on this driver or GPU ({text}); install the Nsight Compute that matches the driver "
            f"(the one of the CUDA version nvidia-smi names, or newer) and pass --ncu /path/to/ncu"
        )
    code = run.app_exit_code
    if code is not None and code != 0:
        last = run.program_lines()
        tail = f"; its last lines: {_quote_lines(last)}" if last else "; it printed nothing"
        kept = " (the report so far is kept)" if report_exists else ""
        return ProfilerError(f"the program failed under ncu with exit code {code}{tail}; run it without ncu to reproduce, full log: {log}{kept}")
    where = f" -k {kernel_filter!r}" if kernel_filter else ""
    launched = run.available_kernels
    if launched:
        shown = ", ".join(launched[:20]) + (f" and {len(launched) - 20} more" if len(launched) > 20 else "")
        return ProfilerError(f"the kernel filter{where} matched no launch; the program launched: {shown}; pass -k with one of these (a regular expression)")
    if run.errors:
        return ProfilerError(f"ncu failed: {run.errors[0].replace('==ERROR==', '').strip()}; full log: {log}")
    if run.no_kernels_profiled or (not run.kernels and not report_exists):
        if known_kernels:
            return ProfilerError(f"the kernel filter{where} matched no launch; this benchmark launches: {', '.join(known_kernels)}; check -k, --launch-skip and --nth-launch")
        if kernel_filter:
            return ProfilerError(f"the kernel filter{where} matched no launch (or --launch-skip skipped them all); "
                                 f"run 'ncuwrap profile -- PROGRAM' without -k to see the kernels it launches, full log: {log}")
        return ProfilerError(f"no kernel was profiled: the program launched no CUDA kernel that ncu could see; check that it uses the GPU, full log: {log}")
    if run.returncode not in (0, None) and not report_exists:
        return ProfilerError(f"ncu exited with code {run.returncode} and wrote no report; full log: {log}")
    return None
