"""Rank folders and clusters (issue 42). Each folder holds copies of the real 2-rank H200 captures
(tests/data/h200_ncuwrap/ranks/balanced), changed in tmp_path.

What must hold: a capture that is not a regular file (a FIFO) is never opened and the output says it was
skipped (it was skipped without a word); ranks on different GPUs are said (they were compared with no
note); a folder holds at most MAX_RANKS captures, more is one line (10,000 took 225 s); a local Dask
cluster leaves nothing in $TMPDIR (its dask-scratch-space and lock files stayed behind).
"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import subprocess
import sys

from ncuwrap.timeline.ranks import files as rank_files
from tests.conftest import DATA, ROOT, run_cli

BALANCED = DATA / "h200_ncuwrap" / "ranks" / "balanced"


def _ranks(tmp_path, unpacked: bool = False):
    folder = tmp_path / "ranks"
    folder.mkdir()
    for rank in (0, 1):
        data = (BALANCED / f"rank{rank}.sqlite.gz").read_bytes()
        if unpacked:
            (folder / f"rank{rank}.sqlite").write_bytes(gzip.decompress(data))
        else:
            (folder / f"rank{rank}.sqlite.gz").write_bytes(data)
    return folder


def _notes(capsys, folder) -> list[str]:
    code, out, err = run_cli(capsys, "timeline", "--ranks", folder, "--workers", "0", "-f", "json")
    assert (code, err) == (0, ""), err
    return json.loads(out)["notes"]


def test_a_fifo_among_the_rank_files_is_said(capsys, tmp_path):
    folder = _ranks(tmp_path)
    os.mkfifo(folder / "rank2.sqlite")
    assert "skipped, not regular files: rank2.sqlite (a named pipe)" in _notes(capsys, folder)
    code, out, _ = run_cli(capsys, "timeline", "--ranks", folder, "--workers", "0")
    assert code == 0 and "skipped, not regular files: rank2.sqlite (a named pipe)" in " ".join(out.split())


def test_ranks_on_different_gpus_are_said(capsys, tmp_path):
    folder = _ranks(tmp_path, unpacked=True)
    with sqlite3.connect(folder / "rank1.sqlite") as db:
        assert db.execute("UPDATE TARGET_INFO_GPU SET name = 'NVIDIA A100-SXM4-80GB'").rowcount >= 1
    db.close()
    notes = _notes(capsys, folder)
    assert ("ranks on different GPUs (NVIDIA A100-SXM4-80GB: rank 1; NVIDIA H200: rank 0): a rank's times reflect its GPU as "
            "well as its work") in notes
    (tmp_path / "same").mkdir()
    assert not any("different GPUs" in n for n in _notes(capsys, _ranks(tmp_path / "same")))


def test_a_folder_of_more_ranks_than_one_analysis_reads(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(rank_files, "MAX_RANKS", 1)  # 2 real captures over a cap of 1: the same line as 4,097 over 4,096
    folder = _ranks(tmp_path)
    code, out, err = run_cli(capsys, "timeline", "--ranks", folder, "--workers", "0")
    assert (code, out) == (2, "")
    assert err == (f"ncuwrap: error: {folder}: 2 captures, more than the 1 ranks one analysis reads (each is read whole); analyse "
                   "a node's ranks, or ranks 0..N-1 of the job, in a folder of their own\n")
    assert rank_files.MAX_RANKS == 1 and "MAX_RANKS = 4096" in (ROOT / "ncuwrap/timeline/ranks/files.py").read_text()


def test_a_local_cluster_leaves_nothing_in_tmpdir(tmp_path):
    """A real LocalCluster of 2 worker processes, in a process of its own with TMPDIR set."""
    folder, tmp = _ranks(tmp_path), tmp_path / "tmpdir"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=str(ROOT), COLUMNS="100")
    done = subprocess.run([sys.executable, "-m", "ncuwrap", "timeline", "--ranks", str(folder), "--workers", "2"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stderr) == (0, "")
    assert "Dask LocalCluster, 2 worker processes" in done.stdout
    assert os.listdir(tmp) == []


def test_ctrl_c_while_the_workers_start_is_one_line(tmp_path):
    """Ctrl-C at the terminal (SIGINT to the whole process group) once the cluster's folder exists, while
    its workers start: one line, exit 130, nothing left in $TMPDIR (it printed 126 lines: the workers'
    tracebacks and an atexit error, and left dask-scratch-space behind)."""
    import signal
    import time

    folder, tmp = _ranks(tmp_path), tmp_path / "tmpdir"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=str(ROOT), COLUMNS="100")
    run = subprocess.Popen([sys.executable, "-m", "ncuwrap", "timeline", "--ranks", str(folder), "--workers", "2"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        waited = 0.0
        while not any(name.startswith("ncuwrap-dask-") for name in os.listdir(tmp)) and waited < 120 and run.poll() is None:
            time.sleep(0.02)
            waited += 0.02
        os.killpg(run.pid, signal.SIGINT)
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert (run.returncode, out, err) == (130, "", "ncuwrap: interrupted: the analysis was stopped (its workers and their folder too)\n")
    assert os.listdir(tmp) == []
