"""The size-formula evaluator of the benchmark manifest: arithmetic only, never eval."""

from __future__ import annotations

import pytest

from ncuwrap.benchmarks.formula import FormulaError, parse_formula
from ncuwrap.errors import NcuwrapError


@pytest.mark.parametrize(
    ("text", "sizes", "value"),
    [
        ("2 * rows * cols * 4", {"rows": 4096, "cols": 4096}, 134217728),
        ("2 * m * n * k", {"m": 2, "n": 3, "k": 5}, 60),
        ("4 * (m * k + k * n + m * n)", {"m": 1, "n": 2, "k": 3}, 44),
        ("n / 4", {"n": 10}, 2.5),
        ("2 ** 10 - n", {"n": 24}, 1000),
        ("-n + 3", {"n": 1}, 2),
        ("0", {}, 0),
        (7, {}, 7),
        ("1.5 * n", {"n": 2}, 3.0),
    ],
)
def test_evaluates_arithmetic(text, sizes, value):
    assert parse_formula(text).evaluate(sizes) == value


def test_names_are_collected():
    assert parse_formula("2 * rows * cols + rows").names == frozenset({"rows", "cols"})


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("n.__class__", "Attribute is not allowed"),
        ("__import__('os').system('true')", "Call is not allowed"),
        ("abs(n)", "Call is not allowed"),
        ("n[0]", "Subscript is not allowed"),
        ("n if n else 1", "IfExp is not allowed"),
        ("n // 2", "FloorDiv is not allowed"),
        ("n % 2", "Mod is not allowed"),
        ("lambda: 1", "Lambda is not allowed"),
        ("'a' * 3", "Constant is not allowed"),
        ("True + 1", "Constant is not allowed"),
        ("[n]", "List is not allowed"),
        ("n < 3", "Compare is not allowed"),
        ("2 *", "not valid arithmetic"),
        ("", "non-empty"),
    ],
)
def test_rejects_anything_but_arithmetic(text, match):
    with pytest.raises(FormulaError, match=match):
        parse_formula(text)


def test_errors_are_ncuwrap_errors():
    with pytest.raises(NcuwrapError):
        parse_formula("open('x')")


def test_unknown_size_at_evaluation():
    with pytest.raises(FormulaError, match="unknown size k"):
        parse_formula("m * k").evaluate({"m": 1})


def test_huge_exponent_and_division_by_zero_are_refused():
    with pytest.raises(FormulaError, match="exponent"):
        parse_formula("10 ** 10 ** 10").evaluate({})
    with pytest.raises(FormulaError, match="division by zero"):
        parse_formula("n / (n - n)").evaluate({"n": 3})
