"""Fuzz of the op model's input surface (ncuwrap.timeline.oplimits): SYNTHETIC shapes texts, labelled so.

A trace's op shapes reach the FLOP and byte counts: absurd dims, 0-size and negative sizes, products past any
double, unknown dtypes, texts of any layout. Whatever they hold, the counting ends without raising, and every
count is an integer or said unknown, never NaN or infinite.
"""

from __future__ import annotations

import math

import json
from hypothesis import given
from hypothesis import strategies as st

from ncuwrap.timeline.oplimits import counts as C
from ncuwrap.timeline.oplimits.inputs import parse
from tests.test_fuzz import fuzz

DIMS = st.lists(st.one_of(st.integers(-2, 8), st.integers(0, 2**64), st.floats(allow_nan=True), st.text(max_size=3), st.booleans(),
                          st.none()), max_size=6)
TYPES = st.sampled_from(["float", "c10::BFloat16", "c10::Half", "c10::Float8_e4m3fn", "double", "int", "long int", "bool",
                         "c10::qint8", "", "Scalar", "TensorList", "??"])
NAMES = st.sampled_from(sorted(C.COUNTERS) + ["aten::unknown_op", ""])


@st.composite
def shapes_texts(draw):
    n = draw(st.integers(0, 5))
    dims = [draw(DIMS) for _ in range(n)]
    types = [draw(TYPES) for _ in range(n)]
    strides = [draw(DIMS) for _ in range(n)]
    concrete = [draw(st.one_of(st.just(""), st.integers(-10, 10), st.booleans(), st.text(max_size=4))) for _ in range(n)]
    doc = draw(st.sampled_from(["ok", "ok", "short", "nested"]))
    if doc == "short":
        return json.dumps([dims, types])
    if doc == "nested":
        return json.dumps([[dims], types, strides, concrete])
    return json.dumps([dims, types, strides, concrete])


def _finite(value) -> bool:
    return value is None or isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


@fuzz(300)
@given(name=NAMES, text=shapes_texts(), hint=st.one_of(st.none(), TYPES))
def test_fuzz_op_counts(name, text, hint):
    inputs = parse(text)
    work = C.count(name, inputs, hint)
    if work is None or isinstance(work, C.NotModelled):
        return
    assert _finite(work.flop) and _finite(work.bytes)
    assert (work.flop or 0) >= 0 and (work.bytes or 0) >= 0
