"""The diagnosis document's launches (v4) shared by the report's columns.

:func:`ncuwrap.kernel.json_delta.share_launches` makes each launch's whole record, marks its repeats and
compares it with its like's value by value: most of a large report's JSON time, though a later launch
differs from its like in a few values, or none. For a diagnosis read from a report's columns
(:mod:`ncuwrap.kernel.diagnosis`), :class:`RecordColumns` finds the same likes, and the values that can
differ from the like's, by whole columns; only those are made, marked and compared, by json_delta's own
functions (``compare_value``, ``mark_part``), so that the launches are the ones share_launches writes
(tests/test_launch_records.py compares the two on every report in tests/data).

A value is passed over only where it is surely the same as its like's:

- a metric of ``metrics``, ``chart`` or ``compared``, where the report's raw values of the two launches are
  the same: the record holds the column cleaned (ncuwrap.core.numbers, value by value), and its repeat mark
  compares it with the same column's value in ``metrics``;
- any other value, where it is the same object or an equal value of the same type, or a part made of such
  values (the decision's steps, the findings, the stalls, the roofline) equal to its like's: they are made of
  the same cleaned columns, whose equal values write the same JSON text and are marked alike.

Anything else is made and compared as share_launches does.
"""

from __future__ import annotations

import math
import operator
from itertools import repeat

import numpy as np
import orjson

from ncuwrap.kernel.json_delta import REPEAT, _diff, _pointer, _same, compare_value, mark_part, repeats
from ncuwrap.kernel.verdict import DOCUMENT, KernelVerdict

# The record's parts whose values are metrics (one column each), in the record's order.
_METRIC_PARTS = ("metrics", "chart", "compared")
# Parts that are one value: passed over where their like's is the same object or an equal value of the same type.
_VALUES = ("name", "display_name", "duration_ns", "bound", "limiter", "borderline", "pipe", "pipe_pct", "why", "estimated_gain_pct",
           "stream")
# Parts made of the report's cleaned values: passed over where the verdict's own objects are equal.
_MADE = {
    "launch": lambda k: (k.grid, k.block),
    "tensor": operator.attrgetter("tensor"),
    "stalls": operator.attrgetter("stalls"),
    "ncu_rules": operator.attrgetter("ncu_rules"),
    "not_evaluated": operator.attrgetter("not_evaluated"),
    "roofline": operator.attrgetter("roofline"),
    "process": lambda k: (k.process_id, k.process_name),
    "source_counters": operator.attrgetter("source_counters"),
    "next_step": operator.attrgetter("next_step"),
}
# Parts marked against `metrics` and `compared` (json_delta._parts): a list of mappings, each with a mapping to mark.
_MARKED = {"decision_path": ("path", "values"), "findings": ("findings", "evidence")}


class RecordColumns:
    """The columns a diagnosis's verdicts were read from: ``kernels`` (its verdicts, in order) of the report's
    ``rows``; ``lookup``, a metric's raw values for every row of the report (what the verdicts' metrics were
    cleaned from); the metrics shown (``display``, each launch's `metrics` holding those it knows), charted and
    compared (``compared``: the columns every launch's MetricRow reads)."""

    def __init__(self, kernels: tuple[KernelVerdict, ...], rows: list[int], lookup, display: list[str], chart: tuple[str, ...],
                 compared: dict[str, list]):
        self.kernels, self.rows, self._lookup = kernels, rows, lookup
        self.names = {"metrics": list(display), "chart": list(chart), "compared": list(compared)}
        self._compared = compared

    def shared(self, kernels) -> list[dict] | None:
        """The v4 launch records of ``kernels`` (share_launches' output for their documents); None where they
        are not the verdicts these columns were read for, or a part of some record holds REPEAT itself (its
        launches are then compared 'plain': share_launches writes those)."""
        if kernels is not self.kernels or self._holds_repeat():
            return None
        like = self._likes()
        later = [i for i, j in enumerate(like) if j >= 0]
        likes = [like[i] for i in later]
        parts = self._parts(later, likes)
        flagged = np.vstack([flags for _, flags in parts]) if parts and later else np.zeros((0, len(later)), dtype=bool)
        differing = flagged.any(axis=0).tolist() if len(parts) else [False] * len(later)
        out = []
        position = 0
        for i, k in enumerate(kernels):
            j = like[i]
            if j < 0:
                out.append(k.document())
                continue
            differs: dict = {}
            digits: dict = {}
            if differing[position]:
                for part in np.flatnonzero(flagged[:, position]).tolist():
                    parts[part][0](i, j, position, differs, digits)
            position += 1
            out.append({"id": k.id, "like": kernels[j].id, "differs": differs, **({"digits": digits} if digits else {})})
        return out

    # ------------------------------------------------------------------------------------------ likes

    def _likes(self) -> list[int]:
        """Each launch's like (share_launches): the latest earlier launch of its shape, else its kernel's first;
        -1 for a kernel's first launch."""
        firsts: dict[str, int] = {}
        latest: dict[bytes, int] = {}
        shapes: dict[tuple, bytes] = {}
        like = []
        for i, k in enumerate(self.kernels):
            # Launches made of the same objects (the rules not evaluated, the findings: often one tuple for many)
            # and the same values have one shape, encoded once.
            key = (k.name, k.bound, type(k.limiter), k.limiter, _ints(k.grid), _ints(k.block), id(k.ncu_rules), id(k.findings), id(k.not_evaluated),
                   tuple(s.verdict for s in k.path))
            shape = shapes.get(key)
            if shape is None:
                shape = shapes[key] = _shape(k)
            first = firsts.get(k.name)
            if first is None:
                firsts[k.name] = latest[shape] = i
                like.append(-1)
            else:
                like.append(latest.get(shape, first))
                latest[shape] = i
        return like

    # ------------------------------------------------------------------------------------------ parts

    def _parts(self, later: list[int], likes: list[int]) -> list[tuple]:
        """(compare, flags) for each part of the record that some later launch may differ in from its like, in the
        record's order: ``flags`` by later launch; ``compare(i, j, position, differs, digits)`` writes launch
        ``i``'s differences from ``j`` into ``differs`` and ``digits``."""
        kernels = self.kernels
        rows = np.asarray(self.rows, dtype=np.int64)
        at, of = rows[np.asarray(later, dtype=np.int64)], rows[np.asarray(likes, dtype=np.int64)]
        metric_flags = {name: self._differs(name, at, of) for names in self.names.values() for name in names}
        out = []
        for key in DOCUMENT:
            if key == "id":
                continue
            if key in _METRIC_PARTS:
                names = self.names[key]
                by_name = np.vstack([metric_flags[name] for name in names]) if names else np.zeros((0, len(later)), dtype=bool)
                flags = by_name.any(axis=0)
                compare = self._metric_part(key, names, by_name)
            elif key == "effects":
                flags, compare = self._effects(later, likes, at, of), self._whole(key)
            else:
                if key in _VALUES:
                    values = list(map(DOCUMENT[key], kernels))
                    flags = ~_same_values([values[i] for i in later], [values[j] for j in likes])
                else:
                    get = operator.attrgetter(_MARKED[key][0] if key in _MARKED else key) if key not in _MADE else _MADE[key]
                    values = list(map(get, kernels))
                    a, b = [values[i] for i in later], [values[j] for j in likes]
                    # 'where' (a launch's lines, whose numbers are written as they are) only where it is the same object
                    flags = ~np.fromiter(map(operator.eq if key != "where" else operator.is_, a, b), dtype=bool, count=len(later))
                    if key == "findings":
                        flags |= _placed(a) | _placed(b)
                compare = self._marked(key) if key in _MARKED else self._whole(key)
            if flags.any():
                out.append((compare, flags))
        return out

    def _differs(self, name: str, at: np.ndarray, of: np.ndarray) -> np.ndarray:
        """By later launch: whether the raw values of ``name`` at ``at`` and at their likes' rows ``of`` can clean
        to different values (equal raw values clean alike; every NaN to None)."""
        raw = np.asarray(self._lookup(name))
        raw = np.broadcast_to(raw, (max(self.rows, default=-1) + 1,)) if raw.ndim == 0 else raw
        a, b = raw[at], raw[of]
        if raw.dtype.kind == "f":
            return (a != b) & ~(np.isnan(a) & np.isnan(b))
        return np.asarray(a != b, dtype=bool)

    def _whole(self, key: str):
        get = DOCUMENT[key]
        kernels = self.kernels

        def compare(i: int, j: int, position: int, differs: dict, digits: dict) -> None:
            compare_value(key, get(kernels[j]), get(kernels[i]), differs, digits)

        return compare

    def _marked(self, key: str):
        """A list of mappings whose inner mapping is marked against the record's `metrics` and `compared`
        (json_delta._rebuilt's copy of it)."""
        get, inner = DOCUMENT[key], _MARKED[key][1]
        kernels = self.kernels

        def marked(k: KernelVerdict) -> list:
            metrics, compared = k.display_metrics, DOCUMENT["compared"](k)
            return [{**item, inner: mark_part(item[inner], False, metrics, compared)} if isinstance(item, dict) and isinstance(item.get(inner), dict)
                    else item for item in get(k)]

        def compare(i: int, j: int, position: int, differs: dict, digits: dict) -> None:
            compare_value(key, marked(kernels[j]), marked(kernels[i]), differs, digits)

        return compare

    def _metric_part(self, key: str, names: list[str], by_name: np.ndarray):
        """`metrics`, `chart` or `compared`, metric by metric: only those whose raw values differ from the like's
        are made, marked (`chart` and `compared` against `metrics`) and compared, as json_delta._diff compares
        two mappings with the same keys (`metrics` of other keys is compared whole)."""
        kernels, rows, compared_columns = self.kernels, self.rows, self._compared
        pointer = _pointer("", key)

        def value(i: int, name: str):
            k = kernels[i]
            if key == "compared":
                v = compared_columns[name][rows[i]]
            else:
                v = (k.display_metrics if key == "metrics" else k.chart_metrics).get(name)
            if key != "metrics":
                kind = type(v)
                if (kind is int or kind is float) and repeats(v, k.display_metrics.get(name)):
                    return REPEAT
            return v

        def compare(i: int, j: int, position: int, differs: dict, digits: dict) -> None:
            if key == "metrics" and list(kernels[i].display_metrics) != list(kernels[j].display_metrics):
                compare_value(key, kernels[j].display_metrics, kernels[i].display_metrics, differs, digits)
                return
            new_part = kernels[i].display_metrics if key == "metrics" else None
            for name in (names[n] for n in np.flatnonzero(by_name[:, position]).tolist()):
                if new_part is not None and name not in new_part:
                    continue  # known at neither launch (their keys are the same)
                old, new = value(j, name), value(i, name)
                if not _same(old, new):
                    _diff(old, new, _pointer(pointer, name), differs, digits)

        return compare

    def _effects(self, later: list[int], likes: list[int], at: np.ndarray, of: np.ndarray) -> np.ndarray:
        """By later launch: whether its effects (KernelEffects.to_json: the report's arrays at its row, written as
        they are) can differ from its like's."""
        effects = [k.effects for k in self.kernels]
        first = effects[0] if effects else None
        shared = first is not None and all(e is not None and e.util is first.util and e.reach is first.reach and e.lists is first.lists
                                           and (e.roof, e.floor_ns, e.busy) == (first.roof, first.floor_ns, first.busy) for e in effects)
        if not shared:
            return np.fromiter((not (effects[i] is None and effects[j] is None) for i, j in zip(later, likes)), dtype=bool, count=len(later))
        flags = np.zeros(len(later), dtype=bool)
        for values in [*first.util.values(), *first.reach.values()]:
            flags |= _floats_differ(values, at, of)
        flags |= ~_same_values([effects[i].duration_ns for i in later], [effects[j].duration_ns for j in likes])
        by_effect: dict[int, np.ndarray] = {}
        fixes = np.fromiter((bool(effects[i].findings) or bool(effects[j].findings) for i, j in zip(later, likes)), dtype=bool, count=len(later))
        for position in np.flatnonzero(fixes & ~flags).tolist():
            a, b = effects[later[position]].findings, effects[likes[position]].findings
            if list(a) != list(b) or any(fx is not b[fid] for fid, fx in a.items()):
                flags[position] = True
                continue
            for fx in a.values():
                if id(fx) not in by_effect:
                    by_effect[id(fx)] = _floats_differ(fx.fill, at, of)
                    for keep in fx.keep.values():
                        by_effect[id(fx)] |= _floats_differ(keep, at, of)
                flags[position] |= by_effect[id(fx)][position]
        return flags

    # ------------------------------------------------------------------------------------------ plain

    def _holds_repeat(self) -> bool:
        """Whether a part json_delta marks holds REPEAT itself in some record (share_launches then compares its
        launches plain)."""
        for name in dict.fromkeys([*self.names["chart"], *self.names["compared"]]):
            raw = np.asarray(self._lookup(name))
            if raw.dtype.kind == "O" and bool(np.any(raw == REPEAT)):
                return True
        marked = [step.values for k in self.kernels for step in k.path] + [f.evidence for k in self.kernels for f in k.findings]
        return any(map(operator.contains, map(dict.values, marked), repeat(REPEAT)))


def _shape(k: KernelVerdict) -> bytes:
    """json_delta._shape of the verdict's record, read from the verdict."""
    return orjson.dumps([k.name, {"grid": k.grid, "block": k.block}, k.bound, k.limiter, [r.rule for r in k.ncu_rules],
                         [f.id for f in k.findings], [n.rule for n in k.not_evaluated], [s.verdict for s in k.path]])


def _ints(dims) -> tuple | None:
    return tuple(dims) if dims is not None else None


def _surely_same(a, b) -> bool:
    """Whether two values surely write the same JSON text: the same object, or equal values of one type (a float's
    zero with its sign). Anything else (a container, another type) is compared."""
    if a is b:
        return True
    kind = type(a)
    if type(b) is not kind:
        return False
    if kind is float:
        return a == b and (a != 0.0 or math.copysign(1.0, a) == math.copysign(1.0, b))
    return (kind is str or kind is int or kind is bool) and a == b


def _same_values(a: list, b: list) -> np.ndarray:
    """:func:`_surely_same` of each pair of one JSON scalar each (a text, number, true or false, null), told in C:
    only a float zero is looked at alone (its sign)."""
    n = len(a)
    same = np.fromiter(map(operator.eq, a, b), dtype=bool, count=n)
    same &= np.fromiter(map(operator.is_, map(type, a), map(type, b)), dtype=bool, count=n)
    zeros = same & np.fromiter(map(operator.is_, map(type, a), repeat(float)), dtype=bool, count=n) \
        & np.fromiter(map(operator.eq, a, repeat(0.0)), dtype=bool, count=n)
    for p in np.flatnonzero(zeros).tolist():
        same[p] = _surely_same(a[p], b[p])
    return same


def _placed(findings: list) -> np.ndarray:
    """By launch: whether one of its findings has its lines (a Where's numbers are written as they are: compared)."""
    return np.fromiter((any(f.where is not None for f in fs) if fs else False for fs in findings), dtype=bool, count=len(findings))


def _floats_differ(values, at: np.ndarray, of: np.ndarray) -> np.ndarray:
    """By later launch: whether an array of the report's (one value: the same for every launch) differs at ``at``
    from ``of`` as written (NaN as null; a zero's sign)."""
    flat = np.asarray(values, dtype=float).reshape(-1)
    if flat.size == 1:
        return np.zeros(len(at), dtype=bool)
    a, b = flat[at], flat[of]
    same = ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))
    return ~same
