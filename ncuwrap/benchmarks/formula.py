"""Safe arithmetic formulas of problem sizes, as used by the benchmark manifest (``bytes``, ``flops``...).

A formula is parsed with :mod:`ast` and only numbers, size names, ``+ - * / **``, unary minus and
parentheses are accepted: no attribute access, calls, subscripts or anything else, and it is evaluated
by walking the tree (never with ``eval``).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field

from ncuwrap.errors import InputError

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_MAX_EXPONENT = 64  # 2 ** 64 is plenty for sizes; refuses 10 ** 10 ** 10


class FormulaError(InputError):
    """A formula that is not valid, uses something other than arithmetic, or names an unknown size."""


Number = int | float


@dataclass(frozen=True)
class Formula:
    """A parsed formula. ``names`` are the size names it uses."""

    text: str
    names: frozenset[str]
    _tree: ast.expr = field(repr=False, compare=False)

    def evaluate(self, sizes: Mapping[str, Number]) -> Number:
        """The value for these sizes (ints stay ints unless ``/`` is used)."""
        missing = sorted(self.names - set(sizes))
        if missing:
            raise FormulaError(f"formula {self.text!r}: unknown size {', '.join(missing)}")
        return _evaluate(self._tree, sizes, self.text)


def parse_formula(text: str | int | float) -> Formula:
    """Parse ``text`` (a number is accepted as its own formula); raise FormulaError when it is not allowed."""
    if isinstance(text, bool):
        raise FormulaError(f"formula {text!r}: expected arithmetic text, got a boolean")
    if isinstance(text, (int, float)):
        text = str(text)
    if not isinstance(text, str) or not text.strip():
        raise FormulaError(f"formula {text!r}: expected a non-empty arithmetic expression")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise FormulaError(f"formula {text!r}: not valid arithmetic ({exc.msg})") from None
    names: set[str] = set()
    _check(tree, text, names)
    return Formula(text=text, names=frozenset(names), _tree=tree)


def _check(node: ast.AST, text: str, names: set[str]) -> None:
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        _check(node.left, text, names)
        _check(node.right, text, names)
    elif isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        _check(node.operand, text, names)
    elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
        pass
    elif isinstance(node, ast.Name):
        names.add(node.id)
    else:
        what = type(node).__name__
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            what = type(node.op).__name__
        raise FormulaError(
            f"formula {text!r}: {what} is not allowed (only numbers, size names, + - * / ** and parentheses)"
        )


def _evaluate(node: ast.expr, sizes: Mapping[str, Number], text: str) -> Number:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return sizes[node.id]
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, sizes, text))
    assert isinstance(node, ast.BinOp)  # guaranteed by _check
    left = _evaluate(node.left, sizes, text)
    right = _evaluate(node.right, sizes, text)
    if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
        raise FormulaError(f"formula {text!r}: exponent {right} is larger than {_MAX_EXPONENT}")
    if isinstance(node.op, ast.Div) and right == 0:
        raise FormulaError(f"formula {text!r}: division by zero")
    return _BINARY[type(node.op)](left, right)
