"""One profiling run, start to end: check the options, run ncu into the run folder, diagnose what it
measured (and with --nsys capture the timeline too). Returns a :class:`ProfileResult`; it renders
nothing (verdict.json and report.html are written by :mod:`ncuwrap.cli.profile`).
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from ncuwrap.core import process
from ncuwrap.core.errors import NcuwrapError, ProfilerError, ToolNotFoundError
from ncuwrap.profile import rundir
from ncuwrap.profile.console import Progress
from ncuwrap.profile.failure import failure
from ncuwrap.profile.launches import LaunchFilter, launch_filter, profiled_launches
from ncuwrap.profile.collection import plan_collection
from ncuwrap.profile.ncu_argv import import_csv_argv, import_source_argv, ncu_argv
from ncuwrap.profile.ncu_tool import NcuTool, ncu_tool, run_ncu
from ncuwrap.profile.result import ProfileOptions, ProfileResult
from ncuwrap.profile.targets import Target
from ncuwrap.timeline.nsysrep import NsysOptions
from ncuwrap.timeline.options import TimelineOptions

# What profile.json says of the --nsys files (timeline.json and timeline.html are the CLI's to write).
TIMELINE_RECORD = {"report": "timeline.nsys-rep", "verdict": "timeline.json", "html": "timeline.html"}


def profile(target: Target, run_dir: str | Path, options: ProfileOptions = ProfileOptions(), progress: Progress | None = None,
            *, find_tool=ncu_tool) -> ProfileResult:
    """Run ``target`` under ncu into ``run_dir`` and diagnose it. Raises NcuwrapError (one line, with
    the fix) on failure and KeyboardInterrupt after a Ctrl-C; either way the run folder keeps the log,
    the commands and profile.json."""
    from ncuwrap.kernel.metrics import KERNEL  # here: numpy loads after the cheap checks

    from ncuwrap import ruleset

    rules = ruleset.chosen(options.rules, KERNEL)
    rd = rundir.RunDir(run_dir)
    record = _plan(target, rd, options, rules, find_tool)  # every check before the folder is touched
    nsys_for_top, fallback = _top_nsys(options) if options.top else (None, None)
    rd.prepare(force=options.force)
    top_run = None
    if nsys_for_top:
        top_run = _top(target, rd, options, record, nsys_for_top, progress)
    rd.write_json(rd.environment, rundir.environment(record["tool"]))
    build = target.build_command()
    if build:
        rd.add_command("build (cached by ncuwrap.bundled)", build)
    rd.add_command("profile", record["argv"])
    rd.record(status="running", **record)

    run = run_ncu(record["argv"], rd.log, progress)
    if run.interrupted:
        rd.record(status="interrupted", run=run, error="interrupted (Ctrl-C): ncu and the program were stopped", **record)
        raise KeyboardInterrupt
    error = failure(run, log=str(rd.log), known_kernels=target.kernels, kernel_filter=record["filt"].kernel,
                    report_exists=rd.report.exists())
    if error is None and not rd.report.exists():
        error = ProfilerError(f"ncu finished without writing {rd.report}; full log: {rd.log}")
    if error is not None:
        rd.record(status="failed", run=run, error=str(error), **record)
        raise error

    from ncuwrap.kernel.diagnosis import diagnose_profile

    loaded, warnings = _load(rd, record["tool"], record["argv"], options.export_csv, record["collection"].source)
    launches = profiled_launches(loaded.frame, run.kernels, record["filt"])
    diagnosis = diagnose_profile(loaded, rules)
    mangled: dict[int, str] = {}
    if top_run is not None:
        diagnosis, more, mangled = _cover(rd, record["tool"], diagnosis, top_run)
        warnings += more
    elif fallback:
        warnings.insert(0, fallback)
    result = ProfileResult(run_dir=rd.path, target=target, collection=record["collection"], filter=record["filt"],
                           argv=record["argv"], ncu=record["tool"], wall_s=run.wall_s, launches=launches,
                           diagnosis=diagnosis, warnings=[*run.warnings, *warnings])
    if top_run is not None:
        result.timeline = _top_timeline(rd, top_run, diagnosis, mangled)
    if target.bundled and (options.bench or options.bench_json):
        line, warning = _stop_line(rd, target, options, progress)
        result.diagnosis = replace(result.diagnosis, stop_line=line)
        result.warnings += [warning] if warning else []
    rd.record(status="ok", run=run, launches=launches, warnings=result.warnings, **record)
    if options.nsys and top_run is None:
        result.timeline = timeline(rd, target, progress, options=options.nsys_options, timeline_options=options.timeline)
        rd.record(status="ok", run=run, launches=launches, warnings=result.warnings, timeline=TIMELINE_RECORD, **record)
    return result


def _stop_line(rd: rundir.RunDir, target: Target, options: ProfileOptions, progress: Progress | None):
    """The bundled variant's stop line, from its family timed now without instruments (written to
    bench.json) or from --bench-json (copied there); (None, why) when it cannot be had: the verdicts
    stand without it."""
    from ncuwrap.bundled import report as bench_report
    from ncuwrap.bundled.stopline import stop_line

    try:
        if options.bench_json is not None:
            report, source = bench_report.read(options.bench_json), str(options.bench_json)
        else:
            from ncuwrap.bundled.bench import run_bench

            if progress is not None:
                progress.stage(f"bench: timing {target.benchmark}'s variants uninstrumented ({options.bench_runs} runs) for the stop line ...")
            rd.add_command("stop line (uninstrumented timings)", ["ncuwrap", "bench", target.benchmark, "--runs", str(options.bench_runs),
                                                                  "-o", str(rd.bench)])
            report, source = run_bench([target.benchmark], runs=options.bench_runs), f"{rundir.BENCH} (ncuwrap bench, measured for this run)"
        rd.write_json(rd.bench, report.to_json())
        return stop_line(report, target.benchmark, target.variant, source=source), None
    except NcuwrapError as exc:
        return None, f"no stop line (the verdicts stand without it): {exc}"


@dataclass(frozen=True)
class _TopRun:
    recorded: object  # ncuwrap.timeline.capture.Recorded: the capture, its steps found and analysed, not yet judged
    times: object  # ncuwrap.kernel.verdict.KernelTimes (ncuwrap.profile.kernel_times groups them)
    plan: object  # ncuwrap.profile.top.TopPlan


def _top_nsys(options: ProfileOptions) -> tuple[str | None, str | None]:
    """--top: the nsys to rank kernels with, or (None, why the first launches are profiled instead)."""
    launches = options.launches
    if launches.kernel or launches.launch_skip or launches.launch_count is not None or launches.nth_launch is not None:
        raise NcuwrapError("--top N picks the kernels itself: drop -k, --launch-skip, --launch-count and --nth-launch, "
                           "or drop --top to choose the launches yourself")
    try:
        from ncuwrap.timeline.nsysrep import find_nsys

        return str(find_nsys(options.timeline.nsys)), None
    except (ModuleNotFoundError, ToolNotFoundError) as exc:
        return None, (f"--top {options.top}: {exc}; profiled the program's first launches instead, without the "
                      f"ranking by GPU time (install Nsight Systems or pass --nsys-path)")


def _top(target: Target, rd: rundir.RunDir, options: ProfileOptions, record: dict, nsys: str, progress: Progress | None) -> _TopRun:
    """Run the program under nsys, rank its kernels, and point ncu's argv at the first ``options.top``."""
    from ncuwrap.profile import top
    from ncuwrap.timeline.capture import record as record_capture  # (record: this run's plan)

    def started(argv):
        rd.add_command("rank kernels by GPU time (nsys)", argv)
        if progress is not None:
            progress.stage(f"nsys: timing every kernel to pick the top {options.top} ...")

    # Judged once ncu's verdicts are known (_top_timeline): its steps are found and analysed here, once.
    recorded = record_capture(list(target.argv), rd.path, force=True, started=started, options=options.nsys_options,
                              timeline=replace(options.timeline, nsys=nsys))
    times, before = steady_times(recorded.analysed.data, recorded.analysed.steps, options.top)
    if not times.groups:
        raise ProfilerError(f"{recorded.sqlite}: nsys saw no kernel launch; check that the program runs work on the GPU "
                            f"(log: {recorded.log})")
    chosen = top.plan(times, options.top, before)
    filt = LaunchFilter(kernel=chosen.regex, nth_launch=chosen.nth_launch, origin="top", why=chosen.why())
    tool = record["tool"]
    argv = ncu_argv(target.argv, collect=record["collection"], output=rd.export_stem, ncu=tool.path, kernel=filt.kernel,
                    nth_launch=filt.nth_launch, force=options.force, extra=options.extra_ncu_args, kernel_name_base="mangled",
                    options=options.ncu_options)
    record.update(filt=filt, argv=argv)
    return _TopRun(recorded=recorded, times=times, plan=chosen)


def steady_times(data, found, top_n: int = 0):
    """The kernels to rank of ``data`` (a read capture): those launched in the steady steps ``found`` where the
    capture has steps (ncuwrap.timeline.measured.Analysed.steps; with each group's launches before them, so that
    ncu profiles a steady launch), else (None) all of them."""
    from ncuwrap.profile import top
    from ncuwrap.profile.kernel_times import kernel_times
    from ncuwrap.timeline import launches

    traced = top_n  # the groups ncu profiles get their op and Python line (a Python program's capture holds its ops)
    if found is None:
        return kernel_times(data.kernels, data=data, traced=traced), None
    steady = found.steady_data(data).kernels
    launched = launches.launch_time(data.kernels, launches.api_starts(data))
    early = kernel_times(data.kernels.rows(launched < found.steady_start_ns))
    return kernel_times(steady, "steady steps", data=data, traced=traced), {top.group_key(g): g.launches for g in early.groups}


def _top_timeline(rd: rundir.RunDir, top_run: _TopRun, diagnosis, mangled: dict[int, str]):
    """The ranking run's timeline judged with the verdicts ncu gave its top kernels joined to its kernels (the
    what-if's faster_kernel), as ``ncuwrap timeline CAPTURE --kernels RUN_DIR`` would: its steps, found and
    analysed before ncu ran, are replayed with them (as captured where it has no steps: no what-if to predict)."""
    from ncuwrap import ruleset
    from ncuwrap.core.rules_choice import RulesChoice
    from ncuwrap.profile.top import verdict_estimates
    from ncuwrap.timeline.diagnosis import diagnose_analysed
    from ncuwrap.timeline.metrics import TIMELINE

    return diagnose_analysed(top_run.recorded.analysed, ruleset.chosen(RulesChoice(), TIMELINE),
                             kernels=verdict_estimates(diagnosis, mangled, str(rd.report)))


def _cover(rd: rundir.RunDir, tool: NcuTool, diagnosis, top_run: _TopRun):
    """The diagnosis with its coverage of the program, the warnings on the way, and the results' mangled names."""
    from ncuwrap.profile import top

    argv = top.mangled_export_argv(rd.report, tool.path)
    text, _, _ = _export(rd, argv, rd.path / top.MANGLED_IDS, "result IDs and mangled names (to match the nsys ranking)")
    warnings = []
    mangled = top.read_mangled(text) if text else {}
    if not mangled:
        warnings.append("could not export the results' mangled names: kernels matched to the nsys ranking by name, grid and block")
    cov = top.coverage(diagnosis.kernels, top_run.plan, top_run.times, mangled, str(top_run.recorded.sqlite))
    if cov.missed:
        names = ", ".join(g.name for g in cov.missed)
        warnings.append(f"ncu profiled no launch {top_run.plan.nth_launch} of {names} (fewer launches under ncu?)")
    return replace(diagnosis, coverage=cov), warnings, mangled


def _plan(target: Target, rd: rundir.RunDir, options: ProfileOptions, rules, find_tool) -> dict:
    """What to collect, which launches, which ncu, the exact argv: the checks that need no run folder."""
    from ncuwrap.profile.top import OP_LIMIT_METRICS

    # --top: the counters the timeline's op limits are checked against, beside the user's --metrics.
    extra = (*options.metrics, *OP_LIMIT_METRICS) if options.top else options.metrics
    collection = plan_collection(options.collect, rules, extra, source=options.source)
    filt = launch_filter(target, options.launches)
    options.nsys_options.check()
    tool = find_tool(options.ncu)
    if options.nsys:  # a missing nsys fails now, not after the ncu run
        try:
            from ncuwrap.timeline.nsysrep import find_nsys
        except ModuleNotFoundError:
            pass  # timeline() says what is missing
        else:
            find_nsys(options.timeline.nsys)
    argv = ncu_argv(target.argv, collect=collection, output=rd.export_stem, ncu=tool.path, kernel=filt.kernel,
                    launch_skip=filt.launch_skip, launch_count=filt.launch_count, nth_launch=filt.nth_launch,
                    force=options.force, extra=options.extra_ncu_args, options=options.ncu_options)
    return dict(target=target, collection=collection, filt=filt, tool=tool, argv=argv)


def _load(rd: rundir.RunDir, tool: NcuTool, argv: list[str], want_csv: bool, source: bool = False):
    """The report to diagnose, and the warnings on the way.

    ncu's own CSV export of the report is diagnosed when it can be had: ncu is at hand here, and its
    export does not depend on the ncu_report Python module matching this Python (on the lent H200
    that module crashed the interpreter). The .ncu-rep stays the artifact; the CSV gives identical verdicts.
    """
    from ncuwrap.kernel.reading import load

    csv_warning = export_csv(rd, tool) if want_csv else "CSV export not requested"
    if csv_warning is None:
        loaded = load_raw_csv(rd, tool.version_string, shlex.join(argv))
        return loaded, _source_pages(rd, tool, loaded) if source else []
    return load(rd.report, ncu=tool.path), [csv_warning] if want_csv else []


def load_raw_csv(rd: rundir.RunDir, ncu_version: str | None, command_line: str | None, metrics=None):
    """The run folder's raw CSV export, read as its report: ncu's raw page has neither the command line
    nor the version, which the run knows (``metrics``: only those columns, see ingest.load)."""
    from ncuwrap.kernel.reading import load

    loaded = load(rd.raw_csv, metrics=metrics)
    loaded.source = replace(loaded.source, path=str(rd.report), kind="ncu-rep", ncu_version=ncu_version, command_line=command_line)
    return loaded


def attach_source_page(loaded, path: Path) -> bool:
    """Add a source page's per-instruction counters to ``loaded`` (a page read first keeps its launches:
    the cuda,sass form before the SASS form); True once every launch has them. InputError when the
    page is not of this report."""
    from ncuwrap.kernel.reading import source_page

    found, gaps = source_page(path, loaded)
    loaded.sources = {**found, **loaded.sources}
    loaded.source_gaps = {k: v for k, v in {**loaded.source_gaps, **gaps}.items() if k not in loaded.sources}
    return len(loaded.sources) == len(loaded.frame)


def _source_pages(rd: rundir.RunDir, tool: NcuTool, loaded) -> list[str]:
    """Attach the report's per-instruction counters from its source page (the raw page has none):
    the cuda,sass form for kernels with line information, the SASS form for the rest. A failed
    export is a warning: the verdicts stand without lines."""
    from ncuwrap.core.errors import InputError

    warnings: list[str] = []
    for path, lines in ((rd.source_csv, True), (rd.source_sass_csv, False)):
        argv = import_source_argv(rd.report, tool.path, lines=lines)
        text, failed, _ = _export(rd, argv, path, f"source page export ({'cuda,sass' if lines else 'sass'})", empty_ok=True)
        if failed:
            warnings.append(f"source page export failed ({failed}); findings are not pointed at lines: {shlex.join(argv)}")
            continue
        if only_notes(text):
            continue
        try:
            complete = attach_source_page(loaded, path)
        except InputError as exc:
            warnings.append(f"source page not used: {exc}")
            continue
        if lines and complete:
            break  # every launch has its lines: the SASS form adds nothing
    return warnings


def only_notes(page: str | None) -> bool:
    """An empty source page (no launch has per-instruction counters), or one of ncu's notes alone that
    no kernel has line information (cuBLAS's): the SASS form, exported next, has what there is."""
    return not page or all(not line.strip() or line.startswith("==") for line in page.splitlines())


def export_csv(rd: rundir.RunDir, tool: NcuTool) -> str | None:
    """Write report.raw.csv; a failure is a warning (the report itself is what matters)."""
    argv = import_csv_argv(rd.report, tool.path)
    _, failed, raised = _export(rd, argv, rd.raw_csv, "raw CSV export")
    if raised:
        return f"raw CSV export failed ({failed}); the report is complete: re-export it with: {' '.join(argv)}"
    if failed:
        return f"raw CSV export failed ({failed}); the report is complete"
    return None


def _export(rd: rundir.RunDir, argv: list[str], path: Path, what: str, empty_ok: bool = False) -> tuple[str | None, str | None, bool]:
    """Run an ncu export whose standard output goes to ``path`` in the run folder (recorded in
    commands.txt): (its text, None, False), or (None, why it failed, whether ncu could not even run).
    ``empty_ok``: an export that succeeds with nothing to say writes no file and is no failure."""
    rd.add_command(what, argv, stdout_to=str(path))
    try:
        done = subprocess.run(argv, capture_output=True, timeout=600, env=process.environment(), **process.TOOL_TEXT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, str(exc), True
    if done.returncode == 0 and not done.stdout.strip() and empty_ok:
        return "", None, False
    if done.returncode != 0 or not done.stdout.strip():
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return None, detail[0], False
    rd.write_text(path, done.stdout)
    return done.stdout, None, False


def timeline(rd: rundir.RunDir, target: Target, progress: Progress | None = None, *,
             options: NsysOptions | None = None, timeline_options: TimelineOptions = TimelineOptions()):
    """--nsys: capture the same command with Nsight Systems (``timeline_options.nsys``) into the run folder and
    diagnose its timeline, its steps found as ``timeline_options`` say (:mod:`ncuwrap.timeline.capture` writes the capture, its
    export and log); ``options`` are passed on to nsys."""
    try:
        from ncuwrap.timeline.capture import capture
    except ModuleNotFoundError as exc:
        raise ToolNotFoundError(f"--nsys needs ncuwrap's timeline support, which this installation lacks ({exc.name}); "
                                "reinstall ncuwrap or profile without --nsys") from None

    def started(argv):
        rd.add_command("timeline (nsys)", argv)
        if progress is not None:
            progress.stage("nsys: capturing the program's timeline ...")

    # The run folder is this run's (checked, or cleared with --force, before ncu ran): capture may
    # replace its timeline files.
    return capture(list(target.argv), rd.path, force=True, started=started, options=options, timeline=timeline_options).diagnosis
