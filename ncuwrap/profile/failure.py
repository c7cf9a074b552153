"""A finished ncu run, judged: the one-line error it amounts to, with the fix (None: it profiled something).

Each cause is told from ncu's console (:mod:`.console`): no permission to the counters, an ncu that
cannot work with this driver or GPU, the program's own failure, a kernel filter that matched nothing.
"""

from __future__ import annotations

from typing import Sequence

from ncuwrap.core.errors import NcuwrapError, ProfilerError, ToolNotFoundError
from ncuwrap.profile.console import NcuRun

PERMISSION_FIX = (
    "no permission to read the GPU performance counters (ERR_NVGPUCTRPERM): run ncuwrap as root (sudo -E), "
    "or let all users profile with 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d/ and a reboot, "
    "or in a container start it with --cap-add SYS_ADMIN"
)
# ncu messages that mean this ncu cannot work with this driver or GPU.
_INCOMPATIBLE = (
    "LibraryNotLoaded",
    "failed to connect to the CUDA driver",
    "Failed to initialize the profiler",
    "device is not supported",
    "GPU is not supported",
    "not supported by this version",
    "unsupported GPU",
    "unsupported device",
    "not supported on this device",
    "driver version",
    "driver is too old",
    "newer driver",
    "update the driver",
    "not compatible with",
)


def _quote_lines(lines: list[str]) -> str:
    return " | ".join(line.strip()[:200] for line in lines)


def failure(run: NcuRun, *, log: str, known_kernels: Sequence[str] = (), kernel_filter: str | None = None,
            report_exists: bool = False) -> NcuwrapError | None:
    """The error a finished ncu run amounts to (None: it profiled something). One line each, with the fix.

    When a filter matched nothing, ncu (2023.1 and newer) lists the kernels the program launched
    under "Available Kernels:"; that list is quoted. Where ncu printed none, the kernels a bundled
    benchmark is known to launch are quoted instead. ncuwrap does not run an arbitrary program a second
    time just to list its kernels: it may be slow or have side effects; the message says how to list them.
    """
    if run.permission_denied:
        return ProfilerError(PERMISSION_FIX)
    incompatible = [e for e in run.errors if any(p.lower() in e.lower() for p in _INCOMPATIBLE)]
    if incompatible:
        text = incompatible[0].replace("==ERROR==", "").strip()
        return ToolNotFoundError(
            f"{run.argv[0]} cannot profile on this driver or GPU ({text}); install the Nsight Compute that matches the driver "
            f"(the one of the CUDA version nvidia-smi names, or newer) and pass --ncu /path/to/ncu"
        )
    code = run.app_exit_code
    if code is not None and code != 0:
        last = run.program_lines()
        tail = f"; its last lines: {_quote_lines(last)}" if last else "; it printed nothing"
        kept = " (the report so far is kept)" if report_exists else ""
        return ProfilerError(f"the program failed under ncu with exit code {code}{tail}; run it without ncu to reproduce, full log: {log}{kept}")
    where = f" -k {kernel_filter!r}" if kernel_filter else ""
    launched = run.available_kernels
    if launched:
        shown = ", ".join(launched[:20]) + (f" and {len(launched) - 20} more" if len(launched) > 20 else "")
        return ProfilerError(f"the kernel filter{where} matched no launch; the program launched: {shown}; pass -k with one of these (a regular expression)")
    if run.errors:
        return ProfilerError(f"ncu failed: {run.errors[0].replace('==ERROR==', '').strip()}; full log: {log}")
    if run.no_kernels_profiled or (not run.kernels and not report_exists):
        if known_kernels:
            return ProfilerError(f"the kernel filter{where} matched no launch; this benchmark launches: {', '.join(known_kernels)}; check -k, --launch-skip "
                                 f"and --nth-launch")
        if kernel_filter:
            return ProfilerError(f"the kernel filter{where} matched no launch (or --launch-skip skipped them all); "
                                 f"run 'ncuwrap profile -- PROGRAM' without -k to see the kernels it launches, full log: {log}")
        return ProfilerError(f"no kernel was profiled: the program launched no CUDA kernel that ncu could see; check that it uses the GPU, full log: {log}")
    if run.returncode not in (0, None) and not report_exists:
        return ProfilerError(f"ncu exited with code {run.returncode} and wrote no report; full log: {log}")
    return None
