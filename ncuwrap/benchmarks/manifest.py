"""The bundled benchmark manifest (``kernels/manifest.yaml``) loaded into frozen, validated records.

The YAML file documents its own format at the top. Every problem is reported as a
:class:`ManifestError` whose one-line message starts with the file name and says what to fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from ncuwrap import safeyaml
from ncuwrap.benchmarks.formula import Formula, FormulaError, parse_formula
from ncuwrap.errors import InputError
from ncuwrap.resources import data_dir

MANIFEST_VERSION = 1

FINDINGS = frozenset(
    {
        "uncoalesced_global_loads",
        "uncoalesced_global_stores",
        "shared_bank_conflicts",
        "low_achieved_occupancy",
        "grid_too_small",
        "warp_divergence",
        "local_memory_spill",
        "atomic_contention",
        "at_roofline",
    }
)


class ManifestError(InputError):
    """The benchmark manifest is missing, not YAML, or not a valid manifest."""


class Bound(str, Enum):
    memory = "memory"
    compute = "compute"
    latency = "latency"


class Limiter(str, Enum):
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


class Timeline(str, Enum):
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


@dataclass(frozen=True)
class Expected:
    """The verdict the variant is expected to get from ``ncuwrap diagnose`` (and ``timeline`` from nsys)."""

    bound: Bound
    limiter: Limiter | None
    findings: tuple[str, ...]
    timeline: Timeline | None = None


@dataclass(frozen=True)
class Profile:
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
    name: str
    kernel: str | None  # anchored regex for ncu -k regex:...
    lesson: str
    bytes: Formula
    flops: Formula
    launches_per_run: Formula
    peak: Peak
    library: Library | None
    profile: Profile | None
    expected: Expected

    @property
    def function(self) -> str | None:
        """The kernel function name when ``kernel`` is a plain anchored name (``^name$``)."""
        if self.kernel is None:
            return None
        m = re.fullmatch(r"\^([A-Za-z_]\w*)\$", self.kernel)
        return m.group(1) if m else None


@dataclass(frozen=True)
class Benchmark:
    name: str
    source: Path
    lesson: str
    sizes: Mapping[str, int]
    warmup: int
    iters: int
    variants: tuple[Variant, ...]

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


class _Loader:
    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, what: str) -> ManifestError:
        return ManifestError(f"{self.path.name}: {where}: {what}")

    def mapping(self, value: Any, where: str, required: set[str], optional: set[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected a mapping, got {type(value).__name__}")
        missing = sorted(required - set(value))
        if missing:
            raise self.fail(where, f"missing key {', '.join(missing)}")
        unknown = sorted(set(value) - required - optional)
        if unknown:
            raise self.fail(where, f"unknown key {', '.join(map(str, unknown))} (allowed: {', '.join(sorted(required | optional))})")
        return value

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, "expected non-empty text")
        return value

    def positive_int(self, value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(where, f"expected a non-negative integer, got {value!r}")
        return value

    def enum(self, cls: type[Enum], value: Any, where: str, nullable: bool = False) -> Any:
        if value is None and nullable:
            return None
        try:
            return cls(value)
        except ValueError:
            allowed = ", ".join(m.value for m in cls) + (", null" if nullable else "")
            raise self.fail(where, f"{value!r} is not one of {allowed}") from None

    def formula(self, value: Any, where: str, sizes: Mapping[str, int]) -> Formula:
        try:
            f = parse_formula(value)
        except FormulaError as exc:
            raise self.fail(where, str(exc)) from None
        unknown = sorted(f.names - set(sizes))
        if unknown:
            raise self.fail(where, f"formula {f.text!r} uses unknown size {', '.join(unknown)} (sizes: {', '.join(sizes)})")
        return f

    def manifest(self, doc: Any) -> Manifest:
        doc = self.mapping(doc, "top level", {"version", "benchmarks"}, {"defaults"})
        if doc["version"] != MANIFEST_VERSION:
            raise self.fail("version", f"version {doc['version']!r} is not supported; this ncuwrap reads version {MANIFEST_VERSION}")
        defaults = self.mapping(doc.get("defaults") or {}, "defaults", set(), {"warmup", "iters"})
        warmup = self.positive_int(defaults.get("warmup", 5), "defaults.warmup")
        iters = self.positive_int(defaults.get("iters", 20), "defaults.iters")
        items = doc["benchmarks"]
        if not isinstance(items, list) or not items:
            raise self.fail("benchmarks", "expected a non-empty list")
        benchmarks = tuple(self.benchmark(item, i, warmup, iters) for i, item in enumerate(items))
        seen: set[str] = set()
        for b in benchmarks:
            if b.name in seen:
                raise self.fail(f"benchmark {b.name}", "duplicate benchmark name")
            seen.add(b.name)
        return Manifest(path=self.path, version=MANIFEST_VERSION, benchmarks=benchmarks)

    def benchmark(self, item: Any, index: int, warmup: int, iters: int) -> Benchmark:
        where = f"benchmarks[{index}]"
        item = self.mapping(
            item, where, {"name", "source", "lesson", "sizes", "variants"}, {"warmup", "iters", "peak", "library"}
        )
        name = self.text(item["name"], f"{where}.name")
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise self.fail(f"benchmark {name}", "name must be lower_snake_case (it is also the binary name)")
        where = f"benchmark {name}"
        source = self.path.parent / self.text(item["source"], f"{where}.source")
        if not source.is_file():
            raise self.fail(where, f"source {item['source']} does not exist next to the manifest")
        sizes_doc = item["sizes"]
        if not isinstance(sizes_doc, dict) or not sizes_doc:
            raise self.fail(f"{where}.sizes", "expected a mapping of size names to positive integers")
        sizes = {}
        for key, value in sizes_doc.items():
            if not isinstance(key, str) or not key.isidentifier():
                raise self.fail(f"{where}.sizes", f"size name {key!r} is not an identifier")
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise self.fail(f"{where}.sizes.{key}", f"expected a positive integer, got {value!r}")
            sizes[key] = value
        peak = self.enum(Peak, item.get("peak", "none"), f"{where}.peak")
        library = self.enum(Library, item.get("library"), f"{where}.library", nullable=True)
        variants_doc = item["variants"]
        if not isinstance(variants_doc, list) or not variants_doc:
            raise self.fail(f"{where}.variants", "expected a non-empty list")
        variants = tuple(self.variant(v, f"{where} variants[{i}]", sizes, peak, library) for i, v in enumerate(variants_doc))
        names = [v.name for v in variants]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise self.fail(where, f"duplicate variant name {', '.join(dupes)}")
        return Benchmark(
            name=name,
            source=source,
            lesson=self.text(item["lesson"], f"{where}.lesson"),
            sizes=MappingProxyType(sizes),
            warmup=self.positive_int(item.get("warmup", warmup), f"{where}.warmup"),
            iters=max(1, self.positive_int(item.get("iters", iters), f"{where}.iters")),
            variants=variants,
        )

    def variant(self, item: Any, where: str, sizes: Mapping[str, int], peak: Peak, library: Library | None) -> Variant:
        item = self.mapping(
            item,
            where,
            {"name", "kernel", "lesson", "bytes", "flops", "profile", "expected"},
            {"launches_per_run", "peak", "library"},
        )
        name = self.text(item["name"], f"{where}.name")
        where = f"{where.split(' variants')[0]} variant {name}"
        kernel = item["kernel"]
        if kernel is not None:
            kernel = self.text(kernel, f"{where}.kernel")
            try:
                re.compile(kernel)
            except re.error as exc:
                raise self.fail(f"{where}.kernel", f"not a valid regex ({exc})") from None
            if not (kernel.startswith("^") and kernel.endswith("$")):
                raise self.fail(f"{where}.kernel", "anchor the regex with ^...$ so it cannot match a longer kernel name")
        profile = item["profile"]
        if profile is not None:
            if kernel is None:
                raise self.fail(f"{where}.profile", "a variant without a kernel cannot be profiled; set profile: null")
            p = self.mapping(profile, f"{where}.profile", {"args", "launch_skip"}, set())
            args = p["args"]
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                raise self.fail(f"{where}.profile.args", "expected a list of strings (quote numbers)")
            if "--variant" in args:
                raise self.fail(f"{where}.profile.args", "leave --variant out: the caller adds it")
            profile = Profile(args=tuple(args), launch_skip=self.positive_int(p["launch_skip"], f"{where}.profile.launch_skip"))
            try:
                overrides = profile.size_overrides()
            except ValueError:
                raise self.fail(f"{where}.profile.args", "--size values must be KEY=INTEGER") from None
            unknown = sorted(set(overrides) - set(sizes))
            if unknown:
                raise self.fail(f"{where}.profile.args", f"unknown size {', '.join(unknown)}")
        exp = self.mapping(item["expected"], f"{where}.expected", {"bound", "limiter", "findings"}, {"timeline"})
        findings = exp["findings"]
        if not isinstance(findings, list):
            raise self.fail(f"{where}.expected.findings", "expected a list of finding ids")
        bad = sorted(str(f) for f in findings if f not in FINDINGS)
        if bad:
            raise self.fail(f"{where}.expected.findings", f"unknown finding {', '.join(bad)} (known: {', '.join(sorted(FINDINGS))})")
        expected = Expected(
            bound=self.enum(Bound, exp["bound"], f"{where}.expected.bound"),
            limiter=self.enum(Limiter, exp["limiter"], f"{where}.expected.limiter", nullable=True),
            findings=tuple(findings),
            timeline=self.enum(Timeline, exp.get("timeline"), f"{where}.expected.timeline", nullable=True),
        )
        return Variant(
            name=name,
            kernel=kernel,
            lesson=self.text(item["lesson"], f"{where}.lesson"),
            bytes=self.formula(item["bytes"], f"{where}.bytes", sizes),
            flops=self.formula(item["flops"], f"{where}.flops", sizes),
            launches_per_run=self.formula(item.get("launches_per_run", "1"), f"{where}.launches_per_run", sizes),
            peak=self.enum(Peak, item.get("peak", peak.value), f"{where}.peak"),
            library=self.enum(Library, item["library"], f"{where}.library", nullable=True) if "library" in item else library,
            profile=profile,
            expected=expected,
        )
