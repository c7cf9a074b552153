"""The normalized form every input is read into: one row per profiled launch."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # the model's names load without pandas or numpy (the .ncu-rep reader's child builds RuleResults)
    import numpy as np
    import pandas as pd

NCU_REP_MAGIC = b"NVR\x00"  # the first bytes of a .ncu-rep (its framing: ncuwrap.kernel.reading.ncu_rep_format)

# Columns describing a launch; every other column of Profile.frame is an ncu metric (its name has "__").
META_COLUMNS = (
    "launch_id",
    "name",
    "display_name",
    "mangled_name",
    "process_id",
    "process_name",
    "device_id",
    "cc",
    "grid",
    "block",
    "stream",
)


@dataclass(frozen=True)
class Source:
    """Where a profile came from and what recorded it."""

    path: str
    kind: str  # ncu-rep | ncu-csv-raw | ncu-csv-details
    ncu_version: str | None = None
    device: str | None = None
    compute_capability: str | None = None
    command_line: str | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class RuleResult:
    """One result of Nsight Compute's own rules for a launch, as the report or its details page has it."""

    rule: str  # the rule's identifier, e.g. UncoalescedGlobalAccess
    section: str
    kind: str  # OPT (optimization), WRN, INF, ERR, OK
    speedup_type: str | None  # local | global | None
    estimated_speedup: float | None  # %
    message: str


@dataclass(frozen=True)
class ReadFallback:
    """Launches of a .ncu-rep that NVIDIA's reader (``ncu_report``) read because ncuwrap's own reader of the file
    format did not expect how the file holds them: ``launches`` (their IDs; empty: the whole report) and
    ``reasons`` (one each, or one for the whole report: what the reader met, for ``--debug``), of ``total``
    launches. The verdicts are the same; the read takes more memory and time."""

    launches: tuple[int, ...]
    reasons: tuple[str, ...]
    total: int

    @property
    def whole(self) -> bool:
        return not self.launches

    def note(self) -> str:
        """One line for the outputs' notes."""
        if self.whole:
            return ("read by NVIDIA's ncu_report: ncuwrap's own reader did not expect how this report is laid out (more time and "
                    "memory; --debug says what)")
        count = len(self.launches)
        ids = ", ".join(str(i) for i in self.launches[:5]) + (", ..." if count > 5 else "")
        return (f"launch{'es' if count > 1 else ''} {ids} ({count} of {self.total}) read by NVIDIA's ncu_report: ncuwrap's own reader "
                f"did not expect how the report holds {'them' if count > 1 else 'it'} (--debug says what)")

    def details(self) -> list[str]:
        """What the reader met: one line for the whole report, or one per launch (``--debug``)."""
        if self.whole:
            return [f"read wholly by NVIDIA's ncu_report: {self.reasons[0]}"]
        return [f"launch {i} read by NVIDIA's ncu_report: {why}" for i, why in zip(self.launches, self.reasons)]


class LaunchTable(ABC):
    """A profile's columns, one row per launch, as the diagnosis reads them: a metric's numbers, a column's
    values, the first value of a column. :class:`FrameTable` reads a pandas frame; a reader may give its
    own columns instead (the raw CSV's :class:`ColumnTable`), so that a diagnosis imports no pandas."""

    columns: list[str]

    @abstractmethod
    def __len__(self) -> int:
        ...

    @abstractmethod
    def __contains__(self, name: str) -> bool:
        ...

    @abstractmethod
    def numbers(self, name: str) -> np.ndarray:
        """The column as floats (NaN where a cell is no number)."""
        ...

    @abstractmethod
    def values(self, name: str) -> list:
        """The column's values as Python objects (what the frame's ``tolist()`` gives)."""
        ...

    @abstractmethod
    def first(self, name: str):
        """The column's first value that is not missing (None, NaN), or None."""
        ...

    @abstractmethod
    def frame(self) -> pd.DataFrame:
        """The columns as a pandas frame (``Profile.frame``)."""
        ...


class FrameTable(LaunchTable):
    """The columns of a pandas frame."""

    def __init__(self, frame: pd.DataFrame):
        self._frame = frame
        self.columns = list(frame.columns)

    def __len__(self) -> int:
        return len(self._frame)

    def __contains__(self, name: str) -> bool:
        return name in self._frame.columns

    def numbers(self, name: str) -> np.ndarray:
        values = self._frame[name]
        if values.dtype == object:
            import pandas as pd

            return pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
        return values.to_numpy(dtype=float)

    def values(self, name: str) -> list:
        return self._frame[name].tolist()

    def first(self, name: str):
        present = self._frame[name].dropna()
        return present.iloc[0] if len(present) else None

    def frame(self) -> pd.DataFrame:
        return self._frame


class ColumnTable(LaunchTable):
    """Columns already split out by a reader: ``others`` by name as lists of Python values (texts, None,
    launch IDs), the rest rows of ``numbers`` (floats, one row per name of ``numeric`` that ``others`` has
    not, launches along it); the pandas frame, when asked, is ``build()``'s (the reader's own, so that it is
    the frame the reader would have made)."""

    def __init__(self, columns: list[str], numbers: np.ndarray, numeric: list[str], others: dict[str, list], build: Callable[[], pd.DataFrame]):
        self.columns = columns
        self._numbers = numbers
        self._numbers.flags.writeable = False  # its rows are handed out, as a frame's columns are (read-only)
        self._row = {name: i for i, name in enumerate(numeric) if name not in others}
        self._others = others
        self._build = build
        self._frame: pd.DataFrame | None = None
        self._n = numbers.shape[1]

    def __len__(self) -> int:
        return self._n

    def __contains__(self, name: str) -> bool:
        return name in self._row or name in self._others

    def numbers(self, name: str) -> np.ndarray:
        row = self._row.get(name)
        if row is not None:
            return self._numbers[row]
        return FrameTable(self.frame()).numbers(name)  # a text column as numbers: pandas' parse (rarely asked)

    def values(self, name: str) -> list:
        row = self._row.get(name)
        return self._numbers[row].tolist() if row is not None else list(self._others[name])

    def first(self, name: str):
        row = self._row.get(name)
        if row is not None:
            import numpy as np

            present = self._numbers[row][~np.isnan(self._numbers[row])]
            return present[0] if len(present) else None
        return next((v for v in self._others[name] if v is not None and v == v), None)

    def frame(self) -> pd.DataFrame:
        if self._frame is None:
            self._frame = self._build()
        return self._frame

    def __reduce__(self):
        # Pickled (a Profile cached by a caller) as its frame: the reader's builder is a closure.
        return FrameTable, (self.frame(),)


@dataclass(init=False)
class Profile:
    """A profile's launches: meta columns plus ncu metrics in base units (see ncuwrap.kernel.reading.units),
    as a :class:`LaunchTable` (``table``) and, built from it when first asked, a pandas frame (``frame``)."""

    source: Source
    table: LaunchTable
    units: dict[str, str]
    # Nsight Compute's own rule results per launch ID, where the input carries them (a .ncu-rep, a
    # details-page CSV, or --ncu-rules).
    rules: dict[int, tuple[RuleResult, ...]]
    # Per-instruction counters per launch ID (ingest.source_counters.SourceCounters), where the report
    # carries the SourceCounters section or a source page was given beside a CSV export.
    sources: dict
    # Why a launch has none though a source page was given (launch ID -> one sentence).
    source_gaps: dict
    # The launches of a .ncu-rep read by NVIDIA's reader instead of ncuwrap's (None: none).
    fallback: ReadFallback | None

    def __init__(self, source: Source, frame: pd.DataFrame | None = None, units: dict[str, str] | None = None,
                 rules: dict[int, tuple[RuleResult, ...]] | None = None, sources: dict | None = None, source_gaps: dict | None = None,
                 *, table: LaunchTable | None = None, fallback: ReadFallback | None = None):
        if (frame is None) == (table is None):
            raise TypeError("a Profile is given either its frame or its table")
        self.source = source
        self.table = table if table is not None else FrameTable(frame)
        self.units = units if units is not None else {}
        self.rules = rules if rules is not None else {}
        self.sources = sources if sources is not None else {}
        self.source_gaps = source_gaps if source_gaps is not None else {}
        self.fallback = fallback

    @property
    def frame(self) -> pd.DataFrame:
        return self.table.frame()

    @frame.setter
    def frame(self, frame: pd.DataFrame) -> None:
        self.table = FrameTable(frame)

    def metric_names(self) -> list[str]:
        return [c for c in self.table.columns if c not in META_COLUMNS]
