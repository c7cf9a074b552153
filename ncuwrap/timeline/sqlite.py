"""Read an Nsight Systems SQLite export (``nsys export --type sqlite``) with the standard library.

Only what the timeline analysis needs is read: kernels, memory copies, memsets and CUDA API calls,
plus a few facts about the capture (nsys version, GPU). The export's schema changes between nsys
versions, so tables and columns are looked up, never assumed:

- ``CUPTI_ACTIVITY_KIND_KERNEL`` (or, for CUDA graphs traced as a whole, ``_GRAPH_TRACE``) and
  ``StringIds`` are required (nothing to diagnose without them);
- ``CUPTI_ACTIVITY_KIND_MEMCPY`` / ``_MEMSET`` are absent when the program made no copy / memset
  (nsys writes no empty tables): they are read as empty;
- ``CUPTI_ACTIVITY_KIND_RUNTIME`` (CUDA API calls) may be missing when the API was not traced:
  the API quantities are then unknown (the rules that need them are reported as not evaluated);
- copy directions and host memory kinds are decoded with the file's own ``ENUM_CUDA_MEMCPY_OPER``
  and ``ENUM_CUDA_MEM_KIND`` tables where present: nsys numbers memory kinds differently from
  CUPTI (nsys 2025: 0 = pageable, 1 = pinned), so a number is never trusted without its table.

Every error is one line that names the file and what is missing.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ncuwrap import ingest
from ncuwrap.errors import InputError

SQLITE_MAGIC = b"SQLite format 3\x00"

KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY_TABLE = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET_TABLE = "CUPTI_ACTIVITY_KIND_MEMSET"
RUNTIME_TABLE = "CUPTI_ACTIVITY_KIND_RUNTIME"
GRAPH_TABLE = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
STRINGS_TABLE = "StringIds"
NVTX_TABLE = "NVTX_EVENTS"
# NVTX range event types (nsys's ENUM_NSYS_EVENT_TYPE), for exports without that table.
_NVTX_RANGE_TYPES = {59: "NvtxPushPopRange", 60: "NvtxStartEndRange"}

# Copy categories of the breakdown, by CUDA memcpy kind (CUPTI's CUpti_ActivityMemcpyKind, which
# nsys keeps in ENUM_CUDA_MEMCPY_OPER): the direction decides the category; arrays count as device
# memory, peer-to-peer and unified device-to-device copies as device-to-device.
COPY_CATEGORY_BY_NAME = {
    "HTOD": "memcpy_htod", "HTOA": "memcpy_htod", "UVM_HTOD": "memcpy_htod",
    "DTOH": "memcpy_dtoh", "ATOH": "memcpy_dtoh", "UVM_DTOH": "memcpy_dtoh",
    "DTOD": "memcpy_dtod", "ATOA": "memcpy_dtod", "ATOD": "memcpy_dtod", "DTOA": "memcpy_dtod",
    "PTOP": "memcpy_dtod", "UVM_DTOD": "memcpy_dtod",
    "HTOH": "memcpy_other", "UNKNOWN": "memcpy_other",
}
# The same numbering, for exports without the enum table (CUPTI's values, which nsys keeps).
_CUPTI_COPY_KINDS = {0: "UNKNOWN", 1: "HTOD", 2: "DTOH", 3: "HTOA", 4: "ATOH", 5: "ATOA", 6: "ATOD", 7: "DTOA",
                     8: "DTOD", 9: "HTOH", 10: "PTOP", 11: "UVM_HTOD", 12: "UVM_DTOH", 13: "UVM_DTOD"}
COPY_LABELS = {"memcpy_htod": "H2D", "memcpy_dtoh": "D2H", "memcpy_dtod": "D2D", "memcpy_other": "other copies"}

# Every table this module reads: nsys writes each as a table, and a view in its place could run any
# query (a recursive one never ends).
READ_TABLES = (KERNEL_TABLE, MEMCPY_TABLE, MEMSET_TABLE, RUNTIME_TABLE, GRAPH_TABLE, STRINGS_TABLE,
               "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND", "META_DATA_EXPORT", "TARGET_INFO_GPU",
               NVTX_TABLE, "ENUM_NSYS_EVENT_TYPE", "META_DATA_CAPTURE", "TARGET_INFO_SYSTEM_ENV", "TARGET_INFO_SESSION_START_TIME")
# Columns nsys writes as integers (times, ids, sizes, enum values); anything else in them is refused.
INTEGER_COLUMNS = frozenset({"start", "end", "deviceId", "streamId", "correlationId", "graphId", "graphNodeId", "gridX", "gridY", "gridZ",
                             "blockX", "blockY", "blockZ", "shortName", "demangledName", "mangledName", "bytes", "copyKind",
                             "srcKind", "dstKind", "nameId", "globalTid", "id", "eventType", "textId",
                             "utcEpochNs"})
# SQLite virtual-machine steps a read may take: reading the bundled captures takes 0.03 per byte of
# the file, so 100 per byte (plus a floor for small files) stops only a query that should not be there.
STEPS_PER_BYTE = 100
STEPS_FLOOR = 100_000_000
_STEPS_PER_CALL = 10_000


@dataclass
class TimelineData:
    """The raw events of one capture, one DataFrame per kind; times in ns on the capture's clock."""

    path: Path
    kernels: pd.DataFrame  # start, end, name, demangled, device, stream, correlation, grid, block
    copies: pd.DataFrame  # start, end, bytes, category, direction, host_kind, pageable, device, stream, correlation
    memsets: pd.DataFrame  # start, end, bytes, device, stream
    api: pd.DataFrame | None  # start, end, name, tid, correlation (None: the CUDA API was not traced)
    nsys_version: str | None = None
    export_schema: str | None = None
    device: str | None = None
    notes: list[str] = field(default_factory=list)  # what was missing and how it was read
    unknown: dict[str, str] = field(default_factory=dict)  # quantity group -> why it is unknown
    nvtx: pd.DataFrame | None = None  # NVTX ranges: start, end, name (None: no NVTX_EVENTS table); the steps are among them
    # Read only for a multi-rank analysis (``read(path, ranks=True)``):
    run: RunInfo | None = None  # what identifies the run the capture belongs to


@dataclass(frozen=True)
class RunInfo:
    """What the export says about the captured run: a set of rank reports must agree on the program and
    start at about the same time (None: the export does not say)."""

    hostname: str | None
    command: str | None  # the launched program (META_DATA_CAPTURE PROCESS_0:COMMAND)
    start_utc_ns: int | None  # the session's start, ns since the epoch (TARGET_INFO_SESSION_START_TIME)


def check_file(path: Path) -> None:
    """Refuse files that cannot be an SQLite export, with the reason."""
    ingest.check_file(path, folder_fix="give an nsys .sqlite export or .nsys-rep report",
                      empty_fix="export the report again with 'nsys export --type sqlite'")
    with path.open("rb") as fh:
        head = fh.read(len(SQLITE_MAGIC))
    if head != SQLITE_MAGIC:
        raise InputError(f"{path}: not an SQLite database (no 'SQLite format 3' header); "
                         "give the output of 'nsys export --type sqlite' or the .nsys-rep itself")


def read(path: str | Path, *, ranks: bool = False) -> TimelineData:
    """Read the events and NVTX ranges of an nsys SQLite export; raise InputError naming the file on any
    problem. With ``ranks``, also what identifies the run (for ``timeline --ranks``)."""
    path = Path(path)
    check_file(path)
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise InputError(f"{path}: cannot open the SQLite database ({exc}); check the file's permissions") from None
    budget = _Budget(STEPS_FLOOR + STEPS_PER_BYTE * path.stat().st_size)
    connection.set_progress_handler(budget, _STEPS_PER_CALL)
    try:
        return _Reader(path, connection).read(ranks=ranks)
    except (sqlite3.DatabaseError, pd.errors.DatabaseError) as exc:  # pandas wraps the errors of its queries
        if budget.spent:
            raise InputError(f"{path}: reading it took more than {budget.steps:,} SQLite steps, far more than an nsys export "
                             "needs; export the report again with 'nsys export --type sqlite'") from None
        detail = str(exc.__cause__ or exc).splitlines()[0]
        raise InputError(f"{path}: corrupt or truncated SQLite database ({detail}); export the report again "
                         "with 'nsys export --type sqlite --force-overwrite true'") from None
    finally:
        connection.close()


class _Budget:
    """sqlite3 progress handler: stops the running query (it fails with "interrupted") past ``steps``."""

    def __init__(self, steps: int):
        self.steps = steps
        self.left = steps
        self.spent = False

    def __call__(self) -> int:
        self.left -= _STEPS_PER_CALL
        self.spent = self.left < 0
        return int(self.spent)


class _Reader:
    def __init__(self, path: Path, connection: sqlite3.Connection):
        self.path = path
        self.db = connection
        kinds = dict(self.db.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')").fetchall())
        self.tables = set(kinds)
        self.notes: list[str] = []
        self.unknown: dict[str, str] = {}
        self._checked: set[str] = set()
        for name in READ_TABLES:
            if kinds.get(name) == "view":
                raise InputError(f"{path}: {name} is a view, not a table as nsys writes it; export the report again "
                                 "with 'nsys export --type sqlite'")

    # -- schema helpers -------------------------------------------------------------------------

    def columns(self, table: str) -> list[str]:
        columns = [row[1] for row in self.db.execute(f'PRAGMA table_info("{table}")')]
        self.check_integers(table, [c for c in columns if c in INTEGER_COLUMNS])
        return columns

    def check_integers(self, table: str, columns: list[str]) -> None:
        """Refuse text, real or blob values where nsys writes integers (one scan of the table)."""
        if not columns or table in self._checked:
            return
        self._checked.add(table)
        bad = " OR ".join(f'typeof("{c}") NOT IN (\'integer\', \'null\')' for c in columns)
        selected = ", ".join(f'"{c}"' for c in columns)
        row = self.db.execute(f'SELECT {selected} FROM "{table}" WHERE {bad} LIMIT 1').fetchone()
        if row is None:
            return
        column, value = next((c, v) for c, v in zip(columns, row) if v is not None and not isinstance(v, int))
        shown = f"a {len(value)}-byte blob" if isinstance(value, bytes) else repr(value[:30] if isinstance(value, str) else value)
        raise InputError(f"{self.path}: table {table}: column {column} holds {shown} where nsys writes an integer; "
                         "export the report again with 'nsys export --type sqlite'")

    def require(self, table: str, needed: tuple[str, ...], why: str) -> list[str]:
        if table not in self.tables:
            raise InputError(f"{self.path}: no {table} table ({why}); {self.schema_hint()}")
        columns = self.columns(table)
        missing = [c for c in needed if c not in columns]
        if missing:
            raise InputError(f"{self.path}: table {table} has no column {', '.join(repr(m) for m in missing)} "
                             f"(nsys export schema {self.export_schema() or 'unknown'}); export it with a recent nsys")
        return columns

    def schema_hint(self) -> str:
        return (f"the capture has no CUDA kernels: profile with 'nsys profile --trace=cuda' and make sure the "
                f"program launches kernels (export schema {self.export_schema() or 'unknown'})")

    def query(self, sql: str) -> pd.DataFrame:
        return pd.read_sql_query(sql, self.db)

    def meta(self, key: str) -> str | None:
        if "META_DATA_EXPORT" not in self.tables:
            return None
        row = self.db.execute("SELECT value FROM META_DATA_EXPORT WHERE name = ?", (key,)).fetchone()
        return str(row[0]) if row and row[0] not in (None, "") else None

    def export_schema(self) -> str | None:
        return self.meta("EXPORT_SCHEMA_VERSION")

    def enum(self, table: str) -> dict[int, str] | None:
        if table not in self.tables or not {"id", "name"} <= set(self.columns(table)):
            return None
        return {int(i): str(n) for i, n in self.db.execute(f'SELECT id, name FROM "{table}"')}

    # -- tables ---------------------------------------------------------------------------------

    def read(self, ranks: bool = False) -> TimelineData:
        self.require(STRINGS_TABLE, ("id", "value"), "the string table every name refers to")
        kernels = self.kernels()
        data = TimelineData(
            path=self.path,
            kernels=kernels,
            copies=self.copies(),
            memsets=self.memsets(),
            api=self.api(),
            nsys_version=self.meta("EXPORT_PRODUCT_VERSION"),
            export_schema=self.export_schema(),
            device=self.device(),
        )
        data.nvtx = self.nvtx()
        if ranks:
            data.run = self.run()
        data.notes, data.unknown = self.notes, self.unknown
        return data

    def kernels(self) -> pd.DataFrame:
        """Kernel executions; a CUDA graph traced as a whole (nsys --cuda-graph-trace=graph, the default)
        counts as one kernel per execution, named after the graph."""
        frames = []
        if KERNEL_TABLE in self.tables:
            frames.append(self.launched_kernels())
        if GRAPH_TABLE in self.tables:
            graphs = self.graph_executions()
            if len(graphs):
                frames.append(graphs)
                self.notes.append(f"{len(graphs)} CUDA graph executions traced as a whole ({GRAPH_TABLE}): each counts as one kernel "
                                  "here; capture with nsys profile --cuda-graph-trace=node to see the kernels inside")
        if not frames:
            self.require(KERNEL_TABLE, ("start", "end"), "CUDA kernel activity")
        frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        if frame.empty:
            raise InputError(f"{self.path}: table {KERNEL_TABLE} is empty; {self.schema_hint()}")
        kept = _times(frame)
        if kept.empty:
            raise InputError(f"{self.path}: none of the {len(frame):,} kernels has a usable start and end (each ends before it "
                             "starts, or is missing a time); export the report again with 'nsys export --type sqlite'")
        return kept

    def launched_kernels(self) -> pd.DataFrame:
        columns = self.require(KERNEL_TABLE, ("start", "end"), "CUDA kernel activity")
        names = [c for c in ("shortName", "demangledName", "mangledName") if c in columns]
        if not names:
            raise InputError(f"{self.path}: table {KERNEL_TABLE} has none of the kernel name columns shortName, "
                             f"demangledName, mangledName (export schema {self.export_schema() or 'unknown'})")
        short, full = names[0], ("demangledName" if "demangledName" in columns else names[0])
        optional = {"deviceId": "device", "streamId": "stream", "correlationId": "correlation",
                    "gridX": "gridX", "gridY": "gridY", "gridZ": "gridZ", "blockX": "blockX", "blockY": "blockY", "blockZ": "blockZ"}
        select = ", ".join(f'k."{c}" AS {a}' for c, a in optional.items() if c in columns)
        # The mangled name is what ncu's --kernel-name-base mangled matches: `profile --top` picks kernels by it.
        mangled = ("s3.value", f' LEFT JOIN {STRINGS_TABLE} s3 ON s3.id = k."mangledName"') if "mangledName" in columns else ("NULL", "")
        frame = self.query(
            f'SELECT k.start AS start, k."end" AS "end", s1.value AS name, s2.value AS demangled, {mangled[0]} AS mangled'
            f'{", " + select if select else ""} FROM {KERNEL_TABLE} k '
            f'LEFT JOIN {STRINGS_TABLE} s1 ON s1.id = k."{short}" LEFT JOIN {STRINGS_TABLE} s2 ON s2.id = k."{full}"{mangled[1]}'
        )
        if "graphNodeId" in columns:
            nodes = self.db.execute(f'SELECT COUNT(*) FROM {KERNEL_TABLE} WHERE "graphNodeId" IS NOT NULL').fetchone()[0]
            if nodes:
                self.notes.append(f"{nodes:,} kernels ran inside CUDA graphs, traced node by node (nsys --cuda-graph-trace=node): each "
                                  "is named and timed, but tracing adds about 1-2 us to every node (H200, docs/timeline.md), so the "
                                  "graphs run slower than untraced; --nsys-arg --cuda-graph-trace=graph times each graph as one event")
        frame["name"] = frame["name"].fillna(frame["demangled"]).fillna("(unnamed kernel)")
        frame["demangled"] = frame["demangled"].fillna(frame["name"])
        frame["mangled"] = frame["mangled"].fillna(frame["demangled"])
        frame["grid"] = _dims(frame, "grid")
        frame["block"] = _dims(frame, "block")
        frame = frame.drop(columns=[c for c in frame.columns if c[:-1] in ("grid", "block") and c[-1] in "XYZ"])
        return _fill(frame, ("device", "stream", "correlation"))

    def graph_executions(self) -> pd.DataFrame:
        columns = self.require(GRAPH_TABLE, ("start", "end"), "CUDA graph executions")
        optional = {"deviceId": "device", "streamId": "stream", "correlationId": "correlation", "graphId": "graph"}
        select = ", ".join(f'"{c}" AS {a}' for c, a in optional.items() if c in columns)
        frame = _fill(self.query(f'SELECT start, "end"{", " + select if select else ""} FROM {GRAPH_TABLE}'),
                      ("device", "stream", "correlation", "graph"))
        frame["name"] = [f"CUDA graph {int(g)}" if pd.notna(g) else "CUDA graph" for g in frame["graph"]]
        frame["demangled"] = frame["mangled"] = frame["name"]
        frame["grid"] = frame["block"] = None
        return frame.drop(columns=["graph"])

    def copies(self) -> pd.DataFrame:
        empty = pd.DataFrame({**{c: pd.Series(dtype="int64") for c in ("start", "end", "bytes", "device", "stream", "correlation")},
                              **{c: pd.Series(dtype=object) for c in ("category", "direction", "host_kind")},
                              "pageable": pd.Series(dtype=float)})
        if MEMCPY_TABLE not in self.tables:
            self.notes.append(f"no {MEMCPY_TABLE} table: the program made no memory copy")
            return empty
        columns = self.require(MEMCPY_TABLE, ("start", "end", "bytes", "copyKind"), "memory copies")
        optional = {"srcKind": "src_kind", "dstKind": "dst_kind", "deviceId": "device", "streamId": "stream", "correlationId": "correlation"}
        select = ", ".join(f'"{c}" AS {a}' for c, a in optional.items() if c in columns)
        frame = _fill(self.query(f'SELECT start, "end", bytes, copyKind AS copy_kind{", " + select if select else ""} FROM {MEMCPY_TABLE}'),
                      ("device", "stream", "correlation"))
        copy_enum = self.enum("ENUM_CUDA_MEMCPY_OPER")
        if copy_enum is None:
            self.notes.append("no ENUM_CUDA_MEMCPY_OPER table: copy directions decoded with CUPTI's numbering")
            directions = {k: v for k, v in _CUPTI_COPY_KINDS.items()}
        else:
            directions = {k: re.sub(r"^CUDA_MEMCPY_KIND_", "", v) for k, v in copy_enum.items()}
        frame["direction"] = frame["copy_kind"].map(lambda k: directions.get(int(k), "UNKNOWN") if pd.notna(k) else "UNKNOWN")
        frame["category"] = frame["direction"].map(lambda d: COPY_CATEGORY_BY_NAME.get(d, "memcpy_other"))
        frame["host_kind"], frame["pageable"] = self.host_memory(frame)
        return _times(frame.drop(columns=[c for c in ("copy_kind", "src_kind", "dst_kind") if c in frame.columns]))

    def host_memory(self, frame: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
        """The host side's memory kind of each copy (pageable, pinned...) and whether it is pageable
        (NaN when unknown: no srcKind/dstKind columns or no ENUM_CUDA_MEM_KIND table)."""
        unknown = (pd.Series([None] * len(frame), index=frame.index, dtype=object), pd.Series(np.nan, index=frame.index))
        if not {"src_kind", "dst_kind"} <= set(frame.columns):
            self.notes.append(f"{MEMCPY_TABLE} has no srcKind/dstKind columns: pageable copies cannot be told from pinned ones")
            self.unknown["host_memory"] = f"{MEMCPY_TABLE} has no srcKind/dstKind columns"
            return unknown
        kinds = self.enum("ENUM_CUDA_MEM_KIND")
        if kinds is None:
            self.notes.append("no ENUM_CUDA_MEM_KIND table: pageable copies cannot be told from pinned ones")
            self.unknown["host_memory"] = "no ENUM_CUDA_MEM_KIND table to decode srcKind/dstKind"
            return unknown
        labels = {k: re.sub(r"^CUDA_MEMOPR_MEMORY_KIND_", "", v).lower() for k, v in kinds.items()}
        # The host side: the source of a copy to the device, the destination of a copy to the host.
        to_host = frame["direction"].isin(["DTOH", "ATOH", "UVM_DTOH"])
        host_side = np.where(to_host, frame["dst_kind"], frame["src_kind"])
        other_side = np.where(to_host, frame["src_kind"], frame["dst_kind"])
        host_kind = pd.Series([labels.get(int(k)) if pd.notna(k) else None for k in host_side], index=frame.index, dtype=object)
        other_kind = pd.Series([labels.get(int(k)) if pd.notna(k) else None for k in other_side], index=frame.index, dtype=object)
        pageable = (host_kind == "pageable") | (other_kind == "pageable")
        return host_kind, pageable.astype(float)

    def memsets(self) -> pd.DataFrame:
        if MEMSET_TABLE not in self.tables:
            self.notes.append(f"no {MEMSET_TABLE} table: the program made no memset")
            return pd.DataFrame({c: pd.Series(dtype="int64") for c in ("start", "end", "bytes", "device", "stream")})
        columns = self.require(MEMSET_TABLE, ("start", "end"), "memsets")
        select = ", ".join(f'"{c}" AS {a}' for c, a in {"bytes": "bytes", "deviceId": "device", "streamId": "stream"}.items() if c in columns)
        return _times(_fill(self.query(f'SELECT start, "end"{", " + select if select else ""} FROM {MEMSET_TABLE}'), ("bytes", "device", "stream")))

    def api(self) -> pd.DataFrame | None:
        if RUNTIME_TABLE not in self.tables:
            self.notes.append(f"no {RUNTIME_TABLE} table: CUDA API calls were not traced (nsys profile --trace=cuda)")
            self.unknown["api"] = f"no {RUNTIME_TABLE} table (CUDA API not traced; capture with nsys profile --trace=cuda)"
            return None
        columns = self.require(RUNTIME_TABLE, ("start", "end", "nameId"), "CUDA API calls")
        optional = {"globalTid": "tid", "correlationId": "correlation"}
        select = ", ".join(f'r."{c}" AS {a}' for c, a in optional.items() if c in columns)
        frame = self.query(f'SELECT r.start AS start, r."end" AS "end", s.value AS raw_name{", " + select if select else ""} '
                           f'FROM {RUNTIME_TABLE} r LEFT JOIN {STRINGS_TABLE} s ON s.id = r.nameId')
        frame = _fill(frame, ("tid", "correlation"))
        raw = frame["raw_name"].fillna("(unnamed call)")
        frame["name"] = raw.map({n: api_name(n) for n in raw.unique()})
        return _times(frame.drop(columns=["raw_name"]))

    def nvtx(self) -> pd.DataFrame | None:
        """NVTX push/pop and start/end ranges (start, end, name); None without an NVTX_EVENTS table
        (nsys writes none when the program marked no range or NVTX was not traced)."""
        if NVTX_TABLE not in self.tables:
            return None
        columns = self.require(NVTX_TABLE, ("start", "end", "eventType"), "NVTX ranges")
        types = self.enum("ENUM_NSYS_EVENT_TYPE") or _NVTX_RANGE_TYPES
        wanted = sorted(k for k, v in types.items() if v in ("NvtxPushPopRange", "NvtxStartEndRange"))
        if not wanted:
            return None
        text = "n.text" if "text" in columns else "NULL"
        if "textId" in columns:
            name, join = f"COALESCE({text}, s.value)", f' LEFT JOIN {STRINGS_TABLE} s ON s.id = n."textId"'
        else:
            name, join = text, ""
        frame = self.query(f'SELECT n.start AS start, n."end" AS "end", {name} AS name FROM {NVTX_TABLE} n{join} '
                           f'WHERE n.eventType IN ({", ".join(str(int(w)) for w in wanted)})')
        frame["name"] = frame["name"].fillna("(unnamed range)").astype(str)
        return _times(frame)

    def run(self) -> RunInfo:
        host = None
        if "TARGET_INFO_SYSTEM_ENV" in self.tables and {"name", "value"} <= set(self.columns("TARGET_INFO_SYSTEM_ENV")):
            row = self.db.execute("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'").fetchone()
            host = str(row[0]) if row and row[0] not in (None, "") else None
        command = None
        if "META_DATA_CAPTURE" in self.tables and {"name", "value"} <= set(self.columns("META_DATA_CAPTURE")):
            row = self.db.execute("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:COMMAND'").fetchone()
            command = str(row[0]) if row and row[0] not in (None, "") else None
        start = None
        if "TARGET_INFO_SESSION_START_TIME" in self.tables and "utcEpochNs" in self.columns("TARGET_INFO_SESSION_START_TIME"):
            row = self.db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()
            start = int(row[0]) if row and isinstance(row[0], int) else None
        return RunInfo(hostname=host, command=command, start_utc_ns=start)

    def device(self) -> str | None:
        if "TARGET_INFO_GPU" not in self.tables or "name" not in self.columns("TARGET_INFO_GPU"):
            return None
        names = sorted({str(r[0]) for r in self.db.execute("SELECT name FROM TARGET_INFO_GPU") if r[0]})
        return ", ".join(names) or None


_VERSION_SUFFIX = re.compile(r"(?:_v\d+)?(?:_pt(?:sz|ds))?(?:_v\d+)?$")


def api_name(raw: str) -> str:
    """``cudaLaunchKernel_v7000`` -> ``cudaLaunchKernel``; ``cudaMemcpyAsync_ptsz_v7000`` -> ``cudaMemcpyAsync``."""
    return _VERSION_SUFFIX.sub("", str(raw)) or str(raw)


def _fill(frame: pd.DataFrame, names) -> pd.DataFrame:
    for name in names:
        if name not in frame.columns:
            frame[name] = np.nan
    return frame


# Times are ns on the capture's clock (session-relative, or since the epoch: 1.7e18); past 2**62
# they are no time, and end - start could overflow.
MAX_TIME = 2**62


def _times(frame: pd.DataFrame) -> pd.DataFrame:
    """Sort by start; drop events without a start/end, that end before they start, or off the clock."""
    frame = frame.dropna(subset=["start", "end"])
    frame = frame[(frame["end"] >= frame["start"]) & (frame["start"] >= 0) & (frame["end"] <= MAX_TIME)].astype({"start": "int64", "end": "int64"})
    return frame.sort_values(["start", "end"], kind="stable").reset_index(drop=True)


def _dims(frame: pd.DataFrame, prefix: str) -> list:
    cols = [f"{prefix}{axis}" for axis in "XYZ"]
    if not all(c in frame.columns for c in cols):
        return [None] * len(frame)
    values = frame[cols].to_numpy(dtype=float)
    known = ~np.isnan(values).any(axis=1)
    rows = np.nan_to_num(values).astype(np.int64).tolist()
    return [row if ok else None for row, ok in zip(rows, known)]
