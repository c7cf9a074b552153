"""``ncuwrap list``, ``ncuwrap build`` and ``ncuwrap bench``: the bundled CUDA benchmarks (thin wrappers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ncuwrap.cli.root import app
from ncuwrap.cli.options import AllBenchmarks, Arch, ListFormat, ListOutputFormat, ReplaceOutput
from ncuwrap.core.errors import InputError
from ncuwrap.render import Format


def list_document() -> list[dict]:
    """What ``ncuwrap list --format json`` prints: one object per benchmark."""
    from ncuwrap.bundled.manifest import load_manifest

    manifest = load_manifest()
    out = []
    for b in manifest.benchmarks:
        out.append(
            {
                "name": b.name,
                "lesson": b.lesson,
                "source": b.source.name,
                "sizes": dict(b.sizes),
                "kernels": [v.function for v in b.variants if v.function],
                "variants": [
                    {
                        "name": v.name,
                        "kernel": v.kernel,
                        "lesson": v.lesson,
                        "bytes": v.bytes.text,
                        "flops": v.flops.text,
                        "peak": v.peak.value,
                        "library": v.library.value if v.library else None,
                        "profile": {"args": list(v.profile.args), "launch_skip": v.profile.launch_skip} if v.profile else None,
                        "expected": {
                            "bound": v.expected.bound.value,
                            "limiter": v.expected.limiter.value if v.expected.limiter else None,
                            "findings": list(v.expected.findings),
                            "timeline": v.expected.timeline.value if v.expected.timeline else None,
                        },
                    }
                    for v in b.variants
                ],
            }
        )
    return out


def _names(name: Optional[str], all_: bool) -> list[str]:
    from ncuwrap.bundled.manifest import load_manifest

    manifest = load_manifest()
    if all_ and name:
        raise InputError("give a benchmark NAME or --all, not both")
    if all_:
        return manifest.names()
    if not name:
        raise InputError(f"give a benchmark NAME or --all (benchmarks: {', '.join(manifest.names())})")
    manifest.get(name)  # unknown names fail here, listing the known ones
    return [name]


@app.command("list")
def list_cmd(
    fmt: ListOutputFormat = ListFormat.table,
) -> None:
    """List the bundled benchmarks, their variants and what each one teaches."""
    doc = list_document()
    if fmt is ListFormat.json:
        typer.echo(json.dumps(doc, indent=2))
        return
    from ncuwrap.render.table.lists import benchmarks

    typer.echo(benchmarks(doc), nl=False)


@app.command("build")
def build_cmd(
    name: Optional[str] = typer.Argument(None, help="Benchmark to build (see `ncuwrap list`)."),
    all_: AllBenchmarks = False,
    arch: Arch = None,
    force: bool = typer.Option(False, "--force", help="Rebuild even when a cached binary exists."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="Parallel nvcc processes (default: CPU count)."),
) -> None:
    """Compile benchmarks with nvcc (-O3 -std=c++17 -lineinfo), cached by sources, flags and nvcc version."""
    from ncuwrap.bundled.build import build_many, detect_arch

    names = _names(name, all_)
    if arch is None:
        choice = detect_arch()
        if choice.note:
            typer.echo(f"note: {choice.note}", err=True)
        arch = choice.arch
    for r in build_many(names, arch, jobs=jobs, force=force):
        spills = [k.function for k in r.resources if k.spill_store_bytes > 0]
        extra = f"  (spills: {', '.join(spills)})" if spills else ""
        typer.echo(f"{r.name:<16} {r.arch}  {'cached' if r.cached else 'built '}  {r.binary}{extra}")


@app.command("bench")
def bench_cmd(
    name: Optional[str] = typer.Argument(None, help="Benchmark to run (see `ncuwrap list`)."),
    all_: AllBenchmarks = False,
    variant: Optional[list[str]] = typer.Option(None, "--variant", help="Only this variant (repeatable)."),
    size: Optional[list[str]] = typer.Option(None, "--size", help="Override a problem size, KEY=VALUE (repeatable)."),
    runs: int = typer.Option(3, "--runs", help="Separate process runs per benchmark."),
    iters: Optional[int] = typer.Option(None, "--iters", help="Timed launches per run (default: the manifest's)."),
    warmup: Optional[int] = typer.Option(None, "--warmup", help="Warm-up launches per run (default: the manifest's)."),
    arch: Arch = None,
    fmt: ListOutputFormat = ListFormat.table,
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Also write the ncuwrap.bench/v1 JSON to this file."),
    force: ReplaceOutput = False,
    no_library: bool = typer.Option(False, "--no-library", help="Skip the CuPy library comparisons."),
    no_ceiling: bool = typer.Option(False, "--no-ceiling", help="Skip measuring the copy ceiling."),
) -> None:
    """Uninstrumented baseline: verified results, median of N launches over R process runs, GB/s, TFLOP/s, % of peak and ceiling."""
    from ncuwrap.bundled.bench import WrongResultError, run_bench
    from ncuwrap.cli.output import check_output, emit

    names = _names(name, all_)
    check_output(output, force=force)
    sizes = {}
    for kv in size or []:
        key, _, value = kv.partition("=")
        if not key or not value.isdigit() or int(value) < 1:
            raise InputError(f"--size {kv!r}: expected KEY=POSITIVE_INTEGER, e.g. --size n=1048576")
        sizes[key] = int(value)
    report = run_bench(
        names,
        variants=variant or None,
        sizes=sizes or None,
        runs=runs,
        warmup=warmup,
        iters=iters,
        arch=arch,
        with_library=not no_library,
        with_ceiling=not no_ceiling,
        progress=lambda msg: typer.echo(msg, err=True),
    )
    if output is not None:
        emit(report, Format.json, output, force=force)
    emit(report, Format.json if fmt is ListFormat.json else Format.table, None)
    if report.wrong():
        raise WrongResultError(f"wrong results (not verified against the CPU reference): {', '.join(report.wrong())}")
