"""-o never loses data: inputs, existing files (without --force), FIFOs, devices and sockets (also behind
a symlink) are refused before any work, in one line, exit 2; a refused path is left exactly as it was.

-o has one meaning in every command (issue 54): where the output goes. Given a report or a capture to read
(diagnose, compare, timeline FILE, timeline --ranks DIR), the file the output is written to, exactly what
stdout would have shown, under the same refusals; given a program to run (profile, timeline -- PROGRAM), the
run folder (tests/test_timeline_cli.py, tests/test_profile_cli.py). `timeline capture.sqlite -o FILE` was
refused ("-o/--force name the run folder of a new capture")."""

from __future__ import annotations

import os
import re
import shutil
import socket
import stat

import pytest

from ncuwrap.core import fileio
from ncuwrap.core.errors import OutputExistsError
import typer.main
from typer.testing import CliRunner

from ncuwrap.cli import app, options
from tests.conftest import DATA, H200, run_cli

REPORT = H200 / "transpose" / "copyKernel.raw.csv"
CAPTURE = H200 / "nsys" / "bench.sqlite"
OTHER_CAPTURE = H200 / "nsys" / "transpose.sqlite"
RANKS = DATA / "h200_ncuwrap" / "ranks" / "balanced"
SHARED = H200 / "transpose" / "transposeShared.ncu-rep.gz"
PADDED = H200 / "transpose" / "transposePadded.ncu-rep.gz"


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


# --- one meaning of -o (issue 54 item 2) ---------------------------------------------------------------------

READING = {
    "timeline FILE": ("timeline", CAPTURE),
    "diagnose FILE": ("diagnose", CAPTURE),
    "diagnose REPORT": ("diagnose", REPORT),
    "compare two timelines": ("compare", CAPTURE, OTHER_CAPTURE),
    "compare two reports": ("compare", SHARED, PADDED),
    "timeline --ranks DIR": ("timeline", "--ranks", RANKS, "--workers", "0"),
}


@pytest.mark.parametrize("args", READING.values(), ids=READING.keys())
def test_o_is_the_output_file_of_a_command_that_reads(capsys, tmp_path, args):
    """The file holds what stdout holds without -o, and is written whole (nothing else left in its folder);
    an existing one is refused without --force and replaced with it."""
    code, shown, err = run_cli(capsys, *args, "-f", "json")
    assert (code, err) == (0, "")
    out = tmp_path / "out.json"
    assert run_cli(capsys, *args, "-f", "json", "-o", out) == (0, "", f"wrote {out}\n")
    assert out.read_text(encoding="utf-8") == shown
    assert os.listdir(tmp_path) == ["out.json"]
    out.write_text("keep me")
    line = _refused(capsys, *args, "-f", "json", "-o", out)
    assert line == f"ncuwrap: error: {out}: already exists; pass --force to replace it, or choose another -o path"
    assert out.read_text() == "keep me"
    assert run_cli(capsys, *args, "-f", "json", "-o", out, "--force") == (0, "", f"wrote {out}\n")
    assert out.read_text(encoding="utf-8") == shown and os.listdir(tmp_path) == ["out.json"]


def test_timeline_of_a_capture_writes_the_file_diagnose_writes(capsys, tmp_path):
    """The same command line, but for the command's name, writes the same file: the case of issue 54."""
    for command in ("timeline", "diagnose"):
        out = tmp_path / f"{command}.md"
        assert run_cli(capsys, command, CAPTURE, "-f", "markdown", "-o", out) == (0, "", f"wrote {out}\n")
    assert (tmp_path / "timeline.md").read_bytes() == (tmp_path / "diagnose.md").read_bytes()


def test_timeline_refuses_its_capture_as_the_output(capsys, tmp_path):
    capture = tmp_path / "run.sqlite"
    shutil.copy(CAPTURE, capture)
    link = tmp_path / "link.sqlite"
    link.symlink_to(capture)
    for name in (capture, link):
        line = _refused(capsys, "timeline", capture, "-f", "json", "-o", name, "--force")
        assert line == f"ncuwrap: error: {name}: -o names an input of this command ({capture}); choose another output file"
    assert capture.read_bytes() == CAPTURE.read_bytes()
    line = _refused(capsys, "timeline", "--ranks", RANKS, "-o", RANKS, "--force")
    assert line == f"ncuwrap: error: {RANKS}: -o names an input of this command ({RANKS}); choose another output file"


@pytest.mark.parametrize("command", ["diagnose", "compare", "timeline", "profile"])
def test_every_command_says_both_meanings_of_o(command):
    """One -o and one --force in the four commands, whose help says both: the file of what is read, the run
    folder of a program run."""
    def flat(text: str) -> str:  # one line, as click wraps at a space or after a hyphen (ncuwrap-|runs)
        return re.sub(r"(?<=-) ", "", " ".join(text.split()))

    shown = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "100"}).output
    says = ("-o, --output <path> Where the output goes. Given a report or capture (diagnose, compare, timeline FILE or --ranks DIR): "
            "the file the output is written to instead of stdout, whole, never an input. Given a program to run (profile, timeline -- "
            "PROGRAM, --per-rank): the run folder (default: ncuwrap-runs/<target>-<time>; a timeline's, ncuwrap-runs/timeline-<time>). "
            "Nothing there is replaced without --force. --force Replace the --output file, or the files of the --output run folder, if there.")
    assert flat(says) in flat(shown), shown

    params = {p.name: p for p in typer.main.get_command(app).commands[command].params}
    assert params["output"].help == options.Output.__metadata__[0].help
    assert params["force"].help == options.Replace.__metadata__[0].help
