"""The size formulas of the benchmark manifest: ncuwrap.core.expr's formula mode, arithmetic only, never eval."""

from __future__ import annotations

import pytest

from ncuwrap.bundled.formula import FormulaError, parse_formula
from ncuwrap.core.errors import NcuwrapError
from ncuwrap.core.expr import FORMULA, ExpressionError, parse


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
        ("n > 1 and n < 3", "BoolOp is not allowed"),
        ("not n", "Not is not allowed"),
        ("max(n, 2)", "Call is not allowed"),
        ('metric("dram__bytes.sum")', "Call is not allowed"),
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


def test_byte_counts_stay_exact_integers():
    """Python integers (numpy's int64 would wrap past 2**63), and a float only where / is used."""
    value = parse_formula("2 ** 40 * n * k").evaluate({"n": 2**20, "k": 2**10})
    assert value == 2**70 and type(value) is int
    assert type(parse_formula("n / 2").evaluate({"n": 4})) is float


def test_formulas_are_the_rule_language_in_formula_mode():
    expression = parse("2 * rows * cols * 4", mode=FORMULA)
    assert expression.names == ("rows", "cols")
    assert expression.calculate({"rows": 3, "cols": 5}) == 120
    assert parse_formula("2 * rows * cols * 4").expression.names == expression.names
    with pytest.raises(ExpressionError, match=r"^formula 'true \+ 1': unknown size true$"):
        parse("true + 1", mode=FORMULA).calculate({})  # in a formula every name is a size
    assert parse("max(a, 1) > 0").names == ("a",)  # the rule language keeps its functions
