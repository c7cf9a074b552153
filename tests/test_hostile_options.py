"""Options that would silently disable a check are refused in one line (issue 22): a non-finite
--threshold, --ncu-rules of another report. The reports are real H200 exports."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli

T = Path(__file__).resolve().parent / "data" / "h200" / "transpose"


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1e9"])
def test_compare_threshold_must_be_a_finite_percentage(value, capsys):
    code, out, err = run_cli(capsys, "compare", T / "transposeNaive.ncu-rep.gz", T / "transposeShared.ncu-rep.gz", "--pair",
                             "transposeNaive=transposeShared", "--threshold", value, "--fail-on-regression")
    assert (code, out) == (2, "")
    assert err.startswith(f"ncuwrap: error: --threshold {float(value)!s:.24}: a slowdown threshold is a percentage from 0 to 1000")


def test_ncu_rules_of_another_report_is_refused(capsys):
    """Both reports hold one launch, ID 0, of the same grid and block: only the kernel tells them apart."""
    code, out, err = run_cli(capsys, "diagnose", T / "transposeNaive.raw.csv", "--ncu-rules", T / "transposeShared.details.csv")
    assert (code, out) == (2, "")
    assert err == (f"ncuwrap: error: {T / 'transposeShared.details.csv'}: launch 0 is transposeShared grid (128, 128, 1) block (32, 8, 1) "
                   f"there, transposeNaive grid (128, 128, 1) block (32, 8, 1) in {T / 'transposeNaive.raw.csv'}: not the same report; "
                   f"give the .ncu-rep or '--page details' export of {T / 'transposeNaive.raw.csv'} itself\n")


def test_ncu_rules_of_the_same_report_are_attached(capsys):
    code, out, err = run_cli(capsys, "diagnose", T / "transposeNaive.raw.csv", "--ncu-rules", T / "transposeNaive.details.csv")
    assert code == 0, err
    assert "ncu    UncoalescedGlobalAccess" in out


def test_a_relative_tool_path_stays_a_path(tmp_path, capsys, monkeypatch):
    """--ncu ./stub ran 'stub' looked up on PATH (Path('./stub') is 'stub')."""
    import json

    fake = Path(__file__).resolve().parent / "data" / "profile" / "fake_ncu" / "ncu"
    (tmp_path / "stub-ncu").symlink_to(fake)  # the stand-in finds its reports through the link
    prog = tmp_path / "prog.sh"
    prog.write_text("#!/bin/sh\nexit 0\n")
    prog.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FAKE_NCU_ARGV_LOG", str(tmp_path / "argv.jsonl"))
    monkeypatch.setattr("ncuwrap.profile.rundir.nvidia_smi", lambda: {"error": "no GPU in tests"})
    code, out, err = run_cli(capsys, "profile", "--ncu", "./stub-ncu", "-o", "run", "-f", "json", "--", str(prog))
    assert code == 0, err
    assert json.loads(out)["kernels"]
    assert f"# profile\n{tmp_path / 'stub-ncu'} --export " in (tmp_path / "run" / "commands.txt").read_text()


def test_columns_zero_still_prints_the_report(capsys, monkeypatch):
    """COLUMNS=0 printed nothing at all; below 40 columns the page is laid out for 80."""
    monkeypatch.setenv("COLUMNS", "0")
    code, out, err = run_cli(capsys, "diagnose", T / "transposeNaive.raw.csv")
    assert code == 0, err
    assert "transposeNaive" in out and max(len(line) for line in out.splitlines()) <= 80


def test_a_corrupt_rank_analysed_on_dask_workers_is_one_line(tmp_path):
    """--workers 2: the worker logged 'Compute Failed' and the task's traceback before the one line."""
    import gzip
    import subprocess
    import sys

    good = gzip.decompress((Path(__file__).resolve().parent / "data" / "h200_ncuwrap" / "ranks" / "balanced" / "rank0.sqlite.gz").read_bytes())
    (tmp_path / "rank0.sqlite").write_bytes(good)
    (tmp_path / "rank1.sqlite").write_bytes(good[:5000])  # SYNTHETIC: a capture cut short
    done = subprocess.run([sys.executable, "-m", "ncuwrap", "timeline", "--ranks", str(tmp_path), "--workers", "2"],
                          capture_output=True, text=True, timeout=180, cwd=Path(__file__).resolve().parent.parent)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"ncuwrap: error: {tmp_path / 'rank1.sqlite'}: corrupt or truncated SQLite database (database disk image is "
                           "malformed); export the report again with 'nsys export --type sqlite --force-overwrite true'\n")


def test_a_relative_nsys_path_stays_a_path(tmp_path, monkeypatch):
    from ncuwrap.timeline.nsysrep import find_nsys

    (tmp_path / "stubnsys").write_text("#!/bin/sh\n")
    monkeypatch.chdir(tmp_path)
    assert find_nsys("./stubnsys") == str(tmp_path / "stubnsys")
