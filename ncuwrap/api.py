"""The Python API: what the commands do, as functions returning the typed results.

    >>> import ncuwrap
    >>> d = ncuwrap.diagnose("report.ncu-rep")          # a Diagnosis (a TimelineDiagnosis for an nsys capture)
    >>> d.kernels[0].verdict_label, d.kernels[0].headline
    >>> d.to_frame()                                     # pandas: one row per launch
    >>> d                                                # in a notebook: the HTML report
    >>> ncuwrap.compare("before.ncu-rep", "after.ncu-rep").to_frame()      # one row per kernel pair
    >>> ncuwrap.compare("eager.sqlite", "graphs.sqlite").speedup           # two timelines: per step
    >>> ncuwrap.timeline("run.sqlite").to_frame()                          # one row per step
    >>> ncuwrap.ranks("captures/").to_frame()                              # one row per rank
    >>> print(ncuwrap.render(d, "markdown"))

Bad input raises :class:`ncuwrap.errors.InputError` (its message names the file and the fix), as the
commands' one-line errors do. The commands are a thin layer over these functions.
"""

from __future__ import annotations

from pathlib import Path

from ncuwrap import display
from ncuwrap.errors import InputError
from ncuwrap.render import Format
from ncuwrap.render import render as _render

__all__ = ["diagnose", "compare", "timeline", "ranks", "render"]


def render(result, fmt: str | Format = "table", **options) -> str:
    """A result as the commands print it: ``table`` (terminal text; ``width=`` columns), ``json``,
    ``markdown`` or ``html`` (a self-contained page)."""
    return _render(result, Format(fmt), **options)


display.use(lambda result: _render(result, Format.html))


def _is_timeline(path: Path) -> bool:
    from ncuwrap.ingest import kind_of

    return path.is_file() and kind_of(path) == "timeline"


def diagnose(report: str | Path | None = None, *, rules: str | Path | None = None, extend: bool = False, kernel: str | None = None,
             launch_skip: int = 0, launch_count: int | None = None, process: str | None = None, source_page: str | Path | None = None,
             ncu_rules: str | Path | None = None, ncu: str | None = None, nsys: str | None = None, step_range: str | None = None,
             warmup: int | None = None, steps: str = "auto"):
    """``ncuwrap diagnose``: a kernel report (.ncu-rep, ncu CSV export, a run folder of ``ncuwrap profile``)
    gives a :class:`~ncuwrap.verdict.Diagnosis`; an nsys capture a :class:`~ncuwrap.timeline.diagnosis.TimelineDiagnosis`.
    None: the sample H200 report shipped with ncuwrap."""
    from ncuwrap.resources import sample_report

    path = Path(report) if report is not None else sample_report()
    if extend and rules is None:
        raise InputError("--extend adds the rules of --rules FILE to the bundled ones; give --rules too")
    if _is_timeline(path):
        if kernel or ncu_rules or launch_skip or launch_count or process or source_page:
            raise InputError(f"{path}: --kernel, --launch-skip, --launch-count, --process, --ncu-rules and --source-page apply to Nsight Compute reports; "
                             "a timeline is diagnosed as a whole")
        return timeline(path, rules=rules, extend=extend, nsys=nsys, step_range=step_range, warmup=warmup, steps=steps)
    if step_range is not None or warmup is not None or steps != "auto":
        raise InputError(f"{path}: --step-range, --warmup and --steps apply to nsys captures (timelines); this is a kernel report")
    from ncuwrap.kernel_filter import LaunchSelection
    from ncuwrap.profile.rediagnose import diagnose_run_dir, is_run_dir

    select = LaunchSelection(kernel=kernel, launch_skip=launch_skip, launch_count=launch_count or None, process=process)
    if is_run_dir(path):
        if ncu_rules or source_page:
            raise InputError(f"{path}: a run folder brings its own source page and rules results; drop --ncu-rules and --source-page")
        return diagnose_run_dir(path, rules, extend=extend, ncu=ncu, select=select)
    # The rules first (a bad rules file is said before any work), then the report's reader is started
    # (a .ncu-rep: NVIDIA's reader in a child process) while the diagnosis's modules, pandas among
    # them, are imported: on a 220-launch report that overlap saves ~0.3 s of 1.7.
    from ncuwrap import ingest, metrics, ruleset

    rule_set = ruleset.load(rules, extend=extend)
    started = (rule_set, ingest.start(path, ncu=ncu, metrics=metrics.report_metrics(rule_set)))
    from ncuwrap.kernel_diagnosis import diagnose as run

    label = None if report is not None else f"ncuwrap:samples/{path.name}"
    return run(path, rules, extend=extend, ncu=ncu, label=label, ncu_rules=ncu_rules, select=select, source_page=source_page,
               started=started)


def compare(before: str | Path, after: str | Path, *, rules: str | Path | None = None, extend: bool = False, kernel: str | None = None,
            pairs=(), before_timing: str | Path | None = None, after_timing: str | Path | None = None, threshold_pct: float = 5.0,
            fail_on_finding: str | None = None, ncu: str | None = None, nsys: str | None = None, step_range: str | None = None,
            warmup: int | None = None, steps: str = "auto"):
    """``ncuwrap compare``: two kernel reports give a :class:`~ncuwrap.compare.CompareResult` (``pairs``:
    (old, new) names to pair renamed kernels); two nsys captures a
    :class:`~ncuwrap.timeline.compare.TimelineCompare` (per step where both have steps)."""
    before, after = Path(before), Path(after)
    timelines = [p for p in (before, after) if _is_timeline(p)]
    gate = {"threshold_pct": threshold_pct, "fail_on_finding": fail_on_finding}
    if timelines:
        other = next((p for p in (before, after) if p not in timelines), None)
        if other is not None:
            raise InputError(f"{other}: not an nsys capture, while {timelines[0]} is; compare two timelines (.sqlite, .sqlite.gz, "
                             ".nsys-rep) or two kernel reports")
        flag = next((f for f, given in (("--pair", pairs), ("--before-timing", before_timing), ("--after-timing", after_timing),
                                         ("--kernel", kernel), ("--ncu", ncu)) if given), None)
        if flag:
            raise InputError(f"{flag}: applies to kernel reports; two timelines are compared as wholes (drop {flag})")
        from ncuwrap.timeline.compare import compare_timeline_files

        return compare_timeline_files(before, after, rules, extend=extend, nsys=nsys, step_pattern=step_range, warmup=warmup,
                                      find_steps=steps, **gate)
    flag = next((f for f, given in (("--step-range", step_range), ("--warmup", warmup is not None), ("--nsys-path", nsys),
                                    ("--steps", steps != "auto")) if given), None)
    if flag:
        raise InputError(f"{flag}: applies to two nsys captures; {before} and {after} are kernel reports (drop {flag})")
    from ncuwrap.compare import compare_files

    return compare_files(before, after, rules, extend=extend, kernel=kernel, ncu=ncu, pairs=list(pairs), before_timing=before_timing,
                         after_timing=after_timing, **gate)


def timeline(path: str | Path, *, rules: str | Path | None = None, extend: bool = False, nsys: str | None = None,
             step_range: str | None = None, warmup: int | None = None, steps: str = "auto"):
    """A capture made before (.sqlite, .sqlite.gz, .nsys-rep): a :class:`~ncuwrap.timeline.diagnosis.TimelineDiagnosis`,
    judged by its steady steps where it has NVTX steps."""
    from ncuwrap.timeline.diagnosing import diagnose_timeline

    return diagnose_timeline(path, rules_path=rules, extend=extend, nsys=nsys, step_pattern=step_range, warmup=warmup, find_steps=steps)


def ranks(folder: str | Path, *, rules: str | Path | None = None, extend: bool = False, workers: int | None = None,
          scheduler: str | None = None, step_range: str | None = None, warmup: int | None = None, allow_mixed: bool = False,
          nsys: str | None = None, steps: str = "auto"):
    """``ncuwrap timeline --ranks``: one capture per rank in ``folder``, a :class:`~ncuwrap.timeline.ranks.diagnosis.RanksDiagnosis`."""
    from ncuwrap.timeline.ranks.diagnosis import diagnose_ranks

    return diagnose_ranks(folder, rules_path=rules, extend=extend, scheduler=scheduler, workers=workers, step_pattern=step_range,
                          nsys=nsys, allow_mixed=allow_mixed, warmup=warmup, find_steps=steps)
