"""ncu's console, read: the ==PROF== progress of each kernel on real captured output (whole, and byte by
byte as it streams), older ncu's format, the program's own lines told apart from ncu's; and run_ncu
following a real child process."""

from __future__ import annotations

import sys
from pathlib import Path

from ncuwrap.core.process import LineSplitter
from ncuwrap.profile import console as C
from ncuwrap.profile.ncu_tool import run_ncu

DATA = Path(__file__).resolve().parent / "data"
CONSOLE = DATA / "h200" / "transpose" / "ncu_console_transposeNaive.log"


class Recorder(C.Progress):
    def __init__(self):
        self.events = []

    def kernel(self, index, name, percent):
        self.events.append(("kernel", index, name, percent))

    def kernel_done(self, index, name, passes):
        self.events.append(("done", index, name, passes))

    def finished(self, run):
        self.events.append(("finished", run.returncode))


def test_real_h200_console_log():
    recorder = Recorder()
    run = C.parse_console(CONSOLE.read_text(), recorder)
    assert [(k.name, k.passes, k.percent) for k in run.kernels] == [("transposeNaive", 38, 100)]
    assert run.passes == [38]
    assert ("done", 0, "transposeNaive", 38) in recorder.events
    assert run.warnings == ["==WARNING== Unable to access the following 6 metrics: ctc__rx_bytes_data_user.sum, "
                            "ctc__rx_bytes_data_user.sum.pct_of_peak_sustained_elapsed, ctc__rx_bytes_data_user.sum.per_second, "
                            "ctc__tx_bytes_data_user.sum, ctc__tx_bytes_data_user.sum.pct_of_peak_sustained_elapsed, "
                            "ctc__tx_bytes_data_user.sum.per_second."]
    assert run.errors == [] and not run.permission_denied and run.app_exit_code is None and not run.no_kernels_profiled
    # The program's own output is told apart from ncu's lines.
    assert run.program_lines(2) == ["shared tile           0.094 ms     1430.8 GB/s   ok",
                                    "shared + padding      0.096 ms     1404.6 GB/s   ok"]


def test_progress_is_followed_while_the_line_is_written():
    """ncu prints '0%....50%....100% - N passes' in pieces: each piece is reported before the newline."""
    recorder = Recorder()
    run = C.NcuRun(argv=["ncu"])
    splitter = LineSplitter("stdout", run, C.ConsoleListener(run, recorder))
    data = CONSOLE.read_bytes()
    for i in range(len(data)):  # byte by byte: the worst case for a chunked reader
        splitter.feed(data[i:i + 1])
    splitter.feed(b"", final=True)
    percents = [e[3] for e in recorder.events if e[0] == "kernel"]
    assert percents[0] == 0 and 50 in percents and percents[-1] == 100
    assert percents == sorted(percents)
    assert [e for e in recorder.events if e[0] == "done"] == [("done", 0, "transposeNaive", 38)]
    assert len(run.kernels) == 1 and run.lines == [("stdout", ln) for ln in CONSOLE.read_text().splitlines()]


def test_older_ncu_progress_format_and_several_kernels():
    text = ('==PROF== Profiling "kernelA" - 0: 0%....50%....100% - 10 passes\n'
            '==PROF== Profiling "kernelA" - 1: 0%....50%....100% - 10 passes\n'
            '==PROF== Profiling "void gemm<float, 128>(...)": 0%....50%....100% - 9 passes\n')
    run = C.parse_console(text)
    assert [(k.name, k.passes) for k in run.kernels] == [("kernelA", 10), ("kernelA", 10), ("void gemm<float, 128>(...)", 9)]


def test_crlf_and_a_line_cut_before_its_passes():
    run = C.parse_console('==PROF== Profiling "k": 0%....50%....\r\n==ERROR== Failed to profile "k" in process 12\r\n')
    assert [(k.name, k.passes, k.percent) for k in run.kernels] == [("k", None, 50)]
    assert run.errors == ['==ERROR== Failed to profile "k" in process 12']


def test_the_kernels_ncu_lists_when_a_filter_matched_none():
    run = C.parse_console("==WARNING== No kernels were profiled.\nAvailable Kernels:\n1. fill\n2. scale_rows\n"
                          "3. fill\nthe program's last line\n")
    assert run.no_kernels_profiled and run.available_kernels == ["fill", "scale_rows"]


def test_program_stderr_lines_are_preferred():
    run = C.NcuRun(argv=["ncu"])
    run.lines = [("stdout", "progress 10%"), ("stderr", "Traceback (most recent call last):"), ("stderr", "ValueError: bad"),
                 ("stdout", "==ERROR== The application returned an error code (1).")]
    assert run.program_lines() == ["Traceback (most recent call last):", "ValueError: bad"]
    assert run.app_exit_code == 1


def test_run_ncu_follows_a_real_process(tmp_path):
    """A python child prints ncu's lines on both streams: passes are counted, both land in the log."""
    log = tmp_path / "ncu.log"
    script = "import sys; print('==PROF== Profiling \"k\": 0%....50%....100% - 7 passes'); print('oops', file=sys.stderr)"
    recorder = Recorder()
    run = run_ncu([sys.executable, "-c", script], log, recorder)
    assert run.returncode == 0 and not run.interrupted
    assert run.passes == [7]
    assert sorted(run.lines) == [("stderr", "oops"), ("stdout", '==PROF== Profiling "k": 0%....50%....100% - 7 passes')]
    assert sorted(log.read_text().splitlines()) == ['==PROF== Profiling "k": 0%....50%....100% - 7 passes', "oops"]
    assert recorder.events[-1] == ("finished", 0)
