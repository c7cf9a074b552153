"""Building the bundled benchmarks: the exact nvcc command line, the cache key, arch detection, tool
errors (all without a GPU or nvcc, by mocking), and the CI compile check of every benchmark with real nvcc."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ncuwrap.bundled import build as b
from ncuwrap.bundled.manifest import load_manifest
from ncuwrap.core.errors import BuildError, InputError, ToolNotFoundError

MANIFEST = load_manifest()
NVCC_13 = """nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2025 NVIDIA Corporation
Cuda compilation tools, release 13.0, V13.0.88
Build cuda_13.0.r13.0/compiler.36424714_0"""


def completed(stdout="", returncode=0, stderr=""):
    return subprocess.CompletedProcess(args=[], returncode=returncode, stdout=stdout, stderr=stderr)


def test_nvcc_argv_is_exact():
    argv = b.nvcc_argv("/opt/cuda/bin/nvcc", "/k/transpose.cu", "/cache/transpose", "sm_90")
    assert argv == [
        "/opt/cuda/bin/nvcc", "-O3", "-std=c++17", "-arch=sm_90", "-lineinfo", "-Xptxas", "-v",
        "-o", "/cache/transpose", "/k/transpose.cu",
    ]


@pytest.mark.parametrize(
    ("given", "arch"),
    [("sm_90", "sm_90"), ("90", "sm_90"), ("9.0", "sm_90"), ("sm_90a", "sm_90a"), ("compute_80", "sm_80"), ("SM_100", "sm_100"), ("12.0", "sm_120")],
)
def test_normalize_arch(given, arch):
    assert b.normalize_arch(given) == arch


def test_normalize_arch_rejects_nonsense():
    with pytest.raises(InputError, match="expected a CUDA architecture"):
        b.normalize_arch("hopper")


def test_detect_arch_from_nvidia_smi(monkeypatch):
    calls = []
    monkeypatch.setattr(b.shutil, "which", lambda name: "/usr/bin/nvidia-smi" if name == "nvidia-smi" else None)

    def fake_run(argv, **kw):
        calls.append(argv)
        return completed("9.0\n")

    monkeypatch.setattr(b.subprocess, "run", fake_run)
    assert b.detect_arch() == b.ArchChoice("sm_90", None)
    assert calls == [["/usr/bin/nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"]]


def test_detect_arch_mixed_gpus_notes_it(monkeypatch):
    monkeypatch.setattr(b.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(b.subprocess, "run", lambda argv, **kw: completed("8.0\n9.0\n"))
    choice = b.detect_arch()
    assert choice.arch == "sm_80" and "different compute capabilities" in choice.note


def test_detect_arch_without_gpu_defaults_to_sm90_with_a_note(monkeypatch):
    monkeypatch.setattr(b.shutil, "which", lambda name: None)
    choice = b.detect_arch()
    assert choice.arch == "sm_90" and "no GPU found" in choice.note and "--arch" in choice.note
    monkeypatch.setattr(b.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(b.subprocess, "run", lambda argv, **kw: completed("", 9, "NVIDIA-SMI has failed"))
    assert b.detect_arch().arch == "sm_90"


def test_missing_nvcc_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(b.shutil, "which", lambda name: None)
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    with pytest.raises(ToolNotFoundError, match=r"^nvcc: not found on PATH .*install the CUDA toolkit"):
        b.find_nvcc()


def test_old_nvcc_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(b.shutil, "which", lambda name: "/usr/local/cuda-11.4/bin/nvcc")
    monkeypatch.setattr(b.subprocess, "run", lambda argv, **kw: completed("Cuda compilation tools, release 11.4, V11.4.48"))
    with pytest.raises(ToolNotFoundError, match=r"is CUDA 11\.4; .*need 12\.0 or newer: upgrade"):
        b.find_nvcc()


def test_find_nvcc_reads_the_version(monkeypatch):
    monkeypatch.setattr(b.shutil, "which", lambda name: "/opt/cuda/bin/nvcc")
    monkeypatch.setattr(b.subprocess, "run", lambda argv, **kw: completed(NVCC_13))
    nvcc = b.find_nvcc()
    assert nvcc.path == Path("/opt/cuda/bin/nvcc") and nvcc.version == (13, 0)


def test_cache_key_changes_with_flags_sources_and_compiler(tmp_path):
    src = tmp_path / "a.cu"
    hdr = tmp_path / "bench.cuh"
    src.write_text("__global__ void k() {}\n")
    hdr.write_text("// header\n")
    flags = ["-O3", "-std=c++17", "-arch=sm_90", "-lineinfo"]
    key = b.cache_key([src, hdr], flags, NVCC_13)
    assert key == b.cache_key([src, hdr], list(flags), NVCC_13)  # deterministic
    assert key != b.cache_key([src, hdr], [*flags[:2], "-arch=sm_80", flags[3]], NVCC_13)
    assert key != b.cache_key([src, hdr], flags[:-1], NVCC_13)
    assert key != b.cache_key([src, hdr], flags, NVCC_13.replace("13.0", "12.8"))
    hdr.write_text("// header, edited\n")
    assert key != b.cache_key([src, hdr], flags, NVCC_13)


def test_cache_dir_honours_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("NCUWRAP_CACHE", str(tmp_path))
    assert b.cache_dir() == tmp_path
    monkeypatch.delenv("NCUWRAP_CACHE")
    assert b.cache_dir() == Path.home() / ".cache" / "ncuwrap" / "build"


def fake_nvcc():
    return b.Nvcc(path=Path("/opt/cuda/bin/nvcc"), version=(13, 0), version_text=NVCC_13)


def test_build_runs_nvcc_once_then_uses_the_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("NCUWRAP_CACHE", str(tmp_path))
    calls = []

    def fake_run(argv, **kw):
        calls.append(argv)
        Path(argv[argv.index("-o") + 1]).write_text("binary")
        return completed("", 0, "ptxas info    : Compiling entry function '_Z15transpose_naivePKfPfii' for 'sm_90'\n"
                         "ptxas info    : Function properties for _Z15transpose_naivePKfPfii\n"
                         "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                         "ptxas info    : Used 16 registers, used 0 barriers\n")

    monkeypatch.setattr(b.subprocess, "run", fake_run)
    first = b.build_one("transpose", "sm_90", manifest=MANIFEST, nvcc=fake_nvcc())
    assert not first.cached and first.binary.read_text() == "binary"
    source = MANIFEST.get("transpose").source
    assert calls[0][:8] == ["/opt/cuda/bin/nvcc", "-O3", "-std=c++17", "-arch=sm_90", "-lineinfo", "-Xptxas", "-v", "-o"]
    assert calls[0][-1] == str(source)
    assert first.binary.parent.name == f"transpose-sm_90-{first.key[:16]}"
    assert first.resources == (b.KernelResources("transpose_naive", 16, 0, 0, 0, 0),)
    again = b.build_one("transpose", "sm_90", manifest=MANIFEST, nvcc=fake_nvcc())
    assert again.cached and again.binary == first.binary and len(calls) == 1
    assert again.resources == first.resources
    assert b.build("transpose", "sm_90", manifest=MANIFEST, nvcc=fake_nvcc()) == first.binary
    other = b.build_one("transpose", "sm_80", manifest=MANIFEST, nvcc=fake_nvcc())
    assert not other.cached and other.key != first.key and len(calls) == 2
    record = json.loads((first.binary.parent / "build.json").read_text())
    assert record["argv"][-3:] == ["-o", str(first.binary), str(source)]


def test_builds_of_one_key_at_once_compile_once(monkeypatch, tmp_path):
    """Parallel test workers (or two `ncuwrap build`s) asking for the same binary: one nvcc, the others wait
    for it and take the cached binary with its whole record."""
    import threading
    import time

    monkeypatch.setenv("NCUWRAP_CACHE", str(tmp_path))
    calls = []

    def slow_nvcc(argv, **kw):
        calls.append(argv)
        time.sleep(0.3)  # long enough for the other builds to arrive while it runs
        Path(argv[argv.index("-o") + 1]).write_text("binary")
        return completed("", 0, "ptxas info    : Compiling entry function '_Z6vecaddv' for 'sm_90'\n"
                         "ptxas info    : Used 8 registers, used 0 barriers\n")

    monkeypatch.setattr(b.subprocess, "run", slow_nvcc)
    results = []
    threads = [threading.Thread(target=lambda: results.append(b.build_one("vecadd", "sm_90", manifest=MANIFEST, nvcc=fake_nvcc())))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert sorted(r.cached for r in results) == [False, True, True]
    assert {r.binary for r in results} == {results[0].binary} and all(r.resources == results[0].resources for r in results)
    assert [p.name for p in results[0].binary.parent.iterdir() if p.name.startswith(".") and p.name != ".lock"] == []  # no temporaries left


def test_wgmma_family_builds_for_sm90a_the_others_for_sm90():
    hopper, gemm = MANIFEST.get("gemm_hopper"), MANIFEST.get("gemm")
    assert b.target_arch(hopper, "sm_90") == "sm_90a" and b.target_arch(hopper, "sm_90a") == "sm_90a"
    assert b.target_arch(hopper, "sm_80") == "sm_80" and b.target_arch(hopper, "sm_100") == "sm_100"  # stubs there
    assert b.target_arch(gemm, "sm_90") == "sm_90"


def test_build_of_the_wgmma_family_passes_sm90a(monkeypatch, tmp_path):
    monkeypatch.setenv("NCUWRAP_CACHE", str(tmp_path))
    calls = []

    def fake_run(argv, **kw):
        calls.append(argv)
        Path(argv[argv.index("-o") + 1]).write_text("binary")
        return completed()

    monkeypatch.setattr(b.subprocess, "run", fake_run)
    monkeypatch.setattr(b, "find_nvcc", fake_nvcc)
    results = {r.name: r for r in b.build_many(["gemm", "gemm_hopper"], "sm_90", manifest=MANIFEST, jobs=1)}
    assert {name: r.arch for name, r in results.items()} == {"gemm": "sm_90", "gemm_hopper": "sm_90a"}
    argv = {Path(a[-1]).name: a for a in calls}
    assert "-arch=sm_90a" in argv["gemm_hopper.cu"] and "-arch=sm_90" in argv["gemm.cu"]
    assert results["gemm_hopper"].binary.parent.name.startswith("gemm_hopper-sm_90a-")


def test_build_failure_names_the_source_and_the_log(monkeypatch, tmp_path):
    monkeypatch.setenv("NCUWRAP_CACHE", str(tmp_path))
    monkeypatch.setattr(
        b.subprocess, "run", lambda argv, **kw: completed("", 2, "vecadd.cu(12): error: identifier \"x\" is undefined\n")
    )
    with pytest.raises(BuildError, match=r'^vecadd\.cu: nvcc failed \(exit 2\): vecadd\.cu\(12\): error: identifier "x" is undefined; full log in') as info:
        b.build("vecadd", "sm_90", manifest=MANIFEST, nvcc=fake_nvcc())
    assert "\n" not in str(info.value)
    assert not any(p.name == "vecadd" for p in tmp_path.rglob("vecadd"))


def test_unknown_benchmark():
    with pytest.raises(InputError, match="no benchmark named 'nope' \\(known: copy_ceiling, transpose"):
        b.build("nope", "sm_90", manifest=MANIFEST, nvcc=fake_nvcc())


def test_parse_ptxas_and_demangle():
    log = (
        "ptxas info    : Compiling entry function '_Z11spill_localPKfPfxi' for 'sm_90'\n"
        "ptxas info    : Function properties for _Z11spill_localPKfPfxi\n"
        "    72 bytes stack frame, 176 bytes spill stores, 172 bytes spill loads\n"
        "ptxas info    : Used 32 registers, used 0 barriers, 72 bytes cumulative stack size\n"
        "ptxas info    : Compiling entry function '_Z12smem_stridedPKfPfi' for 'sm_90'\n"
        "ptxas info    : Used 28 registers, used 0 barriers, 32768 bytes smem\n"
    )
    assert b.parse_ptxas(log) == (
        b.KernelResources("smem_strided", 28, 0, 0, 0, 32768),
        b.KernelResources("spill_local", 32, 72, 176, 172, 0),
    )
    assert b.demangle("copy_float4") == "copy_float4"


# ------------------------------------------------------------------ the CI compile check (real nvcc)

# Kernels that spill by design: the spill benchmark (hot loop) and occupancy's launch_bounds variant
# (cold state parked in local memory outside the loop). Every other kernel must not spill.
SPILLS_BY_DESIGN = {"spill_local", "occupancy_launch_bounds"}


@pytest.fixture(scope="module")
def built_all():
    """Every benchmark for sm_90, from a build cache of this checkout's own under the user's (NCUWRAP_CACHE or
    ~/.cache/ncuwrap/build): each is compiled once per source, flags and nvcc version (the cache key), in
    parallel, and a parallel test worker that needs them meanwhile waits for that build instead of compiling
    them again. Its own, because the key covers the sources' bytes, not where they are: a binary another
    checkout built is a right binary, but its record names that checkout's sources, and the test below
    checks the record's command against this one's."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    checkout = hashlib.sha256(str(Path(__file__).resolve().parent.parent).encode()).hexdigest()[:12]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NCUWRAP_CACHE", str(b.cache_dir() / "checkouts" / checkout))
        return {r.name: r for r in b.build_many(MANIFEST.names(), "sm_90", manifest=MANIFEST)}


def test_every_benchmark_compiles_for_sm90(built_all):
    assert sorted(built_all) == sorted(MANIFEST.names())
    nvcc = b.find_nvcc()
    for r in built_all.values():
        assert r.binary.is_file() and os.access(r.binary, os.X_OK)
        assert r.arch == ("sm_90a" if MANIFEST.get(r.name).arch_specific else "sm_90")
        # Cached or not, the binary is nvcc's output for today's sources and flags: the key covers them all,
        # and the record holds the command that made it.
        bench = MANIFEST.get(r.name)
        flags = [*b.NVCC_FLAGS, f"-arch={r.arch}", *b.NVCC_TAIL_FLAGS]
        assert r.key == b.cache_key([bench.source, *MANIFEST.headers], flags, nvcc.version_text)
        record = json.loads((r.binary.parent / "build.json").read_text())
        assert record["argv"][1:] == b.nvcc_argv(nvcc.path, bench.source, r.binary, r.arch)[1:]


def test_wgmma_family_also_compiles_portably():
    """Built for plain sm_90 (no wgmma), gemm_hopper compiles its stubs, and its binary still lists.
    The binary is cached as the benchmarks are, under its own key (the -arch=sm_90 flags)."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    bench = MANIFEST.get("gemm_hopper")
    nvcc = b.find_nvcc()
    key = b.cache_key([bench.source, *MANIFEST.headers], [*b.NVCC_FLAGS, "-arch=sm_90", *b.NVCC_TAIL_FLAGS], nvcc.version_text)
    folder = b.cache_dir() / f"gemm_hopper-portable-sm_90-{key[:16]}"
    out = folder / "gemm_hopper"
    if not out.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".gemm_hopper.{os.getpid()}"
        proc = subprocess.run(b.nvcc_argv(nvcc.path, bench.source, tmp, "sm_90"), capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        os.replace(tmp, out)  # whole or not at all, for a parallel worker or the next run
    listed = subprocess.run([str(out), "--list"], capture_output=True, text=True, timeout=60)
    assert json.loads(listed.stdout)["benchmark"] == "gemm_hopper"


def test_binaries_list_what_the_manifest_says(built_all):
    """``--list`` needs no GPU: variants, kernels and default sizes must agree with the manifest."""
    for bench in MANIFEST.benchmarks:
        proc = subprocess.run([str(built_all[bench.name].binary), "--list"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["benchmark"] == bench.name
        assert doc["sizes"] == dict(bench.sizes), bench.name
        assert [(v["variant"], v["kernel"]) for v in doc["variants"]] == [(v.name, v.function) for v in bench.variants]


def test_spills_only_where_intended(built_all):
    for bench in MANIFEST.benchmarks:
        res = {k.function: k for k in built_all[bench.name].resources}
        for v in bench.variants:
            if v.function:
                assert v.function in res, f"{bench.name}: ptxas reported nothing for {v.function}"
        for fn, k in res.items():
            if fn in SPILLS_BY_DESIGN:
                assert k.spill_store_bytes > 0, f"{fn} was meant to spill"
            else:
                assert k.spill_store_bytes == 0 and k.spill_load_bytes == 0, f"{fn} spills"


def test_binaries_reject_bad_usage_with_exit_2(built_all):
    binary = str(built_all["vecadd"].binary)
    for args in (["--bogus"], ["--size", "q=1"], ["--variant", "nope"], ["--iters", "0"], ["--size", "n=abc"]):
        proc = subprocess.run([binary, *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.startswith("error: "), args
