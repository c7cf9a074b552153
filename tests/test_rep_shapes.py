"""The real reports of every shape issue 52 lists, captured on the H200 by workloads/ncu_shapes/capture.sh
(tests/data/h200_ncuwrap/shapes/README.md): kernels with C linkage (extern "C", CuPy's RawKernel, a hand-written
Triton kernel, torch.compile's Inductor kernels), two processes, application replay, a CUDA graph profiled as one
workload, a thread-block-cluster kernel, ``--set basic`` and NVTX-filtered launches.

Each is read by the file reader with no fallback and as NVIDIA's reader reads it: launch by launch (metrics, rule
results, per-instruction values, line table, source files: tests/ncu_rep_compare.py, in a process of its own) and
as the whole Profile the command reads (NVIDIA's reader in forked children). ``ncuwrap diagnose`` of each exits 0,
says no fallback and names every launch as ncu's own raw page does (its "Kernel Name" column, kept beside each
report)."""

from __future__ import annotations

import csv
import dataclasses
import gzip
import io
import json
import subprocess
import sys

import pytest

from ncuwrap.kernel.reading import disassembly, line_table, ncu_rep_reader, ncu_rep_format, source_counters
from ncuwrap.kernel.reading.model import ReadFallback
from tests import rep_variants as variants
from tests.conftest import DATA, ROOT, plain_report, run_cli
from tests.ncu_rep_compare import by_ncu_report, same_profile

FOLDER = DATA / "h200_ncuwrap" / "shapes"
SCALE = "void scale<float>(T1 *, T1, int)"  # shapes.cu's one templated kernel, with C++ linkage
# Each report's launches in their order, named as ncu's raw page names them.
KERNELS = {
    "appreplay": ["saxpy_c"],
    "basic": ["saxpy_c", SCALE, "block_sum_c"],
    "cluster": ["cluster_swap(const float *, float *, int)"],
    "compile": ["triton_per_fused__softmax_add_amax_ge_mean_mul_neg_pow_rsqrt_scalar_tensor_silu_sub_where_0",
                "triton_red_fused_add_mean_mul_pow_rsqrt_silu_sum_1", "triton_per_fused_add_mean_mul_pow_rsqrt_silu_sum_2"],
    "cupy": ["cupy_axpy", "cupy_axpy"],
    "externc": ["saxpy_c", SCALE, "block_sum_c"],
    "graph": ["graph"],  # the CUDA graph of three kernels, one workload: ncu names it "graph"
    "multi": ["saxpy_c", SCALE, "saxpy_c", SCALE],  # two processes
    "nvtx": ["saxpy_c", SCALE],
    "triton": ["add_kernel", "softmax_kernel"],
}
SHAPES = [FOLDER / f"{name}.ncu-rep.gz" for name in sorted(KERNELS)]
# Whether ncu_report gives the instructions a source line (the cubin's line table): CuPy's NVRTC builds without
# -lineinfo; --set basic has no per-instruction counters at all.
LINES = {name: "pcs_lines_False" if name == "cupy" else None if name == "basic" else "pcs_lines_True" for name in KERNELS}

pytest.importorskip("ncu_report")


def _raw_page_names(name: str) -> list[str]:
    with gzip.open(FOLDER / f"{name}.raw.csv.gz", "rt", newline="") as fh:
        rows = list(csv.reader(io.StringIO(fh.read())))
    column = rows[0].index("Kernel Name")
    return [row[column] for row in rows[2:]]  # the second row holds the units


def test_every_shape_is_kept_with_its_raw_page_and_log():
    assert sorted(FOLDER.glob("*.ncu-rep.gz")) == SHAPES
    for name in KERNELS:
        assert (FOLDER / f"{name}.raw.csv.gz").is_file() and (FOLDER / f"{name}.log").is_file(), name
        assert _raw_page_names(name) == KERNELS[name], name


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_each_launch_reads_as_ncu_report_reads_it(name):
    done = subprocess.run([sys.executable, "-m", "tests.ncu_rep_compare", str(FOLDER / f"{name}.ncu-rep.gz")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["wrong"] == []
    counts = result["counts"]
    assert counts["launches"] == len(KERNELS[name]) and counts["metrics"] > 500 * len(KERNELS[name]) and counts["rule_results"]
    if LINES[name] is None:
        assert "per_pc_values" not in counts and counts["source_files"] == 0
    else:  # every PC of every launch compared, with or without a line as ncu_report gives it
        assert counts["per_pc_values"] > 0 and counts[LINES[name]] > 0 and set(counts) & {"pcs_lines_None"} == set()
        assert (counts["source_files"] > 0) == (name != "cupy")


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_the_profile_is_the_one_ncu_report_gives_without_a_fallback(name, tmp_path):
    """The frame, rule results and instruction tables (lines, SASS, source texts) the command reads."""
    path = plain_report(FOLDER / f"{name}.ncu-rep.gz", tmp_path)
    new = ncu_rep_reader.start(path).result()
    assert new.fallback is None
    assert new.frame["display_name"].tolist() == KERNELS[name]
    assert bool(new.sources) == (name != "basic")
    assert same_profile(new, by_ncu_report(path))


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_diagnose_names_every_launch_as_ncu_does(name, capsys):
    code, out, err = run_cli(capsys, "diagnose", FOLDER / f"{name}.ncu-rep.gz", "-f", "json")
    assert code == 0 and "debug" not in err, err
    document = json.loads(out)
    assert "notes" not in document  # no launch read by NVIDIA's reader, no other note
    kernels = {kernel["id"]: kernel for kernel in document["kernels"]}
    shown = [kernels[kernel.get("like", kernel["id"])]["display_name"] for kernel in document["kernels"]]
    assert shown == KERNELS[name]


# ------------------------------------------------------------------ the two layouts main's reader did not read as ncu_report


def test_an_application_replay_launch_comes_before_its_modules_source_data(tmp_path):
    """--replay-mode application writes the launch's block first and its module's SourceData (cubin, functions' addresses,
    source texts) in a later block; ncu_report reads them for it all the same, and so does the file reader."""
    path = plain_report(FOLDER / "appreplay.ncu-rep.gz", tmp_path)
    (launch,) = ncu_rep_format.read(path, frozenset(), source_counters.INSTANCED, source_counters.CODED, files_of=lambda launch: True)
    assert launch.lines is True and launch.code is not None and launch.code.arch == "SM90"
    assert sorted(launch.files) == ["/usr/local/cuda/targets/x86_64-linux/include/cooperative_groups.h",
                                    "/usr/local/cuda/targets/x86_64-linux/include/cooperative_groups/details/helpers.h",
                                    "/usr/local/cuda/targets/x86_64-linux/include/crt/sm_90_rt.hpp",
                                    "/work/main/workloads/ncu_shapes/shapes.cu"]


@pytest.mark.parametrize("report", [DATA / "h200" / "vecadd" / "bench_add.ncu-rep", DATA / "h200_ncuwrap" / "multi" / "two_processes.ncu-rep"],
                         ids=lambda p: p.name)
def test_launches_before_their_modules_come_in_order_with_them(tmp_path, report):
    """SYNTHETIC: every module's SourceData moved to the end of the file (two launches of one process; six of two, which
    load one module at different addresses): the launches wait for them and come in their order, each with its line
    table, texts and its own process's functions where the real file places them; the Profile is still NVIDIA's
    reader's, with no fallback."""
    moved = tmp_path / report.name
    variants.sources_last(report, moved)
    every = lambda launch: True  # noqa: E731
    real = ncu_rep_format.read(report, None, source_counters.INSTANCED, source_counters.CODED, every)
    late = ncu_rep_format.read(moved, None, source_counters.INSTANCED, source_counters.CODED, every)
    assert [launch.index for launch in late] == list(range(len(real))) and len(real) >= 2
    for a, b in zip(real, late):
        assert (a.demangled, a.metrics, a.rules, a.files, a.lines) == (b.demangled, b.metrics, b.rules, b.files, b.lines)
        # The cubin moved, and every function of the process is placed by the end (lazy loading: the real launch knew those
        # loaded before it), each where the real file places it.
        assert b.code is not None and a.code is not None and set(a.code.functions) <= set(b.code.functions)
        assert dataclasses.replace(b.code, at=a.code.at, functions=a.code.functions) == a.code
    for only in (range(0, 1), range(1, len(real))):
        assert [launch.index for launch in ncu_rep_format.read(moved, frozenset(), only=only)] == list(only)
    new = ncu_rep_reader.start(moved).result()
    assert new.fallback is None and same_profile(new, by_ncu_report(moved))


def test_a_graph_result_is_read_as_one_workload_named_graph(tmp_path):
    """--graph-profiling graph: the block holds a GraphResult (its metrics, sections and rule results in fields of their
    own, no names, its module by reference), not a launch; ncu_report names it "graph" in each name base."""
    path = plain_report(FOLDER / "graph.ncu-rep.gz", tmp_path)
    (launch,) = ncu_rep_format.read(path, None, source_counters.INSTANCED, source_counters.CODED, files_of=lambda launch: True)
    assert (launch.demangled, launch.mangled, launch.function) == ("graph", "graph", "graph")
    assert launch.metrics["launch__function_pcs"] == 3.0 and launch.metrics["device__attribute_display_name"] == "NVIDIA H200"
    assert launch.lines is True and len(launch.files) == 4 and len(launch.rules) == 7
    assert ncu_rep_format.launch_sizes(path) == [978270]


def test_ncu_report_answers_a_graphs_lines_and_sass_from_the_stripped_copy(tmp_path, monkeypatch):
    """Where the line table and nvdisasm cannot answer, NVIDIA's reader does, from a copy without the graph result's
    metrics, sections and rule results (its own field numbers, not a launch's): the same instruction tables."""
    path = plain_report(FOLDER / "graph.ncu-rep.gz", tmp_path)
    copy = tmp_path / "copy.ncu-rep"
    assert ncu_rep_format.write_attribution_copy(path, [0], copy) == [0]
    assert ncu_rep_format.read(copy, frozenset()) == [ncu_rep_format.Unread(0, "a launch without metrics")]  # a graph result still
    assert copy.stat().st_size < path.stat().st_size / 5
    expected = by_ncu_report(path)
    monkeypatch.setattr(disassembly, "nvdisasm", lambda: None)
    monkeypatch.setattr(line_table, "read", lambda elf: None)
    new = ncu_rep_reader.start(path).result()
    assert new.fallback is None and new.sources and same_profile(new, expected)


def test_a_graph_result_laid_out_otherwise_is_read_by_ncu_report_alone(tmp_path):
    """SYNTHETIC: a rule message of a type the file reader has not seen in the graph result: that result is NVIDIA's
    reader's (from a copy holding it whole), and says so; the Profile is NVIDIA's reader's."""
    path = tmp_path / "graph.ncu-rep"
    variants.rewrite(plain_report(FOLDER / "graph.ncu-rep.gz", tmp_path), path,
                     lambda index, launch: variants.with_rule_message_type(launch, 3, variants.GRAPH_RULES))
    assert ncu_rep_format.read(path, frozenset()) == [ncu_rep_format.Unread(0, "a rule message of type 3")]
    new = ncu_rep_reader.start(path).result()
    assert new.fallback == ReadFallback((0,), ("a rule message of type 3",), 1)
    assert same_profile(new, by_ncu_report(path))


def test_two_processes_place_one_module_each_at_its_own_addresses(tmp_path, monkeypatch):
    """--target-processes all: both processes load the module (one reference) at addresses of their own, each with a
    SourceData of its own; each launch's instructions are placed by its own process's, so their lines and SASS need
    no NVIDIA's reader (which the first process's addresses, or none, would have asked for the second's)."""
    path = plain_report(FOLDER / "multi.ncu-rep.gz", tmp_path)
    read = ncu_rep_format.read(path, frozenset())
    assert all(launch.code is not None for launch in read)
    first, second = read[0].code.functions, read[2].code.functions
    assert [name for _, name in first] == [name for _, name in second] == ["saxpy_c"] and first != second

    def refused(*args, **kwargs):
        raise AssertionError("NVIDIA's reader was asked")

    monkeypatch.setattr(ncu_rep_reader, "_Answering", refused)
    monkeypatch.setattr(ncu_rep_reader, "_Attributor", refused)
    _, _, sources, unread = ncu_rep_reader._collect_file(path, None, path)
    assert unread == {} and sorted(sources) == [0, 1, 2, 3]
    assert all(all(line is not None for line in raw.line) for raw in sources.values())
