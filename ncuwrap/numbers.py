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
        if value.is_integer():
            # Past 2**53 a float is whole and round() would give it back unchanged, only slower.
            return int(value) if abs(value) < 2**53 else value
        return round(value, 4)
    return value


def clean_all(values: np.ndarray) -> list:
    """:func:`clean` over a whole column at once (per-element numpy access dominates large reports)."""
    if values.dtype.kind != "f":
        return [clean(v) for v in values.tolist()]
    finite = np.isfinite(values)
    whole = finite & (values == np.round(values))
    # 0: no number, 1: a whole number under 2**53 (an int), 2: one past it (as it is: round() would
    # give it back unchanged), 3: rounded to 4 decimals.
    kind = np.where(whole, np.where(np.abs(values) < 2**53, 1, 2), np.where(finite, 3, 0))
    # Columns of one kind (counters: whole numbers; percentages: fractions) in one pass.
    if (kind == 1).all():
        return values.astype(np.int64).tolist()
    if (kind == 3).all():
        return [round(v, 4) for v in values.tolist()]
    if (kind == 0).all():
        return [None] * len(values)
    kind = kind.tolist()
    return [(round(v, 4) if k == 3 else int(v) if k == 1 else v if k == 2 else None) for v, k in zip(values.tolist(), kind)]
