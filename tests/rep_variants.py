"""SYNTHETIC variants of the real reports in tests/data, written at test time: a report whose launches are
edited (their names blanked as a C-linkage kernel's are, a rule message of a type the file reader has not
seen), or whose modules' SourceData come after the launches, the rest of the file as it was. For the tests of
what the .ncu-rep file reader does with launches it does not expect (tests/test_rep_fallback.py,
tests/test_rep_shapes.py)."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

from ncuwrap.kernel.reading import ncu_rep_format as f

_U32 = struct.Struct("<I")
# A launch's name fields (ProfileResult): the mangled, function and demangled names.
MANGLED, FUNCTION, DEMANGLED = 5, 6, 7
# The rule results' field: a launch's (ProfileResult), a graph result's (GraphResult).
LAUNCH_RULES, GRAPH_RULES = 19, 22


def rewrite(source: Path, target: Path, edit: Callable[[int, bytes], bytes]) -> None:
    """``source`` written to ``target`` with each launch's bytes replaced by ``edit(index, bytes)`` (the blocks'
    payload sizes made to fit)."""
    data = source.read_bytes()
    out = bytearray(data[:4])
    at = 4
    (n,) = _U32.unpack_from(data, at)
    out += data[at:at + 4 + n]
    at += 4 + n
    index = 0
    while at < len(data):
        (n,) = _U32.unpack_from(data, at)
        header = data[at + 4:at + 4 + n]
        at += 4 + n
        counts = f._varints(header)
        body = bytearray()
        for _ in range(counts.get(1, 0)):
            (m,) = _U32.unpack_from(data, at)
            body += data[at:at + 4 + m]
            at += 4 + m
        for _ in range(counts.get(2, 0) or counts.get(9, 0)):  # its launches, or its graph results
            (m,) = _U32.unpack_from(data, at)
            launch = edit(index, data[at + 4:at + 4 + m])
            index += 1
            at += 4 + m
            body += _U32.pack(len(launch)) + launch
        header = f._without(header, {5}) + f._varint_field(5, len(body))
        out += _U32.pack(len(header)) + header + body
    target.write_bytes(bytes(out))


def sources_last(source: Path, target: Path) -> None:
    """``source`` written to ``target`` with its blocks of sources alone (each module's SourceData) moved after all the
    others, in their order: every launch then comes before its module's SourceData, as ncu writes an application
    replay's launch (tests/data/h200_ncuwrap/shapes/appreplay)."""
    data = source.read_bytes()
    at = 4
    (n,) = _U32.unpack_from(data, at)
    at += 4 + n
    head, rest, last = data[:at], [], []
    while at < len(data):
        (n,) = _U32.unpack_from(data, at)
        counts = f._varints(data[at + 4:at + 4 + n])
        end = at + 4 + n + counts.get(5, 0)
        (last if counts.get(1, 0) and not counts.get(2, 0) else rest).append(data[at:end])
        at = end
    target.write_bytes(head + b"".join(rest + last))


def with_names(launch: bytes, names: dict[int, str]) -> bytes:
    """The launch with these name fields (MANGLED, FUNCTION, DEMANGLED -> text; "" as a C-linkage kernel's demangled name is)."""
    return f._without(launch, set(names)) + b"".join(_text_field(number, text) for number, text in names.items())


def with_rule_message_type(launch: bytes, kind: int, rules: int = LAUNCH_RULES) -> bytes:
    """The launch with its first rule message's type (Rule ``rules``: 19 of a launch, 22 of a graph result > body 3 >
    entry 1 > message 1 > type 2) set to ``kind``."""
    return _edited(launch, [rules, 3, 1, 1], lambda message: f._without(message, {2}) + f._varint_field(2, kind))


def _edited(message: bytes, path: list[int], edit: Callable[[bytes], bytes]) -> bytes:
    """``message`` with the first field ``path[0]`` (a message) edited down ``path``, its length made to fit."""
    if not path:
        return edit(message)
    for number, kind, value, (start, end) in f._fields(message):
        if number == path[0] and kind == 2:
            inner = _edited(message[value[0]:value[1]], path[1:], edit)
            return message[:start] + f._encode_varint(number << 3 | 2) + f._encode_varint(len(inner)) + inner + message[end:]
    raise ValueError(f"no field {path[0]}")


def _text_field(number: int, text: str) -> bytes:
    data = text.encode()
    return f._encode_varint(number << 3 | 2) + f._encode_varint(len(data)) + data
