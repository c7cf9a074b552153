"""Comparing the verdicts of two collections of the same launches (``--collect targeted`` against
``--collect full``): what must not change between them."""

from __future__ import annotations


def verdicts(diagnosis) -> list[dict]:
    """What must not change between two collections of the same launches: per kernel, the bound,
    the limiter and the findings (ids; severities are listed apart, they may move with a threshold)."""
    return [{"kernel": k.name, "bound": k.bound, "limiter": k.limiter, "findings": sorted(f.id for f in k.findings),
             "severities": {f.id: f.severity for f in k.findings}} for k in diagnosis.kernels]


def same_verdicts(a, b) -> bool:
    """True when two diagnoses give every kernel the same bound, limiter and findings."""
    strip = lambda rows: [{k: v for k, v in row.items() if k != "severities"} for row in rows]  # noqa: E731
    return strip(verdicts(a)) == strip(verdicts(b))
