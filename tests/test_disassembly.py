"""The SASS of single instructions by nvdisasm (ncuwrap.kernel.reading.disassembly) against what NVIDIA's report
reader writes for them, on every instruction of every launch with SourceCounters in tests/data; where each PC's
bytes lie (cubin); the fall-back to NVIDIA's reader where nvdisasm cannot give it."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ncuwrap.kernel.reading import cubin, disassembly, ncu_rep_format, source_counters
from tests.conftest import ROOT, plain_report

# Recorded by tests/sass_truth.py from the ncu-report wheel: 11,994 instructions of 42 reports.
TRUTH = ROOT / "tests/data/h200_ncuwrap/sass/ncu_report_sass.json.gz"
needs_nvdisasm = pytest.mark.skipif(disassembly.nvdisasm() is None, reason="nvdisasm is not installed (the nvidia-cuda-nvdisasm wheel)")


@needs_nvdisasm
def test_every_instruction_reads_as_ncu_report_writes_it(tmp_path):
    recorded = json.loads(gzip.decompress(TRUTH.read_bytes()))
    assert len(recorded["reports"]) >= 30
    wrong, count, sass_texts = [], 0, set()
    for name, launches in recorded["reports"].items():
        path = plain_report(ROOT / name, tmp_path)
        read = {launch.index: launch for launch in ncu_rep_format.launches(path, frozenset())}
        for index, expected in launches.items():
            code = read[int(index)].code
            assert code is not None and code.arch == "SM90", name
            pcs = [int(pc, 16) for pc in expected]
            where = [code.where(pc) for pc in pcs]
            assert None not in where, name
            got = disassembly.sass(code.arch, zip(pcs, ncu_rep_format.instruction_bytes(path, where)))
            count += len(pcs)
            wrong += [(name, pc, text, got[int(pc, 16)]) for pc, text in expected.items() if got[int(pc, 16)] != text]
            sass_texts.update(expected.values())
    assert wrong == []
    assert count >= 9_000
    # The forms written apart from nvdisasm's are among them: reuse flags, returns, branches to themselves.
    assert any(t.startswith("RET.REL.NODEC R") and ", 0x" in t for t in sass_texts)
    assert any(t.startswith("BRA `(.L_x_0) 0x") for t in sass_texts)
    assert not any(".reuse" in t for t in sass_texts)


@pytest.mark.parametrize("listed, placed, pc, expected", [
    ("IMAD R5, R12.reuse, 0x4, R4", disassembly.BASE, 0x7F00, "IMAD R5, R12, 0x4, R4"),
    # a branch: the target moved back as far as the instruction was moved; an immediate left as it is
    ("@!P0 BRA 0x500000000120", disassembly.BASE + 0x20, 0x7F6E497A2870, "@!P0 BRA 0x7f6e497a2970"),
    ("ISETP.GE.U32.AND P0, PT, R16, 0x400, PT", disassembly.BASE, 0x10, "ISETP.GE.U32.AND P0, PT, R16, 0x400, PT"),
    ("RET.REL.NODEC R8 0x4fffffff0000", disassembly.BASE + 0x10, 0x7F86257A0D20, "RET.REL.NODEC R8, 0x7f8625790d10"),
    ("BRA 0x500000000030", disassembly.BASE + 0x30, 0x7F64177A0160, "BRA `(.L_x_0) 0x7f64177a0160"),
])
def test_an_instruction_is_written_as_ncu_report_writes_it(listed, placed, pc, expected):
    assert disassembly._as_ncu_writes(listed, placed, pc) == expected


def test_a_listing_that_misses_an_instruction_or_places_one_elsewhere_is_not_used():
    line = "        /*500000000000*/                   LDC R1, c[0x0][0x28] ;"
    assert disassembly._read(line, [0x7000]) == {0x7000: "LDC R1, c[0x0][0x28]"}
    with pytest.raises(disassembly.Unavailable):
        disassembly._read(line, [0x7000, 0x7010])
    with pytest.raises(disassembly.Unavailable):
        disassembly._read(line.replace("500000000000", "500000000008"), [0x7000])


def test_without_nvdisasm_or_with_one_that_fails_nothing_is_guessed(tmp_path):
    with pytest.raises(disassembly.Unavailable):
        disassembly.sass("SM90", [(0x10, bytes(16))], tool=str(tmp_path / "missing"))
    with pytest.raises(disassembly.Unavailable):
        disassembly.sass("SM90", [(0x10, bytes(15))], tool="/bin/true")
    with pytest.raises(disassembly.Unavailable):  # runs, lists nothing
        disassembly.sass("SM90", [(0x10, bytes(16))], tool="/bin/true")
    assert disassembly.sass("SM90", [], tool=None) == {}


def test_a_pc_lies_in_its_function_or_nowhere():
    code = cubin.Code(at=1000, sm=9 << 16, functions=((0x7000, "a"), (0x9000, "b")), text={"a": (64, 0x100), "b": (512, 0x20)})
    assert code.arch == "SM90"
    assert code.where(0x7010) == (1000 + 64 + 0x10, 16)
    assert code.where(0x9010) == (1000 + 512 + 0x10, 16)
    assert code.where(0x7100) is None  # past a's end
    assert code.where(0x7008) is None  # not on an instruction
    assert code.where(0x6FF0) is None  # before every function
    assert code.where(0x9020) is None
    assert code.function_at(0x7008) == ("a", 8) and code.function_at(0x9010) == ("b", 0x10)  # lines need no alignment
    assert code.function_at(0x7100) is None and code.function_at(0x6FF0) is None
    # CUDA's lazy loading places a function later: added; a function placed again elsewhere: unknown.
    assert code.placed({"b": 0x9000}) == code
    assert code.placed({"a": 0x7400}) is None
    assert cubin.Code(at=0, sm=(6 << 16) | 1, functions=(), text={}).arch is None  # before Volta: not one instruction in 16 bytes


@pytest.mark.parametrize("elf", [b"", b"\x7fELF", b"not an elf at all" * 8, b"\x7fELF\x02\x01" + b"\xff" * 58],
                         ids=["empty", "short", "other", "headers-outside"])
def test_a_cubin_that_is_no_elf_gives_no_code(elf):
    assert cubin.sections(elf) is None
    assert cubin.code(elf, 0, 9 << 16, {"a": 0x7000}) is None


def _tables(path: Path, tool) -> dict:
    script = ("import sys, json\n"
              "from pathlib import Path\n"
              "from ncuwrap.kernel.reading import disassembly, ncu_rep_reader\n"
              f"disassembly.nvdisasm = lambda: {tool!r}\n"
              "path = Path(sys.argv[1])\n"
              "rows, rules, sources, unread = ncu_rep_reader._collect_file(path, ncu_rep_reader.load_module(), path)\n"
              "assert unread == {}\n"
              "print(json.dumps({k: {'sass': v.sass, 'file': v.file, 'line': v.line, 'pcs': v.pcs.tolist(), 'space': v.space,\n"
              "                      'columns': {c: [None if x != x else x for x in a.tolist()] for c, a in v.columns.items()}}\n"
              "                  for k, v in sources.items()}))\n")
    done = subprocess.run([sys.executable, "-c", script, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@needs_nvdisasm
@pytest.mark.parametrize("instead", [None, "/bin/false"], ids=["no-nvdisasm", "nvdisasm-fails"])
def test_where_nvdisasm_cannot_ncu_report_gives_the_same_tables(tmp_path, instead):
    """The instruction tables of a report with a line table, SASS by nvdisasm and by NVIDIA's reader alone
    (in processes of their own: NVIDIA's reader leaves native state a child forked later can hang on)."""
    pytest.importorskip("ncu_report")
    path = plain_report(ROOT / "tests/data/h200_ncuwrap/source/transpose-naive.ncu-rep.gz", tmp_path)
    by_nvdisasm = _tables(path, disassembly.nvdisasm())
    assert by_nvdisasm and all(any(table["sass"]) and any(table["line"]) for table in by_nvdisasm.values())
    assert _tables(path, instead) == by_nvdisasm


def test_the_report_read_records_where_each_function_was_loaded():
    """The bundled sample: one module, its SourceData twice (the second without the cubin); every launch's
    instructions are placed in it."""
    path = ROOT / "ncuwrap/samples/transpose_h200.ncu-rep.gz"
    with gzip.open(path) as fh:
        plain = fh.read()
    assert plain[:4] == ncu_rep_format.MAGIC
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "sample.ncu-rep"
        copy.write_bytes(plain)
        launches = list(ncu_rep_format.launches(copy, frozenset(), source_counters.INSTANCED))
    with_counters = [launch for launch in launches if launch.instances]
    assert with_counters
    for launch in with_counters:
        pcs = {pc for values in launch.instances.values() for pc in values.pcs.tolist()}
        assert launch.code is not None and all(launch.code.where(pc) for pc in pcs)


@needs_nvdisasm
def test_no_report_here_needs_nvidias_reader(tmp_path, monkeypatch):
    """Every launch's lines (line_table) and shown SASS (nvdisasm) of every report here are read without
    NVIDIA's reader (~114 MiB and its disassembler's ~70 MiB in a process of its own otherwise)."""
    from ncuwrap.kernel.reading import ncu_rep_reader

    def refused(*args, **kwargs):
        raise AssertionError("NVIDIA's reader was asked")

    monkeypatch.setattr(ncu_rep_reader, "_Answering", refused)
    monkeypatch.setattr(ncu_rep_reader, "_Attributor", refused)
    recorded = json.loads(gzip.decompress(TRUTH.read_bytes()))
    lines = shown = 0
    for name in recorded["reports"]:
        path = plain_report(ROOT / name, tmp_path)
        _, _, sources, unread = ncu_rep_reader._collect_file(path, None, path)
        assert unread == {}, name
        assert sources, name
        for raw in sources.values():
            lines += sum(line is not None for line in raw.line)
            shown += sum(text is not None for text in raw.sass)
    assert lines >= 9_000 and shown >= 1_000
