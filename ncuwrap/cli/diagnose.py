"""``ncuwrap diagnose``: verdicts for every kernel of a report (or a timeline)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ncuwrap.cli import app
from ncuwrap.cli.output import NAMES_HELP, NamesStyle, check_output, emit
from ncuwrap.cli.progress import quiet_option, shown
from ncuwrap.render import Format


@app.command()
def diagnose(
    report: Optional[Path] = typer.Argument(None,
                                            help="A .ncu-rep, an ncu CSV export (--page raw or details), a run folder of 'ncuwrap profile', an nsys "
                                                 ".nsys-rep/.sqlite, or a PyTorch profiler trace (.json). Default: a sample H200 report shipped with ncuwrap."),
    rules: Optional[Path] = typer.Option(None, "--rules", help="Rules YAML replacing the bundled ones (see rules/reference.yaml)."),
    extend: bool = typer.Option(False, "--extend", help="Add --rules to the bundled rules instead of replacing them."),
    kernel: Optional[str] = typer.Option(None, "--kernel", "-k", "--kernel-name",
                                         help="Only kernels whose name matches this regular expression ('regex:' prefix accepted, as ncu's)."),
    launch_skip: int = typer.Option(0, "--launch-skip", "-s", help="Skip the first N launches that match -k and --process (counted as ncu counts them)."),
    launch_count: int = typer.Option(0, "--launch-count", "-c", help="Keep at most N launches that match -k and --process, after --launch-skip; 0 = all."),
    process: Optional[str] = typer.Option(None, "--process", help="Only launches of this process (its ID or name), where the report holds several."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="Output format."),
    names: NamesStyle = typer.Option("short", "--names", help=NAMES_HELP),
    output: Optional[Path] = typer.Option(None, "--output", "-o",
                                          help="Write to this file instead of stdout (never an input; an existing file only with --force)."),
    force: bool = typer.Option(False, "--force", help="Replace the --output file if it exists."),
    ncu: Optional[str] = typer.Option(None, "--ncu", help="Path to ncu, whose extras/python is used when the ncu-report package is missing."),
    nsys: Optional[str] = typer.Option(None, "--nsys-path", help="Path to nsys, used to export a .nsys-rep to SQLite (default: nsys on PATH)."),
    source_page: Optional[Path] = typer.Option(None, "--source-page",
                                               help="Per-line counters for a CSV export: the source page of the same report ('ncu --import R --csv --page "
                                                    "source --print-source cuda,sass', or sass for SASS only), so each finding names its line (a .ncu-rep with "
                                                    "SourceCounters carries them already)."),
    ncu_rules: Optional[Path] = typer.Option(None, "--ncu-rules",
                                             help="Show Nsight Compute's own rule results from this .ncu-rep or '--page details' CSV of the same report beside "
                                                  "the findings (a .ncu-rep or details CSV given as REPORT carries them already)."),
    quiet: bool = quiet_option(),
) -> None:
    """Diagnose each kernel: compute-, memory- or latency-bound, the limiting unit, causes, advice."""
    from ncuwrap.api import diagnose as run
    from ncuwrap.profile.rediagnose import is_run_dir, run_dir_inputs
    from ncuwrap.core.resources import sample_report

    path = report or sample_report()
    # A run folder's inputs are the files in it that are read.
    inputs = (path, rules, ncu_rules, source_page, *(run_dir_inputs(path) if is_run_dir(path) else ()))
    check_output(output, *inputs, force=force)
    with shown(quiet):
        result = run(report, rules=rules, extend=extend, kernel=kernel, launch_skip=launch_skip, launch_count=launch_count or None,
                     process=process, source_page=source_page, ncu_rules=ncu_rules, ncu=ncu, nsys=nsys)
    emit(result, fmt, output, force=force, inputs=inputs, names=names)
