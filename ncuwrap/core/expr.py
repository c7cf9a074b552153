"""A small, safe expression language for rule conditions and the benchmark manifest's size formulas.

Conditions are written like Python comparisons (``gst_sectors_per_request > 1.5 * gst_ideal_sectors_per_request
and memory_pct >= 60``) but are never handed to ``eval``: the text is parsed with :mod:`ast` and only
the node types below are accepted; everything else (attributes, subscripts, lambdas, any call
other than the listed functions) is refused when the rules are loaded. Evaluation works on numpy
arrays, one element per kernel launch.

Names are canonical or derived metric names (see ncuwrap.kernel.metrics), constants from the rules file,
or ``metric("raw.ncu.name")`` for a raw metric.

Bounds, checked when the rules are loaded: the text's length, the nesting of the tree (parser and
evaluator recurse), the size of integer literals, and constant exponents of ``**``. Numbers are
evaluated as floats, never as Python or numpy integers (which overflow, wrap around or grow without
end: ``10**10**10``), so an evaluation is a fixed number of float operations per node.

``mode="formula"`` is the restricted language of the manifest's size formulas (``2 * rows * cols * 4``):
numbers, names, ``+ - * / **``, unary minus and parentheses only, evaluated by :meth:`Expression.calculate`
in Python arithmetic (ints stay ints unless ``/`` is used, as a byte count must).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ncuwrap.core.errors import RulesError

RULE = "rule"
FORMULA = "formula"

_BINOPS: dict[type, Callable] = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: lambda a, b: np.divide(a, np.where(b == 0, np.nan, b)),
    ast.Pow: np.power,
}
# Formulas compute byte and FLOP counts: Python's exact integers, never numpy's wrapping int64.
_SCALAR_BINOPS: dict[type, Callable] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_COMPARE: dict[type, Callable] = {
    ast.Lt: np.less,
    ast.LtE: np.less_equal,
    ast.Gt: np.greater,
    ast.GtE: np.greater_equal,
    ast.Eq: lambda a, b: np.asarray(a == b),
    ast.NotEq: lambda a, b: np.asarray(a != b),
}
_FUNCTIONS = {"max": np.fmax, "min": np.fmin, "abs": np.abs, "fallback": None}
_FORMULA_ONLY = "only numbers, size names, + - * / ** and parentheses"

# The bundled rules' longest condition is 195 characters and nests 7 deep; these leave room.
MAX_TEXT = 2000
MAX_DEPTH = 50
# Integers up to 2**53 are exact as floats, which is how they are evaluated.
MAX_INT = 2**53
# A constant exponent past this gives inf or 0 for any metric value worth comparing.
MAX_EXPONENT = 64


class ExpressionError(ValueError):
    """An expression that is not valid in the rule language (or, in formula mode, not arithmetic)."""


Number = int | float


@dataclass(frozen=True)
class Expression:
    """A rule's condition or a size formula, parsed and checked by :func:`parse` (no eval), evaluated over the metrics' arrays."""
    text: str
    tree: ast.AST
    names: tuple[str, ...]  # metric names it needs (constants excluded)
    optional: tuple[str, ...] = ()  # names read only as fallback(name, default): may be missing
    origin: str = ""  # "rules.yaml: finding 'x'", for errors found only when evaluating

    def evaluate(self, lookup: Callable[[str], np.ndarray], constants: dict[str, float]) -> np.ndarray:
        try:
            return _Evaluator(lookup, constants).visit(self.tree)
        except (TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
            # e.g. arithmetic on a text metric (memory_unit + 1): a fault of the rule, not of the report.
            raise RulesError(f"{self.origin or 'rule'}: cannot evaluate {self.text!r} ({exc}); fix the condition") from None

    def calculate(self, values: Mapping[str, Number]) -> Number:
        """A formula's value for these named numbers, in Python arithmetic; ExpressionError when it has none."""
        missing = sorted(set(self.names) - set(values))
        if missing:
            raise ExpressionError(f"formula {self.text!r}: unknown size {', '.join(missing)}")
        return _Evaluator(values.__getitem__, {}, scalar_of=self.text).visit(self.tree)


def _arithmetic(node: ast.AST) -> bool:
    """Whether a node may appear in a formula."""
    if isinstance(node, ast.BinOp):
        return type(node.op) in _BINOPS
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, (ast.USub, ast.UAdd))
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    return isinstance(node, (ast.Name, ast.Load, ast.operator, ast.unaryop))


def parse(text: str | int | float, constants: dict[str, float] | None = None, *, mode: str = RULE) -> Expression:
    """Parse and validate ``text``; raise ExpressionError naming the offending part.

    ``mode="formula"``: a size formula (a number is accepted as its own formula)."""
    formula = mode == FORMULA
    if formula and isinstance(text, (int, float)) and not isinstance(text, bool):
        text = str(text)
    if not isinstance(text, str) or not text.strip():
        raise _refusal(text, formula, "expected a non-empty arithmetic expression") if formula else ExpressionError("empty expression")
    if len(text.strip()) > MAX_TEXT:
        raise ExpressionError(f"the {'formula' if formula else 'condition'} is {len(text.strip()):,} characters long (at most {MAX_TEXT:,}); "
                              "split it or use constants")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise _refusal(text, formula, f"not valid arithmetic ({exc.msg})" if formula else f"syntax error ({exc.msg})") from None
    except (RecursionError, MemoryError):  # the parser's own limits on nesting ("not not not ...")
        raise ExpressionError(f"{text[:40]!r}... nests deeper than {MAX_DEPTH} levels; simplify it") from None
    if _depth(tree) > MAX_DEPTH:
        raise ExpressionError(f"{text[:40]!r}... nests deeper than {MAX_DEPTH} levels (a + b + ... counts one level per term); simplify it")
    checker = _Checker(text, formula, constants or {})
    checker.check(tree, checker.names)
    names = checker.names
    return Expression(text=text.strip(), tree=tree, names=tuple(names), optional=tuple(n for n in checker.optional if n not in names))


def _refusal(text, formula: bool, message: str) -> ExpressionError:
    """The error for a part of ``text`` that is not allowed, worded for a formula or for a rule's condition."""
    return ExpressionError(f"formula {text!r}: {message}" if formula else f"{message} in {text!r}")


class _Checker:
    """The grammar of :func:`parse`, one method per kind of node, so that each rule reads on its own.

    Collects the metric names read (``names``) and those read only through fallback() (``optional``)."""

    def __init__(self, text: str, formula: bool, constants: dict[str, float]):
        self.text, self.formula, self.constants = text, formula, constants
        self.names: list[str] = []
        self.optional: list[str] = []

    def refused(self, message: str) -> ExpressionError:
        return _refusal(self.text, self.formula, message)

    def check(self, node: ast.AST, into: list[str]) -> None:
        """Check ``node`` and its children; the metric names they read go ``into`` the given list."""
        if self.formula and not _arithmetic(node):
            what = type(node.op).__name__ if isinstance(node, (ast.BinOp, ast.UnaryOp)) else type(node).__name__
            raise self.refused(f"{what} is not allowed ({_FORMULA_ONLY})")
        if isinstance(node, ast.Call):
            self._call(node, into)  # checks its own arguments
            return
        if isinstance(node, ast.Compare):
            if any(type(op) not in _COMPARE for op in node.ops):
                raise self.refused("only <, <=, >, >=, ==, != comparisons are allowed")
        elif isinstance(node, ast.BinOp):
            self._binop(node)
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, (ast.Not, ast.USub, ast.UAdd)):
                raise self.refused(f"operator {type(node.op).__name__} is not allowed")
        elif isinstance(node, ast.Constant):
            self._constant(node)
        elif isinstance(node, ast.Name):
            if not (node.id in ("true", "false") and not self.formula) and node.id not in self.constants and node.id not in into:
                into.append(node.id)
        elif not isinstance(node, (ast.BoolOp, ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.Load)):
            raise self.refused(f"{type(node).__name__} is not allowed")  # operators were checked on their parent node
        for child in ast.iter_child_nodes(node):
            self.check(child, into)

    def _binop(self, node: ast.BinOp) -> None:
        """An allowed operator; a power's exponent, when it is made of numbers, bounded."""
        if type(node.op) not in _BINOPS:
            raise self.refused(f"operator {type(node.op).__name__} is not allowed")
        if isinstance(node.op, ast.Pow):
            exponent = _constant(node.right, self.constants)
            if exponent is not None and not abs(exponent) <= MAX_EXPONENT:
                raise ExpressionError(f"exponent {ast.unparse(node.right)} is too large in {self.text!r} (at most {MAX_EXPONENT})")

    def _constant(self, node: ast.Constant) -> None:
        """A number, a truth value or a text; numbers that floats hold exactly and finite."""
        text = self.text
        if not isinstance(node.value, (bool, int, float, str)):
            raise self.refused(f"constant {node.value!r} is not allowed")
        if isinstance(node.value, int) and not isinstance(node.value, bool) and abs(node.value) > MAX_INT:
            raise ExpressionError(f"integer {_short(node.value)} is too large in {text!r} (at most 2**53); write it as a float, e.g. 1e20")
        if isinstance(node.value, float) and not np.isfinite(node.value):
            raise ExpressionError(f"number {ast.get_source_segment(text.strip(), node) or node.value} is out of range in {text!r}")

    def _call(self, node: ast.Call, into: list[str]) -> None:
        """One of the few functions; metric("name") reads a metric, fallback()'s first argument is optional."""
        func = node.func
        if not isinstance(func, ast.Name) or (func.id not in _FUNCTIONS and func.id != "metric") or node.keywords:
            raise self.refused('only max(), min(), abs(), fallback() and metric("name") may be called')
        if func.id == "metric":
            if len(node.args) != 1 or not isinstance(node.args[0], ast.Constant) or not isinstance(node.args[0].value, str):
                raise self.refused("metric() takes one quoted metric name")
            if node.args[0].value not in into:
                into.append(node.args[0].value)
            return
        if func.id in ("max", "min", "abs") and not node.args:
            raise self.refused(f"{func.id}() needs at least one argument")
        if func.id == "fallback":
            if len(node.args) != 2:
                raise self.refused("fallback() takes a value and a default")
            self.check(node.args[0], self.optional)
            self.check(node.args[1], into)
            return
        for arg in node.args:
            self.check(arg, into)


def _depth(tree: ast.AST) -> int:
    """Nesting of expression nodes (operators and their operands), walked without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr))
    return deepest


def _constant(node: ast.AST, constants: dict) -> float | None:
    """The value of a sub-expression made only of numbers and the file's constants (as a float);
    None when it reads a metric. The tree's depth is already bounded."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value) if abs(node.value) <= MAX_INT or isinstance(node.value, float) else float("inf")
    if isinstance(node, ast.Name) and node.id in constants:
        return float(constants[node.id])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _constant(node.operand, constants)
        return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _constant(node.left, constants), _constant(node.right, constants)
        if left is None or right is None:
            return None
        with np.errstate(all="ignore"):
            return float(_BINOPS[type(node.op)](np.float64(left), np.float64(right)))
    return None


def _short(value: int) -> str:
    digits = len(str(abs(value))) if abs(value) < 10**4000 else 4000
    return f"{str(value)[:12]}... ({digits} digits)" if digits > 20 else str(value)


class _Evaluator:
    """Walks a checked tree: numpy arrays for rules, or (``scalar_of``: the formula's text) Python numbers."""

    def __init__(self, lookup, constants, scalar_of: str | None = None):
        self.lookup = lookup
        self.constants = constants
        self.scalar_of = scalar_of

    def visit(self, node):
        method = getattr(self, "_" + type(node).__name__)
        return method(node)

    def _Constant(self, node):
        # Rules: numbers as floats (integer arithmetic in numpy wraps around: 2**64 == 0). Formulas:
        # Python ints, exact for byte counts, and bounded by the exponent check.
        if self.scalar_of is None and isinstance(node.value, int) and not isinstance(node.value, bool):
            return float(node.value)
        return node.value

    def _Name(self, node):
        if node.id in self.constants:
            return float(self.constants[node.id])
        if node.id in ("true", "false") and self.scalar_of is None:
            return node.id == "true"
        return self.lookup(node.id)

    def _BinOp(self, node):
        left, right = self._num(self.visit(node.left)), self._num(self.visit(node.right))
        if self.scalar_of is not None:
            if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
                raise ExpressionError(f"formula {self.scalar_of!r}: exponent {right} is larger than {MAX_EXPONENT}")
            if isinstance(node.op, ast.Div) and right == 0:
                raise ExpressionError(f"formula {self.scalar_of!r}: division by zero")
            return _SCALAR_BINOPS[type(node.op)](left, right)
        with np.errstate(all="ignore"):
            return _BINOPS[type(node.op)](left, right)

    def _UnaryOp(self, node):
        value = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            return np.logical_not(self._bool(value))
        return -self._num(value) if isinstance(node.op, ast.USub) else self._num(value)

    def _BoolOp(self, node):
        values = [self._bool(self.visit(v)) for v in node.values]
        combine = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
        out = values[0]
        for v in values[1:]:
            out = combine(out, v)
        return out

    def _Compare(self, node):
        left = self.visit(node.left)
        result = True
        for op, right_node in zip(node.ops, node.comparators):
            right = self.visit(right_node)
            with np.errstate(invalid="ignore"):
                result = np.logical_and(result, _COMPARE[type(op)](left, right))
            left = right
        return result

    def _Call(self, node):
        if node.func.id == "metric":
            return self.lookup(node.args[0].value)
        args = [self._num(self.visit(a)) for a in node.args]
        if node.func.id == "fallback":
            value, default = args
            return np.where(np.isnan(value), default, value)
        func = _FUNCTIONS[node.func.id]
        if func is np.abs:
            return np.abs(args[0])
        out = args[0]
        for a in args[1:]:
            out = func(out, a)
        return out

    @staticmethod
    def _num(value):
        return np.asarray(value, dtype=float) if not isinstance(value, (int, float)) else value

    @staticmethod
    def _bool(value):
        # NaN compares false everywhere; a NaN used as a truth value is false too.
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            return np.nan_to_num(value, nan=0.0) != 0
        return np.asarray(value, dtype=bool) if isinstance(value, np.ndarray) else bool(value)
