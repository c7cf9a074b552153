"""The stop line of a bundled lesson (issue 24): the profiled variant's uninstrumented speed against
the measured copy ceiling or the library, from a real H200 `ncuwrap bench --runs 3` JSON
(tests/data/h200_ncuwrap/bench_verify/all_4096_runs3.json), and where `profile` and `diagnose RUN_DIR`
print it. The profile tests run the stand-in ncu of test_profile_cli.py (a real H200 report)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import run_cli
from ncuwrap.bundled.report import read
from ncuwrap.bundled.stopline import stop_line
from ncuwrap.render.phrasing.bench import stop_line_text
from test_profile_cli import FAKE_NCU, _prog, fake  # noqa: F401  (the fixture)

BENCH = Path(__file__).parent / "data" / "h200_ncuwrap" / "bench_verify" / "all_4096_runs3.json"


def _line(benchmark, variant):
    return stop_line(read(BENCH), benchmark, variant, source=str(BENCH))


def test_the_padded_transpose_is_short_of_the_line_and_the_swizzled_one_past_it():
    padded = _line("transpose", "padded_tile")
    assert (padded.decision, round(padded.pct, 1), padded.further.variant, round(padded.further.pct, 1)) == ("go on", 88.2, "swizzled64_float4", 96.3)
    assert stop_line_text(padded) == (
        "padded_tile: 3,369 GB/s effective (0.03984 ms, uninstrumented: ncuwrap bench, median of 3 runs, spread 0.2%) = 88% of "
        "the copy ceiling at the same bytes (3,822 GB/s): short of the 90% stop line; swizzled64_float4 goes further (96%, 0.03646 ms).")
    swizzled = _line("transpose", "swizzled64_float4")
    assert swizzled.decision == "stop" and swizzled.further is None
    assert stop_line_text(swizzled).endswith("= 96% of the copy ceiling at the same bytes (3,822 GB/s): past the 90% stop line: stop here; "
                                             "only moving fewer bytes (or less work) goes further.")
    # The naive transpose is told the same way forward; the plain copy kept as a transpose's
    # ceiling (no library equivalent) is never offered as a transpose.
    assert _line("transpose", "naive").further.variant == "swizzled64_float4"


def test_a_gemm_is_judged_against_the_library():
    line = _line("gemm", "double_buffered")
    assert (line.decision, round(line.pct), line.further) == ("go on", 75, None)
    assert stop_line_text(line) == (
        "double_buffered: 37.9 TFLOP/s (3.626 ms, uninstrumented: ncuwrap bench, median of 3 runs, spread 0.2%) = 75% of the library "
        "(cupy.matmul fp32 (cuBLAS SGEMM)) (2.706 ms): short of the 90% stop line; no variant of the lesson goes further: use the library.")
    # The naive GEMM is pointed at the fastest FP32 variant, not the FP16 tensor-core one (another job).
    assert _line("gemm", "naive").further.variant == "double_buffered"


def test_a_lesson_without_a_yardstick_names_the_fastest_variant():
    line = _line("smem_banks", "strided")
    assert line.decision == "no yardstick" and line.pct is None
    assert stop_line_text(line).endswith(": nothing measured judges this lesson (no copy ceiling, no library); padded is 27.1x faster (0.07851 ms).")


def test_a_lesson_timed_only_by_its_time():
    # The divergence lesson counts neither bytes nor FLOPs (found on the H200: its profile stopped on it).
    line = _line("divergence", "per_lane")
    assert (line.measure, line.value, line.decision, line.further.variant) == ("time", None, "no yardstick", "per_warp")
    assert stop_line_text(line).startswith("per_lane: 1.052 ms (uninstrumented: ncuwrap bench, median of 3 runs, spread")


def test_a_result_missing_from_the_bench_file_names_the_file():
    with pytest.raises(Exception, match="no result for transpose/nope; run 'ncuwrap bench transpose -o FILE'"):
        _line("transpose", "nope")


def _bundled(monkeypatch, tmp_path):
    binary = _prog(tmp_path, "echo '{\"benchmark\": \"transpose\"}'", name="transpose")
    monkeypatch.setattr("ncuwrap.bundled.build.build_one",
                        lambda name, arch=None, **kw: SimpleNamespace(binary=binary, arch="sm_90", cached=True, key="k" * 64))


def test_profile_prints_the_stop_line_from_a_bench_json(capsys, tmp_path, fake, monkeypatch):  # noqa: F811
    _bundled(monkeypatch, tmp_path)
    run = tmp_path / "run"
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, "transpose_naive", "--bench-json", BENCH, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["stop_line"]["variant"] == "naive" and doc["stop_line"]["decision"] == "go on"
    assert doc["stop_line"]["further"]["variant"] == "swizzled64_float4" and doc["stop_line"]["source"] == str(BENCH)
    assert json.loads((run / "bench.json").read_text()) == json.loads(BENCH.read_text())
    assert "bench.json" in json.loads((run / "profile.json").read_text())["files"]
    # The run folder diagnosed again, anywhere: the same stop line.
    code, table, err = run_cli(capsys, "diagnose", run)
    assert code == 0, err
    assert "\nStop line\n  naive: 523 GB/s effective (0.2566 ms, uninstrumented: ncuwrap bench, median of 3 runs" in table
    code, markdown, err = run_cli(capsys, "diagnose", run, "-f", "markdown")
    assert "**Stop line:** naive: 523 GB/s effective" in markdown


def test_without_a_gpu_the_stop_line_is_a_warning_and_no_bench_drops_it(capsys, tmp_path, fake, monkeypatch):  # noqa: F811
    _bundled(monkeypatch, tmp_path)
    monkeypatch.setattr("ncuwrap.bundled.runner.gpu_problem", lambda: "no NVIDIA driver found (in this test)")
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "a", "transpose_naive", "--format", "json")
    assert code == 0, err
    assert "warning: no stop line (the verdicts stand without it): no GPU: no NVIDIA driver found (in this test); run `ncuwrap bench`" in err
    assert "stop_line" not in json.loads(out) and not (tmp_path / "a" / "bench.json").exists()
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "b", "transpose_naive", "--no-bench")
    assert code == 0 and "stop line" not in err and "Stop line" not in out


def test_a_bad_bench_json_fails_before_anything_runs(capsys, tmp_path, fake, monkeypatch):  # noqa: F811
    _bundled(monkeypatch, tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "something else"}')
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "run", "transpose_naive", "--bench-json", bad)
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"ncuwrap: error: {bad}: not an ncuwrap bench result")
    assert fake() == [] and not (tmp_path / "run").exists()
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "--bench-json", BENCH, "--", _prog(tmp_path))
    assert code == 2 and "a stop line is drawn for a bundled benchmark only" in err


def test_an_output_never_replaces_a_file_the_run_folder_gives(capsys, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    before = (run / "bench.json").read_bytes()
    for name in ("bench.json", "report.raw.csv", "profile.json"):
        code, out, err = run_cli(capsys, "diagnose", run, "-o", run / name, "--force")
        assert code == 2 and err.count("\n") == 1 and str(run / name) in err, (name, err)
    assert (run / "bench.json").read_bytes() == before


def test_a_folder_that_is_not_a_run_folder_is_refused(capsys, tmp_path):
    (tmp_path / "profile.json").write_text('{"schema": "x"}')
    code, _, err = run_cli(capsys, "diagnose", tmp_path)
    assert code == 2 and "not written by 'ncuwrap profile'" in err and err.count("\n") == 1


RUN = Path(__file__).parent / "data" / "h200_ncuwrap" / "advice" / "run_padded"


def test_a_real_run_folder_diagnosed_again_prints_its_stop_line(capsys):
    # `ncuwrap profile transpose_padded` on the H200 (workloads/advice/capture.sh): the run
    # folder as it left it (its .ncu-rep left out: the raw and source pages carry what is read).
    code, table, err = run_cli(capsys, "diagnose", RUN)
    assert code == 0, err
    words = " ".join(table.split())
    assert words.startswith(f"{RUN}/report.ncu-rep (ncu-rep; NVIDIA H200, CC 9.0, ncu 2025.3.1.0)")
    assert "clocks were left alone (--clock-control none)" in words  # the command line, from profile.json
    assert "stalls at: transpose.cu:42 63% of the warp stall samples" in words  # the source page beside it
    assert ("\nStop line\n  padded_tile: 3,341 GB/s effective (0.04018 ms, uninstrumented: ncuwrap bench, median of 3 runs,\n"
            "  spread 0.5%) = 88% of the copy ceiling at the same bytes (3,794 GB/s): short of the 90% stop line;\n"
            "  swizzled64_float4 goes further (96%, 0.03678 ms).\n") in table
    # The same numbers the profile run printed on the H200 (its verdict.json predates nothing: same code).
    recorded = json.loads((RUN / "verdict.json").read_text())["stop_line"]
    code, out, err = run_cli(capsys, "diagnose", RUN, "-f", "json")
    assert json.loads(out)["stop_line"] == recorded | {"source": str(RUN / "bench.json")}
    assert recorded["source"] == "bench.json (ncuwrap bench, measured for this run)"
    # The bench run is in the folder's commands.txt, exactly as it ran.
    assert "# stop line (uninstrumented timings)\nncuwrap bench transpose --runs 3 -o /tmp/dev/run_padded/bench.json\n" in (RUN / "commands.txt").read_text()
