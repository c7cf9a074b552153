"""The Python API: what the commands do, as functions returning the typed results.

    >>> import ncuwrap
    >>> d = ncuwrap.diagnose("report.ncu-rep")        # a Diagnosis (a TimelineDiagnosis for an nsys capture)
    >>> d                                              # one line in a terminal; the HTML report in a notebook
    >>> d.to_frame()                                   # pandas: one row per launch
    >>> ncuwrap.compare_reports("before.ncu-rep", "after.ncu-rep").to_frame()   # one row per kernel pair
    >>> ncuwrap.compare_reports("eager.sqlite", "graphs.sqlite").speedup         # two timelines: per step
    >>> ncuwrap.diagnose_timeline("run.sqlite").to_frame()                       # one row per step
    >>> ncuwrap.diagnose_ranks("captures/").to_frame()                           # one row per rank
    >>> ncuwrap.profile_program(["./my_app", "--iters", "10"])                   # ncu on a GPU, then diagnose
    >>> print(ncuwrap.render_result(d, "markdown"))

Bad input raises :class:`ncuwrap.core.errors.InputError` (its message names the file and the fix), as the
commands' one-line errors do. The commands are a thin layer over these functions.

The names are verbs that no module of the package has (issue 40: no callable modules; docs/api.md says
why). The package's earlier short names (``compare``, ``timeline``, ``ranks``, ``render``) are no aliases:
asked of ``ncuwrap``, they say which function to call.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ncuwrap.core import display
from ncuwrap.core.errors import InputError, OptionError
from ncuwrap.core.launch_selection import LaunchSelection
from ncuwrap.render import Format
from ncuwrap.render import render as _render
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.timeline.options import TimelineOptions

if TYPE_CHECKING:  # profile_program's: imported when it runs (yaml and numpy)
    from ncuwrap.profile.ncu_argv import NcuOptions
    from ncuwrap.timeline.nsysrep import NsysOptions

# The options the functions take, one value each (a notebook writes ncuwrap.RulesChoice("my.yaml")).
OPTIONS = ("RulesChoice", "LaunchSelection", "TimelineOptions")
__all__ = ["diagnose", "compare_reports", "diagnose_timeline", "diagnose_ranks", "profile_program", "render_result", *OPTIONS]

NAMES = ("short", "function", "demangled")


def render_result(result, fmt: str | Format = "table", *, width: int | None = None, names: str = "short", color: bool = False) -> str:
    """A result as the commands print it.

    Args:
        result: what :func:`diagnose`, :func:`compare_reports`, :func:`diagnose_timeline`,
            :func:`diagnose_ranks` or :func:`profile_program` returned.
        fmt: ``"table"`` (terminal text), ``"json"`` (the versioned document), ``"markdown"`` (for a pull
            request comment) or ``"html"`` (a self-contained page).
        width: the table's width in columns (default: the terminal's, else 100).
        names: kernel names as ``"short"`` (default), ``"function"`` (with template arguments) or
            ``"demangled"`` (the whole signature), as the commands' ``--names``.
        color: colour the table with terminal escape sequences.

    Returns:
        The text the command prints, newline at the end.
    """
    fmt = Format(fmt)
    if names not in NAMES:
        raise OptionError(f"names={names!r}: expected one of {', '.join(NAMES)}")
    return _render(result, fmt, width=width, names=names, color=color)  # the registry says what has no such form


display.use(lambda result: _render(result, Format.html))


def _is_timeline(path: Path) -> bool:
    from ncuwrap.inputs import kind_of

    return path.is_file() and kind_of(path) == "timeline"


def diagnose(report: str | Path | None = None, *, rules: RulesChoice | None = None, launches: LaunchSelection | None = None,
             timeline: TimelineOptions | None = None, source_page: str | Path | None = None, ncu_rules: str | Path | None = None,
             ncu: str | None = None):
    """``ncuwrap diagnose``: the verdict of every kernel of a report, or of a timeline as a whole.

        >>> ncuwrap.diagnose("report.ncu-rep", rules=RulesChoice("mine.yaml", extend=True),
        ...                  launches=LaunchSelection(kernel="gemm", launch_count=2))

    Args:
        report: a ``.ncu-rep`` (or ``.ncu-rep.gz``), an ncu CSV export (``--page raw`` or ``details``), a
            run folder of ``ncuwrap profile``, a diagnosis JSON document, an nsys capture (``.nsys-rep``,
            ``.sqlite``, ``.sqlite.gz``) or a PyTorch profiler trace (``.json``, ``.json.gz``). None: the
            sample H200 report shipped with ncuwrap.
        rules: the rules (``--rules FILE [--extend]``; None: the bundled rules of the report's kind).
        launches: a kernel report's launches to keep (``-k``, ``--launch-skip``, ``--launch-count``,
            ``--process``), counted as ncu counts them (None: all).
        timeline: for a timeline, how it is read and cut into steps, as :func:`diagnose_timeline`.
        source_page: a CSV export's source page, so each finding names its source line.
        ncu_rules: Nsight Compute's own rule results (a ``.ncu-rep`` or ``--page details`` CSV of the same
            report) beside a raw export's findings.
        ncu: the ncu whose ``extras/python`` reads a ``.ncu-rep`` when the ncu-report package is missing.

    Returns:
        A :class:`~ncuwrap.kernel.verdict.Diagnosis` for a kernel report, a
        :class:`~ncuwrap.timeline.verdict.TimelineDiagnosis` for a timeline.

    Raises:
        ncuwrap.core.errors.InputError: a missing or unreadable file, or options that do not apply to it.
    """
    from ncuwrap.core.resources import sample_report

    rules, launches, timeline = rules or RulesChoice(), launches or LaunchSelection(), timeline or TimelineOptions()
    path = Path(report) if report is not None else sample_report()
    if _is_timeline(path):
        if launches.flags or ncu_rules or source_page:
            raise InputError(f"{path}: --kernel, --launch-skip, --launch-count, --process, --ncu-rules and --source-page apply to Nsight Compute reports; "
                             "a timeline is diagnosed as a whole")
        return diagnose_timeline(path, rules=rules, timeline=timeline)
    if timeline.flags:
        raise InputError(f"{path}: --step-range, --warmup and --steps apply to nsys captures (timelines); this is a kernel report")
    if launches.nth_launch is not None:
        raise InputError(f"{path}: --nth-launch picks the launches ncu profiles ('ncuwrap profile'); a report's are kept with "
                         "--kernel, --launch-skip and --launch-count")
    from ncuwrap.profile.rediagnose import diagnose_run_dir, is_run_dir

    if is_run_dir(path):
        if ncu_rules or source_page:
            raise InputError(f"{path}: a run folder brings its own source page and rules results; drop --ncu-rules and --source-page")
        return diagnose_run_dir(path, rules, ncu=ncu, select=launches)
    # The rules first (a bad rules file is said before any work), then the report's reader is started
    # (a .ncu-rep: NVIDIA's reader in a child process) while the diagnosis's modules, pandas among
    # them, are imported: the two overlap (what that saves: docs/scale.md, figures behind the code).
    from ncuwrap.kernel import reading as ingest, metrics

    from ncuwrap import ruleset

    rule_set = ruleset.chosen(rules, metrics.KERNEL)
    started = (rule_set, ingest.start(path, ncu=ncu, metrics=metrics.report_metrics(rule_set)))
    from ncuwrap.kernel.diagnosis import diagnose as run

    label = None if report is not None else f"ncuwrap:samples/{path.name}"
    return run(path, rules, ncu=ncu, label=label, ncu_rules=ncu_rules, select=launches, source_page=source_page, started=started)


def compare_reports(before: str | Path, after: str | Path, *, rules: RulesChoice | None = None, launches: LaunchSelection | None = None,
                    timeline: TimelineOptions | None = None, pairs: Sequence[tuple[str, str]] = (),
                    before_timing: str | Path | None = None, after_timing: str | Path | None = None, threshold_pct: float = 5.0,
                    fail_on_finding: str | None = None, ncu: str | None = None):
    """``ncuwrap compare``: two kernel reports, or two timelines, before and after a change.

        >>> ncuwrap.compare_reports("before.ncu-rep", "after.ncu-rep", launches=LaunchSelection(kernel="gemm")).regressions

    Args:
        before, after: two kernel reports (as :func:`diagnose` reads, or its JSON documents), or two nsys
            captures or PyTorch profiler traces.
        rules: the rules for both sides, as :func:`diagnose`.
        launches: kernel reports: the launches of both sides to compare (``-k``), as :func:`diagnose`.
        timeline: timelines: how both are read and cut into steps, as :func:`diagnose_timeline`.
        pairs: kernel reports: ``(before_name, after_name)`` pairs for renamed kernels.
        before_timing, after_timing: kernel reports: ``ncuwrap bench -o`` JSON files; with both, the real
            speedup is shown and gated on instead of ncu's instrumented durations.
        threshold_pct: a change of time that counts (%): slower by more is a regression.
        fail_on_finding: ``"high"``, ``"medium"`` or ``"low"``: an introduced finding of that severity or
            worse is a regression however much faster it got; ``"none"``: only slowdowns count.
        ncu: kernel reports: as :func:`diagnose`.

    Returns:
        A :class:`~ncuwrap.kernel.compare.CompareResult` (``.regressions`` is the gate) for kernel reports, a
        :class:`~ncuwrap.timeline.compare.TimelineCompare` (per step where both have steps) for timelines.
    """
    rules, launches, timeline = rules or RulesChoice(), launches or LaunchSelection(), timeline or TimelineOptions()
    before, after = Path(before), Path(after)
    timelines = [p for p in (before, after) if _is_timeline(p)]
    gate = {"threshold_pct": threshold_pct, "fail_on_finding": fail_on_finding}
    if timelines:
        other = next((p for p in (before, after) if p not in timelines), None)
        if other is not None:
            raise InputError(f"{other}: not an nsys capture, while {timelines[0]} is; compare two timelines (.sqlite, .sqlite.gz, "
                             ".nsys-rep) or two kernel reports")
        flag = next((f for f, given in (("--pair", pairs), ("--before-timing", before_timing), ("--after-timing", after_timing),
                                         *((f, True) for f in launches.flags), ("--ncu", ncu)) if given), None)
        if flag:
            raise InputError(f"{flag}: applies to kernel reports; two timelines are compared as wholes (drop {flag})")
        from ncuwrap.timeline.compare import compare_timeline_files

        return compare_timeline_files(before, after, rules, timeline=timeline, **gate)
    flag = next(iter((*timeline.flags, *(("--nsys-path",) if timeline.nsys else ()))), None)
    if flag:
        raise InputError(f"{flag}: applies to two nsys captures; {before} and {after} are kernel reports (drop {flag})")
    if launches.nth_launch is not None:
        raise InputError("--nth-launch picks the launches ncu profiles ('ncuwrap profile'); a report's are kept with "
                         "--kernel, --launch-skip and --launch-count")
    from ncuwrap.kernel.compare import compare_files
    from ncuwrap.profile.rediagnose import diagnose_run_dir, is_run_dir

    def run_folder(path: Path, rules: RulesChoice, **how):
        return diagnose_run_dir(path, rules, **how) if is_run_dir(path) else None

    return compare_files(before, after, rules, launches=launches, ncu=ncu, run_folder=run_folder, pairs=list(pairs),
                         before_timing=before_timing, after_timing=after_timing, **gate)


def diagnose_timeline(path: str | Path, *, rules: RulesChoice | None = None, timeline: TimelineOptions | None = None,
                      kernels=None):
    """``ncuwrap timeline FILE``: where a program's end-to-end time goes, from a capture made before.

        >>> ncuwrap.diagnose_timeline("run.sqlite", timeline=TimelineOptions(step_range="train_step", warmup=2))
        >>> ncuwrap.diagnose_timeline("top/timeline.sqlite", kernels="top")   # --kernels: profile --top's verdicts joined

    Args:
        path: an nsys capture (``.sqlite``, ``.sqlite.gz``, ``.nsys-rep``) or a PyTorch profiler trace
            (``.json``, ``.json.gz``).
        rules: as :func:`diagnose` (None: the bundled timeline rules).
        timeline: how the capture is read and cut into steps (None: the defaults): ``step_range``, the NVTX
            range (a regular expression) marking one iteration; ``warmup``, how many leading steps are
            warm-up (default: detected); ``steps``, ``"auto"`` (NVTX ranges, else the repetition of the
            launches), ``"marked"`` (NVTX ranges only) or ``"none"``; ``nsys``, the nsys that exports a
            ``.nsys-rep`` to SQLite (default: nsys on PATH).
        kernels: a kernel report's verdicts to join to the capture's kernels (``--kernels``): a ``.ncu-rep``,
            an ncu CSV export or a run folder of ``ncuwrap profile`` (its mangled names with it), or a
            :class:`~ncuwrap.kernel.verdict.Diagnosis` :func:`diagnose` returned. The what-if then predicts
            ``faster_kernel``: the step with those kernels as fast as their verdicts estimate.

    Returns:
        A :class:`~ncuwrap.timeline.verdict.TimelineDiagnosis`, judged by its steady steps where it
        has steps; ``.to_frame()`` has one row per step.
    """
    from ncuwrap.timeline.diagnosis import diagnose_timeline as run

    return run(path, rules or RulesChoice(), timeline or TimelineOptions(), kernels=_kernel_verdicts(kernels))


def _kernel_verdicts(kernels):
    """``kernels`` (a report, a run folder or a kernel Diagnosis) as the estimates a timeline joins; None as None."""
    if kernels is None:
        return None
    from ncuwrap.kernel.verdict import Diagnosis
    from ncuwrap.profile import kernel_estimates
    from ncuwrap.profile.top import verdict_estimates

    if isinstance(kernels, Diagnosis):
        return verdict_estimates(kernels, None, kernels.source.path)
    if not isinstance(kernels, (str, Path)):
        raise InputError(f"kernels={type(kernels).__name__}: expected a report's path, a run folder or a Diagnosis from ncuwrap.diagnose")
    from ncuwrap.inputs import kind_of

    return kernel_estimates.read(kernels, kind_of)


def diagnose_ranks(folder: str | Path, *, rules: RulesChoice | None = None, timeline: TimelineOptions | None = None,
                   workers: int | None = None, scheduler: str | None = None, allow_mixed: bool = False):
    """``ncuwrap timeline --ranks FOLDER``: a multi-GPU run from one capture per rank.

        >>> ncuwrap.diagnose_ranks("captures/", workers=0, timeline=TimelineOptions(steps="marked"))

    Args:
        folder: ``rank0.sqlite``, ``rank1.sqlite``... (or ``.sqlite.gz``, ``.nsys-rep``, PyTorch traces).
        rules, timeline: as :func:`diagnose_timeline` (None: the bundled rank rules; the defaults).
        workers: Dask workers analysing the captures (None: decided by their size; 0: in this process).
        scheduler: the address of an existing Dask scheduler to use instead.
        allow_mixed: accept captures of different nsys versions.

    Returns:
        A :class:`~ncuwrap.timeline.ranks.verdict.RanksDiagnosis`; ``.to_frame()`` has one row per rank.
    """
    from ncuwrap.timeline.ranks.diagnosis import diagnose_ranks as run

    return run(folder, rules=rules or RulesChoice(), timeline=timeline or TimelineOptions(), scheduler=scheduler, workers=workers,
               allow_mixed=allow_mixed)


def profile_program(target: str | Sequence[str], *, output: str | Path | None = None, force: bool = False,
                    launches: LaunchSelection | None = None, rules: RulesChoice | None = None, timeline: TimelineOptions | None = None,
                    collect: str = "targeted", source: bool = True, metrics: Sequence[str] = (), top: int | None = None,
                    ncu_options: NcuOptions | None = None, bench: bool = True, bench_json: str | Path | None = None, bench_runs: int = 3,
                    nsys: bool = False, nsys_options: NsysOptions | None = None, ncu: str | None = None, arch: str | None = None):
    """``ncuwrap profile``: run a program (or a bundled benchmark) under Nsight Compute on this machine's
    GPU, then diagnose every kernel it profiled.

        >>> ncuwrap.profile_program(["./my_app", "--iters", "10"], launches=LaunchSelection(kernel="gemm", launch_count=2))

    Args:
        target: a program's command line as a list (``["./my_app", "--iters", "10"]``), or the name of a
            bundled benchmark (``"transpose/naive"``; ``ncuwrap profile --list`` shows them), built with nvcc.
        output: the run folder (default: ``ncuwrap-runs/<target>-<time>``); an existing one only with ``force``.
        launches: which launches ncu profiles: ``kernel`` (a regular expression), ``launch_skip`` and
            ``launch_count`` (ncu's, counting only launches that match ``kernel``; defaults: a bundled
            benchmark's first timed launch and 1, for a program 0 and 10), or ``nth_launch``, the Nth launch
            of every distinct kernel.
        rules: as :func:`diagnose`; targeted collection measures what these rules read.
        timeline: with ``nsys`` or ``top``: the nsys to run and how the timeline's steps are found, as
            :func:`diagnose_timeline`.
        collect: ``"targeted"`` (the metrics the rules read), ``"basic"``, ``"full"`` or a comma list of
            ncu sections; ``metrics`` adds ncu metrics; ``source=False`` leaves SourceCounters out.
        top: run the program under nsys first and profile the N kernels with the most GPU time.
        ncu_options: passed on to ncu (:class:`~ncuwrap.profile.ncu_argv.NcuOptions`: NVTX filter, replay
            mode, target processes, cache and clock control, graph profiling, more arguments).
        bench, bench_json, bench_runs: a bundled benchmark's stop line: its family timed uninstrumented
            (``bench_runs`` process runs) or read from an ``ncuwrap bench -o`` file; ``bench=False``: none.
        nsys, nsys_options: also capture the timeline with nsys (in the run folder and in ``profile.json``),
            with nsys's trace list and more arguments (:class:`~ncuwrap.timeline.nsysrep.NsysOptions`).
        ncu: the ncu to run (default: ncu on PATH).
        arch: the GPU architecture a bundled benchmark is built for (default: detected).

    Returns:
        The :class:`~ncuwrap.kernel.verdict.Diagnosis` ``ncuwrap profile`` prints; the run folder holds the
        report, ncu's log, the exact commands and ``profile.json``.

    Raises:
        ncuwrap.core.errors.NcuwrapError: one line with the fix (ncu missing, no permission to the GPU's
        counters, the program failed, nothing matched ``kernel``...).
    """
    return profile_run(target, output=output, force=force, launches=launches, rules=rules, timeline=timeline, collect=collect,
                       source=source, metrics=metrics, top=top, ncu_options=ncu_options, bench=bench, bench_json=bench_json,
                       bench_runs=bench_runs, nsys=nsys, nsys_options=nsys_options, ncu=ncu, arch=arch).diagnosis


def profile_run(target: str | Sequence[str], *, progress=None, on_build=None, on_run_dir=None, output: str | Path | None = None,
                force: bool = False, launches: LaunchSelection | None = None, rules: RulesChoice | None = None,
                timeline: TimelineOptions | None = None, collect: str = "targeted", source: bool = True, metrics: Sequence[str] = (),
                top: int | None = None, ncu_options: NcuOptions | None = None, bench: bool = True, bench_json: str | Path | None = None,
                bench_runs: int = 3, nsys: bool = False, nsys_options: NsysOptions | None = None, ncu: str | None = None,
                arch: str | None = None):
    """:func:`profile_program`'s run, whole: a :class:`~ncuwrap.profile.result.ProfileResult` (the diagnosis,
    the timeline with ``nsys``, the run folder, ncu's argv, passes and wall time). ``progress`` follows ncu
    (a :class:`~ncuwrap.profile.pipeline.Progress`); ``on_build(name)`` is called before a bundled benchmark
    is built, ``on_run_dir(path)`` before the run starts. Every option is checked before anything is built or run."""
    from ncuwrap.profile import ProfileOptions, targets
    from ncuwrap.profile import profile as run
    from ncuwrap.profile.collection import plan_collection
    from ncuwrap.profile.launches import check_for_ncu
    from ncuwrap.profile.ncu_argv import NcuOptions
    from ncuwrap.profile.ncu_tool import ncu_tool
    from ncuwrap.profile.rundir import default_run_dir
    from ncuwrap.timeline.nsysrep import NsysOptions

    launches, rules, timeline = launches or LaunchSelection(), rules or RulesChoice(), timeline or TimelineOptions()
    # Cheap checks first: a bad collect or a missing ncu must not wait for an nvcc build.
    metrics = tuple(metrics)
    from ncuwrap.kernel.metrics import KERNEL

    from ncuwrap import ruleset

    plan_collection(collect, ruleset.chosen(rules, KERNEL), metrics, source=source)
    ncu_options = (ncu_options or NcuOptions()).check()
    nsys_options = (nsys_options or NsysOptions()).check()
    flag = nsys_options.first_flag or next(iter(timeline.flags), None)
    if flag and not (nsys or top):  # not silently unused
        raise InputError(f"{flag}: ncuwrap runs nsys only with --nsys or --top; add one of them, or drop {flag}")
    check_for_ncu(launches)

    def before_build(name: str) -> None:
        ncu_tool(ncu)  # a missing ncu fails before nvcc runs
        if on_build is not None:
            on_build(name)

    bench_json = Path(bench_json) if bench_json is not None else None
    if bench_json is not None:  # a bad file fails before the build and the run
        from ncuwrap.bundled.report import read as read_bench

        read_bench(bench_json)
    resolved = targets.resolve([target] if isinstance(target, (str, Path)) else list(target), arch=arch, on_build=before_build)
    if bench_json is not None and not resolved.bundled:
        raise InputError(f"--bench-json {bench_json}: a stop line is drawn for a bundled benchmark only; drop --bench-json for a program of your own")
    run_dir = Path(output) if output is not None else default_run_dir(resolved.label)
    if on_run_dir is not None:
        on_run_dir(run_dir)
    options = ProfileOptions(collect=collect, source=source, launches=launches, metrics=metrics, force=force, ncu=ncu, rules=rules,
                             nsys=nsys, ncu_options=ncu_options, top=top, nsys_options=nsys_options, timeline=timeline,
                             bench=bench, bench_json=bench_json, bench_runs=bench_runs)
    return run(resolved, run_dir, options, progress=progress)

