"""Nsight Compute's command line as ncuwrap drives it: finding ncu, its version, what to collect, the argv, running it.

Everything here except :func:`find_ncu`, :func:`ncu_tool` and :func:`run_ncu` is pure: the argv is the
contract with the profiler, so it is built by functions the tests call without a GPU (see tests/test_profile_argv.py).
ncu is looked up only when a command needs it, never at import time.

What ``--collect targeted`` measures
------------------------------------
The metrics the active rules read (``RuleSet.raw_metrics()``) plus what the report draws
(``engine.CHART_METRICS``, the SM clock of the environment block), and nothing else:

* a metric ncu can collect by name (a hardware counter or SASS-instrumented metric: its base name is
  listed by ``ncu --query-metrics``) goes to ``--metrics``, under the exact name the rules read;
* ``launch__*`` attributes, the occupancy calculator (``sm__maximum_warps_per_active_cycle_pct``) and
  ``derived__*`` metrics exist only inside a section file, so their section is collected instead.
  LaunchStats and Occupancy cost no replay pass of their own beyond achieved occupancy, so they are
  always taken when a rule or the report reads one of their metrics. Any other section is taken only
  when a rule's *condition* (bound, limiter, finding, severity, advice case) needs it: a metric
  shown only as evidence or on a chart is not worth a section's extra passes. The default rules need
  none: ``spill_requests`` (evidence of local_memory_spill, a ``derived__`` metric of
  MemoryWorkloadAnalysis) and the L2/L1 points of the hierarchical roofline (``derived__`` metrics
  of SpeedOfLight_HierarchicalSingleRooflineChart) are left out and listed in ``Collection.skipped``;
* a ``--metrics`` metric whose section is collected anyway is not named again (the sections give it).

SpeedOfLight itself is not collected: the four throughput metrics the rules read are asked for by
name, which skips the section's breakdown tables and its gpu__compute_memory_throughput (a max over
more memory units than the rules look at).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Sequence

from ncuwrap import metrics as M
from ncuwrap import process
from ncuwrap import ruleset as R
from ncuwrap.errors import OptionError, ToolNotFoundError
from ncuwrap.profile.console import ConsoleListener, NcuRun, Progress

MIN_VERSION = (2023, 1, 0)
_VERSION = re.compile(r"Version (\d{4})\.(\d+)(?:\.(\d+))?(?:\.(\d+))?")

# Sections that read launch attributes and the occupancy calculator: no replay pass of their own
# (Occupancy adds sm__warps_active, one counter).
FREE_SECTIONS = ("LaunchStats", "Occupancy")
# Metrics computed by ncu's occupancy calculator: they exist only in the Occupancy section.
OCCUPANCY_CALCULATOR = frozenset({"sm__maximum_warps_per_active_cycle_pct", "sm__maximum_warps_avg_per_active_cycle"})
# device__attribute_* are recorded with every result; launch__* come with LaunchStats / Occupancy;
# derived__* are defined by a section file's MetricDefinitions and cannot be asked for by name.
ALWAYS_RECORDED_PREFIX = "device__"
_SECTION_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
# The environment block of a diagnosis shows the SM clock (engine._environment).
ENVIRONMENT_NAMES = ("sm_cycles_per_s",)


class CollectMode:
    TARGETED = "targeted"
    BASIC = "basic"
    FULL = "full"
    SECTIONS = "sections"


COLLECT_CHOICES = ("targeted", "basic", "full")
# Nsight Compute's section of per-instruction counters (SASS, source lines, sampled stalls).
SOURCE_SECTION = "SourceCounters"


# ----------------------------------------------------------------------------------------- the tool


@dataclass(frozen=True)
class NcuTool:
    """An ncu executable and the version it reported."""

    path: str
    version: tuple[int, ...]
    version_text: str

    @property
    def version_string(self) -> str:
        return ".".join(str(v) for v in self.version)


def find_ncu(path: str | None = None) -> str:
    """The ncu to run: ``path`` (--ncu) or the one on PATH. Raises ToolNotFoundError with the fix."""
    if path:
        candidate = Path(path)
        if candidate.is_dir():
            candidate = candidate / "ncu"
        if not candidate.is_file():
            raise ToolNotFoundError(f"{path}: no ncu there; pass --ncu the path of an installed Nsight Compute's ncu")
        # Path("./ncu") is "ncu", which a child process would look up on PATH: keep it a path.
        return os.path.abspath(candidate)
    found = shutil.which("ncu")
    if not found:
        raise ToolNotFoundError(
            "ncu (Nsight Compute) is not on PATH; install Nsight Compute 2023.1 or newer (it comes with the CUDA toolkit, "
            "e.g. /usr/local/cuda/bin/ncu) and add it to PATH, or pass --ncu /path/to/ncu"
        )
    return found


def parse_version(text: str) -> tuple[int, ...] | None:
    """``ncu --version`` output -> (2025, 3, 1, 0); None when no version line is found."""
    match = _VERSION.search(text or "")
    if not match:
        return None
    return tuple(int(g) for g in match.groups() if g is not None)


def version_argv(ncu: str) -> list[str]:
    return [ncu, "--version"]


def ncu_tool(path: str | None = None, *, run=None) -> NcuTool:
    """Find ncu, ask its version and refuse one older than MIN_VERSION (one line saying what to do)."""
    ncu = find_ncu(path)
    try:
        done = (run or subprocess.run)(version_argv(ncu), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolNotFoundError(f"{ncu}: cannot run 'ncu --version' ({exc}); check the installation or pass --ncu another ncu") from None
    text = (done.stdout or "") + (done.stderr or "")
    version = parse_version(text)
    if version is None:
        first = text.strip().splitlines()[0] if text.strip() else f"exit code {done.returncode}, no output"
        raise ToolNotFoundError(f"{ncu}: 'ncu --version' printed no version ({first}); pass --ncu the ncu of Nsight Compute 2023.1 or newer")
    if version[:3] < MIN_VERSION:
        need = ".".join(str(v) for v in MIN_VERSION[:2])
        have = ".".join(str(v) for v in version)
        raise ToolNotFoundError(f"{ncu} is Nsight Compute {have}; ncuwrap needs {need} or newer: install a newer Nsight Compute and pass --ncu /path/to/ncu")
    line = next((ln.strip() for ln in text.splitlines() if _VERSION.search(ln)), "")
    return NcuTool(path=ncu, version=version, version_text=line)


def run_ncu(
    argv: Sequence[str],
    log_path: Path | None = None,
    progress: Progress | None = None,
    *,
    env: dict | None = None,
    cwd: str | Path | None = None,
    popen=None,
) -> NcuRun:
    """Run ``argv`` (an ncu command line) to the end, following its console, and return what it did.

    Ctrl-C does not raise here: ncu and the program are stopped and the returned run has
    ``interrupted=True`` (the caller records the run, then raises KeyboardInterrupt).
    """
    progress = progress or Progress()
    run = NcuRun(argv=list(argv))
    try:
        process.run(argv, log_path, ConsoleListener(run, progress), record=run, env=env, cwd=cwd, popen=popen)
    except process.StartError as exc:
        if isinstance(exc.cause, FileNotFoundError):
            raise ToolNotFoundError(f"{argv[0]}: not found; install Nsight Compute or pass --ncu /path/to/ncu") from None
        raise ToolNotFoundError(f"{argv[0]}: not executable; pass --ncu the path of a working ncu") from None
    progress.finished(run)
    return run


# ------------------------------------------------------------------------------------ what to collect


@dataclass(frozen=True)
class Skipped:
    """A quantity --collect targeted does not measure, and why."""

    name: str  # canonical / derived name (or a raw metric a rule names)
    missing: tuple[str, ...]  # the raw metrics that only a section gives (or that cost passes)
    section: str | None  # the section that would give them (None: unknown)
    why: str = ""  # a costly metric group: what it would cost

    def reason(self) -> str:
        if self.why:
            return f"{self.name}: {self.why}"
        where = f"section {self.section}" if self.section else "a section ncuwrap cannot name"
        return f"{self.name}: needs {', '.join(self.missing)} from {where}; only shown (evidence or chart), not worth its passes"

    def to_json(self) -> dict:
        return {"name": self.name, "missing": list(self.missing), "section": self.section, **({"why": self.why} if self.why else {})}


@dataclass(frozen=True)
class Collection:
    """What one ncu run collects: a section set, sections, metrics."""

    mode: str  # targeted | basic | full | sections
    set_name: str | None = None
    sections: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    skipped: tuple[Skipped, ...] = field(default=())
    # The per-instruction counters (SourceCounters) and the source files ncu finds on disk, for the
    # lines of each finding: 2 replay passes a kernel on the H200 (17 -> 19 targeted, docs/source-lines.md).
    source: bool = False

    @property
    def label(self) -> str:
        label = self.mode if self.mode != CollectMode.SECTIONS else ",".join(self.sections)
        return label + (" + SourceCounters" if self.source and self.set_name != CollectMode.FULL else "")

    def argv(self) -> list[str]:
        out: list[str] = []
        if self.set_name:
            out += ["--set", self.set_name]
        for section in self.sections:
            out += ["--section", section]
        # The full set has SourceCounters already; a section named twice is collected once anyway.
        if self.source and self.set_name != CollectMode.FULL and SOURCE_SECTION not in self.sections:
            out += ["--section", SOURCE_SECTION]
        if self.metrics:
            out += ["--metrics", ",".join(self.metrics)]
        if self.source:
            out += ["--import-source", "yes"]
        return out

    def to_json(self) -> dict:
        return {"mode": self.mode, "set": self.set_name, "sections": list(self.sections), "metrics": list(self.metrics),
                "source": self.source, "skipped": [s.to_json() for s in self.skipped]}


def by_name(metric: str) -> bool:
    """True when ncu collects ``metric`` given to --metrics (a counter, ratio or SASS metric)."""
    if metric.startswith(("derived__", "launch__", ALWAYS_RECORDED_PREFIX)):
        return False
    return metric not in OCCUPANCY_CALCULATOR


def section_for(metric: str) -> str | None:
    """The section that gives a metric --metrics cannot ask for (None: unknown)."""
    section = M.section_of(metric)
    if section:
        return section
    if metric in OCCUPANCY_CALCULATOR or metric.startswith("launch__occupancy"):
        return "Occupancy"
    if metric.startswith("launch__"):
        return "LaunchStats"
    return None


# Metrics that cost replay passes of their own and that no default rule decides on: collected by
# targeted only when a rule's condition reads them. Measured on the H200 with ncu 2025.3.1
# (benchmarks/device/pass_cost.py, docs/profile.md): the 19 warp stall ratios add 6 passes to the
# 17 of everything else targeted collects, and only fill the 'cause' line of a verdict.
STALL_RATIOS = frozenset(raw for r in M.STALL_REASONS for raw in M.raw_inputs(f"stall_{r}"))
COSTLY_WHY = ("the warp stall reasons add 6 replay passes (17 -> 23 on an H200) and only explain a verdict (its cause "
              "line); --metrics smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio or --collect full has them")


def costly(name: str) -> str | None:
    """Why ``name`` is not worth its passes unless a decision reads it (None: cheap enough)."""
    raws = M.raw_inputs(name)
    return COSTLY_WHY if raws and all(r in STALL_RATIOS for r in raws) else None


def report_names() -> tuple[str, ...]:
    """Quantities the report draws besides the rules: the charts and the environment's SM clock."""
    try:
        from ncuwrap.engine import CHART_METRICS
    except ImportError:  # an engine without charts
        CHART_METRICS = ()
    return tuple(dict.fromkeys((*CHART_METRICS, *ENVIRONMENT_NAMES)))


def decisive_names(rules) -> list[str]:
    """Names whose value can change a verdict: bound conditions and limiters, finding conditions,
    severity conditions and the metric that picks a finding's advice."""
    names: list[str] = []

    def add(items: Iterable[str]) -> None:
        names.extend(n for n in items if n and n not in names)

    for branch in rules.bound:
        add(branch.when.names + branch.when.optional)
        if branch.limiter in M.CANONICAL or branch.limiter in M.DERIVED:
            add([branch.limiter])
    for finding in rules.findings:
        add(finding.when.names + finding.when.optional)
        for level in finding.severity:
            if level.when is not None:
                add(level.when.names + level.when.optional)
        if finding.advice_by and finding.advice_by not in R.VERDICT_FIELDS:
            add([finding.advice_by])
        # An estimate sets the severity, and a minor finding does not silence 'unless'.
        for expr in [*finding.removes.values(), *([finding.fills] if finding.fills else [])]:
            add(expr.names + expr.optional)
    if any(f.estimated for f in rules.findings):
        add(list(rules.units.values()) + ["duration_ns"])
        for expr in rules.reach.values():
            add(expr.names + expr.optional)
    return names


def _order_sections(sections: Iterable[str]) -> tuple[str, ...]:
    unique = list(dict.fromkeys(sections))
    known = [s for s in FREE_SECTIONS if s in unique]
    return tuple(known + [s for s in unique if s not in known])


def targeted(rules, extra_metrics: Sequence[str] = ()) -> Collection:
    """The smallest collection that evaluates every rule of ``rules`` and draws the report."""
    names = list(dict.fromkeys([*rules.metric_names(), *report_names()]))
    decisive = set(decisive_names(rules))

    # 1. Sections: for a section-only metric a decision needs, or one of the free sections.
    sections: list[str] = []
    for name in names:
        for raw in M.raw_inputs(name):
            if by_name(raw) or raw.startswith(ALWAYS_RECORDED_PREFIX):
                continue
            section = section_for(raw)
            if section and (name in decisive or section in FREE_SECTIONS) and section not in sections:
                sections.append(section)
    ordered = _order_sections(sections)

    # 2. Metrics: every input of a quantity that can be measured, minus what the sections give.
    metrics: list[str] = []
    skipped: list[Skipped] = []
    for name in names:
        why = costly(name)
        if why and name not in decisive:
            skipped.append(Skipped(name, tuple(M.raw_inputs(name)), None, why))
            continue
        raws = M.raw_inputs(name)
        missing = [r for r in raws if not by_name(r) and not r.startswith(ALWAYS_RECORDED_PREFIX) and section_for(r) not in ordered]
        if missing:
            skipped.append(Skipped(name, tuple(missing), section_for(missing[0])))
            continue
        for raw in raws:
            if by_name(raw) and M.section_of(raw) not in ordered and raw not in metrics:
                metrics.append(raw)
    metrics += [m for m in extra_metrics if m not in metrics]
    return Collection(mode=CollectMode.TARGETED, sections=ordered, metrics=tuple(metrics), skipped=tuple(skipped))


def plan_collection(collect: str, rules=None, extra_metrics: Sequence[str] = (), *, source: bool = False) -> Collection:
    """``--collect`` value -> Collection. ``targeted`` (default) needs ``rules`` (default: bundled).
    ``source``: add the SourceCounters section and ``--import-source yes`` (``--source``)."""
    return replace(_plan_collection(collect, rules, extra_metrics), source=source)


def _plan_collection(collect: str, rules=None, extra_metrics: Sequence[str] = ()) -> Collection:
    value = (collect or CollectMode.TARGETED).strip()
    extra = tuple(dict.fromkeys(m.strip() for m in extra_metrics if m and m.strip()))
    if value == CollectMode.TARGETED:
        if rules is None:
            from ncuwrap import ruleset

            rules = ruleset.load()
        return targeted(rules, extra)
    if value in (CollectMode.BASIC, CollectMode.FULL):
        return Collection(mode=value, set_name=value, metrics=extra)
    sections = tuple(s.strip() for s in value.split(",") if s.strip())
    if len(sections) == 1 and sections[0] in COLLECT_CHOICES:  # "full," is still full
        return _plan_collection(sections[0], rules, extra)
    bad = [s for s in sections if not _SECTION_NAME.match(s) or s in COLLECT_CHOICES]
    if not sections or bad:
        raise OptionError(f"--collect {value!r}: expected targeted, basic, full or a comma list of ncu section names "
                         f"(e.g. SpeedOfLight,Occupancy; 'ncu --list-sections' lists them)")
    return Collection(mode=CollectMode.SECTIONS, sections=tuple(dict.fromkeys(sections)), metrics=extra)


# ------------------------------------------------------------------------------------------- argv


def kernel_regex(kernel: str | None) -> str | None:
    """ncuwrap's -k is always a regular expression; an explicit ``regex:`` prefix is accepted too."""
    if kernel is None:
        return None
    kernel = kernel.strip()
    if kernel.startswith("regex:"):
        kernel = kernel[len("regex:"):]
    return kernel or None


def kernel_id(kernel: str | None, nth: int) -> str:
    """ncu's --kernel-id for "the Nth launch of each distinct kernel":
    ``context:stream:[regex:]name:invocation``. ncu counts invocations per kernel *and* launch
    configuration (grid, block, shared memory), so a kernel launched with two grid sizes is profiled
    once per size."""
    if nth < 1:
        raise OptionError(f"the launch number must be 1 or more (got {nth})")
    regex = kernel_regex(kernel)
    if regex is None:
        return f":::{nth}"
    if ":" in regex:
        raise OptionError(f"-k {regex!r}: a regular expression with ':' cannot go into ncu's --kernel-id; drop the ':' (match around it with '.')")
    return f"::regex:{regex}:{nth}"


# ------------------------------------------------------------------------------ ncu options passed on

# The values ncu (2023.1 and newer) accepts for the options ncuwrap passes on; a bad value is refused
# here in one line rather than by ncu after the program was built or started.
REPLAY_MODES = ("kernel", "application", "range", "app-range")
TARGET_PROCESSES = ("all", "application-only")
CACHE_CONTROL = ("all", "none")
CLOCK_CONTROL = ("none", "base")
GRAPH_PROFILING = ("node", "graph")
# ncu options ncuwrap sets from an option of its own (or must know, to say which launch a result
# was): --ncu-arg may not set them a second time.
OWNED_OPTIONS = {
    "--export": "-o", "-o": "-o", "--force-overwrite": "--force", "-f": "--force",
    "--clock-control": "--clock-control", "--cache-control": "--cache-control", "--replay-mode": "--replay-mode",
    "--target-processes": "--target-processes", "--graph-profiling": "--graph-profiling",
    "--kernel-name": "-k", "-k": "-k", "--kernel-id": "-k with --nth-launch", "--launch-skip": "--launch-skip",
    "-s": "--launch-skip", "--launch-count": "--launch-count", "-c": "--launch-count", "--set": "--collect",
    "--nvtx-include": "--nvtx-include", "--nvtx-exclude": "--nvtx-exclude", "--import-source": "--source/--no-source",
}


def _words(values: Sequence[str]) -> str:
    values = list(values)
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " or " + values[-1]


def check_choice(flag: str, value: str | None, allowed: Sequence[str]) -> str | None:
    """``value`` of ``flag`` if ncu accepts it (None stays None); OptionError, one line, otherwise."""
    if value is None:
        return None
    if value not in allowed:
        raise OptionError(f"{flag} {value!r}: expected {_words(allowed)}")
    return value


@dataclass(frozen=True)
class NcuOptions:
    """ncu options passed on as they are: NVTX filtering, replay mode, child processes, cache and
    clock control, CUDA graph profiling, and any other ncu argument (``extra``, --ncu-arg). ``None``
    leaves ncu's own default (its option is not passed); the clocks are the exception: ncuwrap
    always passes ``--clock-control``, ``none`` unless told otherwise."""

    nvtx_include: tuple[str, ...] = ()
    nvtx_exclude: tuple[str, ...] = ()
    replay_mode: str | None = None
    target_processes: str | None = None
    cache_control: str | None = None
    clock_control: str = "none"
    graph_profiling: str | None = None
    extra: tuple[str, ...] = ()

    def check(self) -> "NcuOptions":
        """Itself when every value is one ncu accepts; OptionError (one line naming the option) otherwise."""
        check_choice("--replay-mode", self.replay_mode, REPLAY_MODES)
        check_choice("--target-processes", self.target_processes, TARGET_PROCESSES)
        check_choice("--cache-control", self.cache_control, CACHE_CONTROL)
        check_choice("--clock-control", self.clock_control, CLOCK_CONTROL)
        check_choice("--graph-profiling", self.graph_profiling, GRAPH_PROFILING)
        for flag, expressions in (("--nvtx-include", self.nvtx_include), ("--nvtx-exclude", self.nvtx_exclude)):
            if any(not e.strip() for e in expressions):
                raise OptionError(f"{flag}: an empty NVTX expression; give a range name, e.g. {flag} 'train_step/'")
        for arg in self.extra:
            name = str(arg).split("=", 1)[0]
            if name in OWNED_OPTIONS:
                raise OptionError(f"--ncu-arg {arg!r}: ncuwrap sets {name} itself; use ncuwrap's {OWNED_OPTIONS[name]} instead")
        return self

    @property
    def nvtx(self) -> bool:
        """ncu applies --nvtx-include/--nvtx-exclude only with NVTX support on (--nvtx)."""
        return bool(self.nvtx_include or self.nvtx_exclude)

    def argv(self) -> list[str]:
        """The options after ``--clock-control``, in a fixed order (--ncu-arg's come at the very end)."""
        out: list[str] = []
        for flag, value in (("--cache-control", self.cache_control), ("--replay-mode", self.replay_mode),
                            ("--target-processes", self.target_processes), ("--graph-profiling", self.graph_profiling)):
            if value is not None:
                out += [flag, value]
        if self.nvtx and "--nvtx" not in self.extra:
            out.append("--nvtx")
        for expression in self.nvtx_include:
            out += ["--nvtx-include", expression]
        for expression in self.nvtx_exclude:
            out += ["--nvtx-exclude", expression]
        return out


def ncu_argv(
    target_argv: Sequence[str],
    *,
    collect: Collection,
    output: str | Path,
    ncu: str = "ncu",
    kernel: str | None = None,
    launch_skip: int | None = None,
    launch_count: int | None = None,
    nth_launch: int | None = None,
    force: bool = False,
    clock_control: str = "none",
    extra: Sequence[str] = (),
    kernel_name_base: str | None = None,
    options: NcuOptions | None = None,
) -> list[str]:
    """The exact ncu command line for one profiling run.

    ``--clock-control none`` always: ncuwrap leaves the GPU's clocks as they are (ncu's default locks
    them to base); durations under ncu are instrumented anyway and never used for a speedup.
    ``--launch-skip`` / ``--launch-count`` count only launches that match the kernel filter.
    ``nth_launch`` profiles the Nth launch of every distinct kernel (ncu's --kernel-id) instead.
    ``options`` (checked here) come after the clocks, its ``clock_control`` replacing ``clock_control``,
    and its ``extra`` (--ncu-arg) after ``extra``, just before the program.
    """
    if options is not None:
        options.check()
        clock_control = options.clock_control
    if not target_argv:
        raise OptionError("no program to profile")
    if nth_launch is not None and launch_skip:
        raise OptionError("--nth-launch and --launch-skip exclude each other")
    argv = [str(ncu), "--export", str(output)]
    if force:
        argv.append("--force-overwrite")
    argv += ["--clock-control", clock_control]
    if options is not None:
        argv += options.argv()
    regex = kernel_regex(kernel)
    if kernel_name_base:  # what -k / --kernel-id match: function (ncu's default), demangled or mangled
        argv += ["--kernel-name-base", kernel_name_base]
    if nth_launch is not None:
        argv += ["--kernel-id", kernel_id(regex, nth_launch)]
    else:
        if regex:
            argv += ["--kernel-name", f"regex:{regex}"]
        if launch_skip:
            argv += ["--launch-skip", str(int(launch_skip))]
    if launch_count:
        argv += ["--launch-count", str(int(launch_count))]
    argv += collect.argv()
    argv += [str(a) for a in extra]
    if options is not None:
        argv += [str(a) for a in options.extra]
    argv += [str(a) for a in target_argv]
    return argv


def import_csv_argv(report: str | Path, ncu: str = "ncu") -> list[str]:
    """The raw-page CSV export of a report (its stdout is the CSV)."""
    return [str(ncu), "--import", str(report), "--csv", "--page", "raw"]


def import_source_argv(report: str | Path, ncu: str = "ncu", *, lines: bool = True) -> list[str]:
    """The source page of a report as CSV: per-instruction counters with each line's file, number and
    text (``lines``: --print-source cuda,sass, which leaves out kernels without line information), or
    the SASS alone (every kernel)."""
    return [str(ncu), "--import", str(report), "--csv", "--page", "source", "--print-source", "cuda,sass" if lines else "sass"]
