"""Finding ncu, asking its version, running it (its console followed, Ctrl-C handled).

ncu is looked up only when a command needs it, never at import time. What to collect is
:mod:`ncuwrap.profile.collection`; the command lines, :mod:`ncuwrap.profile.ncu_argv`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ncuwrap.core import process
from ncuwrap.core.errors import ToolNotFoundError
from ncuwrap.profile.console import ConsoleListener, NcuRun, Progress

MIN_VERSION = (2023, 1, 0)
_VERSION = re.compile(r"Version (\d{4})\.(\d+)(?:\.(\d+))?(?:\.(\d+))?")


@dataclass(frozen=True)
class NcuTool:
    """An ncu executable and the version it reported."""

    path: str
    version: tuple[int, ...]
    version_text: str

    @property
    def version_string(self) -> str:
        return ".".join(str(v) for v in self.version)


def find_ncu(path: str | None = None) -> str:
    """The ncu to run: ``path`` (--ncu) or the one on PATH. Raises ToolNotFoundError with the fix."""
    if path:
        candidate = Path(path)
        if candidate.is_dir():
            candidate = candidate / "ncu"
        if not candidate.is_file():
            raise ToolNotFoundError(f"{path}: no ncu there; pass --ncu the path of an installed Nsight Compute's ncu")
        # Path("./ncu") is "ncu", which a child process would look up on PATH: keep it a path.
        return os.path.abspath(candidate)
    found = shutil.which("ncu")
    if not found:
        raise ToolNotFoundError(
            "ncu (Nsight Compute) is not on PATH; install Nsight Compute 2023.1 or newer (it comes with the CUDA toolkit, "
            "e.g. /usr/local/cuda/bin/ncu) and add it to PATH, or pass --ncu /path/to/ncu"
        )
    return found


def parse_version(text: str) -> tuple[int, ...] | None:
    """``ncu --version`` output -> (2025, 3, 1, 0); None when no version line is found."""
    match = _VERSION.search(text or "")
    if not match:
        return None
    return tuple(int(g) for g in match.groups() if g is not None)


def version_argv(ncu: str) -> list[str]:
    return [ncu, "--version"]


def ncu_tool(path: str | None = None, *, run=None) -> NcuTool:
    """Find ncu, ask its version and refuse one older than MIN_VERSION (one line saying what to do)."""
    ncu = find_ncu(path)
    try:
        done = (run or subprocess.run)(version_argv(ncu), capture_output=True, timeout=60, **process.TOOL_TEXT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolNotFoundError(f"{ncu}: cannot run 'ncu --version' ({exc}); check the installation or pass --ncu another ncu") from None
    text = (done.stdout or "") + (done.stderr or "")
    version = parse_version(text)
    if version is None:
        first = text.strip().splitlines()[0] if text.strip() else f"exit code {done.returncode}, no output"
        raise ToolNotFoundError(f"{ncu}: 'ncu --version' printed no version ({first}); pass --ncu the ncu of Nsight Compute 2023.1 or newer")
    if version[:3] < MIN_VERSION:
        need = ".".join(str(v) for v in MIN_VERSION[:2])
        have = ".".join(str(v) for v in version)
        raise ToolNotFoundError(f"{ncu} is Nsight Compute {have}; ncuwrap needs {need} or newer: install a newer Nsight Compute and pass --ncu /path/to/ncu")
    line = next((ln.strip() for ln in text.splitlines() if _VERSION.search(ln)), "")
    return NcuTool(path=ncu, version=version, version_text=line)


def run_ncu(
    argv: Sequence[str],
    log_path: Path | None = None,
    progress: Progress | None = None,
    *,
    env: dict | None = None,
    cwd: str | Path | None = None,
    popen=None,
) -> NcuRun:
    """Run ``argv`` (an ncu command line) to the end, following its console, and return what it did.

    Ctrl-C does not raise here: ncu and the program are stopped and the returned run has
    ``interrupted=True`` (the caller records the run, then raises KeyboardInterrupt).
    """
    progress = progress or Progress()
    run = NcuRun(argv=list(argv))
    try:
        process.run(argv, log_path, ConsoleListener(run, progress), record=run, env=env, cwd=cwd, popen=popen)
    except process.StartError as exc:
        if isinstance(exc.cause, FileNotFoundError):
            raise ToolNotFoundError(f"{argv[0]}: not found; install Nsight Compute or pass --ncu /path/to/ncu") from None
        raise ToolNotFoundError(f"{argv[0]}: not executable; pass --ncu the path of a working ncu") from None
    progress.finished(run)
    return run
