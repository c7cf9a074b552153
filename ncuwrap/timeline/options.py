"""How a timeline is read and cut into steps (``--step-range``, ``--warmup``, ``--steps``, ``--nsys-path``),
as one value the command line, the API and the timeline layers pass on whole."""

from __future__ import annotations

from dataclasses import dataclass

from ncuwrap.core.errors import OptionError

# How a capture's steps are found (--steps): NVTX ranges, else by repetition (auto); NVTX ranges only
# (marked); none (the window from the first GPU work to the last is judged).
FIND_CHOICES = ("auto", "marked", "none")
# The NVTX ranges that mark a step by default (--step-range sets another): a range named step, train_step,
# step 12, or torch.profiler's ProfilerStep#12 (ncuwrap.timeline.steps says how they are matched).
STEP_PATTERN = r"(?i)(?:^|[^a-z.])step(?:[^a-z]|$)|^ProfilerStep#"


@dataclass(frozen=True)
class TimelineOptions:
    """The options of a timeline's diagnosis (ncuwrap.timeline.steps says how steps are found).

    ``step_range``: the NVTX range name (a regular expression, RE2) marking one iteration (None: a name
    with the word 'step', or ProfilerStep#N); ``warmup``: how many leading steps are warm-up (None:
    detected); ``steps``: how steps are found, one of :data:`FIND_CHOICES`;
    ``nsys``: the nsys that exports a ``.nsys-rep`` to SQLite or captures a program (None: nsys on PATH).

        >>> TimelineOptions(step_range="train_step", warmup=2)   # --step-range train_step --warmup 2
    """

    step_range: str | None = None
    warmup: int | None = None
    steps: str = "auto"
    nsys: str | None = None

    def __post_init__(self):
        if self.steps not in FIND_CHOICES:
            raise OptionError(f"--steps {str(self.steps)[:40]!r}: expected one of {', '.join(FIND_CHOICES)}")
        object.__setattr__(self, "steps", str(getattr(self.steps, "value", self.steps)))
        if self.warmup is not None and self.warmup < 0:
            raise OptionError(f"--warmup must be 0 or more (got {self.warmup})")
        if self.step_range is not None:  # a pattern RE2 refuses is said before any capture is read
            check_pattern(self.step_range)

    @property
    def pattern(self) -> str:
        """The step pattern in use (``step_range``, else :data:`STEP_PATTERN`)."""
        return check_pattern(self.step_range)

    @property
    def flags(self) -> tuple[str, ...]:
        """The step options given, by flag (``--nsys-path`` apart: :attr:`nsys`), for messages that refuse them."""
        given = (("--step-range", self.step_range is not None), ("--warmup", self.warmup is not None), ("--steps", self.steps != "auto"))
        return tuple(flag for flag, value in given if value)


def check_pattern(pattern: str | None) -> str:
    """The step pattern to use (``pattern`` checked, or the default). RE2, as -k: NVTX names come from
    the capture, and a backtracking engine on a hostile pattern runs for minutes."""
    if pattern is None:
        return STEP_PATTERN
    from ncuwrap.core.kernel_filter import compile_filter  # RE2: not before a child is forked, unless needed

    compile_filter(pattern, "--step-range", "NVTX range name of a step")
    return pattern
