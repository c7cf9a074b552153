"""The last-resort handler (one line for any unexpected exception, --debug for the traceback) and
terminal escapes kept out of error lines (issue 10, parts B and C)."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import DATA, H200, run_cli

VECADD = H200 / "vecadd" / "bench_add.raw.csv"
# OSC 52 (write the clipboard), OSC 8 (a hidden link), CSI (clear the screen) and a C1 CSI (U+009B).
ESCAPES = "\x1b]52;c;cHduZWQ=\x07\x1b]8;;https://example.invalid\x1b\\link\x1b]8;;\x1b\\\x1b[2J\x9b31m\r"
# The same without '/', which a file name cannot hold.
NAME_ESCAPES = "\x1b]52;c;cHduZWQ=\x07\x1b]8;;file:x\x1b\\link\x1b[2J\x9b31m\r"


def _boom(*args, **kwargs):
    raise ValueError("a bug\nwith a second line")


def test_unexpected_exception_is_one_line(capsys, monkeypatch):
    monkeypatch.setattr("ncuwrap.kernel.diagnosis.diagnose_profile", _boom)
    code, out, err = run_cli(capsys, "diagnose", VECADD)
    assert code == 2 and out == ""
    assert err == "ncuwrap: error: internal error: ValueError: a bug with a second line (run with --debug for the traceback)\n"


def test_debug_lets_the_traceback_through(capsys, monkeypatch):
    monkeypatch.setattr("ncuwrap.kernel.diagnosis.diagnose_profile", _boom)
    with pytest.raises(ValueError, match="a bug"):
        run_cli(capsys, "--debug", "diagnose", VECADD)
    # The flag does not stick to the next run in the same process.
    code, _, err = run_cli(capsys, "diagnose", VECADD)
    assert code == 2 and err.startswith("ncuwrap: error: internal error: ValueError")


def test_usage_errors_are_one_line_too(capsys):
    """A bad option or option value is one line with where to look (issue 22: click's usage block was
    the only multi-line error left), exit 2."""
    code, out, err = run_cli(capsys, "diagnose", "--no-such-option")
    assert (code, out) == (2, "")
    assert err == "ncuwrap: error: No such option: --no-such-option; see 'ncuwrap diagnose --help'\n"
    code, out, err = run_cli(capsys, "compare", "a", "b", "--threshold", "0x10")
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith("ncuwrap: error: Invalid value for '--threshold': ") and err.endswith("; see 'ncuwrap compare --help'\n")


def test_escapes_in_a_kernel_name_do_not_reach_the_terminal(capsys, tmp_path):
    # The real vecadd export with its kernel renamed to carry terminal escapes.
    report = tmp_path / "escapes.raw.csv"
    text = VECADD.read_text(encoding="utf-8")
    assert text.count('"coalesced_add(') == 2
    report.write_text(text.replace('"coalesced_add(', f'"coalesced{ESCAPES}_add('), encoding="utf-8")
    code, out, err = run_cli(capsys, "diagnose", report, "--kernel", "nomatch")
    assert code == 2 and out == ""
    assert err == (f"ncuwrap: error: --kernel 'nomatch' matched no kernel of {report}; its kernels: "
                   "coalesced ]52;c;cHduZWQ= ]8;;https://example.invalid \\link ]8;; \\ [2J 31m _add\n")
    assert not any(c in err for c in "\x1b\x07\x9b\r")


def test_escapes_in_a_file_name_do_not_reach_the_terminal(capsys, tmp_path):
    report = tmp_path / f"x{NAME_ESCAPES}.raw.csv"
    shutil.copyfile(DATA / "bad" / "truncated_row.raw.csv", report)
    code, _, err = run_cli(capsys, "diagnose", report)
    assert code == 2
    assert err == (f"ncuwrap: error: {tmp_path}/x ]52;c;cHduZWQ= ]8;;file:x \\link [2J 31m .raw.csv: "
                   "the CSV is truncated (last row incomplete); export it again from the .ncu-rep\n")
    assert not any(c in err for c in "\x1b\x07\x9b\r")


@pytest.mark.parametrize("command", [[], ["diagnose"], ["compare"], ["profile"], ["timeline"], ["bench"], ["build"], ["list"],
                                     ["rules"], ["rules", "metrics"], ["rules", "check"]])
def test_h_is_help_on_every_command(capsys, command):
    # Issue 25: -h as --help, as ncu and nsys take it.
    code, short, _ = run_cli(capsys, *command, "-h")
    code_long, long, _ = run_cli(capsys, *command, "--help")
    assert (code, code_long) == (0, 0) and short == long and short.startswith("Usage: ncuwrap")
