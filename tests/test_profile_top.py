"""``ncuwrap profile --top N``: nsys ranks the kernels, ncu profiles the top N, the report covers the program.

The end-to-end test replays a real H200 run (tests/data/h200_ncuwrap/top, README there) on a CPU: the
stand-in nsys hands out that run's SQLite export and the stand-in ncu its CSV exports, so the argv must be
exactly what the H200 run used and the printed report exactly what the H200 printed.
"""

from __future__ import annotations

import gzip
import json
import re
import shlex
import sys

import pytest

from ncuwrap.core.errors import OptionError

from ncuwrap.profile import top as TOP
from ncuwrap.timeline.readers import nsys_sqlite
from ncuwrap.profile.kernel_times import kernel_times
from ncuwrap.kernel.verdict import KernelTime, KernelTimes
from ncuwrap.render.names import short
from tests.conftest import (DATA, ROOT, charts_apart, headers_apart, roofline_advice_apart, golden, run_cli, bound_apart, next_steps_apart, rows_within,
                            summary_apart, top_kernels_apart, with_estimates_now, with_lines_hint, with_roofline_advice)

RUN = DATA / "h200_ncuwrap" / "top"
RUN_ABS = ROOT / RUN
FAKE_NCU = ROOT / "tests" / "data" / "profile" / "fake_ncu" / "ncu"
FAKE_NSYS = ROOT / "tests" / "data" / "profile" / "fake_nsys" / "nsys"


@pytest.fixture(scope="module")
def times(tmp_path_factory) -> KernelTimes:
    path = tmp_path_factory.mktemp("top") / "timeline.sqlite"
    path.write_bytes(gzip.decompress((RUN / "timeline.sqlite.gz").read_bytes()))
    return kernel_times(nsys_sqlite.read(path).kernels)


def _device_argv() -> list[str]:
    return json.loads((RUN_ABS / "profile.json").read_text())["argv"]


def test_kernels_ranked_by_name_and_launch_configuration(times):
    assert (times.launches, len(times.groups), round(times.total_ns)) == (1036, 70, 35252657)
    first = times.groups[0]
    assert (first.name, first.grid, first.block, first.launches) == ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", (2, 66, 1), (384, 1, 1), 54)
    assert round(first.share_pct, 2) == 11.96
    assert [round(g.total_ns) for g in times.groups] == sorted((round(g.total_ns) for g in times.groups), reverse=True)
    assert sum(g.launches for g in times.groups) == times.launches
    # Template instances share a short name; the mangled name tells them apart.
    short = [g.name for g in times.groups]
    assert short.count("vectorized_elementwise_kernel") > 1
    assert len({(g.mangled, g.grid, g.block) for g in times.groups}) == len(times.groups)


def test_the_plan_is_the_regex_the_h200_run_used(times):
    plan = TOP.plan(times, 5)
    assert plan.nth_launch == 2
    argv = _device_argv()
    assert argv[argv.index("--kernel-id") + 1] == f"::regex:{plan.regex}:2"
    assert argv[argv.index("--kernel-name-base") + 1] == "mangled"


def test_a_kernel_launched_once_makes_it_launch_1():
    def group(name, launches):
        return KernelTime(name, name, name, (1, 1, 1), (32, 1, 1), launches, 10.0 * launches, 10.0, 10.0, 10.0, 10.0)

    times = KernelTimes((group("a", 5), group("b", 1), group("c", 9)), 150.0, 15)
    assert TOP.plan(times, 1).nth_launch == 2
    assert TOP.plan(times, 2).nth_launch == 1
    assert TOP.plan(times, 2).regex == "^(a|b)$"
    with pytest.raises(OptionError, match="--top must be 1 or more"):
        TOP.plan(times, 0)


def test_results_are_matched_to_their_groups_by_mangled_name(times):
    from ncuwrap.kernel.diagnosis import diagnose

    diagnosis = diagnose(RUN / "report.raw.csv")
    mangled = TOP.read_mangled((RUN / "report.mangled.csv").read_text())
    assert len(mangled) == 5
    cov = TOP.coverage(diagnosis.kernels, TOP.plan(times, 5), times, mangled, "timeline.sqlite")
    assert [(c.rank, c.launch_ids) for c in cov.kernels] == [(1, (1,)), (2, (0,)), (3, (2,)), (4, (3,)), (5, (4,))]
    assert cov.missed == () and round(cov.covered_pct, 1) == 36.8
    # Without the mangled names, the function name (ncu's and nsys's demanglers spell templates differently),
    # grid and block still decide here: no two instances of one function share a launch configuration.
    assert TOP.coverage(diagnosis.kernels, TOP.plan(times, 5), times, {}, "x").kernels == cov.kernels


@pytest.fixture
def fakes(monkeypatch, tmp_path):
    logs = {"ncu": tmp_path / "ncu.jsonl", "nsys": tmp_path / "nsys.jsonl"}
    monkeypatch.setenv("FAKE_NCU_ARGV_LOG", str(logs["ncu"]))
    monkeypatch.setenv("FAKE_NSYS_ARGV_LOG", str(logs["nsys"]))
    monkeypatch.setenv("FAKE_NSYS_SQLITE", str(RUN_ABS / "timeline.sqlite.gz"))
    monkeypatch.setenv("FAKE_NCU_CSV", str(RUN_ABS / "report.raw.csv"))
    monkeypatch.setenv("FAKE_NCU_MANGLED_CSV", str(RUN_ABS / "report.mangled.csv"))
    consoles = re.findall(r'==PROF== Profiling "(.+)": .* - (\d+) passes', (RUN_ABS / "ncu.log").read_text())
    monkeypatch.setenv("FAKE_NCU_KERNELS", ",".join(f"{name}:{passes}" for name, passes in consoles))
    for name in ("FAKE_NCU_MODE", "FAKE_NCU_STREAM", "FAKE_NCU_VERSION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("ncuwrap.profile.rundir.nvidia_smi", lambda: {"error": "no GPU in tests"})
    monkeypatch.chdir(tmp_path)
    return lambda tool: [json.loads(line) for line in logs[tool].read_text().splitlines()] if logs[tool].exists() else []


def test_top_5_replayed_prints_what_the_h200_printed(capsys, fakes, tmp_path):
    program = [sys.executable, "-c", "pass"]
    # --steps marked: the H200's run ranked the whole capture's kernels (the program marks no step); with
    # the default, the steps found by repetition would rank the steady steps' (test_top_ranks_found_steps).
    code, out, err = run_cli(capsys, "profile", "--top", "5", "--steps", "marked", "--ncu", FAKE_NCU, "--nsys-path", FAKE_NSYS, "-o", "top",
                             "--", *program)
    assert code == 0, err
    nsys = fakes("nsys")
    assert nsys[0] == ["profile", "--trace=cuda,nvtx,osrt", "--sample=none", "--cpuctxsw=none", "--cuda-graph-trace=node", "--pytorch=autograd-nvtx",
                       "-o", "top/timeline", "--force-overwrite", "true", "--", *program]
    assert nsys[1][:3] == ["export", "--type", "sqlite"]
    profile_call = next(c for c in fakes("ncu") if c[0] == "--export")
    device = _device_argv()
    # The same filter as on the H200; the collection is today's targeted (the stall ratios left out since,
    # SourceCounters and the sources on disk added since: issue 20).
    assert profile_call[:profile_call.index("--metrics")] == ["--export", "top/report", "--clock-control", "none",
                                                              *device[device.index("--kernel-name-base"):device.index("--metrics")],
                                                              "--section", "SourceCounters"]
    assert profile_call[-5:] == ["--import-source", "yes", *program]
    # --top adds the counters the timeline's op limits are checked against (issue 51), after the targeted ones, once each.
    from ncuwrap.profile.collection import plan_collection

    targeted = list(plan_collection("targeted").metrics)
    metrics = profile_call[profile_call.index("--metrics") + 1].split(",")
    assert metrics == targeted + [m for m in TOP.OP_LIMIT_METRICS if m not in targeted]
    assert {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "lts__t_bytes.sum", "dram__bytes_read.sum"} <= set(metrics)
    imports = [c for c in fakes("ncu") if c[0] == "--import"]
    assert imports[1:3] == [["--import", "top/report.ncu-rep", "--csv", "--page", "source", "--print-source", "cuda,sass"],
                            ["--import", "top/report.ncu-rep", "--csv", "--page", "source", "--print-source", "sass"]]
    assert imports[3] == ["--import", "top/report.ncu-rep", "--csv", "--page", "raw", "--print-kernel-base", "mangled", "--metrics", "launch__grid_size"]
    commands = (tmp_path / "top" / "commands.txt").read_text()
    assert "# rank kernels by GPU time (nsys)" in commands and "> top/report.mangled.csv\n" in commands
    # The report: coverage, programme shares and 'fix first' are the H200's, to the byte.
    # Since then, a timeline without NVTX steps says that steps would judge the steady state (three lines at the end).
    device_out = (RUN_ABS / "stdout.txt").read_text().replace("/tmp/top/", "top/")
    # Since issue 20, a report without per-instruction counters says so once (the fake ncu's source page is empty).
    # Since issue 24, each kernel without a costly finding ends in its next step.
    out, steps = next_steps_apart(out)
    # Since issue 36, a timeline without steps is judged from its first GPU work to its last, and a GPU idle
    # most of it is the host's verdict.
    out, bound = bound_apart(out)
    assert bound.startswith("Bound: launch (host code (no CUDA call)) - Judged without steps, over the window from the first GPU work to the last")
    # Since issue 54, what the charts lack for want of counters is said once (the H200's targeted set then had no L2 sectors).
    out, charts = charts_apart(out)
    assert [line.split(",")[0] for line in charts] == ["L2: not collected on every launch", "L1: peak not collected on every launch"]
    # Since issue 25, the summary's names are short (template arguments as ‹…›) and its rows at most 3 lines.
    assert rows_within(out)
    out, rows, saves = summary_apart(out)
    recorded, rows_then, saves_then = summary_apart(bound_apart(with_estimates_now(with_roofline_advice(with_lines_hint(device_out))))[0])
    assert (rows, saves) == (rows_then, saves_then) and len(rows) == 5
    (out, top), (recorded, top_then) = top_kernels_apart(out), top_kernels_apart(recorded)
    assert top == top_then and len(top) == 10
    # Since issue 36, the timeline part (after the timeline's header) is judged from the first GPU work to
    # the last: the kernel part is the H200's to the byte, the timeline part a golden of today's.
    cut, cut_then = out.index("top/timeline.nsys-rep  ("), recorded.index("top/timeline.nsys-rep  (")
    # Since issue 38, the at-the-roof advice quotes the unit at its roof with its numbers.
    (kernels, advice), (kernels_then, _) = roofline_advice_apart(out[:cut]), roofline_advice_apart(recorded[:cut_then])
    # Since issue 39, each kernel's section header shows its short name, as the summary does.
    (kernels, headers), (kernels_then, headers_then) = headers_apart(kernels), headers_apart(kernels_then)
    assert kernels == kernels_then
    from ncuwrap.kernel.diagnosis import diagnose

    shorts = {short(k.name) for k in diagnose(ROOT / DATA / "h200_ncuwrap" / "top" / "report.raw.csv").kernels}
    assert [where for _, where in headers] == [where for _, where in headers_then] and len(headers) == 5
    assert all("".join(name.split()) in {"".join(s.split()) for s in shorts} for name, _ in headers), headers
    assert advice and all(re.search(r"The SMs are at \d+% of their peak, close to it \(their busiest pipe, \w+, at \d+% of its own\)", a)
                          for a in advice)
    assert recorded[cut_then:].startswith("top/timeline.nsys-rep  (nsys-rep; NVIDIA H200; nsys 2025.3.2.0)\nTraced window: 8.94 s")
    golden("top_replayed_timeline_part.txt", out[cut:])
    assert steps and all(steps)
    verdict = json.loads((tmp_path / "top" / "verdict.json").read_text())
    # Since issue 37, each covered kernel says where it was launched from: null, the capture holds no PyTorch ops.
    assert all(k.pop("launched_from") is None for k in verdict["coverage"]["kernels"] + verdict["coverage"]["missed"])
    assert verdict["coverage"] == json.loads((RUN_ABS / "verdict.json").read_text())["coverage"] | {"capture": "top/timeline.sqlite",
                                                                                                    "scope": "capture"}
    assert "launch 2 of each: the first is often a warm-up" in json.dumps(json.loads((tmp_path / "top" / "profile.json").read_text())["filter"])


def test_top_without_nsys_profiles_the_first_launches(capsys, fakes, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    code, out, err = run_cli(capsys, "profile", "--top", "3", "--ncu", FAKE_NCU, "-o", "run", "--", sys.executable, "-c", "pass")
    assert code == 0, err
    assert fakes("nsys") == []
    call = next(c for c in fakes("ncu") if c[0] == "--export")
    assert "--kernel-id" not in call and call[call.index("--launch-count") + 1] == "10"
    warning = next(line for line in err.splitlines() if line.startswith("warning: --top 3:"))
    assert "nsys" in warning and "profiled the program's first launches instead" in warning
    assert "Whole program" not in out


@pytest.mark.parametrize("extra", [["-k", "gemm"], ["--launch-skip", "2"], ["--launch-count", "3"], ["--nth-launch", "2"]])
def test_top_refuses_a_launch_filter(capsys, fakes, extra):
    code, out, err = run_cli(capsys, "profile", "--top", "3", *extra, "--ncu", FAKE_NCU, "--nsys-path", FAKE_NSYS, "--", sys.executable, "-c", "pass")
    assert code == 2 and out == ""
    assert err.strip().splitlines()[-1] == ("ncuwrap: error: --top N picks the kernels itself: drop -k, --launch-skip, --launch-count and --nth-launch, "
                                            "or drop --top to choose the launches yourself")
    assert fakes("nsys") == [] and [c for c in fakes("ncu") if c[0] == "--export"] == []


def test_top_argv_is_shell_safe():
    # Mangled names go into one argv word; commands.txt quotes it for a shell.
    words = shlex.split((RUN / "commands.txt").read_text().splitlines()[3])
    assert words[words.index("--kernel-id") + 1].startswith("::regex:^(nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT|")


def test_top_json_is_one_document(capsys, fakes, tmp_path):
    """-f json with a timeline: one JSON document (the diagnosis, its timeline under 'timeline'), not two."""
    program = [sys.executable, "-c", "pass"]
    code, out, err = run_cli(capsys, "profile", "--top", "5", "--ncu", FAKE_NCU, "--nsys-path", FAKE_NSYS, "-o", "top", "-f", "json",
                             "--", *program)
    assert code == 0, err
    doc = json.loads(out)  # raises on two documents one after the other
    assert doc["schema"] == "ncuwrap.diagnosis/v4" and doc["timeline"]["schema"] == "ncuwrap.timeline/v1"
    # The capture marks no step: its steps are found by repetition, and the kernels ranked are the steady steps'.
    assert doc["coverage"]["scope"] == "steady steps" and doc["timeline"]["window"]["scope"] == "steady steps"
    assert doc["timeline"]["steps"]["found_by"] == "repetition"
    assert {k: v for k, v in doc.items() if k != "timeline"} == json.loads((tmp_path / "top" / "verdict.json").read_text())
    assert doc["timeline"] == json.loads((tmp_path / "top" / "timeline.json").read_text())
