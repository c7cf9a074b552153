"""The bundled benchmark manifest (``kernels/manifest.yaml``) loaded into frozen, validated records.

The YAML file documents its own format at the top. Every problem is reported as a
:class:`ManifestError` whose one-line message starts with the file name and says what to fix.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from ncuwrap.core import safeyaml
from ncuwrap import ruleset
from ncuwrap.core import schema
from ncuwrap.bundled.formula import Formula, FormulaError, parse_formula
from ncuwrap.core.errors import InputError
from ncuwrap.core.resources import data_dir

MANIFEST_VERSION = 1


@functools.lru_cache(maxsize=1)
def finding_ids() -> frozenset[str]:
    """The finding ids ``expected.findings`` may name: those of the bundled kernel rules (rules/default.yaml)."""
    return ruleset.finding_ids(data_dir("rules") / "default.yaml")


class ManifestError(InputError):
    """The benchmark manifest is missing, not YAML, or not a valid manifest."""


class Bound(str, Enum):
    """What a benchmark variant is expected to be bound by: part of the manifest's expected verdict, which the bench report carries."""
    memory = "memory"
    compute = "compute"
    latency = "latency"


class Limiter(str, Enum):
    """The unit a benchmark variant is expected to be limited by, as the manifest declares it."""
    dram = "dram"
    l2 = "l2"
    l1tex = "l1tex"
    sm = "sm"


class Peak(str, Enum):
    """Which spec peak "% of peak" compares with; ``dram`` variants are also compared with the copy ceiling."""

    dram = "dram"
    fp32 = "fp32"
    fp16_tensor = "fp16_tensor"
    none = "none"


class CeilingBasis(str, Enum):
    """Which measured copy ceiling a ``dram`` variant's ``pct_of_ceiling`` is judged by.

    ``same_bytes``: copy_ceiling run with as many bytes moved as the variant moves (the same fixed
    launch cost weighs on both); ``large``: copy_ceiling at its manifest size (2 x 512 MiB), where
    that cost is negligible. Both are measured and reported; this says which one judges."""

    same_bytes = "same_bytes"
    large = "large"


class TimelineBound(str, Enum):
    """The ``bound`` the timeline rules (rules/timeline.yaml) are expected to give."""

    kernel = "kernel"
    transfer = "transfer"
    launch = "launch"


class Library(str, Enum):
    """Library equivalents measured beside a variant (through CuPy)."""

    transpose_copy = "transpose_copy"
    vecadd = "vecadd"
    sum = "sum"
    matmul_fp32 = "matmul_fp32"
    matmul_fp16 = "matmul_fp16"
    matmul_fp16_nt = "matmul_fp16_nt"


@dataclass(frozen=True)
class Expected:
    """The verdict the variant is expected to get from ``ncuwrap diagnose`` (and ``timeline`` from nsys)."""

    bound: Bound
    limiter: Limiter | None
    findings: tuple[str, ...]
    timeline: TimelineBound | None = None


@dataclass(frozen=True)
class ProfileArgs:
    """Arguments (without ``--variant``) and launch skip that make ncu profile a steady-state launch."""

    args: tuple[str, ...]
    launch_skip: int

    def warmup(self, default: int) -> int:
        """The ``--warmup`` value in ``args`` (``default`` when absent)."""
        value = _flag_values(self.args, "--warmup")
        return int(value[-1]) if value else default

    def size_overrides(self) -> dict[str, int]:
        """The ``--size KEY=VALUE`` pairs in ``args``."""
        out: dict[str, int] = {}
        for kv in _flag_values(self.args, "--size"):
            key, _, value = kv.partition("=")
            out[key] = int(value)
        return out


@dataclass(frozen=True)
class Variant:
    """One variant of a bundled benchmark as the manifest declares it: its kernel, lesson, size formulas, peak and expected verdict."""
    name: str
    kernel: str | None  # anchored regex for ncu -k regex:...
    lesson: str
    bytes: Formula
    flops: Formula
    launches_per_run: Formula
    peak: Peak
    library: Library | None
    profile: ProfileArgs | None
    expected: Expected
    ceiling: CeilingBasis = CeilingBasis.large

    @property
    def function(self) -> str | None:
        """The kernel function name when ``kernel`` is a plain anchored name (``^name$``)."""
        if self.kernel is None:
            return None
        m = re.fullmatch(r"\^([A-Za-z_]\w*)\$", self.kernel)
        return m.group(1) if m else None


@dataclass(frozen=True)
class Benchmark:
    """A bundled benchmark family from the manifest: its CUDA source, default sizes, run counts and variants; built and run by ``ncuwrap bench``."""
    name: str
    source: Path
    lesson: str
    sizes: Mapping[str, int]
    warmup: int
    iters: int
    variants: tuple[Variant, ...]
    # The architecture-specific target (``sm_90a``) the family needs for instructions that exist only
    # there (wgmma, setmaxnreg); None for portable code. See :func:`ncuwrap.bundled.build.target_arch`.
    arch_specific: str | None = None

    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        known = ", ".join(v.name for v in self.variants)
        raise InputError(f"benchmark {self.name!r} has no variant {name!r} (known: {known})")

    def sizes_with(self, overrides: Mapping[str, int] | None = None) -> dict[str, int]:
        """Default sizes with ``overrides`` applied (unknown names are an error)."""
        sizes = dict(self.sizes)
        for key, value in (overrides or {}).items():
            if key not in sizes:
                raise InputError(f"benchmark {self.name!r} has no size {key!r} (known: {', '.join(sizes)})")
            sizes[key] = int(value)
        return sizes

    def expected_launch_skip(self, variant: Variant) -> int | None:
        """Launches before the first timed one under ``variant.profile``: (2 + warm-up) x launches per run."""
        if variant.profile is None:
            return None
        sizes = self.sizes_with(variant.profile.size_overrides())
        per_run = int(variant.launches_per_run.evaluate(sizes))
        return (2 + variant.profile.warmup(default=self.warmup)) * per_run


@dataclass(frozen=True)
class Manifest:
    """The bundled benchmarks' manifest (kernels/manifest.yaml), read and checked by :func:`load_manifest`."""
    path: Path
    version: int
    benchmarks: tuple[Benchmark, ...]

    @property
    def root(self) -> Path:
        return self.path.parent

    @property
    def headers(self) -> tuple[Path, ...]:
        """Shared headers every source may include (part of every build's cache key)."""
        common = self.root / "common"
        return tuple(sorted(p for p in common.rglob("*") if p.suffix in {".cuh", ".h", ".hpp"})) if common.is_dir() else ()

    def names(self) -> list[str]:
        return [b.name for b in self.benchmarks]

    def get(self, name: str) -> Benchmark:
        for b in self.benchmarks:
            if b.name == name:
                return b
        raise InputError(f"{self.path.name}: no benchmark named {name!r} (known: {', '.join(self.names())})")


def default_manifest_path() -> Path:
    return data_dir("kernels") / "manifest.yaml"


def load_manifest(path: Path | None = None) -> Manifest:
    """Load and validate the manifest (the bundled one by default)."""
    path = Path(path) if path is not None else default_manifest_path()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read the benchmark manifest ({exc.strerror}); reinstall ncuwrap") from None
    try:
        doc = safeyaml.load(text)
    except safeyaml.TooLarge as exc:
        raise ManifestError(f"{path.name}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ManifestError(f"{path.name}: not valid YAML{where}; fix the syntax") from None
    return _Loader(path).manifest(doc)


# ---------------------------------------------------------------------------------------------- internals


def _flag_values(args: tuple[str, ...], flag: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args[:-1]) if a == flag]


_TOP = ({"version", "benchmarks"}, {"defaults"})
_BENCHMARK = ({"name", "source", "lesson", "sizes", "variants"}, {"warmup", "iters", "peak", "library", "arch_specific", "ceiling"})
_VARIANT = ({"name", "kernel", "lesson", "bytes", "flops", "profile", "expected"}, {"launches_per_run", "peak", "library", "ceiling"})
_EXPECTED = ({"bound", "limiter", "findings"}, {"timeline"})


class _Loader:
    def __init__(self, path: Path) -> None:
        self.path = path

    def manifest(self, doc: Any) -> Manifest:
        top = schema.document(doc, self.path.name, ManifestError).mapping(*_TOP)
        version = top["version"]
        if version.value != MANIFEST_VERSION:
            raise version.fail(f"version {version.value!r} is not supported; this ncuwrap reads version {MANIFEST_VERSION}")
        defaults = top.get("defaults", {}).mapping(optional={"warmup", "iters", "ceiling"})
        warmup = defaults.get("warmup", 5).integer(minimum=0)
        iters = defaults.get("iters", 20).integer(minimum=0)
        ceiling = defaults.get("ceiling", CeilingBasis.large.value).choice(CeilingBasis)
        items = top["benchmarks"].items(what="a non-empty list of benchmarks", nonempty=True)
        benchmarks = [self.benchmark(item, warmup, iters, ceiling) for item in items]
        schema.unique(((b.name, top.at(f"benchmark {b.name}")) for b in benchmarks), "benchmark name")
        return Manifest(path=self.path, version=MANIFEST_VERSION, benchmarks=tuple(benchmarks))

    def benchmark(self, item: schema.Node, warmup: int, iters: int, ceiling: CeilingBasis = CeilingBasis.large) -> Benchmark:
        item.mapping(*_BENCHMARK)
        name = item["name"].text()
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise item.at(f"benchmark {name}").fail("name must be lower_snake_case (it is also the binary name)")
        item = item.at(f"benchmark {name}")
        source = self.path.parent / item["source"].text()
        if not source.is_file():
            raise item.fail(f"source {item['source'].value} does not exist next to the manifest")
        sizes = {}
        for key, value in item["sizes"].pairs(what="a mapping of size names to positive integers", nonempty=True):
            if not key.isidentifier():
                raise item["sizes"].fail(f"size name {key!r} is not an identifier")
            sizes[key] = value.integer(minimum=1)
        peak = item.get("peak", Peak.none.value).choice(Peak)
        library = item["library"].choice(Library, nullable=True)
        arch_specific = None
        if item.has("arch_specific"):
            arch_specific = item["arch_specific"].text()
            if not re.fullmatch(r"sm_\d{2,3}a", arch_specific):
                raise item["arch_specific"].fail(f"{arch_specific!r} is not an architecture-specific target such as sm_90a")
        ceiling = item.get("ceiling", ceiling.value).choice(CeilingBasis)
        variants = [
            self.variant(v, name, sizes, peak, library, ceiling) for v in item["variants"].items(what="a non-empty list", nonempty=True)
        ]
        schema.unique(((v.name, item) for v in variants), "variant name")
        return Benchmark(
            name=name,
            source=source,
            lesson=item["lesson"].text(),
            sizes=MappingProxyType(sizes),
            warmup=item.get("warmup", warmup).integer(minimum=0),
            iters=max(1, item.get("iters", iters).integer(minimum=0)),
            variants=tuple(variants),
            arch_specific=arch_specific,
        )

    def variant(
        self,
        item: schema.Node,
        bench: str,
        sizes: Mapping[str, int],
        peak: Peak,
        library: Library | None,
        ceiling: CeilingBasis = CeilingBasis.large,
    ) -> Variant:
        item.mapping(*_VARIANT)
        name = item["name"].text()
        item = item.at(f"benchmark {bench} variant {name}")
        kernel = None if item["kernel"].absent else item["kernel"].text()
        if kernel is not None:
            try:
                re.compile(kernel)
            except re.error as exc:
                raise item["kernel"].fail(f"not a valid regex ({exc})") from None
            if not (kernel.startswith("^") and kernel.endswith("$")):
                raise item["kernel"].fail("anchor the regex with ^...$ so it cannot match a longer kernel name")
        exp = item["expected"].mapping(*_EXPECTED)
        findings = exp["findings"].texts(what="a list of finding ids")
        known = finding_ids()
        bad = sorted(f for f in findings if f not in known)
        if bad:
            raise exp["findings"].fail(f"unknown finding {', '.join(bad)} (known, from rules/default.yaml: {', '.join(sorted(known))})")
        return Variant(
            name=name,
            kernel=kernel,
            lesson=item["lesson"].text(),
            bytes=self.formula(item["bytes"], sizes),
            flops=self.formula(item["flops"], sizes),
            launches_per_run=self.formula(item.get("launches_per_run", "1"), sizes),
            peak=item.get("peak", peak.value).choice(Peak),
            library=item["library"].choice(Library, nullable=True) if item.has("library") else library,
            profile=self.profile(item["profile"], kernel, sizes),
            expected=Expected(
                bound=exp["bound"].choice(Bound),
                limiter=exp["limiter"].choice(Limiter, nullable=True),
                findings=findings,
                timeline=exp["timeline"].choice(TimelineBound, nullable=True),
            ),
            ceiling=item.get("ceiling", ceiling.value).choice(CeilingBasis),
        )

    def profile(self, node: schema.Node, kernel: str | None, sizes: Mapping[str, int]) -> ProfileArgs | None:
        if node.absent:
            return None
        if kernel is None:
            raise node.fail("a variant without a kernel cannot be profiled; set profile: null")
        node.mapping({"args", "launch_skip"})
        args = node["args"].texts(what="a list of strings (quote numbers)")
        if "--variant" in args:
            raise node["args"].fail("leave --variant out: the caller adds it")
        profile = ProfileArgs(args=args, launch_skip=node["launch_skip"].integer(minimum=0))
        try:
            overrides = profile.size_overrides()
        except ValueError:
            raise node["args"].fail("--size values must be KEY=INTEGER") from None
        unknown = sorted(set(overrides) - set(sizes))
        if unknown:
            raise node["args"].fail(f"unknown size {', '.join(unknown)}")
        return profile

    @staticmethod
    def formula(node: schema.Node, sizes: Mapping[str, int]) -> Formula:
        try:
            f = parse_formula(node.value)
        except FormulaError as exc:
            raise node.fail(str(exc)) from None
        unknown = sorted(f.names - set(sizes))
        if unknown:
            raise node.fail(f"formula {f.text!r} uses unknown size {', '.join(unknown)} (sizes: {', '.join(sizes)})")
        return f
