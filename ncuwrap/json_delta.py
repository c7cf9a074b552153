"""Records that share most of their values, written as what each differs from the first of its kind
(the diagnosis document v3, :mod:`ncuwrap.diagnosis_doc`), and expanded back. Pure JSON values in and
out; the pointers are RFC 6901 JSON Pointers."""

from __future__ import annotations

import orjson


def _pointer(path: str, key) -> str:
    return f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"


def _diff(first, this, path: str, out: dict) -> None:
    """The pointers under ``path`` where ``this`` differs from ``first`` (both JSON values), into ``out``."""
    if type(first) is dict and type(this) is dict and list(first) == list(this):
        for key, value in this.items():
            if not _same(first[key], value):
                _diff(first[key], value, _pointer(path, key), out)
    elif type(first) is list and type(this) is list and len(first) == len(this):
        for i, (a, b) in enumerate(zip(first, this)):
            if not _same(a, b):
                _diff(a, b, _pointer(path, i), out)
    else:
        out[path] = this


def _same(a, b) -> bool:
    # Equal as JSON text: 1 and 1.0, or True and 1, are equal in Python but not in the document.
    return type(a) is type(b) and (a == b if not isinstance(a, (dict, list)) else orjson.dumps(a) == orjson.dumps(b))


def share_launches(records: list[dict]) -> list[dict]:
    """v2 launch records -> v3's: each kernel's first launch whole, the later ones as what differs from it."""
    firsts: dict[str, tuple[dict, dict]] = {}  # kernel name -> (its first record, that record's values as JSON text)
    out = []
    for record in records:
        known = firsts.get(record["name"])
        if known is None:
            firsts[record["name"]] = (record, {key: orjson.dumps(value) for key, value in record.items()})
            out.append(record)
            continue
        first, text = known
        differs: dict = {}
        if list(first) != list(record):
            differs[""] = record  # another shape of record (never from one report's launches): whole
        else:
            for key, value in record.items():
                if key != "id" and orjson.dumps(value) != text[key]:
                    _diff(first[key], value, _pointer("", key), differs)
        out.append({"id": record["id"], "like": first["id"], "differs": differs})
    return out


def _set(record: dict, pointer: str, value) -> None:
    keys = [k.replace("~1", "/").replace("~0", "~") for k in pointer.split("/")[1:]]
    node = record
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(keys[-1])] = value
    else:
        node[keys[-1]] = value


def expand_launches(records: list[dict]) -> list[dict]:
    """v3 launch records -> v2's (share_launches undone): every launch whole, in the first's key order."""
    by_id: dict = {}
    kernels = []
    for record in records:
        if "like" in record:
            differs = record["differs"]
            if "" in differs:
                full = differs[""]
            else:
                full = orjson.loads(orjson.dumps(by_id[record["like"]]))  # a deep copy, in the first's key order
                full["id"] = record["id"]
                for pointer, value in differs.items():
                    _set(full, pointer, value)
            record = full
        else:
            by_id[record["id"]] = record
        kernels.append(record)
    return kernels
