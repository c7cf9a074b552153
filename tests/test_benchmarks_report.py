"""The ``ncuwrap.bench/v1`` report format (ncuwrap/benchmarks/report.py) on every report recorded on the H200.

Each file was written by ``ncuwrap bench``; reading it into the typed records and writing it again must
give the same bytes, and compare must find each kernel's median in it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ncuwrap.benchmarks import report
from ncuwrap.benchmarks.manifest import load_manifest

OURS = Path(__file__).resolve().parent / "data" / "h200_ncuwrap"
RECORDED = sorted([OURS / "bench" / "bench_all_runs3.json", *(OURS / "bench_pairs").glob("*.json")])


def test_every_recorded_report_is_found():
    assert len(RECORDED) == 11  # the --all run and the ten pair families


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_read_then_written_is_the_same_file(path):
    r = report.read(path)
    assert json.dumps(r.to_json(), indent=2) + "\n" == path.read_text()  # what `ncuwrap bench -o` writes
    assert r.tool_version == "0.1.0" and r.env["gpu"] == "NVIDIA H200"
    assert all(isinstance(b, report.BenchEntry) and b.verified and b.median_ms > 0 for b in r.benchmarks)


def test_the_records_are_typed():
    r = report.read(OURS / "bench" / "bench_all_runs3.json")
    assert r.ceiling == report.Ceiling(gbps=4164.113994612288, source="copy_ceiling/memcpy_d2d")
    by = {b.label: b for b in r.benchmarks}
    assert [b.label for b in r.benchmarks][:3] == ["copy_ceiling/memcpy_d2d", "copy_ceiling/copy_float4", "transpose/copy"]
    naive = by["transpose/naive"]
    assert naive.kernel == "transpose_naive" and naive.sizes == {"cols": 4096, "rows": 4096}
    assert naive.runs[0] == report.RunTiming(0.2582079915, 0.25702399, 0.263615996)
    assert naive.expected == report.ExpectedVerdict("memory", "l2", ("uncoalesced_global_stores",), None)
    assert naive.library.advice == "the library is 1.9x faster: use it" and naive.library.cupy_version == "14.2.0"
    assert by["e2e/pinned_overlapped"].extra == {"launches_per_run": 8.0}
    assert by["copy_ceiling/memcpy_d2d"].kernel == "[no kernel: copy_ceiling/memcpy_d2d]"
    # Every variant of the manifest is in the --all report, under its own kernel.
    manifest = load_manifest()
    assert sorted(by) == sorted(f"{b.name}/{v.name}" for b in manifest.benchmarks for v in b.variants)


def test_compare_finds_each_kernel_once():
    class Kernel:  # what BenchTimings.find reads of a KernelVerdict
        def __init__(self, name, display_name):
            self.name, self.display_name = name, display_name

    path = OURS / "bench_pairs" / "transpose.json"
    timings = report.load_bench(path)
    timing, note = timings.find(Kernel("transpose_padded", "transpose_padded(const float *, float *, int, int)"))
    assert note is None and timing == report.Timing(0.04024000095, str(path), "transpose / padded_tile")
    assert timings.find(Kernel("vecadd_float4", "vecadd_float4")) == (None, f"{path}: no benchmark of kernel vecadd_float4")
