"""Nsight Systems on the command line: find ``nsys``, run ``nsys profile``, export a ``.nsys-rep`` to
SQLite, and explain a capture that stopped at ``.qdstrm``.

``nsys`` is looked up only when a command needs it (never at import time). The command lines are
built by plain functions (:func:`export_argv`, :func:`profile_argv`) so tests can check them
without nsys.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ncuwrap.core import process
from ncuwrap.core.errors import InputError, ProfilerError, ToolNotFoundError
from ncuwrap.core.process import ProcessRun

PROFILE_TRACE = "cuda,nvtx,osrt"

_INSTALL_HINT = ("install Nsight Systems (it ships with the CUDA toolkit and the NVIDIA developer tools), put nsys on PATH, "
                 "or pass its location with --nsys-path")


def find_nsys(nsys: str | Path | None = None) -> str:
    """The nsys executable: ``nsys`` if given (a path or a name on PATH), else ``nsys`` on PATH."""
    if nsys:
        candidate = Path(nsys)
        if candidate.is_file():
            # Path("./nsys") is "nsys", which a child process would look up on PATH: keep it a path.
            return os.path.abspath(candidate)
        found = shutil.which(str(nsys))
        if found:
            return found
        raise ToolNotFoundError(f"{nsys}: nsys not found at this path; {_INSTALL_HINT}")
    found = shutil.which("nsys")
    if not found:
        raise ToolNotFoundError(f"nsys: not found on PATH; {_INSTALL_HINT}")
    return found


def export_argv(nsys: str, report: Path, output: Path) -> list[str]:
    """``nsys export`` of ``report`` to the SQLite file ``output``."""
    return [nsys, "export", "--type", "sqlite", "--output", str(output), "--force-overwrite", "true", str(report)]


# For a Python program, PyTorch's ops as NVTX ranges on the thread that runs them (ncuwrap.timeline.readers.pytorch_nvtx):
# what ties each top kernel to its op, and a backward kernel to its forward op (ncuwrap.timeline.launched_from).
# Its cost, measured on the H200 (tests/data/h200_ncuwrap/kineto/cost_*.log, each program's steady step median,
# two runs): a GPU-bound GPT training step 28.07/28.48 ms under nsys's default trace, 28.21/28.17 ms with it (no
# cost beyond the noise: the host runs ahead of the GPU); a launch-bound tiny MLP 6.58/6.34 ms, 9.34/7.84 ms with it
# (+33% on the host's side; 4.07/3.97 ms without nsys). A launch-bound program stays launch-bound, its host share
# a little larger. --python-backtrace=cuda is not added: it needs CPU sampling, which ncuwrap turns off
# (--sample=none), and those captures hold no Python backtrace (no callchain on any CUDA call) while it costs more
# on the launch-bound loop (8.15/8.84 ms). --nsys-arg --pytorch=... replaces this one.
PYTORCH_TRACE = "--pytorch=autograd-nvtx"
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")


def is_python(program: list[str]) -> bool:
    """Whether ``program`` is a Python program: run by python, python3, python3.12..., or a .py file."""
    if not program:
        return False
    exe = os.path.basename(str(program[0]))
    return _PYTHON.match(exe) is not None or exe.endswith(".py")


# nsys profile options ncuwrap sets itself, and what to do instead: --nsys-arg may not set them again
# (nsys refuses an option given twice, and ncuwrap reads the capture by its own file names).
# Kernels inside CUDA graphs traced one by one, so that they are named and timed (costs: docs/timeline.md).
GRAPH_TRACE = "--cuda-graph-trace=node"
OWNED_OPTIONS = {
    name: f"ncuwrap sets {name} itself; {fix}"
    for names, fix in (
        (("--output", "-o"), "use ncuwrap's -o instead (the capture goes to RUN_DIR/timeline.nsys-rep)"),
        (("--force-overwrite", "-f"), "use ncuwrap's --force instead"),
        (("--trace", "-t"), "use ncuwrap's --nsys-trace instead"),
        (("--sample", "-s"), "drop it (ncuwrap passes --sample=none: its analysis reads no CPU samples)"),
        (("--cpuctxsw",), "drop it (ncuwrap passes --cpuctxsw=none: its analysis reads no context switches)"),
    )
    for name in names
}
# Not on ncuwrap's nsys profile line, but what it writes would take the names of ncuwrap's own files.
OWNED_OPTIONS["--export"] = ("ncuwrap exports the capture itself (to RUN_DIR/timeline.sqlite, where nsys's --export would "
                             "write too); drop it, and run 'nsys export' on RUN_DIR/timeline.nsys-rep for other formats")


@dataclass(frozen=True)
class NsysOptions:
    """nsys profile options passed on: the --trace list (``trace``, --nsys-trace; None: PROFILE_TRACE)
    and any other nsys profile argument (``extra``, --nsys-arg), just before the program."""

    trace: str | None = None
    extra: tuple[str, ...] = ()
    python: bool = False  # the program is Python: add PYTORCH_TRACE (:meth:`for_program`)

    def for_program(self, program: list[str]) -> "NsysOptions":
        """These options for ``program``: with PyTorch's op ranges when it is Python (:func:`is_python`)."""
        return dataclasses.replace(self, python=is_python(program))

    @property
    def pytorch_trace(self) -> tuple[str, ...]:
        """PYTORCH_TRACE for a Python program, unless --nsys-arg sets --pytorch itself."""
        given = any(str(a).split("=", 1)[0] == "--pytorch" for a in self.extra)
        return (PYTORCH_TRACE,) if self.python and not given else ()

    @property
    def trace_list(self) -> str:
        if self.trace is None:
            return PROFILE_TRACE
        return ",".join(t.strip() for t in self.trace.split(",") if t.strip())

    @property
    def first_flag(self) -> str | None:
        """The first of --nsys-trace, --nsys-arg that was given (None: neither): for refusing them where no nsys runs."""
        return "--nsys-trace" if self.trace is not None else "--nsys-arg" if self.extra else None

    @property
    def graph_trace(self) -> tuple[str, ...]:
        """ncuwrap's --cuda-graph-trace=node (each kernel of a CUDA graph traced and named, not the graph as one
        event), unless --nsys-arg sets --cuda-graph-trace itself."""
        given = any(str(a).split("=", 1)[0] == "--cuda-graph-trace" for a in self.extra)
        return () if given else (GRAPH_TRACE,)

    def check(self) -> "NsysOptions":
        """Itself when ncuwrap can run and read such a capture; InputError (one line naming the option) otherwise."""
        traced = [t for t in self.trace_list.split(",") if t]
        if "cuda" not in traced:
            raise InputError(f"--nsys-trace {self.trace!r}: ncuwrap's timeline analysis needs the CUDA trace (kernels and "
                             f"memory copies); add cuda, e.g. --nsys-trace {','.join(['cuda', *traced])}")
        for arg in self.extra:
            name = str(arg).split("=", 1)[0]
            if name in OWNED_OPTIONS:
                raise InputError(f"--nsys-arg {arg!r}: {OWNED_OPTIONS[name]}")
        return self


def profile_argv(nsys: str, output: Path, program: list[str], options: NsysOptions | None = None) -> list[str]:
    """``nsys profile`` of ``program``, writing ``output``.nsys-rep (CUDA API + GPU activity, NVTX,
    OS runtime calls; no CPU sampling or context-switch trace, which cost and are not used; PyTorch's ops
    where ``options`` are for a Python program: :meth:`NsysOptions.for_program`).
    ``options`` (checked here) replace the trace list and add their ``extra`` just before ``--``."""
    options = (options or NsysOptions()).check()
    return [nsys, "profile", f"--trace={options.trace_list}", "--sample=none", "--cpuctxsw=none", *options.graph_trace, *options.pytorch_trace,
            "-o", str(output),
            "--force-overwrite", "true", *[str(a) for a in options.extra], "--", *program]


def _tail(text: str, lines: int = 5) -> str:
    kept = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return " | ".join(kept[-lines:])


def export_sqlite(report: Path, output: Path, nsys: str | Path | None = None) -> Path:
    """Export ``report`` (.nsys-rep) to ``output`` (.sqlite) with nsys; return the file written."""
    exe = find_nsys(nsys)
    argv = export_argv(exe, report, output)
    try:
        done = subprocess.run(argv, capture_output=True, check=False, **process.TOOL_TEXT)
    except OSError as exc:
        raise ToolNotFoundError(f"{exe}: cannot run nsys ({exc}); {_INSTALL_HINT}") from None
    written = output if output.exists() else Path(f"{output}.sqlite")
    if done.returncode != 0 or not written.exists():
        detail = _tail(done.stderr) or _tail(done.stdout) or f"exit code {done.returncode}"
        raise InputError(f"{report}: 'nsys export --type sqlite' failed ({detail}); check that the report opens in "
                         "Nsight Systems and that this nsys is at least as new as the one that captured it")
    return written


def qdstrm_error(path: Path, output: str = "") -> str:
    """Why a capture stopped at .qdstrm and how to finish it (one line)."""
    why = importer_failure(output)
    return (f"{path}: an unfinished Nsight Systems capture (.qdstrm): nsys converts it to .nsys-rep with its "
            f"QdstrmImporter, which did not run{' (' + why + ')' if why else ''}; on some installs the importer "
            "cannot load libdw.so.1 - install elfutils' libdw (Debian/Ubuntu: libdw1) or add the folder holding it "
            f"to LD_LIBRARY_PATH, then convert it with 'QdstrmImporter -i {path}' (in nsys's host-linux-* folder) "
            "or capture again, and diagnose the .nsys-rep")


def importer_failure(output: str) -> str | None:
    """The importer's own complaint in nsys's output, if it is there (e.g. a library it cannot load)."""
    library = re.search(r"([\w.+-]+\.so[\w.]*): cannot open shared object file", output or "")
    if library:
        return f"{library.group(1)} could not be loaded"
    line = re.search(r"^.*importer.*(?:error|fail|not found).*$", output or "", flags=re.IGNORECASE | re.MULTILINE)
    return line.group(0).strip()[:200] if line else None


def check_not_qdstrm(path: Path) -> None:
    if path.name.lower().endswith(".qdstrm"):
        raise InputError(qdstrm_error(path))


def run_profile(argv: list[str], log_path: Path | None = None) -> ProcessRun:
    """Run ``nsys profile`` through ncuwrap's process runner (as ncu is run): its output is kept and
    appended to ``log_path`` as it comes; Ctrl-C stops nsys and the program (``interrupted``)."""
    try:
        return process.run(argv, log_path)
    except process.StartError as exc:
        raise ToolNotFoundError(f"{argv[0]}: cannot run nsys ({exc.cause}); {_INSTALL_HINT}") from None


def profile_failure(program: list[str], done: ProcessRun, log: Path) -> ProfilerError:
    detail = _tail(done.stderr) or _tail(done.stdout) or "no output"
    return ProfilerError(f"{program[0]}: the program failed under nsys with exit code {done.returncode} ({detail}); "
                         f"full output in {log}")
