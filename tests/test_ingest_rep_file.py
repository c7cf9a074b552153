"""Reading a .ncu-rep from its file format (ncuwrap.kernel.reading.ncu_rep_format) against NVIDIA's ncu_report, on every
real report in tests/data; the fall-back to ncu_report; damaged files."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys

import pytest

from ncuwrap.core.errors import InputError
from ncuwrap.kernel.reading import cubin, ncu_rep_reader, ncu_rep_format, source_counters
from tests.conftest import DATA, H200, ROOT, plain_report
from tests.ncu_rep_compare import same_profile

# Every real report here and the bundled sample (one module whose SourceData comes twice, the second without files).
REPORTS = [*sorted(p for p in [*DATA.rglob("*.ncu-rep"), *DATA.rglob("*.ncu-rep.gz")] if "bad" not in p.parts),
           ROOT / "ncuwrap" / "samples" / "transpose_h200.ncu-rep.gz"]


def test_every_launch_reads_as_ncu_report_reads_it():
    """Every metric's name and value (strings as strings, numbers as ncu_report's as_double), the kernel's
    names, the rule results, the per-instruction values by PC and the source texts, launch by launch.
    In a process of its own: NVIDIA's reader leaves native state a child forked later can hang on."""
    pytest.importorskip("ncu_report")
    assert len(REPORTS) >= 30
    done = subprocess.run([sys.executable, "-m", "tests.ncu_rep_compare", *map(str, REPORTS)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["wrong"] == []
    counts = result["counts"]
    assert counts["reports"] == len(REPORTS)
    # 42 launches, 61,577 metric values, 260 rule results, 103,350 per-instruction values, 11 source files when written.
    assert counts["launches"] >= 40 and counts["metrics"] >= 60_000 and counts["rule_results"] >= 250
    assert counts["per_pc_values"] >= 100_000 and counts["source_files"] >= 10


def test_the_profile_read_from_the_file_is_the_one_read_by_ncu_report():
    """The whole Profile (frame, rule results, instruction tables with their lines and SASS), read the new
    way and wholly by ncu_report: in a process of its own (see above)."""
    pytest.importorskip("ncu_report")
    script = ("import tempfile\n"
              "from pathlib import Path\n"
              "from ncuwrap.kernel.reading import ncu_rep_reader\n"
              "from tests.conftest import plain_report\n"
              "for name in ('h200/transpose/transposeNaive.ncu-rep.gz', 'h200/vecadd/bench_add.ncu-rep',\n"
              "             'h200_ncuwrap/multi/two_processes.ncu-rep'):\n"
              "    path = plain_report(Path('tests/data') / name, Path(tempfile.mkdtemp()))\n"
              "    module = ncu_rep_reader.load_module()\n"
              "    new = ncu_rep_reader._assemble(path, path, *ncu_rep_reader._collect_file(path, module, path))\n"
              "    old = ncu_rep_reader._assemble(path, path, *ncu_rep_reader._collect(path, module, path))\n"
              "    assert new.frame.equals(old.frame) and list(new.frame) == list(old.frame), name\n"
              "    assert new.rules == old.rules and new.source == old.source, name\n"
              "    assert new.sources.keys() == old.sources.keys() and (bool(new.sources) or 'multi' in name), name\n"
              "    for k in new.sources:\n"
              "        assert new.sources[k].table.equals(old.sources[k].table) and new.sources[k].files == old.sources[k].files\n"
              "        assert new.sources[k].table['sass'].notna().any()\n"
              "print('same')\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "same"


def test_the_attribution_workers_answer_as_ncu_report_does():
    """The read as the command does it (the file parsed while NVIDIA's reader answers in one process beside
    it, or two each for every other launch, more than the report's launches included), against the read
    wholly by ncu_report. Every forked read first: NVIDIA's reader run in this process leaves native state
    a child forked later can hang on."""
    pytest.importorskip("ncu_report")
    script = ("import gzip, tempfile\n"
              "from pathlib import Path\n"
              "from ncuwrap.kernel.reading import ncu_rep_reader\n"
              "from tests.conftest import plain_report\n"
              "sample = Path(tempfile.mkdtemp()) / 'sample.ncu-rep'  # 6 launches with SourceCounters and lines\n"
              "sample.write_bytes(gzip.decompress(Path('ncuwrap/samples/transpose_h200.ncu-rep.gz').read_bytes()))\n"
              "naive = plain_report(Path('tests/data/h200/transpose/transposeNaive.ncu-rep.gz'), sample.parent)\n"
              "names = (str(naive), 'h200/vecadd/bench_add.ncu-rep', 'h200_ncuwrap/multi/two_processes.ncu-rep', str(sample))\n"
              "module = ncu_rep_reader.load_module()\n"
              "beside = {}\n"
              "for workers in (1, 2, 3):\n"
              "    ncu_rep_reader.attribution_workers = lambda path: workers\n"
              "    for name in names:\n"
              "        path = Path('tests/data') / name\n"
              "        beside[workers, name] = ncu_rep_reader._assemble(path, path, *ncu_rep_reader._collect_file(path, module, path, None, beside=True))\n"
              "for name in names:\n"
              "    path = Path('tests/data') / name\n"
              "    old = ncu_rep_reader._assemble(path, path, *ncu_rep_reader._collect(path, module, path))\n"
              "    for workers in (1, 2, 3):\n"
              "        new = beside[workers, name]\n"
              "        assert new.frame.equals(old.frame) and new.rules == old.rules and new.sources.keys() == old.sources.keys(), name\n"
              "        for k in new.sources:\n"
              "            assert new.sources[k].table.equals(old.sources[k].table) and new.sources[k].files == old.sources[k].files\n"
              "print('same')\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "same"


def test_a_file_not_laid_out_as_expected_is_read_by_ncu_report(monkeypatch):
    """Where the file reader gives up on the file (FormatError), NVIDIA's reader reads the whole report, as before,
    and the Profile says so."""
    path = H200 / "vecadd" / "bench_add.ncu-rep"
    direct = ncu_rep_reader.start(path).result()

    def refuse(*args, **kwargs):
        raise ncu_rep_format.FormatError("format version 8")

    monkeypatch.setattr(ncu_rep_format, "launches", refuse)
    fallen_back = ncu_rep_reader.start(path, parts=2).result()
    assert len(direct.frame) == 2 and direct.fallback is None
    assert fallen_back.fallback.whole and fallen_back.fallback.reasons == ("format version 8",)
    assert fallen_back.frame.equals(direct.frame) and fallen_back.rules == direct.rules and fallen_back.source == direct.source
    assert fallen_back.sources.keys() == direct.sources.keys() == {0, 1}
    assert all(fallen_back.sources[k].table.equals(direct.sources[k].table) for k in direct.sources)


def _framed(*messages: bytes) -> bytes:
    return ncu_rep_format.MAGIC + b"".join(struct.pack("<I", len(m)) + m for m in messages)


VERSION_7 = b"\x08\x07"  # FileHeader: field 1 (varint) = 7


@pytest.mark.parametrize("data, reason", [
    (b"NVR\x00", "ends inside a file header"),
    (_framed(b"\x08\x08"), "format version 8"),
    (ncu_rep_format.MAGIC + struct.pack("<I", 0xFFFF_FFF0) + VERSION_7, "file header runs past"),
    (_framed(VERSION_7, b"\x28\xf0\xff\xff\xff\x0f"), "block runs past"),  # PayloadSize 4 GiB
    (_framed(VERSION_7, b"\x10\x01\x28\x08") + struct.pack("<I", 0x7FFF_FFFF) + b"\0" * 4, "launch runs past"),
    (_framed(VERSION_7, b"\x38\x01"), "range or command list results"),  # NumRangeResults 1
    (_framed(VERSION_7, b"\x50\x01"), "graph viewer data"),  # NumGraphs 1
    (_framed(VERSION_7, b"\x10\x01\x48\x01"), "launches and graph results in one block"),
])
def test_a_damaged_file_is_a_format_error_at_once(tmp_path, data, reason):
    """Lengths are checked against the file before anything is read: a 4 GiB length in a tiny file costs nothing."""
    path = tmp_path / "r.ncu-rep"
    path.write_bytes(data)
    with pytest.raises(ncu_rep_format.FormatError, match=reason):
        ncu_rep_format.read(path)


def test_a_truncated_report_is_left_to_ncu_report():
    """A report cut short is not guessed at: ncu_report's read says what is wrong (tests/test_hostile_files.py)."""
    with pytest.raises(ncu_rep_format.FormatError):
        ncu_rep_format.read(DATA / "bad" / "truncated.ncu-rep")


def test_only_the_metrics_asked_for_are_read(tmp_path):
    wanted = frozenset(ncu_rep_reader.LAUNCH_METRICS | {"gpu__time_duration.sum"})
    (launch,) = ncu_rep_format.read(plain_report(H200 / "transpose" / "copyKernel.ncu-rep.gz", tmp_path), wanted)
    assert set(launch.metrics) == wanted & launch.names and "launch__process_id" not in launch.names  # an older ncu's report
    assert launch.metrics["device__attribute_display_name"] == "NVIDIA H200"
    assert launch.metrics["launch__grid_dim_x"] == 128.0 and launch.instances == {} and launch.files == {}
    assert len(launch.names) > 2000


def test_a_repeated_copy_reads_as_the_report_n_times(tmp_path):
    """The yardsticks' SYNTHETIC many-launch report (benchmarks/ncurep_repeat.py): bench_add's two real launches
    (SourceCounters; a block each) written three times read as six: each block's launch three times
    in a row."""
    path = H200 / "vecadd" / "bench_add.ncu-rep"
    copy = tmp_path / "add6.ncu-rep"
    ncu_rep_format.write_repeated_copy(path, 3, copy)
    parse = lambda p: ncu_rep_format.read(p, None, source_counters.INSTANCED, source_counters.CODED)  # noqa: E731
    real, repeated = parse(path), parse(copy)
    assert len(real) == 2 and [launch.index for launch in repeated] == list(range(6))
    fields = lambda launch: (launch.function, launch.metrics, launch.rules, launch.instances.keys(), launch.files)  # noqa: E731
    assert [fields(launch) for launch in repeated] == [fields(launch) for launch in real for _ in range(3)]
    assert len(real[0].metrics) > 500 and all(launch.instances for launch in real)  # every metric and per-instruction value


def test_the_copy_for_nvidias_reader_holds_the_launches_asked_for_without_their_metrics(tmp_path):
    """bench_add: 2 launches with SourceCounters; the copy holds the second alone, its names and module
    reference kept, its metrics, sections and rule results left out, the session and source blocks as they were."""
    path = H200 / "vecadd" / "bench_add.ncu-rep"
    copy = tmp_path / "lines.ncu-rep"
    ncu_rep_format.write_attribution_copy(path, [1], copy)
    launches = []
    data = copy.read_bytes()
    at = 4 + 4 + struct.unpack_from("<I", data, 4)[0]
    sources = 0
    while at < len(data):
        (length,) = struct.unpack_from("<I", data, at)
        counts = ncu_rep_format._varints(data[at + 4: at + 4 + length])
        at += 4 + length
        body = at
        for kind in ("sources", "launches"):
            for _ in range(counts.get(1 if kind == "sources" else 2, 0)):
                (size,) = struct.unpack_from("<I", data, body)
                message = data[body + 4: body + 4 + size]
                if kind == "launches":
                    launches.append({number for number, *_ in ncu_rep_format._fields(message)})
                sources += kind == "sources"
                body += 4 + size
        at += counts.get(5, 0)
        assert body == at
    assert len(launches) == 1 and sources >= 1
    assert {5, 6, 7, 15} <= launches[0] and not launches[0] & ncu_rep_format.STRIPPED
    assert copy.stat().st_size < path.stat().st_size / 2
    with pytest.raises(ncu_rep_format.FormatError):
        ncu_rep_format.write_attribution_copy(DATA / "bad" / "truncated.ncu-rep", [0], tmp_path / "cut.ncu-rep")


@pytest.mark.parametrize("elf", [b"", b"\x7fELF", b"not an elf at all" * 8, b"\x7fELF\x02\x01" + b"\xff" * 58,
                                 b"\x7fELF\x01\x01" + bytes(58)], ids=["empty", "short", "other", "headers-outside", "32-bit"])
def test_a_cubin_that_is_no_elf_this_reads_has_no_known_line_table(elf):
    # None: the reader asks ncu_report for every PC's line, as before (never a line table assumed away).
    assert cubin.has_line_table(elf) is None


def test_per_instruction_values_read_by_arrays_where_a_value_looks_like_a_record(monkeypatch):
    """SYNTHETIC bytes: a metric whose every value is 0x1a (a record's tag) before a 10-byte record, so a value
    looks like a record's start; the chain of records is followed past it (ncu_rep_format._chain) and gives what
    reading each record as a message gives."""
    metric = ncu_rep_format._classes()["Metric"](name_id=7)
    for i in range(40):
        instance = metric.instances.add()
        instance.correlation.u64 = 0x4000 + 16 * i  # a three-byte varint: each record's payload is 10 bytes
        instance.value.u64 = 0x1A
    data = metric.SerializeToString()
    name_id, head_end = ncu_rep_format._head(data)
    followed = []
    chain = ncu_rep_format._chain
    monkeypatch.setattr(ncu_rep_format, "_chain", lambda *args: followed.append(1) or chain(*args))
    pcs, values = ncu_rep_format._per_pc_together(data, [(head_end, len(data))])[head_end]
    assert followed and name_id == 7
    expected_pcs, expected_values = ncu_rep_format._per_pc(data, head_end)
    assert pcs.tolist() == expected_pcs.tolist() == [0x4000 + 16 * i for i in range(40)]
    assert values.tolist() == expected_values.tolist() == [0x1A] * 40


def _launch_read(launch) -> tuple:
    """What a parsed launch holds, comparable (its per-instruction values as lists)."""
    per_pc = lambda found: {name: (v.pcs.tolist(), v.values.tolist()) for name, v in found.items()}  # noqa: E731
    return (launch.index, launch.mangled, launch.demangled, launch.names, launch.metrics, launch.rules, per_pc(launch.instances),
            per_pc(launch.codes), launch.files, launch.lines, launch.code)


def test_the_launches_asked_for_are_parsed_as_the_whole_read_does():
    """Only the launches ``only`` names, each as the read of all launches gives it (the others skipped unread)."""
    has = lambda launch: True  # noqa: E731
    for path in (H200 / "vecadd" / "bench_add.ncu-rep", DATA / "h200_ncuwrap" / "multi" / "two_processes.ncu-rep"):
        whole = [_launch_read(launch) for launch in ncu_rep_format.read(path, None, source_counters.INSTANCED, source_counters.CODED, has)]
        assert len(whole) >= 2 and len(ncu_rep_format.launch_sizes(path)) == len(whole)
        for only in (range(0, 1), range(1, len(whole)), range(0, len(whole)), range(len(whole), len(whole))):
            read = [_launch_read(launch) for launch in ncu_rep_format.read(path, None, source_counters.INSTANCED, source_counters.CODED, has,
                                                                         only=only)]
            assert read == whole[only.start:only.stop], (path, only)


def test_the_launches_are_cut_in_runs_of_about_equal_bytes():
    sizes = ncu_rep_format.launch_sizes(DATA / "h200_ncuwrap" / "multi" / "two_processes.ncu-rep")
    assert len(sizes) == 6 and all(50_000 < size < 53_000 for size in sizes)
    assert ncu_rep_reader._cut([10, 10, 10, 10], 2) == [range(0, 2), range(2, 4)]
    assert ncu_rep_reader._cut([30, 1, 1, 1, 1], 2) == [range(0, 1), range(1, 5)]
    assert ncu_rep_reader._cut([1, 1, 1, 30], 2) == [range(0, 4)]  # the last launch alone holds most: one run
    assert ncu_rep_reader._cut([5], 3) == [range(0, 1)] and ncu_rep_reader._cut([], 2) == []
    assert ncu_rep_reader._cut([1] * 9, 3) == [range(0, 3), range(3, 6), range(6, 9)]


@pytest.mark.parametrize("parsers", [2, 3])
def test_a_report_parsed_by_several_processes_is_the_one_parsed_by_one(parsers):
    """The read as the command does it on a host with cores to spare: the file parsed by this many processes, their
    launches joined and the shown instructions disassembled in one run, gives the Profile one process gives."""
    split = 0
    for path in sorted(p for p in DATA.rglob("*.ncu-rep") if "bad" not in p.parts):
        one = ncu_rep_reader.start(path, parsers=1).result()
        assert same_profile(ncu_rep_reader.start(path, parsers=parsers).result(), one), path
        split += len(ncu_rep_reader._cut(ncu_rep_format.launch_sizes(path), parsers)) > 1
    assert split >= 2  # reports whose launches were parsed by more than one process


def test_a_parsing_process_that_finds_the_file_laid_out_otherwise_leaves_the_report_to_ncu_report(monkeypatch):
    """A FormatError in another process's part falls back to NVIDIA's reader for the whole report, as in one process's."""
    pytest.importorskip("ncu_report")
    path = H200 / "vecadd" / "bench_add.ncu-rep"
    direct = ncu_rep_reader.start(path, parsers=1).result()
    parse = ncu_rep_reader._parse

    def refuse_the_second(path, wanted, tool, only):
        if only is not None and only.start > 0:
            raise ncu_rep_format.FormatError("format version 8")
        return parse(path, wanted, tool, only)

    fallen, whole = [], ncu_rep_reader.Reading._from_ncu_report
    monkeypatch.setattr(ncu_rep_reader, "_parse", refuse_the_second)
    monkeypatch.setattr(ncu_rep_reader.Reading, "_from_ncu_report", lambda self: fallen.append(1) or whole(self))
    fallen_back = ncu_rep_reader.start(path, parsers=2).result()
    assert same_profile(fallen_back, direct)
    assert fallen and fallen_back.fallback.reasons == ("format version 8",)  # NVIDIA's reader read it, and it is said


def test_a_parsing_process_that_dies_is_one_line(monkeypatch):
    path = H200 / "vecadd" / "bench_add.ncu-rep"
    parse = ncu_rep_reader._parse

    def die_in_the_second(path, wanted, tool, only):
        if only is not None and only.start > 0:
            os.kill(os.getpid(), signal.SIGKILL)
        return parse(path, wanted, tool, only)

    monkeypatch.setattr(ncu_rep_reader, "_parse", die_in_the_second)
    with pytest.raises(InputError, match=r"bench_add.ncu-rep: Nsight Compute report could not be read \(RuntimeError: a parsing process "
                                         r"ended without its launches \(signal SIGKILL\)\)"):
        ncu_rep_reader.start(path, parsers=2).result()


def test_the_objects_frozen_while_the_reader_runs_are_thawed_after_it():
    """The parent's objects are kept out of the collector while its reading child shares their pages, and given back
    to it after; objects a caller froze itself stay frozen."""
    import gc

    gc.unfreeze()  # whatever an earlier test in this process left frozen
    reading = ncu_rep_reader.start(H200 / "vecadd" / "bench_add.ncu-rep")
    assert gc.get_freeze_count() > 0
    reading.result()
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        ncu_rep_reader.start(H200 / "vecadd" / "bench_add.ncu-rep").result()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
