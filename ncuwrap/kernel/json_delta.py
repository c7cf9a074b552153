"""Launch records that share most of their values, written as what each differs from an earlier launch
of its kernel (the diagnosis document, :mod:`ncuwrap.kernel.document`), and expanded back. Pure JSON
values in and out; the pointers are RFC 6901 JSON Pointers.

v4 (what :func:`share_launches` writes), for a kernel's later launch::

    {"id": 9, "like": 4, "differs": {"/duration_ns": 25630.0}, "digits": {"/why": ["71", "12"]}}

- ``like``: the latest earlier launch of the kernel with the same shape (launch configuration, verdict,
  the rules that fired, the decision's steps: :func:`_shape`), else the kernel's first launch. A
  training loop's step N launch is like its step N-1 twin, and ``like`` may itself be a later launch.
- ``differs``: pointer -> this launch's value there (a mapping whose keys differ, a list of another
  length, given whole), against the like launch's record *with its repeats marked* (:func:`mark_repeats`).
- ``plain``: true where this launch or its like holds the text ``"="`` itself in those parts (a report's
  string metric can): its ``differs`` are then against the like's record as it is.
- ``digits``: pointer -> the digit runs of a text that differs from the like's only in its numbers
  ("occupancy (63.1%)" after "occupancy (58.4%)": ``["63", "1"]``).

v3 wrote ``like`` as the kernel's first launch and no ``digits``, against the unmarked record: the same
:func:`expand_launches` reads it (a v3 document is expanded with ``marked=False``).
"""

from __future__ import annotations

import functools
import math
import operator
import re
from collections.abc import Iterable
from itertools import repeat

import orjson

# A value said once in a launch record: in these parts, a value equal to the same key's value in the
# record's `metrics` (else its `compared`) is marked, so that it is compared, and written, once.
REPEAT = "="
_DIGITS = re.compile(r"(\d+)")


@functools.lru_cache(maxsize=4096, typed=True)
def _pointer(path: str, key) -> str:
    # Cached: a report's launches differ from their likes at the same few hundred pointers.
    key = str(key)
    if "~" in key or "/" in key:
        key = key.replace("~", "~0").replace("/", "~1")
    return f"{path}/{key}"


def _diff(first, this, path: str, out: dict, digits: dict | None) -> None:
    """The pointers under ``path`` where ``this`` differs from ``first`` (both JSON values), into ``out``;
    texts that differ only in their digit runs into ``digits`` (None: no such texts)."""
    if type(first) is dict and type(this) is dict and list(first) == list(this):
        for key, value in this.items():
            if not _same(first[key], value):
                _diff(first[key], value, _pointer(path, key), out, digits)
    elif type(first) is list and type(this) is list and len(first) == len(this):
        for i, (a, b) in enumerate(zip(first, this)):
            if not _same(a, b):
                _diff(a, b, _pointer(path, i), out, digits)
    elif digits is not None and type(first) is str and type(this) is str and (runs := _runs(first, this)) is not None:
        digits[path] = runs
    else:
        out[path] = this


def _runs(first: str, this: str) -> list[str] | None:
    """``this``'s digit runs where it is ``first`` with other digits (None where the rest differs too)."""
    a, b = _DIGITS.split(first), _DIGITS.split(this)
    return b[1::2] if len(a) == len(b) and len(a) > 1 and a[0::2] == b[0::2] else None


def _same(a, b) -> bool:
    # Equal as JSON text: 1 and 1.0, or True and 1, are equal in Python but not in the document.
    return type(a) is type(b) and (a == b if not isinstance(a, (dict, list)) else orjson.dumps(a) == orjson.dumps(b))


def _shape(record: dict) -> bytes:
    """What a launch's twin in another step shares with it: its like is the latest launch of this shape."""
    def names(part, key):
        items = record.get(part) or ()
        try:
            return list(map(dict.get, items, repeat(key)))  # every item a mapping (a launch record's are)
        except TypeError:  # some item is not: it has no name
            return [item.get(key) for item in items if isinstance(item, dict)]

    return orjson.dumps([record.get("name"), record.get("launch"), record.get("bound"), record.get("limiter"), names("ncu_rules", "rule"),
                         names("findings", "id"), names("not_evaluated", "rule"), names("decision_path", "verdict")])


# ------------------------------------------------------------------------------------------ repeats


def _parts(record: dict):
    """(mapping, whether its repeats come from `metrics` alone): the parts of a record whose values repeat others."""
    if isinstance(record.get("compared"), dict):
        yield record["compared"], True
    if isinstance(record.get("chart"), dict):
        yield record["chart"], True
    for part, key in (("decision_path", "values"), ("findings", "evidence")):
        for item in record.get(part) or ():
            if isinstance(item, dict) and isinstance(item.get(key), dict):
                yield item[key], False


def mark_repeats(record: dict) -> dict | None:
    """A copy of a launch record (v2's, with v3's `compared`) where each value of `compared` and `chart`
    equal to the same key's in `metrics`, and each decision value and finding evidence equal to the same
    key's in `metrics` (else `compared`), reads REPEAT. Copies only what it marks. None where a part holds
    REPEAT itself (a report's text): marking it could not be undone."""
    metrics = record.get("metrics") if isinstance(record.get("metrics"), dict) else {}
    compared = record.get("compared") if isinstance(record.get("compared"), dict) else {}
    swaps: dict[int, dict] = {}
    for mapping, metrics_only in _parts(record):
        marked = mark_part(mapping, metrics_only, metrics, compared)
        if marked is None:
            return None
        swaps[id(mapping)] = marked
    return _rebuilt(record, swaps)


def mark_part(mapping: dict, metrics_only: bool, metrics: dict, compared: dict) -> dict | None:
    """One part of a record (:func:`_parts`) as :func:`mark_repeats` marks it, against the record's `metrics`
    and `compared`; None where it holds REPEAT itself."""
    if REPEAT in mapping.values():
        return None
    marked = dict(mapping)
    # Only a key `metrics` holds can repeat it: walk the shorter of the two.
    keys = (metrics if len(metrics) < len(mapping) else mapping) if metrics_only else mapping
    for key in keys:
        if key not in mapping:
            continue
        value = mapping[key]
        kind = type(value)
        if kind is int or kind is float:
            if repeats(value, metrics.get(key) if metrics_only or key in metrics else compared.get(key)):
                marked[key] = REPEAT
    return marked


def repeats(value, source) -> bool:
    """Whether a number written where ``source`` is already written says the same (REPEAT may stand for it)."""
    kind = type(value)
    # -0.0 == 0.0, but the document writes them apart
    return (kind is int or kind is float) and type(source) is kind and source == value and (
        value != 0 or kind is int or math.copysign(1, value) == math.copysign(1, source))


def unmark_repeats(record: dict) -> dict:
    """:func:`mark_repeats` undone, in place: every REPEAT replaced by the value it stands for."""
    metrics = record.get("metrics") if isinstance(record.get("metrics"), dict) else {}
    for mapping, metrics_only in _parts(record):  # `compared` first: the others may read it
        compared = record.get("compared") if isinstance(record.get("compared"), dict) else {}
        for key, value in mapping.items():
            if value == REPEAT:
                mapping[key] = metrics[key] if key in metrics or metrics_only else compared[key]
    return record


def _rebuilt(record: dict, swaps: dict[int, dict]) -> dict:
    """``record`` with the mappings named in ``swaps`` (by id) replaced, the containers above them copied."""
    out = dict(record)
    for key in ("compared", "chart"):
        if id(out.get(key)) in swaps:
            out[key] = swaps[id(out[key])]
    for part, key in (("decision_path", "values"), ("findings", "evidence")):
        items = out.get(part)
        if isinstance(items, list):
            out[part] = [{**item, key: swaps[id(item[key])]} if isinstance(item, dict) and id(item.get(key)) in swaps else item for item in items]
    return out


# ------------------------------------------------------------------------------------------ sharing


def share_launches(records: Iterable[dict]) -> list[dict]:
    """Launch records (v2's and v3's keys) -> v4's: each kernel's first launch whole, the later ones as
    what differs from the latest earlier launch of their shape (see the module's docstring). ``records``
    may be made one at a time: only each kernel's first launch and each shape's latest are kept."""
    # kernel name -> its first launch; shape -> its latest launch: (record, marked or None, marked's values
    # as JSON text, each encoded when first compared: most values are told apart without it)
    firsts: dict[str, tuple] = {}
    latest: dict[bytes, tuple] = {}
    out = []
    for record in records:
        shape = _shape(record)
        marked = mark_repeats(record)
        this = (record, marked, {})
        known = firsts.get(record["name"])
        if known is None:
            firsts[record["name"]] = latest[shape] = this
            out.append(record)
            continue
        like, like_marked, like_text = latest.get(shape, known)
        latest[shape] = this
        plain = marked is None or like_marked is None
        values, base = (record, like) if plain else (marked, like_marked)
        text = this[2]
        if plain:  # the texts kept are the marked records'
            like_text, text = {}, {}
        differs: dict = {}
        digits: dict = {}
        if list(like) != list(record):
            differs[""] = record  # another shape of record (never from one report's launches): whole
            values = {}
        for key, value in values.items():
            compare_value(key, base[key], value, differs, digits, text, like_text)
        out.append({"id": record["id"], "like": like["id"], **({"plain": True} if plain else {}), "differs": differs,
                    **({"digits": digits} if digits else {})})
    return out


def compare_value(key: str, old, value, differs: dict, digits: dict, text: dict | None = None, old_text: dict | None = None) -> None:
    """One value of a later launch's record (``value``, at the record's ``key``) against its like's (``old``):
    where they differ, into ``differs`` and ``digits`` (:func:`share_launches`). ``text`` and ``old_text``:
    each record's values already encoded, by key (filled here)."""
    if key == "id" or old is value:
        return
    # Equal JSON text: a text, whole number, true or false where they are equal; any other value
    # (floats: -0.0 equals 0.0, NaN and infinity are all null) by its text.
    kind = type(value)
    if type(old) is kind and (kind is str or kind is int or kind is bool):
        if old == value:
            return
    elif kind is list and type(old) is list and len(old) == len(value) and all(map(operator.is_, old, value)):
        return  # the same objects (the rules not evaluated, one record each for all the launches they apply to)
    else:
        new_encoded = text.get(key) if text is not None else None
        if new_encoded is None:
            new_encoded = orjson.dumps(value)
            if text is not None:
                text[key] = new_encoded
        old_encoded = old_text.get(key) if old_text is not None else None
        if old_encoded is None:
            old_encoded = orjson.dumps(old)
            if old_text is not None:
                old_text[key] = old_encoded
        if new_encoded == old_encoded:
            return
    _diff(old, value, _pointer("", key), differs, digits)


def _keys(pointer: str) -> list[str]:
    """An RFC 6901 pointer's reference tokens, unescaped."""
    return [k.replace("~1", "/").replace("~0", "~") for k in pointer.split("/")[1:]]


def _get(record, keys: list[str]):
    node = record
    for key in keys:
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node


def _set(record: dict, pointer: str, value, owned: set, left: list) -> None:
    """Set the value at ``pointer``, copying first each container on the way that ``record`` shares with
    another (not in ``owned``, the ids of those it has copied): the copies are charged to ``left``."""
    keys = _keys(pointer)
    node = record
    for key in keys[:-1]:
        at = int(key) if isinstance(node, list) else key
        child = node[at]
        if id(child) not in owned and isinstance(child, (dict, list)):
            _charge(left, len(child))
            child = dict(child) if isinstance(child, dict) else list(child)
            node[at] = child
            owned.add(id(child))
        node = child
    if isinstance(node, list):
        node[int(keys[-1])] = value
    else:
        node[keys[-1]] = value


def _with_digits(pointer: str, record: dict, runs: list[str]) -> str:
    text = _get(record, _keys(pointer))
    pieces = _DIGITS.split(text)
    pieces[1::2] = runs
    return "".join(pieces)


class OverBudget(ValueError):
    """Expanding would copy more values than the caller allows (a document made to exhaust memory)."""


def expand_launches(records: list[dict], *, marked: bool = True, budget: int | None = None) -> list[dict]:
    """v4 launch records (v3's with ``marked=False``) -> whole ones (share_launches undone): every launch
    whole, in its like's key order. A launch shares every part it does not change with its like (the
    records are read, never changed, after this; a deep copy of each multiplied a document's memory: docs/scale.md, figures behind the code);
    ``budget``: the most values the expansion may copy, else :class:`OverBudget`."""
    by_id: dict = {}
    kernels = []
    left = [budget if budget is not None else math.inf]
    for record in records:
        if "like" in record:
            differs = record["differs"]
            if "" in differs:
                full = differs[""]
            else:
                like = by_id[record["like"]]
                repeats = marked and not record.get("plain")
                if repeats:
                    _charge(left, sum(len(mapping) for mapping, _ in _parts(like)))
                base = mark_repeats(like) if repeats else like
                if base is None:
                    raise ValueError(f"launch {record['id']}: its like holds the repeat mark {REPEAT!r} and this launch is not plain")
                full = dict(base)  # the parts mark_repeats rebuilt are this launch's own; the rest shared
                full["id"] = record["id"]
                owned = {id(full)}
                if repeats:  # what mark_repeats copied: the marked mappings and the lists and items above them
                    owned |= {id(mapping) for mapping, _ in _parts(full)}
                    owned |= {id(full[part]) for part in ("decision_path", "findings") if isinstance(full.get(part), list)}
                    shared = {id(item) for part in ("decision_path", "findings") for item in like.get(part) or ()}
                    owned |= {id(item) for part in ("decision_path", "findings") for item in full.get(part) or () if id(item) not in shared}
                for pointer, value in differs.items():
                    _set(full, pointer, value, owned, left)
                for pointer, runs in record.get("digits", {}).items():
                    _set(full, pointer, _with_digits(pointer, full, runs), owned, left)
                if repeats:
                    unmark_repeats(full)
            record = full
        by_id[record["id"]] = record
        kernels.append(record)
    return kernels


def _charge(left: list, values: int) -> None:
    left[0] -= values
    if left[0] < 0:
        raise OverBudget("its launches, each expanded from the one it is 'like', copy more values than allowed")
