"""Read an Nsight Systems SQLite export (``nsys export --type sqlite``) by whole columns.

Only what the timeline analysis needs is read: kernels, memory copies, memsets, CUDA API calls and
NVTX ranges (PyTorch's ops among them, :mod:`ncuwrap.timeline.readers.pytorch_nvtx`), plus a few facts about the
capture (nsys version, GPU). A minute of training holds millions of events, so the event tables are scanned column by column into Arrow (Apache Arrow's ADBC
SQLite driver) and kept as numpy columns, never a Python object per event: names stay string ids until
the end and become :class:`~ncuwrap.timeline.events.Labels` (a code per event, each distinct text once).
The small tables (enums, metadata) are read with sqlite3. The export's schema changes between nsys versions, so tables
and columns are looked up, never assumed:

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
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ncuwrap.core import fileio, sqlite_file
from ncuwrap.core.errors import InputError
from ncuwrap.core.numbers import distinct
from ncuwrap.core.peaks import DeviceFacts
from ncuwrap.timeline.readers import pytorch_nvtx
from ncuwrap.timeline.events import Events, Labels
from ncuwrap.timeline.model import COPY_CATEGORY_BY_NAME, LAUNCH_DIMS, RunInfo, TimelineData


KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY_TABLE = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET_TABLE = "CUPTI_ACTIVITY_KIND_MEMSET"
RUNTIME_TABLE = "CUPTI_ACTIVITY_KIND_RUNTIME"
GRAPH_TABLE = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
STRINGS_TABLE = "StringIds"
NVTX_TABLE = "NVTX_EVENTS"
OSRT_TABLE = "OSRT_API"
# OS runtime calls in which a thread waits for another process, a timer or a queue with a timeout (a DataLoader
# worker's pipe, Python's queue.get(timeout=...), which waits in sem_clockwait or pthread_cond_timedwait, a
# sleep): its time in them is idle, and a tracer's cost on that thread costs the step nothing
# (ncuwrap.timeline.tracer). Waits without a timeout (pthread_cond_wait, sem_wait) are not among them: PyTorch's
# main thread waits so for its autograd thread, whose work the tracer slows too.
BLOCKING_CALLS = frozenset({"poll", "ppoll", "select", "pselect6", "epoll_wait", "epoll_pwait", "nanosleep", "clock_nanosleep",
                            "usleep", "sleep", "waitpid", "wait", "pthread_cond_timedwait", "pthread_cond_clockwait",
                            "sem_timedwait", "sem_clockwait"})
# NVTX range event types (nsys's ENUM_NSYS_EVENT_TYPE), for exports without that table.
_NVTX_RANGE_TYPES = {59: "NvtxPushPopRange", 60: "NvtxStartEndRange"}
MAX_CPU_CORES = 1 << 16  # a CpuCores past this is not a machine's (Linux's own limit on CPUs is 8,192)

# The same numbering, for exports without the enum table (CUPTI's values, which nsys keeps).
_CUPTI_COPY_KINDS = {0: "UNKNOWN", 1: "HTOD", 2: "DTOH", 3: "HTOA", 4: "ATOH", 5: "ATOA", 6: "ATOD", 7: "DTOA",
                     8: "DTOD", 9: "HTOH", 10: "PTOP", 11: "UVM_HTOD", 12: "UVM_DTOH", 13: "UVM_DTOD"}

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
BATCH_ROWS = 65_536
# Exports up to this size are scanned by sqlite3 rows (:class:`_Scanner`): importing Arrow and starting its
# driver costs more CPU than sqlite3 takes for the rows of such a file, and less past it (the reads, rows against
# Arrow, by size: docs/scale.md, figures behind the code).
ROWS_BY_SQLITE3_BYTES = 3 << 20


def check_file(path: Path) -> None:
    """Refuse files that cannot be an SQLite export, with the reason."""
    fileio.check_file(path, folder_fix="give an nsys .sqlite export or .nsys-rep report",
                      empty_fix="export the report again with 'nsys export --type sqlite'")
    with path.open("rb") as fh:
        head = fh.read(len(sqlite_file.MAGIC))
    if head != sqlite_file.MAGIC:
        raise InputError(f"{path}: not an SQLite database (no 'SQLite format 3' header); "
                         "give the output of 'nsys export --type sqlite' or the .nsys-rep itself")


def read(path: str | Path, *, ranks: bool = False) -> TimelineData:
    """Read the events and NVTX ranges of an nsys SQLite export; raise InputError naming the file on any
    problem. With ``ranks``, also what identifies the run (for ``timeline --ranks``). Nothing is written beside
    the file, and one a program is writing is refused (:mod:`ncuwrap.core.sqlite_file`)."""
    path = Path(path)
    check_file(path)
    with sqlite_file.reading(path) as uri:
        return _read(path, uri, ranks)


def _read(path: Path, uri: str, ranks: bool) -> TimelineData:
    """:func:`read` of ``path`` through ``uri`` (the file itself, immutable, or a private copy)."""
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=1.0)
    except sqlite3.Error as exc:
        raise InputError(f"{path}: cannot open the SQLite database ({exc}); check the file's permissions") from None
    connection.text_factory = decode  # the small tables' text too (GPU and host names), whatever its bytes
    budget = _Budget(STEPS_FLOOR + STEPS_PER_BYTE * path.stat().st_size)
    connection.set_progress_handler(budget, _STEPS_PER_CALL)
    scanner = None
    try:
        reader = _Reader(path, connection)
        scanner = _Scanner(uri, budget, reader, by_rows=path.stat().st_size <= ROWS_BY_SQLITE3_BYTES)
        reader.scanner = scanner
        return reader.read(ranks=ranks)
    except (sqlite3.DatabaseError, _ScanError) as exc:
        if budget.spent:
            raise InputError(f"{path}: reading it took more than {budget.steps:,} SQLite steps, far more than an nsys export "
                             "needs; export the report again with 'nsys export --type sqlite'") from None
        if _LOCKED.search(_first_line(exc)):
            raise sqlite_file.refusal(path, _first_line(exc)) from None
        raise InputError(f"{path}: corrupt or truncated SQLite database ({_first_line(exc)}); export the report again "
                         "with 'nsys export --type sqlite --force-overwrite true'") from None
    finally:
        if scanner is not None:
            scanner.close()
        connection.close()


_LOCKED = re.compile(r"database (table )?is locked|database is busy|SQLITE_BUSY|SQLITE_LOCKED", re.IGNORECASE)


def _first_line(exc: Exception) -> str:
    """SQLite's own words from an sqlite3 or ADBC error ("database disk image is malformed")."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    for prefix in ("INVALID_ARGUMENT: ", "IO: ", "INTERNAL: ", "[SQLite] ", "Failed to prepare query: ", "Failed to step query: "):
        text = text.removeprefix(prefix)
    return text


class _Budget:
    """sqlite3 progress handler: stops the running query (it fails with "interrupted") past ``steps``;
    the column scans charge it too (:meth:`_Scanner.scan`)."""

    def __init__(self, steps: int):
        self.steps = steps
        self.left = steps
        self.spent = False

    def __call__(self) -> int:
        return int(self.charge(_STEPS_PER_CALL))

    def charge(self, steps: int) -> bool:
        self.left -= steps
        self.spent = self.left < 0
        return self.spent


class _ScanError(Exception):
    """A column scan failed (SQLite's message, from the ADBC driver)."""


_INTEGER, _TEXT = frozenset({int, type(None)}), frozenset({str, type(None)})


class _Scanner:
    """Whole columns of one table at a time, read by Arrow's ADBC SQLite driver straight into Arrow
    batches: a real capture's tables hold millions of rows, and sqlite3 makes a Python tuple of each
    (a 1M-launch capture: 5.2 s to fetch the CUDA calls' five columns that way, 1.4 s by ADBC,
    benchmarks/timeline_scale.py). The query is a plain scan of one table; nothing is joined. The driver
    manager's own objects are used, not its DB-API module, which imports pyarrow.dataset and with it
    pandas (0.45 s of a process whose whole analysis of a 200-step capture takes 0.2 s).

    A small export (``by_rows``: ROWS_BY_SQLITE3_BYTES) is scanned by the same query through sqlite3 instead:
    the driver and Arrow are then never imported (issue 41: a whole ``timeline`` process of a small capture,
    whose read takes 0.01-0.03 s). Where a value is not of its column's type the scan is left to the driver,
    so that a bad export is refused in the same words whatever its size."""

    def __init__(self, uri: str, budget: _Budget, reader: "_Reader", *, by_rows: bool = False):
        self.uri = uri
        self.budget = budget
        self.reader = reader
        self.by_rows = by_rows
        self.db = self.connection = None

    def _connect(self) -> None:
        """Start the driver, once, for the first scan that needs it."""
        if self.connection is not None:
            return
        import adbc_driver_manager
        import adbc_driver_sqlite  # with pyarrow: only timelines need them here

        try:
            self.db = adbc_driver_sqlite.connect(self.uri)
            self.connection = adbc_driver_manager.AdbcConnection(self.db)
        except Exception as exc:  # the driver's errors derive from its own Error, its stream's from OSError
            self.close()
            raise _ScanError(str(exc)) from None

    def close(self) -> None:
        for handle in (self.connection, self.db):
            try:
                if handle is not None:
                    handle.close()
            except Exception:  # closing a connection whose query failed: nothing left to release
                pass
        self.db = self.connection = None

    def scan(self, table: str, columns: dict[str, str], *, text: tuple[str, ...] = (), where: str = "") -> dict:
        """``columns`` (SQL expression -> name) of ``table``: integers as int64 arrays (float64 with NaN
        where a row has NULL; a NULL start or end reads -1, a time no event has), ``text`` columns as
        categories (each distinct text once)."""
        names = list(columns.values())
        # A leading row of the right types fixes each column's type (the driver infers it from the first
        # rows: a text column NULL in its first thousand rows would be read as integers); it is dropped.
        seed = ", ".join(f"{chr(39) * 2 if n in text else 0} AS \"{n}\"" for n in names)
        selected = ", ".join(f'{expr} AS "{name}"' for expr, name in columns.items())
        sql = f'SELECT 0 AS "_seed", {seed} UNION ALL SELECT 1, {selected} FROM "{table}"{" WHERE " + where if where else ""}'
        cost = len(names) + 2  # SQLite takes at least a step per column, one for the row and one to move on
        rows = self.reader.db.execute(f'SELECT COUNT(*) FROM "{table}"{" WHERE " + where if where else ""}').fetchone()[0]
        if self.budget.charge(rows * cost):
            raise _ScanError("interrupted")
        if self.by_rows:
            found = self._by_rows(sql, table, columns, text, rows)
            if found is not None:
                return found
        return self._by_arrow(sql, table, names, text, rows)

    def _by_rows(self, sql: str, table: str, columns: dict[str, str], text: tuple[str, ...], rows: int) -> dict | None:
        """The scan through sqlite3, column for column what :meth:`_by_arrow` gives; None where a value is
        not of its column's type (an integer column holding text: the driver's scan then says which)."""
        found = self.reader.db.execute(sql).fetchall()[1:]  # the seed row first (UNION ALL keeps the order)
        if len(found) != rows:
            raise _ScanError(f"{table} {'grew' if len(found) > rows else 'changed'} while it was read")
        names = list(columns.values())
        values = list(zip(*found))[1:] if found else [()] * len(names)
        texts: dict[str, tuple] = {}
        numbers: dict[str, np.ndarray] = {}
        nulls: dict[str, np.ndarray] = {}
        for name, column in zip(names, values):
            # sqlite3 gives an SQLite integer as int, text as str (the connection's decode), a real as float,
            # a blob as bytes: anything but the column's own type (or NULL) is the driver's to name.
            if not set(map(type, column)) <= (_TEXT if name in text else _INTEGER):
                return None
            if name in text:
                texts[name] = column
            elif None in column:
                nulls[name] = np.fromiter((v is None for v in column), dtype=bool, count=rows)
                numbers[name] = np.array([0 if v is None else v for v in column], dtype=np.int64)
            else:
                numbers[name] = np.array(column, dtype=np.int64)
        return _columns(names, texts, numbers, nulls)

    def _by_arrow(self, sql: str, table: str, names: list[str], text: tuple[str, ...], rows: int) -> dict:
        """The scan by Arrow's driver, batch by batch into the columns."""
        import pyarrow as pa

        self._connect()
        # Filled batch by batch: no second copy of a column is ever held (nor Arrow's buffers kept).
        numbers = {n: np.empty(rows, dtype=np.int64) for n in names if n not in text}
        nulls: dict[str, np.ndarray] = {}
        texts: dict[str, list] = {n: [] for n in text}
        at = 0
        try:
            import adbc_driver_manager

            statement = adbc_driver_manager.AdbcStatement(self.connection)
            try:
                # Batches of 64k rows: each column's buffer is then big enough for malloc to hand back.
                statement.set_options(**{"adbc.sqlite.query.batch_rows": str(BATCH_ROWS)})
                statement.set_sql_query(sql)
                stream, _ = statement.execute_query()
                seeded = False
                for batch in pa.RecordBatchReader._import_from_c(stream.address):
                    if not seeded:
                        batch, seeded = batch.slice(1), True
                    n = batch.num_rows
                    if at + n > rows:
                        raise _ScanError(f"{table} grew while it was read")
                    for name in names:
                        column = batch.column(name)
                        if name in text:
                            texts[name].append(column)
                        elif pa.types.is_null(column.type):
                            nulls.setdefault(name, np.zeros(rows, dtype=bool))[at:at + n] = True
                        elif column.type != pa.int64():
                            # The driver took the column's type from its first rows, and later ones hold another.
                            self.reader.check_integers(table, self.reader.columns(table), force=True)
                            raise _ScanError(f"column {name} of {table} read as {column.type}")
                        else:
                            valid = _int64_into(column, numbers[name][at:at + n])
                            if valid is not None:
                                nulls.setdefault(name, np.zeros(rows, dtype=bool))[at:at + n] = ~valid
                    at += n
            finally:
                statement.close()
        except _ScanError:
            raise
        except Exception as exc:  # the driver's errors derive from its own Error, its stream's from OSError
            # A value of another type than the column's first ones: say which, as the typed check does.
            self.reader.check_integers(table, self.reader.columns(table), force=True)
            raise _ScanError(str(exc)) from None
        if at != rows:
            raise _ScanError(f"{table} changed while it was read")
        return _columns(names, {n: (t for column in batches for t in _texts(column)) for n, batches in texts.items()}, numbers, nulls)


def _columns(names: list[str], texts: dict[str, Iterable], numbers: dict[str, np.ndarray], nulls: dict[str, np.ndarray]) -> dict:
    """The columns :meth:`_Scanner.scan` filled, made whole once the scan is done: text (each column's
    values, None for NULL) as labels, integers with their NULLs marked (-1 for a time, NaN otherwise)."""
    out: dict = {}
    for name in names:
        if name in texts:
            # Made labels here: Arrow's dictionary_encode loads pyarrow.compute and pandas (0.25 s), and a
            # text column (NVTX texts, the string table) holds far fewer rows than the event tables.
            out[name] = Labels.of(texts[name])
        elif name in nulls and name in ("start", "end"):
            out[name] = np.where(nulls[name], -1, numbers[name])  # no event has that time: dropped by _times
        elif name in nulls:
            out[name] = np.where(nulls[name], np.nan, numbers[name])
        else:
            out[name] = numbers[name]
    return out


def _texts(column) -> list:
    """An Arrow text column's values. SQLite stores whatever bytes a program gave (a Latin-1 NVTX text, a
    kernel name with 0xFF): those are decoded as Python decodes file names (surrogateescape), so nothing
    is lost and every renderer shows such a byte as ``\\xNN`` (:func:`ncuwrap.render.escape.terminal`)."""
    try:
        return column.to_pylist()
    except UnicodeDecodeError:
        import pyarrow as pa

        return [None if b is None else decode(b) for b in column.view(pa.binary()).to_pylist()]


def decode(raw: bytes) -> str:
    """Text from an export, any bytes: UTF-8 where it is, each other byte kept as a surrogate escape."""
    return raw.decode("utf-8", "surrogateescape")


def _int64_into(column, out: np.ndarray) -> np.ndarray | None:
    """Copy an Arrow int64 array's values into ``out`` straight from its buffers (no Arrow allocation);
    return which are valid where some are NULL (their slots hold no value), else None."""
    validity, data = column.buffers()[:2]
    offset, n = column.offset, len(column)
    out[:] = np.frombuffer(data, dtype=np.int64, count=offset + n)[offset:]
    if not column.null_count or validity is None:
        return None
    return np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[offset:offset + n].astype(bool)


class _Reader:
    def __init__(self, path: Path, connection: sqlite3.Connection):
        self.path = path
        self.db = connection
        self.scanner: _Scanner | None = None
        kinds = dict(self.db.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')").fetchall())
        self.tables = set(kinds)
        self.notes: list[str] = []
        self.unknown: dict[str, str] = {}
        self._checked: set[str] = set()
        self._strings: tuple[np.ndarray, np.ndarray, list] | None = None  # StringIds: sorted ids, their text codes, the texts
        for name in READ_TABLES:
            if kinds.get(name) == "view":
                raise InputError(f"{path}: {name} is a view, not a table as nsys writes it; export the report again "
                                 "with 'nsys export --type sqlite'")

    # -- schema helpers -------------------------------------------------------------------------

    def columns(self, table: str) -> list[str]:
        return [row[1] for row in self.db.execute(f'PRAGMA table_info("{table}")')]

    def check_integers(self, table: str, columns: list[str], *, force: bool = False) -> None:
        """Refuse text, real or blob values where nsys writes integers (one scan of the table). The event
        tables are checked only when their column scan found another type (``force``): reading them
        as integers already proves the rest."""
        columns = [c for c in columns if c in INTEGER_COLUMNS]
        if not columns or (table in self._checked and not force):
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

    def scan(self, table: str, wanted: dict[str, str], columns: list[str], **options) -> Events:
        """The ``wanted`` columns (table column -> name) that ``columns`` has, as a table."""
        assert self.scanner is not None
        found = self.scanner.scan(table, {f'"{c}"': a for c, a in wanted.items() if c in columns}, **options)
        return Events(found, n=len(next(iter(found.values()))))

    def meta(self, key: str) -> str | None:
        if "META_DATA_EXPORT" not in self.tables:
            return None
        row = self.db.execute("SELECT value FROM META_DATA_EXPORT WHERE name = ?", (key,)).fetchone()
        return str(row[0]) if row and row[0] not in (None, "") else None

    def export_schema(self) -> str | None:
        return self.meta("EXPORT_SCHEMA_VERSION")

    def enum(self, table: str) -> dict[int, str] | None:
        if table not in self.tables:
            return None
        columns = self.columns(table)
        if not {"id", "name"} <= set(columns):
            return None
        self.check_integers(table, columns)
        return {int(i): str(n) for i, n in self.db.execute(f'SELECT id, name FROM "{table}"')}

    def labels(self, *ids, fill: str) -> tuple[list[str], list[np.ndarray]]:
        """String ids (NaN: none) as codes into one list of texts, -1 where a row has no id; ``fill``
        is in the list, for the caller to put where a row has no name."""
        known = [np.asarray(i, dtype=float) for i in ids]
        used = distinct(np.concatenate([k[~np.isnan(k)] for k in known])).astype(np.int64)
        text = self.strings(used)
        # Distinct ids may carry the same text: the list holds each text once.
        categories = list(dict.fromkeys([*text, fill]))
        code_of = {t: i for i, t in enumerate(categories)}
        lookup = np.array([code_of[t] for t in text], dtype=np.int32)
        codes = []
        for k in known:
            c = np.full(k.size, -1, dtype=np.int32)
            ok = ~np.isnan(k)
            c[ok] = lookup[np.searchsorted(used, k[ok].astype(np.int64))]
            codes.append(c)
        return categories, codes

    def named(self, ids, fill: str) -> Labels:
        """One column of string ids as labels of their text, ``fill`` where a row has none."""
        categories, (codes,) = self.labels(ids, fill=fill)
        return Labels(np.where(codes >= 0, codes, categories.index(fill)), categories)

    def strings(self, ids: np.ndarray) -> list[str]:
        """The text of each of the sorted string ids ``ids`` (an id missing from StringIds: its number)."""
        if self._strings is None:
            found = self.scanner.scan(STRINGS_TABLE, {'"id"': "id", '"value"': "value"}, text=("value",))
            order = np.argsort(found["id"], kind="stable")
            values = found["value"]
            self._strings = (found["id"][order], values.codes[order], values.categories)
        known, codes, texts = self._strings
        at = np.clip(np.searchsorted(known, ids), 0, max(known.size - 1, 0)).tolist()
        return [str(texts[codes[a]]) if known.size and known[a] == i and codes[a] >= 0 else f"(string {i})"
                for a, i in zip(at, ids.tolist())]

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
        data.host_waits = self.host_waits()
        data.producer = f"nsys {data.nsys_version or '?'}"  # as the reports have always named it
        data.ops, data.op_inputs = pytorch_nvtx.read(data.nvtx)  # nsys keeps no Python frames: data.frames stays None
        data.gpu = self.gpu(kernels)
        data.cpu_cores = self.cpu_cores()
        if ranks:
            data.run = self.run()
        data.notes, data.unknown = self.notes, self.unknown
        return data

    def kernels(self) -> Events:
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
        frame = Events.concat(frames) if len(frames) > 1 else frames[0]
        if frame.empty:
            raise InputError(f"{self.path}: table {KERNEL_TABLE} is empty; {self.schema_hint()}")
        kept = _times(frame)
        if kept.empty:
            raise InputError(f"{self.path}: none of the {len(frame):,} kernels has a usable start and end (each ends before it "
                             "starts, or is missing a time); export the report again with 'nsys export --type sqlite'")
        return kept

    def launched_kernels(self) -> Events:
        columns = self.require(KERNEL_TABLE, ("start", "end"), "CUDA kernel activity")
        names = [c for c in ("shortName", "demangledName", "mangledName") if c in columns]
        if not names:
            raise InputError(f"{self.path}: table {KERNEL_TABLE} has none of the kernel name columns shortName, "
                             f"demangledName, mangledName (export schema {self.export_schema() or 'unknown'})")
        short, full = names[0], ("demangledName" if "demangledName" in columns else names[0])
        wanted = {"start": "start", "end": "end", "deviceId": "device", "streamId": "stream", "correlationId": "correlation",
                  **{d: d for d in LAUNCH_DIMS}, **{c: f"_{c}" for c in {short, full, "mangledName"}}}
        frame = self.scan(KERNEL_TABLE, wanted, columns)
        none = np.full(len(frame), np.nan)
        categories, (s, f, m) = self.labels(frame[f"_{short}"], frame[f"_{full}"],
                                            frame["_mangledName"] if "_mangledName" in frame else none, fill="(unnamed kernel)")
        # Each name falls back on the one before: short -> demangled -> "(unnamed kernel)"; demangled -> the
        # name; the mangled name (what ncu's --kernel-name-base mangled matches: `profile --top`) -> demangled.
        name = np.where(s >= 0, s, np.where(f >= 0, f, categories.index("(unnamed kernel)")))
        demangled = np.where(f >= 0, f, name)
        name = _telling(name, demangled, categories)
        mangled = np.where(m >= 0, m, demangled)
        for column, codes in (("name", name), ("demangled", demangled), ("mangled", mangled)):
            frame[column] = Labels(codes, categories)
        frame = frame.drop([c for c in frame.columns if c.startswith("_")])
        if "graphNodeId" in columns:
            nodes = self.db.execute(f'SELECT COUNT(*) FROM {KERNEL_TABLE} WHERE "graphNodeId" IS NOT NULL').fetchone()[0]
            if nodes:
                self.notes.append(f"{nodes:,} kernels ran inside CUDA graphs, traced node by node (nsys --cuda-graph-trace=node): each "
                                  "is named and timed, but tracing adds about 1-2 us to every node (H200, docs/timeline.md), so the "
                                  "graphs run slower than untraced; --nsys-arg --cuda-graph-trace=graph times each graph as one event")
        for d in LAUNCH_DIMS:  # -1: not in the export (or NULL); CUDA's dimensions fit 32 bits
            frame[d] = _small(np.nan_to_num(np.asarray(frame[d], dtype=float), nan=-1)) if d in frame else np.int32(-1)
        for d in ("device", "stream"):
            if d in frame:
                frame[d] = _small(frame[d])
        return _fill(frame, ("device", "stream", "correlation"))

    def graph_executions(self) -> Events:
        columns = self.require(GRAPH_TABLE, ("start", "end"), "CUDA graph executions")
        optional = {"start": "start", "end": "end", "deviceId": "device", "streamId": "stream", "correlationId": "correlation", "graphId": "graph"}
        frame = _fill(self.scan(GRAPH_TABLE, optional, columns), ("device", "stream", "correlation", "graph"))
        graph = np.asarray(frame["graph"], dtype=float)
        ids = distinct(graph[~np.isnan(graph)]).astype(np.int64).tolist()
        frame["name"] = frame["demangled"] = frame["mangled"] = _decode(graph, {g: f"CUDA graph {g}" for g in ids}, "CUDA graph")
        for d in LAUNCH_DIMS:
            frame[d] = np.int32(-1)
        return frame.drop(["graph"])

    def copies(self) -> Events:
        if MEMCPY_TABLE not in self.tables:
            self.notes.append(f"no {MEMCPY_TABLE} table: the program made no memory copy")
            return Events({**{c: np.array([], dtype=np.int64) for c in ("start", "end", "bytes", "device", "stream", "correlation")},
                           **{c: Labels([], []) for c in ("category", "direction", "host_kind")},
                           "pageable": np.array([], dtype=float)})
        columns = self.require(MEMCPY_TABLE, ("start", "end", "bytes", "copyKind"), "memory copies")
        wanted = {"start": "start", "end": "end", "bytes": "bytes", "copyKind": "copy_kind", "srcKind": "src_kind", "dstKind": "dst_kind",
                  "deviceId": "device", "streamId": "stream", "correlationId": "correlation"}
        frame = _fill(self.scan(MEMCPY_TABLE, wanted, columns), ("device", "stream", "correlation"))
        copy_enum = self.enum("ENUM_CUDA_MEMCPY_OPER")
        if copy_enum is None:
            self.notes.append("no ENUM_CUDA_MEMCPY_OPER table: copy directions decoded with CUPTI's numbering")
            directions = dict(_CUPTI_COPY_KINDS)
        else:
            directions = {k: re.sub(r"^CUDA_MEMCPY_KIND_", "", v) for k, v in copy_enum.items()}
        direction = _decode(np.asarray(frame["copy_kind"], dtype=float), directions, "UNKNOWN")
        frame["direction"] = direction
        frame["category"] = direction.relabel(lambda d: COPY_CATEGORY_BY_NAME.get(d, "memcpy_other"))
        frame["host_kind"], frame["pageable"] = self.host_memory(frame)
        return _times(frame.drop([c for c in ("copy_kind", "src_kind", "dst_kind") if c in frame.columns]))

    def host_memory(self, frame: Events) -> tuple[Labels, np.ndarray]:
        """The host side's memory kind of each copy (pageable, pinned...) and whether it is pageable
        (NaN when unknown: no srcKind/dstKind columns or no ENUM_CUDA_MEM_KIND table)."""
        unknown = (Labels(np.full(len(frame), -1), []), np.full(len(frame), np.nan))
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
        src, dst = np.asarray(frame["src_kind"], dtype=float), np.asarray(frame["dst_kind"], dtype=float)
        host_kind = _decode(np.where(to_host, dst, src), labels, None)
        other_kind = _decode(np.where(to_host, src, dst), labels, None)
        pageable = (host_kind == "pageable") | (other_kind == "pageable")
        return host_kind, pageable.astype(float)

    def memsets(self) -> Events:
        if MEMSET_TABLE not in self.tables:
            self.notes.append(f"no {MEMSET_TABLE} table: the program made no memset")
            return Events({c: np.array([], dtype=np.int64) for c in ("start", "end", "bytes", "device", "stream", "correlation")})
        columns = self.require(MEMSET_TABLE, ("start", "end"), "memsets")
        wanted = {"start": "start", "end": "end", "bytes": "bytes", "deviceId": "device", "streamId": "stream", "correlationId": "correlation"}
        return _times(_fill(self.scan(MEMSET_TABLE, wanted, columns), ("bytes", "device", "stream", "correlation")))

    def api(self) -> Events | None:
        if RUNTIME_TABLE not in self.tables:
            self.notes.append(f"no {RUNTIME_TABLE} table: CUDA API calls were not traced (nsys profile --trace=cuda)")
            self.unknown["api"] = f"no {RUNTIME_TABLE} table (CUDA API not traced; capture with nsys profile --trace=cuda)"
            return None
        columns = self.require(RUNTIME_TABLE, ("start", "end", "nameId"), "CUDA API calls")
        frame = self.scan(RUNTIME_TABLE, {"start": "start", "end": "end", "nameId": "_name", "globalTid": "tid", "correlationId": "correlation"}, columns)
        frame = _fill(frame, ("tid", "correlation"))
        # Each distinct call name once: cudaLaunchKernel_v7000 and cudaLaunchKernel are one call.
        frame["name"] = self.named(frame["_name"], "(unnamed call)").relabel(api_name)
        return _times(frame.drop(["_name"]))

    def nvtx(self) -> Events | None:
        """NVTX push/pop and start/end ranges (start, end, name); None without an NVTX_EVENTS table
        (nsys writes none when the program marked no range or NVTX was not traced)."""
        if NVTX_TABLE not in self.tables:
            return None
        columns = self.require(NVTX_TABLE, ("start", "end", "eventType"), "NVTX ranges")
        types = self.enum("ENUM_NSYS_EVENT_TYPE") or _NVTX_RANGE_TYPES
        wanted = sorted(k for k, v in types.items() if v in ("NvtxPushPopRange", "NvtxStartEndRange"))
        if not wanted:
            return None
        frame = self.scan(NVTX_TABLE, {"start": "start", "end": "end", "text": "text", "textId": "_text_id", "globalTid": "tid"}, columns,
                          text=("text",),
                          where=f'"eventType" IN ({", ".join(str(int(w)) for w in wanted)})')
        ids = frame["_text_id"] if "_text_id" in frame else np.full(len(frame), np.nan)
        named = self.named(ids, "(unnamed range)")
        if "text" in frame:
            # A range's own text wins over its registered string (nsys writes one or the other).
            given = frame["text"]
            union = list(dict.fromkeys([*given.categories, *named.categories]))
            given, named = given.recode(union), named.recode(union)
            named = Labels(np.where(given.codes >= 0, given.codes, named.codes), union)
        frame["name"] = named
        return _times(_fill(frame, ("tid",)).drop([c for c in ("text", "_text_id") if c in frame]))

    def host_waits(self) -> Events | None:
        """The host's waits for another process or a timer that nsys traced (--trace=osrt: BLOCKING_CALLS; start,
        end, tid), where a thread sat idle; None without an OSRT_API table."""
        if OSRT_TABLE not in self.tables or "nameId" not in self.columns(OSRT_TABLE):
            return None
        columns = self.require(OSRT_TABLE, ("start", "end", "nameId"), "OS runtime calls")
        names = ", ".join(f"'{n}'" for n in sorted(BLOCKING_CALLS))
        frame = self.scan(OSRT_TABLE, {"start": "start", "end": "end", "globalTid": "tid"}, columns,
                          where=f'"nameId" IN (SELECT id FROM "{STRINGS_TABLE}" WHERE value IN ({names}))')
        return _times(_fill(frame, ("tid",)))

    def cpu_cores(self) -> int | None:
        """The host's CPU cores as nsys recorded them (TARGET_INFO_SYSTEM_ENV, CpuCores); None where it did not, or
        wrote something that is not a count a machine has."""
        if "TARGET_INFO_SYSTEM_ENV" not in self.tables or not {"name", "value"} <= set(self.columns("TARGET_INFO_SYSTEM_ENV")):
            return None
        row = self.db.execute("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'CpuCores'").fetchone()
        text = str(row[0]).strip() if row and row[0] is not None else ""
        return int(text) if text.isascii() and text.isdigit() and 0 < int(text) <= MAX_CPU_CORES else None

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

    def gpu(self, kernels: Events) -> DeviceFacts | None:
        """TARGET_INFO_GPU's facts of the GPU that ran most kernels (its first row where none is told)."""
        wanted = ("id", "name", "smCount", "clockRate", "memoryBandwidth", "computeMajor", "computeMinor")
        if "TARGET_INFO_GPU" not in self.tables:
            return None
        have = [c for c in wanted if c in self.columns("TARGET_INFO_GPU")]
        if "name" not in have:
            return None
        rows = [dict(zip(have, r)) for r in self.db.execute(f"SELECT {', '.join(have)} FROM TARGET_INFO_GPU").fetchall()]
        if not rows:
            return None
        device = np.asarray(kernels["device"], dtype=float) if "device" in kernels and len(kernels) else np.zeros(0)
        device = device[~np.isnan(device)]
        busiest = int(np.bincount(device.astype(np.int64)).argmax()) if device.size and device.min() >= 0 and device.max() < 1 << 16 else None
        row = next((r for r in rows if r.get("id") == busiest), rows[0])

        def number(key):
            value = row.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

        major, minor = row.get("computeMajor"), row.get("computeMinor")
        cc = f"{major}.{minor}" if isinstance(major, int) and isinstance(minor, int) and 0 < major < 100 and 0 <= minor < 100 else None
        clock = number("clockRate")
        return DeviceFacts(name=str(row["name"]) if row.get("name") else None, cc=cc, sm_count=number("smCount"),
                           sm_clock_hz=float(clock) if clock else None,
                           dram_bytes_per_s=float(number("memoryBandwidth")) if number("memoryBandwidth") else None,
                           recorded_by="the capture (nsys's TARGET_INFO_GPU)")

    def device(self) -> str | None:
        if "TARGET_INFO_GPU" not in self.tables or "name" not in self.columns("TARGET_INFO_GPU"):
            return None
        names = sorted({str(r[0]) for r in self.db.execute("SELECT name FROM TARGET_INFO_GPU") if r[0]})
        return ", ".join(names) or None


_VERSION_SUFFIX = re.compile(r"(?:_v\d+)?(?:_pt(?:sz|ds))?(?:_v\d+)?$")


def api_name(raw: str) -> str:
    """``cudaLaunchKernel_v7000`` -> ``cudaLaunchKernel``; ``cudaMemcpyAsync_ptsz_v7000`` -> ``cudaMemcpyAsync``."""
    return _VERSION_SUFFIX.sub("", str(raw)) or str(raw)


def _decode(numbers: np.ndarray, labels: dict[int, str], default) -> Labels:
    """Enum values (NaN: none) as categories of their labels; ``default`` for NaN or a value not in ``labels``."""
    known = ~np.isnan(numbers)
    values = distinct(numbers[known]).astype(np.int64)
    text = [labels.get(v, default) for v in values.tolist()]
    categories = [t for t in dict.fromkeys([*text, default]) if t is not None]
    code_of = {t: i for i, t in enumerate(categories)}
    code_of[None] = -1
    codes = np.full(numbers.size, code_of[default], dtype=np.int32)
    if values.size:
        lookup = np.array([code_of[t] for t in text], dtype=np.int32)
        codes[known] = lookup[np.searchsorted(values, numbers[known].astype(np.int64))]
    return Labels(codes, categories)


def _telling(name: np.ndarray, demangled: np.ndarray, categories: list) -> np.ndarray:
    """``name`` (codes into ``categories``, which grows) with nsys's short name of a CUTLASS launch wrapper ("Kernel2")
    replaced by its operator's (kernel_names.telling_name of the demangled name): two GEMMs are two kernels."""
    from ncuwrap.core.kernel_names import WRAPPERS, telling_name

    wrappers = [i for i, c in enumerate(categories) if c in WRAPPERS]
    hit = np.isin(name, wrappers) if wrappers else np.zeros(name.size, dtype=bool)
    if not hit.any():
        return name
    out = name.copy()
    index = {c: i for i, c in enumerate(categories)}
    for code in distinct(demangled[hit]).tolist():
        told = telling_name(categories[code])
        if told not in index:
            index[told] = len(categories)
            categories.append(told)
        out[hit & (demangled == code)] = index[told]
    return out


def _small(values: np.ndarray) -> np.ndarray:
    """Integers as int32 where they fit (half the memory of a column a million rows long), else as given."""
    if values.dtype.kind == "f" and np.isnan(values).any():
        return values
    if values.size and (values.min() < -2**31 or values.max() >= 2**31):
        return values
    return values.astype(np.int32)


def _fill(frame: Events, names) -> Events:
    for name in names:
        if name not in frame:
            frame[name] = np.nan
    return frame


# Times are ns on the capture's clock (session-relative, or since the epoch: 1.7e18); past 2**62
# they are no time, and end - start could overflow.
MAX_TIME = 2**62


def _times(frame: Events) -> Events:
    """Sort by start; drop events without a start/end, that end before they start, or off the clock."""
    start, end = np.asarray(frame["start"], dtype=float), np.asarray(frame["end"], dtype=float)
    with np.errstate(invalid="ignore"):
        keep = ~np.isnan(start) & ~np.isnan(end) & (end >= start) & (start >= 0) & (end <= MAX_TIME)
    if not keep.all():
        frame = frame.rows(keep)
    frame["start"], frame["end"] = np.asarray(frame["start"], dtype=np.int64), np.asarray(frame["end"], dtype=np.int64)
    order = np.lexsort((frame["end"], frame["start"]))
    if (order == np.arange(order.size)).all():
        return frame
    return frame.rows(order)
