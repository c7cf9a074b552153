"""The timeline model: a capture as read (:class:`TimelineData`, :class:`RunInfo`), the vocabulary of its events
(the GPU work's categories, a copy's by its direction, with their labels, glyphs and colours), and what the
analysis measured (:class:`Timeline`), typed, with the JSON form of its parts.

Every reader (:mod:`ncuwrap.timeline.readers`) gives a :class:`TimelineData`; every later stage and every
renderer takes its names of categories from here. Times are integers in ns, percentages are of the traced
window unless named otherwise. The verdict of the rules is added by :mod:`ncuwrap.timeline.diagnosis`.
This module imports no numpy (the readers' registry, which the command line asks first, names its types).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ncuwrap.core import numbers
from ncuwrap.core.numbers import clean

if TYPE_CHECKING:
    from ncuwrap.core.peaks import DeviceFacts
    from ncuwrap.timeline.events import Events

# --- the event vocabulary ------------------------------------------------------------------------------------

# A copy's category, by its direction.
COPY_CATEGORIES = ("memcpy_htod", "memcpy_dtoh", "memcpy_dtod", "memcpy_other")
# The breakdown's categories, in attribution order (see analysis.breakdown).
CATEGORIES = ("kernel", *COPY_CATEGORIES, "memset", "idle")
CATEGORY_LABELS = {"kernel": "kernels", "memcpy_htod": "H2D copies", "memcpy_dtoh": "D2H copies", "memcpy_dtod": "D2D copies",
                   "memcpy_other": "other copies", "memset": "memsets", "idle": "GPU idle"}
# A copy's direction in a short label (the copies' table, the gaps' neighbours).
COPY_LABELS = {"memcpy_htod": "H2D", "memcpy_dtoh": "D2H", "memcpy_dtod": "D2D", "memcpy_other": "other copies"}
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
# A rank's breakdown (ncuwrap.timeline.ranks.model) splits kernels into compute (drawn as kernels are) and
# exposed NCCL communication. How the renderers draw each category: a glyph in the text bar, a colour in
# the pictures, a style in the terminal.
GLYPHS = {"kernel": "#", "compute": "#", "nccl": "%", "memcpy_htod": ">", "memcpy_dtoh": "<", "memcpy_dtod": "=", "memcpy_other": "~",
          "memset": "-", "idle": "."}
COLORS = {"kernel": "#4e79a7", "compute": "#4e79a7", "nccl": "#edc948", "memcpy_htod": "#f28e2b", "memcpy_dtoh": "#e15759",
          "memcpy_dtod": "#76b7b2", "memcpy_other": "#b07aa1", "memset": "#59a14f", "idle": "#d4d0cc"}
TERMINAL_STYLES = {"kernel": "blue", "compute": "blue", "nccl": "yellow", "memcpy_htod": "dark_orange", "memcpy_dtoh": "red",
                   "memcpy_dtod": "cyan", "memcpy_other": "magenta", "memset": "green", "idle": "bright_black"}
API_CATEGORIES = ("launch", "sync", "malloc", "memcpy", "memset", "other")

# --- a capture as read ---------------------------------------------------------------------------------------

# A kernel table's launch configuration columns (-1: the capture does not say).
LAUNCH_DIMS = ("gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ")


@dataclass
class TimelineData:
    """The raw events of one capture, one table of columns per kind; times in ns on the capture's clock.
    Every timeline reader (ncuwrap.timeline.readers) gives one, whatever wrote the file."""

    path: Path
    kernels: Events  # start, end, name, demangled, mangled, device, stream, correlation, gridX..blockZ (-1: unknown)
    copies: Events  # start, end, bytes, category, direction, host_kind, pageable, device, stream, correlation
    memsets: Events  # start, end, bytes, device, stream, correlation
    api: Events | None  # start, end, name, tid, correlation (None: the CUDA API was not traced)
    nsys_version: str | None = None
    export_schema: str | None = None
    device: str | None = None
    notes: list[str] = field(default_factory=list)  # what was missing and how it was read
    unknown: dict[str, str] = field(default_factory=dict)  # quantity group -> why it is unknown
    nvtx: Events | None = None  # NVTX ranges: start, end, name, tid (None: no NVTX_EVENTS table); the steps are among them
    # What launched the kernels (ncuwrap.timeline.launched_from), None where the capture does not hold it:
    # ops: start, end, name, tid, seq (autograd sequence number), fwd_tid (the forward thread of a backward op),
    #   external_id (the id Kineto gives the op's launches too) (-1: none), and from Kineto user (a
    #   record_function range), from nsys op_id (PyTorch's, -1: none); nsys's autograd-nvtx ranges
    #   (ncuwrap.timeline.readers.pytorch_nvtx) or Kineto's cpu_op;
    # frames: Python frames (Kineto only): start, end, name ("file.py(first line): function"), tid, python_id, parent_id.
    ops: Events | None = None
    frames: Events | None = None
    # nsys's autograd-shapes-nvtx ranges only: which op made each op's inputs (op: the consumer's row in ops, input: its
    # position, producer: the op_id that made it, output: which of its outputs), None where no range names one.
    op_inputs: Events | None = None
    # Read only for a multi-rank analysis (``read(path, ranks=True)``):
    run: RunInfo | None = None  # what identifies the run the capture belongs to
    launch_index: object = field(default=None, repr=False, compare=False)  # ncuwrap.timeline.launches.api_starts' cache
    # The program that wrote the file, as the reports name it ("nsys 2025.3.2.0", "PyTorch profiler (Kineto)");
    # None: the reader's declared producer (ncuwrap.timeline.readers).
    producer: str | None = None
    # The host's waits for other processes (start, end, tid: OS runtime calls, ncuwrap.timeline.readers.nsys_sqlite.BLOCKING_CALLS); None:
    # not traced (nsys without --trace=osrt, a PyTorch profiler trace).
    host_waits: Events | None = None
    # What the capture says of its GPU (SMs, clock, memory bandwidth, compute capability; None: nothing), for the
    # peaks the op limits compare with (ncuwrap.core.peaks).
    gpu: DeviceFacts | None = None
    # The host's CPU cores the capture records (nsys: TARGET_INFO_SYSTEM_ENV's CpuCores); None: not recorded (a PyTorch
    # profiler trace) or not a count. The what-if's host_parallel sizes its workers by them.
    cpu_cores: int | None = None


def launch_dims(frame: Events, row: int, what: str) -> list[int] | None:
    """The grid or block (``what``) of row ``row`` of a kernel table; None where the export does not say."""
    columns = [f"{what}{axis}" for axis in "XYZ"]
    if not all(c in frame for c in columns):
        return None
    values = [int(frame[c][row]) for c in columns]
    return None if min(values) < 0 else values


@dataclass(frozen=True)
class RunInfo:
    """What the export says about the captured run: a set of rank reports must agree on the program and
    start at about the same time (None: the export does not say)."""

    hostname: str | None
    command: str | None  # the launched program (META_DATA_CAPTURE PROCESS_0:COMMAND)
    start_utc_ns: int | None  # the session's start, ns since the epoch (TARGET_INFO_SESSION_START_TIME)


# --- what the analysis measured ------------------------------------------------------------------------------

pct = numbers.pct  # a share of the window, of a step's period...


# Which line of a Python frame a place shows: torch.profiler names a frame by its function's first line.
FIRST_LINE = "function's first line"


@dataclass(frozen=True)
class LaunchedFrom:
    """Where a kernel was launched from (the place holding most of its time: ``share_pct``)."""

    op: str | None  # the innermost op enclosing the launch (None: none, or a CUDA graph replay)
    forward_op: str | None  # for a backward kernel, the forward op whose backward launched it
    file: str | None  # the user's innermost Python frame (None: the capture has no frames, or none is the user's)
    line: int | None
    function: str | None
    via: str  # "stack at launch", "forward op of a backward kernel" or "unknown" (ncuwrap.timeline.launched_from)
    share_pct: float  # of the kernel's time launched from this place
    line_is: str | None = None  # which line ``line`` is (FIRST_LINE), None without a frame

    @property
    def partial(self) -> bool:
        """Whether some of the kernel's time was launched from elsewhere."""
        return self.share_pct < 100.0

    def to_json(self) -> dict:
        return {"op": self.op, "forward_op": self.forward_op, "file": self.file, "line": self.line, "function": self.function,
                "via": self.via, "share_pct": clean(self.share_pct), "line_is": self.line_is}


@dataclass(frozen=True)
class HostTime:
    """The window's host time spent in one user function (its own, and that of the library code it calls)."""

    file: str
    line: int
    function: str
    ns: int
    pct: float  # of the window
    line_is: str = FIRST_LINE

    def to_json(self) -> dict:
        return {"file": self.file, "line": self.line, "function": self.function, "ns": self.ns, "pct": clean(self.pct),
                "line_is": self.line_is}


@dataclass(frozen=True)
class KernelStats:
    """Every launch of one kernel (by demangled name) in the window: count, times, share."""

    name: str
    demangled: str
    count: int
    total_ns: int
    mean_ns: float
    median_ns: float
    min_ns: int
    max_ns: int
    share_pct: float  # of the sum of all kernel durations
    grid: list[int] | None
    block: list[int] | None
    launched_from: LaunchedFrom | None = None  # the top kernels' op and Python line, where the capture holds ops or frames

    def to_json(self) -> dict:
        return {"name": self.name, "demangled": self.demangled, "count": self.count, "total_ns": self.total_ns,
                "mean_ns": clean(self.mean_ns), "median_ns": clean(self.median_ns), "min_ns": self.min_ns, "max_ns": self.max_ns,
                "share_pct": clean(self.share_pct), "grid": self.grid, "block": self.block,
                "launched_from": self.launched_from.to_json() if self.launched_from is not None else None}


@dataclass(frozen=True)
class CopyStats:
    """The copies of one kind (host to device, ...) in the window: count, bytes, time, rate and how many were pageable."""
    category: str  # memcpy_htod ...
    count: int
    bytes: int
    total_ns: int
    gbps: float
    pageable_count: int | None  # None: memory kinds unknown
    pageable_bytes: int | None

    def to_json(self) -> dict:
        return {"kind": self.category, "label": CATEGORY_LABELS[self.category], "count": self.count, "bytes": self.bytes,
                "total_ns": self.total_ns, "gbps": clean(self.gbps), "pageable_count": self.pageable_count,
                "pageable_bytes": self.pageable_bytes}


@dataclass(frozen=True)
class ApiStats:
    """One CUDA API function's calls in the window: its category, count and time."""
    name: str
    category: str
    calls: int
    total_ns: int
    median_ns: float

    def to_json(self) -> dict:
        return {"name": self.name, "category": self.category, "calls": self.calls, "total_ns": self.total_ns,
                "median_ns": clean(self.median_ns)}


@dataclass(frozen=True)
class Gap:
    """A stretch of the window with no GPU activity; ``at_ns`` is from the window's start."""

    at_ns: int
    duration_ns: int
    cause: str  # the CUDA call the host was in, 'host code (no CUDA call)', or 'unknown (CUDA API not traced)'

    def to_json(self) -> dict:
        return {"at_ns": self.at_ns, "duration_ns": self.duration_ns, "cause": self.cause}


@dataclass(frozen=True)
class AmdahlRow:
    """The end-to-end time if the kernels were some factor faster (Amdahl's law), a row of the timeline's what-if table."""
    kernel_speedup: float | None  # None: kernels take no time (the ceiling)
    end_to_end_ns: float
    end_to_end_speedup: float
    kernel_ns: float = 0.0  # the kernels' share of end_to_end_ns at that speed-up

    @property
    def label(self) -> str:
        return "kernels take no time" if self.kernel_speedup is None else f"kernels {self.kernel_speedup:g}x faster"

    def to_json(self) -> dict:
        return {"kernel_speedup": self.kernel_speedup, "label": self.label, "end_to_end_ns": clean(self.end_to_end_ns),
                "end_to_end_speedup": clean(self.end_to_end_speedup)}


@dataclass(frozen=True)
class Segment:
    """One category of the breakdown: its time and share of the window."""

    category: str
    label: str
    ns: int
    pct: float


@dataclass(frozen=True)
class ApiCategory:
    """The CUDA API's calls of one category (launch, sync, ...) and their share of the window (Timeline.api_rows)."""
    category: str
    calls: int
    total_ns: int
    pct: float  # of the window


@dataclass(frozen=True)
class Timeline:
    """What the capture shows, before any rule is applied."""

    window_start_ns: int
    window_end_ns: int
    breakdown_ns: dict[str, int]  # CATEGORIES, summing to the window
    busy_ns: dict[str, int]  # each category's own time, overlaps included
    api: tuple[ApiStats, ...]  # by total time, largest first; empty when the API was not traced
    api_traced: bool
    copies: tuple[CopyStats, ...]
    memsets: dict
    kernels: tuple[KernelStats, ...]  # every distinct kernel, by total time
    kernel_gaps: dict
    startup: Gap
    gaps: tuple[Gap, ...]  # the longest idle gaps after start-up, longest first
    amdahl: tuple[AmdahlRow, ...]
    metrics: dict  # the values timeline rules read (ncuwrap.timeline.metrics)
    unknown: dict[str, str]  # metric -> why it is unknown
    devices: int = 1
    steps: object = None  # ncuwrap.timeline.steps.Steps (None: no steps); with them, the window is the steady steps'
    # Without steps: "active", the window from the first GPU work's launch (launches.active_window) to the end of the last, and
    # ``startup`` the start-up left out before it; "capture", the whole traced span.
    scope: str = "capture"
    host_time: tuple[HostTime, ...] | None = None  # the window's host time by user function (None: no Python frames)
    tracer: object = None  # ncuwrap.timeline.tracer.TracerCost of the steady steps (None: no steps, or the CUDA API not traced)
    op_limits: object = None  # ncuwrap.timeline.oplimits.model.OpLimits of the steady steps (None: no steps, or no op shapes recorded)

    whatif: object = None  # ncuwrap.timeline.whatif.model.WhatIf: the steady steps replayed (None: no steps, or the CUDA API not traced)

    def what_if(self) -> dict | None:
        """JSON ``what_if``: the steady steps replayed on their dependency graph and under each remedy; None
        without steps or without the CUDA API traced."""
        return None if self.whatif is None else self.whatif.to_json()

    @property
    def window_ns(self) -> int:
        return self.window_end_ns - self.window_start_ns

    @property
    def idle_ns(self) -> int:
        """The window's time with no GPU work at all."""
        return self.breakdown_ns["idle"]

    @property
    def gpu_busy_ns(self) -> int:
        """The window's time with some GPU work (any kernel, copy or memset): all of it but :attr:`idle_ns`."""
        return self.window_ns - self.idle_ns

    def top_kernels(self, n: int = 10) -> tuple[KernelStats, ...]:
        return self.kernels[:n]

    @property
    def kernel_share_pct(self) -> float:
        return pct(self.breakdown_ns["kernel"], self.window_ns)

    def amdahl_at(self, kernel_speedup: float | None) -> AmdahlRow | None:
        """The Amdahl row of ``kernel_speedup`` (None: kernels taking no time, the ceiling)."""
        return next((row for row in self.amdahl if row.kernel_speedup == kernel_speedup), None)

    def segments(self, *, all_categories: bool = False) -> list[Segment]:
        """The breakdown in attribution order; empty categories (other than kernels and idle) left out
        unless ``all_categories``."""
        return [Segment(c, CATEGORY_LABELS[c], self.breakdown_ns[c], pct(self.breakdown_ns[c], self.window_ns))
                for c in CATEGORIES if self.breakdown_ns[c] or all_categories or c in ("kernel", "idle")]

    def api_rows(self) -> list[ApiCategory]:
        """The CUDA API categories with calls, largest time first."""
        rows = [ApiCategory(c, v["calls"], v["total_ns"], pct(v["total_ns"], self.window_ns))
                for c, v in self.api_categories().items() if v["calls"]]
        return sorted(rows, key=lambda r: -r.total_ns)

    def api_categories(self) -> dict[str, dict]:
        out = {c: {"calls": 0, "total_ns": 0} for c in API_CATEGORIES}
        for call in self.api:
            out[call.category]["calls"] += call.calls
            out[call.category]["total_ns"] += call.total_ns
        return out
