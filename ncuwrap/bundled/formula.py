"""Size formulas of the benchmark manifest (``bytes``, ``flops``, ``launches_per_run``).

They are :mod:`ncuwrap.core.expr` expressions in formula mode (numbers, size names, ``+ - * / **``, unary
minus and parentheses; never ``eval``); this module only gives them the manifest's error type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ncuwrap.core.errors import InputError
from ncuwrap.core.expr import FORMULA, Expression, ExpressionError, Number, parse


class FormulaError(InputError):
    """A formula that is not valid, uses something other than arithmetic, or names an unknown size."""


@dataclass(frozen=True)
class Formula:
    """A parsed formula. ``names`` are the size names it uses."""

    expression: Expression

    @property
    def text(self) -> str:
        return self.expression.text

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.expression.names)

    def evaluate(self, sizes: Mapping[str, Number]) -> Number:
        """The value for these sizes (ints stay ints unless ``/`` is used)."""
        try:
            return self.expression.calculate(sizes)
        except ExpressionError as exc:
            raise FormulaError(str(exc)) from None


def parse_formula(text: str | int | float) -> Formula:
    """Parse ``text`` (a number is accepted as its own formula); raise FormulaError when it is not allowed."""
    try:
        return Formula(parse(text, mode=FORMULA))
    except ExpressionError as exc:
        raise FormulaError(str(exc)) from None
