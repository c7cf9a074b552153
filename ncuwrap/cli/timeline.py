"""``ncuwrap timeline -- ./program args``: capture a program with Nsight Systems and diagnose its
timeline (thin wrapper over :mod:`ncuwrap.timeline.capture`); ``ncuwrap timeline FILE.sqlite`` (or
.nsys-rep, or a PyTorch profiler trace: :mod:`ncuwrap.timeline.readers`) diagnoses a capture made
before; ``ncuwrap timeline --ranks DIR`` diagnoses a multi-GPU run from one capture per rank
(:mod:`ncuwrap.timeline.ranks`), and ``--per-rank -- torchrun ...`` captures one
(:mod:`ncuwrap.timeline.ranks.capture`).

The verdict goes to stdout in --format, or, reading captures made before, to the -o file; where the files
went goes to stderr. ``-o`` is where the output goes (docs/cli/README.md): the file of the verdict where
captures are read, the run folder where a program is captured.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import List, Optional

import typer

from ncuwrap.cli.root import app
from ncuwrap.cli.options import (Extend, Names, NsysArgs, NsysPath, NsysTrace, Output, OutputFormat, Quiet, Replace, Rules, StepRange,
                                 Steps, StepsFind, Warmup, rules_choice, timeline_options)
from ncuwrap.cli.output import check_output, emit, write_document
from ncuwrap.cli.progress import shown
from ncuwrap.core.errors import InputError
from ncuwrap.render import Format
from ncuwrap.render.escape import terminal

# Nsight Compute reports, given by mistake instead of a program or a capture.
_NCU_SUFFIXES = (".ncu-rep", ".ncu-rep.gz", ".csv", ".csv.gz")


def write_timeline_documents(diagnosis, run_dir: Path) -> list[Path]:
    """timeline.json and timeline.html of ``diagnosis`` into ``run_dir`` (also for ``profile --nsys``)."""
    from ncuwrap.timeline.capture import HTML, VERDICT

    return [write_document(diagnosis, Format.json, run_dir / VERDICT), write_document(diagnosis, Format.html, run_dir / HTML)]


def capture_file(program: list[str]) -> Path | None:
    """The capture file given instead of a program (``ncuwrap timeline run.sqlite``), else None.
    An Nsight Compute report, or arguments after a capture, end in one line with the fix."""
    from ncuwrap.timeline.readers import SUFFIXES as TIMELINE_SUFFIXES

    path = Path(program[0])
    name = path.name.lower()
    if len(program) == 1 and path.is_dir():
        raise InputError(f"{path}: a folder, not a program or a capture; for one capture per rank run 'ncuwrap timeline --ranks {path}', "
                         "to capture a program give it after '--'")
    if name.endswith(_NCU_SUFFIXES):
        raise InputError(f"{path}: an Nsight Compute report, not a timeline; diagnose it with 'ncuwrap diagnose {path}'")
    if not name.endswith(TIMELINE_SUFFIXES):
        return None
    if len(program) > 1:
        raise InputError(f"{path}: a capture is read as it is, with no arguments after it ({shlex.join(program[1:])}); "
                         "to capture a program, give it after '--'")
    return path


def _verdicts(report: Path | None):
    """--kernels REPORT: its verdicts' estimates, to join to the timeline's kernels (None: not given)."""
    if report is None:
        return None
    from ncuwrap.inputs import kind_of
    from ncuwrap.profile.kernel_estimates import read

    return read(report, kind_of)


@app.command(context_settings={"ignore_unknown_options": True})
def timeline(
    program: Optional[List[str]] = typer.Argument(None, help="The program and its arguments, after '--': ncuwrap timeline -- ./prog args. "
                                                  "Or a capture made before: a .sqlite export or .nsys-rep, or a PyTorch profiler trace "
                                                  "(.json, .json.gz).", show_default=False),
    output: Output = None,
    force: Replace = False,
    nsys_path: NsysPath = None,
    rules: Rules = None,
    extend: Extend = False,
    fmt: OutputFormat = Format.table,
    names: Names = "short",
    ranks: Optional[Path] = typer.Option(None, "--ranks", help="Diagnose a multi-GPU run: the folder holding one nsys capture per rank "
                                         "(rank0.sqlite, rank1.sqlite... see docs/ranks.md for the naming rule)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="With --ranks: analyse on the Dask cluster at this address "
                                            "(its workers must see the files) instead of a local cluster."),
    workers: Optional[int] = typer.Option(None, "--workers", min=0, help="With --ranks: worker processes of the local Dask cluster "
                                          "(default: chosen by the captures' size and the cores, said in the output: none for captures too small "
                                          "to pay for a cluster's start; 0: no Dask, one capture after the other)."),
    step_range: StepRange = None,
    warmup: Warmup = None,
    steps: Steps = StepsFind.auto,
    allow_mixed: bool = typer.Option(False, "--allow-mixed", help="With --ranks: accept captures of different programs or started "
                                     "far apart (different runs)."),
    per_rank: bool = typer.Option(False, "--per-rank", help="Capture one report per rank of a torchrun launch (-- torchrun ...), "
                                  "then diagnose them as --ranks does."),
    kernels: Optional[Path] = typer.Option(None, "--kernels", metavar="REPORT",
                                           help="Join this kernel report's verdicts (a .ncu-rep, an ncu CSV export, or a run folder of "
                                                "'ncuwrap profile --top') to the timeline's kernels, by name, grid and block: the what-if "
                                                "predicts the step with those kernels as fast as their verdicts estimate (faster_kernel)."),
    nsys_trace: NsysTrace = None,
    nsys_args: NsysArgs = None,
    quiet: Quiet = False,
) -> None:
    """Capture a program with Nsight Systems (CUDA, NVTX, OS runtime) and say what limits it end to end:
    kernels, host<->device transfers, or launch and synchronization overhead.

    Writes timeline.nsys-rep, timeline.sqlite, timeline.json, timeline.html and timeline.log into the run folder
    (-o DIR). Given a .sqlite (or .nsys-rep, or a PyTorch profiler trace .json) instead of a program, diagnoses
    that capture, and writes only the -o FILE given.
    With --ranks DIR, diagnoses one capture per rank of a multi-GPU run: which rank is slow, and whether
    the run is compute-, communication-, input- or launch-bound.
    """
    from ncuwrap.timeline.capture import capture, default_run_dir
    from ncuwrap.timeline.nsysrep import NsysOptions

    program = list(program or [])
    nsys_options = NsysOptions(trace=nsys_trace, extra=tuple(nsys_args or ())).check()
    chosen = rules_choice(rules, extend)
    how = timeline_options(step_range, warmup, steps, nsys_path)

    def no_capture_options() -> None:
        """Reading captures made before: the nsys options would go unused, so they are refused."""
        flag = nsys_options.first_flag
        if flag:
            raise InputError(f"{flag}: applies when ncuwrap runs nsys (ncuwrap timeline [--per-rank] -- PROGRAM); "
                             f"a capture made before is read as it is: drop {flag}")

    if kernels is not None and (ranks is not None or per_rank):
        raise InputError("--kernels joins one report's verdicts to one timeline; a multi-GPU run's ranks (--ranks, --per-rank) take none: "
                         "drop --kernels, or give one rank's capture")
    if ranks is not None:
        no_capture_options()
        if program:
            raise InputError(f"--ranks DIR analyses captures made before: give no program ({shlex.join(program)}) with it; "
                             "to capture one report per rank, run 'ncuwrap timeline --per-rank -- torchrun ...'")
        from ncuwrap.timeline.ranks.diagnosis import diagnose_ranks

        check_output(output, ranks, rules, force=force)
        try:
            result = diagnose_ranks(ranks, rules=chosen, timeline=how, scheduler=scheduler, workers=workers, allow_mixed=allow_mixed)
        except KeyboardInterrupt:
            # typer turns it into exit 130 with nothing said: the one line is said here
            typer.echo("ncuwrap: interrupted: the analysis was stopped (its workers and their folder too)", err=True)
            raise
        emit(result, fmt, output, force=force, inputs=(ranks, rules))
        return
    if per_rank:
        from ncuwrap.timeline.ranks.capture import capture_ranks
        from ncuwrap.timeline.ranks.diagnosis import diagnose_ranks

        run_dir = output or default_run_dir()
        folder = capture_ranks(program, run_dir, nsys=nsys_path, force=force, options=nsys_options,
                               started=lambda argv: typer.echo(f"nsys: capturing each rank: {terminal(shlex.join(argv))} ...", err=True))
        typer.echo(f"run folder: {terminal(folder)}", err=True)
        emit(diagnose_ranks(folder, rules=chosen, timeline=how, scheduler=scheduler, workers=workers, allow_mixed=allow_mixed), fmt, None)
        return
    if scheduler is not None or workers is not None or allow_mixed:
        raise InputError("--scheduler, --workers and --allow-mixed apply to --ranks DIR only; "
                         "give the folder of rank captures with --ranks")
    if not program:
        raise InputError("no program given; run 'ncuwrap timeline -- ./program args' or 'ncuwrap timeline --ranks DIR'")
    path = capture_file(program)
    if path is not None:
        from ncuwrap.timeline.diagnosis import diagnose_timeline

        no_capture_options()
        check_output(output, path, rules, kernels, force=force)
        with shown(quiet):  # a capture made before, read here (a program captured prints its own output: no line over it)
            diagnosis = diagnose_timeline(path, chosen, how, kernels=_verdicts(kernels))
        emit(diagnosis, fmt, output, force=force, inputs=(path, rules, kernels), names=names)
        return
    run_dir = output or default_run_dir()
    verdicts = _verdicts(kernels)  # a bad report is said before the program runs
    result = capture(list(program), run_dir, force=force, rules=chosen, options=nsys_options, timeline=how, kernels=verdicts,
                     started=lambda argv: typer.echo(f"nsys: capturing {terminal(shlex.join(program))} ...", err=True))
    documents = write_timeline_documents(result.diagnosis, result.run_dir)
    written = [result.report, result.sqlite, *documents, result.log]
    typer.echo(f"run folder: {terminal(result.run_dir)} ({terminal(', '.join(p.name for p in written))})", err=True)
    emit(result.diagnosis, fmt, None, names=names)
