"""Profile a program (or a bundled benchmark) under Nsight Compute and diagnose what it measured.

>>> from ncuwrap.profile import ProfileOptions, profile, targets
>>> result = profile(targets.resolve(["transpose/naive"]), "runs/naive", ProfileOptions())
>>> result.passes_total, result.wall_s, result.diagnosis.kernels[0].bound

Stages: :mod:`.targets` (what to run), :mod:`.ncu` (find ncu, what to collect, the exact argv),
:mod:`.run` (run it, follow the passes, turn failures into one line), :mod:`.rundir` (the run folder).

Which launch is profiled
------------------------
ncu's ``--launch-skip N`` and ``--launch-count C`` count only the launches that match the kernel
filter (``-k``): with ``-k regex:add --launch-skip 6`` ncu profiles the 7th launch *of a kernel
matching "add"*, whatever ran in between. Without ``-k`` every launch counts. ``--nth-launch N``
(ncu's ``--kernel-id :::N``) profiles instead the Nth launch of *each* distinct kernel (ncu counts
per kernel and launch configuration), so one kernel's warm-up never hides another kernel. Every run
says, per profiled kernel, which launch it was (profile.json and the screen).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

from ncuwrap.errors import NcuwrapError, ProfilerError, ToolNotFoundError
from ncuwrap.profile import rundir as RD
from ncuwrap.profile.ncu import Collection, NcuTool, import_csv_argv, kernel_regex, ncu_argv, ncu_tool, plan_collection
from ncuwrap.profile.run import NcuRun, Progress, failure, run_ncu
from ncuwrap.profile.targets import Target

__all__ = ["LaunchFilter", "ProfileOptions", "ProfileResult", "ProfiledLaunch", "launch_filter", "profile", "same_verdicts", "verdicts",
           "DEFAULT_PROGRAM_LAUNCH_COUNT"]

# A program (not a bundled benchmark) given no filter is profiled for its first launches only: a real
# application launches thousands of kernels and each profiled launch costs ~10 replay passes.
DEFAULT_PROGRAM_LAUNCH_COUNT = 10
SCHEMA = "ncuwrap.profile/v1"


@dataclass(frozen=True)
class LaunchFilter:
    """Which launches ncu profiles, and how to say which one each result is."""

    kernel: str | None = None  # regular expression
    launch_skip: int | None = None
    launch_count: int | None = None  # None: no limit
    nth_launch: int | None = None
    origin: str = "user"  # user | bundled | program-default
    why: str = ""  # what a bundled benchmark's default skip lands on

    def describe(self, index: int, name: str) -> str:
        """Which launch the ``index``-th profiled result (0-based) was, in words."""
        if self.nth_launch is not None:
            return f"launch {self.nth_launch} of {name} with this grid, block and shared memory (--nth-launch {self.nth_launch})"
        number = (self.launch_skip or 0) + index + 1
        if self.kernel:
            skip = f", --launch-skip {self.launch_skip} counts only matching launches" if self.launch_skip else ""
            why = f": {self.why}" if self.why else ""
            return f"launch {number} of the launches matching -k {self.kernel}{skip}{why}"
        return f"launch {number} of the program (no kernel filter: every launch counts)"

    def summary(self) -> str:
        if self.nth_launch is not None:
            scope = f"kernels matching -k {self.kernel}" if self.kernel else "every distinct kernel"
            return f"the launch {self.nth_launch} of {scope} (per kernel and launch configuration)"
        scope = f"launches matching -k {self.kernel}" if self.kernel else "all launches"
        count = "all" if self.launch_count is None else str(self.launch_count)
        default = " (default for a program: pass --launch-count 0 for all)" if self.origin == "program-default" else ""
        return f"{count} of the {scope} after skipping {self.launch_skip or 0}{default}"

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "launch_skip": self.launch_skip, "launch_count": self.launch_count,
                "nth_launch": self.nth_launch, "origin": self.origin, "summary": self.summary()}


def launch_filter(target: Target, *, kernel: str | None = None, launch_skip: int | None = None,
                  launch_count: int | None = None, nth_launch: int | None = None) -> LaunchFilter:
    """The filter for ``target``: the user's options, else the bundled benchmark's, else a program default.

    ``launch_count`` 0 means no limit. A user's ``-k`` replaces a bundled variant's filter and skip.
    """
    if nth_launch is not None and launch_skip:
        raise ValueError("--nth-launch and --launch-skip exclude each other: --nth-launch N already picks the Nth launch of each kernel")
    if nth_launch is not None and nth_launch < 1:
        raise ValueError(f"--nth-launch must be 1 or more (got {nth_launch})")
    if launch_skip is not None and launch_skip < 0:
        raise ValueError(f"--launch-skip must be 0 or more (got {launch_skip})")
    if launch_count is not None and launch_count < 0:
        raise ValueError(f"--launch-count must be 0 (no limit) or more (got {launch_count})")
    count = None if launch_count == 0 else launch_count
    regex = kernel_regex(kernel)
    if target.bundled and regex is None:
        if nth_launch is not None:
            return LaunchFilter(kernel=target.kernel, launch_count=count, nth_launch=nth_launch, origin="user")
        user_skip = launch_skip is not None
        return LaunchFilter(kernel=target.kernel, launch_skip=launch_skip if user_skip else target.launch_skip,
                            launch_count=count if launch_count is not None else target.launch_count,
                            origin="user" if (user_skip or launch_count is not None) else "bundled",
                            why="" if user_skip else target.why_skip)
    if nth_launch is not None:
        return LaunchFilter(kernel=regex, launch_count=count, nth_launch=nth_launch, origin="user")
    if launch_count is None:
        origin = "program-default" if not target.bundled else "user"
        default = DEFAULT_PROGRAM_LAUNCH_COUNT if not target.bundled else 1
        return LaunchFilter(kernel=regex, launch_skip=launch_skip, launch_count=default, origin=origin)
    return LaunchFilter(kernel=regex, launch_skip=launch_skip, launch_count=count, origin="user")


@dataclass(frozen=True)
class ProfileOptions:
    """The options of one profiling run (the CLI's, as a value)."""

    collect: str = "targeted"
    kernel: str | None = None
    launch_skip: int | None = None
    launch_count: int | None = None
    nth_launch: int | None = None
    metrics: tuple[str, ...] = ()
    force: bool = False
    ncu: str | None = None
    rules: Path | None = None
    extend: bool = False
    nsys: bool = False
    nsys_path: str | None = None
    export_csv: bool = True
    html: bool = True
    extra_ncu_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProfiledLaunch:
    index: int
    kernel: str
    passes: int | None
    launch: str  # which launch it was, in words

    def to_json(self) -> dict:
        return {"index": self.index, "kernel": self.kernel, "passes": self.passes, "launch": self.launch}


@dataclass
class ProfileResult:
    run_dir: Path
    target: Target
    collection: Collection
    filter: LaunchFilter
    argv: list[str]
    ncu: NcuTool
    wall_s: float
    launches: list[ProfiledLaunch]
    diagnosis: object = None
    warnings: list[str] = field(default_factory=list)
    timeline: object = None

    @property
    def report(self) -> Path:
        return Path(self.run_dir) / RD.REPORT

    @property
    def passes_total(self) -> int | None:
        passes = [launch.passes for launch in self.launches]
        return sum(passes) if passes and all(p is not None for p in passes) else None


def verdicts(diagnosis) -> list[dict]:
    """What must not change between two collections of the same launches: per kernel, the bound,
    the limiter and the findings (ids; severities are listed apart, they may move with a threshold)."""
    return [{"kernel": k.name, "bound": k.bound, "limiter": k.limiter, "findings": sorted(f.id for f in k.findings),
             "severities": {f.id: f.severity for f in k.findings}} for k in diagnosis.kernels]


def same_verdicts(a, b) -> bool:
    """True when two diagnoses give every kernel the same bound, limiter and findings."""
    strip = lambda rows: [{k: v for k, v in row.items() if k != "severities"} for row in rows]  # noqa: E731
    return strip(verdicts(a)) == strip(verdicts(b))


def _record(rd: RD.RunDir, *, status: str, target: Target, collection: Collection, filt: LaunchFilter, tool: NcuTool,
            argv: list[str], run: NcuRun | None = None, launches: Sequence[ProfiledLaunch] = (), error: str | None = None,
            warnings: Sequence[str] = (), timeline: dict | None = None) -> None:
    passes = [launch.passes for launch in launches] or (run.passes if run else [])
    rd.write_json(rd.profile, {
        "schema": SCHEMA,
        "status": status,
        "error": error,
        "target": target.to_json(),
        "collect": collection.to_json(),
        "filter": filt.to_json(),
        "ncu": {"path": tool.path, "version": tool.version_string},
        "argv": argv,
        "returncode": run.returncode if run else None,
        "wall_s": round(run.wall_s, 3) if run else None,
        "passes_total": sum(passes) if passes and all(p is not None for p in passes) else None,
        "launches": [launch.to_json() for launch in launches] or
                    ([{"index": i, "kernel": k.name, "passes": k.passes, "launch": None} for i, k in enumerate(run.kernels)] if run else []),
        "warnings": list(warnings) or (run.warnings if run else []),
        "timeline": timeline,
        "files": sorted(p.name for p in rd.path.iterdir() if p.is_file() and not p.name.startswith(".")),
    })


def _launches(profile, run: NcuRun, filt: LaunchFilter) -> list[ProfiledLaunch]:
    """One entry per profiled result of the report: its kernel, passes (console, else the report's
    profiler__replayer_passes) and which launch it was."""
    frame = profile.frame
    console = run.kernels if len(run.kernels) == len(frame) else None
    out = []
    for i in range(len(frame)):
        name = str(frame["name"].iat[i])
        passes = console[i].passes if console else None
        if passes is None and "profiler__replayer_passes" in frame:
            value = frame["profiler__replayer_passes"].iat[i]
            try:
                passes = int(float(value))
            except (TypeError, ValueError):
                passes = None
        out.append(ProfiledLaunch(i, name, passes, filt.describe(i, name)))
    return out


def _build_command(target: Target) -> list[str] | None:
    """The nvcc command a bundled binary was built with (from the build cache's record)."""
    binary = target.build.get("binary") if target.build else None
    if not binary:
        return None
    record = Path(binary).parent / "build.json"
    try:
        argv = json.loads(record.read_text()).get("argv")
    except (OSError, ValueError):
        return None
    return [str(a) for a in argv] if argv else None


def profile(target: Target, run_dir: str | Path, options: ProfileOptions = ProfileOptions(), progress: Progress | None = None,
            *, find_tool=ncu_tool) -> ProfileResult:
    """Run ``target`` under ncu into ``run_dir`` and diagnose it. Raises NcuwrapError (one line, with
    the fix) on failure and KeyboardInterrupt after a Ctrl-C; either way the run folder keeps the log,
    the commands and profile.json."""
    from ncuwrap import ruleset

    rules = ruleset.load(options.rules, extend=options.extend)
    try:
        collection = plan_collection(options.collect, rules, options.metrics)
        filt = launch_filter(target, kernel=options.kernel, launch_skip=options.launch_skip,
                             launch_count=options.launch_count, nth_launch=options.nth_launch)
    except ValueError as exc:
        raise NcuwrapError(str(exc)) from None
    tool = find_tool(options.ncu)
    if options.nsys:  # a missing nsys fails now, not after the ncu run
        try:
            from ncuwrap.timeline.nsysrep import find_nsys
        except ModuleNotFoundError:
            pass  # timeline() says what is missing
        else:
            find_nsys(options.nsys_path)
    rd = RD.RunDir(run_dir)
    try:
        argv = ncu_argv(target.argv, collect=collection, output=rd.export_stem, ncu=tool.path, kernel=filt.kernel,
                        launch_skip=filt.launch_skip, launch_count=filt.launch_count, nth_launch=filt.nth_launch,
                        force=options.force, extra=options.extra_ncu_args)
    except ValueError as exc:
        raise NcuwrapError(str(exc)) from None
    rd.prepare(force=options.force)
    rd.write_json(rd.environment, RD.environment(tool))
    build = _build_command(target)
    if build:
        rd.add_command("build (cached by ncuwrap.benchmarks)", build)
    rd.add_command("profile", argv)
    record = dict(target=target, collection=collection, filt=filt, tool=tool, argv=argv)
    _record(rd, status="running", **record)

    run = run_ncu(argv, rd.log, progress)
    if run.interrupted:
        _record(rd, status="interrupted", run=run, error="interrupted (Ctrl-C): ncu and the program were stopped", **record)
        raise KeyboardInterrupt
    error = failure(run, log=str(rd.log), known_kernels=target.kernels, kernel_filter=filt.kernel, report_exists=rd.report.exists())
    if error is None and not rd.report.exists():
        error = ProfilerError(f"ncu finished without writing {rd.report}; full log: {rd.log}")
    if error is not None:
        _record(rd, status="failed", run=run, error=str(error), **record)
        raise error

    from ncuwrap.engine import diagnose_profile
    from ncuwrap.ingest import load
    from ncuwrap.render import Format, render

    warnings = list(run.warnings)
    # Diagnose ncu's own CSV export of the report: ncu is at hand here, and its export does not
    # depend on the ncu_report Python module matching this Python (on the lent H200 that module
    # crashed the interpreter). The .ncu-rep stays the artifact; the CSV gives identical verdicts.
    csv_warning = export_csv(rd, tool) if options.export_csv else "CSV export not requested"
    if csv_warning is None:
        loaded = load(rd.raw_csv)
        loaded.source = replace(loaded.source, path=str(rd.report), kind="ncu-rep", ncu_version=tool.version_string,
                                command_line=shlex.join(argv))
    else:
        if options.export_csv:
            warnings.append(csv_warning)
        loaded = load(rd.report, ncu=tool.path)
    diagnosis = diagnose_profile(loaded, rules)
    launches = _launches(loaded, run, filt)
    rd.write_text(rd.verdict, render(diagnosis, Format.json))
    if options.html:
        rd.write_text(rd.html, render(diagnosis, Format.html))
    result = ProfileResult(run_dir=rd.path, target=target, collection=collection, filter=filt, argv=argv, ncu=tool,
                           wall_s=run.wall_s, launches=launches, diagnosis=diagnosis, warnings=warnings)
    _record(rd, status="ok", run=run, launches=launches, warnings=warnings, **record)
    if options.nsys:
        result.timeline = timeline(rd, target, options.nsys_path, progress)
        _record(rd, status="ok", run=run, launches=launches, warnings=warnings,
                timeline={"report": "timeline.nsys-rep", "verdict": "timeline.json", "html": "timeline.html"}, **record)
    return result


def export_csv(rd: RD.RunDir, tool: NcuTool) -> str | None:
    """Write report.raw.csv; a failure is a warning (the report itself is what matters)."""
    argv = import_csv_argv(rd.report, tool.path)
    rd.add_command("raw CSV export", argv, stdout_to=str(rd.raw_csv))
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"raw CSV export failed ({exc}); the report is complete: re-export it with: {' '.join(argv)}"
    if done.returncode != 0 or not done.stdout.strip():
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return f"raw CSV export failed ({detail[0]}); the report is complete"
    rd.write_text(rd.raw_csv, done.stdout)
    return None


def timeline(rd: RD.RunDir, target: Target, nsys_path: str | None, progress: Progress | None = None):
    """--nsys: capture the same command with Nsight Systems into the run folder and diagnose its
    timeline (ncuwrap.timeline.capture writes the timeline.* files)."""
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
    return capture(list(target.argv), rd.path, nsys=nsys_path, force=True, started=started).diagnosis
