"""The timeline rules (rules/timeline.yaml): loaded like the kernel rules, validated against the
timeline's own names, and deciding kernel / transfer / launch as designed."""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from ncuwrap import ruleset
from ncuwrap.core.errors import RulesError
from ncuwrap.timeline.diagnosis import diagnose_timeline
from ncuwrap.kernel.metrics import KERNEL
from ncuwrap.timeline import metrics as TM
from ncuwrap.timeline.options import TimelineOptions
from tests.conftest import DATA, H200, ROOT, run_cli, whole_capture

BENCH = H200 / "nsys" / "bench.sqlite"
BAD = DATA / "timeline_bad"


def test_bundled_timeline_rules_load():
    rules = ruleset.load(None, TM.TIMELINE)
    assert rules.kind == "timeline" and rules.version == 1
    assert [b.verdict for b in rules.bound] == ["launch", "launch", "launch", "transfer", "kernel"]
    assert "step_gpu_busy_pct" in rules.bound[0].when.names  # the steady steps decide first
    ids = {f.id for f in rules.findings}
    assert {"pageable_memcpy", "sync_after_each_launch", "gpu_idle_gaps", "memcpy_dominates", "tiny_kernels"} <= ids
    assert rules.path == "ncuwrap:rules/timeline.yaml"


def test_names_listed_in_the_rules_file_are_the_catalogue():
    """The list at the end of rules/timeline.yaml documents every name; it must not drift."""
    text = (ROOT / "rules" / "timeline.yaml").read_text(encoding="utf-8")
    block = text[text.index("# metrics:"):]
    listed = set(re.findall(r"\b[a-z][a-z0-9_]*\b", re.sub(r"#\s+(api|host_memory|steps):", "#", block))) - {"metrics"}
    assert listed == set(TM.CATALOGUE)


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text("version: 1\nkind: timeline\n" + body, encoding="utf-8")
    return path


def test_timeline_rules_refuse_kernel_metric_names(tmp_path):
    path = _write(tmp_path, 'bound:\n  - verdict: kernel\n    when: "dram_pct > 50"\n')
    with pytest.raises(RulesError,
                       match=r"mine.yaml: bound\[0\] \(kernel\): unknown metric 'dram_pct' \(timeline rules read the names listed at the end of "
                             r"rules/timeline.yaml\)"):
        ruleset.load(path, TM.TIMELINE)


def test_timeline_rules_refuse_raw_ncu_names(tmp_path):
    path = _write(tmp_path, 'bound:\n  - verdict: kernel\n    when: "metric(\\"dram__bytes.sum\\") > 0"\n')
    with pytest.raises(RulesError, match=r"unknown metric 'dram__bytes.sum'"):
        ruleset.load(path, TM.TIMELINE)


def test_kernel_rules_keep_their_message(tmp_path):
    path = tmp_path / "k.yaml"
    path.write_text('version: 1\nbound:\n  - verdict: memory\n    when: "idle_pct > 50"\n', encoding="utf-8")
    with pytest.raises(RulesError, match=r"unknown metric 'idle_pct' \(see 'ncuwrap rules metrics --all' for the names\)"):
        ruleset.load(path, KERNEL)


def test_kernel_rules_are_not_timeline_rules():
    with pytest.raises(RulesError, match=r"default.yaml: a 'kernel' rules file where 'timeline' rules are needed"):
        ruleset.load(ROOT / "rules" / "default.yaml", TM.TIMELINE)


def test_timeline_expressions_are_as_safe_as_kernel_ones(tmp_path):
    path = _write(tmp_path, 'bound:\n  - verdict: kernel\n    when: "__import__(\'os\').system(\'true\')"\n')
    with pytest.raises(RulesError, match=r"only max\(\), min\(\), abs\(\), fallback\(\)"):
        ruleset.load(path, TM.TIMELINE)


def test_unit_variants_are_names(tmp_path):
    assert {"kernel_ms", "kernel_us", "memcpy_bytes", "memcpy_mib", "pageable_memcpy_mib"} <= TM.TIMELINE.names
    assert TM.TIMELINE.base_of("sync_roundtrip_ms") == "sync_roundtrip_ns"


def test_extend_adds_a_finding(tmp_path, capsys):
    path = _write(tmp_path, """findings:
  - id: kernels_under_ten_percent
    when: "kernel_pct < 25"
    severity: low
    title: "Kernels are only {kernel_pct:.1f}% of the window ({kernel_ms:.2f} ms)"
    evidence: [kernel_pct]
    advice: Look elsewhere first.
""")
    # Without steps: the window from the first GPU work to the last, where the copies take most of the GPU.
    code, out, err = run_cli(capsys, "timeline", BENCH, "--steps", "none", "--rules", path, "--extend", "-f", "json")
    assert code == 0, err
    import json

    doc = json.loads(out)
    assert doc["bound"] == "transfer"  # the bundled bound is kept
    mine = next(f for f in doc["findings"] if f["id"] == "kernels_under_ten_percent")
    assert mine["title"] == "Kernels are only 20.0% of the window (14.79 ms)"
    assert mine["evidence"] == {"kernel_pct": 19.9507}


def test_capture_without_api_trace_says_what_is_not_evaluated():
    d = whole_capture(BAD / "no_api.sqlite")
    assert d.bound == "transfer"
    reasons = {n.rule: n.message for n in d.not_evaluated}
    assert reasons["sync_after_each_launch"].startswith("not evaluated: synced_launches, synced_launch_pct, sync_roundtrip_span_pct unknown: "
                                                        "no CUPTI_ACTIVITY_KIND_RUNTIME table")
    assert "no ENUM_CUDA_MEM_KIND table" in reasons["pageable_memcpy"]
    assert reasons["bound"].startswith("partially evaluated: ")
    assert d.to_json()["api_ns"] is None
    assert any("ENUM_CUDA_MEMCPY_OPER" in n for n in d.notes)


# -- launch-bound ---------------------------------------------------------------------------------

CAPTURED = DATA / "h200_ncuwrap" / "nsys"


def test_thousands_of_tiny_kernels_with_a_sync_after_each_are_launch_bound():
    """kernels/launch_overhead.cu --variant sync_each on the H200: 10,000 kernels of 0.8 us, each
    followed by cudaDeviceSynchronize."""
    d = whole_capture(CAPTURED / "launch_sync_each.sqlite.gz")
    assert d.bound == "launch", d.why
    findings = {f.id: f for f in d.findings}
    assert findings["sync_after_each_launch"].severity == "high"
    assert findings["tiny_kernels"].severity == "high"
    assert "gpu_idle_gaps" not in findings  # the idle time is the verdict itself
    m = d.timeline.metrics
    assert m["kernel_count"] == m["launch_calls"] == m["synced_launches"] == 10_000
    assert m["kernel_median_ns"] < 1_000 and m["kernel_span_idle_pct"] > 90


def test_graph_traced_as_a_whole_counts_as_kernels():
    """The same launches captured into a CUDA graph: nsys (default --cuda-graph-trace=graph) records
    graph executions, no kernel table. Each execution is one 'kernel', and the note says so."""
    d = whole_capture(CAPTURED / "launch_graph.sqlite.gz")
    assert d.bound == "launch" and d.timeline.metrics["gpu_busy_pct"] < 50  # the graphs run 17% of the capture
    assert [(k.name, k.count) for k in d.timeline.kernels] == [("CUDA graph 4", 4), ("CUDA graph 1", 1)]
    assert any("--cuda-graph-trace=node" in n for n in d.notes)


def test_pageable_and_pinned_copies_are_told_apart():
    """kernels/e2e.cu, all variants: malloc'd, cudaMallocHost'd, and pinned + chunked over streams."""
    d = whole_capture(CAPTURED / "e2e.sqlite")
    assert d.bound == "launch" and d.timeline.metrics["gpu_busy_pct"] < 50  # idle 86%: the host's verdict, copies as findings
    m = d.timeline.metrics
    assert m["pageable_memcpy_count"] == 12 and m["memcpy_count"] > 12
    assert m["pinned_memcpy_gbps"] > 4 * m["pageable_memcpy_gbps"]


# A synthetic capture in bench.sqlite's real schema, for the case not captured yet: tiny kernels
# launched back to back without syncs (2.2 us kernels, 3.5 us launch calls).

def _launch_capture(path: Path, n: int = 3000, sync_each: bool = True) -> Path:
    shutil.copyfile(ROOT / BENCH, path)
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    template = dict(db.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1").fetchone())  # a real coalesced_add launch
    db.row_factory = None
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY"):
        db.execute(f"DELETE FROM {table}")
    ids = dict(db.execute("SELECT value, id FROM StringIds"))

    def sid(value):
        if value not in ids:
            ids[value] = max(ids.values()) + 1
            db.execute("INSERT INTO StringIds (id, value) VALUES (?, ?)", (ids[value], value))
        return ids[value]

    calls, kernels, corr, t = [], [], 1000, 1_000_000

    def api(name, start, end):
        nonlocal corr
        corr += 1
        calls.append((start, end, 281503934187198, corr, sid(name)))
        return corr

    api("cudaMalloc_v3020", t, t + 130_000_000)
    t += 130_005_000
    for i in range(n):
        c = api("cudaLaunchKernel_v7000", t, t + 3500)
        ks, ke = t + 4500, t + 6700
        name = sid("tiny_sync_each")
        kernels.append({**template, "start": ks, "end": ke, "correlationId": c, "gridId": i, "gridX": 2,
                        "demangledName": name, "shortName": name, "mangledName": name})
        t += 3700
        if sync_each:
            api("cudaDeviceSynchronize_v3020", t, ke + 3000)
            t = ke + 3300
    api("cudaDeviceSynchronize_v3020", t, max(t, ke) + 3000)
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue) "
                   "VALUES (?, ?, 0, ?, ?, ?, 0)", calls)
    columns = list(template)
    db.executemany(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL ({', '.join(f'[{c}]' for c in columns)}) "
                   f"VALUES ({', '.join('?' for _ in columns)})", [[k[c] for c in columns] for k in kernels])
    db.commit()
    db.close()
    return path


def test_synthetic_sync_each_matches_the_real_verdict(tmp_path):
    d = diagnose_timeline(_launch_capture(tmp_path / "sync_each.sqlite"))
    assert d.bound == "launch", d.why
    assert {"sync_after_each_launch", "tiny_kernels"} <= {f.id for f in d.findings}


def test_tiny_kernels_launched_back_to_back_are_launch_bound_too(tmp_path):
    """No sync per launch, but each launch call (3.5 us) outlasts its kernel (2.2 us): the GPU starves.
    Judged without steps (the rule this tests; its launches of one kernel repeat, and a step of one launch
    keeps the GPU busy 59% of its period, which the steps' rule reads as the GPU's)."""
    d = diagnose_timeline(_launch_capture(tmp_path / "no_sync.sqlite", sync_each=False), timeline=TimelineOptions(steps="none"))
    assert d.bound == "launch", d.why
    assert "sync_after_each_launch" not in {f.id for f in d.findings}
    assert d.timeline.metrics["kernel_span_idle_pct"] < 50


def test_overlap_is_judged_against_what_could_overlap():

    serial = whole_capture("tests/data/h200/nsys/bench.sqlite").to_json()
    streams = whole_capture("tests/data/h200_ncuwrap/nsys/e2e.sqlite").to_json()
    assert "serialized_copies" in [f["id"] for f in serial["findings"]]
    # e2e hides ~1 ms of 312 ms of copies: a third of its 3.3 ms of kernels, not "never".
    assert "serialized_copies" not in [f["id"] for f in streams["findings"]]
    assert 30 < streams["metrics"]["overlap_achieved_pct"] < 40
