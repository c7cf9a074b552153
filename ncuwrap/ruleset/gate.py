"""A comparison's gate, the same for two kernel reports and two timelines: a slowdown past the threshold
fails it, and so does a finding a change introduced, by its severity (``--fail-on-finding``); what the
gate says of itself in a sentence. Kernel and timeline comparisons (ncuwrap.kernel.compare,
ncuwrap.timeline.compare) both apply it."""

from __future__ import annotations

from ncuwrap.core.errors import InputError
from ncuwrap.ruleset.outcome import SEVERITY_ORDER

DEFAULT_THRESHOLD_PCT = 5.0
# --fail-on-finding not given (None): a finding introduced at DEFAULT_GATING_SEVERITY or worse is a
# regression only where the change did not make the kernel measurably faster (by more than the
# threshold). A change that fixes one waste often exposes the next (transposeNaive -> transposeShared:
# 2.6x faster, bank conflicts appear), and such a win must pass a gate. Given, a level always counts.
DEFAULT_FAIL_ON_FINDING = None
DEFAULT_GATING_SEVERITY = "high"
FAIL_ON_FINDING_CHOICES = ("high", "medium", "low", "none")


def gates_on(severity: str, fail_on_finding: str | None, faster: bool = False) -> bool:
    """Whether a finding of ``severity`` introduced by a change fails the gate (``faster``: the change made
    the kernel, or the step, measurably faster). at_roofline (info) appearing is good news, and minor
    findings cost little time: never."""
    if fail_on_finding == "none" or severity in ("info", "minor") or (fail_on_finding is None and faster):
        return False
    return SEVERITY_ORDER.get(severity, 9) <= SEVERITY_ORDER[fail_on_finding or DEFAULT_GATING_SEVERITY]


def introduced_gate(fail_on_finding: str | None, threshold_pct: float, what: str = "kernel") -> str:
    """How a comparison's gate counts the findings a change introduced: the end of its sentence."""
    if fail_on_finding == "none":
        return " (findings introduced do not count)"
    level = fail_on_finding or DEFAULT_GATING_SEVERITY
    severity = "a HIGH finding" if level == "high" else f"a finding of severity {level} or worse"
    if fail_on_finding is None:
        return f", or {severity} introduced to a {what} not more than {threshold_pct:g}% faster"
    return f", or {severity} introduced"


def measurably_faster(speedup: float | None, threshold_pct: float) -> bool:
    """Faster by more than the threshold: the same band of noise a slowdown must leave to count."""
    return speedup is not None and speedup > 1.0 + threshold_pct / 100.0


# A slowdown threshold past this many percent (11x slower) gates nothing a CI job would mean.
MAX_THRESHOLD_PCT = 1000.0


def check_threshold(threshold_pct: float) -> float:
    """``--threshold``: a finite percentage in [0, MAX_THRESHOLD_PCT]. NaN compares false with
    everything, so 'nan' would silently pass every slowdown (a 161% one in the hostile-input review)."""
    if not (isinstance(threshold_pct, (int, float)) and 0 <= threshold_pct <= MAX_THRESHOLD_PCT):
        raise InputError(f"--threshold {threshold_pct!s:.24}: a slowdown threshold is a percentage from 0 to {MAX_THRESHOLD_PCT:g} "
                         f"(default {DEFAULT_THRESHOLD_PCT:g})")
    return threshold_pct
