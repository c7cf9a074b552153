"""Compile the bundled benchmarks with nvcc, cached by sources, flags and compiler version.

The nvcc command line is the contract with the compiler: :func:`nvcc_argv` builds it and tests
assert it exactly. nvcc and nvidia-smi are looked up only when a build is asked for.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ncuwrap.core import nvidia_smi, process
from ncuwrap.bundled.manifest import Manifest, load_manifest
from ncuwrap.core.errors import BuildError, InputError, ToolNotFoundError

NVCC_FLAGS: tuple[str, ...] = ("-O3", "-std=c++17")
# -lineinfo: ncu's source view; -Xptxas -v: registers and spills per kernel, kept in the build record.
NVCC_TAIL_FLAGS: tuple[str, ...] = ("-lineinfo", "-Xptxas", "-v")
MIN_NVCC = (12, 0)  # C++17 device code and sm_90
DEFAULT_ARCH = "sm_90"
_NVCC_TIMEOUT_S = 600

try:
    import fcntl
except ImportError:  # Windows: builds of one key in two processes at once both compile (each renames into place)
    fcntl = None


@dataclass(frozen=True)
class Nvcc:
    """The nvcc :func:`find_nvcc` found: its path and version, whose full text is part of each build's cache key."""
    path: Path
    version: tuple[int, int]
    version_text: str  # the full `nvcc --version` output: part of the cache key


@dataclass(frozen=True)
class ArchChoice:
    """The architecture :func:`detect_arch` picked for a build, with what to tell the user when no GPU said it."""
    arch: str
    note: str | None  # said to the user when the arch was not detected from a GPU


@dataclass(frozen=True)
class KernelResources:
    """What ptxas reported for one kernel."""

    function: str
    registers: int
    stack_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int
    shared_bytes: int


@dataclass(frozen=True)
class BuildResult:
    """A built (or cached) benchmark binary and what ptxas reported for its kernels; made by :func:`build_one`, run by the bench."""
    name: str
    binary: Path
    arch: str
    cached: bool
    key: str
    resources: tuple[KernelResources, ...]


def cache_dir() -> Path:
    """``$NCUWRAP_CACHE`` or ``~/.cache/ncuwrap/build``."""
    env = os.environ.get("NCUWRAP_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "ncuwrap" / "build"


def find_nvcc() -> Nvcc:
    """Locate nvcc (PATH, then $CUDA_HOME/bin) and check its version."""
    found = shutil.which("nvcc")
    if found is None:
        for var in ("CUDA_HOME", "CUDA_PATH"):
            candidate = Path(os.environ.get(var, "")) / "bin" / "nvcc"
            if os.environ.get(var) and candidate.is_file():
                found = str(candidate)
                break
    if found is None:
        raise ToolNotFoundError(
            "nvcc: not found on PATH or in $CUDA_HOME/bin; install the CUDA toolkit "
            f"({MIN_NVCC[0]}.{MIN_NVCC[1]} or newer) and put its bin/ on PATH"
        )
    try:
        proc = subprocess.run([found, "--version"], capture_output=True, timeout=60, check=False, **process.TOOL_TEXT)
    except OSError as exc:
        raise ToolNotFoundError(f"nvcc: {found} cannot be run ({exc.strerror}); check the CUDA toolkit install") from None
    text = proc.stdout.strip()
    m = re.search(r"release (\d+)\.(\d+)", text)
    if proc.returncode != 0 or m is None:
        raise ToolNotFoundError(f"nvcc: {found} --version gave no release number; check the CUDA toolkit install")
    version = (int(m.group(1)), int(m.group(2)))
    if version < MIN_NVCC:
        raise ToolNotFoundError(
            f"nvcc: {found} is CUDA {version[0]}.{version[1]}; the bundled benchmarks need "
            f"{MIN_NVCC[0]}.{MIN_NVCC[1]} or newer: upgrade the CUDA toolkit"
        )
    return Nvcc(path=Path(found), version=version, version_text=text)


def normalize_arch(arch: str) -> str:
    """Accept ``sm_90``, ``sm_90a``, ``90``, ``9.0`` or ``compute_90`` and return ``sm_90[a]``."""
    text = arch.strip().lower()
    if m := re.fullmatch(r"(\d+)\.(\d)", text):  # a compute capability, as nvidia-smi prints it
        return f"sm_{m.group(1)}{m.group(2)}"
    if m := re.fullmatch(r"(?:sm_|compute_)?(\d{2,3})([af]?)", text):
        return f"sm_{m.group(1)}{m.group(2)}"
    raise InputError(f"--arch {arch!r}: expected a CUDA architecture such as sm_90 or 9.0")


def detect_arch(*, run=None, which=None) -> ArchChoice:
    """The compute capability of GPU 0 from nvidia-smi; sm_90 with a note when there is none."""
    found = nvidia_smi.query(("compute_cap",), run=run, which=which)
    if found.argv is None:
        return ArchChoice(DEFAULT_ARCH, f"no GPU found (nvidia-smi is not installed): building for {DEFAULT_ARCH}; pass --arch to choose")
    lines = [gpu["compute_cap"] for gpu in found.gpus]
    if found.error is not None or not lines:
        return ArchChoice(DEFAULT_ARCH, f"no GPU found (nvidia-smi failed): building for {DEFAULT_ARCH}; pass --arch to choose")
    try:
        arch = normalize_arch(lines[0])
    except InputError:
        return ArchChoice(DEFAULT_ARCH, f"nvidia-smi reported compute capability {lines[0]!r}: building for {DEFAULT_ARCH}")
    note = None
    if len(set(lines)) > 1:
        note = f"GPUs of different compute capabilities ({', '.join(sorted(set(lines)))}): building for GPU 0 ({arch})"
    return ArchChoice(arch, note)


def target_arch(bench, arch: str) -> str:
    """The architecture one benchmark is compiled for: ``arch``, or the family's architecture-specific
    target (``arch_specific: sm_90a`` in the manifest) when ``arch`` is that target's base (``sm_90``).

    Instructions such as wgmma and setmaxnreg exist only in ``sm_90a`` code, which runs only on cc 9.0;
    every other family stays portable ``sm_XX``. For another architecture the family is built as asked
    (its source compiles stubs there and its binary says what it needs)."""
    special = getattr(bench, "arch_specific", None)
    if special and arch.rstrip("af") == special.rstrip("af"):
        return special
    return arch


def nvcc_argv(nvcc: Path | str, source: Path | str, output: Path | str, arch: str) -> list[str]:
    """The exact nvcc command line for one benchmark (sources include ``common/bench.cuh`` relative to themselves)."""
    return [
        str(nvcc),
        *NVCC_FLAGS,
        f"-arch={arch}",
        *NVCC_TAIL_FLAGS,
        "-o",
        str(output),
        str(source),
    ]


def cache_key(files: Sequence[Path], flags: Sequence[str], nvcc_version_text: str) -> str:
    """sha256 over every input file's name and bytes, the flags and the compiler's version text."""
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    h.update("\0".join(flags).encode())
    h.update(b"\0")
    h.update(nvcc_version_text.encode())
    return h.hexdigest()


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")


def demangle(name: str) -> str:
    """The plain function name of an Itanium-mangled global function (``_Z11spill_localPKf`` -> ``spill_local``)."""
    m = re.match(r"_Z(\d+)", name)
    if not m:
        return name
    length = int(m.group(1))
    return name[m.end() : m.end() + length]


def parse_ptxas(log: str) -> tuple[KernelResources, ...]:
    """Per-kernel registers, stack, spills and static shared memory from ``-Xptxas -v`` output."""
    out: list[KernelResources] = []
    current: str | None = None
    stack = (0, 0, 0)
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current, stack = demangle(m.group(1)), (0, 0, 0)
        elif (m := _STACK.search(line)) and current:
            stack = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif (m := _USED.search(line)) and current:
            out.append(
                KernelResources(
                    function=current,
                    registers=int(m.group(1)),
                    stack_bytes=stack[0],
                    spill_store_bytes=stack[1],
                    spill_load_bytes=stack[2],
                    shared_bytes=int(m.group(2) or 0),
                )
            )
            current = None
    return tuple(sorted(out, key=lambda r: r.function))


def build(
    name: str,
    arch: str | None = None,
    *,
    manifest: Manifest | None = None,
    nvcc: Nvcc | None = None,
    force: bool = False,
) -> Path:
    """Build benchmark ``name`` (cached) and return the binary's path."""
    return build_one(name, arch, manifest=manifest, nvcc=nvcc, force=force).binary


def build_one(
    name: str,
    arch: str | None = None,
    *,
    manifest: Manifest | None = None,
    nvcc: Nvcc | None = None,
    force: bool = False,
) -> BuildResult:
    """Build benchmark ``name`` for ``arch`` (detected when None); reuse the cached binary when the key matches."""
    manifest = manifest or load_manifest()
    bench = manifest.get(name)
    nvcc = nvcc or find_nvcc()
    arch = target_arch(bench, normalize_arch(arch) if arch else detect_arch().arch)
    flags = [*NVCC_FLAGS, f"-arch={arch}", *NVCC_TAIL_FLAGS]
    key = cache_key([bench.source, *manifest.headers], flags, nvcc.version_text)
    folder = cache_dir() / f"{name}-{arch}-{key[:16]}"
    cached = None if force else _cached(name, folder, arch, key)
    if cached is not None:
        return cached
    folder.mkdir(parents=True, exist_ok=True)
    # One nvcc per key at a time, across processes (two `ncuwrap build`s, parallel test workers): the
    # second waits for the first and then finds the binary in the cache.
    with open(folder / ".lock", "w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        cached = None if force else _cached(name, folder, arch, key)
        if cached is not None:
            return cached
        return _compile(name, bench, nvcc, arch, key, folder)


def _cached(name: str, folder: Path, arch: str, key: str) -> BuildResult | None:
    """The build in ``folder`` when both its binary and its record are there (the record is written first)."""
    binary, record = folder / name, folder / "build.json"
    if not (binary.is_file() and record.is_file()):
        return None
    try:
        meta = json.loads(record.read_text())
        resources = tuple(KernelResources(**r) for r in meta.get("resources", []))
    except (ValueError, TypeError):
        resources = ()
    return BuildResult(name, binary, arch, True, key, resources)


def _compile(name: str, bench, nvcc: Nvcc, arch: str, key: str, folder: Path) -> BuildResult:
    binary = folder / name
    # Compile next to the final place, then rename: concurrent builds never see a half-written binary.
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=folder)
    os.close(fd)
    argv = nvcc_argv(nvcc.path, bench.source, tmp, arch)
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=_NVCC_TIMEOUT_S, check=False, **process.TOOL_TEXT)
    except subprocess.TimeoutExpired:
        Path(tmp).unlink(missing_ok=True)
        raise BuildError(f"{bench.source.name}: nvcc did not finish in {_NVCC_TIMEOUT_S} s; build it by hand to see why") from None
    log = proc.stdout + proc.stderr
    (folder / "build.log").write_text(" ".join(argv) + "\n" + log, encoding="utf-8", errors="surrogateescape")
    if proc.returncode != 0:
        Path(tmp).unlink(missing_ok=True)
        first = next((line.strip() for line in log.splitlines() if "error" in line.lower()), log.strip()[:200])
        raise BuildError(f"{bench.source.name}: nvcc failed (exit {proc.returncode}): {first}; full log in {folder / 'build.log'}")
    os.chmod(tmp, 0o755)
    resources = parse_ptxas(log)
    record = {
        "name": name,
        "arch": arch,
        "key": key,
        "argv": [*argv[:-3], "-o", str(binary), argv[-1]],
        "nvcc_version": next((ln for ln in nvcc.version_text.splitlines() if "release" in ln), nvcc.version_text),
        "resources": [r.__dict__ for r in resources],
    }
    # The record first, then the binary, each by rename: a binary in the cache always has its whole record.
    fd, tmp_record = tempfile.mkstemp(prefix=".build.json.", dir=folder)
    with os.fdopen(fd, "w") as fh:
        fh.write(json.dumps(record, indent=2))
    os.replace(tmp_record, folder / "build.json")
    os.replace(tmp, binary)
    return BuildResult(name, binary, arch, False, key, resources)


def build_many(
    names: Iterable[str],
    arch: str | None = None,
    *,
    manifest: Manifest | None = None,
    jobs: int | None = None,
    force: bool = False,
) -> list[BuildResult]:
    """Build several benchmarks in parallel (``jobs`` nvcc processes, default: the CPU count)."""
    manifest = manifest or load_manifest()
    names = list(names)
    nvcc = find_nvcc()
    arch = normalize_arch(arch) if arch else detect_arch().arch
    jobs = max(1, jobs or os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(build_one, n, arch, manifest=manifest, nvcc=nvcc, force=force) for n in names]
        return [f.result() for f in futures]
