"""Helpers of the tests that run processes.

:class:`FinishedPopen` is a FAKE ``subprocess.Popen`` whose process has already finished, for tests of
what ncuwrap does with a profiler's argv and output without running the profiler: its stdout and stderr
are real pipes holding the given bytes (closed for writing), so :func:`ncuwrap.core.process.run` reads
them with its real reader threads. :func:`alive` says whether a real process still runs.
"""

from __future__ import annotations

import os


class FinishedPopen:
    """FAKE Popen: records nothing itself; ``stdout``/``stderr`` are pipes holding the given output."""

    def __init__(self, stdout: bytes = b"", stderr: bytes = b"", returncode: int = 0, pid: int = 4242):
        self.stdout, self.stderr = _pipe(stdout), _pipe(stderr)
        self.pid, self._code, self.returncode = pid, returncode, None

    def wait(self, timeout=None):
        self.returncode = self._code
        return self._code


def _pipe(data: bytes):
    read, write = os.pipe()
    os.write(write, data)  # small outputs only: a pipe holds 64 KiB
    os.close(write)
    return os.fdopen(read, "rb")


def alive(pid: int) -> bool:
    """True while process ``pid`` runs (a zombie counts as gone); reads /proc."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")
