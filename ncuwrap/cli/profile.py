"""``ncuwrap profile``: run a bundled benchmark or any program under ncu, then diagnose it (thin wrapper).

Progress goes to stderr (which kernel, which pass); the verdict goes to stdout in --format; the run
folder gets verdict.json and report.html (and with --nsys timeline.json and timeline.html) from here.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ncuwrap.cli.root import app
from ncuwrap.cli.options import (Arch, Extend, Kernel, LaunchCount, LaunchSkip, Names, Ncu, NsysArgs, NsysPath, NsysTrace, NthLaunch, OutputFormat,
                                 Output, Replace, Rules, Steps, StepsFind, launch_selection, rules_choice, timeline_options)
from ncuwrap.cli.output import emit, write_document
from ncuwrap.render import Format
from ncuwrap.render.escape import terminal

_TARGET_HELP = ("A bundled benchmark (family/variant, e.g. transpose/naive, or its kernel's name, e.g. transpose_naive; "
                "--list shows them) or, after '--', any program and its arguments: ncuwrap profile -- ./prog args.")
_TOP_HELP = ("Run the program under Nsight Systems first, rank its kernels (name and launch configuration) by total GPU "
             "time, then profile launch 2 of each of the top N with ncu (launch 1 if one ran once); the report gives the share "
             "of GPU time they cover and ranks them by share x estimated gain. Without nsys: the first launches, and a warning.")
_NVTX_HELP = ("Profile only launches inside (--nvtx-include) or outside (--nvtx-exclude) these NVTX ranges, ncu's syntax "
              "(e.g. 'train_step/', 'Domain@Range'); repeatable. ncu applies them only with NVTX support on: ncuwrap adds --nvtx.")
_NCU_ARG_HELP = ("Any other ncu argument, passed as it is just before the program; repeat it for each word "
                 "(--ncu-arg=--section --ncu-arg=MemoryWorkloadAnalysis). Options ncuwrap sets itself are refused.")
_SOURCE_HELP = ("Also collect ncu's SourceCounters section and the source files on disk (--import-source yes), so each finding "
                "names its source line and SASS (build your own code with -lineinfo; bundled benchmarks are). Measured on an H200: "
                "+2 replay passes a kernel (17 -> 19) and 3-30% more ncu wall time on the bundled benchmarks, 11-17% on PyTorch "
                "programs (docs/source-lines.md). --no-source leaves it out.")
_COLLECT_HELP = ("What ncu measures: targeted (default: the metrics the rules decide on and the report draws, 17 replay passes "
                 "per kernel on an H200, 19 with --source), basic (--set basic), full (--set full, 37-38 passes), or a comma list of ncu sections.")


_BENCH_HELP = ("A bundled benchmark: time its family uninstrumented ('ncuwrap bench': CUDA events, median over runs) and print the "
               "stop line: the profiled variant's effective bandwidth or FLOP/s against the measured copy ceiling or the library, "
               "and which variant goes further. Never from ncu's durations. Ignored for a program of your own.")


def write_documents(result, html: bool = True) -> list[Path]:
    """The run folder's rendered documents: verdict.json, report.html (``html``) and, with --nsys,
    timeline.json and timeline.html; profile.json then lists them."""
    from ncuwrap.cli.timeline import write_timeline_documents
    from ncuwrap.profile.rundir import RunDir

    rd = RunDir(result.run_dir)
    written = [write_document(result.diagnosis, Format.json, rd.verdict)]
    if html:
        written.append(write_document(result.diagnosis, Format.html, rd.html))
    if result.timeline is not None:
        written += write_timeline_documents(result.timeline, rd.path)
    rd.refresh_files()
    return written


def _parse_metrics(value: Optional[str]) -> tuple[str, ...]:
    return tuple(m.strip() for m in (value or "").split(",") if m.strip())


class _ScreenProgress:
    """Which kernel ncu replays and how far (a rich status line on a terminal, plain lines otherwise)."""

    def __init__(self, show_output: bool = False):
        self.show_output = show_output
        self.status = None
        self.console = None
        if sys.stderr.isatty():
            try:
                from rich.console import Console

                self.console = Console(stderr=True, highlight=False)
            except ImportError:  # rich comes with typer; plain lines otherwise
                self.console = None

    def _print(self, text: str) -> None:
        if self.console is not None:
            self.console.print(text, markup=False)
        else:
            typer.echo(text, err=True)

    def started(self, argv) -> None:
        if self.console is not None:
            self.status = self.console.status("ncu: starting the program ...")
            self.status.start()
        else:
            typer.echo("ncu: starting the program ...", err=True)

    def kernel(self, index: int, name: str, percent: int) -> None:
        if self.status is not None:
            self.status.update(f"ncu: replaying kernel {index + 1} ({name}): {percent}% of its passes")

    def kernel_done(self, index: int, name: str, passes) -> None:
        self._print(f"ncu: profiled kernel {index + 1} ({name}): {passes if passes is not None else '?'} passes")
        if self.status is not None:
            self.status.update("ncu: running the program ...")

    def output(self, stream: str, line: str) -> None:
        if self.show_output and not line.startswith("==PROF== Profiling"):
            self._print(f"  | {line}")

    def stage(self, text: str) -> None:
        self._print(text)

    def finished(self, run) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None


def _clocks(argv) -> str:
    control = argv[argv.index("--clock-control") + 1] if "--clock-control" in argv[:-1] else "base"
    return "clocks left alone: --clock-control none" if control == "none" else f"clocks locked by ncu: --clock-control {control}"


def _summary(result) -> list[str]:
    lines = []
    for launch in result.launches:
        passes = f"{launch.passes} passes" if launch.passes is not None else "passes unknown"
        lines.append(f"profiled {launch.kernel}: {launch.launch} ({passes})")
    collection = result.collection
    what = {"targeted": f"targeted: {len(collection.sections)} sections + {len(collection.metrics)} metrics",
            "sections": f"sections {','.join(collection.sections)}"}.get(collection.mode, f"{collection.mode} (--set {collection.set_name})")
    if collection.source:
        what += ", with SourceCounters and the sources on disk (--no-source leaves them out)"
    total = result.passes_total
    lines.append(f"ncu {result.ncu.version_string}: {total if total is not None else '?'} replay passes, "
                 f"{result.wall_s:.2f} s wall time (--collect {what}; {_clocks(result.argv)})")
    by_section: dict = {}
    by_cost: dict = {}
    for skipped in collection.skipped:
        if skipped.why:
            by_cost.setdefault(skipped.why, []).append(skipped.name)
        else:
            by_section.setdefault(skipped.section or "an unknown section", []).append(skipped.name)
    if by_section:
        parts = "; ".join(f"{', '.join(names)} (section {section})" for section, names in by_section.items())
        lines.append(f"not collected by targeted (only shown, not worth a section's extra passes; --collect full has them): {parts}")
    for why, names in by_cost.items():
        lines.append(f"not collected by targeted: {_names(names)}: {why}")
    for warning in result.warnings:
        lines.append(f"warning: {warning}")
    from ncuwrap.profile.rundir import BENCH, SOURCE_CSV, SOURCE_SASS_CSV

    pages = "".join(f"{name}, " for name in (SOURCE_CSV, SOURCE_SASS_CSV, BENCH) if (Path(result.run_dir) / name).is_file())
    lines.append(f"run folder: {terminal(result.run_dir)} (report.ncu-rep, report.raw.csv, {pages}verdict.json, report.html, "
                 f"commands.txt, environment.json, ncu.log, profile.json)")
    return lines


def _names(names: list[str]) -> str:
    """stall_long_scoreboard, stall_barrier, ... -> 'stall_* (19)'."""
    prefix = names[0].split("_")[0] + "_" if len(names) > 3 else ""
    if prefix and all(n.startswith(prefix) for n in names):
        return f"{prefix}* ({len(names)})"
    return ", ".join(names)


@app.command()
def profile(
    target: Optional[List[str]] = typer.Argument(None, help=_TARGET_HELP, show_default=False),
    kernel: Kernel = None,
    launch_skip: LaunchSkip = None,
    launch_count: LaunchCount = None,
    nth_launch: NthLaunch = None,
    collect: str = typer.Option("targeted", "--collect", help=_COLLECT_HELP),
    source: bool = typer.Option(True, "--source/--no-source", help=_SOURCE_HELP),
    metrics: Optional[str] = typer.Option(None, "--metrics", help="More ncu metrics to collect, comma separated (added to --collect)."),
    top: Optional[int] = typer.Option(None, "--top", help=_TOP_HELP, show_default=False, min=1, metavar="N"),
    nvtx_include: Optional[List[str]] = typer.Option(None, "--nvtx-include", help=_NVTX_HELP, show_default=False),
    nvtx_exclude: Optional[List[str]] = typer.Option(None, "--nvtx-exclude", help="See --nvtx-include.", show_default=False),
    replay_mode: Optional[str] = typer.Option(None, "--replay-mode", help="ncu's replay mode: kernel (ncu's default), application, range or app-range.",
                                              show_default=False),
    target_processes: Optional[str] = typer.Option(None, "--target-processes", help="all (ncu's default: child processes too) or application-only.",
                                                   show_default=False),
    cache_control: Optional[str] = typer.Option(None, "--cache-control", help="all (ncu's default: caches flushed before each replay pass) or none.",
                                                show_default=False),
    clock_control: str = typer.Option("none", "--clock-control", help="none (ncuwrap's default: clocks left alone) or base (ncu's default: locked to base)."),
    graph_profiling: Optional[str] = typer.Option(None, "--graph-profiling",
                                                  help="CUDA graphs: node (ncu's default: each kernel node alone) or graph (the whole graph as one result).",
                                                  show_default=False),
    ncu_args: Optional[List[str]] = typer.Option(None, "--ncu-arg", help=_NCU_ARG_HELP, show_default=False),
    bench: bool = typer.Option(True, "--bench/--no-bench", help=_BENCH_HELP),
    bench_json: Optional[Path] = typer.Option(None, "--bench-json",
                                              help="A bundled benchmark's stop line from this 'ncuwrap bench' JSON instead of timing the family now.",
                                              show_default=False),
    bench_runs: int = typer.Option(3, "--bench-runs", help="Process runs of the uninstrumented timing behind the stop line (median and spread across them).",
                                   min=1),
    nsys: bool = typer.Option(False, "--nsys", help="Also capture the program with Nsight Systems and diagnose its timeline."),
    steps: Steps = StepsFind.auto,
    nsys_trace: NsysTrace = None,
    nsys_args: NsysArgs = None,
    output: Output = None,
    force: Replace = False,
    ncu: Ncu = None,
    nsys_path: NsysPath = None,
    rules: Rules = None,
    extend: Extend = False,
    fmt: OutputFormat = Format.table,
    names: Names = "short",
    arch: Arch = None,
    show_output: bool = typer.Option(False, "--show-output", help="Echo what the program prints (it is always in RUN_DIR/ncu.log)."),
    list_targets: bool = typer.Option(False, "--list", help="List the bundled benchmarks that can be profiled, and exit."),
) -> None:
    """Profile a bundled benchmark or any program with Nsight Compute, then diagnose every profiled kernel.

    Which launch: ncu's --launch-skip/--launch-count count only launches matching -k; --nth-launch N
    profiles the Nth launch of each distinct kernel. The output says which launch each result was.
    """
    from ncuwrap.api import profile_run
    from ncuwrap.profile import targets
    from ncuwrap.profile.ncu_argv import NcuOptions
    from ncuwrap.timeline.nsysrep import NsysOptions
    from ncuwrap.render import render

    if list_targets:
        for name, kernel_re, lesson in targets.bundled_list():
            typer.echo(f"{name:34} -k {kernel_re:32} {lesson}")
        return
    run_dirs: list[Path] = []  # where the run goes, for the message after a Ctrl-C

    def before_build(name: str) -> None:
        typer.echo(f"nvcc: building {name} (cached after the first build) ...", err=True)

    try:
        ncu_options = NcuOptions(nvtx_include=tuple(nvtx_include or ()), nvtx_exclude=tuple(nvtx_exclude or ()), replay_mode=replay_mode,
                                 target_processes=target_processes, cache_control=cache_control, clock_control=clock_control,
                                 graph_profiling=graph_profiling, extra=tuple(ncu_args or ()))
        result = profile_run(target or [], progress=_ScreenProgress(show_output), on_build=before_build, on_run_dir=run_dirs.append,
                             output=output, force=force, launches=launch_selection(kernel, launch_skip, launch_count, nth_launch=nth_launch),
                             rules=rules_choice(rules, extend), timeline=timeline_options(steps=steps, nsys=nsys_path), collect=collect,
                             source=source, metrics=_parse_metrics(metrics), top=top, ncu_options=ncu_options, bench=bench,
                             bench_json=bench_json, bench_runs=bench_runs, nsys=nsys,
                             nsys_options=NsysOptions(trace=nsys_trace, extra=tuple(nsys_args or ())), ncu=ncu, arch=arch)
    except KeyboardInterrupt:
        if run_dirs:
            typer.echo(f"ncuwrap: interrupted: ncu and the program were stopped; kept what was written in {terminal(run_dirs[0])} "
                       f"(ncu.log, commands.txt, profile.json)", err=True)
        raise
    write_documents(result)
    for line in _summary(result):
        typer.echo(line, err=True)
    if fmt == Format.json and result.timeline is not None:
        from ncuwrap.profile.result import ProfileDocument

        emit(ProfileDocument(result.diagnosis, result.timeline), fmt, None, names=names)  # one JSON document, not two
        return
    emit(result.diagnosis, fmt, None, names=names)
    if result.timeline is not None:
        typer.echo(render(result.timeline, fmt, names=names.value), nl=False)
