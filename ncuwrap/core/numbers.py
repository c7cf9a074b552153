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
    if values.dtype.kind != "f":  # texts and None pass through clean() as they are: no call for them
        return [v if v is None or type(v) is str else clean(v) for v in values.tolist()]
    finite = np.isfinite(values)
    whole = finite & (values == np.round(values))
    # 0: no number, 1: a whole number under 2**53 (an int), 2: one past it (as it is: round() would
    # give it back unchanged), 3: rounded to 4 decimals.
    kind = np.where(whole, np.where(np.abs(values) < 2**53, 1, 2), np.where(finite, 3, 0))
    # Columns of one kind (counters: whole numbers; percentages: fractions) in one pass.
    if (kind == 1).all():
        return values.astype(np.int64).tolist()
    if (kind == 3).all():
        return round4(values)
    if (kind == 0).all():
        return [None] * len(values)
    rounded = round4(np.where(kind == 3, values, 0.0))
    kind = kind.tolist()
    return [(r if k == 3 else int(v) if k == 1 else v if k == 2 else None) for v, r, k in zip(values.tolist(), rounded, kind)]


def round4(values: np.ndarray) -> list[float]:
    """``[round(v, 4) for v in values]`` (finite values), the same floats by whole arrays.

    round() picks the integer nearest to v * 10**4 computed exactly and divides it by 10**4 correctly
    rounded; numpy's product v * 1e4 is itself rounded, which can move it across a half only when it
    lies within its own rounding error of one (or past 2**52, where every float is whole): those
    values go through round() itself. The division is IEEE's, correctly rounded as round()'s is."""
    with np.errstate(over="ignore", invalid="ignore"):  # past 1.8e304 the product is inf: round() takes those
        scaled = values * 1e4
        magnitude = np.abs(scaled)
        risky = (np.abs(np.abs(scaled - np.trunc(scaled)) - 0.5) <= magnitude * 1e-15) | ~(magnitude < 2.0**52)
        out = (np.rint(scaled) / 1e4).tolist()
    for i in np.flatnonzero(risky).tolist():
        out[i] = round(float(values[i]), 4)
    return out


def pct(part, whole) -> float:
    """``part`` as a share (%) of ``whole``; NaN when ``whole`` is zero or missing."""
    return 100.0 * float(part) / float(whole) if whole else math.nan


# numpy's median of floats, its percentiles and np.unique check for NaN or a mask through numpy.ma, whose first import
# is a visible share of a small capture's timeline (docs/scale.md, figures behind the code): these give the same numbers without it
# (tests/test_numbers_quantiles.py).

def median(values) -> float:
    """``np.median(values)`` of a 1-D sequence of numbers (NaN if any is NaN; NaN for none)."""
    a = np.asarray(values)
    n = a.size
    if not n or (a.dtype.kind == "f" and np.isnan(a).any()):
        return math.nan
    k = n // 2
    if n % 2:
        return float(np.partition(a, k)[k])
    part = np.partition(a, [k - 1, k])
    return (float(part[k - 1]) + float(part[k])) / 2  # numpy's mean of the two middle values


def percentile(values, q: float) -> float:
    """``np.percentile(values, q)`` (its default, linear interpolation) of a 1-D sequence of numbers
    without NaN: numpy's index and interpolation, step for step."""
    a = np.asarray(values)
    n = a.size
    if not n:
        return math.nan
    quantile = q / 100
    virtual = (n - 1) * quantile  # numpy's virtual index for its linear method
    below = math.floor(virtual)
    gamma = virtual - below
    low, high = min(max(below, 0), n - 1), min(max(below + 1, 0), n - 1)
    part = np.partition(a, sorted({low, high}))
    lo, hi = part[low], part[high]
    diff = hi - lo
    # numpy's lerp: from the nearer end, so that the result never passes it.
    return float(hi - diff * (1 - gamma)) if gamma >= 0.5 else float(lo + diff * gamma)


def distinct(values) -> np.ndarray:
    """``np.unique(values)`` of a 1-D array without NaN (the sorted distinct values); np.unique asks
    numpy.ma whether the array is masked, and imports it to ask."""
    a = np.sort(np.asarray(values).ravel())
    if a.size < 2:
        return a
    keep = np.empty(a.size, dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]
