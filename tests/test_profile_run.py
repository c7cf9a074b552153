"""Running ncu: the console parser on real captured output, failures as one line, Ctrl-C."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ncuwrap.errors import ProfilerError, ToolNotFoundError
from ncuwrap.profile import run as R

DATA = Path(__file__).resolve().parent / "data"
CONSOLE = DATA / "h200" / "transpose" / "ncu_console_transposeNaive.log"


class Recorder(R.Progress):
    def __init__(self):
        self.events = []

    def kernel(self, index, name, percent):
        self.events.append(("kernel", index, name, percent))

    def kernel_done(self, index, name, passes):
        self.events.append(("done", index, name, passes))


def _run(lines, stream="stdout", argv=("ncu",)):
    run = R.NcuRun(argv=list(argv))
    run.lines = [(stream, line) for line in lines]
    return run


# ------------------------------------------------------------------------------ the real console


def test_real_h200_console_log():
    recorder = Recorder()
    run = R.parse_console(CONSOLE.read_text(), recorder)
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
    assert R.failure(run, log="ncu.log", report_exists=True) is None


def test_progress_is_followed_while_the_line_is_written():
    """ncu prints '0%....50%....100% - N passes' in pieces: each piece is reported before the newline."""
    recorder = Recorder()
    run = R.NcuRun(argv=["ncu"])
    parser = R._Parser("stdout", run, recorder)
    data = CONSOLE.read_bytes()
    for i in range(len(data)):  # byte by byte: the worst case for a chunked reader
        parser.feed(data[i:i + 1])
    parser.feed(b"", final=True)
    percents = [e[3] for e in recorder.events if e[0] == "kernel"]
    assert percents[0] == 0 and 50 in percents and percents[-1] == 100
    assert percents == sorted(percents)
    assert [e for e in recorder.events if e[0] == "done"] == [("done", 0, "transposeNaive", 38)]
    assert len(run.kernels) == 1 and run.lines == [("stdout", ln) for ln in CONSOLE.read_text().splitlines()]


def test_older_ncu_progress_format_and_several_kernels():
    text = ('==PROF== Profiling "kernelA" - 0: 0%....50%....100% - 10 passes\n'
            '==PROF== Profiling "kernelA" - 1: 0%....50%....100% - 10 passes\n'
            '==PROF== Profiling "void gemm<float, 128>(...)": 0%....50%....100% - 9 passes\n')
    run = R.parse_console(text)
    assert [(k.name, k.passes) for k in run.kernels] == [("kernelA", 10), ("kernelA", 10), ("void gemm<float, 128>(...)", 9)]


def test_crlf_and_a_line_cut_before_its_passes():
    run = R.parse_console('==PROF== Profiling "k": 0%....50%....\r\n==ERROR== Failed to profile "k" in process 12\r\n')
    assert [(k.name, k.passes, k.percent) for k in run.kernels] == [("k", None, 50)]
    assert run.errors == ['==ERROR== Failed to profile "k" in process 12']


# ----------------------------------------------------------------------------------------- failures


def test_permission_denied_says_what_to_change():
    run = _run(["==PROF== Connected to process 42 (/tmp/a)",
                "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on "
                "the target device 0. For instructions on enabling permissions and to get more information see "
                "https://developer.nvidia.com/ERR_NVGPUCTRPERM",
                "==WARNING== No kernels were profiled."])
    error = R.failure(run, log="r/ncu.log")
    assert isinstance(error, ProfilerError)
    assert str(error) == R.PERMISSION_FIX
    assert "\n" not in str(error)
    for fix in ("root", "NVreg_RestrictProfilingToAdminUsers=0", "--cap-add SYS_ADMIN"):
        assert fix in str(error)


def test_no_kernel_matched_lists_what_the_program_launched():
    run = _run(["==PROF== Connected to process 7 (/tmp/own_program)", "own_program: ok", "==PROF== Disconnected from process 7",
                "==WARNING== No kernels were profiled.", "Available Kernels:", "1. fill", "2. scale_rows", "3. scale_columns"])
    assert run.available_kernels == ["fill", "scale_rows", "scale_columns"]
    error = R.failure(run, log="r/ncu.log", kernel_filter="scale_diag")
    assert str(error) == ("the kernel filter -k 'scale_diag' matched no launch; the program launched: fill, scale_rows, "
                          "scale_columns; pass -k with one of these (a regular expression)")


def test_no_kernel_matched_without_ncus_list():
    run = _run(["==WARNING== No kernels were profiled."])
    bundled = R.failure(run, log="r/ncu.log", kernel_filter="^nope$", known_kernels=["transpose_naive", "transpose_copy"])
    assert "this benchmark launches: transpose_naive, transpose_copy" in str(bundled)
    program = R.failure(run, log="r/ncu.log", kernel_filter="nope")
    assert "without -k to see the kernels it launches" in str(program)
    nothing = R.failure(run, log="r/ncu.log")
    assert str(nothing).startswith("no kernel was profiled: the program launched no CUDA kernel")


def test_program_failure_gives_its_exit_code_and_last_lines():
    run = _run(["==PROF== Connected to process 9 (/tmp/a)", "step 1", "error: CUDA error cudaErrorMemoryAllocation (out of memory)",
                "==PROF== Disconnected from process 9", "==ERROR== The application returned an error code (2).",
                "==WARNING== No kernels were profiled."])
    error = R.failure(run, log="r/ncu.log")
    assert str(error) == ("the program failed under ncu with exit code 2; its last lines: step 1 | error: CUDA error "
                          "cudaErrorMemoryAllocation (out of memory); run it without ncu to reproduce, full log: r/ncu.log")


def test_program_stderr_lines_are_preferred():
    run = R.NcuRun(argv=["ncu"])
    run.lines = [("stdout", "progress 10%"), ("stderr", "Traceback (most recent call last):"), ("stderr", "ValueError: bad"),
                 ("stdout", "==ERROR== The application returned an error code (1).")]
    assert run.program_lines() == ["Traceback (most recent call last):", "ValueError: bad"]
    assert "exit code 1; its last lines: Traceback (most recent call last): | ValueError: bad" in str(R.failure(run, log="l"))


def test_ncu_that_cannot_use_the_driver():
    run = _run(["==ERROR== An error was reported by the counter measurement library:",
                "==ERROR== Failed to initialize the profiler: LibraryNotLoaded. Check that a compatible driver library is loaded.",
                "==ERROR== The application returned an error code (9)."], argv=["/opt/old/ncu"])
    error = R.failure(run, log="l")
    assert isinstance(error, ToolNotFoundError)
    assert str(error).startswith("/opt/old/ncu cannot profile on this driver or GPU (Failed to initialize the profiler: LibraryNotLoaded.")
    assert "install the Nsight Compute that matches the driver" in str(error)


def test_other_ncu_errors_and_exit_codes():
    run = _run(["==ERROR== Failed to find section 'Nope'"])
    assert str(R.failure(run, log="l")) == "ncu failed: Failed to find section 'Nope'; full log: l"
    crashed = _run(["==PROF== Profiling \"k\": 0%"])
    crashed.kernels = [R.ProfiledKernel("k")]
    crashed.returncode = -11
    assert str(R.failure(crashed, log="l")) == "ncu exited with code -11 and wrote no report; full log: l"


# ----------------------------------------------------------------------------------------- running


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_run_streams_both_outputs_into_the_log(tmp_path):
    log = tmp_path / "ncu.log"
    script = "import sys; print('==PROF== Profiling \"k\": 0%....50%....100% - 7 passes'); print('oops', file=sys.stderr)"
    recorder = Recorder()
    run = R.run_ncu([sys.executable, "-c", script], log, recorder)
    assert run.returncode == 0 and not run.interrupted
    assert run.passes == [7]
    assert sorted(run.lines) == [("stderr", "oops"), ("stdout", '==PROF== Profiling "k": 0%....50%....100% - 7 passes')]
    assert sorted(log.read_text().splitlines()) == ['==PROF== Profiling "k": 0%....50%....100% - 7 passes', "oops"]
    assert run.wall_s > 0


def test_missing_executable():
    with pytest.raises(ToolNotFoundError, match=r"^/nowhere/ncu: not found"):
        R.run_ncu(["/nowhere/ncu", "--version"])


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to check processes")
def test_ctrl_c_stops_the_whole_process_group_and_keeps_the_log(tmp_path, monkeypatch):
    """A real child (a shell) with a real grandchild (sleep): Ctrl-C in ncuwrap stops both."""
    monkeypatch.setattr(R, "STOP_GRACE_S", (0.5, 0.5))
    pidfile = tmp_path / "sleep.pid"
    script = f"sleep 300 & echo $! > {pidfile}; echo ready; wait"

    class CtrlC(R.Progress):
        def output(self, stream, line):
            if line == "ready":
                raise KeyboardInterrupt  # what Python raises when the user presses Ctrl-C

    log = tmp_path / "ncu.log"
    start = time.monotonic()
    run = R.run_ncu(["sh", "-c", script], log, CtrlC())
    assert run.interrupted
    assert time.monotonic() - start < 15
    sleep_pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(sleep_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(sleep_pid), "the grandchild survived Ctrl-C"
    assert "ready" in log.read_text()
    assert run.returncode is not None and run.returncode != 0


def test_ctrl_c_reaches_ncuwrap_only(tmp_path):
    """The child runs in its own session: a terminal's SIGINT (to ncuwrap's group) does not reach it directly."""
    out = tmp_path / "ids"
    R.run_ncu([sys.executable, "-c", f"import os; open({str(out)!r}, 'w').write(f'{{os.getpgid(0)}} {{os.getsid(0)}}')"])
    pgid, sid = map(int, out.read_text().split())
    assert pgid != os.getpgid(0) and sid != os.getsid(0)


def test_popen_gets_the_exact_argv_its_own_session_and_no_stdin(tmp_path):
    """subprocess.Popen mocked: the argv is passed unchanged; the child gets its own session (Ctrl-C
    reaches ncuwrap only) and no terminal input."""
    seen = {}

    class FakePopen:
        def __init__(self, argv, **kwargs):
            seen["argv"], seen["kwargs"] = argv, kwargs
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            os.write(out_w, CONSOLE.read_bytes())
            os.close(out_w)
            os.close(err_w)
            self.stdout, self.stderr = os.fdopen(out_r, "rb"), os.fdopen(err_r, "rb")
            self.pid, self.returncode = 4242, None

        def wait(self, timeout=None):
            self.returncode = 0
            return 0

    argv = ["/opt/ncu/ncu", "--export", "r/report", "--clock-control", "none", "--set", "full", "./transpose"]
    run = R.run_ncu(argv, tmp_path / "ncu.log", popen=FakePopen)
    assert seen["argv"] == argv
    assert seen["kwargs"]["start_new_session"] is True
    assert seen["kwargs"]["stdin"] == subprocess.DEVNULL
    assert seen["kwargs"]["stdout"] == seen["kwargs"]["stderr"] == subprocess.PIPE
    assert run.passes == [38] and run.returncode == 0
    assert (tmp_path / "ncu.log").read_bytes() == CONSOLE.read_bytes()


def test_crlf_cut_between_chunks():
    run = R.NcuRun(argv=["ncu"])
    parser = R._Parser("stdout", run, R.Progress())
    for chunk in (b"first\r", b"\nsecond\r", b"third\n"):
        parser.feed(chunk)
    parser.feed(b"", final=True)
    assert run.lines == [("stdout", "first"), ("stdout", "second"), ("stdout", "third")]
