"""The run folder of ``ncuwrap profile``: everything one profiling run leaves behind.

    RUN_DIR/
      report.ncu-rep     the Nsight Compute report (ncu --export)
      report.raw.csv     its raw page (ncu --import report.ncu-rep --csv --page raw)
      report.source.csv  its source page with the per-instruction counters (--source, the default):
                         --print-source cuda,sass (lines), report.source_sass.csv the SASS form
      verdict.json       the diagnosis (ncuwrap.diagnosis/v4)
      report.html        the diagnosis as a self-contained page
      commands.txt       every command run, exactly, shell-quoted (build, ncu, export, nsys)
      environment.json   ncu version, nvidia-smi, python, ncuwrap, host
      ncu.log            what ncu and the program printed, in arrival order
      profile.json       passes and wall time, which launch of which kernel was profiled, the collection
      bench.json         a bundled benchmark's uninstrumented timings ('ncuwrap bench' of its family):
                         the stop line (--no-bench leaves it out; --bench-json FILE is copied here)
      timeline.*         with --nsys: the nsys capture, its SQLite export, diagnosis (json, html) and log

An existing run folder is never overwritten without ``--force``; with it, only the files above are
replaced (nothing else in the folder is touched, so ``-o .`` cannot wipe a working directory).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shlex
import socket
import sys
from pathlib import Path
from typing import Sequence

from ncuwrap.core.version import __version__
from ncuwrap.core import fileio
from ncuwrap.core import nvidia_smi as smi
from ncuwrap.core.errors import OutputExistsError

REPORT = "report.ncu-rep"
EXPORT_STEM = "report"  # ncu --export appends .ncu-rep
RAW_CSV = "report.raw.csv"
SOURCE_CSV = "report.source.csv"  # --print-source cuda,sass: kernels with line information
SOURCE_SASS_CSV = "report.source_sass.csv"  # --print-source sass: every kernel, SASS only
VERDICT = "verdict.json"
HTML = "report.html"
COMMANDS = "commands.txt"
ENVIRONMENT = "environment.json"
LOG = "ncu.log"
PROFILE = "profile.json"
BENCH = "bench.json"
TIMELINE_FILES = ("timeline.nsys-rep", "timeline.qdstrm", "timeline.sqlite", "timeline.json", "timeline.html", "timeline.log")
FILES = (REPORT, RAW_CSV, SOURCE_CSV, SOURCE_SASS_CSV, VERDICT, HTML, COMMANDS, ENVIRONMENT, LOG, PROFILE, BENCH, *TIMELINE_FILES)
SCHEMA = "ncuwrap.profile/v1"

NVIDIA_SMI_FIELDS = ("index", "name", "uuid", "driver_version", "pci.bus_id", "clocks.sm", "clocks.max.sm", "clocks.mem",
                     "clocks.max.mem", "persistence_mode", "compute_mode")
ENV_VARS = ("CUDA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "PATH", "NCUWRAP_CACHE")


class RunDir:
    """Paths of one run folder and the writes into it."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def __truediv__(self, name: str) -> Path:
        return self.path / name

    report = property(lambda self: self.path / REPORT)
    export_stem = property(lambda self: self.path / EXPORT_STEM)
    raw_csv = property(lambda self: self.path / RAW_CSV)
    source_csv = property(lambda self: self.path / SOURCE_CSV)
    source_sass_csv = property(lambda self: self.path / SOURCE_SASS_CSV)
    verdict = property(lambda self: self.path / VERDICT)
    html = property(lambda self: self.path / HTML)
    commands = property(lambda self: self.path / COMMANDS)
    environment = property(lambda self: self.path / ENVIRONMENT)
    log = property(lambda self: self.path / LOG)
    profile = property(lambda self: self.path / PROFILE)
    bench = property(lambda self: self.path / BENCH)

    def prepare(self, force: bool = False) -> None:
        """Create the folder; refuse a non-empty existing one unless ``force`` (then clear ncuwrap's files)."""
        if self.path.exists() and not self.path.is_dir():
            raise OutputExistsError(f"{self.path}: exists and is not a folder; choose another -o RUN_DIR")
        if self.path.is_dir() and any(self.path.iterdir()):
            if not force:
                raise OutputExistsError(f"{self.path}: a run folder already exists here; pass --force to overwrite it, or choose another -o RUN_DIR")
            for name in FILES:
                (self.path / name).unlink(missing_ok=True)
        self.path.mkdir(parents=True, exist_ok=True)

    def add_command(self, what: str, argv: Sequence[str], stdout_to: str | None = None) -> None:
        """Append one command, exactly as run, to commands.txt (before it runs: Ctrl-C keeps it).
        ``stdout_to`` names the file its standard output was written to."""
        line = shlex.join(str(a) for a in argv) + (f" > {shlex.quote(stdout_to)}" if stdout_to else "")
        with open(self.commands, "a", encoding="utf-8") as fh:
            fh.write(f"# {what}\n{line}\n")

    def write_text(self, path: Path, text: str) -> None:
        """``text`` into ``path``: a tool's output (core.process.TOOL_TEXT) byte for byte."""
        write_atomic(path, text, errors="surrogateescape")

    def write_json(self, path: Path, data) -> None:
        write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")

    def files(self) -> list[str]:
        return sorted(p.name for p in self.path.iterdir() if p.is_file() and not p.name.startswith("."))

    def record(self, *, status: str, target, collection, filt, tool, argv: list[str], run=None, launches: Sequence = (),
               error: str | None = None, warnings: Sequence[str] = (), timeline: dict | None = None) -> None:
        """Write profile.json: the run's status (running, ok, failed, interrupted), what was asked, what
        ncu did (``run``: an NcuRun) and which launch each profiled result was."""
        from ncuwrap.profile.launches import total_passes  # the run's planning side: not for reading a folder

        passes = [launch.passes for launch in launches] or (run.passes if run else [])
        self.write_json(self.profile, {
            "schema": SCHEMA,
            "status": status,
            "error": error,
            "target": target.to_json(),
            "collect": collection.to_json(),
            "filter": filt.to_json(),
            "ncu": {"path": tool.path, "version": tool.version_string},
            "argv": argv,
            "returncode": run.returncode if run else None,
            "wall_s": round(run.wall_s, 3) if run else None,
            "passes_total": total_passes(passes),
            "launches": [launch.to_json() for launch in launches] or
                        ([{"index": i, "kernel": k.name, "passes": k.passes, "launch": None} for i, k in enumerate(run.kernels)] if run else []),
            "warnings": list(warnings) or (run.warnings if run else []),
            "timeline": timeline,
            "files": self.files(),
        })

    def refresh_files(self) -> None:
        """Bring profile.json's list of files up to date, after documents were written beside it."""
        doc = json.loads(self.profile.read_text(encoding="utf-8"))
        doc["files"] = self.files()
        self.write_json(self.profile, doc)


write_atomic = fileio.write_atomic


def default_run_dir(label: str, now: _dt.datetime | None = None) -> Path:
    """``ncuwrap-runs/<label>-<YYYYmmdd-HHMMSS>`` in the current folder."""
    now = now or _dt.datetime.now()
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label) or "run"
    return Path("ncuwrap-runs") / f"{safe}-{now:%Y%m%d-%H%M%S}"


def nvidia_smi(*, run=None, which=None) -> dict:
    """The GPUs as nvidia-smi reports them (or why that failed), for environment.json."""
    return smi.query(NVIDIA_SMI_FIELDS, run=run, which=which).to_json()


def environment(tool=None, *, smi: dict | None = None) -> dict:
    """What a reader needs to trust and reproduce the run."""
    return {
        "schema": "ncuwrap.environment/v1",
        "started_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "ncuwrap": __version__,
        "ncu": {"path": tool.path, "version": tool.version_string, "version_line": tool.version_text} if tool else None,
        "nvidia_smi": smi if smi is not None else nvidia_smi(),
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "platform": platform.platform(),
        "hostname": socket.gethostname(),
        "cwd": os.getcwd(),
        "env": {k: os.environ[k] for k in ENV_VARS if k in os.environ},
    }
