"""``ncuwrap diagnose``: verdicts for every kernel of a report (or a timeline)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ncuwrap.cli.root import app
from ncuwrap.cli.options import (Kernel, LaunchCount, LaunchSkip, Names, Ncu, NsysPath, Output, OutputFormat, Process, Quiet, Replace,
                                 Rules, Extend, launch_selection, rules_choice, timeline_options)
from ncuwrap.cli.output import check_output, emit
from ncuwrap.cli.progress import shown
from ncuwrap.render import Format


@app.command()
def diagnose(
    report: Optional[Path] = typer.Argument(None,
                                            help="A .ncu-rep, an ncu CSV export (--page raw or details), a run folder of 'ncuwrap profile', an nsys "
                                                 ".nsys-rep/.sqlite, or a PyTorch profiler trace (.json). Default: a sample H200 report shipped with ncuwrap."),
    rules: Rules = None,
    extend: Extend = False,
    kernel: Kernel = None,
    launch_skip: LaunchSkip = None,
    launch_count: LaunchCount = None,
    process: Process = None,
    fmt: OutputFormat = Format.table,
    names: Names = "short",
    output: Output = None,
    force: Replace = False,
    ncu: Ncu = None,
    nsys: NsysPath = None,
    source_page: Optional[Path] = typer.Option(None, "--source-page",
                                               help="Per-line counters for a CSV export: the source page of the same report ('ncu --import R --csv --page "
                                                    "source --print-source cuda,sass', or sass for SASS only), so each finding names its line (a .ncu-rep with "
                                                    "SourceCounters carries them already)."),
    ncu_rules: Optional[Path] = typer.Option(None, "--ncu-rules",
                                             help="Show Nsight Compute's own rule results from this .ncu-rep or '--page details' CSV of the same report beside "
                                                  "the findings (a .ncu-rep or details CSV given as REPORT carries them already)."),
    quiet: Quiet = False,
) -> None:
    """Diagnose each kernel: compute-, memory- or latency-bound, the limiting unit, causes, advice."""
    from ncuwrap.api import diagnose as run
    from ncuwrap.profile.rediagnose import is_run_dir, run_dir_inputs
    from ncuwrap.core.resources import sample_report

    path = report or sample_report()
    # A run folder's inputs are the files in it that are read.
    inputs = (path, rules, ncu_rules, source_page, *(run_dir_inputs(path) if is_run_dir(path) else ()))
    check_output(output, *inputs, force=force)
    chosen = rules_choice(rules, extend)
    launches = launch_selection(kernel, launch_skip, launch_count, process)
    with shown(quiet):
        result = run(report, rules=chosen, launches=launches, timeline=timeline_options(nsys=nsys), source_page=source_page,
                     ncu_rules=ncu_rules, ncu=ncu)
    emit(result, fmt, output, force=force, inputs=inputs, names=names)
