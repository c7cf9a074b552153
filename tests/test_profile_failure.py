"""A failed ncu run as one line with the fix: each cause told from ncu's console (synthetic consoles
in ncu's exact wording here; the real ones are in tests/test_profile_captured.py)."""

from __future__ import annotations

from pathlib import Path

from ncuwrap.core.errors import ProfilerError, ToolNotFoundError
from ncuwrap.profile import console as C
from ncuwrap.profile import failure as F

CONSOLE = Path(__file__).resolve().parent / "data" / "h200" / "transpose" / "ncu_console_transposeNaive.log"


def _run(lines, stream="stdout", argv=("ncu",)):
    run = C.NcuRun(argv=list(argv))
    run.lines = [(stream, line) for line in lines]
    return run


def test_a_real_successful_run_is_no_failure():
    assert F.failure(C.parse_console(CONSOLE.read_text()), log="ncu.log", report_exists=True) is None


def test_permission_denied_says_what_to_change():
    run = _run(["==PROF== Connected to process 42 (/tmp/a)",
                "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on "
                "the target device 0. For instructions on enabling permissions and to get more information see "
                "https://developer.nvidia.com/ERR_NVGPUCTRPERM",
                "==WARNING== No kernels were profiled."])
    error = F.failure(run, log="r/ncu.log")
    assert isinstance(error, ProfilerError)
    assert str(error) == F.PERMISSION_FIX
    assert "\n" not in str(error)
    for fix in ("root", "NVreg_RestrictProfilingToAdminUsers=0", "--cap-add SYS_ADMIN"):
        assert fix in str(error)


def test_no_kernel_matched_lists_what_the_program_launched():
    run = _run(["==PROF== Connected to process 7 (/tmp/own_program)", "own_program: ok", "==PROF== Disconnected from process 7",
                "==WARNING== No kernels were profiled.", "Available Kernels:", "1. fill", "2. scale_rows", "3. scale_columns"])
    assert run.available_kernels == ["fill", "scale_rows", "scale_columns"]
    error = F.failure(run, log="r/ncu.log", kernel_filter="scale_diag")
    assert str(error) == ("the kernel filter -k 'scale_diag' matched no launch; the program launched: fill, scale_rows, "
                          "scale_columns; pass -k with one of these (a regular expression)")


def test_no_kernel_matched_without_ncus_list():
    run = _run(["==WARNING== No kernels were profiled."])
    bundled = F.failure(run, log="r/ncu.log", kernel_filter="^nope$", known_kernels=["transpose_naive", "transpose_copy"])
    assert str(bundled) == ("the kernel filter -k '^nope$' matched no launch; this benchmark launches: transpose_naive, "
                            "transpose_copy; check -k, --launch-skip and --nth-launch")
    program = F.failure(run, log="r/ncu.log", kernel_filter="nope")
    assert str(program) == ("the kernel filter -k 'nope' matched no launch (or --launch-skip skipped them all); run "
                            "'ncuwrap profile -- PROGRAM' without -k to see the kernels it launches, full log: r/ncu.log")
    nothing = F.failure(run, log="r/ncu.log")
    assert str(nothing) == ("no kernel was profiled: the program launched no CUDA kernel that ncu could see; check that it "
                            "uses the GPU, full log: r/ncu.log")


def test_program_failure_gives_its_exit_code_and_last_lines():
    run = _run(["==PROF== Connected to process 9 (/tmp/a)", "step 1", "error: CUDA error cudaErrorMemoryAllocation (out of memory)",
                "==PROF== Disconnected from process 9", "==ERROR== The application returned an error code (2).",
                "==WARNING== No kernels were profiled."])
    error = F.failure(run, log="r/ncu.log")
    assert str(error) == ("the program failed under ncu with exit code 2; its last lines: step 1 | error: CUDA error "
                          "cudaErrorMemoryAllocation (out of memory); run it without ncu to reproduce, full log: r/ncu.log")
    silent = F.failure(_run(["==ERROR== The application returned an error code (4)."]), log="l", report_exists=True)
    assert str(silent) == ("the program failed under ncu with exit code 4; it printed nothing; run it without ncu to "
                           "reproduce, full log: l (the report so far is kept)")


def test_program_stderr_lines_are_quoted():
    run = C.NcuRun(argv=["ncu"])
    run.lines = [("stdout", "progress 10%"), ("stderr", "Traceback (most recent call last):"), ("stderr", "ValueError: bad"),
                 ("stdout", "==ERROR== The application returned an error code (1).")]
    assert "exit code 1; its last lines: Traceback (most recent call last): | ValueError: bad" in str(F.failure(run, log="l"))


def test_ncu_that_cannot_use_the_driver():
    run = _run(["==ERROR== An error was reported by the counter measurement library:",
                "==ERROR== Failed to initialize the profiler: LibraryNotLoaded. Check that a compatible driver library is loaded.",
                "==ERROR== The application returned an error code (9)."], argv=["/opt/old/ncu"])
    error = F.failure(run, log="l")
    assert isinstance(error, ToolNotFoundError)
    assert str(error) == ("/opt/old/ncu cannot profile on this driver or GPU (Failed to initialize the profiler: LibraryNotLoaded. "
                          "Check that a compatible driver library is loaded.); install the Nsight Compute that matches the driver "
                          "(the one of the CUDA version nvidia-smi names, or newer) and pass --ncu /path/to/ncu")


def test_other_ncu_errors_and_exit_codes():
    run = _run(["==ERROR== Failed to find section 'Nope'"])
    assert str(F.failure(run, log="l")) == "ncu failed: Failed to find section 'Nope'; full log: l"
    crashed = _run(["==PROF== Profiling \"k\": 0%"])
    crashed.kernels = [C.ProfiledKernel("k")]
    crashed.returncode = -11
    assert str(F.failure(crashed, log="l")) == "ncu exited with code -11 and wrote no report; full log: l"
    crashed.returncode = 0
    assert F.failure(crashed, log="l", report_exists=True) is None
