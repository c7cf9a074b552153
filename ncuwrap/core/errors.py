"""One error hierarchy for the whole library; only the CLI turns it into exit codes.

Every message is a single line that names the file (or tool) involved and says what to do.
"""

from __future__ import annotations


class NcuwrapError(Exception):
    """Base of every error ncuwrap reports to the user. ``exit_code`` is used by the CLI."""

    exit_code = 2


class InputError(NcuwrapError):
    """A report, CSV or timeline that cannot be read: missing, empty, truncated or of the wrong kind."""


class RulesError(NcuwrapError):
    """A rules file that is not valid YAML or not a valid decision tree."""


class OptionError(NcuwrapError):
    """Profiling options that cannot work together or are out of range (--nth-launch with --launch-skip,
    --collect of no known section, an ncu option ncuwrap sets itself...), said before anything runs."""


class ToolNotFoundError(NcuwrapError):
    """An external tool (ncu, nsys, nvcc) is missing or too old."""


class ProfilerError(NcuwrapError):
    """The profiler or the profiled program failed."""


class BuildError(NcuwrapError):
    """A bundled benchmark failed to compile."""


class BenchError(NcuwrapError):
    """A benchmark run failed or produced wrong results."""


class OutputExistsError(NcuwrapError):
    """Refusing to overwrite an existing output without --force."""


class ClusterError(NcuwrapError):
    """The Dask cluster that analyses rank captures cannot be reached or started."""
