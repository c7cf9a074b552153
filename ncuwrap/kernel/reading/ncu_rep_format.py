"""Read a ``.ncu-rep``'s launches straight from its file format, without NVIDIA's reader.

A report is uncompressed protobuf (proto2), framed: the bytes ``NVR\\0``, a length-prefixed file header
(its format version), then blocks to the end of the file, each a length-prefixed block header followed by
its payload: the block's sources (the modules' cubins and, with ``--import-source yes``, their source
texts), then its launches (one ProfileResult each; a GraphResult for a CUDA graph profiled whole). Every
length is a little-endian u32. Metric names are ids into a string table that the blocks' headers add to in
turn.

The schema below names only the fields ncuwrap reads (the field numbers and wire types are those of Nsight
Compute's ``extras/FileFormat`` description; the rest of a message is skipped by the parser). upb, the
``protobuf`` package's C parser, parses each message: a report of a hundred MB or more is too large for a
parser in Python code.

What this reader gives is checked against ``ncu_report`` on every report in tests/data
(tests/test_ingest_rep_file.py). A launch it does not expect (a message that does not parse, a value of no
known kind, a rule message type not seen before, no name or no metrics, its module's SourceData laid out
otherwise) comes as an :class:`Unread` with the reason: the caller reads that launch with ``ncu_report``
(which also says what is wrong with a damaged one). What is not a launch's alone (another format version, a
block that runs past the file, range or command list results, a graph viewer's data) raises
:class:`FormatError`: the caller then reads the whole report with ``ncu_report``. Lengths are checked against
the file's size before anything is read, and one message is held at a time, so a corrupt length costs neither
time nor memory. A kernel with C linkage (Triton's, Inductor's, ``extern "C"``, CuPy's RawKernel) has an empty
demangled name in the file: it is named by its mangled name, as ``ncu_report`` names it. A CUDA graph profiled
as one workload (``--graph-profiling graph``) is a result of its own kind (GraphResult): read as a launch named
"graph", as ``ncu_report`` names it. An application replay's launch comes before its module's SourceData: it is
given once that is read (:func:`launches`).

A launch also says where its module's code lies (:class:`cubin.Code`: the cubin's place in the file and
each function's load address), from which the instructions' lines and SASS are read (:mod:`line_table`,
:mod:`disassembly`). Where those cannot answer, NVIDIA's reader does: it grows with each launch whose
metrics it holds, and needs none of them for that, so :func:`write_attribution_copy` writes a copy of the
report with only the launches asked for, their metrics, sections and rule results left out, for it to load
instead (what that saves: docs/scale.md, figures behind the code).
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from ncuwrap.kernel.reading import cubin

MAGIC = b"NVR\x00"
# The format versions whose reading was compared with ncu_report (ncu 2025.3 and 2026.3 write 7).
VERSIONS = frozenset({7})
_U32 = struct.Struct("<I")


class FormatError(Exception):
    """The file, or one launch of it, is not laid out as this reader expects (the caller falls back to NVIDIA's
    reader for the whole file, or for that launch: :class:`Unread`)."""


@dataclass(frozen=True)
class Unread:
    """A launch of the report this reader did not read (its index, in :func:`read`'s order, and why): NVIDIA's
    reader is to read it."""

    index: int
    why: str


# message -> (field number, name, type); "*type" is repeated, a capitalised type another message.
_SCHEMA = {
    "Value": [(1, "text", "string"), (2, "f32", "float"), (3, "f64", "double"), (4, "u32", "uint32"), (5, "u64", "uint64")],
    "Instance": [(1, "correlation", "Value"), (2, "value", "Value")],
    "Metric": [(1, "name_id", "uint32"), (2, "value", "Value"), (3, "instances", "*Instance")],
    "SourceFile": [(1, "name", "string"), (2, "content", "bytes")],
    "SourceFiles": [(1, "files", "*SourceFile")],
    "Symbol": [(1, "name", "string"), (2, "address", "uint64")],
    "Relocations": [(1, "functions", "*Symbol")],
    "SourceRef": [(1, "reference", "uint64"), (4, "binary", "bytes"), (6, "sm", "uint32"), (8, "files", "bytes"),
                  (9, "relocations", "Relocations")],
    "RuleMessage": [(1, "text", "string"), (2, "type", "uint32"), (4, "title", "string")],
    "Speedup": [(1, "type", "uint32"), (2, "speedup", "double")],
    "RuleEntry": [(1, "message", "RuleMessage"), (10, "speedup", "Speedup")],
    "RuleBody": [(1, "entries", "*RuleEntry")],
    "Rule": [(1, "rule", "string"), (3, "body", "RuleBody"), (4, "section", "string")],
    # A launch's metrics are kept as bytes: the rules read ~150 of ~2,000 and ~35 have per-instruction
    # values, which are decoded by whole arrays (:func:`_per_pc`), not a message object per instruction.
    "Head": [(1, "name_id", "uint32"), (2, "value", "Value")],
    "Launch": [(5, "mangled", "string"), (6, "function", "string"), (7, "demangled", "string"),
               (15, "source", "SourceRef"), (19, "rules", "*Rule")],
    # A CUDA graph profiled as one workload (--graph-profiling graph; GraphResult): no names, its modules by reference.
    "Graph": [(17, "references", "*uint64"), (22, "rules", "*Rule")],
    "Strings": [(1, "strings", "*string")],
    "Process": [(1, "pid", "uint32")],
    "BlockHeader": [(1, "sources", "uint32"), (2, "launches", "uint32"), (4, "strings", "Strings"), (5, "payload", "uint32"),
                    (6, "process", "Process"), (7, "ranges", "uint32"), (8, "cmdlists", "uint32"), (9, "graphs", "uint32"),
                    (10, "graph_data", "uint32")],
    "FileHeader": [(1, "version", "uint32")],
}


@dataclass(frozen=True)
class _Kind:
    """A kind of result a block holds, each a workload of ncu_report's (an action): its message in the schema, the
    block header's field that counts them, its metrics' field, its fields a copy for NVIDIA's reader leaves out
    (metrics, sections, section comments, rule results) and the name ncu_report gives where the result has none."""

    message: str
    count: int
    metrics: int
    stripped: frozenset
    name: str | None = None


# A kernel launch (ProfileResult), and a CUDA graph profiled as one workload (GraphResult): ncu_report names the
# graph "graph", in each name base, as ncu's own output does (the graph report in tests/data/h200_ncuwrap/shapes).
LAUNCH = _Kind("Launch", 2, 13, frozenset({13, 17, 18, 19}))
GRAPH = _Kind("Graph", 9, 4, frozenset({4, 7, 8, 22}), "graph")
STRIPPED = LAUNCH.stripped

# A rule message's type in the file -> ncu_report's MsgType (1 OK, 2 OPTIMIZATION, 3 WARNING), as ncu_report
# gave them for every rule result in tests/data; a type not seen there is not guessed at.
MESSAGE_TYPES = {1: 1, 2: 3, 4: 2}
SPEEDUP_TYPES = frozenset({1, 2})


@lru_cache(maxsize=1)
def _classes() -> dict:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fdp = descriptor_pb2.FieldDescriptorProto
    scalars = {"string": fdp.TYPE_STRING, "bytes": fdp.TYPE_BYTES, "float": fdp.TYPE_FLOAT, "double": fdp.TYPE_DOUBLE,
               "uint32": fdp.TYPE_UINT32, "uint64": fdp.TYPE_UINT64}
    package = "ncuwrap.ncu_rep_format"
    proto = descriptor_pb2.FileDescriptorProto(name="ncuwrap/ncu_rep_format.proto", package=package, syntax="proto2")
    for name, fields in _SCHEMA.items():
        message = proto.message_type.add(name=name)
        for number, field_name, kind in fields:
            repeated = kind.startswith("*")
            kind = kind.lstrip("*")
            added = message.field.add(name=field_name, number=number, label=fdp.LABEL_REPEATED if repeated else fdp.LABEL_OPTIONAL)
            if kind in scalars:
                added.type = scalars[kind]
            else:
                added.type, added.type_name = fdp.TYPE_MESSAGE, f".{package}.{kind}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{name}")) for name in _SCHEMA}


@dataclass
class Launch:
    """One profiled launch as the file holds it: names, metric values (the ones asked for), Nsight Compute's
    rule results (rule, section, message type as ncu_report gives it, title, text, speedup type, speedup),
    the per-instruction metrics asked for (name -> :class:`PerPc`) and the source files' texts."""

    index: int
    mangled: str
    function: str
    demangled: str
    names: frozenset
    metrics: dict
    rules: tuple
    instances: dict = field(default_factory=dict)
    codes: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)
    # Whether its module's cubin has a line table (False: ncu_report knows no PC's line; None: not known).
    lines: bool | None = None
    # Where its module's instructions lie (the SASS of a PC is disassembled from there); None: not known.
    code: cubin.Code | None = None


def prepare() -> None:
    """Build the message classes now: a process that then forks parsers (ncu_rep_reader's) shares them with each."""
    _classes()


def read(path: Path, wanted: frozenset | None = None, instanced: frozenset = frozenset(), codes: frozenset = frozenset(),
         files_of=None, only: range | None = None) -> list[Launch | Unread]:
    """Every launch of the report at ``path``, in ncu_report's order: a :class:`Launch`, or an :class:`Unread`
    where this launch is not laid out as expected. ``wanted``: the metrics whose values are read (None: all);
    ``instanced``: the per-instruction metrics read as floats (ncu_report's as_double), ``codes`` those read as
    integers; ``files_of(launch)``: whether a launch's source texts are read; ``only``: the indices of the
    launches parsed (the others are skipped unread; None: all). Raises FormatError where the file is not."""
    return list(launches(path, wanted, instanced, codes, files_of, only))


def launches(path: Path, wanted: frozenset | None = None, instanced: frozenset = frozenset(), codes: frozenset = frozenset(),
             files_of=None, only: range | None = None) -> Iterator[Launch | Unread]:
    """:func:`read`'s launches one at a time, as they are parsed (a FormatError may come after some). With
    ``--replay-mode application`` ncu writes a launch before its module's SourceData, which ncu_report reads for it
    all the same (its lines and source texts): such a launch, and the ones after it, come at the end of the file,
    with every SourceData of its module then known (one that places its functions twice, differently, leaves where
    they lie unknown: NVIDIA's reader then gives their SASS). Where a module's functions lie is each process's own
    (the block's process): two processes load one module at different addresses."""
    classes = _classes()
    size = path.stat().st_size
    count = 0
    with path.open("rb") as fh:
        modules = _Modules(fh, classes)
        queue: deque = deque()  # the launches read and not yet given, in order: the first waits for the end
        for block, end in _blocks(fh, size, classes):
            modules.strings.extend(block.strings.strings)
            modules.process = block.process.pid if block.HasField("process") else None
            for _ in range(block.sources):
                modules.note_source(end)
            kind = GRAPH if block.graphs else LAUNCH
            for _ in range(block.graphs or block.launches):
                if only is not None and count not in only:  # another process's: its length is checked, its bytes not read
                    _skip(fh, end, "launch")
                    count += 1
                    continue
                data = _raw(fh, end, "launch")  # a length past its block: the file's fault, not this launch's
                count += 1
                queue.append(modules.launch(count - 1, data, kind, wanted, instanced, codes))
            yield from modules.ready(queue, files_of)
        yield from modules.ready(queue, files_of, last=True)


class _Modules:
    """What :func:`launches` keeps of a report's modules while it reads the launches of the open file ``fh``: the
    string table so far, each module's SourceData (parsed when a launch read here first needs it: its cubin can
    be tens of MB, and the launches of another process, or none, may be its only ones), the line tables, where
    each module's functions lie and its source texts."""

    def __init__(self, fh, classes: dict):
        self.fh, self.classes = fh, classes
        self.strings: list[str] = []
        self.sources: dict[int, tuple[int, int, bytes]] = {}  # reference -> where its SourceData with files lies
        self.line_tables: dict[int, bool | None] = {}  # reference -> whether its cubin has a line table
        self.placed: dict[tuple, cubin.Code | None] = {}  # (process, reference) -> where its functions lie in that process
        self.texts: dict = {}  # a module's SourceFiles bytes -> its source texts, read once for all its launches
        # reference -> (offset, length, process) of each SourceData not yet parsed
        self.waiting: dict[int, list[tuple[int, int, int | None]]] = {}
        self.broken: dict[int, str] = {}  # reference -> why its SourceData was not read: each of its launches is Unread
        self.seen: set[int] = set()  # the modules whose SourceData the file has held so far
        self.process: int | None = None  # the process of the block being read (its header's ProcessInfo)

    def note_source(self, end: int) -> None:
        """The next SourceData of the block that ends at ``end``: kept for later by its module's reference, or parsed
        now where it does not open with one (a FormatError there is the file's: no launch is known to need it)."""
        fh = self.fh
        at = fh.tell()
        length = _length(fh, end, "source")
        reference = _first_number(fh.read(min(length, 11)))
        if reference is None:  # laid out otherwise: parsed now
            fh.seek(at + _U32.size)
            self._take(at, fh.read(length), process=self.process)
        else:
            self.waiting.setdefault(reference, []).append((at, length, self.process))
            self.seen.add(reference)
            fh.seek(at + _U32.size + length)

    def _take(self, at: int, data: bytes, reference: int | None = None, process: int | None = None) -> None:
        source = _parsed(data, self.classes["SourceRef"], "source")
        if reference is not None and source.reference != reference:
            raise FormatError("a module's SourceData names two modules")
        self.seen.add(source.reference)
        _add_source(self.sources, source, at, at + _U32.size + len(data))
        found = None  # the cubin's sections, read once a module
        if source.binary and source.reference not in self.line_tables:
            found = cubin.sections(source.binary)
            self.line_tables[source.reference] = None if found is None else cubin.has_line_table(source.binary, found)
        _add_code(self.placed, source, data, at + _U32.size, found, process)

    def _module(self, reference: int) -> None:
        """The module's SourceData parsed, where this is its first launch read here; FormatError where they do not parse
        as expected (then every launch of it)."""
        if reference in self.broken:
            self.waiting.pop(reference, None)  # a later SourceData of it: not read either
        elif reference in self.waiting:
            fh = self.fh
            here = fh.tell()
            try:
                for at, length, process in self.waiting.pop(reference):
                    fh.seek(at + _U32.size)
                    self._take(at, fh.read(length), reference, process)
            except FormatError as exc:
                self.broken[reference] = f"its module's SourceData: {exc}"
            finally:
                fh.seek(here)
        if reference in self.broken:
            raise FormatError(self.broken[reference])

    def launch(self, index: int, data: bytes, kind: _Kind, wanted, instanced: frozenset, codes: frozenset) -> tuple | Unread:
        """The launch of these bytes (:func:`launches`' arguments), its module's reference, its process and whether the
        module's SourceData came before it, its module's facts not yet taken (:meth:`ready`); an Unread where it is
        not laid out as expected."""
        try:
            raw = _parsed(data, self.classes[kind.message], "launch")
            if kind is GRAPH:
                if len(raw.references) != 1:  # its instructions' module: ncu_report's answer for other graphs not compared
                    raise FormatError(f"a graph result of {len(raw.references)} modules")
                reference = raw.references[0]
            else:
                reference = raw.source.reference
            return _launch(index, raw, data, kind, self.strings, wanted, instanced, codes), reference, self.process, reference in self.seen
        except Exception as exc:  # whatever these bytes made the parse meet: this launch alone is NVIDIA's reader's
            return _unread(index, exc)

    def ready(self, queue: deque, files_of, last: bool = False) -> Iterator[Launch | Unread]:
        """The launches at the front of ``queue`` up to the first that came before its module's SourceData (all of
        them where ``last``: the end of the file), each with its module's line table, code and source texts
        (``files_of(launch)``: whether they are read); an Unread where its module's SourceData or texts are not laid
        out as expected."""
        while queue:
            if isinstance(queue[0], Unread):
                yield queue.popleft()
                continue
            launch, reference, process, known = queue[0]
            if not (known or last):
                return
            queue.popleft()
            try:
                self._module(reference)
                launch.lines = self.line_tables.get(reference)
                launch.code = self.placed.get((process, reference))
                if files_of is not None and files_of(launch):
                    launch.files = _files(self.sources.get(reference), self.classes["SourceFiles"], self.texts)
            except Exception as exc:
                yield _unread(launch.index, exc)
                continue
            yield launch


def _unread(index: int, exc: Exception) -> Unread:
    return Unread(index, str(exc) if isinstance(exc, FormatError) else f"{type(exc).__name__}: {exc}")


def _first_number(head: bytes) -> int | None:
    """A message's field 1 where it opens with it as a varint (a SourceData's module reference), else None."""
    if not head or head[0] != 0x08:
        return None
    try:
        return _varint(head, 1)[0]
    except FormatError:  # longer than the bytes read
        return None


def launch_sizes(path: Path) -> list[int]:
    """The size in bytes of each launch of the report at ``path``, in its order (read past, not parsed): where to
    cut the launches into parts of about equal work."""
    classes = _classes()
    size = path.stat().st_size
    out = []
    with path.open("rb") as fh:
        for block, end in _blocks(fh, size, classes):
            for _ in range(block.sources):
                _skip(fh, end, "source")
            for _ in range(block.graphs or block.launches):
                length = _length(fh, end, "launch")
                fh.seek(length, 1)
                out.append(length)
    return out


def _blocks(fh, size: int, classes: dict) -> Iterator:
    """(header, end) of each block of the open report ``fh`` (``size`` bytes), the file's own header checked first;
    the caller reads the block's payload, which must end at ``end``."""
    if fh.read(len(MAGIC)) != MAGIC:
        raise FormatError("no report header")
    header = _message(fh, size, classes["FileHeader"], "file header")
    if header.version not in VERSIONS:
        raise FormatError(f"format version {header.version}")
    while fh.tell() < size:
        block = _message(fh, size, classes["BlockHeader"], "block header")
        _check_results(block.launches, block.ranges, block.cmdlists, block.graphs, block.graph_data)
        end = fh.tell() + block.payload
        if end > size:
            raise FormatError("a block runs past the end of the file")
        yield block, end
        if fh.tell() != end:
            raise FormatError("a block's payload is not its sources and launches")


def _check_results(launches: int, ranges: int, cmdlists: int, graphs: int, graph_data: int) -> None:
    """Raise FormatError for a block of results the reader does not read (range and command list results, a graph
    viewer's data), or of two kinds (their order in the block not seen)."""
    if ranges or cmdlists or graph_data:
        raise FormatError("range or command list results, or graph viewer data")
    if launches and graphs:
        raise FormatError("launches and graph results in one block")


def _add_code(codes: dict, source, data: bytes, at: int, found: dict | None, process: int | None = None) -> None:
    """Where a module's functions lie in ``process`` (:class:`cubin.Code`), from the SourceData that carries its cubin
    (the message's bytes ``data`` start at ``at`` in the file) and the later ones of the module in that process: with
    CUDA's lazy loading a function gets its address when it is first launched, and the later SourceData adds it.
    Another process loads the module at addresses of its own, with a SourceData of its own (the cubin again). One that
    places a function elsewhere in the same process (the module loaded again) leaves the module unknown there: no PC
    is then guessed into either."""
    functions = {f.name: f.address for f in source.relocations.functions if f.name and f.HasField("address")}
    key = (process, source.reference)
    if source.binary and key not in codes:
        binary_at = next((at + value[0] for number, kind, value, _ in _fields(data) if number == 4 and kind == 2), None)
        codes[key] = None if binary_at is None else cubin.code(source.binary, binary_at, source.sm, functions, found)
    elif codes.get(key) is not None and functions:
        codes[key] = codes[key].placed(functions)


def instruction_bytes(path: Path, where: list[tuple[int, int]]) -> list[bytes]:
    """The bytes at each (offset, size) of the report at ``path`` (:meth:`cubin.Code.where`)."""
    out = []
    with path.open("rb") as fh:
        for offset, size in where:
            fh.seek(offset)
            out.append(fh.read(size))
    return out


def _add_source(sources: dict, source, start: int, end: int) -> None:
    """A module's SourceData comes again, without its cubin and files, where a later launch of it was
    profiled (the bundled sample: one module, 6 launches, 2 SourceData): its files are the first one's, as
    ncu_report gives them. Two different sets of files for one module are not guessed between."""
    if not source.HasField("files"):
        return
    known = sources.get(source.reference)
    if known is not None and known[2] != source.files:
        raise FormatError("two different source file sets for one module")
    if known is None:
        sources[source.reference] = (start, end, source.files)


def _message(fh, limit: int, cls, what: str):
    """The next length-prefixed message (:func:`_raw`), parsed as ``cls``."""
    return _parsed(_raw(fh, limit, what), cls, what)


def _parsed(data: bytes, cls, what: str):
    try:
        return cls.FromString(data)
    except Exception as exc:  # upb's DecodeError, or a string that is not UTF-8
        raise FormatError(f"a {what} does not parse ({exc})") from None


def _value(value):
    """A metric value as ncu_report's reader returns it: the string, or the number as a float (as_double)."""
    fields = value.ListFields()
    if len(fields) != 1:
        raise FormatError("a metric value of no kind or of two")
    descriptor, number = fields[0]
    return number if descriptor.number == 1 else float(number)


def _number(value) -> int | float:
    fields = value.ListFields()
    if len(fields) != 1 or fields[0][0].number == 1:
        raise FormatError("a per-instruction value that is not one number")
    return fields[0][1]


def _launch(index: int, raw, data: bytes, kind: _Kind, strings: list[str], wanted, instanced: frozenset, codes: frozenset) -> Launch:
    """One launch (a result of ``kind``) from its parsed fields (``raw``: all but its metrics) and its bytes (``data``:
    the metrics are read from them by :func:`_metrics`)."""
    if kind.name is not None:  # a graph: no names in the file
        mangled = demangled = function = kind.name
    else:
        # A kernel with C linkage has an empty demangled name (and its function name may be empty too): ncu_report
        # then names it by its mangled name, which is the function's name as the cubin has it.
        mangled, demangled, function = raw.mangled, raw.demangled or raw.mangled, raw.function or raw.mangled
    if not demangled:
        raise FormatError("a launch without a name")
    spans = _metrics(data, kind.metrics)
    if not len(spans[0]):
        raise FormatError("a launch without metrics")
    starts, name_ids, head_ends, ends = spans
    if len(name_ids) and int(name_ids.max()) >= len(strings):
        raise FormatError("a metric name id past the string table")
    names = [strings[i] for i in name_ids.tolist()]
    values, per_pc, per_pc_codes = {}, {}, {}
    head = _classes()["Head"]
    starts, head_ends, ends = starts.tolist(), head_ends.tolist(), ends.tolist()
    per_instruction = [k for k, name in enumerate(names) if name in instanced or name in codes]
    decoded = _per_pc_together(data, [(head_ends[k], ends[k]) for k in per_instruction])
    read = range(len(names)) if wanted is None else sorted({k for k, name in enumerate(names) if name in wanted}.union(per_instruction))
    for k in read:  # the ~150 metrics the rules read and the ~35 per instruction, of ~2,000
        name = names[k]
        if wanted is None or name in wanted:
            parsed = _parsed(data[starts[k]:head_ends[k]], head, "metric")
            if parsed.HasField("value"):
                values[name] = _value(parsed.value)
        if name in instanced or name in codes:
            found = decoded.get(head_ends[k]) if decoded else None
            pcs, numbers = found if found is not None else _per_pc(data[starts[k]:ends[k]], head_ends[k] - starts[k])
            if name in instanced:
                per_pc[name] = PerPc(pcs, numbers.astype(np.float64))
            else:
                per_pc_codes[name] = PerPc(pcs, numbers.astype(np.int64))
    return Launch(index=index, mangled=mangled, function=function, demangled=demangled, names=frozenset(names),
                  metrics={name: values[name] for name in sorted(values)}, rules=_rules(raw.rules), instances=per_pc,
                  codes=per_pc_codes)


def _metrics(data: bytes, number: int = LAUNCH.metrics) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where each metric (field ``number``: 13 of a launch, 4 of a graph) of a launch's bytes lies: its first byte, its
    name id, the end of its head (name id and value: :func:`_head`) and its end. A launch has ~2,000: they are found
    by whole arrays (the run of the field's records, each a one- to three-byte length), one at a time where a record
    is laid out otherwise (:func:`_heads`). Raises FormatError where a metric comes outside the run."""
    first = next((at for field_number, _, _, (at, _) in _fields(data) if field_number == number), None)
    if first is None:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    a = np.frombuffer(data, np.uint8)
    size = len(a)
    tag = number << 3 | 2  # length-delimited: one metric
    found = _metric_run(a, first, tag)
    if found is None:
        return _heads(data, first, number)
    starts, ends = found
    run_end = int(ends[-1])
    if any(field_number == number for field_number, _, _, _ in _fields(data[run_end:])):
        raise FormatError("a launch's metrics are not written together")
    # The name id: 0x08 and a one- to three-byte varint; the value, where there is one: 0x12 and a one- or two-byte
    # length (a text value can be longer than 127 bytes).
    if (a[starts] != 0x08).any():
        raise FormatError("a metric that does not start with its name")
    k = np.arange(3)
    name_bytes = a[np.minimum(starts[:, None] + 1 + k, size - 1)]
    continued = name_bytes >= 0x80
    if continued[:, 2].any():
        return _heads(data, first, number)
    name_length = 1 + continued[:, 0] + (continued[:, 0] & continued[:, 1])
    name_ids = _varint_array(a, starts + 1, name_length.astype(np.int64))
    if name_ids is None:
        return _heads(data, first, number)
    after = starts + 1 + name_length
    has_value = (after < ends) & (a[np.minimum(after, size - 1)] == 0x12)
    low, high = (a[np.minimum(after + i, size - 1)].astype(np.int64) for i in (1, 2))
    long_value = low >= 0x80
    if (has_value & long_value & (high >= 0x80)).any():
        return _heads(data, first, number)
    value_length = np.where(long_value, (low & 0x7F) | (high << 7), low)
    head_ends = np.where(has_value, after + 2 + long_value + value_length, after)
    if (head_ends > ends).any():
        raise FormatError("a metric value runs past its metric")
    return starts, name_ids.astype(np.int64), head_ends, ends


def _metric_run(a: np.ndarray, first: int, tag: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(start, end) of each metric's payload in the run of records (``tag``: the metrics' field and wire type) from
    ``first``; None where a record's length is not one to three bytes or the records do not chain."""
    size = len(a)
    candidates = first + np.flatnonzero(a[first:size - 1] == tag)
    k = np.arange(3)
    length_bytes = a[np.minimum(candidates[:, None] + 1 + k, size - 1)].astype(np.int64)
    continued = length_bytes >= 0x80
    length_size = 1 + continued[:, 0] + (continued[:, 0] & continued[:, 1])
    lengths = (length_bytes[:, 0] & 0x7F) | np.where(continued[:, 0], (length_bytes[:, 1] & 0x7F) << 7, 0) \
        | np.where(continued[:, 0] & continued[:, 1], length_bytes[:, 2] << 14, 0)
    usable = ~(continued[:, 0] & continued[:, 1] & continued[:, 2])
    candidates, length_size, lengths = candidates[usable], length_size[usable], lengths[usable]
    if not len(candidates) or candidates[0] != first:
        return None
    payload = candidates + 1 + length_size
    nexts = payload + lengths
    broken = np.flatnonzero(nexts[:-1] != candidates[1:])
    last = int(broken[0]) if len(broken) else len(candidates) - 1
    end = int(nexts[last])
    if end < size and a[end] == tag:  # a byte inside a metric looked like a record: follow the chain
        chosen = _chain(candidates, nexts, a, tag)
        if chosen is None:
            return None
        end = int(nexts[chosen[-1]])
    else:
        chosen = np.arange(last + 1)
    if end > size:
        return None
    return payload[chosen], nexts[chosen]


def _chain(candidates: np.ndarray, nexts: np.ndarray, a: np.ndarray, tag: int) -> np.ndarray | None:
    """The candidates that are records: the chain from the first, each record's end the next one's start, to the
    first end where no record starts (no ``tag`` there, or the end of ``a``); None where an end that starts a
    record is no candidate. Found by doubling (the nodes 1, 2, 4, ... steps on, ~11 passes for 2,000 records),
    not one record at a time."""
    count = len(candidates)
    successor = np.searchsorted(candidates, nexts)
    linked = (successor < count) & (candidates[np.minimum(successor, count - 1)] == nexts)
    step = np.append(np.where(linked, successor, count), count)  # count: past the chain's end
    reached = np.zeros(count + 1, bool)
    reached[0] = True
    while (step[:-1] < count).any():
        reached[step[reached]] = True
        step = step[step]
    reached[step[reached]] = True
    chosen = np.flatnonzero(reached[:-1])
    end = int(nexts[chosen[-1]])
    return None if end < len(a) and a[end] == tag else chosen


def _heads(data: bytes, first: int, metrics: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_metrics` one field at a time (``metrics``: the metrics' field number), each metric's head read by :func:`_head`."""
    starts, name_ids, head_ends, ends = [], [], [], []
    for number, kind, value, _ in _fields(data):
        if number == metrics and kind == 2:
            begin, stop = value
            name_id, head_end = _head(data[begin:stop])
            starts.append(begin)
            name_ids.append(name_id)
            head_ends.append(begin + head_end)
            ends.append(stop)
    return tuple(np.array(x, np.int64) for x in (starts, name_ids, head_ends, ends))


@dataclass(frozen=True)
class PerPc:
    """One per-instruction metric of a launch: the PC (correlation id) and value of each instance, in the
    file's order (a PC given twice: the later one counts, as in a dict)."""

    pcs: np.ndarray  # uint64
    values: np.ndarray  # float64 (INSTANCED: ncu_report's as_double) or int64 (CODED)

    def to_dict(self) -> dict:
        return dict(zip(self.pcs.tolist(), self.values.tolist()))


def _head(data: bytes) -> tuple[int, int]:
    """A metric's name id (field 1, first) and where its head (name id and value) ends: its per-instruction
    instances (field 3) follow. The bytes are in field order, as Nsight Compute writes them."""
    if len(data) < 2 or data[0] != 0x08:
        raise FormatError("a metric that does not start with its name")
    name_id, at = _varint(data, 1)
    if at < len(data) and data[at] == 0x12:  # the value: a length-prefixed Value
        length, after = _varint(data, at + 1)
        at = after + length
        if at > len(data):
            raise FormatError("a metric value runs past its metric")
    return name_id, at


_NO_PER_PC = (np.zeros(0, np.uint64), np.zeros(0, np.float64))


def _per_pc(data: bytes, start: int) -> tuple[np.ndarray, np.ndarray]:
    """(PCs, values) of the instances from ``start`` on in a metric's bytes, one message each: for a metric
    :func:`_per_pc_together` could not read by arrays."""
    if start >= len(data):
        return _NO_PER_PC
    full = _parsed(data, _classes()["Metric"], "metric")
    pairs = _instances(full.instances)
    if not pairs:
        return _NO_PER_PC
    pcs, numbers = zip(*pairs)
    return np.array(pcs, np.uint64), np.array(numbers, np.uint64 if all(isinstance(v, int) for v in numbers) else np.float64)


def _per_pc_together(data: bytes, spans: list[tuple[int, int]]) -> dict[int, tuple[np.ndarray, np.ndarray]] | None:
    """(PCs, values) of the instances of each per-instruction metric of a launch at once (a launch has ~35, each a
    run of records from its head's end, then its category: 0x20 and a one-byte number), keyed by where the run
    starts: the runs put end to end must chain record after record, and each metric's values be of one kind.
    None where they do not (then :func:`_per_pc` reads each metric); a metric missing from the answer is read so."""
    if not spans:
        return None
    a = np.frombuffer(data, np.uint8)
    pieces, owners_at = [], []
    for start, end in spans:
        stop = end - 2 if end - start >= 2 and a[end - 2] == 0x20 and a[end - 1] < 0x80 else end
        pieces.append(a[start:stop])
        owners_at.append(start)
    joined = np.concatenate(pieces)
    bounds = np.cumsum([0] + [len(piece) for piece in pieces])
    size = len(joined)
    if size < 4:
        return None
    candidates = np.flatnonzero(joined[:-3] == 0x1A)
    candidates = candidates[(joined[candidates + 2] == 0x0A) & (joined[candidates + 1] < 0x80)]
    if not len(candidates) or candidates[0] != 0:
        return None
    nexts = candidates + 2 + joined[candidates + 1]
    if not np.array_equal(nexts[:-1], candidates[1:]):  # a byte inside a record looked like a start
        chosen = _chain(candidates, nexts, joined, 0x1A)
        if chosen is None:
            return None
        candidates, nexts = candidates[chosen], nexts[chosen]
    if nexts[-1] != size:
        return None
    nonempty = bounds[:-1][bounds[:-1] < bounds[1:]]
    if not np.array_equal(candidates[np.minimum(np.searchsorted(candidates, nonempty), len(candidates) - 1)], nonempty):
        return None  # a metric's run does not begin at a record
    decoded = _decoded(joined, candidates)
    if decoded is None:
        return None
    pcs, tags, value_at, value_length = decoded
    # Every value decoded at once by its kind (varints, doubles, floats), then each metric's rows taken.
    numbers = {}
    for kind in np.unique(tags).tolist():
        rows = np.flatnonzero(tags == kind)
        found = _values(joined, kind, value_at[rows], value_length[rows], pcs[rows])
        if found is not None:
            numbers[kind] = (rows, found[1])
    edges = np.searchsorted(candidates, bounds).tolist()
    changes = np.flatnonzero(tags[1:] != tags[:-1]) + 1
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for i, start in enumerate(owners_at):
        first, stop = edges[i], edges[i + 1]
        if first == stop:
            out[start] = _NO_PER_PC
            continue
        kind = int(tags[first])
        inside = np.searchsorted(changes, first, side="right")
        if (inside < len(changes) and changes[inside] < stop) or kind not in numbers:
            continue  # values of two kinds, or of a kind not read by arrays: read one at a time
        rows, values = numbers[kind]
        at = np.searchsorted(rows, [first, stop]).tolist()
        out[start] = (pcs[first:stop], values[at[0]:at[1]])
    return out


def _decoded(a: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Each record at ``starts``: its PC, its value's tag, where the value's payload lies and its length; None
    where one is not laid out as a correlation id (0x28 varint) then one value."""
    size = len(a)
    lengths = a[starts + 1].astype(np.int64)
    id_length = a[starts + 3].astype(np.int64)
    if (a[starts + 3] >= 0x80).any() or (starts + 5 > size).any() or (a[starts + 4] != 0x28).any():
        return None
    value_at = starts + 4 + id_length
    if (value_at + 3 > size).any() or (a[value_at] != 0x12).any() or (a[value_at + 1] >= 0x80).any():
        return None
    value_length = a[value_at + 1].astype(np.int64)
    if not np.array_equal(value_at + 2 + value_length, starts + 2 + lengths):
        return None
    pcs = _varint_array(a, starts + 5, id_length - 1)
    return None if pcs is None else (pcs, a[value_at + 2], value_at + 3, value_length - 1)


# An instance, field 3 of a metric: 0x1a LEN, its correlation id (0x0a LEN, a Value: 0x28 and a uint64 varint),
# its value (0x12 LEN, a Value: 0x28 uint64 or 0x20 uint32 varint, 0x19 double, 0x15 float). Every length here
# fits one byte.
_VARINT_TAGS = (0x28, 0x20)
_MAX_VARINT = 10


def _values(a: np.ndarray, tag: int, at: np.ndarray, length: np.ndarray, pcs: np.ndarray):
    if tag in _VARINT_TAGS:
        numbers = _varint_array(a, at, length)
        return None if numbers is None else (pcs, numbers)
    width, kind = {0x19: (8, "<f8"), 0x15: (4, "<f4")}.get(int(tag), (0, None))
    if kind is None or (length != width).any():
        return None
    raw = np.empty((len(at), width), np.uint8)
    for k in range(width):  # a byte of every value at a time: no index array of values x width (memory)
        raw[:, k] = a[at + k]
    return pcs, raw.view(kind).ravel().astype(np.float64)


def _varint_array(a: np.ndarray, at: np.ndarray, length: np.ndarray) -> np.ndarray | None:
    """The unsigned varints of ``length`` bytes each at ``at`` (uint64); None where one is not well formed."""
    if len(at) == 0:
        return np.zeros(0, np.uint64)
    widest = int(length.max())
    if int(length.min()) < 1 or widest > _MAX_VARINT or (at + length > len(a)).any():
        return None
    # A byte of every varint at a time: arrays of varints x bytes held far more at once (docs/scale.md, figures behind the code).
    out = np.zeros(len(at), np.uint64)
    last = len(a) - 1
    for k in range(widest):
        inside = k < length
        data = a[np.minimum(at + k, last)]
        # Every byte but the last has its continuation bit, the last has none.
        if not np.array_equal((data >= 0x80) & inside, k < length - 1):
            return None
        out += ((data & 0x7F).astype(np.uint64) * inside) << np.uint64(7 * k)
    return out


def _instances(instances) -> list[tuple[int, int | float]]:
    """(correlation id, value) of each instance, one message each; none where the instances have no correlation
    ids (as ncu_report)."""
    with_ids = [i.HasField("correlation") for i in instances]
    if not any(with_ids):
        return []
    if not all(with_ids):
        raise FormatError("per-instruction values with and without correlation ids")
    return [(int(_number(i.correlation)), _number(i.value)) for i in instances]


def _rules(rules) -> tuple:
    out = []
    for rule in rules:
        for entry in rule.body.entries:
            message = entry.message if entry.HasField("message") else None
            speedup = None
            if entry.HasField("speedup"):
                if entry.speedup.type not in SPEEDUP_TYPES or not entry.speedup.HasField("speedup"):
                    raise FormatError(f"a speedup estimate of type {entry.speedup.type}")
                speedup = (entry.speedup.type, entry.speedup.speedup)
            if message is not None and message.text and message.type not in MESSAGE_TYPES:
                raise FormatError(f"a rule message of type {message.type}")
            out.append((rule.rule, rule.section,
                        None if message is None else (MESSAGE_TYPES.get(message.type, 0), message.title, message.text), speedup))
    return tuple(out)


def _files(where: tuple[int, int, bytes] | None, cls, texts: dict) -> dict[str, str]:
    """The source texts of one module (name -> text), from its SourceData's files (their bytes, kept when it
    was read: :func:`_add_source`); one dict for all the module's launches."""
    if where is None:
        return {}
    found = texts.get(where[2])
    if found is None:
        data = _parsed(where[2], cls, "source files")
        found = texts[where[2]] = {f.name: f.content.decode("utf-8", "replace") for f in data.files}
    return found


# ------------------------------------------------------------------------- a copy for NVIDIA's reader

def write_attribution_copy(path: Path, keep: list[int] | Callable[[int], bool] | None, target: Path, strip: bool = True) -> list[int]:
    """Write to ``target`` the report at ``path`` with only the launches whose indices (in :func:`read`'s
    order) are in ``keep``, each in a block of its own block's other fields, and with ``strip`` without the
    fields NVIDIA's reader does not need to answer a PC's source line and SASS (:attr:`_Kind.stripped`: its
    metrics, sections, section comments and rule results; what is left is its names, configuration and the
    reference to its module, whose source block with the cubin is copied as it is) and without the block's string
    table (where nothing is stripped the launches' metrics name ids into it); the blocks without launches (the
    session, the sources) as they are. The copy's n-th launch is ``keep[n]`` (``keep`` None: every launch; a
    function of the index: the launches it keeps). Returns the indices kept, in the copy's order. Without
    ``strip`` a launch's bytes are copied unread (one the file reader did not expect)."""
    wanted = keep if keep is None or callable(keep) else set(keep).__contains__
    kept: list[int] = []
    size = path.stat().st_size
    index = 0
    with path.open("rb") as fh, target.open("wb") as out:
        out.write(fh.read(len(MAGIC)))
        out.write(_framed(_raw(fh, size, "file header")))
        while fh.tell() < size:
            header = _raw(fh, size, "block header")
            counts = _varints(header)
            _check_results(*(counts.get(number, 0) for number in (2, 7, 8, 9, 10)))
            kind = GRAPH if counts.get(GRAPH.count) else LAUNCH
            end = fh.tell() + counts.get(5, 0)
            if end > size:
                raise FormatError("a block runs past the end of the file")
            sources = [_raw(fh, end, "source") for _ in range(counts.get(1, 0))]
            launches = []
            for _ in range(counts.get(kind.count, 0)):
                launch = _raw(fh, end, "launch")
                if wanted is None or wanted(index):
                    launches.append(_without(launch, kind.stripped) if strip else launch)
                    kept.append(index)
                index += 1
            if fh.tell() != end:
                raise FormatError("a block's payload is not its sources and launches")
            if strip and counts.get(kind.count, 0) and not launches and not sources:
                continue
            body = b"".join(_framed(m) for m in [*sources, *launches])
            header = (_without(header, {kind.count, 4, 5} if strip else {kind.count, 5}) + _varint_field(kind.count, len(launches))
                      + _varint_field(5, len(body)))
            out.write(_framed(header) + body)
    return kept


def write_repeated_copy(path: Path, times: int, target: Path) -> None:
    """Write to ``target`` the report at ``path`` with each block of launches ``times`` times: SYNTHETIC SCALE DATA
    for the yardsticks (benchmarks/ncurep_repeat.py), a real launch read N times where no real report holds N. The
    header, the session and the sources as they are; a repeat without its block's string table (the launches'
    metric ids name the first one's, as in a real report's later blocks)."""
    size = path.stat().st_size
    with path.open("rb") as fh, target.open("wb") as out:
        out.write(fh.read(len(MAGIC)))
        out.write(_framed(_raw(fh, size, "file header")))
        while fh.tell() < size:
            header = _raw(fh, size, "block header")
            counts = _varints(header)
            payload = fh.read(counts.get(5, 0))
            out.write(_framed(header) + payload)
            if counts.get(LAUNCH.count, 0):
                bare = _without(header, {4})
                for _ in range(times - 1):
                    out.write(_framed(bare) + payload)


def _raw(fh, limit: int, what: str) -> bytes:
    """The next length-prefixed message's bytes, its length checked against ``limit`` (the end of what holds it)."""
    return fh.read(_length(fh, limit, what))


def _skip(fh, limit: int, what: str) -> None:
    """Past the next length-prefixed message, unread (its length checked as :func:`_raw` checks it)."""
    fh.seek(_length(fh, limit, what), 1)


def _length(fh, limit: int, what: str) -> int:
    head = fh.read(4)
    if len(head) != 4:
        raise FormatError(f"the file ends inside a {what}'s length")
    (length,) = _U32.unpack(head)
    if fh.tell() + length > limit:
        raise FormatError(f"a {what} runs past the end of what holds it")
    return length


def _framed(message: bytes) -> bytes:
    return _U32.pack(len(message)) + message


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise FormatError("a varint runs past its message")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _varint_field(number: int, value: int) -> bytes:
    return _encode_varint(number << 3) + _encode_varint(value)


def _fields(message: bytes):
    """(field number, wire type, value or (start, end) of its bytes, (start, end) of the whole field) of each field."""
    at = 0
    while at < len(message):
        start = at
        key, at = _varint(message, at)
        kind = key & 7
        if kind == 0:
            value, at = _varint(message, at)
        elif kind == 2:
            length, at = _varint(message, at)
            value, at = (at, at + length), at + length
        elif kind in (1, 5):
            width = 8 if kind == 1 else 4
            value, at = (at, at + width), at + width
        else:
            raise FormatError(f"wire type {kind}")
        if at > len(message):
            raise FormatError("a field runs past its message")
        yield key >> 3, kind, value, (start, at)


def _varints(message: bytes) -> dict[int, int]:
    return {number: value for number, kind, value, _ in _fields(message) if kind == 0}


def _without(message: bytes, numbers) -> bytes:
    """``message`` without its fields of these numbers (the others' bytes as they are)."""
    return b"".join(message[a:b] for number, _, _, (a, b) in _fields(message) if number not in numbers)
