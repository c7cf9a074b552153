"""Timeline analysis on the real H200 nsys captures: full outputs against golden files, the numbers
against nsys's own ``nsys stats`` reports of the same capture, the Amdahl table by hand, and how
overlapping activity is attributed."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ncuwrap.render import Format, render
from ncuwrap.timeline.diagnosis import diagnose_timeline
from ncuwrap.timeline.analysis import _ranked, analyze, api_category, clip, covered, length, merge, union
from ncuwrap.timeline.events import Events, Labels
from ncuwrap.timeline.model import CATEGORIES
from ncuwrap.timeline.model import TimelineData
from ncuwrap.timeline.readers.nsys_sqlite import api_name
from ncuwrap.timeline.options import TimelineOptions
from tests.conftest import DATA, H200, golden, golden_json, whole_capture

NSYS = H200 / "nsys"
BENCH = NSYS / "bench.sqlite"
TRANSPOSE = NSYS / "transpose.sqlite"
CAPTURED = DATA / "h200_ncuwrap" / "nsys"


@pytest.fixture(scope="module")
def bench():
    return diagnose_timeline(BENCH)


@pytest.fixture(scope="module")
def bench_whole():
    """The whole capture, start-up included (no steps): what nsys stats sums over."""
    return whole_capture(BENCH)


@pytest.mark.parametrize("path", [BENCH, TRANSPOSE, CAPTURED / "launch_sync_each.sqlite.gz", CAPTURED / "launch_graph.sqlite.gz",
                                  CAPTURED / "e2e.sqlite"], ids=lambda p: p.stem)
def test_full_json_matches_golden(path):
    golden_json(f"timeline_{path.name.split('.')[0]}.json", diagnose_timeline(path).to_json())


def test_markdown_matches_golden(bench):
    golden("timeline_bench.md", render(bench, Format.markdown))


def test_table_matches_golden(bench):
    """The terminal table at the test run's 100 columns (conftest sets COLUMNS)."""
    text = render(bench, Format.table)
    assert max(len(line) for line in text.splitlines()) <= 100
    golden("timeline_bench_table.txt", text)


def test_html_matches_golden(bench):
    """The whole page: no time stamp or absolute path in it, so the same capture gives the same bytes."""
    golden("timeline_bench.html", render(bench, Format.html))


def test_vecadd_copies_are_the_dominant_cost(bench_whole):
    """The acceptance case: the 64 MiB pageable copies (~8 ms each) dwarf the 64 us kernel. Over the whole
    capture the GPU idles 80% of the time, so the verdict is the host's (issue 36: no 'transfer' over a
    mostly idle window); the copies are the findings."""
    t = bench_whole.timeline
    assert bench_whole.bound == "launch" and t.metrics["gpu_busy_pct"] < 50
    assert t.breakdown_ns["memcpy_htod"] + t.breakdown_ns["memcpy_dtoh"] > t.breakdown_ns["kernel"]
    ids = [f.id for f in bench_whole.findings]
    assert {"memcpy_dominates", "pageable_memcpy", "serialized_copies", "kernels_not_the_bottleneck"} <= set(ids)
    assert "tiny_kernels" not in ids
    pageable = next(f for f in bench_whole.findings if f.id == "pageable_memcpy")
    assert pageable.severity == "high"
    assert pageable.evidence["pageable_memcpy_count"] == 4
    assert pageable.evidence["pageable_memcpy_bytes"] == 4 * 64 * 1024 * 1024
    assert bench_whole.timeline.metrics["kernel_ceiling"] == pytest.approx(1.08, abs=0.005)


def test_breakdown_agrees_with_nsys_stats(bench_whole):
    """nsys's own per-kernel and per-copy sums (bench_st_*.csv, from 'nsys stats' on the same capture).
    One stream, nothing overlaps: the exposed times equal the sums."""
    kern = pd.read_csv(NSYS / "bench_st_cuda_gpu_kern_sum.csv")
    mem = pd.read_csv(NSYS / "bench_st_cuda_gpu_mem_time_sum.csv").set_index("Operation")
    t = bench_whole.timeline
    assert t.breakdown_ns["kernel"] == kern["Total Time (ns)"].sum() == 14_790_395
    assert t.breakdown_ns["memcpy_htod"] == mem.loc["[CUDA memcpy Host-to-Device]", "Total Time (ns)"] == 16_134_961
    assert t.breakdown_ns["memcpy_dtoh"] == mem.loc["[CUDA memcpy Device-to-Host]", "Total Time (ns)"] == 9_674_622
    by_name = {k.name: k for k in t.kernels}
    for _, row in kern.iterrows():
        name = row["Name"].split("(")[0]
        assert by_name[name].count == row["Instances"]
        assert by_name[name].total_ns == row["Total Time (ns)"]
        assert by_name[name].median_ns == row["Med (ns)"]


def test_api_time_by_call_agrees_with_nsys_stats(bench_whole):
    api = pd.read_csv(NSYS / "bench_st_cuda_api_sum.csv")
    ours = {a.name: a for a in bench_whole.timeline.api}
    for _, row in api.iterrows():
        assert ours[row["Name"]].calls == row["Num Calls"], row["Name"]
        assert ours[row["Name"]].total_ns == row["Total Time (ns)"], row["Name"]
    cats = bench_whole.timeline.api_categories()
    assert cats["launch"] == {"calls": 52, "total_ns": 531_298}
    assert cats["sync"] == {"calls": 44, "total_ns": 11_553_431 + 3_371_977}  # cudaEventSynchronize + cudaDeviceSynchronize
    assert cats["malloc"]["calls"] == 6  # 3 cudaMalloc + 3 cudaFree


@pytest.mark.parametrize("path", [BENCH, TRANSPOSE])
def test_breakdown_partitions_the_window(path):
    t = diagnose_timeline(path).timeline
    assert list(t.breakdown_ns) == list(CATEGORIES)
    assert sum(t.breakdown_ns.values()) == t.window_ns
    assert all(v >= 0 for v in t.breakdown_ns.values())


def test_amdahl_by_hand(bench_whole):
    # The window: the first CUDA call (cuModuleGetLoadingMode at 415,025,520 ns) to the end of the last
    # one (cudaFree at 614,660,163 ns); the kernels: 26 x strided_add + 26 x coalesced_add, 14,790,395 ns.
    window, kernels = 614_660_163 - 415_025_520, 14_790_395
    assert bench_whole.window_ns == window
    rows = {row.kernel_speedup: row for row in bench_whole.timeline.amdahl}
    assert sorted(k for k in rows if k) == [2.0, 4.0, 10.0]
    for s in (2, 4, 10):
        assert rows[float(s)].end_to_end_ns == pytest.approx(window - kernels + kernels / s)
        assert rows[float(s)].end_to_end_speedup == pytest.approx(window / (window - kernels + kernels / s))
    assert rows[None].end_to_end_ns == window - kernels
    assert rows[None].end_to_end_speedup == pytest.approx(199_634_643 / 184_844_248)  # 1.0800
    assert rows[4.0].end_to_end_speedup == pytest.approx(1.0588, abs=1e-4)
    doc = bench_whole.to_json()["amdahl"]
    assert [r["kernel_speedup"] for r in doc] == [2.0, 4.0, 10.0, None]
    assert [r["end_to_end_speedup"] for r in doc] == [1.0385, 1.0588, 1.0714, 1.08]


def test_kernel_gaps_and_startup(bench_whole):
    gaps = bench_whole.timeline.kernel_gaps
    assert gaps["count"] == 51
    # The longest: from the single strided_add check (ends 577,720,464) to the first warm-up launch (599,424,890).
    assert gaps["max_ns"] == 599_424_890 - 577_720_464
    startup = bench_whole.timeline.startup
    # First CUDA call to the first GPU activity (the H2D copy at 540,278,258), mostly the first cudaMalloc.
    assert startup.duration_ns == 540_278_258 - 415_025_520
    assert startup.cause == "cudaMalloc"


def test_transpose_capture():
    t = whole_capture(TRANSPOSE).timeline
    assert [k.name for k in t.kernels] == ["transposeNaive", "transposeShared", "copyKernel", "transposePadded"]
    assert all(k.count == 55 for k in t.kernels)
    d = diagnose_timeline(TRANSPOSE, timeline=TimelineOptions(steps="none"))
    # Four 64 MiB pageable read-backs against 24 ms of kernels, in a window the GPU idles 77% of (start-up
    # left out): the host limits it, and the copies are the first findings.
    assert (d.bound, d.limiter) == ("launch", "host code (no CUDA call)") and d.timeline.scope == "active"
    assert [f.id for f in d.findings][:2] == ["memcpy_dominates", "pageable_memcpy"]


def _frame(rows, **extra):
    frame = Events({"start": np.array([r[0] for r in rows], dtype=np.int64), "end": np.array([r[1] for r in rows], dtype=np.int64)},
                   n=len(rows))
    for key, value in extra.items():
        frame[key] = Labels.of([value] * len(rows)) if isinstance(value, str) else value
    return frame


def _data(kernels, copies, api=None):
    k = _frame(kernels, name="k", demangled="k", device=0, stream=7, correlation=np.nan, grid=None, block=None)
    c = _frame(copies, bytes=1 << 20, device=0, stream=8, correlation=np.nan, category="memcpy_htod", direction="HTOD",
               host_kind="pinned", pageable=0.0)
    m = _frame([], bytes=0, device=0, stream=0)
    return TimelineData(path=None, kernels=k, copies=c, memsets=m, api=api)


def test_overlap_goes_to_the_kernel_and_each_instant_counts_once():
    # Two concurrent kernels [0,10) and [5,15); a copy [10,30) half under the second kernel; idle [30,40).
    api = Events({"start": [0], "end": [40], "name": Labels.of(["cudaStreamSynchronize"]), "tid": [1], "correlation": [1]})
    t = analyze(_data([(0, 10), (5, 15)], [(10, 30)], api))
    assert t.window_ns == 40
    assert t.breakdown_ns == {"kernel": 15, "memcpy_htod": 15, "memcpy_dtoh": 0, "memcpy_dtod": 0, "memcpy_other": 0,
                              "memset": 0, "idle": 10}
    assert t.busy_ns["memcpy_htod"] == 20
    assert t.metrics["memcpy_overlap_pct"] == pytest.approx(25.0)  # 5 of the copy's 20 ns ran under a kernel
    assert t.metrics["kernel_sum_ns"] == 20  # durations still add up per kernel
    rows = {r.kernel_speedup: r for r in t.amdahl}
    assert rows[None].end_to_end_ns == 25 and rows[2.0].end_to_end_ns == pytest.approx(32.5)


def test_window_without_api_trace_is_the_gpu_activity():
    t = analyze(_data([(100, 110)], [(120, 150)]))
    assert (t.window_start_ns, t.window_end_ns) == (100, 150)
    assert t.breakdown_ns["idle"] == 10
    assert math.isnan(t.metrics["launch_calls"]) and "launch_calls" in t.unknown


def test_merge_and_union():
    s, e = merge([5, 0, 20, 8], [9, 6, 25, 12])
    assert s.tolist() == [0, 20] and e.tolist() == [12, 25]
    s, e = union((np.array([0]), np.array([3])), (np.array([3]), np.array([4])))
    assert s.tolist() == [0] and e.tolist() == [4]  # touching intervals join


_EVENTS = st.lists(st.tuples(st.integers(-50, 200), st.integers(0, 60)), max_size=40)


@settings(max_examples=400, deadline=None)
@given(events=_EVENTS, bounds=st.tuples(st.integers(-80, 260), st.integers(-80, 260)), sort=st.booleans())
def test_covered_is_the_merged_intervals_clipped(events, bounds, sort):
    """covered() (no intervals built) gives what merge, clip and length give, sorted by start or not."""
    if sort:
        events = sorted(events)
    starts = np.array([s for s, _ in events], dtype=np.int64)
    ends = starts + np.array([d for _, d in events], dtype=np.int64)
    lo, hi = sorted(bounds)
    assert covered(starts, ends, lo, hi) == length(clip(merge(starts, ends), lo, hi))


def test_covered_on_a_real_capture():
    """The host's time in CUDA calls of a real capture's window, both ways."""
    from ncuwrap.timeline import readers

    data, _ = readers.read(DATA / "h200_ncuwrap/steps/small_launch_200.sqlite.gz")
    start, end = np.asarray(data.api["start"], dtype=np.int64), np.asarray(data.api["end"], dtype=np.int64)
    lo, hi = int(start[len(start) // 4]), int(end[3 * len(end) // 4])
    assert covered(start, end, lo, hi) == length(clip(merge(start, end), lo, hi)) > 0


@settings(max_examples=400, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 6), st.integers(-2**62, 2**62)), max_size=40), narrow=st.booleans())
def test_ranked_is_lexsort(rows, narrow):
    """_ranked (one sort of a packed key where group and value fit) orders as lexsort by group, then value;
    wide values (no room for the key) take lexsort itself."""
    codes = np.array([c for c, _ in rows], dtype=np.int32)
    values = np.array([v % 1000 if narrow else v for _, v in rows], dtype=np.int64)
    assert _ranked(codes, values, 7).tolist() == values[np.lexsort((values, codes))].tolist()


@pytest.mark.parametrize("raw, name, category", [
    ("cudaLaunchKernel_v7000", "cudaLaunchKernel", "launch"),
    ("cudaMemcpyAsync_ptsz_v7000", "cudaMemcpyAsync", "memcpy"),
    ("cudaGetDeviceProperties_v12000", "cudaGetDeviceProperties", "other"),
    ("cuMemAlloc_v2", "cuMemAlloc", "malloc"),
    ("cudaStreamSynchronize_ptsz", "cudaStreamSynchronize", "sync"),
    ("cudaGraphLaunch_v10000", "cudaGraphLaunch", "launch"),
    ("cudaMemsetAsync", "cudaMemsetAsync", "memset"),
    ("cuKernelGetName", "cuKernelGetName", "other"),
])
def test_api_names_lose_their_version_suffix(raw, name, category):
    assert api_name(raw) == name
    assert api_category(name) == category
