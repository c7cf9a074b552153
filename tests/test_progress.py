"""Progress on long work (issue 39): the library reports what it does through ncuwrap.core.progress, never
printing; the command line shows it on stderr only when stderr is a terminal, and not with -q. Real
H200 reports: two .ncu-rep.gz of the bundled atomics benchmark and two raw CSV exports of transpose."""

from __future__ import annotations

import pytest

from ncuwrap.core import progress
from ncuwrap.cli import progress as shown_progress
from tests.conftest import DATA, run_cli

DIAG = DATA / "h200_ncuwrap" / "diag"
PAIRS = DATA / "h200_ncuwrap" / "pairs_full"
NAIVE, SHARED = PAIRS / "transpose-naive.raw.csv.gz", PAIRS / "transpose-shared_tile.raw.csv.gz"
STEPS = DATA / "h200_ncuwrap" / "steps"


def test_the_library_reports_each_read_and_diagnosis():
    import ncuwrap

    heard = []
    with progress.listening(lambda what, done, total: heard.append((what, done, total))):
        ncuwrap.compare_reports(DIAG / "atomics_global_hotspot.ncu-rep.gz", DIAG / "atomics_shared_privatized.ncu-rep.gz")
    said = [what for what, _, _ in heard]
    for name in ("atomics_global_hotspot.ncu-rep.gz", "atomics_shared_privatized.ncu-rep.gz"):
        assert f"reading {name}" in said and f"diagnosing {name}" in said
    # The reader's children counted as they finish: the last of each report's says all are done.
    counted = [(done, total) for what, done, total in heard if total]
    assert counted and all(0 < done <= total for done, total in counted) and counted[-1][0] == counted[-1][1]
    # Outside the block nobody listens: reports go nowhere.
    progress.report("nobody hears this")
    assert heard[-1][0] != "nobody hears this"


def test_a_timeline_reports_its_capture_and_the_rules():
    from ncuwrap.timeline.diagnosis import diagnose_timeline

    heard = []
    with progress.listening(lambda what, done, total: heard.append((what, done, total))):
        diagnose_timeline(STEPS / "gpu_train.sqlite.gz")
    assert heard == [("reading gpu_train.sqlite.gz", 0, 1), ("applying the rules", 1, 1)]


def test_piped_stderr_gets_no_progress(capsys):
    # Under pytest stderr is captured, not a terminal: what a pipe or a file sees.
    code, out, err = run_cli(capsys, "compare", NAIVE, SHARED)
    assert code == 0 and out and err == ""


@pytest.mark.parametrize("command", [("compare", NAIVE, SHARED), ("diagnose", NAIVE), ("timeline", STEPS / "gpu_train.sqlite.gz")])
def test_a_terminal_gets_a_progress_line_that_quiet_turns_off(capsys, monkeypatch, command):
    code, piped, _ = run_cli(capsys, *command)
    assert code == 0
    monkeypatch.setattr(shown_progress, "_stderr_is_terminal", lambda: True)
    monkeypatch.setattr(shown_progress, "DELAY_S", 0)
    code, out, err = run_cli(capsys, *command)
    # The line is drawn on stderr and cleared at the end; stdout is the same as without it.
    assert code == 0 and out == piped
    name = command[1].name
    assert f"reading {name}" in err
    assert ("diagnosing" in err) == (command[0] != "timeline")
    assert "\x1b[?25h" in err and err.endswith("\x1b[2K")  # the cursor given back, the line cleared
    code, out, err = run_cli(capsys, *command, "-q")
    assert code == 0 and out == piped and err == ""


def test_a_file_name_is_shown_as_written(capsys, monkeypatch, tmp_path):
    # Neither rich markup nor a terminal escape in a file name reaches the terminal as such.
    name = tmp_path / "[bold]x\x1b[2J.raw.csv.gz"
    name.write_bytes(NAIVE.read_bytes())
    monkeypatch.setattr(shown_progress, "_stderr_is_terminal", lambda: True)
    monkeypatch.setattr(shown_progress, "DELAY_S", 0)
    code, _, err = run_cli(capsys, "diagnose", name)
    assert code == 0 and "reading [bold]x\\x1b[2J.raw.csv.gz" in err and "\x1b[2J" not in err
