"""The source file and line of each instruction of a cubin, from its own DWARF line table (``.debug_line``): what
``ncu_report``'s ``source_info(pc)`` answers, without loading NVIDIA's reader.

nvcc writes ``.debug_line`` with ``-lineinfo`` (or ``-G``): one line program (DWARF version 2 from nvcc 13.0),
one sequence per kernel, each starting with a DW_LNE_set_address whose operand is 0 and relocated
(``.rela.debug_line``) to its kernel's symbol: so an address in a sequence is an offset into that kernel's own
``.text.<mangled name>`` section, whatever address the kernel was loaded at. Beside it ``.nv_debug_line_sass``
maps the same offsets to lines of the PTX (``.nv_debug_ptx_txt``), which ncu_report does not give as the source.

What ncu_report gives, checked on every instruction of every report here (tests/test_line_table.py): the file
as ``directory/name`` made normal (``/usr/local/cuda/bin/../targets`` becomes ``/usr/local/cuda/targets``), and
the line of the row that holds at the PC, the first row where several start at one address. nvcc writes code
inlined into a kernel as the call site's row, then NVIDIA's extended opcode 0x90 (the inlined function's
context), then the inlined function's rows, the first of them at the call site's address: so ncu_report gives
the call site's line for that first instruction and the inlined function's own lines (the innermost) after it.
(Taking the last row at an address instead gives another line for 291 of the 9,364 instructions with a line here.)

Everything is bounded by the bytes given: a program reads each byte at most once and keeps at most a row per
byte. Anything that is not as described (another relocation, a line program version past 5, an address size
other than 8, an opcode or a file index that runs past its section) gives no table at all: the caller then asks
ncu_report, which knows more forms than this reader does.
"""

from __future__ import annotations

import bisect
import posixpath
import struct
from dataclasses import dataclass
from pathlib import Path

from ncuwrap.kernel.reading import cubin

_RELA = struct.Struct("<QQq")  # r_offset, r_info (symbol << 32 | type), r_addend
_SYMBOL = struct.Struct("<IBBHQQ")  # st_name, st_info, st_other, st_shndx, st_value, st_size
_SHT_RELA = 4
_R_CUDA_64 = 2  # the relocation nvcc writes for a 64-bit address: the symbol's value plus the addend
_ADDRESS_SIZE = 8
_VERSIONS = range(2, 6)
# DWARF 5's forms of the fields of a directory or file entry (DW_FORM_*: fixed sizes, a string in line,
# an offset into a string section, a ULEB128) and its content types (DW_LNCT_*).
_FIXED_FORMS = {0x0B: 1, 0x05: 2, 0x06: 4, 0x07: 8, 0x1E: 16}  # data1, data2, data4, data8, data16
_FORM_STRING, _FORM_LINE_STRP, _FORM_STRP, _FORM_UDATA, _FORM_BLOCK = 0x08, 0x1F, 0x0E, 0x0F, 0x09
_LNCT_PATH, _LNCT_DIRECTORY_INDEX = 1, 2
# A cubin's ELF is read from a report up to its last header: bounded by the report's size, and by this.
MAX_ELF_BYTES = 1 << 30

Place = tuple  # (file or None, line or None)
NOWHERE: Place = (None, None)


class _Unreadable(Exception):
    """A line program this reader does not read (damaged, or a form it does not know): no table."""


@dataclass(frozen=True)
class LineTable:
    """Each kernel's rows: mangled name -> (offsets, places), the offsets (into the kernel's ``.text``
    section) ascending, each with the (file, line) that holds from it to the next offset. A place of
    (None, None) ends a sequence: past it, and before a kernel's first row, no line is known."""

    rows: dict

    def where(self, function: str, offset: int) -> Place:
        """(file, line) of the instruction at ``offset`` into ``function``'s ``.text`` section, as ncu_report's
        source_info gives it; (None, None) where the table has no row for it."""
        found = self.rows.get(function)
        if found is None:
            return NOWHERE
        offsets, places = found
        at = bisect.bisect_right(offsets, offset) - 1
        return places[at] if at >= 0 else NOWHERE

    def places(self, code: cubin.Code, pcs) -> dict[int, Place]:
        """PC -> (file, line) of each of ``pcs`` of a launch whose module's functions lie as ``code`` says;
        (None, None) for a PC that no function of the module holds."""
        out = {}
        for pc in pcs:
            found = code.function_at(pc)
            out[pc] = NOWHERE if found is None else self.where(*found)
        return out


def read(elf: bytes | None) -> LineTable | None:
    """The line table of a cubin; None where it has none, or one this reader cannot read as ncu_report does (and
    for no cubin: :func:`elf_of`'s None)."""
    found = cubin.headers(elf) if elf is not None else None
    if found is None:
        return None
    by_name = {s.name: s for s in found}
    line = by_name.get(".debug_line")
    if line is None or line.offset + line.size > len(elf) or ".rel.debug_line" in by_name:
        return None
    try:
        relocated = _relocations(elf, found, by_name.get(".rela.debug_line"))
        strings = {name: _bytes(elf, by_name[name]) for name in (".debug_str", ".debug_line_str") if name in by_name}
        rows: dict = {}
        data = elf[line.offset:line.offset + line.size]
        at = 0
        while at < len(data):
            at = _unit(data, at, relocated, strings, rows)
    except _Unreadable:
        return None
    return LineTable({name: (tuple(offsets), tuple(places)) for name, (offsets, places) in rows.items()})


def elf_of(path: Path, code: cubin.Code) -> bytes | None:
    """The bytes of the cubin of ``code``'s module from the (plain) report at ``path``: from its first byte
    to the end of its section or program headers, whichever is last; None where they do not lie in the file."""
    size = path.stat().st_size
    if not 0 <= code.at < size:
        return None
    with path.open("rb") as fh:
        fh.seek(code.at)
        head = fh.read(64)
        if len(head) < 64 or head[:6] != b"\x7fELF\x02\x01":
            return None
        phoff, shoff = struct.unpack_from("<QQ", head, 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", head, 0x36)
        end = max(phoff + phentsize * phnum, shoff + shentsize * shnum, 64)
        if end > min(MAX_ELF_BYTES, size - code.at):
            return None
        fh.seek(code.at)
        return fh.read(end)


# ------------------------------------------------------------------------------------------ the ELF


def _bytes(elf: bytes, section: cubin.Section) -> bytes:
    if section.offset + section.size > len(elf):
        raise _Unreadable("a section runs past the cubin")
    return elf[section.offset:section.offset + section.size]


def _relocations(elf: bytes, found: list[cubin.Section], rela: cubin.Section | None) -> dict[int, tuple[str, int]]:
    """Offset into .debug_line -> (kernel, offset into its .text section) the 8 bytes there are relocated to."""
    if rela is None:
        return {}
    if rela.type != _SHT_RELA or not 0 < rela.link < len(found):
        raise _Unreadable("not a RELA section with a symbol table")
    entries, symbols = _bytes(elf, rela), _bytes(elf, found[rela.link])
    out = {}
    for at in range(0, len(entries) - _RELA.size + 1, _RELA.size):
        offset, info, addend = _RELA.unpack_from(entries, at)
        symbol, kind = info >> 32, info & 0xFFFFFFFF
        if kind != _R_CUDA_64 or (symbol + 1) * _SYMBOL.size > len(symbols):
            raise _Unreadable("a relocation of another kind, or past the symbol table")
        shndx, value = _SYMBOL.unpack_from(symbols, symbol * _SYMBOL.size)[3:5]
        section = found[shndx].name if shndx < len(found) else ""
        if not section.startswith(".text."):
            raise _Unreadable("an address relocated to something other than a kernel's code")
        out[offset] = (section[len(".text."):], value + addend)
    return out


# ------------------------------------------------------------------------------------------ decoding


class _Bytes:
    """Bounded reads from a section's bytes: every read past the end raises _Unreadable."""

    def __init__(self, data: bytes, at: int, end: int):
        self.data, self.at, self.end = data, at, end

    def take(self, size: int) -> bytes:
        if size < 0 or self.at + size > self.end:
            raise _Unreadable("a field runs past its unit")
        self.at += size
        return self.data[self.at - size:self.at]

    def unsigned(self, size: int) -> int:
        return int.from_bytes(self.take(size), "little")

    def signed(self, size: int) -> int:
        return int.from_bytes(self.take(size), "little", signed=True)

    def uleb(self) -> int:
        value = shift = 0
        while True:
            byte = self.unsigned(1)
            if shift > 63:
                raise _Unreadable("a LEB128 longer than 64 bits")
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    def sleb(self) -> int:
        value, shift = self.uleb_bits()
        return value - (1 << shift) if value >> (shift - 1) & 1 else value

    def uleb_bits(self) -> tuple[int, int]:
        start = self.at
        value = self.uleb()
        return value, 7 * (self.at - start)

    def string(self) -> bytes:
        end = self.data.find(b"\0", self.at, self.end)
        if end < 0:
            raise _Unreadable("a string runs past its unit")
        text = self.data[self.at:end]
        self.at = end + 1
        return text


@dataclass
class _Header:
    version: int
    min_length: int
    line_base: int
    line_range: int
    opcode_base: int
    lengths: bytes  # the number of ULEB128 operands of each standard opcode, from opcode 1
    files: list  # file index -> the path ncu_report gives (None: not a file)


def _unit(data: bytes, start: int, relocated: dict, strings: dict, rows: dict) -> int:
    """Read the line program at ``start`` into ``rows``; the offset of the next one."""
    head = _Bytes(data, start, len(data))
    length, size = head.unsigned(4), 4
    if length == 0xFFFFFFFF:
        length, size = head.unsigned(8), 8
    if length < 2 or head.at + length > len(data):
        raise _Unreadable("a unit runs past the section")
    unit = _Bytes(data, head.at, head.at + length)
    header = _header(unit, size, strings)
    _Program(header, unit, relocated, rows).run()
    return unit.end


def _header(unit: _Bytes, size: int, strings: dict) -> _Header:
    version = unit.unsigned(2)
    if version not in _VERSIONS:
        raise _Unreadable(f"line program version {version}")
    if version >= 5 and (unit.unsigned(1) != _ADDRESS_SIZE or unit.unsigned(1) != 0):
        raise _Unreadable("an address size other than 8, or segment selectors")
    header_length = unit.unsigned(size)
    program = unit.at + header_length
    if program > unit.end:
        raise _Unreadable("the header runs past its unit")
    min_length = unit.unsigned(1)
    if version >= 4 and unit.unsigned(1) != 1:
        raise _Unreadable("more than one operation per instruction (VLIW)")
    unit.take(1)  # default_is_stmt: ncu_report's lines do not depend on it
    line_base, line_range, opcode_base = unit.signed(1), unit.unsigned(1), unit.unsigned(1)
    if line_range == 0 or opcode_base == 0:
        raise _Unreadable("no line range or opcode base")
    lengths = unit.take(opcode_base - 1)
    files = _files_v5(unit, size, strings) if version >= 5 else _files(unit)
    if unit.at > program:
        raise _Unreadable("the file names run past the header")
    unit.at = program  # padding may lie between the file names and the program (nvcc writes 4 zero bytes)
    return _Header(version, min_length, line_base, line_range, opcode_base, lengths, files)


def _files(unit: _Bytes) -> list:
    """DWARF 2-4's directories and file names: the path of each file, index 1 first."""
    directories = [None]  # 0: the compilation directory, which a cubin does not record without .debug_info
    while name := unit.string():
        directories.append(name)
    files: list = [None]
    while name := unit.string():
        directory = unit.uleb()
        unit.uleb(), unit.uleb()  # modification time, size
        files.append(_path(directories, directory, name))
    return files


def _path(directories: list, index: int, name: bytes) -> str | None:
    """The path ncu_report gives for a file: its directory and name joined and made normal; None where the
    directory is not recorded (a relative name in the compilation directory: not known here)."""
    if name.startswith(b"/"):
        joined = name
    elif index < len(directories) and directories[index] is not None:
        joined = directories[index] + b"/" + name
    else:
        return None
    try:
        return posixpath.normpath(joined.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def _files_v5(unit: _Bytes, size: int, strings: dict) -> list:
    """DWARF 5's directory and file entries (each described by its format): the path of each file, index 0 first."""
    directories = [entry.get(_LNCT_PATH) for entry in _entries(unit, size, strings)]
    files = []
    for entry in _entries(unit, size, strings):
        name, index = entry.get(_LNCT_PATH), entry.get(_LNCT_DIRECTORY_INDEX, 0)
        if not isinstance(name, bytes) or not isinstance(index, int) or not isinstance(directories[index] if index < len(directories) else b"", bytes):
            raise _Unreadable("a file entry without a path, or a path or directory index of another form")
        files.append(_path(directories, index, name))
    return files


def _entries(unit: _Bytes, size: int, strings: dict) -> list[dict]:
    formats = [(unit.uleb(), unit.uleb()) for _ in range(unit.unsigned(1))]
    count = unit.uleb()
    if count > unit.end - unit.at:  # each entry takes a byte at least: a count past that is damage
        raise _Unreadable("more entries than bytes")
    return [{kind: _form(unit, form, size, strings) for kind, form in formats} for _ in range(count)]


def _form(unit: _Bytes, form: int, size: int, strings: dict):
    if form == _FORM_STRING:
        return unit.string()
    if form in (_FORM_LINE_STRP, _FORM_STRP):
        table = strings.get(".debug_line_str" if form == _FORM_LINE_STRP else ".debug_str", b"")
        at = unit.unsigned(size)
        end = table.find(b"\0", at)
        if at >= len(table) or end < 0:
            raise _Unreadable("a string offset past its section")
        return table[at:end]
    if form == _FORM_UDATA:
        return unit.uleb()
    if form in _FIXED_FORMS:
        return unit.unsigned(_FIXED_FORMS[form])
    if form == _FORM_BLOCK:
        return unit.take(unit.uleb())
    raise _Unreadable(f"form {form:#x} in a file entry")


class _Program:
    """The line program's state machine (DWARF's registers that ncu_report's answers depend on)."""

    def __init__(self, header: _Header, unit: _Bytes, relocated: dict, rows: dict):
        self.header, self.unit, self.relocated, self.rows = header, unit, relocated, rows
        self.function: str | None = None
        self.reset()

    def reset(self) -> None:
        self.address, self.file, self.line = 0, 1, 1
        self.function = None

    def run(self) -> None:
        unit, header = self.unit, self.header
        standard = {1: self.copy, 2: self.advance_pc, 3: self.advance_line, 4: self.set_file, 9: self.fixed_advance_pc,
                    8: self.const_add_pc}
        while unit.at < unit.end:
            opcode = unit.unsigned(1)
            if opcode >= header.opcode_base:
                self.special(opcode - header.opcode_base)
            elif opcode == 0:
                self.extended()
            elif opcode in standard:
                standard[opcode]()
            else:  # negate_stmt, basic_block, prologue_end, epilogue_begin, set_isa, or one unknown: skipped
                for _ in range(header.lengths[opcode - 1]):
                    unit.uleb()

    def emit(self, end: bool = False) -> None:
        if self.function is None:
            raise _Unreadable("a row before any relocated address")
        place: Place = NOWHERE
        if not end:
            if not 0 <= self.file < len(self.header.files) or self.header.files[self.file] is None:
                raise _Unreadable(f"file index {self.file}")
            if self.line < 0:
                raise _Unreadable("a negative line")
            place = (self.header.files[self.file], self.line or None)
        offsets, places = self.rows.setdefault(self.function, ([], []))
        if offsets and offsets[-1] > self.address:
            raise _Unreadable("a row before the one written last")  # what bisect needs; nvcc writes them in order
        if offsets and offsets[-1] == self.address:
            if end or places[-1] == NOWHERE:  # a row that covers no byte; a sequence that starts where one ended
                places[-1] = place
        else:
            offsets.append(self.address)
            places.append(place)

    def copy(self) -> None:
        self.emit()

    def advance_pc(self) -> None:
        self.address += self.unit.uleb() * self.header.min_length

    def advance_line(self) -> None:
        self.line += self.unit.sleb()

    def set_file(self) -> None:
        self.file = self.unit.uleb()

    def fixed_advance_pc(self) -> None:
        self.address += self.unit.unsigned(2)

    def const_add_pc(self) -> None:
        self.address += (255 - self.header.opcode_base) // self.header.line_range * self.header.min_length

    def special(self, adjusted: int) -> None:
        self.address += adjusted // self.header.line_range * self.header.min_length
        self.line += self.header.line_base + adjusted % self.header.line_range
        self.emit()

    def extended(self) -> None:
        unit = self.unit
        length = unit.uleb()
        if length == 0 or unit.at + length > unit.end:
            raise _Unreadable("an extended opcode past its unit")
        at = unit.at
        opcode = unit.unsigned(1)
        if opcode == 1:  # end_sequence
            self.emit(end=True)
            self.reset()
        elif opcode == 2:  # set_address: an offset into the kernel its relocation names
            if length - 1 != _ADDRESS_SIZE or unit.unsigned(_ADDRESS_SIZE) != 0 or at + 1 not in self.relocated:
                raise _Unreadable("an address that is not relocated to a kernel")
            self.function, self.address = self.relocated[at + 1]
        elif opcode == 3 and self.header.version < 5:  # define_file: a relative name in the compilation directory
            raise _Unreadable("a file defined in the program")
        unit.at = at + length  # others (set_discriminator, NVIDIA's 0x90 that opens inlined code's rows): skipped
