"""The typed values of one profiling run: the options it was given and what it returns.

Rendering them (verdict.json, report.html, the screen) is the command line's job (:mod:`ncuwrap.cli.profile`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ncuwrap.profile import rundir
from ncuwrap.profile.launches import LaunchFilter, ProfiledLaunch, total_passes
from ncuwrap.profile.collection import Collection
from ncuwrap.profile.ncu_argv import NcuOptions
from ncuwrap.profile.ncu_tool import NcuTool
from ncuwrap.profile.targets import Target
from ncuwrap.core.launch_selection import LaunchSelection
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.timeline.nsysrep import NsysOptions
from ncuwrap.timeline.options import TimelineOptions


@dataclass(frozen=True)
class ProfileOptions:
    """The options of one profiling run (the CLI's, as a value)."""

    collect: str = "targeted"
    # SourceCounters and the sources on disk (--source / --no-source): per-line attribution.
    source: bool = True
    # Which launches ncu profiles (-k, --launch-skip, --launch-count, --nth-launch; None: the target's default).
    launches: LaunchSelection = LaunchSelection()
    metrics: tuple[str, ...] = ()
    force: bool = False
    ncu: str | None = None
    rules: RulesChoice = RulesChoice()  # the kernel rules; targeted collection measures what they read
    nsys: bool = False  # also capture the timeline with nsys
    export_csv: bool = True
    extra_ncu_args: tuple[str, ...] = ()  # library use: appended as they are, unchecked
    # Passed on to ncu: NVTX filter, replay mode, child processes, cache and clock control, graphs, --ncu-arg.
    ncu_options: NcuOptions = NcuOptions()
    top: int | None = None  # nsys first, then ncu on the N kernels with the most GPU time
    # Passed on to every nsys profile ncuwrap runs (--top, --nsys): the trace list, --nsys-arg.
    nsys_options: NsysOptions = NsysOptions()
    # The nsys that --nsys and --top run, and how the timeline's steps are found (--nsys-path, --steps).
    timeline: TimelineOptions = TimelineOptions()
    # A bundled benchmark's stop line: its family timed uninstrumented ('ncuwrap bench', this many
    # process runs), or read from a bench JSON instead; --no-bench: neither.
    bench: bool = True
    bench_json: Path | None = None
    bench_runs: int = 3


@dataclass
class ProfileResult:
    """What a profiling run measured and concluded; its files are in ``run_dir``."""

    run_dir: Path
    target: Target
    collection: Collection
    filter: LaunchFilter
    argv: list[str]
    ncu: NcuTool
    wall_s: float
    launches: list[ProfiledLaunch]
    diagnosis: object = None  # Diagnosis of every profiled kernel
    warnings: list[str] = field(default_factory=list)
    timeline: object = None  # TimelineDiagnosis, with --nsys

    @property
    def report(self) -> Path:
        return Path(self.run_dir) / rundir.REPORT

    @property
    def passes_total(self) -> int | None:
        return total_passes([launch.passes for launch in self.launches])


@dataclass(frozen=True)
class ProfileDocument:
    """``profile --nsys -f json``: one JSON document, the diagnosis (``ncuwrap.diagnosis/v4``) with the
    timeline's document (``ncuwrap.timeline/v1``) under its ``timeline`` key."""

    diagnosis: object  # Diagnosis
    timeline: object  # TimelineDiagnosis

    def to_json(self) -> dict:
        return {**self.diagnosis.to_json(), "timeline": self.timeline.to_json()}
