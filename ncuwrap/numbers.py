"""JSON-ready numbers: the one place a value is cleaned for a document (None for NaN/inf, int for
whole numbers, 4 decimals otherwise)."""

from __future__ import annotations

import math

import numpy as np


def clean(value):
    """One value as a JSON document holds it; text and None pass through."""
    if value is None:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
        return round(value, 4)
    return value


def clean_all(values: np.ndarray) -> list:
    """:func:`clean` over a whole column at once (per-element numpy access dominates large reports)."""
    if values.dtype.kind != "f":
        return [clean(v) for v in values.tolist()]
    finite = np.isfinite(values)
    whole = finite & (values == np.round(values)) & (np.abs(values) < 2**53)
    return [int(v) if w else (round(v, 4) if f else None) for v, f, w in zip(values.tolist(), finite.tolist(), whole.tolist())]
