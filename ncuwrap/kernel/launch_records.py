"""The diagnosis document's launches (v4) shared by the report's columns.

:func:`ncuwrap.kernel.json_delta.share_launches` makes each launch's whole record, marks its repeats and
compares it with its like's value by value: most of a large report's JSON time, though a later launch
differs from its like in a few values, or none. For a diagnosis read from a report's columns
(:mod:`ncuwrap.kernel.diagnosis`), :class:`RecordColumns` finds the same likes, and the values that can
differ from the like's, by whole columns; it makes, marks and compares only those, one part of the record
at a time for all launches, with json_delta's own functions (``compare_value``, ``mark_part``, ``_diff``),
so that the launches are the ones share_launches writes (tests/test_launch_records.py compares the two on
every report in tests/data and on SYNTHETIC reports of varied launches).

What it relies on, by construction of the verdicts: the metrics a record shows (``metrics``, ``chart``,
``compared``, a decision step's values, a finding's evidence) are the report's columns cleaned value by value
(ncuwrap.core.numbers: None for NaN and infinity, an int for a whole number), and a name holds the same
column's value in each of them. So a value is passed over only where it is surely the same as its like's:

- a metric whose raw values at the two launches are the same (equal raw values clean alike), or, in a part
  marked against ``metrics`` (``chart``, ``compared``, the steps' values), one that is a number at both
  launches where ``metrics`` or ``compared`` holds it: both are written as the repeat mark;
- any other value, where it is the same object or an equal value of the same type, or a part made of such
  values (the steps, the findings, the stalls, the roofline) equal to its like's.

Anything else is made and compared as share_launches does.
"""

from __future__ import annotations

import math
import operator
from itertools import repeat

import numpy as np
import orjson

from ncuwrap.kernel.json_delta import REPEAT, _diff, _pointer, _same, compare_value, mark_part, repeats
from ncuwrap.kernel.verdict import DOCUMENT, KernelVerdict, LaunchVerdicts

# The record's parts whose values are metrics (one column each).
_METRIC_PARTS = ("metrics", "chart", "compared")
# Parts of one JSON scalar each: passed over where their like's is the same object or an equal value of the same type.
_VALUES = ("name", "display_name", "duration_ns", "bound", "limiter", "borderline", "pipe", "pipe_pct", "why", "estimated_gain_pct",
           "stream")
# Parts made of the report's cleaned values, by the verdict's fields they are made of: passed over where those are equal.
_MADE = {
    "launch": ("grid", "block"),  # compared by the texts they were read from (RecordColumns.dims)
    "tensor": ("tensor",),
    "stalls": ("stalls",),
    "ncu_rules": ("ncu_rules",),
    "not_evaluated": ("not_evaluated",),
    "roofline": ("roofline",),
    "process": ("process_id", "process_name"),
    "source_counters": ("source_counters",),
    "next_step": ("next_step",),
    "level_gaps": ("level_gaps",),
}
# Parts marked against `metrics` and `compared` (json_delta._parts): a list of mappings, each with a mapping to mark.
_MARKED = {"decision_path": "values", "findings": "evidence"}


class RecordColumns:
    """The columns a diagnosis's verdicts were read from: ``kernels`` (its LaunchVerdicts) and their ``decisions``
    (ncuwrap.ruleset.evaluate.Decisions) of the report's ``rows``; ``lookup``, a metric's raw values for every row
    of the report (what the verdicts' metrics were cleaned from); the metrics shown (``display``: each launch's
    `metrics` holds those it knows), charted and compared (``compared``: the columns every launch's MetricRow
    reads, by row)."""

    def __init__(self, kernels: LaunchVerdicts, decisions, rows: list[int], lookup, display: list[str], chart: tuple[str, ...],
                 compared: dict[str, list], dims: tuple[list, list]):
        self.kernels, self.decisions, self.rows, self._lookup = kernels, decisions, rows, lookup
        # Each launch's grid and block as the report wrote them, by launch: equal texts are equal dimensions.
        self.dims = dims
        self.names = {"metrics": list(display), "chart": list(chart), "compared": list(compared)}
        self._compared = compared
        self._display = frozenset(display)
        # Where a decision step's or a finding's number is marked: a name `metrics` holds when known, or `compared` holds.
        self._markable = frozenset(display) | frozenset(compared)

    def shared(self, kernels) -> list[dict] | None:
        """The v4 launch records of ``kernels`` (share_launches' output for their documents); None where they
        are not the verdicts these columns were read for, or a part of some record holds REPEAT itself (its
        launches are then compared 'plain': share_launches writes those)."""
        if kernels is not self.kernels or self._holds_repeat():
            return None
        like = self._likes()
        later = [i for i, j in enumerate(like) if j >= 0]
        likes = [like[i] for i in later]
        differs: list[dict] = [{} for _ in later]
        digits: list[dict] = [{} for _ in later]
        if later:
            _Pass(self, later, likes, differs, digits).run()
        ids = kernels.column("id")
        out = []
        position = 0
        for i, j in enumerate(like):
            if j < 0:
                out.append(kernels[i].document())
                continue
            found = digits[position]
            out.append({"id": ids[i], "like": ids[j], "differs": differs[position], **({"digits": found} if found else {})})
            position += 1
        return out

    def _likes(self) -> list[int]:
        """Each launch's like (share_launches): the latest earlier launch of its shape, else its kernel's first;
        -1 for a kernel's first launch."""
        kernels, decisions = self.kernels, self.decisions
        firsts: dict[str, int] = {}
        latest: dict[bytes, int] = {}
        shapes: dict[tuple, bytes] = {}
        like = []
        tried: dict[int, tuple] = {}
        for i, (name, bound, limiter, grid, block, rules, findings, lacking, chosen) in enumerate(zip(
                kernels.column("name"), kernels.column("bound"), kernels.column("limiter"), *self.dims,
                kernels.column("ncu_rules"), kernels.column("findings"), kernels.column("not_evaluated"), decisions.chosen)):
            # Launches made of the same objects (the rules not evaluated, the findings: often one tuple for many)
            # and the same values have one shape, encoded once.
            key = (name, bound, type(limiter), limiter, grid, block, id(rules), id(findings), id(lacking), chosen)
            shape = shapes.get(key)
            if shape is None:
                steps = tried.get(chosen) or tried.setdefault(chosen, decisions.verdicts_tried(i))
                # json_delta._shape of the launch's record
                launch = {"grid": kernels.value("grid", i), "block": kernels.value("block", i)}
                shape = shapes[key] = orjson.dumps([name, launch, bound, limiter, [r.rule for r in rules], [f.id for f in findings],
                                                    [n.rule for n in lacking], list(steps)])
            first = firsts.get(name)
            if first is None:
                firsts[name] = latest[shape] = i
                like.append(-1)
            else:
                like.append(latest.get(shape, first))
                latest[shape] = i
        return like

    def _holds_repeat(self) -> bool:
        """Whether a part json_delta marks holds REPEAT itself in some record (share_launches then compares its
        launches plain)."""
        for name in dict.fromkeys([*self.names["chart"], *self.names["compared"]]):
            raw = np.asarray(self._lookup(name))
            if raw.dtype.kind == "O" and bool(np.any(raw == REPEAT)):
                return True
        # A step's values are its condition's columns (any launch's, whether or not its path reached the step).
        if any(REPEAT in column for tried in self.decisions.tried for column in tried.values()):
            return True
        evidence = [f.evidence for findings in self.kernels.column("findings") for f in findings]
        return any(map(operator.contains, map(dict.values, evidence), repeat(REPEAT)))

    def differs(self, name: str, at: np.ndarray, of: np.ndarray) -> np.ndarray:
        """By pair of report rows (``at``, ``of``): whether the raw values of ``name`` can clean to different values
        (equal raw values clean alike; every NaN to None)."""
        raw = np.asarray(self._lookup(name))
        if raw.ndim == 0:
            return np.zeros(len(at), dtype=bool)
        a, b = raw[at], raw[of]
        if raw.dtype.kind == "f":
            return (a != b) & ~(np.isnan(a) & np.isnan(b))
        return np.asarray(a != b, dtype=bool)

    def numbers(self, name: str, at: np.ndarray, of: np.ndarray) -> np.ndarray:
        """By pair of report rows: whether ``name`` is a number at both (its raw values finite; False for a column
        that is not all numbers)."""
        raw = np.asarray(self._lookup(name))
        if raw.ndim == 0 or raw.dtype.kind != "f":
            return np.zeros(len(at), dtype=bool)
        return np.isfinite(raw[at]) & np.isfinite(raw[of])


class _Pass:
    """One pass over the record's parts, in its order, each for every later launch at once: ``differs`` and
    ``digits`` (one mapping per later launch) are filled as share_launches fills them."""

    def __init__(self, columns: RecordColumns, later: list[int], likes: list[int], differs: list[dict], digits: list[dict]):
        self.columns, self.kernels = columns, columns.kernels
        self.later, self.likes, self.differs, self.digits = later, likes, differs, digits
        rows = np.asarray(columns.rows, dtype=np.int64)
        self.at, self.of = rows[np.asarray(later, dtype=np.int64)], rows[np.asarray(likes, dtype=np.int64)]

    def run(self) -> None:
        for key in DOCUMENT:
            if key == "id":
                continue
            if key in _METRIC_PARTS:
                self.metric_part(key)
            elif key == "effects":
                self.effects()
            elif key in _VALUES:
                values = self.kernels.column(key)
                new, old = [values[i] for i in self.later], [values[j] for j in self.likes]
                for p in np.flatnonzero(~_same_values(new, old)).tolist():
                    compare_value(key, old[p], new[p], self.differs[p], self.digits[p])
            else:
                self.made(key)

    def made(self, key: str) -> None:
        """A part made of the verdict's objects, compared whole where they are not equal (a marked part marked)."""
        kernels, later, likes = self.kernels, self.later, self.likes
        if key == "decision_path":
            flags = self.steps_differ()
        else:
            if key == "launch":  # the texts they were read from
                values = list(zip(*self.columns.dims))
            else:
                values = list(zip(*map(kernels.column, _MADE[key]))) if key in _MADE else kernels.column(key)
            new, old = [values[i] for i in later], [values[j] for j in likes]
            # where: a launch's lines, whose numbers are written as they are: compared unless the same object
            flags = ~np.fromiter(map(operator.eq if key != "where" else operator.is_, new, old), dtype=bool, count=len(later))
            if key == "findings":
                flags |= _placed(new) | _placed(old)
        get = DOCUMENT[key] if key not in _MARKED else _marked(key)
        for p in np.flatnonzero(flags).tolist():
            compare_value(key, get(kernels.row(likes[p])), get(kernels.row(later[p])), self.differs[p], self.digits[p])

    def steps_differ(self) -> np.ndarray:
        """By later launch: whether its decision path can be written otherwise than its like's, marked: another branch
        taken, or a value of a step both reached that differs, but for a number at both where `metrics` or `compared`
        holds its name (the repeat mark at both)."""
        columns, decisions = self.columns, self.columns.decisions
        taken = np.asarray(decisions.chosen)
        this, other = taken[np.asarray(self.later)], taken[np.asarray(self.likes)]
        flags = this != other
        for j, tried in enumerate(decisions.tried):
            reached = this >= j
            for name in tried:
                values = columns.differs(name, self.at, self.of)
                if name in columns._markable:
                    values &= ~columns.numbers(name, self.at, self.of)
                flags |= reached & values
        return flags

    def metric_part(self, key: str) -> None:
        """`metrics`, `chart` or `compared`, metric by metric: those whose values can differ from the like's are read,
        marked (`chart` and `compared` against `metrics`) and compared as json_delta._diff compares two mappings
        of the same keys; a launch whose `metrics` holds other keys than its like's has it compared whole."""
        columns, kernels, later, likes, differs, digits = self.columns, self.kernels, self.later, self.likes, self.differs, self.digits
        names = columns.names[key]
        pointer = _pointer("", key)
        # A launch's `metrics` (and `chart`) read where one of its values can differ: made only there.
        new_metrics, old_metrics = _Launch(kernels, "display_metrics", later), _Launch(kernels, "display_metrics", likes)
        whole: set[int] = set()
        by_name = {name: columns.differs(name, self.at, self.of) for name in names}
        if key == "metrics":
            flagged = np.zeros(len(later), dtype=bool)
            for flags in by_name.values():
                flagged |= flags
            for p in np.flatnonzero(flagged).tolist():
                if list(old_metrics[p]) != list(new_metrics[p]):
                    whole.add(p)
                    compare_value(key, old_metrics[p], new_metrics[p], differs[p], digits[p])
        elif key == "chart":
            new_part, old_part = _Launch(kernels, "chart_metrics", later), _Launch(kernels, "chart_metrics", likes)
        else:
            at, of = self.at.tolist(), self.of.tolist()
        for name, flags in by_name.items():
            marked = key != "metrics" and name in columns._display
            if marked:  # a number at both is the repeat mark at both
                flags = flags & ~columns.numbers(name, self.at, self.of)
            at_name = _pointer(pointer, name)
            column = columns._compared[name] if key == "compared" else None
            for p in np.flatnonzero(flags).tolist():
                if key == "metrics":
                    if p in whole or name not in new_metrics[p]:
                        continue  # compared whole, or known at neither launch (their `metrics` have the same keys)
                    old, new = old_metrics[p][name], new_metrics[p][name]
                else:
                    old, new = (column[of[p]], column[at[p]]) if column is not None else (old_part[p][name], new_part[p][name])
                    if marked:
                        old, new = _marked_value(old, old_metrics[p].get(name)), _marked_value(new, new_metrics[p].get(name))
                _write(old, new, at_name, differs[p], digits[p])

    def effects(self) -> None:
        """The effects (KernelEffects.to_json: the report's arrays at the launch's row, written as they are): where
        every launch's read the same arrays, compared value by value in the document's order (the units'
        utilizations, the duration, each finding's effect, the units' reach); otherwise whole."""
        kernels, later, likes, differs, digits = self.kernels, self.later, self.likes, self.differs, self.digits
        effects = kernels.column("effects")
        first = effects[0]
        if not (first is not None and all(e is not None and e.util is first.util and e.reach is first.reach and e.lists is first.lists
                                          and (e.roof, e.floor_ns, e.busy) == (first.roof, first.floor_ns, first.busy) for e in effects)):
            get = DOCUMENT["effects"]
            for p, (i, j) in enumerate(zip(later, likes)):
                if effects[i] is not None or effects[j] is not None:
                    compare_value("effects", get(kernels.row(j)), get(kernels.row(i)), differs[p], digits[p])
            return
        pointer = _pointer("", "effects")
        at, of = self.at.tolist(), self.of.tolist()

        def by_unit(part: str, arrays: dict) -> None:
            at_part = _pointer(pointer, part)
            for unit, values in arrays.items():
                at_unit, flat = _pointer(at_part, unit), first.lists.listed(values)
                for p in np.flatnonzero(_floats_differ(values, self.at, self.of)).tolist():
                    _write(flat[of[p]], flat[at[p]], at_unit, differs[p], digits[p])

        by_unit("util", first.util)
        at_duration = _pointer(pointer, "duration_ns")
        new, old = [effects[i].duration_ns for i in later], [effects[j].duration_ns for j in likes]
        for p in np.flatnonzero(~_same_values(new, old)).tolist():
            _write(old[p], new[p], at_duration, differs[p], digits[p])
        at_findings = _pointer(pointer, "findings")
        fixes = np.fromiter((bool(effects[i].findings) or bool(effects[j].findings) for i, j in zip(later, likes)), dtype=bool, count=len(later))
        for p in np.flatnonzero(fixes).tolist():
            _write(effects[likes[p]].to_json()["findings"], effects[later[p]].to_json()["findings"], at_findings, differs[p], digits[p])
        by_unit("reach", first.reach)


class _Launch:
    """One field of the launches at ``places`` (a LaunchVerdicts'), each read when first asked for, by position."""

    def __init__(self, kernels: LaunchVerdicts, name: str, places: list[int]):
        self.kernels, self.name, self.places, self.read = kernels, name, places, {}

    def __getitem__(self, p: int):
        value = self.read.get(p)
        if value is None:
            value = self.read[p] = self.kernels.value(self.name, self.places[p])
        return value


def _write(old, new, pointer: str, out: dict, digits: dict) -> None:
    """json_delta._diff's step into a mapping's value (``old`` and ``new`` at ``pointer``): nothing where they are the
    same (json_delta._same), else what differs; a number, null or true/false whole, told without a call."""
    kind = type(new)
    if type(old) is kind and kind is not dict and kind is not list:
        if old == new:
            return
        if kind is not str:
            out[pointer] = new
            return
    elif kind is not dict and kind is not list and type(old) is not dict and type(old) is not list:
        out[pointer] = new  # of two types: written whole (no digits but between two texts)
        return
    if not _same(old, new):
        _diff(old, new, pointer, out, digits)


def _marked_value(value, source):
    """``value`` as json_delta.mark_part writes it where the record's `metrics` holds ``source`` under its name."""
    kind = type(value)
    return REPEAT if (kind is int or kind is float) and repeats(value, source) else value


def _marked(key: str):
    """A launch's list of steps or findings as its marked record holds it (json_delta.mark_repeats: each inner
    mapping marked against the record's `metrics` and `compared`)."""
    get, inner = DOCUMENT[key], _MARKED[key]

    def marked(k: KernelVerdict) -> list:
        metrics, compared = k.display_metrics, k.compared_metrics
        return [{**item, inner: mark_part(item[inner], False, metrics, compared)} if isinstance(item, dict) and isinstance(item.get(inner), dict)
                else item for item in get(k)]

    return marked


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
    """By pair of report rows: whether an array of the report's (one value: the same for every launch) differs at
    ``at`` from ``of`` as written (NaN as null; a zero's sign)."""
    flat = np.asarray(values, dtype=float).reshape(-1)
    if flat.size == 1:
        return np.zeros(len(at), dtype=bool)
    a, b = flat[at], flat[of]
    same = ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))
    return ~same
