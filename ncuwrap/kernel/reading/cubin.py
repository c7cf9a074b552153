"""What ncuwrap reads from a cubin (the ELF a ``.ncu-rep`` stores for each module): its sections, whether it
has a line table, and the bytes of the instructions at given PCs.

A report records each module's cubin as it was before loading and, beside it, the address each of its
functions was loaded at (``RelocationData``): a PC of that launch is then the function's address plus an
offset into the function's own ``.text.<mangled name>`` section. Everything here is bounded by the bytes
given: a header or section table that does not lie inside them gives None, never an exception.
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass, replace

_SECTION = struct.Struct("<IIQQQQII")  # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info
# The sections a cubin's line table is in: nvcc writes both with -lineinfo (or -G); a library built without
# them (torch's, CUB's) has neither, and ncu_report then gives no PC a source line (every report in
# tests/data: all of a launch's PCs have a line, or none has, as these sections say).
_LINE_SECTIONS = frozenset({".debug_line", ".nv_debug_line_sass"})
# Volta and later encode every instruction in 16 bytes that decode alone (no shared control word): so one
# instruction can be handed to a disassembler by itself.
INSTRUCTION_BYTES = 16
FIRST_SM = 70


@dataclass(frozen=True)
class Section:
    """One section header of a cubin: its name, type (SHT_*), where its bytes lie in the ELF, and the two
    header fields that tie it to others (a relocation section's symbol table and target, a symbol table's
    names)."""

    name: str
    type: int
    offset: int
    size: int
    link: int
    info: int


def headers(elf: bytes) -> list[Section] | None:
    """The section headers of a 64-bit little-endian ELF, by index; None where the bytes are not one whose
    section headers and names lie inside them (the sections' own bytes are not checked here)."""
    if len(elf) < 64 or elf[:6] != b"\x7fELF\x02\x01":
        return None
    shoff = int.from_bytes(elf[0x28:0x30], "little")
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    if shentsize < _SECTION.size or not 0 <= shstrndx < shnum or shoff + shnum * shentsize > len(elf):
        return None
    names_at, names_size = _SECTION.unpack_from(elf, shoff + shstrndx * shentsize)[4:6]
    if names_at + names_size > len(elf):
        return None
    names = elf[names_at:names_at + names_size]
    out = []
    for i in range(shnum):
        start, kind, _, _, offset, size, link, info = _SECTION.unpack_from(elf, shoff + i * shentsize)
        end = names.find(b"\0", start)
        if start >= len(names) or end < 0:
            return None
        out.append(Section(names[start:end].decode("latin-1"), kind, offset, size, link, info))
    return out


def sections(elf: bytes) -> dict[str, tuple[int, int]] | None:
    """Section name -> (offset, size) of a 64-bit little-endian ELF; None where the bytes are not one whose
    section headers, names and sections lie inside them."""
    found = headers(elf)
    if found is None or any(s.name.startswith(".text.") and s.offset + s.size > len(elf) for s in found):
        return None
    return {s.name: (s.offset, s.size) for s in found}


def has_line_table(elf: bytes, found: dict | None = None) -> bool | None:
    """Whether a cubin carries a line table (:data:`_LINE_SECTIONS`); None where its sections are not readable.
    ``found``: its :func:`sections`, where already read."""
    found = sections(elf) if found is None else found
    return None if found is None else any(name in _LINE_SECTIONS for name in found)


@dataclass(frozen=True)
class Code:
    """Where one module's functions lie: in the report's file (``at``: the offset of the cubin's first byte
    in it), and in the profiled process (``functions``: load address and mangled name, by address).
    ``sm``: the cubin's architecture as the report records it (major << 16 | minor)."""

    at: int
    sm: int
    functions: tuple[tuple[int, str], ...]
    text: dict  # mangled name -> (offset of its .text section in the cubin, size)

    @property
    def arch(self) -> str | None:
        """The architecture as nvdisasm names it (``SM90``); None before Volta or when not recorded."""
        major, minor = self.sm >> 16, self.sm & 0xFFFF
        return f"SM{major}{minor}" if major * 10 + minor >= FIRST_SM and minor < 10 else None

    def placed(self, functions: dict[str, int]) -> "Code | None":
        """This module with more of its functions' addresses; None where one is placed somewhere else."""
        known = {name: address for address, name in self.functions}
        if any(known.get(name, address) != address for name, address in functions.items()):
            return None
        known.update((name, address) for name, address in functions.items() if name in self.text)
        return replace(self, functions=tuple(sorted((address, name) for name, address in known.items())))

    def function_at(self, pc: int) -> tuple[str, int] | None:
        """(mangled name, offset into its ``.text`` section) of the function that holds ``pc``; None where none does."""
        at = bisect.bisect_right(self.functions, (pc, "\U0010ffff")) - 1
        if at < 0:
            return None
        address, name = self.functions[at]
        offset = pc - address
        return (name, offset) if offset < self.text.get(name, (0, 0))[1] else None

    def where(self, pc: int) -> tuple[int, int] | None:
        """(offset in the report's file, bytes) of the instruction at ``pc``; None where no function of the
        module holds it."""
        found = self.function_at(pc)
        if found is None:
            return None
        name, offset = found
        placed = self.text[name]
        if offset % INSTRUCTION_BYTES or offset + INSTRUCTION_BYTES > placed[1]:
            return None
        return self.at + placed[0] + offset, INSTRUCTION_BYTES


def code(elf: bytes, at: int, sm: int, functions: dict[str, int], found: dict | None = None) -> Code | None:
    """The :class:`Code` of a cubin whose first byte is at ``at`` in the report, loaded at ``functions``
    (mangled name -> address); None where its sections are not readable (``found``: its :func:`sections`,
    where already read)."""
    found = sections(elf) if found is None else found
    if found is None:
        return None
    text = {name[len(".text."):]: where for name, where in found.items() if name.startswith(".text.")}
    placed = tuple(sorted((address, name) for name, address in functions.items() if name in text))
    return Code(at=at, sm=sm, functions=placed, text=text)
