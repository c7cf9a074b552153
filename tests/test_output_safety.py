"""-o never loses data: inputs, existing files (without --force), FIFOs, devices and sockets (also behind
a symlink) are refused before any work, in one line, exit 2; a refused path is left exactly as it was."""

from __future__ import annotations

import os
import shutil
import socket
import stat

import pytest

from ncuwrap.core import fileio
from ncuwrap.core.errors import OutputExistsError
from tests.conftest import H200, run_cli

REPORT = H200 / "transpose" / "copyKernel.raw.csv"
SHARED = H200 / "transpose" / "transposeShared.ncu-rep"
PADDED = H200 / "transpose" / "transposePadded.ncu-rep"


def _refused(capsys, *args) -> str:
    code, out, err = run_cli(capsys, *args)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_an_existing_file_is_replaced_only_with_force(capsys, tmp_path):
    target = tmp_path / "verdict.json"
    target.write_text("keep me")
    line = _refused(capsys, "diagnose", REPORT, "-f", "json", "-o", target)
    assert line == f"ncuwrap: error: {target}: already exists; pass --force to replace it, or choose another -o path"
    assert target.read_text() == "keep me"
    code, _, err = run_cli(capsys, "diagnose", REPORT, "-f", "json", "-o", target, "--force")
    assert code == 0 and err == f"wrote {target}\n" and target.read_text().startswith("{")


def test_the_input_is_refused_by_any_name(capsys, tmp_path):
    report = tmp_path / "copy.raw.csv"
    shutil.copy(REPORT, report)
    before = report.read_bytes()
    link = tmp_path / "link.csv"
    link.symlink_to(report)
    hard = tmp_path / "hard.csv"
    os.link(report, hard)
    for name in (report, link, hard):
        line = _refused(capsys, "diagnose", report, "-o", name, "--force")
        assert line == f"ncuwrap: error: {name}: -o names an input of this command ({report}); choose another output file"
    assert report.read_bytes() == before and link.is_symlink()


def test_compare_refuses_either_report_and_the_timings(capsys, tmp_path):
    after = tmp_path / "after.ncu-rep"
    shutil.copy(PADDED, after)
    line = _refused(capsys, "compare", SHARED, after, "-f", "json", "-o", after, "--force")
    assert "-o names an input of this command" in line
    assert after.read_bytes() == PADDED.read_bytes()


@pytest.mark.parametrize("force", [(), ("--force",)])
def test_a_fifo_is_never_opened(capsys, tmp_path, force):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    via = tmp_path / "via"
    via.symlink_to(fifo)
    for name in (fifo, via):
        # Opening a FIFO for writing would block until a reader comes: refused before, so no hang.
        line = _refused(capsys, "diagnose", REPORT, "-o", name, *force)
        assert line == (f"ncuwrap: error: {name}: not a regular file (a device, FIFO or socket); ncuwrap never writes one, "
                        "give a file name for -o")
    assert stat.S_ISFIFO(fifo.stat().st_mode) and via.is_symlink()


def test_a_socket_and_a_folder_are_refused(capsys, tmp_path):
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        assert "not a regular file" in _refused(capsys, "diagnose", REPORT, "-o", path, "--force")
        assert stat.S_ISSOCK(path.stat().st_mode)
    finally:
        server.close()
    assert _refused(capsys, "diagnose", REPORT, "-o", tmp_path, "--force") == f"ncuwrap: error: {tmp_path}: is a folder; give a file name for -o"


def test_a_dangling_symlink_is_refused(capsys, tmp_path):
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "nowhere" / "x")
    assert "a symlink to a missing file" in _refused(capsys, "diagnose", REPORT, "-o", link)
    assert link.is_symlink()


def test_the_writer_checks_again_at_write_time(tmp_path):
    # A file that appears while the command runs is not replaced either.
    target = tmp_path / "late.json"
    fileio.check_target(target)
    target.write_text("written meanwhile")
    with pytest.raises(OutputExistsError):
        fileio.write_checked(target, "{}")
    assert target.read_text() == "written meanwhile"
