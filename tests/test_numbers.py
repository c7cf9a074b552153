"""The one place a value is cleaned for a document (ncuwrap.core.numbers): the whole-column paths give
exactly what the one-value path gives, so a 10,000-launch report reads the same as a small one."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ncuwrap.core.numbers import clean, clean_all, round4
from tests.conftest import H200


def _same(got: list, want: list) -> bool:
    # repr tells 0.0 from -0.0 and 1 from 1.0, as the JSON text does.
    return [repr(x) for x in got] == [repr(x) for x in want]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=50))
def test_round4_is_round_on_any_finite_float(values):
    array = np.array(values, dtype=float)
    assert _same(round4(array), [round(v, 4) for v in values])


def test_round4_on_decimal_ties_as_ncu_prints_them():
    # ncu prints up to 6 decimals: "12.34565" lies on a 4-decimal tie in decimal, and which way
    # round() goes depends on the float just below or above it: the product v * 1e4 must not decide.
    values = np.array([float(f"{i}.{j:05d}") for i in (0, 1, 12, 99, 4095) for j in range(5, 100_000, 10)])
    assert _same(round4(values), [round(v, 4) for v in values.tolist()])


def test_round4_past_two_to_the_52():
    values = np.array([4.5e11 + 0.00005, 2.0**52 / 1e4, 1e16 + 2, -1e300, 1.7e308, 5e-324, -0.0])
    assert _same(round4(values), [round(v, 4) for v in values.tolist()])


def test_clean_all_is_clean_on_every_column_of_a_real_export():
    import pandas as pd

    frame = pd.read_csv(H200 / "transpose" / "transposeNaive.raw.csv", skiprows=[1], low_memory=False)
    columns = [c for c in frame.columns if frame[c].dtype.kind == "f"]
    assert len(columns) > 500
    mixed = np.array([1.5, np.nan, 2.0, 2.0**60, -np.inf, 0.123456, -0.0])
    for values in [frame[c].to_numpy() for c in columns] + [mixed, mixed[::-1]]:
        assert _same(clean_all(values), [clean(v) for v in values.tolist()])
