"""A timeline capture as the evaluator's metric source: one row, the capture's values.

The same decision tree as the kernel rules (ncuwrap.ruleset.evaluate) applies to it. A rule that reads a
quantity the capture does not have (no CUDA API trace...) is reported as not evaluated, with the
reason the analysis gave.
"""

from __future__ import annotations

import numpy as np

from ncuwrap.core.catalogue import Catalogue
from ncuwrap.timeline import metrics as timeline_metrics
from ncuwrap.core.numbers import clean


class CaptureValues:
    """A capture's metrics as the rules engine reads them (one row), with why each unknown one is missing."""
    n = 1

    def __init__(self, metrics: dict, unknown: dict, names: Catalogue = timeline_metrics.TIMELINE):
        self.values = metrics
        self.unknown = unknown  # name -> why the capture does not have it
        self.names = names  # the names' catalogue: TIMELINE, or RANKS for a set of ranks

    def _raw(self, name: str):
        return self.names.value(name, self.values)

    def lookup(self, name: str) -> np.ndarray:
        value = self._raw(name)
        if value is None or isinstance(value, str):
            return np.array([value], dtype=object)
        return np.array([float(value)])

    def value(self, name: str, row: int = 0):
        return clean(self._raw(name))

    def column(self, name: str) -> list:
        return [self.value(name)]

    def known(self, name: str) -> bool:
        return name in self.names

    def missing(self, names) -> list[str]:
        return [n for n in dict.fromkeys(names) if self.names.base_of(n) in self.unknown]

    def hint(self, missing: list[str]) -> str:
        by_reason: dict[str, list[str]] = {}
        for name in missing:
            by_reason.setdefault(self.unknown[self.names.base_of(name)], []).append(name)
        return "; ".join(f"{', '.join(names)} unknown: {why}" for why, names in by_reason.items())
