"""``ncuwrap compare``: what a change did to each kernel, between two reports, or to a whole program,
between two timelines (a thin call of :func:`ncuwrap.api.compare_reports`)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from ncuwrap.cli.root import app
from ncuwrap.cli.options import (Extend, Kernel, Names, Ncu, NsysPath, Output, OutputFormat, Quiet, Replace, Rules, StepRange, Steps,
                                 StepsFind, Warmup, launch_selection, rules_choice, timeline_options)
from ncuwrap.cli.output import check_output, emit
from ncuwrap.cli.progress import shown
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
    rules: Rules = None,
    extend: Extend = False,
    kernel: Kernel = None,
    fmt: OutputFormat = Format.table,
    names: Names = "short",
    output: Output = None,
    force: Replace = False,
    ncu: Ncu = None,
    step_range: StepRange = None,
    warmup: Warmup = None,
    nsys: NsysPath = None,
    steps: Steps = StepsFind.auto,
    quiet: Quiet = False,
) -> None:
    """Pair kernels of two reports; show verdict changes, findings resolved and introduced, metric deltas, speedup.
    Given two nsys captures: the step's period, where its time went, launches, copies and each kernel's time, before and after."""
    from ncuwrap.api import compare_reports as run
    from ncuwrap.kernel.compare import parse_pair_option

    inputs = (before, after, before_timing, after_timing, rules)
    check_output(output, *inputs, force=force)
    with shown(quiet):
        result = run(before, after, rules=rules_choice(rules, extend), launches=launch_selection(kernel),
                     timeline=timeline_options(step_range, warmup, steps, nsys), pairs=[parse_pair_option(p) for p in pair or []],
                     before_timing=before_timing, after_timing=after_timing, threshold_pct=threshold,
                     fail_on_finding=fail_on_finding.value if fail_on_finding else None, ncu=ncu)
    emit(result, fmt, output, force=force, inputs=inputs, names=names)
    if fail_on_regression and result.regressions:
        for line in result.regressions:
            typer.echo(f"ncuwrap: regression: {one_line(line)}", err=True)
        raise typer.Exit(1)
