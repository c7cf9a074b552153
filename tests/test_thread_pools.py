"""Issue 41: the command line holds numpy's OpenBLAS to one thread in its own process (its thread pools made a
small capture's whole `ncuwrap timeline` spend several times its wall time in CPU on a 16-core host:
docs/scale.md), unless the user set a count, and never passes that on: the programs
ncuwrap runs (under ncu or nsys, the bundled benchmarks, ncu's exports) get the environment as it was."""

from __future__ import annotations

import os
import subprocess
import sys

from ncuwrap.core import process

PRINT = [sys.executable, "-c", "import os; print(os.environ.get('OPENBLAS_NUM_THREADS', 'unset'))"]


def test_the_command_line_process_runs_numpy_with_one_blas_thread():
    """A fresh `python -m ncuwrap` process: numpy sees one OpenBLAS thread (numpy reads the variable when
    it is imported, which no command does before main() runs)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    code = ("import os, sys; import ncuwrap.cli as c; c.process.quiet_thread_pools(); import numpy; "
            "print(os.environ['OPENBLAS_NUM_THREADS'], 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout.split()
    assert out == ["1", "True"]
    code = "import sys; import ncuwrap.cli; print('numpy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout.strip() == "False"


def test_what_ncuwrap_set_for_itself_is_not_passed_on(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setattr(process, "_OWN_ENV", {})
    process.quiet_thread_pools()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1" and "OPENBLAS_NUM_THREADS" not in process.environment()
    run = process.run(PRINT, tmp_path / "log")  # how ncu and nsys are run, with the program under them
    assert run.returncode == 0 and (tmp_path / "log").read_text().strip().endswith("unset")
    assert "OPENBLAS_NUM_THREADS" not in process.environment({"OPENBLAS_NUM_THREADS": "1", "A": "b"})


def test_the_users_own_count_wins_and_is_passed_on(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "8")
    monkeypatch.setattr(process, "_OWN_ENV", {})
    process.quiet_thread_pools()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "8" and process.environment()["OPENBLAS_NUM_THREADS"] == "8"
    assert process.run(PRINT, tmp_path / "log").returncode == 0
    assert (tmp_path / "log").read_text().strip().endswith("8")
