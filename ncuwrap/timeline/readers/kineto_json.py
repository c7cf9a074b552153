"""Read a PyTorch profiler trace (torch.profiler's Chrome-trace JSON, written by Kineto) into the
timeline model an nsys capture is read into (:class:`~ncuwrap.timeline.model.TimelineData`).

What is taken (complete events, ``"ph": "X"``, by ``cat``; docs/kineto.md says what each missing part means):

- ``kernel``, ``gpu_memcpy``, ``gpu_memset``: the GPU work. ``args.correlation`` is the launching CUDA
  call's (the ``ac2g`` flows join the same two ids, so the flows themselves are not read). A kernel's
  name is its demangled name (Kineto writes no mangled one), its short name cut from it as nsys cuts
  it; a copy's direction and host memory kind come from its name ("Memcpy DtoH (Device -> Pinned)").
- ``cuda_runtime``, ``cuda_driver``: the CUDA calls, with their thread and correlation id.
- ``user_annotation`` named ``ProfilerStep#N``: the steps (as NVTX ranges are in an nsys capture).
  The ``gpu_user_annotation`` copies of them, and other annotations ("Optimizer.step#AdamW.step" would
  match the step pattern), are not steps.
- ``cpu_op``, and the other ``user_annotation`` ranges (``record_function``; flagged ``user``): the ops,
  with their sequence number, forward thread and external id, for attributing kernels to ops, and where
  the trace was recorded with ``record_shapes=True`` their inputs (``shapes``: "Input Dims", "Input type",
  "Input Strides" and "Concrete Inputs" kept as their JSON text, each distinct one once, for
  :mod:`ncuwrap.timeline.oplimits`; a text longer than :data:`~ncuwrap.timeline.events.MAX_SHAPES_BYTES` or not JSON reads as none).
- ``python_function`` (recorded with ``with_stack=True``): the Python frames, with their parent.

Times are int64 ns on the trace's own clock (``round(ts * 1000)``; ``baseTimeNanoseconds`` plus that is
the epoch time). The file is streamed, whatever its size (:mod:`ncuwrap.timeline.readers.kineto_stream`): its
events come a piece of about 1 MiB at a time, each decoded by msgspec into typed records of only the fields
read (:class:`_Event`), and go straight into typed columns (the stdlib's ``array``: a C number per field, no
Python object kept per event). A piece msgspec does not take is parsed by orjson into dicts (:meth:`_Tables.add_all`).

A damaged or hostile trace is refused in one line naming the file (:class:`~ncuwrap.core.errors.InputError`):
an event longer than kineto_stream.MAX_PIECE_BYTES (a huge single line among them), gzip inflating past
:data:`ncuwrap.core.packed.MAX_RATIO`, truncated or invalid JSON, nesting deeper than orjson's 1,024 levels,
numbers past a double in a field read. A trace the stream cannot read (another layout, or a damaged one) is
parsed whole where it holds at most MAX_TRACE_BYTES, so that its words are the whole document's parse's.
An event that is read but lacks a field Kineto always writes (``name``, ``ts``, ``dur``), holds a value of
another type, or a time off the clock (a negative duration, a time past 2**62 ns) is refused, not skipped:
Kineto always writes them, so the file was damaged or made, and skipping would change the verdict silently.
Fields Kineto may leave out (``args.correlation``, ``device``, ``stream``, grid, block, bytes, the op ids)
read as unknown (NaN, -1).
"""

from __future__ import annotations

import gzip
import re
import zlib
from array import array
from pathlib import Path

from typing import Any

import msgspec
import numpy as np
import orjson

from ncuwrap.core import fileio, packed
from ncuwrap.core.errors import InputError
from ncuwrap.core.peaks import DeviceFacts
from ncuwrap.timeline.readers import kineto_stream
from ncuwrap.timeline.events import MAX_SHAPES_BYTES, Events, Labels
from ncuwrap.timeline.model import COPY_CATEGORY_BY_NAME, RunInfo, TimelineData
from ncuwrap.timeline.readers.nsys_sqlite import MAX_TIME, api_name

PRODUCER = "PyTorch profiler (Kineto)"
# A trace the stream cannot read (another layout, or a damaged one, whose fault the whole document's parse
# says) is parsed whole: 5 times its text in objects, so only up to this.
MAX_TRACE_BYTES = 512 << 20
_FIX = kineto_stream.FIX
# What filling the columns raises on an event of another shape than Kineto writes (then _first_bad says which).
_EVENT_FAULTS = (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError)
STEP_NAME = re.compile(r"ProfilerStep#\d+")
_COPY_NAME = re.compile(r"Memcpy (\w+) \((\w+) -> (\w+)\)")
_TO_HOST = ("DTOH", "ATOH", "UVM_DTOH")
GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
API_CATEGORIES = ("cuda_runtime", "cuda_driver")
_NONE = -1  # an id the trace does not give (ids are never negative)
_NO_DIMS = (_NONE, _NONE, _NONE)


def read(path: str | Path, *, ranks: bool = False) -> TimelineData:
    """The events of the Kineto trace ``path`` (.json or .json.gz); ``ranks``: also what identifies the
    run. Raise InputError naming the file on any problem."""
    path = Path(path)
    fileio.check_file(path, folder_fix="give a torch.profiler trace (.json or .json.gz)", empty_fix=_FIX)
    tables = _Tables()
    try:
        doc = kineto_stream.read(path, tables.add_piece)
    except (kineto_stream.Unstreamed, kineto_stream.Fault) as why:
        return _read_whole(path, ranks, why)
    return _data(path, doc, tables, ranks)


def _read_whole(path: Path, ranks: bool, why: Exception) -> TimelineData:
    """A trace the stream could not read (``why``): parsed whole where it holds at most MAX_TRACE_BYTES (a trace
    of another layout is read; a damaged one is refused in the words the whole document's parse finds), else
    refused in the stream's words."""
    text = _text(path)
    if text is None:
        if isinstance(why, kineto_stream.Fault):
            raise InputError(f"{path}: {why}")
        raise InputError(f"{path}: not laid out as torch.profiler writes a trace ({why}), and more than the {MAX_TRACE_BYTES >> 20:,} MiB "
                         f"a trace of another layout is read whole up to; {_FIX}")
    doc = _parse(path, text)
    del text
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        shown = "a JSON object without a traceEvents list" if isinstance(doc, dict) else f"a JSON {type(doc).__name__}"
        raise InputError(f"{path}: not a PyTorch profiler trace ({shown}); give the trace torch.profiler wrote "
                         "(export_chrome_trace or tensorboard_trace_handler)")
    events = doc["traceEvents"]
    try:
        tables = _Tables()
        tables.add_all(events)
        tables.check()
    except _EVENT_FAULTS:
        raise InputError(f"{path}: {_first_bad(events)}; the trace is damaged or was not written by torch.profiler: {_FIX}") from None
    return _data(path, doc, tables, ranks)


# -- the whole text, bounded -------------------------------------------------------------------------

def _text(path: Path) -> bytes | None:
    """The trace's bytes, unpacked where gzipped; None where they are more than MAX_TRACE_BYTES. No gzip
    inflating more than packed.MAX_RATIO times (as for a gzipped SQLite export)."""
    with path.open("rb") as fh:
        gzipped = fh.read(2) == b"\x1f\x8b"
    if not gzipped:
        return None if path.stat().st_size > MAX_TRACE_BYTES else path.read_bytes()
    parts, size = [], 0
    try:
        with path.open("rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as src:
            while chunk := src.read(1 << 20):
                size += len(chunk)
                if size > MAX_TRACE_BYTES:
                    return None
                if packed.inflates_too_much(size, raw.tell()):
                    raise InputError(f"{path}: inflates more than {packed.MAX_RATIO} times its size (a real trace inflates 5-20 times), "
                                     f"so it is damaged or made to exhaust memory; {_FIX}")
                parts.append(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{path}: not a readable gzip file ({exc}); give the trace again, gzipped whole, or unpacked") from None
    return b"".join(parts)


def _parse(path: Path, text: bytes):
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{path}: {kineto_stream.json_fault(exc)}; {_FIX}") from None


# -- events into columns -----------------------------------------------------------------------------

# A piece of events decoded into these typed records by msgspec: only the fields read become Python objects
# (an op's "Input Dims", "Input type", "Concrete Inputs"... are kept as their raw JSON text), where orjson builds every field of
# every event (docs/scale.md: a piece in less than half orjson's time). Every field is Any, so a value of any
# type is taken as it is written and checked where the columns are filled, as add_all checks orjson's. A field
# left out: -1 where add_all reads a missing one as -1 (the ids), UNSET where add_all's e[key] fails (then
# appending it fails too). A piece msgspec does not take (an event or args that is not an object, nesting past
# Python's recursion limit, text that is not UTF-8) is parsed by orjson instead.
_UNSET = msgspec.UNSET
_NO_RAW = msgspec.Raw(b"")
# The args an op's inputs are read from (record_shapes=True), in the order its shapes text keeps them.
SHAPE_ARGS = ("Input Dims", "Input type", "Input Strides", "Concrete Inputs")


class _Args(msgspec.Struct):
    """The args read, of any event."""
    device: Any = _NONE
    stream: Any = _NONE
    correlation: Any = _NONE
    bytes: Any = _NONE
    grid: Any = None
    block: Any = None
    seq: Any = msgspec.field(default=_NONE, name="Sequence number")
    fwd_tid: Any = msgspec.field(default=_NONE, name="Fwd thread id")
    external_id: Any = msgspec.field(default=_NONE, name="External id")
    python_id: Any = msgspec.field(default=_NONE, name="Python id")
    parent_id: Any = msgspec.field(default=_NONE, name="Python parent id")
    # An op's inputs (record_shapes=True), as their JSON text: an op's shapes repeat every step, so they are
    # parsed once per distinct text (ncuwrap.timeline.oplimits), not once per event.
    dims: msgspec.Raw = msgspec.field(default=_NO_RAW, name="Input Dims")
    types: msgspec.Raw = msgspec.field(default=_NO_RAW, name="Input type")
    strides: msgspec.Raw = msgspec.field(default=_NO_RAW, name="Input Strides")
    concrete: msgspec.Raw = msgspec.field(default=_NO_RAW, name="Concrete Inputs")


class _Event(msgspec.Struct):
    """The fields of a trace event read."""
    ph: Any = _UNSET
    cat: Any = _UNSET
    name: Any = _UNSET
    ts: Any = _UNSET
    dur: Any = _UNSET
    tid: Any = _UNSET
    args: _Args | None | msgspec.UnsetType = _UNSET


_NO_ARGS = _Args()
_PIECE = msgspec.json.Decoder(list[list[_Event]])
_NOT_TAKEN = (msgspec.DecodeError, msgspec.ValidationError, RecursionError, UnicodeDecodeError)


def _decoded(text: bytes) -> list[_Event] | None:
    """A piece's events as typed records; None where msgspec does not take it. Its text checked to be UTF-8
    first, as orjson checks all of it (msgspec checks only the strings it keeps)."""
    try:
        if not text.isascii():
            text.decode()
        return _PIECE.decode(text)[0]
    except _NOT_TAKEN:
        return None


class _Names:
    """A text column being filled: a code per event, each distinct text once."""

    __slots__ = ("codes", "code_of")

    def __init__(self):
        self.codes = array("i")
        self.code_of: dict[str, int] = {}

    def add(self, text: str) -> None:
        code = self.code_of.get(text)
        if code is None:
            if not isinstance(text, str):
                raise TypeError("name")
            code = self.code_of[text] = len(self.code_of)
        self.codes.append(code)

    def labels(self, rows=None) -> Labels:
        codes = np.frombuffer(self.codes, dtype=np.int32) if len(self.codes) else np.zeros(0, dtype=np.int32)
        return Labels(codes if rows is None else codes[rows], list(self.code_of))


class _Shapes:
    """An op's inputs text column being filled (:data:`SHAPE_ARGS` as one JSON array): a code per op (-1:
    none recorded), each distinct text once."""

    __slots__ = ("codes", "code_of")

    def __init__(self):
        self.codes = array("i")
        self.code_of: dict[bytes, int] = {}

    def add(self, text: bytes | None) -> None:
        if text is None or len(text) > MAX_SHAPES_BYTES:
            self.codes.append(-1)
            return
        code = self.code_of.get(text)
        if code is None:
            code = self.code_of[text] = len(self.code_of)
        self.codes.append(code)

    def typed(self, a: "_Args") -> None:
        dims = a.dims
        if not len(dims):
            self.codes.append(-1)
            return
        self.add(b"".join((b"[", dims, b",", a.types or b"null", b",", a.strides or b"null", b",", a.concrete or b"null", b"]")))

    def labels(self) -> Labels:
        """Each distinct text once, in one canonical form (orjson's): the typed and the dict reading of an op
        give the same text; a text that is not JSON reads as none."""
        code_of: dict[str, int] = {}
        lookup = np.full(len(self.code_of) + 1, -1, dtype=np.int32)
        for i, text in enumerate(self.code_of):
            try:
                canonical = orjson.dumps(orjson.loads(text)).decode()
            except (orjson.JSONDecodeError, TypeError):
                continue
            lookup[i] = code_of.setdefault(canonical, len(code_of))
        codes = np.frombuffer(self.codes, dtype=np.int32) if len(self.codes) else np.zeros(0, dtype=np.int32)
        return Labels(lookup[codes], list(code_of))


class _Table:
    """One kind of event's columns being filled: times (float us, as written) and named int64 columns."""

    def __init__(self, *ints: str):
        self.ts, self.dur = array("d"), array("d")
        self.name = _Names()
        self.ints = {n: array("q") for n in ints}

    def __len__(self) -> int:
        return len(self.ts)

    def times(self, e: dict) -> None:
        self.ts.append(e["ts"])
        self.dur.append(e["dur"])
        self.name.add(e["name"])

    def typed(self, e: _Event) -> None:
        self.ts.append(e.ts)
        self.dur.append(e.dur)
        self.name.add(e.name)

    def column(self, name: str) -> np.ndarray:
        values = self.ints[name]
        return np.frombuffer(values, dtype=np.int64).copy() if len(values) else np.zeros(0, dtype=np.int64)

    def events(self, rows=None) -> Events:
        """start, end (int64 ns) and name; the int columns are the caller's to add."""
        ts = np.frombuffer(self.ts, dtype=np.float64) if len(self.ts) else np.zeros(0)
        dur = np.frombuffer(self.dur, dtype=np.float64) if len(self.dur) else np.zeros(0)
        if rows is not None:
            ts, dur = ts[rows], dur[rows]
        start = np.rint(ts * 1000.0)
        end = start + np.rint(dur * 1000.0)
        return Events({"start": start.astype(np.int64), "end": end.astype(np.int64), "name": self.name.labels(rows)})


# The integer columns an op's and a frame's args fill (-1 where an arg is absent or null).
_OP_ARGS = (("seq", "Sequence number"), ("fwd_tid", "Fwd thread id"), ("external_id", "External id"))
_FRAME_ARGS = (("python_id", "Python id"), ("parent_id", "Python parent id"))


def _with_args(table, e: dict, columns) -> None:
    """An op or frame event into ``table``: its times, thread and the ``columns`` from its args."""
    a = e.get("args") or {}
    table.times(e)
    c = table.ints
    c["tid"].append(e["tid"])
    for column, key in columns:
        value = a.get(key)
        c[column].append(_NONE if value is None else value)


class _Tables:
    """The columns of every kind of event read, filled in one pass over the events."""

    def __init__(self):
        self.kernels = _Table("device", "stream", "correlation", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ")
        self.copies = _Table("bytes", "device", "stream", "correlation")
        self.memsets = _Table("bytes", "device", "stream", "correlation")
        self.api = _Table("tid", "correlation")
        self.annotations = _Table("tid", "external_id")
        self.ops = _Table("tid", "seq", "fwd_tid", "external_id")
        self.ops.shapes = _Shapes()
        self.frames = _Table("tid", "python_id", "parent_id")
        self.gpu_annotations = 0
        self.first_ts: float | None = None
        self.checked = [0] * len(self.all())  # rows of each table whose times check() has seen

    def add_piece(self, text: bytes, first: int) -> int:
        """A piece of the trace's events (``text``: ``[[`` event, event... ``]]``; ``first``: the index in traceEvents of
        its first) into the columns, their times checked; how many events it held. orjson.JSONDecodeError where the
        text is not JSON; kineto_stream.Fault naming the first event that cannot be read."""
        events = _decoded(text)
        try:
            if events is None:  # JSON the typed decoder does not take: as dicts, the way the whole document is read
                events = orjson.loads(text)[0]
                self.add_all(events)
            else:
                self.add_events(events)
            self.check()
        except _EVENT_FAULTS as exc:
            if isinstance(exc, orjson.JSONDecodeError):
                raise
            bad = _first_bad(orjson.loads(text)[0], first)
            raise kineto_stream.Fault(f"{bad}; the trace is damaged or was not written by torch.profiler: {_FIX}") from None
        return len(events)

    def add_events(self, events: list[_Event]) -> None:
        """:meth:`add_all` of the typed events :data:`_PIECE` decodes: the same columns from the same values (a field
        the trace leaves out is -1 where add_all reads it as -1, UNSET where add_all's ``e[key]`` fails)."""
        kernel, copy, memset, api = self.kernels, self.copies, self.memsets, self.api
        annotation, op, frame = self.annotations, self.ops, self.frames
        for e in events:
            if e.ph != "X":
                continue
            cat = e.cat
            if cat == "cpu_op":
                a = e.args or _NO_ARGS
                op.typed(e)
                c = op.ints
                c["tid"].append(e.tid)
                seq, fwd, ext = a.seq, a.fwd_tid, a.external_id
                c["seq"].append(_NONE if seq is None else seq)
                c["fwd_tid"].append(_NONE if fwd is None else fwd)
                c["external_id"].append(_NONE if ext is None else ext)
                op.shapes.typed(a)
            elif cat == "python_function":
                a = e.args or _NO_ARGS
                frame.typed(e)
                c = frame.ints
                c["tid"].append(e.tid)
                pid, parent = a.python_id, a.parent_id
                c["python_id"].append(_NONE if pid is None else pid)
                c["parent_id"].append(_NONE if parent is None else parent)
            elif cat == "kernel":
                a = e.args or _NO_ARGS
                kernel.typed(e)
                c = kernel.ints
                c["device"].append(a.device)
                c["stream"].append(a.stream)
                c["correlation"].append(a.correlation)
                gx, gy, gz = a.grid or _NO_DIMS
                bx, by, bz = a.block or _NO_DIMS
                c["gridX"].append(gx), c["gridY"].append(gy), c["gridZ"].append(gz)
                c["blockX"].append(bx), c["blockY"].append(by), c["blockZ"].append(bz)
            elif cat in API_CATEGORIES:
                api.typed(e)
                api.ints["tid"].append(e.tid)
                api.ints["correlation"].append((e.args or _NO_ARGS).correlation)
            elif cat == "gpu_memcpy" or cat == "gpu_memset":
                a = e.args or _NO_ARGS
                table = copy if cat == "gpu_memcpy" else memset
                table.typed(e)
                c = table.ints
                c["bytes"].append(a.bytes)
                c["device"].append(a.device)
                c["stream"].append(a.stream)
                c["correlation"].append(a.correlation)
            elif cat == "user_annotation":
                annotation.typed(e)
                annotation.ints["tid"].append(e.tid)
                annotation.ints["external_id"].append((e.args or _NO_ARGS).external_id)
            elif cat == "gpu_user_annotation":
                self.gpu_annotations += 1

    def add_all(self, events: list) -> None:
        kernel, copy, memset, api = self.kernels, self.copies, self.memsets, self.api
        annotation, op, frame = self.annotations, self.ops, self.frames
        for e in events:
            if e.get("ph") != "X":
                continue
            cat = e.get("cat")
            if cat == "cpu_op":
                _with_args(op, e, _OP_ARGS)
                a = e.get("args") or {}
                op.shapes.add(orjson.dumps([a.get(k) for k in SHAPE_ARGS]) if a.get("Input Dims") is not None else None)
            elif cat == "python_function":
                _with_args(frame, e, _FRAME_ARGS)
            elif cat == "kernel":
                a = e.get("args") or {}
                kernel.times(e)
                c = kernel.ints
                c["device"].append(a.get("device", _NONE))
                c["stream"].append(a.get("stream", _NONE))
                c["correlation"].append(a.get("correlation", _NONE))
                gx, gy, gz = a.get("grid") or _NO_DIMS
                bx, by, bz = a.get("block") or _NO_DIMS
                c["gridX"].append(gx), c["gridY"].append(gy), c["gridZ"].append(gz)
                c["blockX"].append(bx), c["blockY"].append(by), c["blockZ"].append(bz)
            elif cat in API_CATEGORIES:
                api.times(e)
                api.ints["tid"].append(e["tid"])
                api.ints["correlation"].append((e.get("args") or {}).get("correlation", _NONE))
            elif cat == "gpu_memcpy" or cat == "gpu_memset":
                a = e.get("args") or {}
                table = copy if cat == "gpu_memcpy" else memset
                table.times(e)
                c = table.ints
                c["bytes"].append(a.get("bytes", _NONE))
                c["device"].append(a.get("device", _NONE))
                c["stream"].append(a.get("stream", _NONE))
                c["correlation"].append(a.get("correlation", _NONE))
            elif cat == "user_annotation":
                annotation.times(e)
                annotation.ints["tid"].append(e["tid"])
                annotation.ints["external_id"].append((e.get("args") or {}).get("External id", _NONE))
            elif cat == "gpu_user_annotation":
                self.gpu_annotations += 1

    def check(self) -> None:
        """The times added since the last check on the clock: no negative duration, nothing past MAX_TIME (ns).
        Raises ValueError."""
        for i, table in enumerate(self.all()):
            done, n = self.checked[i], len(table)
            if n == done:
                continue
            ts = np.frombuffer(table.ts, dtype=np.float64, count=n - done, offset=8 * done)
            dur = np.frombuffer(table.dur, dtype=np.float64, count=n - done, offset=8 * done)
            with np.errstate(invalid="ignore", over="ignore"):
                bad = ~((ts >= 0) & (dur >= 0) & (ts * 1000.0 + dur * 1000.0 < MAX_TIME))
            if bad.any():
                raise ValueError("time off the clock")
            start = float(ts.min())
            self.first_ts = start if self.first_ts is None else min(self.first_ts, start)
            self.checked[i] = n

    def all(self) -> tuple[_Table, ...]:
        return (self.kernels, self.copies, self.memsets, self.api, self.annotations, self.ops, self.frames)


_READ = {"kernel": ("device", "stream", "correlation"), "gpu_memcpy": ("bytes", "device", "stream", "correlation"),
         "gpu_memset": ("bytes", "device", "stream", "correlation"), "cuda_runtime": ("correlation",), "cuda_driver": ("correlation",),
         "cpu_op": ("Sequence number", "Fwd thread id", "External id"), "python_function": ("Python id", "Python parent id"),
         "user_annotation": ("External id",)}
_WITH_TID = ("cuda_runtime", "cuda_driver", "cpu_op", "python_function", "user_annotation")


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _first_bad(events: list, first: int = 0) -> str:
    """What is wrong with the first event the fast pass (:meth:`_Tables.add_all`) could not read, in words
    (``first``: the index in traceEvents of ``events[0]``). Runs only after that pass failed, so a call per
    event costs nothing on a good trace."""
    for at, e in enumerate(events, first):
        if not isinstance(e, dict):
            return f"traceEvents[{at}] is a JSON {type(e).__name__}, not an event object"
        if e.get("ph") != "X" or e.get("cat") not in _READ:
            continue
        fault = _event_fault(e, f"traceEvents[{at}] ({e['cat']})")
        if fault:
            return fault
    return "an event of a malformed shape (a field of another type than Kineto writes)"


def _event_fault(e: dict, where: str) -> str | None:
    """What is wrong with one complete event of a category the reader reads (``where`` names it), or None."""
    cat = e["cat"]
    for key in ("name", "ts", "dur", *(("tid",) if cat in _WITH_TID else ())):
        if key not in e:
            return f"{where} has no {key!r}"
    if not isinstance(e["name"], str):
        return f"{where}: name is {_shown(e['name'])}, not a text"
    for key in ("ts", "dur"):
        value = e[key]
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return f"{where}: {key} is {_shown(value)}, not a number"
        if value < 0 or value * 1000.0 >= MAX_TIME:
            return f"{where}: {key} {_shown(value)} is off the clock (negative, or past 2**62 ns)"
    if e["ts"] * 1000.0 + e["dur"] * 1000.0 >= MAX_TIME:
        return f"{where}: ends past 2**62 ns, off the clock"
    ints = {"tid": e["tid"]} if cat in _WITH_TID else {}
    args = e.get("args", {})
    if args is not None and not isinstance(args, dict):
        return f"{where}: args is {_shown(args)}, not an object"
    ints.update({k: args[k] for k in _READ[cat] if args and args.get(k) is not None})
    for key, value in ints.items():
        if not isinstance(value, int) or isinstance(value, bool) or not -2**63 <= value < 2**63:
            return f"{where}: {key} is {_shown(value)}, not a 64-bit integer"
    if cat == "kernel":
        for key in ("grid", "block"):
            dims = (args or {}).get(key)
            if dims and not (isinstance(dims, list) and len(dims) == 3 and all(isinstance(d, int) and not isinstance(d, bool)
                                                                               and 0 <= d < 2**31 for d in dims)):
                return f"{where}: {key} is {_shown(dims)}, not three integers"
    return None


# -- the timeline model ------------------------------------------------------------------------------

def _known(values: np.ndarray) -> np.ndarray:
    """int64 ids with _NONE where unknown as int64, or float with NaN where any is unknown (as the nsys
    reader gives a NULL)."""
    missing = values == _NONE
    if not missing.any():
        return values
    out = values.astype(np.float64)
    out[missing] = np.nan
    return out


def _sorted(frame: Events) -> Events:
    order = np.lexsort((frame["end"], frame["start"]))
    return frame if (order == np.arange(order.size)).all() else frame.rows(order)


def _kernels(t: _Table) -> Events:
    from ncuwrap.core.kernel_names import telling_name

    frame = t.events()
    demangled = frame["name"]
    frame["demangled"] = frame["mangled"] = demangled  # Kineto writes no mangled name
    frame["name"] = demangled.relabel(telling_name)
    for column in ("device", "stream", "correlation"):
        frame[column] = _known(t.column(column))
    for column in ("gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"):
        frame[column] = t.column(column).astype(np.int32)  # -1: unknown, as the nsys reader says it
    return _sorted(frame)


def _copy_kinds(name: str) -> tuple[str, str | None, float]:
    """``"Memcpy DtoH (Device -> Pinned)"`` -> (``"DTOH"``, ``"pinned"``, 0.0): the direction, the host
    side's memory kind (the destination of a copy to the host, else the source) and whether it is pageable."""
    found = _COPY_NAME.match(name)
    if found is None:
        return "UNKNOWN", None, float("nan")
    direction, src, dst = found.group(1).upper(), found.group(2).lower(), found.group(3).lower()
    host = dst if direction in _TO_HOST else src
    return direction, host, float("pageable" in (src, dst))


def _copies(t: _Table) -> Events:
    frame = t.events()
    names = frame["name"]
    kinds = [_copy_kinds(n) for n in names.categories]
    direction = names.relabel(lambda n: _copy_kinds(n)[0])
    frame["direction"] = direction
    frame["category"] = direction.relabel(lambda d: COPY_CATEGORY_BY_NAME.get(d, "memcpy_other"))
    hosts = list(dict.fromkeys(h for _, h, _ in kinds if h is not None))
    lookup = np.array([hosts.index(h) if h is not None else -1 for _, h, _ in kinds] + [-1], dtype=np.int32)
    frame["host_kind"] = Labels(lookup[names.codes], hosts)
    frame["pageable"] = np.array([p for _, _, p in kinds] + [np.nan])[names.codes]
    frame["bytes"] = t.column("bytes")
    for column in ("device", "stream", "correlation"):
        frame[column] = _known(t.column(column))
    return _sorted(frame.drop(["name"]))


def _memsets(t: _Table) -> Events:
    frame = t.events()
    frame["bytes"] = t.column("bytes")
    for column in ("device", "stream", "correlation"):
        frame[column] = _known(t.column(column))
    return _sorted(frame.drop(["name"]))


def _with_ints(t: _Table, rows=None, **renamed: str) -> Events:
    frame = t.events(rows)
    for name in t.ints:
        values = t.column(name)
        frame[renamed.get(name, name)] = values if rows is None else values[rows]
    return _sorted(frame)


def _device(doc: dict) -> str | None:
    props = doc.get("deviceProperties")
    if not isinstance(props, list):
        return None
    names = sorted({str(p["name"]) for p in props if isinstance(p, dict) and isinstance(p.get("name"), str) and p["name"]})
    return ", ".join(names) or None


def _gpu(doc: dict) -> DeviceFacts | None:
    """deviceProperties' first device: its name, SM count and compute capability (no clock or bandwidth)."""
    props = doc.get("deviceProperties")
    first = props[0] if isinstance(props, list) and props and isinstance(props[0], dict) else None
    if first is None:
        return None

    def small(key):
        value = first.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 20 else None

    name = first.get("name") if isinstance(first.get("name"), str) else None
    major, minor = small("computeMajor"), small("computeMinor")
    return DeviceFacts(name=name, cc=f"{major}.{minor}" if major and minor is not None else None, sm_count=small("numSms") or None,
                       recorded_by="the trace's deviceProperties")


def _data(path: Path, doc: dict, tables: _Tables, ranks: bool) -> TimelineData:
    gpu = len(tables.kernels) + len(tables.copies) + len(tables.memsets)
    if not gpu:
        raise InputError(f"{path}: no GPU event (kernel, memcpy, memset): the trace was recorded without CUDA activity; profile with "
                         "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])")
    if not len(tables.kernels):
        raise InputError(f"{path}: {gpu:,} GPU copies and memsets but no kernel: nothing to diagnose; profile a part of the "
                         "program that launches kernels")
    notes: list[str] = []
    unknown: dict[str, str] = {}
    api = None
    if len(tables.api):
        api = _with_ints(tables.api)
        api["name"] = api["name"].relabel(api_name)
        api["correlation"] = _known(api["correlation"])
    else:
        notes.append("no CUDA runtime or driver call in the trace: launch and sync times are unknown")
        unknown["api"] = "no cuda_runtime or cuda_driver events in the trace (CUDA activity recorded without its API calls)"
    steps = STEP_NAME.fullmatch
    is_step = tables.annotations.name.labels().test(lambda n: steps(n) is not None)
    nvtx = tables.annotations.events(is_step)
    if nvtx.empty:
        notes.append("no ProfilerStep#N range: the trace was recorded without a schedule and prof.step() each iteration, so "
                     "its steps are not marked")
    ops = None
    if len(tables.ops) or (~is_step).any():
        ops = Events.concat([_ops(tables.ops), _annotation_ops(tables.annotations, ~is_step)])
        ops = _sorted(ops)
    else:
        notes.append("no CPU op in the trace (recorded without ProfilerActivity.CPU): kernels cannot be attributed to ops")
    frames = _with_ints(tables.frames) if len(tables.frames) else None
    if frames is None or not doc.get("with_stack", True):
        notes.append("no Python stacks: the trace was recorded without with_stack=True, so kernels cannot be attributed to "
                     "lines of Python")
    base = doc.get("baseTimeNanoseconds")
    run = None
    if ranks:
        first = tables.first_ts
        start = (base + int(round(first * 1000))) if isinstance(base, int) and not isinstance(base, bool) and first is not None else None
        run = RunInfo(hostname=None, command=None, start_utc_ns=start)
    schema = doc.get("schemaVersion")
    return TimelineData(
        path=path, kernels=_kernels(tables.kernels), copies=_copies(tables.copies), memsets=_memsets(tables.memsets), api=api,
        export_schema=str(schema) if isinstance(schema, (int, str)) and not isinstance(schema, bool) else None,
        device=_device(doc), notes=notes, unknown=unknown, nvtx=nvtx, run=run, producer=PRODUCER, ops=ops, frames=frames, gpu=_gpu(doc))


def _ops(t: _Table) -> Events:
    frame = t.events()
    for name in t.ints:
        frame[name] = t.column(name)
    frame["user"] = np.zeros(len(frame), dtype=bool)
    frame["shapes"] = t.shapes.labels()
    return _sorted(frame)


def _annotation_ops(t: _Table, rows: np.ndarray) -> Events:
    """The user's record_function ranges as ops (flagged ``user``): they enclose kernels as ops do, but
    have no sequence number or forward thread."""
    frame = _with_ints(t, rows)
    n = len(frame)
    frame["seq"] = frame["fwd_tid"] = np.full(n, _NONE, dtype=np.int64)
    frame["user"] = np.ones(n, dtype=bool)
    frame["shapes"] = Labels(np.full(n, -1, dtype=np.int32), [])
    return Events({c: frame[c] for c in ("start", "end", "name", "tid", "seq", "fwd_tid", "external_id", "user", "shapes")}, n=n)
