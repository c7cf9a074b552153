"""Which launches a diagnosis keeps, or ncu profiles (``-k``, ``--launch-skip``, ``--launch-count``,
``--process``, ``--nth-launch``), as one value the command line, the API and the workflows below them pass
on whole. Matching the names is :mod:`ncuwrap.core.kernel_filter`'s (RE2, numpy); this module imports neither,
since the value is made before any work starts."""

from __future__ import annotations

from dataclasses import dataclass

from ncuwrap.core.errors import OptionError


def quoted(text: str) -> str:
    """A pattern or name as messages quote it: repr, cut after 60 characters."""
    return repr(text) if len(text) <= 60 else repr(text[:60]) + "..."


@dataclass(frozen=True)
class LaunchSelection:
    """Which launches a diagnosis keeps, as ncu would have profiled them, or which ones ``ncuwrap profile``
    has ncu profile (``-k``, ``--launch-skip``, ``--launch-count``, ``--process``, ``--nth-launch``).

    A report's launches: the processes (``process``: a process ID or name), then the kernels
    (``kernel``, a regular expression), then ``launch_skip`` and ``launch_count``, which count only the
    launches that matched (launch order). ``None`` is the default: for a report, no skip and no limit;
    for ``ncuwrap profile``, the target's (:func:`ncuwrap.profile.launches.launch_filter`). ``nth_launch``
    (the Nth launch of each distinct kernel) is ncu's to pick: profile only.

        >>> LaunchSelection(kernel="gemm", launch_skip=2, launch_count=1)   # -k gemm -s 2 -c 1
    """

    kernel: str | None = None
    launch_skip: int | None = None
    launch_count: int | None = None  # 0: no limit
    process: str | None = None
    nth_launch: int | None = None

    def __post_init__(self):
        if self.launch_skip is not None and self.launch_skip < 0:
            raise OptionError(f"--launch-skip must be 0 or more (got {self.launch_skip})")
        if self.launch_count is not None and self.launch_count < 0:
            raise OptionError(f"--launch-count must be 0 (no limit) or more (got {self.launch_count})")
        if self.nth_launch is not None and self.launch_skip:
            raise OptionError("--nth-launch and --launch-skip exclude each other: --nth-launch N already picks the Nth launch of each kernel")
        if self.nth_launch is not None and self.nth_launch < 1:
            raise OptionError(f"--nth-launch must be 1 or more (got {self.nth_launch})")

    @property
    def active(self) -> bool:
        """Whether a report's launches are filtered at all."""
        return bool(self.kernel or self.launch_skip or self.launch_count or self.process)

    @property
    def flags(self) -> tuple[str, ...]:
        """The options given, by flag, for messages that refuse them where they do not apply."""
        given = (("--kernel", self.kernel), ("--launch-skip", self.launch_skip), ("--launch-count", self.launch_count),
                 ("--process", self.process), ("--nth-launch", self.nth_launch is not None))
        return tuple(flag for flag, value in given if value)

    def describe(self) -> str:
        """The options, as given on the command line."""
        parts = []
        if self.process:
            parts.append(f"--process {self.process}")
        if self.kernel:
            parts.append(f"-k {quoted(self.kernel)}")
        if self.launch_skip:
            parts.append(f"--launch-skip {self.launch_skip}")
        if self.launch_count:
            parts.append(f"--launch-count {self.launch_count}")
        return " ".join(parts)
