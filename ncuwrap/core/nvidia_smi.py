"""nvidia-smi, asked one way: find it, run one ``--query-gpu`` with a timeout, read one row per GPU,
or say why there is none.

Used for the run folder's environment.json, the clocks of a benchmark report and the compute
capability a benchmark is built for. nvidia-smi is looked up only when a query is made.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Sequence

from ncuwrap.core.process import TOOL_TEXT

NOT_FOUND = "nvidia-smi not found on PATH"
TIMEOUT_S = 30


@dataclass(frozen=True)
class GpuQuery:
    """The answer to one query: a row per GPU (field -> text, in nvidia-smi's order), or the reason
    there is none in ``error``. ``argv`` is None when nvidia-smi was not found."""

    argv: list[str] | None
    gpus: list[dict[str, str]] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict:
        """``{"argv", "gpus"}``, ``{"argv", "error"}``, or ``{"error"}`` without nvidia-smi."""
        out: dict = {} if self.argv is None else {"argv": self.argv}
        if self.error is not None:
            out["error"] = self.error
        else:
            out["gpus"] = self.gpus
        return out


def query_argv(smi: str, fields: Sequence[str], *, units: bool = True) -> list[str]:
    """The exact command line: ``units=False`` drops " MHz", " W"... from the values."""
    return [smi, f"--query-gpu={','.join(fields)}", "--format=csv,noheader" + ("" if units else ",nounits")]


def parse_rows(text: str, fields: Sequence[str]) -> list[dict[str, str]]:
    """The rows of a ``--format=csv,noheader`` answer, each a dict of ``fields`` to its value (stripped)."""
    return [dict(zip(fields, (value.strip() for value in line.split(",")))) for line in text.splitlines() if line.strip()]


def query(fields: Sequence[str], *, units: bool = True, timeout_s: float = TIMEOUT_S, run=None, which=None) -> GpuQuery:
    """Ask nvidia-smi for ``fields`` of every GPU. Never raises: a missing nvidia-smi, one that cannot
    run, times out or fails gives a GpuQuery with ``error`` set. ``run``/``which`` replace
    subprocess.run/shutil.which (tests)."""
    smi = (which or shutil.which)("nvidia-smi")
    if not smi:
        return GpuQuery(argv=None, error=NOT_FOUND)
    argv = query_argv(smi, fields, units=units)
    try:
        done = (run or subprocess.run)(argv, capture_output=True, timeout=timeout_s, **TOOL_TEXT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return GpuQuery(argv=argv, error=str(exc))
    if done.returncode != 0:
        return GpuQuery(argv=argv, error=(done.stdout + done.stderr).strip()[:500])
    return GpuQuery(argv=argv, gpus=parse_rows(done.stdout, fields))
