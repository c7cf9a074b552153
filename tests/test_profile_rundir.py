"""The run folder: layout, never overwritten without --force, exact commands, the environment."""

from __future__ import annotations

import datetime as dt
import json
import shlex
from pathlib import Path

import pytest

from ncuwrap.core.errors import OutputExistsError
from ncuwrap.profile import rundir as RD
from ncuwrap.profile.ncu_tool import NcuTool


def test_layout():
    rd = RD.RunDir("runs/a")
    assert [p.name for p in (rd.report, rd.raw_csv, rd.verdict, rd.html, rd.commands, rd.environment, rd.log, rd.profile)] == [
        "report.ncu-rep", "report.raw.csv", "verdict.json", "report.html", "commands.txt", "environment.json", "ncu.log", "profile.json"]
    assert rd.export_stem == Path("runs/a/report")  # ncu --export adds .ncu-rep


def test_new_and_empty_folders_are_used(tmp_path):
    RD.RunDir(tmp_path / "a" / "b").prepare()
    assert (tmp_path / "a" / "b").is_dir()
    (tmp_path / "empty").mkdir()
    RD.RunDir(tmp_path / "empty").prepare()


def test_an_existing_run_is_not_overwritten_without_force(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "report.ncu-rep").write_text("old report")
    with pytest.raises(OutputExistsError, match=rf"^{run}: a run folder already exists here; pass --force to overwrite it, or choose another -o RUN_DIR$"):
        RD.RunDir(run).prepare()
    assert (run / "report.ncu-rep").read_text() == "old report"


def test_force_replaces_only_ncuwraps_files(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    for name in RD.FILES:
        (run / name).write_text("old")
    (run / "notes.md").write_text("mine")
    (run / "data").mkdir()
    RD.RunDir(run).prepare(force=True)
    assert sorted(p.name for p in run.iterdir()) == ["data", "notes.md"]


def test_a_file_is_not_a_run_folder(tmp_path):
    path = tmp_path / "x"
    path.write_text("")
    with pytest.raises(OutputExistsError, match="exists and is not a folder"):
        RD.RunDir(path).prepare(force=True)


def test_commands_are_shell_quoted_exactly(tmp_path):
    rd = RD.RunDir(tmp_path)
    rd.prepare()
    argv = ["ncu", "--kernel-name", "regex:^transpose_naive$", "--export", str(tmp_path / "report"), "./prog", "two words"]
    rd.add_command("profile", argv)
    rd.add_command("raw CSV export", ["ncu", "--import", "r.ncu-rep", "--csv", "--page", "raw"], stdout_to="a b/report.raw.csv")
    lines = rd.commands.read_text().splitlines()
    assert lines[0] == "# profile"
    assert shlex.split(lines[1]) == argv
    assert lines[1].count("'regex:^transpose_naive$'") == 1
    assert lines[3] == "ncu --import r.ncu-rep --csv --page raw > 'a b/report.raw.csv'"


def test_writes_are_atomic(tmp_path):
    rd = RD.RunDir(tmp_path)
    rd.write_json(rd.profile, {"a": 1})
    assert json.loads(rd.profile.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["profile.json"]


def test_default_run_dir():
    now = dt.datetime(2026, 11, 29, 12, 30, 5)
    assert RD.default_run_dir("transpose-naive", now) == Path("ncuwrap-runs/transpose-naive-20261129-123005")
    assert RD.default_run_dir("my prog/x", now) == Path("ncuwrap-runs/my_prog_x-20261129-123005")


def test_environment():
    tool = NcuTool(path="/opt/ncu/ncu", version=(2025, 3, 1, 0), version_text="Version 2025.3.1.0 (build 36398880) (public-release)")
    env = RD.environment(tool, smi={"error": "none here"})
    assert env["schema"] == "ncuwrap.environment/v1"
    assert env["ncu"] == {"path": "/opt/ncu/ncu", "version": "2025.3.1.0", "version_line": "Version 2025.3.1.0 (build 36398880) (public-release)"}
    assert env["nvidia_smi"] == {"error": "none here"}
    for key in ("ncuwrap", "python", "python_executable", "platform", "hostname", "cwd", "env", "started_utc"):
        assert env[key] is not None
