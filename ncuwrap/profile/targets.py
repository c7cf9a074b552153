"""What ``ncuwrap profile TARGET`` runs: a bundled benchmark variant or any program.

A bundled variant is named ``family/variant`` (also ``family:variant``, ``family.variant``,
``family_variant``), by its kernel's function name (``transpose_naive``) when that names one variant,
or by its family when the family has one profiled variant. It is built with nvcc (cached) and run as
``<binary> --variant V <profile args>`` with the manifest's kernel filter and launch skip, which land
on the variant's first timed launch. Anything else is a program command line, given after ``--``.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ncuwrap.core.errors import InputError

_SEPARATORS = ("/", ":", ".", "_")


@dataclass(frozen=True)
class Target:
    """A command to profile, with the launch filter that suits it by default."""

    argv: tuple[str, ...]
    label: str  # names the run folder
    kernel: str | None = None  # default kernel regex (bundled: the manifest's)
    launch_skip: int | None = None
    launch_count: int | None = None
    benchmark: str | None = None
    variant: str | None = None
    kernels: tuple[str, ...] = ()  # kernel functions the program is known to launch
    why_skip: str = ""  # what the default launch skip lands on, in words
    build: dict = field(default_factory=dict)  # how the binary was built (bundled)

    @property
    def bundled(self) -> bool:
        return self.benchmark is not None

    def to_json(self) -> dict:
        return {"argv": list(self.argv), "label": self.label, "benchmark": self.benchmark, "variant": self.variant,
                "default_kernel": self.kernel, "default_launch_skip": self.launch_skip, "default_launch_count": self.launch_count,
                "build": self.build}

    def build_command(self) -> list[str] | None:
        """The nvcc command a bundled binary was built with (from the build cache's record)."""
        binary = self.build.get("binary") if self.build else None
        if not binary:
            return None
        record = Path(binary).parent / "build.json"
        try:
            argv = json.loads(record.read_text()).get("argv")
        except (OSError, ValueError):
            return None
        return [str(a) for a in argv] if argv else None


@dataclass(frozen=True)
class BundledName:
    """A bundled benchmark's variant that a ``ncuwrap profile`` target may name (see :func:`bundled_names`)."""
    benchmark: str
    variant: str


def bundled_names(manifest) -> dict[str, list[BundledName]]:
    """Every spelling of every profiled variant -> the variants it names (more than one: ambiguous)."""
    names: dict[str, list[BundledName]] = {}

    def add(key: str, item: BundledName) -> None:
        found = names.setdefault(key, [])
        if item not in found:
            found.append(item)

    for bench in manifest.benchmarks:
        profiled = [v for v in bench.variants if v.profile is not None]
        for variant in profiled:
            item = BundledName(bench.name, variant.name)
            for sep in _SEPARATORS:
                add(f"{bench.name}{sep}{variant.name}", item)
            if variant.function:
                add(variant.function, item)
        if len(profiled) == 1:
            add(bench.name, BundledName(bench.name, profiled[0].name))
    return names


def resolve(target: Sequence[str], *, manifest=None, build=None, arch: str | None = None, on_build=None) -> Target:
    """TARGET (the command line's positional arguments) -> Target. Builds a bundled benchmark."""
    target = [str(t) for t in target]
    if not target:
        raise InputError("no TARGET: name a bundled benchmark (e.g. transpose/naive) or give a program after '--': "
                         "ncuwrap profile -- ./my_program args")
    first = target[0]
    if len(target) == 1 and not Path(first).exists():
        from ncuwrap.bundled.manifest import load_manifest

        manifest = manifest or load_manifest()
        matches = bundled_names(manifest).get(first)
        if matches and len(matches) == 1:
            return bundled(matches[0].benchmark, matches[0].variant, manifest=manifest, build=build, arch=arch, on_build=on_build)
        if matches:
            options = ", ".join(f"{m.benchmark}/{m.variant}" for m in matches)
            raise InputError(f"TARGET {first!r} names several bundled variants ({options}); name one as family/variant")
        pathlike = os.sep in first or first.startswith(".")
        if pathlike or not shutil.which(first):
            names = sorted({f"{b.name}/{v.name}" for b in manifest.benchmarks for v in b.variants if v.profile is not None})
            close = difflib.get_close_matches(first.replace(":", "/").replace(".", "/"), names, n=3, cutoff=0.6)
            if close or not pathlike:
                hint = f" (did you mean {', '.join(close)}?)" if close else ""
                raise InputError(f"TARGET {first!r} is neither a bundled benchmark{hint} nor a program; "
                                 f"'ncuwrap profile --list' shows the benchmarks; a program goes after '--': ncuwrap profile -- ./prog args")
    return program(target)


def program(argv: Sequence[str]) -> Target:
    """Any command line. Its executable must exist now (ncu's own message for a missing one is obscure)."""
    argv = [str(a) for a in argv]
    exe = argv[0]
    if os.sep in exe or exe.startswith("."):
        path = Path(exe)
        if not path.exists():
            raise InputError(f"{exe}: no such program; check the path (it is run from {os.getcwd()})")
        if path.is_dir() or not os.access(path, os.X_OK):
            raise InputError(f"{exe}: not an executable file; chmod +x it, or run a script through its interpreter (ncuwrap profile -- python3 {exe})")
    elif not shutil.which(exe):
        raise InputError(f"{exe}: not found on PATH; give its path (./{exe}) or put it on PATH")
    label = Path(exe).name
    if label.startswith("python") and len(argv) > 1:  # 'python3 train.py' -> train
        script = next((a for a in argv[1:] if not a.startswith("-")), None)
        label = Path(script).stem if script else label
    return Target(argv=tuple(argv), label=label)


def bundled(benchmark: str, variant: str, *, manifest=None, build=None, arch: str | None = None, on_build=None) -> Target:
    """The bundled ``benchmark``/``variant``, built (cached) and ready to run under ncu.
    ``on_build(name)`` is called before the build (for a progress line)."""
    from ncuwrap.bundled.manifest import load_manifest

    manifest = manifest or load_manifest()
    bench = manifest.get(benchmark)
    var = bench.variant(variant)
    if var.profile is None or var.kernel is None:
        raise InputError(f"{benchmark}/{variant} launches no kernel of its own (profile: null in the manifest); nothing to profile")
    if on_build is not None:
        on_build(bench.name)
    if build is None:
        from ncuwrap.bundled.build import build_one

        result = build_one(benchmark, arch, manifest=manifest)
        binary, record = result.binary, {"binary": str(result.binary), "arch": result.arch, "cached": result.cached, "key": result.key}
    else:
        binary = Path(build(benchmark, arch))
        record = {"binary": str(binary)}
    kernels = tuple(v.function or v.kernel for v in bench.variants if v.kernel)
    skip = var.profile.launch_skip
    return Target(
        argv=(str(binary), "--variant", var.name, *var.profile.args),
        label=f"{bench.name}-{var.name}",
        kernel=var.kernel,
        launch_skip=skip,
        launch_count=1,
        benchmark=bench.name,
        variant=var.name,
        kernels=tuple(dict.fromkeys(kernels)),
        why_skip="the first timed launch (after the check-size run, the full-size run and the warm-up runs)",
        build=record,
    )


def bundled_list(manifest=None) -> list[tuple[str, str, str]]:
    """(family/variant, kernel regex, lesson) of every profiled variant, for --list."""
    from ncuwrap.bundled.manifest import load_manifest

    manifest = manifest or load_manifest()
    return [(f"{b.name}/{v.name}", v.kernel or "", v.lesson) for b in manifest.benchmarks for v in b.variants if v.profile is not None]
