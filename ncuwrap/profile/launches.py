"""Which launches ncu profiles, and which launch each profiled result was (the launch policy).

ncu's ``--launch-skip N`` and ``--launch-count C`` count only the launches that match the kernel
filter (``-k``); ``--nth-launch N`` (ncu's ``--kernel-id :::N``) profiles the Nth launch of *each*
distinct kernel. A bundled benchmark brings its own filter and skip (its first timed launch); a
program given no filter is profiled for its first :data:`DEFAULT_PROGRAM_LAUNCH_COUNT` launches.
"""

from __future__ import annotations

from ncuwrap.core.errors import OptionError

from dataclasses import dataclass
from typing import Sequence

from ncuwrap.core.launch_selection import LaunchSelection
from ncuwrap.profile.console import ProfiledKernel
from ncuwrap.profile.ncu_argv import kernel_regex
from ncuwrap.profile.targets import Target

# A program (not a bundled benchmark) given no filter is profiled for its first launches only: a real
# application launches thousands of kernels and each profiled launch costs its replay passes (docs/profile.md counts them).
DEFAULT_PROGRAM_LAUNCH_COUNT = 10


@dataclass(frozen=True)
class LaunchFilter:
    """Which launches ncu profiles, and how to say which one each result is."""

    kernel: str | None = None  # regular expression
    launch_skip: int | None = None
    launch_count: int | None = None  # None: no limit
    nth_launch: int | None = None
    origin: str = "user"  # user | bundled | program-default | top
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
        if self.origin == "top":
            return f"the kernels with the most GPU time under nsys (--top): {self.why}"
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


def check_for_ncu(selection: LaunchSelection) -> None:
    """Refuse what of ``selection`` ncu cannot be asked for: ``process`` picks from a report's launches."""
    if selection.process is not None:
        raise OptionError(f"--process {selection.process}: picks the launches of one process of a report; ncu profiles the "
                          "processes --target-processes names (drop --process)")


def launch_filter(target: Target, selection: LaunchSelection = LaunchSelection()) -> LaunchFilter:
    """The filter for ``target``: the user's ``selection`` (checked when it was made), else the bundled
    benchmark's, else a program default.

    ``launch_count`` 0 means no limit. A user's ``-k`` replaces a bundled variant's filter and skip.
    """
    check_for_ncu(selection)
    kernel, launch_skip, launch_count, nth_launch = selection.kernel, selection.launch_skip, selection.launch_count, selection.nth_launch
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
class ProfiledLaunch:
    """A launch ncu profiled, with its replay passes and which launch it was in words; from :func:`profiled_launches`, for the profile's summary."""
    index: int
    kernel: str
    passes: int | None
    launch: str  # which launch it was, in words

    def to_json(self) -> dict:
        return {"index": self.index, "kernel": self.kernel, "passes": self.passes, "launch": self.launch}


def total_passes(passes: Sequence[int | None]) -> int | None:
    """The replay passes of all profiled launches (None when any is unknown, or there is none)."""
    return sum(passes) if passes and all(p is not None for p in passes) else None


def profiled_launches(frame, console: Sequence[ProfiledKernel], filt: LaunchFilter) -> list[ProfiledLaunch]:
    """One entry per profiled result of the report (``frame``: one row each): its kernel, passes (ncu's
    console, when it names as many kernels, else the report's profiler__replayer_passes) and which launch it was."""
    matched = console if len(console) == len(frame) else None
    out = []
    for i in range(len(frame)):
        name = str(frame["name"].iat[i])
        passes = matched[i].passes if matched else None
        if passes is None and "profiler__replayer_passes" in frame:
            value = frame["profiler__replayer_passes"].iat[i]
            try:
                passes = int(float(value))
            except (TypeError, ValueError):
                passes = None
        out.append(ProfiledLaunch(i, name, passes, filt.describe(i, name)))
    return out
