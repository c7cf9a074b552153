"""The ``ncuwrap.bench/v1`` report format (ncuwrap/bundled/report.py) on every report recorded on the H200.

Each file was written by ``ncuwrap bench``; reading it into the typed records and writing it again must
give the same bytes, and compare must find each kernel's median in it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ncuwrap.bundled import report
from ncuwrap.bundled.manifest import load_manifest
from ncuwrap.kernel.diagnosis import diagnose

OURS = Path(__file__).resolve().parent / "data" / "h200_ncuwrap"
RECORDED = sorted([OURS / "bench" / "bench_all_runs3.json", *(OURS / "bench_pairs").glob("*.json")])


def test_every_recorded_report_is_found():
    assert len(RECORDED) == 13  # the --all run and the twelve pair families (layout, bytes_in_flight since issue 24)


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_read_then_written_is_the_same_file(path):
    r = report.read(path)
    assert json.dumps(r.to_json(), indent=2) + "\n" == path.read_text()  # what `ncuwrap bench -o` writes
    assert r.tool_version == "0.1.0" and r.env["gpu"] == "NVIDIA H200"
    assert all(isinstance(b, report.BenchEntry) and b.verified and b.median_ms > 0 for b in r.benchmarks)


NEW_SINCE_RECORDING = {"gemm_hopper/pipelined", "gemm_hopper/single_stage", "transpose/swizzled128x64",
                       "layout/aos_field", "layout/soa", "layout/soa_float4", "vecadd/one_per_thread",  # issue 24
                       *(f"bytes_in_flight/{v}" for v in ("w4_k1", "w8_k1", "w4_k4", "w16_k1", "w16_k4"))}


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
    # (Less the variants added after the recording: new in issues 12 and 24.)
    assert sorted(by) == sorted(f"{b.name}/{v.name}" for b in manifest.benchmarks for v in b.variants if f"{b.name}/{v.name}" not in NEW_SINCE_RECORDING)


def test_compare_finds_each_kernel_once():
    class Kernel:  # what BenchTimings.find reads of a KernelVerdict
        def __init__(self, name, display_name):
            self.name, self.display_name = name, display_name

    path = OURS / "bench_pairs" / "transpose.json"
    timings = report.load_bench(path)
    timing, note = timings.find(Kernel("transpose_padded", "transpose_padded(const float *, float *, int, int)"))
    assert note is None and timing == report.Timing(0.04024000095, str(path), "transpose / padded_tile")
    assert timings.find(Kernel("vecadd_float4", "vecadd_float4")) == (None, f"{path}: no benchmark of kernel vecadd_float4")


# ---------------------------------------------------------------------------------------------- fair ceilings


def _with_fair_ceilings(tmp_path):
    """The recorded --all report as a newer ncuwrap writes it: the ceiling's bytes, a same-bytes ceiling,
    and the two percentages of a transpose entry (the numbers are arithmetic on the recording, not new
    measurements)."""
    old = json.loads((OURS / "bench" / "bench_all_runs3.json").read_text())

    def after(mapping, key, new):  # a copy of `mapping` with `new` inserted after `key` (the writer's order)
        out = {}
        for k, v in mapping.items():
            out[k] = v
            if k == key:
                out.update(new)
        return out

    ceiling = dict(old["ceiling"], bytes=1 << 30)
    doc = after(dict(old, ceiling=ceiling), "ceiling", {"ceilings": [{"gbps": 3900.0, "source": "copy_ceiling/memcpy_d2d", "bytes": 1 << 27}]})
    entries = []
    for entry in old["benchmarks"]:
        if entry["name"] == "transpose":
            same = entry["gbps"] / 3900.0 * 100
            entry = after(dict(entry, pct_of_ceiling=same), "pct_of_ceiling", {
                "ceiling_basis": "same_bytes",
                "pct_of_ceiling_same_bytes": same,
                "pct_of_ceiling_large": entry["gbps"] / ceiling["gbps"] * 100,
            })
        entries.append(entry)
    doc["benchmarks"] = entries
    path = tmp_path / "fair.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def test_fair_ceilings_are_read_and_written_back(tmp_path):
    path = _with_fair_ceilings(tmp_path)
    r = report.read(path)
    assert json.dumps(r.to_json(), indent=2) + "\n" == path.read_text()
    assert r.ceiling.bytes == 1 << 30 and r.ceilings == (report.Ceiling(3900.0, "copy_ceiling/memcpy_d2d", 1 << 27),)
    assert r.ceiling_at(1 << 27) == r.ceilings[0] and r.ceiling_at(12) is None
    by = {b.label: b for b in r.benchmarks}
    best = by["transpose/swizzled64_float4"]
    assert best.ceiling_basis == "same_bytes" and best.pct_of_ceiling == best.pct_of_ceiling_same_bytes
    assert best.pct_of_ceiling_large == pytest.approx(best.gbps / r.ceiling.gbps * 100)
    # Old entries (and every entry of an older report) have none of the new fields.
    assert by["vecadd/float4"].ceiling_basis is None and by["vecadd/float4"].pct_of_ceiling_large is None


def test_old_reports_have_no_fair_ceilings():
    r = report.read(OURS / "bench" / "bench_all_runs3.json")
    assert r.ceilings == () and r.ceiling.bytes is None
    assert all(b.ceiling_basis is None and b.pct_of_ceiling_same_bytes is None for b in r.benchmarks)
    assert "ceilings" not in r.to_json() and "bytes" not in r.to_json()["ceiling"]


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d["ceilings"][0].pop("bytes"), r"ceilings\[0\]: missing key bytes"),
        (lambda d: d["ceilings"][0].update(gbps=0), r"ceilings\[0\]\.gbps: expected a positive bandwidth"),
        (lambda d: d["ceilings"][0].update(colour=1), r"ceilings\[0\]: unknown key colour"),
        (lambda d: d["benchmarks"][2].update(ceiling_basis="tiny"), r"ceiling_basis: expected one of same_bytes, large, got 'tiny'"),
        (lambda d: d["benchmarks"][2].update(pct_of_ceiling_large="x"), r"pct_of_ceiling_large"),
    ],
)
def test_bad_fair_ceiling_fields_name_the_file_and_place(tmp_path, edit, match):
    path = _with_fair_ceilings(tmp_path)
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(report.InputError, match=match) as info:
        report.read(path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_table_shows_both_ceilings_marking_the_judge(tmp_path):
    from ncuwrap.render import Format, render

    # At 140 columns every column shows (issue 39: narrower, %peak, TFLOP/s and spread% leave the table).
    fair = render(report.read(_with_fair_ceilings(tmp_path)), Format.table, width=140)
    lines = fair.splitlines()
    assert lines[1] == "copy ceiling: 4164 GB/s at 1 GiB moved (copy_ceiling/memcpy_d2d)"
    assert lines[2] == "copy ceiling at the variants' own bytes moved: 128 MiB 3900 GB/s"
    assert "%same   %large" in lines[5]
    row = next(line.split() for line in lines if line.split()[:2] == ["transpose", "swizzled64_float4"])
    assert row[7:10] == ["74", "91*", "86"]  # %peak, then 3564 GB/s of 3900 (judged) and of 4164
    vec = next(line.split() for line in lines if line.split()[:2] == ["vecadd", "float4"])
    assert vec[7:10] == ["90", "-", "104"]  # no same-bytes ceiling for it in this file: the large one, unmarked
    old = render(report.read(OURS / "bench" / "bench_all_runs3.json"), Format.table, width=140).splitlines()
    assert old[1] == "copy ceiling: 4164 GB/s (copy_ceiling/memcpy_d2d)" and "%ceil" in old[3] and "%same" not in old[3]


def test_issue12_variants_as_measured_on_the_h200():
    """The first GPU runs of the issue-12 variants (tests/data/h200_ncuwrap/bench_verify): read as bench
    reports, every result verified, and the figures docs/benchmarks.md quotes."""
    folder = Path(__file__).parent / "data" / "h200_ncuwrap" / "bench_verify"
    gemm = {size: {e.variant: e for e in report.read(folder / f"gemm_hopper_{size}.json").benchmarks} for size in (4096, 8192)}
    of_cublas = {(size, v): round(1.0 / e.library.library_speedup, 2) for size, entries in gemm.items() for v, e in entries.items()}
    assert of_cublas == {(4096, "pipelined"): 0.95, (4096, "single_stage"): 0.49, (8192, "pipelined"): 0.93, (8192, "single_stage"): 0.54}
    assert all(e.verified and "333x1000x1000" in e.checked_sizes for entries in gemm.values() for e in entries.values())
    transpose = {e.variant: e for e in report.read(folder / "transpose_4096.json").benchmarks}
    assert all(e.verified for e in transpose.values())
    best = transpose["swizzled64_float4"]
    assert (best.ceiling_basis, round(best.pct_of_ceiling_same_bytes), round(best.pct_of_ceiling_large)) == ("same_bytes", 97, 88)
    assert (round(transpose["swizzled128x64"].pct_of_ceiling_same_bytes), round(transpose["swizzled128x64"].pct_of_ceiling_large)) == (94, 86)


def test_issue12_variants_verified_with_bench_all_and_profiled_with_ncu():
    """The verification run of workloads/bench_verify/verify.sh on the H200 (tests/data/h200_ncuwrap/
    bench_verify): one `bench --all --runs 3` with every result of every family verified, the new
    variants at 8192, and the ncu verdicts of the new variants as `ncuwrap profile` captured them."""
    folder = Path(__file__).parent / "data" / "h200_ncuwrap" / "bench_verify"
    everything = report.read(folder / "all_4096_runs3.json").benchmarks
    assert len(everything) == 46 and all(e.verified for e in everything)
    hopper = {e.variant: round(1.0 / e.library.library_speedup, 2) for e in everything if e.name == "gemm_hopper"}
    assert hopper == {"pipelined": 0.96, "single_stage": 0.5}
    at_8192 = {e.variant: e for e in report.read(folder / "transpose_8192.json").benchmarks}
    assert all(e.verified and "8192x8192" in e.checked_sizes for e in at_8192.values())
    assert {v: round(e.pct_of_ceiling_same_bytes) for v, e in at_8192.items() if v.startswith("swizzled")} == {"swizzled64_float4": 95, "swizzled128x64": 93}
    gemm_8192 = {e.variant: round(1.0 / e.library.library_speedup, 2) for e in report.read(folder / "gemm_hopper_8192_verify.json").benchmarks}
    assert gemm_8192 == {"pipelined": 0.94, "single_stage": 0.53}
    verdicts = {}
    for path in sorted((folder / "verify").glob("*.raw.csv")):
        (k,) = diagnose(path).kernels
        verdicts[path.name] = (k.name, k.bound, k.limiter, k.pipe, [(f.id, f.severity) for f in k.findings],
                               round(k.tensor["pct_of_peak"]) if k.tensor else None)
    assert verdicts == {
        "gemm-tensor_core.raw.csv": ("gemm_tensor_core", "compute", "sm", "tensor", [("uncoalesced_global_stores", "minor")], 42),
        "gemm_hopper-pipelined.raw.csv": ("gemm_wgmma_pipelined", "compute", "sm", "tensor", [("uncoalesced_global_stores", "minor")], 77),
        # One stage: the tensor pipe at 38%, nothing past the 60% line - latency, as the manifest expects.
        "gemm_hopper-single_stage.raw.csv": ("gemm_wgmma_single_stage", "latency", "sm", "tensor", [("uncoalesced_global_stores", "minor")], 38),
        "transpose-swizzled128x64.raw.csv": ("transpose_swizzled128x64", "memory", "dram", "lsu", [], None),
    }
