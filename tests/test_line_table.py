"""Each instruction's source file and line from its cubin's line table (ncuwrap.kernel.reading.line_table) against
what NVIDIA's report reader gives for it, on every instruction of every launch with SourceCounters in tests/data;
and the reader on damaged or unfamiliar bytes (no table, never an exception)."""

from __future__ import annotations

import gzip
import json
import random
import struct
from pathlib import Path

import pytest

from ncuwrap.kernel.reading import cubin, line_table, ncu_rep_format, source_counters
from tests.conftest import ROOT, plain_report

# Recorded by tests/lines_truth.py from the ncu-report wheel: 11,994 instructions of 42 reports, 11,783 with a line.
TRUTH = ROOT / "tests/data/h200_ncuwrap/sass/ncu_report_lines.json.gz"
SAMPLE = ROOT / "ncuwrap/samples/transpose_h200.ncu-rep.gz"


def _launches(path: Path) -> dict:
    return {launch.index: launch for launch in ncu_rep_format.launches(path, frozenset(), source_counters.INSTANCED)}


def test_every_instruction_gets_the_file_and_line_ncu_report_gives(tmp_path):
    recorded = json.loads(gzip.decompress(TRUTH.read_bytes()))
    assert len(recorded["reports"]) >= 30
    wrong, with_line, without_table, files = [], 0, 0, set()
    for name, launches in recorded["reports"].items():
        path = plain_report(ROOT / name, tmp_path)
        read = _launches(path)
        for index, expected in launches.items():
            code = read[int(index)].code
            elf = line_table.elf_of(path, code)
            table = line_table.read(elf)
            pcs = [int(pc, 16) for pc in expected]
            if not cubin.has_line_table(elf):  # no line table: ncu_report gives no PC a line, and neither does the cubin
                assert table is None, name
                without_table += len(pcs)
                got = dict.fromkeys(pcs, line_table.NOWHERE)
            else:
                assert table is not None, name
                got = table.places(code, pcs)
            wrong += [(name, index, pc, place, got[int(pc, 16)]) for pc, place in expected.items() if tuple(place) != got[int(pc, 16)]]
            with_line += sum(1 for file, line in expected.values() if line is not None)
            files.update(file for file, _ in expected.values())
    assert wrong == []
    assert with_line >= 9_000 and without_table >= 150
    # A header's directory as nvcc records it (".../bin/../targets/...") comes out as ncu_report gives it: made normal.
    assert "/usr/local/cuda/targets/x86_64-linux/include/device_atomic_functions.hpp" in files


def test_the_first_row_at_an_address_holds_where_inlined_code_starts(tmp_path):
    """The sample's transpose_shared: at 0x10 the call site's row (line 54), then the inlined function's row
    (line 38) at the same address; ncu_report gives 54 there, and the inlined function's lines after it."""
    path = plain_report(SAMPLE, tmp_path)
    code = next(launch.code for launch in _launches(path).values() if launch.mangled == "_Z16transpose_sharedPKfPfii")
    table = line_table.read(line_table.elf_of(path, code))
    file = "/work/main/kernels/transpose.cu"
    answers = [table.where("_Z16transpose_sharedPKfPfii", offset) for offset in (0x0, 0x10, 0x20, 0x60)]
    assert answers == [(file, 53), (file, 54), (file, 41), (file, 38)]
    # .nv_debug_line_sass (PTX lines) is no source: a cubin with only it has no table
    elf = line_table.elf_of(path, code)
    assert line_table.read(_renamed(elf, b".debug_line\0", b".debug_xxxx\0")) is None


def _renamed(elf: bytes, old: bytes, new: bytes) -> bytes:
    """The cubin with a section name changed in its name table (its other bytes as they were)."""
    names_at, names_size = next((s.offset, s.size) for s in cubin.headers(elf) if s.name == ".shstrtab")
    names = elf[names_at:names_at + names_size]
    assert old in names
    return elf[:names_at] + names.replace(old, new) + elf[names_at + names_size:]


# ------------------------------------------------------------------ damaged and unfamiliar bytes (synthetic)


def _sample_elf(tmp_path) -> tuple[bytes, cubin.Code]:
    path = plain_report(SAMPLE, tmp_path)
    code = next(launch.code for launch in _launches(path).values() if launch.code is not None)
    return line_table.elf_of(path, code), code


def _line_section(elf: bytes) -> tuple[int, int]:
    return next((s.offset, s.size) for s in cubin.headers(elf) if s.name == ".debug_line")


def _patched(elf: bytes, at: int, data: bytes) -> bytes:
    return elf[:at] + data + elf[at + len(data):]


def test_a_damaged_line_table_gives_none_without_an_exception(tmp_path):
    elf, _ = _sample_elf(tmp_path)
    assert line_table.read(elf) is not None
    start, size = _line_section(elf)
    program = start + 10 + struct.unpack_from("<I", elf, start + 6)[0]  # DWARF 2: set_address first, then set_file
    assert elf[program:program + 3] == b"\x00\x09\x02" and elf[program + 11] == 4
    rela = next(s.offset for s in cubin.headers(elf) if s.name == ".rela.debug_line")
    damaged = {
        "version 1": _patched(elf, start + 4, struct.pack("<H", 1)),
        "version 6": _patched(elf, start + 4, struct.pack("<H", 6)),
        "unit past the section": _patched(elf, start, struct.pack("<I", size)),
        "64-bit unit past the section": _patched(elf, start, struct.pack("<IQ", 0xFFFFFFFF, 1 << 40)),
        "header past the unit": _patched(elf, start + 6, struct.pack("<I", size)),
        "file names past the header": _patched(elf, start + 6, struct.pack("<I", 20)),
        "no line range": _patched(elf, start + 13, b"\0"),
        "no opcode base": _patched(elf, start + 14, b"\0"),
        # the program: a LEB128 that never ends, then an extended opcode longer than the unit
        "runaway LEB128": _patched(elf, program, b"\x02" + b"\x80" * (start + size - program - 1)),
        "extended opcode past the unit": _patched(elf, program, b"\x00\xff\xff\x03"),
        "address operand not 0": _patched(elf, program + 3, b"\x01"),
        "address not relocated": _patched(elf, rela, struct.pack("<Q", program - start + 4)),
        "relocation of another kind": _patched(elf, rela + 8, b"\x01"),
        "file index past the table": _patched(elf, program + 11, b"\x04\x09"),
        "file index 0": _patched(elf, program + 11, b"\x04\x00"),
        "no .debug_line": _renamed(elf, b".debug_line\0", b".debug_xxxx\0"),
        "relocations by REL": _renamed(elf, b".rela.debug_line\0", b".rel.debug_line\0\0"),
        "cut inside .debug_line": elf[:start + size // 2],
        "not an ELF": b"\x7fELF\x01" + elf[5:],
    }
    for what, data in damaged.items():
        assert line_table.read(data) is None, what
    for cut in range(0, len(elf), 997):  # cut anywhere: a table or none, never an exception
        line_table.read(elf[:cut])


def test_random_damage_to_the_line_program_never_raises(tmp_path):
    elf, code = _sample_elf(tmp_path)
    start, size = _line_section(elf)
    rng = random.Random(41)
    tables = 0
    for _ in range(400):
        data = bytearray(elf)
        for _ in range(rng.randint(1, 8)):
            data[start + rng.randrange(size)] = rng.randrange(256)
        table = line_table.read(bytes(data))
        if table is not None:
            tables += 1
            for name, rows in table.rows.items():
                assert len(rows[0]) <= size and list(rows[0]) == sorted(rows[0]), name
            table.places(code, range(0, 1 << 20, 4096))
    assert tables > 0  # some damage (a line number, an address advance) still reads as a table


def test_random_damage_anywhere_never_raises(tmp_path):
    """Flips anywhere in the sample's cubin, and in a synthetic DWARF 5 one (its file entries' forms)."""
    elf, _ = _sample_elf(tmp_path)
    unit, operand = _unit(5, _V5_TABLES)
    for whole in (elf, _elf(unit, operand, _V5_LINE_STR)):
        assert line_table.read(whole) is not None
        rng = random.Random(7)
        for _ in range(300):
            data = bytearray(whole)
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            line_table.read(bytes(data))


def _elf(line: bytes, relocated_at: int, line_str: bytes = b"", text_size: int = 0x100) -> bytes:
    """A minimal cubin-like ELF (synthetic): one kernel _Z1kv, a .debug_line whose 8 bytes at ``relocated_at``
    are relocated to it (R_CUDA_64), and a .debug_line_str."""
    names = b"\0.shstrtab\0.symtab\0.text._Z1kv\0.debug_line\0.rela.debug_line\0.debug_line_str\0_Z1kv\0"
    symbols = bytes(24) + struct.pack("<IBBHQQ", names.index(b"_Z1kv"), 0x12, 0, 3, 0, text_size)
    rela = struct.pack("<QQq", relocated_at, (1 << 32) | 2, 0)
    blobs = [names, symbols, bytes(text_size), line, rela, line_str]
    offsets, at = [], 64
    for blob in blobs:
        offsets.append(at)
        at += len(blob)
    body = b"".join(blobs)
    shoff = 64 + len(body)
    headers = [bytes(64)]
    for i, (name, kind, link, info) in enumerate([(".shstrtab", 3, 0, 0), (".symtab", 2, 1, 1), (".text._Z1kv", 1, 0, 0), (".debug_line", 1, 0, 0),
                                                  (".rela.debug_line", 4, 2, 4), (".debug_line_str", 1, 0, 0)]):
        headers.append(struct.pack("<IIQQQQIIQQ", names.index(name.encode() + b"\0"), kind, 0, 0, offsets[i], len(blobs[i]), link, info, 8, 0))
    header = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, shoff, 0, 64, 56, 0, 64, len(headers), 1)
    return header + body + b"".join(headers)


# A program (synthetic): set_address (its operand at offset 3 of the program), file 2, line 10, copy; a special
# opcode (address +16, line +1: 10 + (1 - -5) + 14 * 16); NVIDIA's 0x90 and an inlined function's first row at the
# same address (line 31: not the one that holds); advance_pc 32, end_sequence.
_PROGRAM = (b"\x00\x09\x02" + bytes(8) + b"\x04\x02" + b"\x03\x09" + b"\x01" + bytes([10 + 6 + 14 * 16])
            + b"\x00\x03\x90\x01\x00" + b"\x03\x14\x01" + b"\x02\x20" + b"\x00\x01\x01")


def _unit(version: int, tables: bytes) -> tuple[bytes, int]:
    """A unit of ``version`` around _PROGRAM (line_base -5, line_range 14, opcode_base 10); the offset of the
    set_address operand in it."""
    fields = b"\x01" + (b"\x01" if version >= 4 else b"") + b"\x01" + struct.pack("<bBB", -5, 14, 10) + bytes([0, 1, 1, 1, 1, 0, 0, 0, 1])
    prefix = struct.pack("<H", version) + (b"\x08\x00" if version >= 5 else b"")
    header = fields + tables
    body = prefix + struct.pack("<I", len(header)) + header + _PROGRAM
    return struct.pack("<I", len(body)) + body, 4 + len(prefix) + 4 + len(header) + 3


@pytest.mark.parametrize("version", [2, 3, 4])
def test_line_programs_of_dwarf_2_to_4(version):
    tables = b"/src\0/usr/local/cuda/bin/../include\0\0" + b"k.cu\0\x01\0\0" + b"x.h\0\x02\0\0" + b"\0"
    unit, operand = _unit(version, tables)
    table = line_table.read(_elf(unit, operand))
    header = "/usr/local/cuda/include/x.h"
    assert table.rows == {"_Z1kv": ((0x0, 0x10, 0x30), ((header, 10), (header, 11), line_table.NOWHERE))}
    assert table.where("_Z1kv", 0x18) == (header, 11)
    assert table.where("_Z1kv", 0x30) == table.where("_Z1kv", 0x1000) == table.where("_Z2kv", 0) == line_table.NOWHERE
    code = cubin.Code(at=0, sm=9 << 16, functions=((0x7000, "_Z1kv"),), text={"_Z1kv": (0, 0x100)})
    assert table.places(code, [0x7000, 0x7010, 0x6FF0, 0x7100]) == {0x7000: (header, 10), 0x7010: (header, 11), 0x6FF0: line_table.NOWHERE,
                                                                    0x7100: line_table.NOWHERE}
    # a relative name in directory 0 (the compilation directory, not in a cubin): no table, ncu_report is asked
    unit, operand = _unit(version, tables.replace(b"x.h\0\x02", b"x.h\0\x00"))
    assert line_table.read(_elf(unit, operand)) is None


_V5_LINE_STR = b"/src\0/usr/local/cuda/bin/../include\0"
_V5_DIRECTORIES = b"\x01\x01\x1f" + b"\x02" + struct.pack("<II", 0, 5)  # path by line_strp; 2 directories
_V5_FILES = b"\x02\x01\x08\x02\x0b" + b"\x03" + b"k.cu\0\x00" + b"k.cu\0\x00" + b"x.h\0\x01"  # path string, directory data1
_V5_TABLES = _V5_DIRECTORIES + _V5_FILES


def test_a_line_program_of_dwarf_5():
    unit, operand = _unit(5, _V5_TABLES)
    table = line_table.read(_elf(unit, operand, _V5_LINE_STR))
    assert table.where("_Z1kv", 0) == ("/usr/local/cuda/include/x.h", 10)  # file 2: indices count from 0 in DWARF 5
    for tables in (_V5_DIRECTORIES.replace(b"\x1f", b"\x1d") + _V5_FILES,  # a form this reader does not know
                   _V5_DIRECTORIES + _V5_FILES.replace(b"\x01\x08", b"\x01\x0b"),  # a path as a number
                   _V5_DIRECTORIES + _V5_FILES.replace(b"x.h\0\x01", b"x.h\0\x07")):  # a directory past the table
        unit, operand = _unit(5, tables)
        assert line_table.read(_elf(unit, operand, _V5_LINE_STR)) is None


def test_a_cubin_is_read_from_a_report_only_where_it_lies_inside(tmp_path):
    elf, code = _sample_elf(tmp_path)
    report = tmp_path / "cut.ncu-rep"
    report.write_bytes(b"x" * 10 + elf[:-1])
    assert line_table.elf_of(report, cubin.Code(at=10, sm=code.sm, functions=code.functions, text=code.text)) is None
    report.write_bytes(b"x" * 10 + elf + b"y" * 7)
    assert line_table.elf_of(report, cubin.Code(at=10, sm=code.sm, functions=code.functions, text=code.text)) == elf
    assert line_table.elf_of(report, cubin.Code(at=5000000, sm=code.sm, functions=(), text={})) is None
    assert line_table.read(None) is None
