"""``ncuwrap compare``: what a change did to each kernel, between two reports, or to a whole program,
between two timelines (a thin call of :func:`ncuwrap.api.compare`)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from ncuwrap.cli import app
from ncuwrap.cli.output import NAMES_HELP, NamesStyle, check_output, emit
from ncuwrap.cli.progress import quiet_option, shown
from ncuwrap.cli.steps_option import StepsFind, steps_option
from ncuwrap.render import Format
from ncuwrap.core.terminal import one_line

# The choices of --fail-on-finding (ncuwrap.kernel.compare.FAIL_ON_FINDING_CHOICES).
FailOn = Enum("FailOn", {name: name for name in ("high", "medium", "low", "none")}, type=str)


@app.command()
def compare(
    before: Path = typer.Argument(..., help="The report before the change: a .ncu-rep, an ncu CSV export (--page raw or details), a run folder of "
                                  "'ncuwrap profile', or the JSON of "
                                  "'ncuwrap diagnose --format json' (ncuwrap.diagnosis/v2, v3 or v4), "
                                  "or an nsys capture (.sqlite, .sqlite.gz, .nsys-rep) to compare two timelines."),
    after: Path = typer.Argument(..., help="The report after the change, of the same family (kernel reports, or timelines)."),
    before_timing: Optional[Path] = typer.Option(None, "--before-timing",
                                                 help="Uninstrumented timings of BEFORE: the JSON of 'ncuwrap bench' (ncuwrap.bench/v1)."),
    after_timing: Optional[Path] = typer.Option(None, "--after-timing",
                                                help="Uninstrumented timings of AFTER (ncuwrap.bench/v1). With both, the real speedup is shown and gated on."),
    pair: Optional[List[str]] = typer.Option(None, "--pair", metavar="BEFORE_NAME=AFTER_NAME", help="Pair a renamed kernel (repeatable)."),
    fail_on_regression: bool = typer.Option(False, "--fail-on-regression",
                                            help="Exit 1 on a regression: a kernel more than --threshold % slower, or nothing paired. A HIGH finding "
                                                 "introduced counts too, unless the kernel got more than --threshold % faster (then it is reported, "
                                                 "not gated). Speed is judged by the bench medians with both timings given, else by ncu's "
                                                 "instrumented durations (a weaker signal: replayed, and under ncu's clock control)."),
    threshold: float = typer.Option(5.0, "--threshold", help="Change of time, in percent, that counts: slower by more is a regression, "
                                    "faster by more is a win whose introduced findings do not gate."),
    fail_on_finding: Optional[FailOn] = typer.Option(None, "--fail-on-finding",
                                                     help="An introduced finding of this severity or worse is a regression, however much "
                                                          "faster the kernel got; 'none': only slowdowns count."),
    rules: Optional[Path] = typer.Option(None, "--rules", help="Rules YAML replacing the bundled ones (used for both sides)."),
    extend: bool = typer.Option(False, "--extend", help="Add --rules to the bundled rules instead of replacing them."),
    kernel: Optional[str] = typer.Option(None, "--kernel", "-k", help="Only kernels whose name matches this regular expression (both sides)."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="Output format."),
    names: NamesStyle = typer.Option("short", "--names", help=NAMES_HELP),
    output: Optional[Path] = typer.Option(None, "--output", "-o",
                                          help="Write to this file instead of stdout (never an input; an existing file only with --force)."),
    force: bool = typer.Option(False, "--force", help="Replace the --output file if it exists."),
    ncu: Optional[str] = typer.Option(None, "--ncu", help="Path to ncu, whose extras/python is used when the ncu-report package is missing."),
    step_range: Optional[str] = typer.Option(None, "--step-range", help="Timelines: the NVTX range name (a regular expression) marking one "
                                             "iteration, as for 'ncuwrap timeline'."),
    warmup: Optional[int] = typer.Option(None, "--warmup", min=0, help="Timelines: how many leading steps of each capture are warm-up "
                                         "(default: detected)."),
    nsys: Optional[str] = typer.Option(None, "--nsys-path", help="Timelines: the nsys that exports a .nsys-rep to SQLite (default: nsys on PATH)."),
    steps: StepsFind = steps_option("Timelines: "),
    quiet: bool = quiet_option(),
) -> None:
    """Pair kernels of two reports; show verdict changes, findings resolved and introduced, metric deltas, speedup.
    Given two nsys captures: the step's period, where its time went, launches, copies and each kernel's time, before and after."""
    from ncuwrap.api import compare as run
    from ncuwrap.kernel.compare import parse_pair_option

    inputs = (before, after, before_timing, after_timing, rules)
    check_output(output, *inputs, force=force)
    with shown(quiet):
        result = run(before, after, rules=rules, extend=extend, kernel=kernel, ncu=ncu, pairs=[parse_pair_option(p) for p in pair or []],
                     before_timing=before_timing, after_timing=after_timing, threshold_pct=threshold,
                     fail_on_finding=fail_on_finding.value if fail_on_finding else None,
                     nsys=nsys, step_range=step_range, warmup=warmup, steps=steps.value)
    emit(result, fmt, output, force=force, inputs=inputs, names=names)
    if fail_on_regression and result.regressions:
        for line in result.regressions:
            typer.echo(f"ncuwrap: regression: {one_line(line)}", err=True)
        raise typer.Exit(1)
