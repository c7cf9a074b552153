"""The bundled benchmark manifest: it loads, is consistent with the CUDA sources, and bad manifests fail clearly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ncuwrap import ruleset
from ncuwrap.bundled.manifest import CeilingBasis, ManifestError, Peak, finding_ids, load_manifest
from ncuwrap.core.resources import data_dir
from ncuwrap.kernel.metrics import KERNEL

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "benchmarks"
_MACRO_KERNEL = re.compile(r"^(?:E2E_KERNEL|TINY_KERNEL|LEAN_KERNEL)\((\w+)\)", re.M)

MANIFEST = load_manifest()


def kernels_in(source: Path) -> set[str]:
    """Names of the __global__ functions a source defines (directly or through its one-line kernel macros)."""
    text = source.read_text()
    names = set(_MACRO_KERNEL.findall(text))
    for m in re.finditer(r"__global__", text):
        head = re.sub(r"__launch_bounds__\([^)]*\)", "", text[m.end() : text.find("{", m.end())])
        name = re.search(r"(\w+)\s*\(", head)
        if name and name.group(1) != "NAME":  # NAME: the parameter of a kernel-defining macro
            names.add(name.group(1))
    return names


def test_manifest_is_the_bundled_one():
    assert MANIFEST.path == data_dir("kernels") / "manifest.yaml"
    assert MANIFEST.version == 1


def test_covers_the_issue():
    names = set(MANIFEST.names())
    assert {
        "copy_ceiling", "transpose", "vecadd", "reduction", "smem_banks", "divergence", "occupancy", "gemm", "e2e",
        "fma", "grid_size", "spill", "gather", "atomics", "launch_overhead",
    } <= names
    assert [v.name for v in MANIFEST.get("transpose").variants] == [
        "copy", "naive", "shared_tile", "padded_tile", "swizzled64_float4", "swizzled128x64",
    ]
    assert MANIFEST.get("transpose").sizes == {"rows": 4096, "cols": 4096}
    assert MANIFEST.get("gemm").variant("tensor_core").peak is Peak.fp16_tensor


@pytest.mark.parametrize("bench", MANIFEST.benchmarks, ids=lambda b: b.name)
def test_every_variant_names_exactly_one_kernel_of_its_source(bench):
    defined = kernels_in(bench.source)
    assert defined, f"{bench.source.name}: no __global__ function found"
    for v in bench.variants:
        if v.kernel is None:
            assert v.profile is None
            continue
        matches = sorted(k for k in defined if re.search(v.kernel, k))
        assert matches == [v.function], f"{bench.name}/{v.name}: {v.kernel} matches {matches}"


def test_kernel_regexes_are_unique_across_the_whole_manifest():
    functions = [v.function for b in MANIFEST.benchmarks for v in b.variants if v.function]
    assert len(functions) == len(set(functions))


@pytest.mark.parametrize("bench", MANIFEST.benchmarks, ids=lambda b: b.name)
def test_launch_skip_lands_on_the_first_timed_launch(bench):
    for v in bench.variants:
        if v.profile is not None:
            assert v.profile.launch_skip == bench.expected_launch_skip(v), f"{bench.name}/{v.name}"
            assert v.profile.warmup(default=-1) >= 0, "profile args must pin --warmup"


@pytest.mark.parametrize("bench", MANIFEST.benchmarks, ids=lambda b: b.name)
def test_formulas_evaluate_to_sane_numbers(bench):
    for v in bench.variants:
        assert v.bytes.evaluate(bench.sizes) >= 0
        assert v.flops.evaluate(bench.sizes) >= 0
        assert set(v.expected.findings) <= finding_ids()
        if v.peak is Peak.dram:
            assert v.bytes.evaluate(bench.sizes) > 0, f"{bench.name}/{v.name}: dram peak needs bytes"
        if v.peak in (Peak.fp32, Peak.fp16_tensor):
            assert v.flops.evaluate(bench.sizes) > 0, f"{bench.name}/{v.name}: compute peak needs flops"


def test_records_are_frozen():
    bench = MANIFEST.get("vecadd")
    with pytest.raises(AttributeError):
        bench.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        bench.sizes["n"] = 1  # type: ignore[index]


def test_which_ceiling_judges_and_which_arch_is_needed():
    """defaults.ceiling (same_bytes) holds unless a family or variant says otherwise; copy_ceiling is the large one."""
    assert {v.ceiling for v in MANIFEST.get("transpose").variants} == {CeilingBasis.same_bytes}
    assert {v.ceiling for v in MANIFEST.get("copy_ceiling").variants} == {CeilingBasis.large}
    assert MANIFEST.get("gemm_hopper").arch_specific == "sm_90a"
    assert all(b.arch_specific is None for b in MANIFEST.benchmarks if b.name != "gemm_hopper")
    minimal = load_manifest(FIXTURES / "valid_minimal.yaml").get("demo")
    assert minimal.arch_specific is None and minimal.variant("v").ceiling is CeilingBasis.large  # the default without defaults.ceiling


def test_minimal_valid_manifest():
    m = load_manifest(FIXTURES / "valid_minimal.yaml")
    assert m.get("demo").variant("v").function == "k_ok"
    assert m.get("demo").warmup == 5 and m.get("demo").iters == 20


@pytest.mark.parametrize(
    ("fixture", "match"),
    [
        ("bad_version.yaml", r"^bad_version\.yaml: version: version 2 is not supported"),
        ("formula_attribute.yaml", r"^formula_attribute\.yaml: benchmark demo variant v\.bytes: .*Attribute is not allowed"),
        ("formula_unknown_size.yaml", r"^formula_unknown_size\.yaml: .*unknown size m"),
        ("unknown_finding.yaml", r"^unknown_finding\.yaml: .*unknown finding too_slow"),
        ("kernel_not_anchored.yaml", r"^kernel_not_anchored\.yaml: .*anchor the regex"),
        ("missing_source.yaml", r"^missing_source\.yaml: benchmark demo: source missing\.cu does not exist"),
        ("bad_bound.yaml", r"^bad_bound\.yaml: .*expected\.bound: 'io' is not one of memory, compute, latency"),
        ("unknown_key.yaml", r"^unknown_key\.yaml: .*unknown key colour"),
        ("variant_unknown_key.yaml", r"^variant_unknown_key\.yaml: .*unknown key profile_args"),
        ("variant_missing_keys.yaml", r"^variant_missing_keys\.yaml: .*missing key bytes, expected, flops, kernel, lesson, profile"),
        ("duplicate_variant.yaml", r"^duplicate_variant\.yaml: benchmark demo: duplicate variant name v"),
        ("not_yaml.yaml", r"^not_yaml\.yaml: not valid YAML"),
        ("profile_with_variant.yaml", r"^profile_with_variant\.yaml: .*leave --variant out"),
        ("bad_ceiling.yaml", r"^bad_ceiling\.yaml: .*ceiling: 'tiny' is not one of same_bytes, large"),
        ("bad_arch_specific.yaml", r"^bad_arch_specific\.yaml: .*'sm_90' is not an architecture-specific target such as sm_90a"),
    ],
)
def test_invalid_manifests_name_the_file_and_the_fix(fixture, match):
    with pytest.raises(ManifestError, match=match) as info:
        load_manifest(FIXTURES / "invalid" / fixture)
    assert "\n" not in str(info.value)


def test_missing_manifest_file():
    with pytest.raises(ManifestError, match="cannot read the benchmark manifest"):
        load_manifest(FIXTURES / "does_not_exist.yaml")


def test_finding_ids_come_from_the_rules(monkeypatch):
    """The ids a variant may expect are the bundled rules' findings: drop one from the rules and the
    manifest naming it no longer loads."""
    rules = ruleset.load(None, KERNEL)
    assert finding_ids() == {f.id for f in rules.findings} and "at_roofline" in finding_ids()
    without = frozenset(f.id for f in rules.findings if f.id != "at_roofline")
    monkeypatch.setattr(ruleset, "finding_ids", lambda path: without)
    finding_ids.cache_clear()
    try:
        with pytest.raises(ManifestError, match=r"^manifest\.yaml: benchmark copy_ceiling variant memcpy_d2d\.expected\.findings: "
                                                r"unknown finding at_roofline \(known, from rules/default\.yaml: atomic_contention, "):
            load_manifest()
    finally:
        finding_ids.cache_clear()
