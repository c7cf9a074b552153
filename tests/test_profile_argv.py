"""The ncu command line is the contract with the profiler: asserted exactly, without a GPU."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from ncuwrap.core.errors import OptionError

from ncuwrap.kernel import metrics as M
from ncuwrap import ruleset
from ncuwrap.core.errors import ToolNotFoundError
from ncuwrap.profile import DEFAULT_PROGRAM_LAUNCH_COUNT, LaunchFilter, launch_filter
from ncuwrap.profile import collection as collections_, ncu_argv as argvs, ncu_tool as ncu
from ncuwrap.profile.targets import Target
from ncuwrap.core.launch_selection import LaunchSelection
from ncuwrap.kernel.metrics import KERNEL
from tests.process_helpers import FinishedPopen

DATA = Path(__file__).resolve().parent / "data"
QUERY = DATA / "profile" / "query_metrics_gh100.txt.gz"
CONSOLE = DATA / "h200" / "transpose" / "ncu_console_transposeNaive.log"

# What --collect targeted collects for the bundled rules (and the report's charts): the contract.
TARGETED_SECTIONS = ["LaunchStats", "Occupancy"]
TARGETED_METRICS = [
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
    "lts__d_sectors.avg.pct_of_peak_sustained_elapsed",
    "lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed",
    "lts__xbar2lts_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "lts__lts2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_tensor_op_gmma.sum.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_tex.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_cbu.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp16.sum",
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp8_sparsity_off.sum",
    "sm__ops_path_tensor_src_fp64.sum",
    "sm__ops_path_tensor_src_int8.sum",
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg.per_second",
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_src_fp8_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_src_fp64.sum.peak_sustained",
    "sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum.peak_sustained",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum",
    "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
    "l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct",
    "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum",
    "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_requests_srcunit_tex_op_read.sum",
    "lts__t_requests_srcunit_tex.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio",
    "lts__t_requests_srcunit_tex_op_write.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts.sum.pct_of_peak_sustained_elapsed",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
    "smsp__inst_executed.sum",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "lts__d_atomic_input_cycles_active.max.pct_of_peak_sustained_elapsed",
    "lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__mio_pq_read_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed",
    "smsp__cycles_elapsed.avg.per_second",
    "dram__bytes.sum.per_second",
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum.per_cycle_elapsed",
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed",
    "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
    "dram__bytes.sum.peak_sustained",
    "dram__cycles_elapsed.avg.per_second",
    # The L2 roofline point: every L2 sector (issue 38), beside the .pct rollup of the same counter above.
    "lts__t_sectors.sum",
]
PROGRAM = ["./transpose", "--variant", "naive", "--warmup", "2", "--iters", "1"]


def _query_bases() -> set[str]:
    names = set()
    with gzip.open(QUERY, "rt") as fh:
        for line in fh:
            token = line.split()[0] if line.split() else ""
            if "__" in token:
                names.add(token.rsplit(".", 1)[-1] if "." in token.split("__")[0] else token)
    return names


@pytest.fixture(scope="module")
def targeted():
    return collections_.plan_collection("targeted", ruleset.load(None, KERNEL))


# ------------------------------------------------------------------------------------- collection


def test_targeted_collection_is_the_contract(targeted):
    assert list(targeted.sections) == TARGETED_SECTIONS
    assert list(targeted.metrics) == TARGETED_METRICS
    assert targeted.set_name is None
    # The L2 and L1 points are counted by name (lts__t_sectors.sum; the sectors the rules read); only the L1 roof
    # needs the hierarchical section.
    assert {s.name for s in targeted.skipped} == {"spill_requests", "l1_peak_bytes_per_s",
                                                  "stall_top", "stall_top_pct", "stall_second", "stall_second_pct"}
    assert {s.section for s in targeted.skipped} == {"MemoryWorkloadAnalysis", "SpeedOfLight_HierarchicalSingleRooflineChart", None}
    # The warp stall ratios cost 6 replay passes on the H200 and only fill the cause line: skipped, saying why.
    stalls = [s for s in targeted.skipped if s.name.startswith("stall_")]
    assert all("6 replay passes" in s.why and len(s.missing) == 19 for s in stalls)
    assert not any("stalled" in m for m in targeted.metrics)


def test_targeted_metrics_are_the_rules_metrics_minus_what_the_sections_give(targeted):
    rules = ruleset.load(None, KERNEL)
    needed = list(rules.raw_metrics())
    for name in collections_.report_names():
        needed += [m for m in M.raw_inputs(name) if m not in needed]
    given_by_sections = {m for m in needed if M.section_of(m) in targeted.sections}
    skipped = {m for s in targeted.skipped for m in s.missing}
    # The report's skipped quantities drop their other inputs too (a clock without its peak is no use).
    skipped_inputs = {m for s in targeted.skipped for m in M.raw_inputs(s.name)}
    assert set(targeted.metrics) == set(needed) - given_by_sections - skipped - skipped_inputs
    assert len(targeted.metrics) == len(set(targeted.metrics))
    # Every metric a rule reads is either asked for by name or comes with a collected section,
    # except evidence-only ones, which are listed as skipped.
    for metric in rules.raw_metrics():
        assert metric in targeted.metrics or M.section_of(metric) in targeted.sections or metric in skipped


def test_every_metric_asked_by_name_exists_on_hopper(targeted):
    bases = _query_bases()
    assert len(bases) > 3000
    missing = [m for m in targeted.metrics if m.split(".")[0] not in bases]
    assert missing == []


def test_section_only_metrics_never_go_to_metrics(targeted):
    for metric in targeted.metrics:
        assert not metric.startswith(("derived__", "launch__", "device__"))
        assert metric not in collections_.OCCUPANCY_CALCULATOR


def test_every_rule_condition_is_collected(targeted):
    """No bound, limiter, finding or severity condition is left to a skipped metric: targeted gives
    the verdicts --set full gives."""
    rules = ruleset.load(None, KERNEL)
    skipped = {s.name for s in targeted.skipped}
    for name in collections_.decisive_names(rules):
        assert name not in skipped
        for raw in M.raw_inputs(name):
            assert raw in targeted.metrics or M.section_of(raw) in targeted.sections or raw.startswith("device__"), raw


def test_a_rule_condition_on_a_section_only_metric_adds_that_section(tmp_path):
    rules_file = tmp_path / "spill.yaml"
    rules_file.write_text(
        "version: 1\nbound:\n  - verdict: memory\n    when: 'true'\n    limiter: memory_unit\n"
        "findings:\n  - id: spills\n    when: 'spill_requests > 0'\n    title: spills\n    advice: fewer registers\n",
        encoding="utf-8",
    )
    collection = collections_.plan_collection("targeted", ruleset.load(rules_file, KERNEL))
    assert "MemoryWorkloadAnalysis" in collection.sections
    assert "derived__local_spilling_requests" not in collection.metrics
    assert all(s.name != "spill_requests" for s in collection.skipped)


@pytest.mark.parametrize("collect, expected", [
    ("full", ["--set", "full"]),
    ("basic", ["--set", "basic"]),
    ("SpeedOfLight,Occupancy", ["--section", "SpeedOfLight", "--section", "Occupancy"]),
    (" MemoryWorkloadAnalysis ", ["--section", "MemoryWorkloadAnalysis"]),
])
def test_set_and_section_collections(collect, expected):
    assert collections_.plan_collection(collect).argv() == expected


def test_extra_metrics_are_added_once():
    collection = collections_.plan_collection("full", extra_metrics=["dram__bytes_read.sum", " dram__bytes_read.sum", ""])
    assert collection.argv() == ["--set", "full", "--metrics", "dram__bytes_read.sum"]
    targeted = collections_.plan_collection("targeted", extra_metrics=["gpu__time_duration.sum", "sm__warps_launched.sum"])
    assert targeted.metrics.count("gpu__time_duration.sum") == 1
    assert targeted.metrics[-1] == "sm__warps_launched.sum"


@pytest.mark.parametrize("bad", ["regex:.*", "Speed Of Light", "a;b", "SpeedOfLight,full", ","])
def test_bad_collect_values_are_refused(bad):
    with pytest.raises(OptionError, match="targeted, basic, full or a comma list"):
        collections_.plan_collection(bad)


@pytest.mark.parametrize("given, mode", [("", "targeted"), ("full,", "full"), (" basic ", "basic")])
def test_collect_spellings(given, mode):
    assert collections_.plan_collection(given).mode == mode


# ------------------------------------------------------------------------------------------ argv


def test_targeted_argv_for_a_bundled_benchmark(targeted):
    argv = argvs.ncu_argv(PROGRAM, collect=targeted, output="runs/naive/report", ncu="/opt/ncu/ncu",
                      kernel="^transpose_naive$", launch_skip=4, launch_count=1)
    assert argv == [
        "/opt/ncu/ncu", "--export", "runs/naive/report", "--clock-control", "none",
        "--kernel-name", "regex:^transpose_naive$", "--launch-skip", "4", "--launch-count", "1",
        "--section", "LaunchStats", "--section", "Occupancy", "--metrics", ",".join(TARGETED_METRICS),
        *PROGRAM,
    ]


def test_full_argv_differs_only_in_what_is_collected(targeted):
    common = dict(output="r/report", kernel="^transpose_naive$", launch_skip=4, launch_count=1)
    full = argvs.ncu_argv(PROGRAM, collect=collections_.plan_collection("full"), **common)
    assert full == ["ncu", "--export", "r/report", "--clock-control", "none", "--kernel-name", "regex:^transpose_naive$",
                    "--launch-skip", "4", "--launch-count", "1", "--set", "full", *PROGRAM]


@pytest.mark.parametrize("collect", ["targeted", "basic", "full", "SpeedOfLight"])
@pytest.mark.parametrize("nth", [None, 3])
def test_clock_control_none_is_always_there(collect, nth):
    argv = argvs.ncu_argv(["./a.out"], collect=collections_.plan_collection(collect), output="o", nth_launch=nth)
    assert argv[argv.index("--clock-control") + 1] == "none"
    assert argv.count("--clock-control") == 1


def test_force_overwrite_only_with_force():
    collect = collections_.plan_collection("basic")
    assert "--force-overwrite" not in argvs.ncu_argv(["./a.out"], collect=collect, output="o")
    assert argvs.ncu_argv(["./a.out"], collect=collect, output="o", force=True)[:4] == ["ncu", "--export", "o", "--force-overwrite"]


def test_nth_launch_uses_kernel_id():
    collect = collections_.plan_collection("basic")
    argv = argvs.ncu_argv(["./a.out", "-x"], collect=collect, output="o", kernel="scale_.*", nth_launch=2)
    assert argv == ["ncu", "--export", "o", "--clock-control", "none", "--kernel-id", "::regex:scale_.*:2", "--set", "basic", "./a.out", "-x"]
    every = argvs.ncu_argv(["./a.out"], collect=collect, output="o", nth_launch=1, launch_count=5)
    assert every == ["ncu", "--export", "o", "--clock-control", "none", "--kernel-id", ":::1", "--launch-count", "5", "--set", "basic", "./a.out"]


def test_kernel_id_forms():
    assert argvs.kernel_id(None, 4) == ":::4"
    assert argvs.kernel_id("regex:^gemm", 1) == "::regex:^gemm:1"
    with pytest.raises(OptionError, match="':'"):
        argvs.kernel_id("ns::kernel", 1)
    with pytest.raises(OptionError, match="1 or more"):
        argvs.kernel_id("k", 0)


def test_launch_skip_and_nth_launch_exclude_each_other():
    with pytest.raises(OptionError, match="exclude"):
        argvs.ncu_argv(["./a.out"], collect=collections_.plan_collection("basic"), output="o", launch_skip=2, nth_launch=1)


def test_kernel_filter_is_always_a_regex():
    collect = collections_.plan_collection("basic")
    for given in ("add", "regex:add"):
        argv = argvs.ncu_argv(["./a.out"], collect=collect, output="o", kernel=given)
        assert argv[argv.index("--kernel-name") + 1] == "regex:add"
    assert "--launch-skip" not in argvs.ncu_argv(["./a.out"], collect=collect, output="o", launch_skip=0)


def test_import_csv_argv():
    assert argvs.import_csv_argv("run/report.ncu-rep", "/x/ncu") == ["/x/ncu", "--import", "run/report.ncu-rep", "--csv", "--page", "raw"]


# -------------------------------------------------------------------------------- finding ncu


def test_ncu_on_path_and_its_version(monkeypatch):
    monkeypatch.setattr(ncu.shutil, "which", lambda name: "/usr/local/cuda/bin/ncu" if name == "ncu" else None)
    calls = []

    def run(argv, **kwargs):
        calls.append(argv)
        return SimpleNamespace(returncode=0, stderr="", stdout="NVIDIA (R) Nsight Compute Command Line Profiler\n"
                               "Copyright (c) 2018-2025 NVIDIA Corporation\nVersion 2025.3.1.0 (build 36398880) (public-release)\n")

    tool = ncu.ncu_tool(run=run)
    assert calls == [["/usr/local/cuda/bin/ncu", "--version"]]
    assert tool.path == "/usr/local/cuda/bin/ncu"
    assert tool.version == (2025, 3, 1, 0)
    assert tool.version_string == "2025.3.1.0"


def test_ncu_missing_says_what_to_install(monkeypatch):
    monkeypatch.setattr(ncu.shutil, "which", lambda name: None)
    with pytest.raises(ToolNotFoundError, match=r"ncu \(Nsight Compute\) is not on PATH; install Nsight Compute 2023.1 or newer .* --ncu"):
        ncu.ncu_tool()


def test_ncu_too_old(monkeypatch, tmp_path):
    exe = tmp_path / "ncu"
    exe.write_text("")
    run = lambda argv, **kw: SimpleNamespace(returncode=0, stderr="", stdout="Version 2022.4.1.0 (build 1) (public-release)\n")  # noqa: E731
    with pytest.raises(ToolNotFoundError, match=r"is Nsight Compute 2022.4.1.0; ncuwrap needs 2023.1 or newer"):
        ncu.ncu_tool(str(exe), run=run)


def test_ncu_path_that_is_not_there():
    with pytest.raises(ToolNotFoundError, match=r"^/nowhere/ncu: no ncu there"):
        ncu.find_ncu("/nowhere/ncu")


@pytest.mark.parametrize("text, version", [
    ("Version 2025.3.1.0 (build 36398880) (public-release)", (2025, 3, 1, 0)),
    ("Version 2023.1.0.0 (build 1)", (2023, 1, 0, 0)),
    ("Version 2020.3.0", (2020, 3, 0)),
    ("nothing here", None),
])
def test_parse_version(text, version):
    assert ncu.parse_version(text) == version


def test_importing_the_cli_runs_no_tool():
    """ncu, nsys and nvidia-smi are found only when a command needs them: importing ncuwrap and its
    profile and timeline commands runs nothing."""
    code = ("import shutil, subprocess, sys\n"
            "def refuse(*a, **k): raise SystemExit('a tool was looked up or run at import time')\n"
            "subprocess.run = subprocess.Popen = shutil.which = refuse\n"
            "import ncuwrap.cli, ncuwrap.cli.profile, ncuwrap.cli.timeline, ncuwrap.profile, ncuwrap.profile.ncu_tool, ncuwrap.profile.collection,"
            " ncuwrap.profile.ncu_argv, ncuwrap.profile.console,"
            " ncuwrap.profile.failure, ncuwrap.profile.pipeline, ncuwrap.profile.targets, ncuwrap.core.process, ncuwrap.core.nvidia_smi,"
            " ncuwrap.timeline.capture, ncuwrap.timeline.nsysrep, ncuwrap.bundled.build, ncuwrap.bundled.bench\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=DATA.parent.parent)
    assert done.stdout.strip() == "ok", done.stderr


# ------------------------------------------------------------------------------------ running ncu


def test_popen_gets_the_exact_argv_its_own_session_and_no_stdin(tmp_path):
    """subprocess.Popen faked (a finished process holding a real H200 console): the argv is passed
    unchanged; the child gets its own session (Ctrl-C reaches ncuwrap only) and no terminal input."""
    seen = {}

    def popen(argv, **kwargs):
        seen["argv"], seen["kwargs"] = argv, kwargs
        return FinishedPopen(stdout=CONSOLE.read_bytes())

    argv = ["/opt/ncu/ncu", "--export", "r/report", "--clock-control", "none", "--set", "full", "./transpose"]
    run = ncu.run_ncu(argv, tmp_path / "ncu.log", popen=popen)
    assert seen["argv"] == argv
    assert seen["kwargs"]["start_new_session"] is True
    assert seen["kwargs"]["stdin"] == subprocess.DEVNULL
    assert seen["kwargs"]["stdout"] == seen["kwargs"]["stderr"] == subprocess.PIPE
    assert run.passes == [38] and run.returncode == 0
    assert (tmp_path / "ncu.log").read_bytes() == CONSOLE.read_bytes()


def test_an_ncu_that_cannot_start(tmp_path):
    with pytest.raises(ToolNotFoundError) as missing:
        ncu.run_ncu(["/nowhere/ncu", "--version"])
    assert str(missing.value) == "/nowhere/ncu: not found; install Nsight Compute or pass --ncu /path/to/ncu"
    with pytest.raises(ToolNotFoundError) as folder:
        ncu.run_ncu([str(tmp_path), "--version"])
    assert str(folder.value) == f"{tmp_path}: not executable; pass --ncu the path of a working ncu"


# --------------------------------------------------------------------------------- launch filter

BUNDLED = Target(argv=tuple(PROGRAM), label="transpose-naive", kernel="^transpose_naive$", launch_skip=4, launch_count=1,
                 benchmark="transpose", variant="naive", kernels=("transpose_naive",), why_skip="the first timed launch")
PROG = Target(argv=("./own_program",), label="own_program")


def test_bundled_default_filter_lands_on_the_first_timed_launch():
    f = launch_filter(BUNDLED)
    assert (f.kernel, f.launch_skip, f.launch_count, f.nth_launch, f.origin) == ("^transpose_naive$", 4, 1, None, "bundled")
    assert f.describe(0, "transpose_naive") == ("launch 5 of the launches matching -k ^transpose_naive$, --launch-skip 4 counts "
                                                "only matching launches: the first timed launch")


def test_user_kernel_filter_replaces_the_bundled_one():
    f = launch_filter(BUNDLED, LaunchSelection(kernel="transpose_.*"))
    assert (f.kernel, f.launch_skip, f.launch_count) == ("transpose_.*", None, 1)
    assert f.describe(0, "transpose_naive") == "launch 1 of the launches matching -k transpose_.*"


def test_program_default_limits_the_launches():
    f = launch_filter(PROG)
    assert (f.kernel, f.launch_skip, f.launch_count, f.origin) == (None, None, DEFAULT_PROGRAM_LAUNCH_COUNT, "program-default")
    assert f.describe(2, "scale_rows") == "launch 3 of the program (no kernel filter: every launch counts)"
    assert "pass --launch-count 0 for all" in f.summary()
    assert launch_filter(PROG, LaunchSelection(launch_count=0)).launch_count is None


def test_skip_counts_matching_launches_only():
    f = launch_filter(PROG, LaunchSelection(kernel="scale_columns", launch_skip=1, launch_count=2))
    assert [f.describe(i, "scale_columns") for i in range(2)] == [
        "launch 2 of the launches matching -k scale_columns, --launch-skip 1 counts only matching launches",
        "launch 3 of the launches matching -k scale_columns, --launch-skip 1 counts only matching launches",
    ]


def test_nth_launch_filter():
    f = launch_filter(PROG, LaunchSelection(nth_launch=2))
    assert (f.kernel, f.launch_skip, f.launch_count, f.nth_launch) == (None, None, None, 2)
    assert f.describe(0, "scale_rows") == "launch 2 of scale_rows with this grid, block and shared memory (--nth-launch 2)"
    assert launch_filter(BUNDLED, LaunchSelection(nth_launch=3)).kernel == "^transpose_naive$"
    with pytest.raises(OptionError, match="exclude"):
        launch_filter(PROG, LaunchSelection(nth_launch=2, launch_skip=3))
    with pytest.raises(OptionError, match="1 or more"):
        launch_filter(PROG, LaunchSelection(nth_launch=0))


def test_launch_filter_json():
    assert LaunchFilter(kernel="k", launch_skip=2, launch_count=1).to_json() == {
        "kernel": "k", "launch_skip": 2, "launch_count": 1, "nth_launch": None, "origin": "user",
        "summary": "1 of the launches matching -k k after skipping 2"}


def test_program_targets(tmp_path):
    from ncuwrap.core.errors import InputError
    from ncuwrap.profile.targets import program

    script = tmp_path / "train.py"
    script.write_text("print(1)\n")
    assert program([sys.executable, "-u", str(script), "--epochs", "1"]).label == "train"
    exe = tmp_path / "app"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    target = program([str(exe), "x"])
    assert (target.argv, target.label, target.bundled) == ((str(exe), "x"), "app", False)
    with pytest.raises(InputError, match="not an executable file; chmod \\+x it"):
        program([str(script)])
    with pytest.raises(InputError, match="not found on PATH"):
        program(["surely-not-a-command-ncuwrap"])


# ------------------------------------------------------------------------ ncu options passed on


def test_ncu_options_argv_order_and_nvtx():
    options = argvs.NcuOptions(nvtx_include=("A@step/",), nvtx_exclude=("warmup/",), replay_mode="application", target_processes="application-only",
                           cache_control="none", clock_control="base", graph_profiling="graph", extra=("--print-summary", "none"))
    argv = argvs.ncu_argv(["./a.out", "-x"], collect=collections_.plan_collection("basic", source=True), output="o", kernel="gemm", launch_skip=1,
                      launch_count=2, options=options)
    assert argv == ["ncu", "--export", "o", "--clock-control", "base", "--cache-control", "none", "--replay-mode", "application",
                    "--target-processes", "application-only", "--graph-profiling", "graph", "--nvtx", "--nvtx-include", "A@step/",
                    "--nvtx-exclude", "warmup/", "--kernel-name", "regex:gemm", "--launch-skip", "1", "--launch-count", "2",
                    "--set", "basic", "--section", "SourceCounters", "--import-source", "yes", "--print-summary", "none", "./a.out", "-x"]


@pytest.mark.parametrize("collect, source, expected", [
    ("full", True, ["--set", "full", "--import-source", "yes"]),  # the full set has SourceCounters
    ("full", False, ["--set", "full"]),
    ("basic", True, ["--set", "basic", "--section", "SourceCounters", "--import-source", "yes"]),
    ("SourceCounters,Occupancy", True, ["--section", "SourceCounters", "--section", "Occupancy", "--import-source", "yes"]),
    ("SpeedOfLight", False, ["--section", "SpeedOfLight"]),
])
def test_source_collection_argv(collect, source, expected):
    """--source (the default of the CLI) adds ncu's SourceCounters section, once, and the sources on disk."""
    assert collections_.plan_collection(collect, source=source).argv() == expected


def test_targeted_with_source_argv():
    plain = collections_.plan_collection("targeted")
    with_source = collections_.plan_collection("targeted", source=True)
    assert plain.argv()[:4] == ["--section", "LaunchStats", "--section", "Occupancy"]
    assert with_source.argv() == ["--section", "LaunchStats", "--section", "Occupancy", "--section", "SourceCounters",
                                  "--metrics", ",".join(plain.metrics), "--import-source", "yes"]
    assert with_source.label == "targeted + SourceCounters" and with_source.to_json()["source"] is True


def test_source_page_export_argv():
    assert argvs.import_source_argv("run/report.ncu-rep", "/opt/ncu") == [
        "/opt/ncu", "--import", "run/report.ncu-rep", "--csv", "--page", "source", "--print-source", "cuda,sass"]
    assert argvs.import_source_argv("r.ncu-rep", lines=False) == ["ncu", "--import", "r.ncu-rep", "--csv", "--page", "source", "--print-source", "sass"]


def test_default_ncu_options_change_nothing():
    collect = collections_.plan_collection("basic")
    assert argvs.ncu_argv(["./a.out"], collect=collect, output="o", options=argvs.NcuOptions()) == argvs.ncu_argv(["./a.out"], collect=collect, output="o")
    assert "--nvtx" not in argvs.NcuOptions(extra=("--nvtx",), nvtx_include=("r/",)).argv()


@pytest.mark.parametrize("field, flag, allowed", [
    ("replay_mode", "--replay-mode", argvs.REPLAY_MODES), ("target_processes", "--target-processes", argvs.TARGET_PROCESSES),
    ("cache_control", "--cache-control", argvs.CACHE_CONTROL), ("clock_control", "--clock-control", argvs.CLOCK_CONTROL),
    ("graph_profiling", "--graph-profiling", argvs.GRAPH_PROFILING)])
def test_every_allowed_value_passes_and_others_are_refused(field, flag, allowed):
    for value in allowed:
        argv = argvs.NcuOptions(**{field: value}).check().argv()
        assert argv == ([] if field == "clock_control" else [flag, value])
    with pytest.raises(OptionError, match=f"^{flag} 'bogus': expected "):
        argvs.NcuOptions(**{field: "bogus"}).check()
    with pytest.raises(OptionError, match=f"^{flag} 'bogus'"):  # ncu_argv checks too (library use)
        argvs.ncu_argv(["./a.out"], collect=collections_.plan_collection("basic"), output="o", options=argvs.NcuOptions(**{field: "bogus"}))
