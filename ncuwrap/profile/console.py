"""What ncu prints on its console, read: the ``==PROF== Profiling`` progress of each replayed kernel,
``==ERROR==`` and ``==WARNING==`` lines, the program's exit code, the kernels a filter could have matched.

:class:`ConsoleListener` follows a running ncu (via :mod:`ncuwrap.core.process`), a progress line while
it is still being written; :func:`parse_console` reads a recorded log the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from ncuwrap.core.process import LineSplitter, Listener, ProcessRun

# ncu 2023+: ==PROF== Profiling "kernel": 0%....50%....100% - 38 passes
# ncu 2022:  ==PROF== Profiling "kernel" - 3: 0%....50%....100% - 10 passes
_PROFILING = re.compile(r'^==PROF== Profiling "(?P<name>.*?)"(?: - (?P<id>\d+))?:\s*(?P<progress>[0-9%.]*)(?:\s*-\s*(?P<passes>\d+) pass(?:es)?)?')
_APP_EXIT = re.compile(r"==ERROR== The application returned an error code \((?P<code>-?\d+)\)")
_AVAILABLE = re.compile(r"^\s*\d+\.\s+(?P<name>\S.*?)\s*$")
_PERCENT = re.compile(r"(\d+)%")


@dataclass
class ProfiledKernel:
    """One ``==PROF== Profiling`` line: a kernel launch ncu replayed."""

    name: str
    passes: int | None = None
    percent: int = 0


@dataclass
class NcuRun(ProcessRun):
    """What one ncu process did, from its output."""

    kernels: list[ProfiledKernel] = field(default_factory=list)

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


class ConsoleListener(Listener):
    """Turns ncu's ``==PROF== Profiling`` lines into kernels of ``run`` and events of ``progress``.
    A progress line is parsed while it is still being written (no newline yet)."""

    def __init__(self, run: NcuRun, progress: Progress | None = None):
        self.run = run
        self.progress = progress or Progress()
        self.current: dict[str, ProfiledKernel | None] = {}  # per stream: the kernel whose progress line is open

    def started(self, argv: Sequence[str]) -> None:
        self.progress.started(argv)

    def line(self, stream: str, line: str) -> None:
        if line.startswith("==PROF== Profiling"):
            self._profiling(stream, line, done=True)
        self.progress.output(stream, line)

    def partial(self, stream: str, text: str) -> None:
        if text.startswith("==PROF== Profiling"):
            self._profiling(stream, text, done=False)

    def _profiling(self, stream: str, line: str, done: bool) -> None:
        match = _PROFILING.match(line)
        if not match:
            return
        kernel = self.current.get(stream)
        if kernel is None or kernel.name != match.group("name"):
            kernel = self.current[stream] = ProfiledKernel(match.group("name"))
            self.run.kernels.append(kernel)
        index = len(self.run.kernels) - 1
        percents = [int(p) for p in _PERCENT.findall(match.group("progress") or "")]
        if percents and percents[-1] != kernel.percent:
            kernel.percent = percents[-1]
        if match.group("passes"):
            kernel.passes = int(match.group("passes"))
        self.progress.kernel(index, kernel.name, kernel.percent)
        if done:
            self.progress.kernel_done(index, kernel.name, kernel.passes)
            self.current[stream] = None


def parse_console(text: str, progress: Progress | None = None) -> NcuRun:
    """Parse a recorded ncu console log (one stream) as if it had been streamed."""
    run = NcuRun(argv=[])
    LineSplitter("stdout", run, ConsoleListener(run, progress)).feed(text.encode("utf-8"), final=True)
    return run
