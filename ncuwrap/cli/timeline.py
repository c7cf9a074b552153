"""``ncuwrap timeline -- ./program args``: capture a program with Nsight Systems and diagnose its
timeline (thin wrapper over :mod:`ncuwrap.timeline.capture`).

The verdict goes to stdout in --format; where the files went goes to stderr.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import List, Optional

import typer

from ncuwrap.cli import app
from ncuwrap.cli.output import emit, write_document
from ncuwrap.render import Format

def write_timeline_documents(diagnosis, run_dir: Path) -> list[Path]:
    """timeline.json and timeline.html of ``diagnosis`` into ``run_dir`` (also for ``profile --nsys``)."""
    from ncuwrap.timeline.capture import HTML, VERDICT

    return [write_document(diagnosis, Format.json, run_dir / VERDICT), write_document(diagnosis, Format.html, run_dir / HTML)]


@app.command(context_settings={"ignore_unknown_options": True})
def timeline(
    program: List[str] = typer.Argument(..., help="The program and its arguments, after '--': ncuwrap timeline -- ./prog args", show_default=False),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Run folder (default: ncuwrap-runs/timeline-<time>). Never overwritten without --force."),
    force: bool = typer.Option(False, "--force", help="Replace the timeline files of an existing run folder."),
    nsys_path: Optional[str] = typer.Option(None, "--nsys-path", help="The nsys to run (default: nsys on PATH)."),
    rules: Optional[Path] = typer.Option(None, "--rules", help="Timeline rules YAML replacing the bundled ones (see rules/timeline.yaml)."),
    extend: bool = typer.Option(False, "--extend", help="Add --rules to the bundled timeline rules instead of replacing them."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="Output format of the verdict printed at the end."),
) -> None:
    """Capture a program with Nsight Systems (CUDA, NVTX, OS runtime) and say what limits it end to end:
    kernels, host<->device transfers, or launch and synchronization overhead.

    Writes timeline.nsys-rep, timeline.sqlite, timeline.json, timeline.html and timeline.log into the run folder.
    """
    from ncuwrap.timeline.capture import capture, default_run_dir

    run_dir = output or default_run_dir()
    result = capture(list(program), run_dir, nsys=nsys_path, force=force, rules_path=rules, extend=extend,
                     started=lambda argv: typer.echo(f"nsys: capturing {shlex.join(program)} ...", err=True))
    documents = write_timeline_documents(result.diagnosis, result.run_dir)
    written = [result.report, result.sqlite, *documents, result.log]
    typer.echo(f"run folder: {result.run_dir} ({', '.join(p.name for p in written)})", err=True)
    emit(result.diagnosis, fmt, None)
