"""Build a SYNTHETIC many-launch .ncu-rep from a real one: its launches repeated (issue 41's local stand-in).

No report here holds more than 6 launches (the H200 corpus report of 44 is not in the repository), so the
cost per launch read (NVIDIA's reader grows ~14 MiB a launch) is measured on a real launch written N times:
the file keeps the report's header, its session and source blocks, and its launch blocks follow N times, the
repeats without the string table (ids index the one table, as in a real report's later blocks). ncu_report
and ncuwrap read it as N launches of the same kernel. SYNTHETIC: one function, so NVIDIA's reader answers
each PC's line once for all N (ncuwrap caches by PC); a real report of N functions asks N times.

    python benchmarks/ncurep_repeat.py tests/data/h200/transpose/transposeNaive.ncu-rep 44 /tmp/naive44.ncu-rep
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

_U32 = struct.Struct("<I")


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _without_field(message: bytes, number: int) -> bytes:
    """``message`` with every occurrence of field ``number`` (length-delimited or varint) left out."""
    out, at = bytearray(), 0
    while at < len(message):
        start = at
        key, at = _varint(message, at)
        kind = key & 7
        if kind == 0:
            _, at = _varint(message, at)
        elif kind == 2:
            length, at = _varint(message, at)
            at += length
        elif kind == 1:
            at += 8
        elif kind == 5:
            at += 4
        else:
            raise ValueError(f"wire type {kind}")
        if key >> 3 != number:
            out += message[start:at]
    return bytes(out)


def repeat(source: Path, times: int, target: Path) -> None:
    data = source.read_bytes()
    (length,) = _U32.unpack_from(data, 4)
    head, at = data[: 8 + length], 8 + length
    blocks = []  # (header bytes, payload bytes, has launches)
    while at < len(data):
        (length,) = _U32.unpack_from(data, at)
        header = data[at + 4: at + 4 + length]
        fields = {}
        i = 0
        while i < len(header):
            key, i = _varint(header, i)
            if key & 7 == 0:
                fields[key >> 3], i = _varint(header, i)
            else:
                size, i = _varint(header, i)
                i += size
        at += 4 + length
        payload = data[at: at + fields.get(5, 0)]
        at += fields.get(5, 0)
        blocks.append((header, payload, fields.get(2, 0) > 0))
    with target.open("wb") as out:
        out.write(head)
        for header, payload, launches in blocks:
            out.write(_U32.pack(len(header)) + header + payload)
            if launches:
                bare = _without_field(header, 4)
                for _ in range(times - 1):
                    out.write(_U32.pack(len(bare)) + bare + payload)


if __name__ == "__main__":
    repeat(Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
