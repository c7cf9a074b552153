"""Checks for the documents ncuwrap reads (rules files, the benchmark manifest, bench reports).

A loaded document is walked through :class:`Node` values. A node knows its value, the file it came
from and where it is in it (``findings[2].severity``, or a label such as ``finding 'x'`` once the item
has a name), and its accessors either return a typed value or raise the file's error type with one
line: ``FILE: WHERE: what is wrong; what to write instead``. Both loaders describe their format with
these accessors instead of hand-written isinstance checks, so every file error reads the same.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, TypeVar

from ncuwrap.core.errors import InputError, NcuwrapError

E = TypeVar("E", bound=Enum)


def _kind(value: Any) -> str:
    """What a YAML or JSON value is, in the words of the format (not Python's type names)."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the text {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


@dataclass(frozen=True)
class Node:
    """One value of a document and where it is."""

    value: Any
    file: str  # what every message starts with (a path, or just the file name)
    where: str = ""  # "" is the top level
    error: type[NcuwrapError] = InputError
    hint: str = ""  # appended to the messages about a value's shape, e.g. "see rules/reference.yaml"

    # ------------------------------------------------------------------ places

    def fail(self, message: str) -> NcuwrapError:
        """The error for this place (returned, so callers write ``raise node.fail(...)``)."""
        where = f"{self.where}: " if self.where else ""
        return self.error(f"{self.file}: {where}{message}")

    def _wrong(self, message: str) -> NcuwrapError:
        # A value of the wrong shape: the format reference is the fix.
        return self.fail(f"{message}; {self.hint}" if self.hint else message)

    def at(self, label: str) -> Node:
        """The same value under a friendlier name (``benchmarks[3]`` -> ``benchmark gemm``)."""
        return replace(self, where=label)

    def _child(self, key: str | int, value: Any) -> Node:
        if isinstance(key, int):
            where = f"{self.where}[{key}]"
        else:
            where = f"{self.where}.{key}" if self.where else str(key)
        return replace(self, value=value, where=where)

    @property
    def absent(self) -> bool:
        """True for a key the document leaves out or sets to null (and no default was given)."""
        return self.value is None

    # ------------------------------------------------------------------ mappings

    def mapping(self, required: Collection[str] = (), optional: Collection[str] = (), *, what: str = "a mapping") -> Node:
        """Check this is a mapping with every ``required`` key and no key outside ``required | optional``."""
        if not isinstance(self.value, dict):
            raise self._wrong(f"expected {what}, got {_kind(self.value)}")
        missing = sorted(set(required) - set(self.value))
        if missing:
            raise self._wrong(f"missing key {', '.join(missing)}")
        allowed = set(required) | set(optional)
        unknown = sorted(str(k) for k in self.value if k not in allowed)
        if unknown:
            raise self._wrong(f"unknown key {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})")
        return self

    def __getitem__(self, key: str) -> Node:
        return self.get(key)

    def get(self, key: str, default: Any = None) -> Node:
        """The value under ``key``; ``default`` when the document leaves it out or sets it to null."""
        value = self.value.get(key) if isinstance(self.value, dict) else None
        return self._child(key, default if value is None else value)

    def has(self, key: str) -> bool:
        return isinstance(self.value, dict) and key in self.value

    def pairs(self, *, what: str = "a mapping", nonempty: bool = False) -> list[tuple[str, Node]]:
        """A mapping's (key, value) pairs, keys as text; none when absent."""
        return [(str(k), self._child(str(k), v)) for k, v in self._collection(dict, what, nonempty).items()]

    def _collection(self, kind: type, what: str, nonempty: bool) -> Any:
        """The value as a ``kind`` (dict or list; an empty one when absent), or the error saying what was expected."""
        value = kind() if self.absent else self.value
        if not isinstance(value, kind):
            raise self._wrong(f"expected {what}, got {_kind(value)}")
        if nonempty and not value:
            raise self._wrong(f"expected {what}, got an empty {'mapping' if kind is dict else 'list'}")
        return value

    # ------------------------------------------------------------------ lists

    def items(self, *, what: str = "a list", nonempty: bool = False) -> list[Node]:
        """A list's elements (none when absent)."""
        return [self._child(i, v) for i, v in enumerate(self._collection(list, what, nonempty))]

    def texts(self, *, what: str = "a list of text", single: bool = False) -> tuple[str, ...]:
        """A list of text (``single``: one text is taken as a list of one); ``()`` when absent."""
        if single and isinstance(self.value, str):
            return (self.value,)
        values = tuple(self.items(what=what))
        if not all(isinstance(v.value, str) for v in values):
            raise self._wrong(f"expected {what}")
        return tuple(v.value for v in values)

    # ------------------------------------------------------------------ scalars

    def text(self, *, nonempty: bool = True) -> str:
        if not isinstance(self.value, str) or (nonempty and not self.value.strip()):
            raise self._wrong(f"expected {'non-empty ' if nonempty else ''}text, got {_kind(self.value)}")
        return self.value

    def integer(self, *, minimum: int | None = None) -> int:
        value = self.value
        if isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum):
            bound = f" >= {minimum}" if minimum is not None else ""
            raise self._wrong(f"expected an integer{bound}, got {_kind(value)}")
        return value

    def number(self, *, nullable: bool = False) -> float | int | None:
        if nullable and self.absent:
            return None
        if isinstance(self.value, bool) or not isinstance(self.value, (int, float)):
            raise self._wrong(f"expected a number, got {_kind(self.value)}")
        return self.value

    def boolean(self) -> bool:
        if not isinstance(self.value, bool):
            raise self._wrong(f"expected true or false, got {_kind(self.value)}")
        return self.value

    def choice(self, choices: type[E] | Iterable[Any], *, nullable: bool = False) -> Any:
        """One of ``choices`` (an Enum class gives its member); ``None`` allowed with ``nullable`` (or when absent)."""
        if nullable and self.absent:
            return None
        if isinstance(choices, type) and issubclass(choices, Enum):
            for member in choices:
                if self.value == member.value:
                    return member
            names = [str(m.value) for m in choices]
        else:
            options = list(choices)
            if self.value in options and not isinstance(self.value, bool):
                return self.value
            names = [str(c) for c in options]
        allowed = ", ".join(names + (["null"] if nullable else []))
        raise self.fail(f"{self.value!r} is not one of {allowed}")


def document(value: Any, file: str, error: type[NcuwrapError] = InputError, hint: str = "") -> Node:
    """The top-level node of a loaded document."""
    return Node(value=value, file=file, error=error, hint=hint)


def unique(nodes: Iterable[tuple[str, Node]], what: str) -> None:
    """Refuse a repeated name among (name, node) pairs, at the second place it is used."""
    seen: set[str] = set()
    for name, node in nodes:
        if name in seen:
            raise node.fail(f"duplicate {what} {name}")
        seen.add(name)
