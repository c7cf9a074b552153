"""The normalized form every input is read into: one row per profiled launch."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the model's names load without pandas (the .ncu-rep reader's child builds RuleResults)
    import pandas as pd

NCU_REP_MAGIC = b"NVR\x00"  # the first bytes of a .ncu-rep (its framing: ncuwrap.kernel.reading.ncu_rep)

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


@dataclass
class Profile:
    """A profile as a DataFrame: meta columns plus ncu metrics in base units (see ncuwrap.kernel.reading.units)."""

    source: Source
    frame: pd.DataFrame
    units: dict[str, str] = field(default_factory=dict)
    # Nsight Compute's own rule results per launch ID, where the input carries them (a .ncu-rep, a
    # details-page CSV, or --ncu-rules).
    rules: dict[int, tuple[RuleResult, ...]] = field(default_factory=dict)
    # Per-instruction counters per launch ID (ingest.source_counters.SourceCounters), where the report
    # carries the SourceCounters section or a source page was given beside a CSV export.
    sources: dict = field(default_factory=dict)
    # Why a launch has none though a source page was given (launch ID -> one sentence).
    source_gaps: dict = field(default_factory=dict)

    def metric_names(self) -> list[str]:
        return [c for c in self.frame.columns if c not in META_COLUMNS]
