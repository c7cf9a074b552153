"""Inputs that are not regular files (issue 10, A8) and hostile bench JSON (A7): one line naming the
file and the fix, exit code 2, never a hang."""

from __future__ import annotations

import gzip
import os
import signal
import stat

import pytest

from ncuwrap.core.errors import InputError
from tests.conftest import DATA, H200, run_cli

TRANSPOSE = H200 / "transpose"
BEFORE_JSON = DATA / "h200_ncuwrap" / "bench_pairs" / "transpose.json"  # real, recorded on the H200
AFTER_JSON = BEFORE_JSON


@pytest.fixture(autouse=True)
def _no_hang():
    """Opening a FIFO blocks until a writer comes: a regression must fail the test, not stall CI."""
    def stuck(signum, frame):
        raise TimeoutError("ncuwrap blocked on an input for 60 s")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


# Where a file is given: REPORT (a report and a timeline), --rules, --ncu-rules, --before-timing.
SLOTS = {
    "report": ("x.ncu-rep", lambda p: ["diagnose", p]),
    "timeline": ("x.sqlite", lambda p: ["diagnose", p]),
    "rules": ("x.yaml", lambda p: ["diagnose", TRANSPOSE / "copyKernel.raw.csv", "--rules", p]),
    "ncu-rules": ("x.details.csv", lambda p: ["diagnose", TRANSPOSE / "copyKernel.raw.csv", "--ncu-rules", p]),
    "before-timing": ("x.json", lambda p: ["compare", TRANSPOSE / "transposeNaive.raw.csv", TRANSPOSE / "transposePadded.raw.csv",
                                          "--before-timing", p, "--after-timing", AFTER_JSON]),
}


def _fifo(path):
    os.mkfifo(path)


def _dev_zero(path):
    path.symlink_to("/dev/zero")  # only ever opened for reading, and not even that once refused


def _loop(path):
    path.symlink_to(path.name)


KINDS = {
    "fifo": (_fifo, "is a named pipe (FIFO), not a file; save the data to a file and give its path"),
    "dev-zero": (_dev_zero, "is a character device, not a file; save the data to a file and give its path"),
    "symlink-loop": (_loop, "a loop of symbolic links; point the link at the file itself"),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("slot", SLOTS)
def test_not_a_regular_file(capsys, tmp_path, slot, kind):
    name, argv = SLOTS[slot]
    make, message = KINDS[kind]
    path = tmp_path / name
    make(path)
    code, out, err = run_cli(capsys, *argv(path))
    assert code == 2 and out == ""
    assert err == f"ncuwrap: error: {path}: {message}\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
@pytest.mark.parametrize("slot, source", [("report", TRANSPOSE / "copyKernel.ncu-rep.gz"), ("timeline", H200 / "nsys" / "bench.sqlite"),
                                          ("rules", DATA / "../../rules/default.yaml"), ("ncu-rules", TRANSPOSE / "copyKernel.details.csv"),
                                          ("before-timing", BEFORE_JSON)])
def test_unreadable_file(capsys, tmp_path, slot, source):
    name, argv = SLOTS[slot]
    path = tmp_path / name
    path.write_bytes(gzip.decompress(source.read_bytes()) if source.suffix == ".gz" else source.read_bytes())
    path.chmod(0)
    try:
        code, out, err = run_cli(capsys, *argv(path))
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert code == 2 and out == ""
    assert err == f"ncuwrap: error: {path}: cannot be read (Permission denied); check the file's permissions\n"


def test_oversized_rules_file(capsys, tmp_path):
    # The bundled rules padded with comment lines past the 4 MiB a rules file may be.
    path = tmp_path / "big.yaml"
    text = (DATA / "../../rules/default.yaml").read_text(encoding="utf-8")
    path.write_text(text + "# padding\n" * 450_000, encoding="utf-8")
    code, _, err = run_cli(capsys, "rules", "check", path)
    assert code == 2
    assert err == f"ncuwrap: error: {path}: {path.stat().st_size:,} bytes, more than the 4 MiB such a file can be; give the right file\n"


# Bench JSON: the real H200 transpose report with one value or one bracket run replaced.
MEDIAN = '      "median_ms": 0.0406719986,\n      "min_ms"'  # benchmarks[0]'s median (not a run's)
@pytest.mark.parametrize("old, new, message", [
    ('"env": {', '"env": {"x": ' + "[" * 200_000 + "]" * 200_000 + ",", "lists and objects nest more than 32 levels deep"),
    (MEDIAN, MEDIAN.replace("0.0406719986", "1e999"), "the number 1e999 is out of range"),
    (MEDIAN, MEDIAN.replace("0.0406719986", "NaN"), "NaN is not a number JSON allows"),
    ('"sm_count": 132,', '"sm_count": 1' + "0" * 5000 + ",", "the integer 100000000000000000000000... is out of range (at most 2**53)"),
    (MEDIAN, MEDIAN.replace("0.0406719986", "1e-320"), "benchmarks[0] (transpose_copy).median_ms: 9.99989e-321 ms is not a kernel's time (1 ns to one day)"),
    (MEDIAN, MEDIAN.replace("0.0406719986", "1e300"), "benchmarks[0] (transpose_copy).median_ms: 1e+300 ms is not a kernel's time (1 ns to one day)"),
    ('"gpu": "NVIDIA H200"', '"gpu": "NVIDIA [ { \\" ] H200"', None),  # brackets and escaped quotes inside a string: fine
], ids=["200k-brackets", "1e999", "NaN", "5000-digit-int", "denormal-median", "1e300-median", "brackets-in-string"])
def test_hostile_bench_json(capsys, tmp_path, old, new, message):
    text = BEFORE_JSON.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / "before.json"
    path.write_text(text.replace(old, new), encoding="utf-8")
    code, out, err = run_cli(capsys, *SLOTS["before-timing"][1](path), "-f", "json")
    if message is None:
        assert code == 0 and "no benchmark of kernel transposeNaive" in out
        return
    assert code == 2 and out == ""
    assert err == f"ncuwrap: error: {path}: {message}; give the JSON written by 'ncuwrap bench'\n"


@pytest.mark.parametrize("where", ["reader", "attribution"])
@pytest.mark.parametrize("how", ["abort", "segfault"])
def test_a_report_reader_crash_is_one_line(capsys, tmp_path, monkeypatch, how, where):
    """NVIDIA's .ncu-rep reader is native code that can abort() on a corrupt report (seen under fuzzing):
    it runs in a child process, and its death is one line naming the file, exit 2."""
    from ncuwrap.kernel.reading import ncu_rep_reader

    report = tmp_path / "report.ncu-rep"
    report.write_bytes(gzip.decompress((H200 / "transpose" / "copyKernel.ncu-rep.gz").read_bytes()))

    def crash(path, module, shown, wanted=None, part=(0, 1), beside=False, parts=1):
        os.kill(os.getpid(), signal.SIGABRT if how == "abort" else signal.SIGSEGV)

    # The child that reads the file has NVIDIA's reader answer the instructions' lines and SASS in a
    # process beside it (the attribution worker) where the line table and nvdisasm cannot; a report not laid
    # out as expected is read by ncu_report's children. Any of them can die.
    if where == "reader":
        monkeypatch.setattr(ncu_rep_reader, "_collect_file", crash)
        monkeypatch.setattr(ncu_rep_reader, "_collect", crash)
    else:
        report.write_bytes((DATA / "h200_ncuwrap" / "source" / "transpose-naive.ncu-rep.gz").read_bytes())
        report = report.rename(tmp_path / "report.ncu-rep.gz")  # a report with SourceCounters
        monkeypatch.setattr(ncu_rep_reader.line_table, "read", lambda elf: None)  # neither reads it: the worker is asked
        monkeypatch.setattr(ncu_rep_reader.disassembly, "nvdisasm", lambda: None)
        monkeypatch.setattr(ncu_rep_reader, "_answer", lambda path, module, conn, part: crash(path, module, None))
    code, out, err = run_cli(capsys, "diagnose", str(report))
    name = "SIGABRT" if how == "abort" else "SIGSEGV"
    assert (code, out) == (2, "")
    assert err == (f"ncuwrap: error: {report}: Nsight Compute's report reader crashed on it (signal {name}): the report is corrupt, "
                   "truncated, or from a newer ncu; copy it again, re-export it with 'ncu -o', or diagnose its CSV export "
                   "('ncu --import REPORT --csv --page raw')\n")
    assert report.read_bytes() == (gzip.decompress((H200 / "transpose" / "copyKernel.ncu-rep.gz").read_bytes()) if where == "reader" else
                                   (DATA / "h200_ncuwrap" / "source" / "transpose-naive.ncu-rep.gz").read_bytes())


def test_a_report_read_in_the_child_is_the_report_read_in_process():
    """In a process of its own: NVIDIA's reader run in-process leaves native state (its disassembler's
    locks) that a child forked later inherits and can hang on, so the in-process read comes last."""
    import subprocess
    import sys

    script = ("import gzip, tempfile\n"
              "from pathlib import Path\n"
              "from ncuwrap.kernel.reading import ncu_rep_reader\n"
              "path = Path(tempfile.mkdtemp()) / 'copyKernel.ncu-rep'\n"
              f"path.write_bytes(gzip.decompress(Path({str(H200 / 'transpose' / 'copyKernel.ncu-rep.gz')!r}).read_bytes()))\n"
              "child = ncu_rep_reader.read(path)\n"
              "here = ncu_rep_reader._assemble(path, path, *ncu_rep_reader._collect(path, ncu_rep_reader.load_module(), path))\n"
              "assert child.frame.equals(here.frame) and child.rules == here.rules and child.source == here.source\n"
              "assert child.sources.keys() == here.sources.keys() == {0}  # --set full: SourceCounters\n"
              "assert child.sources[0].table.equals(here.sources[0].table)\n"
              "print('same')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "same"


def test_the_forked_reader_runs_after_pyarrow_has_run():
    """The child builds no frame: forked from a process whose pyarrow thread pool has run (the CSV
    reader), a child that touched pyarrow or pandas hung on that pool's locks (seen in the suite)."""
    import subprocess
    import sys

    script = ("from ncuwrap.kernel.reading import load\n"
              f"load({str(H200 / 'transpose' / 'transposeNaive.raw.csv')!r})\n"
              f"p = load({str(H200 / 'transpose' / 'copyKernel.ncu-rep.gz')!r})\n"
              "print(len(p.frame), len(p.sources[0].table))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "23"]  # copyKernel: one launch, 23 instructions


@pytest.mark.parametrize("report", ["h200_ncuwrap/multi/two_processes.ncu-rep", "h200/vecadd/bench_add.ncu-rep"])
def test_a_report_read_in_parts_is_the_report_read_whole(report):
    """Several children each read every n-th launch (a large report on a host with free cores): the
    Profile is the one a single child reads, launches, rule results and instruction tables alike, also
    with more children than launches (bench_add: 2 launches with SourceCounters; two_processes: 6)."""
    from ncuwrap.kernel.reading import ncu_rep_reader

    path = DATA / report
    whole = ncu_rep_reader.start(path, parts=1).result()
    assert len(whole.frame) in (2, 6)
    for parts in (2, 3, 4):
        split = ncu_rep_reader.start(path, parts=parts).result()
        assert split.frame.equals(whole.frame) and split.rules == whole.rules and split.source == whole.source
        assert split.sources.keys() == whole.sources.keys()
        assert all(split.sources[k].table.equals(whole.sources[k].table) for k in whole.sources)


def test_a_truncated_report_read_in_parts_says_so_once(capsys):
    """The child that meets the cut-off launch says which; the others' launches are discarded."""
    from ncuwrap.kernel.reading import ncu_rep_reader

    path = DATA / "bad" / "truncated.ncu-rep"
    with pytest.raises(InputError, match=r"truncated.ncu-rep: the report is truncated or corrupt \(launch \d+ has no name or metrics\)") as whole:
        ncu_rep_reader.start(path, parts=1).result()
    with pytest.raises(InputError) as split:
        ncu_rep_reader.start(path, parts=3).result()
    assert str(split.value) == str(whole.value)


def test_how_many_children_read_a_report(tmp_path, monkeypatch):
    """One per 8 MB of report, at most 4, and never more than the cores beside the parent's."""
    from ncuwrap.core import process
    from ncuwrap.kernel.reading import ncu_rep_reader

    report = tmp_path / "r.ncu-rep"
    cores = {"n": 16}
    monkeypatch.setattr(process.os, "sched_getaffinity", lambda pid: set(range(cores["n"])), raising=False)
    for size, expected in ((1 << 20, 1), (8 << 20, 1), (17 << 20, 2), (58 << 20, 4), (1 << 30, 4)):
        with report.open("wb") as fh:
            fh.truncate(size)
        assert ncu_rep_reader.parts_for(report) == expected, size
    cores["n"] = 2
    assert ncu_rep_reader.parts_for(report) == 1  # the CI box: the parent's imports keep one core
    cores["n"] = 3
    assert ncu_rep_reader.parts_for(report) == 2
