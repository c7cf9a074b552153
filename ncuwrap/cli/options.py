"""The options more than one command takes, each declared once with one help text, and the values they
make: :class:`~ncuwrap.core.rules_choice.RulesChoice` (``--rules``, ``--extend``),
:class:`~ncuwrap.core.launch_selection.LaunchSelection` (``-k``, ``--launch-skip``, ``--launch-count``,
``--process``, ``--nth-launch``) and :class:`~ncuwrap.timeline.options.TimelineOptions` (``--step-range``,
``--warmup``, ``--steps``, ``--nsys-path``), the same values the API functions take.

A command names an option by its alias (``rules: Rules = None``); an option only one command has is
declared in that command's module. A flag that means different things to different commands (``--force``:
replace an output, or rebuild a benchmark) is declared once per meaning, as :data:`MEANINGS` lists;
tests/test_cli_options.py checks that no flag is declared anywhere else twice.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from ncuwrap.core.launch_selection import LaunchSelection
from ncuwrap.render import Format
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.timeline.options import FIND_CHOICES, TimelineOptions

# --names: how kernel names are shown (ncuwrap.render.names), in the words of ncu's --print-kernel-base.
NamesStyle = Enum("NamesStyle", {name: name for name in ("short", "function", "demangled")}, type=str)
# --steps: how a capture's steps are found (ncuwrap.timeline.options.FIND_CHOICES).
StepsFind = Enum("StepsFind", {name: name for name in FIND_CHOICES}, type=str)


class ListFormat(str, Enum):
    """The formats of ``ncuwrap list`` and ``ncuwrap bench``: a table or JSON."""

    table = "table"
    json = "json"


# The rules: RulesChoice.
Rules = Annotated[Optional[Path], typer.Option(
    "--rules", help="Rules YAML replacing the bundled rules (see rules/reference.yaml; for timelines rules/timeline.yaml).")]
Extend = Annotated[bool, typer.Option("--extend", help="Add --rules to the bundled rules instead of replacing them.")]

# The launches: LaunchSelection.
Kernel = Annotated[Optional[str], typer.Option(
    "--kernel", "-k", "--kernel-name", help="Only kernels whose name matches this regular expression ('regex:' prefix accepted, as ncu's).")]
LaunchSkip = Annotated[Optional[int], typer.Option(
    "--launch-skip", "-s", show_default=False,
    help="Skip the first N launches that match -k (and --process, in a report). ncu counts ONLY launches that match -k: with -k 'add', "
         "--launch-skip 6 picks the 7th launch of a kernel matching 'add', however many other kernels ran in between. "
         "Default: 0; 'ncuwrap profile' of a bundled benchmark: its first timed launch.")]
LaunchCount = Annotated[Optional[int], typer.Option(
    "--launch-count", "-c", show_default=False,
    help="Keep at most N launches that match -k (and --process), after --launch-skip; 0 = no limit. Default: all; "
         "'ncuwrap profile': 1 for a bundled benchmark, 10 for a program.")]
Process = Annotated[Optional[str], typer.Option(
    "--process", help="Only launches of this process (its ID or name), where the report holds several.")]
NthLaunch = Annotated[Optional[int], typer.Option(
    "--nth-launch", show_default=False,
    help="Profile the Nth launch (1 = first) of EVERY distinct kernel matching -k, instead of --launch-skip: "
         "ncu's --kernel-id ::regex:K:N, counted per kernel and launch configuration (grid, block, shared memory), "
         "so one kernel's warm-up never hides another kernel.")]

# The timeline: TimelineOptions.
StepRange = Annotated[Optional[str], typer.Option(
    "--step-range", help="The NVTX range name (a regular expression) marking one iteration (default: a name with the word 'step', "
                         "or ProfilerStep#N); the verdict is of the steady steps.")]
Warmup = Annotated[Optional[int], typer.Option(
    "--warmup", min=0, help="How many leading steps are warm-up, left out of the verdict (default: detected, the first steps "
                            "slower than 1.5x the later ones' median).")]
Steps = Annotated[StepsFind, typer.Option(
    "--steps", help="How the steps are found: auto (NVTX ranges named like a step, else found by repetition of the launches), "
                    "marked (NVTX ranges only), none (no steps: the window from the first GPU work to the last is judged).")]
NsysPath = Annotated[Optional[str], typer.Option(
    "--nsys-path", help="The nsys to run, or to export a .nsys-rep to SQLite with (default: nsys on PATH).")]
NsysTrace = Annotated[Optional[str], typer.Option(
    "--nsys-trace", show_default=False, metavar="LIST",
    help="nsys's --trace list when ncuwrap runs nsys (timeline -- PROGRAM, profile --nsys or --top; default: cuda,nvtx,osrt); "
         "must include cuda, e.g. cuda,nvtx,osrt,cublas.")]
NsysArgs = Annotated[Optional[List[str]], typer.Option(
    "--nsys-arg", show_default=False, metavar="ARG",
    help="Any other nsys profile argument when ncuwrap runs nsys (as --nsys-trace), one word each (repeatable), passed just "
         "before the program; options ncuwrap sets itself are refused.")]

# The tools, the output, the terminal.
Ncu = Annotated[Optional[str], typer.Option(
    "--ncu", help="The ncu to run, or whose extras/python reads a .ncu-rep when the ncu-report package is missing (default: ncu on PATH).")]
Arch = Annotated[Optional[str], typer.Option(
    "--arch", help="The GPU architecture to build a bundled benchmark for, e.g. sm_90 (default: GPU 0's, else sm_90).")]
AllBenchmarks = Annotated[bool, typer.Option("--all", help="Every bundled benchmark, instead of NAME.")]
OutputFormat = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
ListOutputFormat = Annotated[ListFormat, typer.Option("--format", "-f", help="What to print on stdout.")]
Names = Annotated[NamesStyle, typer.Option(
    "--names", help="How kernel names are shown: short (the function, template arguments as ‹…›, told apart where two would read "
                    "the same), function (with its template arguments), demangled (the whole signature). JSON always has them whole.")]
# -o has one meaning in every command (docs/cli/README.md): where the output goes. Given a report or capture to
# read, the one file the output is written to; given a program to run, the run folder that keeps its files.
Output = Annotated[Optional[Path], typer.Option(
    "--output", "-o", show_default=False,
    help="Where the output goes. Given a report or capture (diagnose, compare, timeline FILE or --ranks DIR): the file "
         "the output is written to instead of stdout, whole, never an input. Given a program to run (profile, timeline -- "
         "PROGRAM, --per-rank): the run folder (default: ncuwrap-runs/<target>-<time>; a timeline's, "
         "ncuwrap-runs/timeline-<time>). Nothing there is replaced without --force.")]
Replace = Annotated[bool, typer.Option("--force", help="Replace the --output file, or the files of the --output run folder, if there.")]
ReplaceOutput = Annotated[bool, typer.Option("--force", help="Replace the --output file if it exists.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Show no progress on stderr (none is shown when stderr is not a terminal).")]

# Flags declared more than once, here, one alias per meaning (the commands' own modules declare the
# others: 'ncuwrap bench -o' writes a copy of its JSON, 'rules metrics --format' has its own choices).
MEANINGS = {
    "--output": ("Output", "bench's copy of the JSON"),
    "-o": ("Output", "bench's copy of the JSON"),
    "--force": ("Replace", "ReplaceOutput", "build's rebuild"),
    "--format": ("OutputFormat", "ListOutputFormat", "rules metrics' format"),
    "-f": ("OutputFormat", "ListOutputFormat", "rules metrics' format"),
    "--all": ("AllBenchmarks", "rules metrics' every name"),
    "--warmup": ("Warmup", "bench's warm-up launches"),
}


def rules_choice(rules: Path | None, extend: bool) -> RulesChoice:
    """``--rules``, ``--extend``."""
    return RulesChoice(rules, extend=extend)


def launch_selection(kernel: str | None = None, launch_skip: int | None = None, launch_count: int | None = None,
                     process: str | None = None, nth_launch: int | None = None) -> LaunchSelection:
    """``-k``, ``--launch-skip``, ``--launch-count``, ``--process``, ``--nth-launch``."""
    return LaunchSelection(kernel=kernel, launch_skip=launch_skip, launch_count=launch_count, process=process, nth_launch=nth_launch)


def timeline_options(step_range: str | None = None, warmup: int | None = None, steps: StepsFind | str = "auto",
                     nsys: str | None = None) -> TimelineOptions:
    """``--step-range``, ``--warmup``, ``--steps``, ``--nsys-path``."""
    return TimelineOptions(step_range=step_range, warmup=warmup, steps=getattr(steps, "value", steps), nsys=nsys)
