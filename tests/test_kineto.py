"""PyTorch profiler (Kineto) traces as timelines, and the timeline-reader registry they are read through.

Real behaviour on the H200 traces of tests/data/h200_ncuwrap/kineto (torch 2.11, with_stack, record_shapes;
the programs are workloads/steps/*.py, their own timings in kineto_*.log). Hostile inputs are small
hand-made files, each labelled with what it breaks.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import orjson
import pytest

from ncuwrap.core.errors import InputError
from ncuwrap.timeline import readers
from ncuwrap.timeline.readers import kineto_json, kineto_stream
from ncuwrap.timeline.ranks import files as ranks_files
from ncuwrap.timeline.readers.interface import TimelineReader
from ncuwrap.timeline.readers.kineto import KinetoTrace, rank_of
from ncuwrap.timeline.readers.nsys import NsysReport, NsysSqlite, NsysSqliteGz
from tests.conftest import DATA, H200, ROOT, golden_json, run_cli

TRACES = DATA / "h200_ncuwrap" / "kineto"
GPU_TRAIN = TRACES / "gpu_train.pt.trace.json.gz"
PROGRAMS = ("gpu_train", "small_launch", "host_prep", "small_launch_nosched")


def _events(name: str) -> list[dict]:
    return orjson.loads(gzip.open(ROOT / TRACES / f"{name}.pt.trace.json.gz").read())["traceEvents"]


@pytest.fixture(scope="module")
def read():
    """Each real trace read once, with its raw events."""
    return {name: (readers.read(ROOT / TRACES / f"{name}.pt.trace.json.gz")[0], _events(name)) for name in PROGRAMS}


# -- the registry: every reader keeps the contract -----------------------------------------------

# A real file of each reader's kind; a reader added without one fails test_every_reader_has_a_sample.
SAMPLES = {NsysSqlite: H200 / "nsys" / "bench.sqlite", NsysSqliteGz: DATA / "h200_ncuwrap" / "steps" / "gpu_train.sqlite.gz",
           KinetoTrace: GPU_TRAIN}
# Needs nsys to export: tests/test_timeline_cli.py reads one through a stand-in nsys.
NEEDS_A_TOOL = {NsysReport}


def test_every_reader_has_a_sample():
    assert {type(r) for r in readers.READERS} == set(SAMPLES) | NEEDS_A_TOOL


@pytest.mark.parametrize("reader", readers.READERS, ids=lambda r: type(r).__name__)
def test_every_reader_declares_what_it_takes_and_who_wrote_it(reader):
    assert isinstance(reader, TimelineReader) and type(reader).__doc__
    assert reader.kind and reader.producer and reader.fix
    assert reader.suffixes and all(s.startswith(".") and s == s.lower() for s in reader.suffixes)
    assert set(reader.shared) <= set(reader.suffixes)
    assert reader.sniff(b"") is False
    for suffix in reader.suffixes:
        assert readers._by_suffix(f"x{suffix}") == (reader, suffix)  # no two readers take one suffix
    assert set(reader.suffixes) <= set(readers.SUFFIXES)
    # The messages that list what ncuwrap reads name it (diagnose's unknown file, an empty --ranks folder),
    # and --ranks takes its files: a new reader needs no edit elsewhere.
    assert reader.described and reader.described in readers.described()
    assert set(reader.suffixes) - {".qdstrm"} <= set(ranks_files.SUFFIXES)


@pytest.mark.parametrize("reader", [r for r in readers.READERS if type(r) in SAMPLES], ids=lambda r: type(r).__name__)
def test_every_reader_reads_its_sample_into_the_timeline_model(reader):
    path = ROOT / SAMPLES[type(reader)]
    assert readers.find(path) is reader
    data, kind = readers.read(path)
    assert kind == reader.kind and data.producer
    for table in (data.kernels, data.copies, data.memsets, data.api):
        assert table["start"].dtype == table["end"].dtype == np.int64
        assert (np.diff(table["start"]) >= 0).all() and (table["end"] >= table["start"]).all()
    assert len(data.kernels) and {"name", "demangled", "mangled", "device", "stream", "correlation", "gridX", "blockZ"} <= set(data.kernels.columns)
    assert {"bytes", "category", "direction", "host_kind", "pageable", "correlation"} <= set(data.copies.columns)
    assert {"name", "tid", "correlation"} <= set(data.api.columns)


def test_a_file_is_found_by_its_first_bytes_where_its_name_does_not_say(tmp_path):
    trace = tmp_path / "trace"
    trace.write_bytes(gzip.open(ROOT / GPU_TRAIN).read())
    export = tmp_path / "export"
    shutil.copyfile(ROOT / SAMPLES[NsysSqlite], export)
    verdict = tmp_path / "timeline.json"  # ncuwrap's own document shares the .json suffix
    verdict.write_text('{"schema": "ncuwrap.timeline/v1", "traceEvents": []}')
    assert type(readers.find(trace)) is KinetoTrace and type(readers.find(export)) is NsysSqlite
    assert readers.find(verdict) is None and readers.find(tmp_path / "missing.json") is None
    assert type(readers.find(tmp_path / "x.pt.trace.json")) is KinetoTrace  # unambiguous: taken by its name
    data, kind = readers.read(trace)
    assert kind == "kineto" and len(data.kernels) == 1108


# -- the real traces: everything the trace holds, counted against the raw events ----------------

@pytest.mark.parametrize("name", PROGRAMS)
def test_each_kind_of_event_is_read_whole(read, name):
    data, events = read[name]
    cats = Counter(e.get("cat") for e in events if e.get("ph") == "X")
    steps = [e for e in events if e.get("cat") == "user_annotation" and re.fullmatch(r"ProfilerStep#\d+", e["name"])]
    assert len(data.kernels) == cats["kernel"]
    assert len(data.copies) == cats["gpu_memcpy"] and len(data.memsets) == cats["gpu_memset"]
    assert len(data.api) == cats["cuda_runtime"] + cats["cuda_driver"]
    assert len(data.nvtx) == len(steps) and set(data.nvtx["name"].tolist()) == {e["name"] for e in steps}
    assert len(data.ops) == cats["cpu_op"] + cats["user_annotation"] - len(steps)
    assert int(data.ops["user"].sum()) == cats["user_annotation"] - len(steps)
    assert len(data.frames) == cats["python_function"]
    assert data.device == "NVIDIA H200" and data.producer == "PyTorch profiler (Kineto)" and data.export_schema == "1"
    # Every kernel was launched by a CUDA call of the trace (the ac2g flows' correlation).
    assert np.isin(data.kernels["correlation"], data.api["correlation"]).all()


def test_times_are_the_traces_microseconds_as_nanoseconds(read):
    data, events = read["gpu_train"]
    first = min((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    assert data.kernels["start"][0] == round(first["ts"] * 1000)
    assert data.kernels["end"][0] - data.kernels["start"][0] == round(first["dur"] * 1000)
    assert data.kernels["gridX"].dtype == np.int32 and data.kernels["blockX"][0] == first["args"]["block"][0]


def test_copies_take_direction_and_host_memory_from_their_names(read):
    data, _ = read["host_prep"]
    directions = Counter(data.copies["direction"].tolist())
    assert directions == {"HTOD": 8, "DTOH": 8}
    assert set(data.copies["category"].tolist()) == {"memcpy_htod", "memcpy_dtoh"}
    assert set(data.copies["host_kind"].tolist()) == {"pinned"} and not data.copies["pageable"].any()
    assert kineto_json._copy_kinds("Memcpy HtoD (Pageable -> Device)") == ("HTOD", "pageable", 1.0)
    assert kineto_json._copy_kinds("Memcpy DtoD (Device -> Device)")[:2] == ("DTOD", "device")
    assert kineto_json._copy_kinds("Memcpy weird")[:2] == ("UNKNOWN", None)


def test_kernels_get_the_short_names_nsys_gives_them(read):
    data, _ = read["host_prep"]
    names = set(data.kernels["name"].tolist())
    assert "kernel" in names and not any("enable_if" in n for n in names)  # cuBLAS's gemvx::kernel, after its return type
    nsys, _ = readers.read(ROOT / DATA / "h200_ncuwrap" / "steps" / "small_launch.sqlite.gz")
    assert set(read["small_launch"][0].kernels["name"].tolist()) <= set(nsys.kernels["name"].tolist())


def test_ops_and_frames_keep_the_links_attribution_follows(read):
    data, events = read["gpu_train"]
    ops, frames = data.ops, data.frames
    backward = ops.rows(ops["name"] == "NllLossBackward0")
    assert len(backward) and (backward["seq"] >= 0).all() and (backward["fwd_tid"] >= 0).all()
    assert (ops["external_id"] >= 0).sum() > 0.9 * len(ops)
    assert (frames["parent_id"] == -1).sum() >= 1 and (frames["python_id"] >= 0).all()
    assert "gpu_train.py(100): main" in frames["name"].tolist()
    assert "Optimizer.step#AdamW.step" in ops.rows(ops["user"])["name"].tolist()  # an annotation, never a step


def test_a_trace_without_a_schedule_says_its_steps_are_not_marked(read):
    data, _ = read["small_launch_nosched"]
    assert data.nvtx.empty and any("no ProfilerStep#N range" in n for n in data.notes)
    assert not any("ProfilerStep" in n for n in read["gpu_train"][0].notes)


# -- the verdicts: what the programs' own timings say ------------------------------------------

def _doc(capsys, *args) -> dict:
    code, out, err = run_cli(capsys, *args, "-f", "json")
    assert (code, err) == (0, ""), err
    return json.loads(out)


def test_the_gpu_bound_loop_is_kernel_bound_in_its_steady_steps(capsys):
    # kineto_gpu_train.log: a step every 30.0 ms (median), GPU busy by CUDA events 29.2 ms of it. The trace's
    # kernels fill 89% of each CPU step (the nsys capture of the program without the profiler: 96%).
    doc = _doc(capsys, "timeline", GPU_TRAIN)
    assert doc["bound"] == "kernel" and doc["steps"]["count"] == 4
    assert doc["steps"]["period_ns"] == pytest.approx(30.0e6, rel=0.02)
    assert 85 <= doc["metrics"]["step_gpu_busy_pct"] <= 97


def test_the_small_launch_loop_is_launch_bound_and_the_host_prep_loop_host_bound(capsys):
    small = _doc(capsys, "timeline", TRACES / "small_launch.pt.trace.json.gz")
    assert small["bound"] == "launch" and small["steps"]["count"] == 10 and small["metrics"]["step_gpu_busy_pct"] < 10
    assert small["steps"]["period_ns"] == pytest.approx(7.7e6, rel=0.05)  # the log: 5.4-8.1 ms in the profiled steps
    host = _doc(capsys, "timeline", TRACES / "host_prep.pt.trace.json.gz")
    assert host["bound"] == "launch" and host["limiter"] == "host code (no CUDA call)"
    assert host["metrics"]["step_gpu_busy_pct"] < 5  # the log: 3 ms of GPU in a 37.6 ms step


def test_the_json_verdict_of_the_training_loop(capsys):
    golden_json("timeline_kineto_gpu_train.json", _doc(capsys, "timeline", GPU_TRAIN))


def test_diagnose_compare_and_the_api_take_a_trace(capsys):
    import ncuwrap

    doc = _doc(capsys, "timeline", GPU_TRAIN)
    assert _doc(capsys, "diagnose", GPU_TRAIN) == doc
    assert ncuwrap.diagnose_timeline(GPU_TRAIN).to_json() == doc == ncuwrap.diagnose(GPU_TRAIN).to_json()
    assert doc["source"] == {"path": str(GPU_TRAIN), "kind": "kineto", "nsys_version": None, "export_schema": "1",
                             "device": "NVIDIA H200", "producer": "PyTorch profiler (Kineto)"}
    compared = _doc(capsys, "compare", DATA / "h200_ncuwrap" / "steps" / "gpu_train.sqlite.gz", GPU_TRAIN)
    assert compared["schema"] == "ncuwrap.timeline-compare/v1"
    code, out, err = run_cli(capsys, "timeline", GPU_TRAIN)
    assert code == 0 and "(kineto; NVIDIA H200; PyTorch profiler (Kineto))" in " ".join(out.split())
    code, out, err = run_cli(capsys, "timeline", GPU_TRAIN, "-f", "markdown")
    assert code == 0 and "NVIDIA H200, PyTorch profiler (Kineto) (kineto)" in out


def _with_rank(raw: bytes, rank: int) -> bytes:
    return raw.replace(b'"schemaVersion": 1,', b'"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": 2},'
                       % rank, 1)


def test_ranks_of_a_folder_of_traces_come_from_distributed_info(capsys, tmp_path):
    raw = gzip.open(ROOT / GPU_TRAIN).read()
    # tensorboard_trace_handler names traces by host and pid: the name order says nothing of the rank.
    (tmp_path / "host_9.1.pt.trace.json").write_bytes(_with_rank(raw, 0))
    (tmp_path / "host_1.2.pt.trace.json").write_bytes(_with_rank(raw, 1))
    (tmp_path / "timeline.json").write_text('{"schema": "ncuwrap.timeline/v1"}')  # no trace: left out
    assert rank_of(readers.head(tmp_path / "host_1.2.pt.trace.json")) == 1
    doc = _doc(capsys, "timeline", "--ranks", tmp_path)
    assert doc["source"]["naming"] == "ranks from the traces' distributedInfo"
    assert [(r["rank"], Path(r["path"]).name, r["kind"]) for r in doc["ranks"]] == [
        (0, "host_9.1.pt.trace.json", "kineto"), (1, "host_1.2.pt.trace.json", "kineto")]


# -- what a trace lacks, said --------------------------------------------------------------------

def _write(path: Path, doc) -> Path:
    path.write_bytes(orjson.dumps(doc))
    return path


def _small(events=None, **top) -> dict:
    """A hand-made trace: one step, one launch and its kernel."""
    base = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 100.0, "dur": 50.0},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110.0, "dur": 5.0,
             "args": {"correlation": 7}},
            {"ph": "X", "cat": "kernel", "name": "void k<int>(int)", "pid": 0, "tid": 7, "ts": 120.0, "dur": 20.0,
             "args": {"device": 0, "stream": 7, "correlation": 7, "grid": [1, 1, 1], "block": [32, 1, 1]}}]
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}], **top,
            "traceEvents": base if events is None else events}


def test_a_trace_without_python_stacks_or_ops_says_so(tmp_path):
    data, kind = readers.read(_write(tmp_path / "plain.json", _small(with_stack=0)))
    assert kind == "kineto" and data.frames is None and data.ops is None
    assert any("no Python stacks" in n for n in data.notes) and any("no CPU op" in n for n in data.notes)
    assert data.kernels["name"].tolist() == ["k"] and data.kernels["correlation"].tolist() == [7]


def test_a_trace_without_gpu_events_is_refused_with_the_fix(capsys, tmp_path):
    path = _write(tmp_path / "cpu_only.json", _small(_small()["traceEvents"][:2]))
    code, out, err = run_cli(capsys, "timeline", path)
    assert code == 2 and out == ""
    assert err.strip() == (f"ncuwrap: error: {path}: no GPU event (kernel, memcpy, memset): the trace was recorded without CUDA "
                           "activity; profile with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])")


def test_fields_kineto_may_leave_out_read_as_unknown(tmp_path):
    events = _small()["traceEvents"]
    del events[2]["args"]["correlation"], events[2]["args"]["grid"]
    data, _ = readers.read(_write(tmp_path / "sparse.json", _small(events)))
    assert np.isnan(data.kernels["correlation"]).all() and data.kernels["gridX"].tolist() == [-1]


# -- hostile traces: one line, exit 2, naming the file and the fix -------------------------------

def _refused(capsys, path, pattern):
    code, out, err = run_cli(capsys, "timeline", path)
    assert code == 2 and out == "", err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ncuwrap: error: {path}: "), err
    assert re.search(pattern, lines[0]), lines[0]


def _event(**change) -> list:
    events = _small()["traceEvents"]
    events[2].update(change)
    return events


HOSTILE = {
    # name: (file content, what the one line says)
    "truncated": (orjson.dumps(_small())[:-40], r"truncated JSON \(the trace ends early"),
    "not_json": (b"{ this is not json }", r"invalid JSON"),
    "a_list": (b"[1, 2, 3]", r"not a PyTorch profiler trace \(a JSON list\)"),
    "no_events": (b'{"schemaVersion": 1, "events": []}', r"not a PyTorch profiler trace \(a JSON object without a traceEvents list\)"),
    "deep": (b'{"traceEvents": ' + b"[" * 5000 + b"]" * 5000 + b"}", r"nested deeper than 1,024 levels"),
    "infinite": (b'{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1e999}]}', r"a number past a double's range"),
    "event_not_object": (orjson.dumps(_small([*_small()["traceEvents"], "x"])), r"traceEvents\[3\] is a JSON str, not an event object"),
    "no_ts": (orjson.dumps(_small([{k: v for k, v in e.items() if k != "ts"} for e in _small()["traceEvents"]])),
              r"traceEvents\[0\] \(user_annotation\) has no 'ts'"),
    "ts_text": (orjson.dumps(_small(_event(ts="120"))), r"traceEvents\[2\] \(kernel\): ts is '120', not a number"),
    "negative_dur": (orjson.dumps(_small(_event(dur=-1.0))), r"traceEvents\[2\] \(kernel\): dur -1.0 is off the clock"),
    "huge_ts": (orjson.dumps(_small(_event(ts=1e300))), r"traceEvents\[2\] \(kernel\): ts 1e\+300 is off the clock"),
    "huge_id": (orjson.dumps(_small(_event(args={"correlation": 1234567}))).replace(b"1234567", b"9" * 40),
                r"traceEvents\[2\] \(kernel\): correlation is 1e\+40, not a 64-bit integer"),
    "bad_grid": (orjson.dumps(_small(_event(args={"grid": [1, 2]}))), r"grid is \[1, 2\], not three integers"),
    "name_number": (orjson.dumps(_small(_event(name=5))), r"traceEvents\[2\] \(kernel\): name is 5, not a text"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_traces_are_refused_in_one_line(capsys, tmp_path, case):
    content, pattern = HOSTILE[case]
    path = tmp_path / f"{case}.json"
    path.write_bytes(content)
    _refused(capsys, path, pattern)
    gz = tmp_path / f"{case}.json.gz"  # gzipped: the same words
    gz.write_bytes(gzip.compress(content))
    _refused(capsys, gz, pattern)


def test_a_truncated_gzip_is_refused(capsys, tmp_path):
    path = tmp_path / "cut.pt.trace.json.gz"
    path.write_bytes((ROOT / GPU_TRAIN).read_bytes()[:50_000])
    _refused(capsys, path, r"not a readable gzip file .*; give the trace again")


def test_a_gzip_bomb_is_stopped_by_its_ratio(capsys, tmp_path, monkeypatch):
    from ncuwrap.core import packed

    monkeypatch.setattr(packed, "RATIO_AFTER", 1 << 20)
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(gzip.compress(b'{"traceEvents": [' + b" " * (64 << 20) + b"]}", compresslevel=9))
    _refused(capsys, path, r"inflates more than 250 times its size")


def test_a_diagnosis_document_given_as_a_trace_is_refused(capsys, tmp_path):
    path = tmp_path / "verdict.json"
    path.write_text('{"schema": "ncuwrap.timeline/v1", "bound": "kernel"}')
    _refused(capsys, path, r"not a PyTorch profiler trace \(a JSON object without a traceEvents list\)")
    with pytest.raises(InputError, match="not a PyTorch profiler trace"):
        kineto_json.read(path)


# -- big traces: streamed a piece at a time, the same as whole ----------------------------------

def _same(a, b):
    for name in ("kernels", "copies", "memsets", "api", "nvtx", "ops", "frames"):
        x, y = getattr(a, name), getattr(b, name)
        if x is None or y is None:
            assert x is y, name
            continue
        assert x.columns == y.columns and len(x) == len(y), name
        for c in x.columns:
            xs, ys = x[c], y[c]
            assert (xs.tolist() == ys.tolist()) if hasattr(xs, "categories") else np.array_equal(xs, ys, equal_nan=True), (name, c)
    assert (a.notes, a.device, a.export_schema, a.run) == (b.notes, b.device, b.export_schema, b.run)


def _whole(path: Path, ranks: bool = False):
    """The trace parsed as one document, its events put in columns in one go."""
    raw = path.read_bytes()
    doc = orjson.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    tables = kineto_json._Tables()
    tables.add_all(doc["traceEvents"])
    tables.check()
    return kineto_json._data(path, doc, tables, ranks)


@pytest.fixture
def small_pieces(monkeypatch):
    """The stream's sizes scaled down (a piece of 4 KiB, blocks of 64 KiB, an event or the text after the
    events at most 256 KiB), and no trace read whole: the same code paths as a multi-GB trace's, on a few MB."""
    monkeypatch.setattr(kineto_stream, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(kineto_stream, "READ_BYTES", 64 << 10)
    monkeypatch.setattr(kineto_stream, "MAX_PIECE_BYTES", 256 << 10)
    monkeypatch.setattr(kineto_json, "MAX_TRACE_BYTES", 0)


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_stream_reads_what_the_whole_document_reads(small_pieces, name):
    path = ROOT / TRACES / f"{name}.pt.trace.json.gz"
    _same(kineto_json.read(path, ranks=True), _whole(path, ranks=True))


def test_the_stream_holds_a_block_and_a_piece_not_the_file(small_pieces, monkeypatch, tmp_path):
    # Memory is bounded by the pieces, not the file: the bytes held at once stay under a block and two pieces.
    path = tmp_path / "gpu_train.pt.trace.json"
    path.write_bytes(gzip.open(ROOT / GPU_TRAIN).read())  # 6.1 MB of JSON, plain
    held, more = [], kineto_stream._Stream.more

    def counted(self, keep):
        held.append(len(self.buf) - keep)
        return more(self, keep)

    monkeypatch.setattr(kineto_stream._Stream, "more", counted)
    data, _ = readers.read(path)
    assert len(data.kernels) == 1108 and len(held) > 90
    assert max(held) < (64 << 10) + 2 * 4096 + 8192, max(held)


def _repeated(copies: int) -> dict:
    """SYNTHETIC: the real small_launch trace repeated ``copies`` times, each copy shifted in time past the one
    before and its ids (correlation, External id, Python id and parent, flows) moved by one offset, its
    ProfilerStep#N numbered on (the way benchmarks/kineto_big.py makes a 2 GB trace)."""
    doc = orjson.loads(gzip.open(ROOT / TRACES / "small_launch.pt.trace.json.gz").read())
    meta = [e for e in doc["traceEvents"] if e.get("ph") == "M"]
    timed = [e for e in doc["traceEvents"] if e.get("ph") != "M"]
    span = max(e["ts"] + e.get("dur", 0) for e in timed) - min(e["ts"] for e in timed) + 1000.0
    step, ids = 1 << 20, ("correlation", "External id", "Python id", "Python parent id")
    events = list(meta)
    for k in range(copies):
        for e in timed:
            e = {**e, "ts": round(e["ts"] + k * span, 3)}
            if isinstance(e.get("id"), int):
                e["id"] += k * step
            if isinstance(e.get("args"), dict):
                e["args"] = {a: v + k * step if a in ids and isinstance(v, int) and v > 0 else v for a, v in e["args"].items()}
            if e.get("name", "").startswith("ProfilerStep#"):
                e["name"] = f"ProfilerStep#{int(e['name'][13:]) + 100 * k}"
            events.append(e)
    return {**doc, "traceEvents": events}


def test_a_trace_past_the_whole_documents_limit_is_streamed(capsys, small_pieces, tmp_path):
    # The old refusal ("more than the 512 MiB a trace is read whole up to"), scaled down: MAX_TRACE_BYTES is 0,
    # so a trace is read only by the stream, here 3 MB in 4 KiB pieces; gzipped too.
    doc = _repeated(3)
    path = tmp_path / "synthetic_small_launch_x3.pt.trace.json"
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))  # one event over several lines, as torch.profiler writes
    assert path.stat().st_size > 3_000_000
    packed = tmp_path / "synthetic_small_launch_x3.pt.trace.json.gz"
    packed.write_bytes(gzip.compress(path.read_bytes(), 1))
    steps = sum(1 for e in doc["traceEvents"] if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
    for trace in (path, packed):
        data = kineto_json.read(trace)
        _same(data, _whole(trace))
        assert len(data.nvtx) == steps and len(data.kernels) == 3 * len(_whole(ROOT / TRACES / "small_launch.pt.trace.json.gz").kernels)
        assert _doc(capsys, "timeline", trace)["bound"] == "launch"


# Names holding what a cut looks for ("}, {"), quotes, backslashes, control characters, a name of 8,000
# characters of cuts, and (written as JSON escapes, so the file holds no brace) "\u007d, \u007b".
TRICKY_NAMES = ['void k<"}, {">(int)', "a}\n,\t{b", '"}]}, {"ph": "X"', "back\\slash\\", "}, {" * 2000, "k<\u00e9>(\\\")"]


def test_names_that_look_like_an_events_end_are_read_as_names(small_pieces, tmp_path):
    events = _small()["traceEvents"]
    kernel = events.pop(2)
    events += [{**kernel, "name": n, "ts": 120.0 + i} for i, n in enumerate([*TRICKY_NAMES, "ESCAPED"])] * 40
    text = orjson.dumps(_small(events, traceName="a ] b }, { c")).replace(b'"ESCAPED"', b'"\\u007d, \\u007b"')
    path = tmp_path / "tricky.json"
    path.write_bytes(text)
    data = kineto_json.read(path)
    assert sorted(set(data.kernels["demangled"].tolist())) == sorted({*TRICKY_NAMES, "}, {"}) and len(data.nvtx) == 1
    _same(data, _whole(path))


# Hostile traces refused by the stream alone (no whole-document parse behind it), in the words the
# whole document's parse says.
STREAMED = {case: HOSTILE[case] for case in HOSTILE if case not in ("not_json", "a_list", "no_events")}


@pytest.mark.parametrize("case", sorted(STREAMED))
def test_hostile_traces_are_refused_by_the_stream_in_one_line(capsys, small_pieces, tmp_path, case):
    content, pattern = STREAMED[case]
    for name, data in ((f"{case}.json", content), (f"{case}.json.gz", gzip.compress(content))):
        path = tmp_path / name
        path.write_bytes(data)
        _refused(capsys, path, pattern)


def _changed(events: list, at: int, **change) -> bytes:
    """The trace with the first kernel at ``at`` or after changed, moved to ``at``."""
    k = next(i for i in range(at, len(events)) if events[i].get("cat") == "kernel")
    kernel = {**events[k], **change}
    return orjson.dumps({"traceEvents": [*events[:at], kernel, *events[at:k], *events[k + 1:]]})


def test_a_fault_far_into_a_big_trace_is_named_by_its_place(capsys, small_pieces, tmp_path):
    text = gzip.open(ROOT / GPU_TRAIN).read()
    events = orjson.loads(text)["traceEvents"]
    garbage = text.index(b'"ts": 5411572003') + 6
    name = text.index(b'"name": "', len(text) // 3) + 9  # an event's name, a third into the trace
    cases = {  # name: (the text, what the one line says)
        "cut": (text[: len(text) // 2], r"truncated JSON \(the trace ends early"),
        "garbage": (text[:garbage] + b"@" + text[garbage + 1:], rf"invalid JSON \(unexpected character.* near byte {garbage:,}\)"),
        "bad_event": (_changed(events, 15000, ts="x"), r"traceEvents\[15000\] \(kernel\): ts is 'x', not a number"),
        "off_clock": (_changed(events, 12000, dur=-5.0), r"traceEvents\[12000\] \(kernel\): dur -5.0 is off the clock"),
        "deep": (text.replace(b'"args": {', b'"args": {"x": ' + b"[" * 1100 + b"]" * 1100 + b", ", 1), r"nested deeper than 1,024 levels"),
        "huge_event": (text[:name] + b"}, {" * (100 << 10) + text[name:], r"no event ends within 0.25 MiB from byte 2,"),
        "huge_line": (text[:name] + b"k" * (1 << 20) + text[name:], r"no event ends within 0.25 MiB from byte 2,"),
        "second_array": (text.rstrip()[:-1] + b', "traceEvents": []}', r"not laid out as torch.profiler writes a trace \(a second traceEvents"),
    }
    for name, (content, pattern) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_bytes(content)
        _refused(capsys, path, pattern)


def test_a_number_past_a_double_in_a_field_not_read_is_not_looked_at(tmp_path):
    # msgspec skips the fields the timeline does not read without making them numbers; in a field read
    # (HOSTILE's "infinite": ts) such a number is refused.
    path = tmp_path / "pid.json"
    path.write_bytes(orjson.dumps(_small()).replace(b'"pid":0,', b'"pid":1e999,', 1))
    assert b"1e999" in path.read_bytes()
    data, _ = readers.read(path)
    assert data.kernels["demangled"].tolist() == ["void k<int>(int)"]
