"""Nsight Compute's command lines as ncuwrap writes them: the profiling run (filters, clocks, the
collection, the options passed on) and the exports of a report.

Pure: the argv is the contract with the profiler, so it is built by functions the tests call without
a GPU and compared as exact argv (tests/test_profile_argv.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ncuwrap.core.errors import OptionError
from ncuwrap.profile.collection import Collection

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
