"""Capture a program's timeline with Nsight Systems and diagnose it: what ``ncuwrap timeline`` runs.

    RUN_DIR/
      timeline.nsys-rep   the capture (nsys profile --trace=cuda,nvtx,osrt by default)
      timeline.sqlite     its SQLite export (nsys export --type sqlite)
      timeline.json       the diagnosis (ncuwrap.timeline/v1), written by the command line
      timeline.html       the diagnosis as a self-contained page, written by the command line
      timeline.log        the commands run and everything nsys and the program printed

:func:`capture` writes the capture, its export and the log, and returns the diagnosis as a typed
:class:`Capture`; rendering it is the command line's job (:mod:`ncuwrap.cli.timeline`). :func:`record` does the
same up to the what-if and the rules (a :class:`Recorded`): ``profile --top`` ranks the kernels of its steady
steps, and has it judged with ncu's verdicts joined once ncu has run.

An existing, non-empty run folder is never reused without ``force``; with it, only the files above
are replaced.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ncuwrap.core import fileio
from ncuwrap.core.errors import InputError, OutputExistsError, ProfilerError
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.timeline import nsysrep
from ncuwrap.timeline.measured import Analysed
from ncuwrap.timeline.options import TimelineOptions

STEM = "timeline"
VERDICT = "timeline.json"
HTML = "timeline.html"
FILES = ("timeline.nsys-rep", "timeline.qdstrm", "timeline.sqlite", VERDICT, HTML, "timeline.log")


@dataclass(frozen=True)
class Recorded:
    """One capture's files and what was measured of it before the what-if and the rules (its events, its steps
    found and analysed): :func:`record` makes it; :func:`capture` judges it
    (ncuwrap.timeline.diagnosis.diagnose_analysed)."""

    run_dir: Path
    report: Path
    sqlite: Path
    log: Path
    analysed: Analysed = field(repr=False)


@dataclass(frozen=True)
class Capture:
    """One capture's files and its diagnosis."""

    run_dir: Path
    report: Path
    sqlite: Path
    log: Path
    diagnosis: object  # TimelineDiagnosis
    data: object = field(default=None, repr=False)  # the raw events read from the export (TimelineData)


def default_run_dir(now: _dt.datetime | None = None) -> Path:
    """``ncuwrap-runs/timeline-<YYYYmmdd-HHMMSS>`` in the current folder."""
    now = now or _dt.datetime.now()
    return Path("ncuwrap-runs") / f"timeline-{now:%Y%m%d-%H%M%S}"


def prepare(run_dir: Path, force: bool) -> None:
    if run_dir.exists() and not run_dir.is_dir():
        raise OutputExistsError(f"{run_dir}: exists and is not a folder; choose another -o RUN_DIR")
    if run_dir.is_dir() and any(run_dir.iterdir()):
        if not force:
            raise OutputExistsError(f"{run_dir}: a run folder already exists here; pass --force to overwrite it, or choose another -o RUN_DIR")
        for name in FILES:  # a stale report must never pass for this run's
            (run_dir / name).unlink(missing_ok=True)
    run_dir.mkdir(parents=True, exist_ok=True)


def check_program(program: list[str]) -> None:
    if not program:
        raise InputError("no program given; run 'ncuwrap timeline -- ./program args'")
    exe = program[0]
    if os.sep in exe or (os.altsep and os.altsep in exe):
        path = Path(exe)
        if not path.is_file():
            raise InputError(f"{exe}: no such program; check the path")
        if not os.access(path, os.X_OK):
            raise InputError(f"{exe}: not executable; chmod +x it or give the interpreter first (python3 {exe})")
    elif shutil.which(exe) is None:
        raise InputError(f"{exe}: program not found on PATH; give its path (./{exe})")


_write = fileio.write_atomic


def _qdstrm(run_dir: Path, output: str) -> Path | None:
    """The .qdstrm nsys left behind when its importer failed: in the run folder, or named in its output."""
    local = run_dir / f"{STEM}.qdstrm"
    if local.exists():
        return local
    for name in re.findall(r"(\S+\.qdstrm)\b", output or ""):
        candidate = Path(name.strip("'\""))
        if candidate.exists():
            return candidate
    return None


def capture(program: list[str], run_dir: Path, *, force: bool = False, rules: RulesChoice = RulesChoice(), started=None,
            options: nsysrep.NsysOptions | None = None, timeline: TimelineOptions = TimelineOptions(), kernels=None) -> Capture:
    """Run ``program`` under nsys (``timeline.nsys``) into ``run_dir``, export it and diagnose it with
    ``rules`` (default: the bundled timeline rules), its steps found as ``timeline`` says.
    ``options`` set nsys's trace list and pass more arguments on (--nsys-trace, --nsys-arg).
    ``started(argv)``, if given, is called just before nsys starts (for a progress line); ``kernels``, a kernel
    report's verdicts to join for the what-if (ncuwrap.timeline.kernel_join.DiagnosedKernels).
    Raises KeyboardInterrupt after a Ctrl-C (nsys and the program are stopped; the log is kept)."""
    from ncuwrap.timeline.metrics import TIMELINE
    from ncuwrap.timeline.diagnosis import diagnose_analysed

    from ncuwrap import ruleset

    rule_set = ruleset.chosen(rules, TIMELINE)  # a bad rules file fails before the run
    recorded = record(program, run_dir, force=force, started=started, options=options, timeline=timeline)
    diagnosis = diagnose_analysed(recorded.analysed, rule_set, kernels=kernels)
    return Capture(run_dir=recorded.run_dir, report=recorded.report, sqlite=recorded.sqlite, log=recorded.log, diagnosis=diagnosis,
                   data=recorded.analysed.data)


def record(program: list[str], run_dir: Path, *, force: bool = False, started=None, options: nsysrep.NsysOptions | None = None,
           timeline: TimelineOptions = TimelineOptions()) -> Recorded:
    """Run ``program`` under nsys (``timeline.nsys``) into ``run_dir``, export it, read it and analyse it up to the
    what-if (ncuwrap.timeline.measured.analyse: its steps found as ``timeline`` says); ``options`` and ``started`` as
    :func:`capture` takes them. Raises KeyboardInterrupt after a Ctrl-C (nsys and the program are stopped; the log
    is kept)."""
    from ncuwrap.timeline import readers
    from ncuwrap.timeline.measured import analyse

    options = (options or nsysrep.NsysOptions()).check()
    exe = nsysrep.find_nsys(timeline.nsys)
    check_program(program)
    prepare(run_dir, force)
    log = run_dir / f"{STEM}.log"
    argv = nsysrep.profile_argv(exe, run_dir / STEM, list(program), options.for_program(list(program)))  # a Python program's ops
    if started is not None:
        started(argv)
    _write(log, f"$ {shlex.join(argv)}\n")
    done = nsysrep.run_profile(argv, log)
    if done.interrupted:
        raise KeyboardInterrupt
    report = run_dir / f"{STEM}.nsys-rep"
    if not report.exists():
        output = "\n".join(done.text())
        qdstrm = _qdstrm(run_dir, output)
        if qdstrm is not None:
            raise ProfilerError(nsysrep.qdstrm_error(qdstrm, output) + f"; nsys output in {log}")
        if done.returncode != 0:
            raise nsysrep.profile_failure(list(program), done, log)
        raise ProfilerError(f"{report}: nsys wrote no report (exit code {done.returncode}); its output is in {log}")
    if done.returncode != 0:
        raise nsysrep.profile_failure(list(program), done, log)

    exported = nsysrep.export_sqlite(report, run_dir / f"{STEM}.sqlite", nsys=exe)
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"$ {shlex.join(nsysrep.export_argv(exe, report, run_dir / f'{STEM}.sqlite'))}\n")
    data, _ = readers.read(exported)  # the export: read as any nsys export is; the source named is the report
    return Recorded(run_dir=run_dir, report=report, sqlite=exported, log=log,
                    analysed=analyse(data, kind="nsys-rep", source_path=str(report), timeline=timeline))
