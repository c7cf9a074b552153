"""--kernel REGEX (issue 10, A4): linear-time matching, every bad pattern one line."""

from __future__ import annotations

import csv
import io
import signal

import pytest

from tests.conftest import H200, run_cli
from ncuwrap.kernel.document import expand

VECADD = H200 / "vecadd" / "bench_add.raw.csv"
PREFIX = "ncuwrap: error: --kernel "


def _renamed(tmp_path, name: str, copies: int = 1):
    """The real vecadd export with its kernel renamed; ``copies`` > 1 repeats the last launch under
    NAME0, NAME1, ... (new launch IDs) for a report with many distinct kernels."""
    header, units, *rows = list(csv.reader(io.StringIO(VECADD.read_text(encoding="utf-8"))))
    column = header.index("Kernel Name")
    out = []
    for i in range(copies):
        for row in rows:
            row = list(row)
            row[0] = str(len(out))
            row[column] = f"{name}{i if copies > 1 else ''}(const float *, const float *, float *, int)"
            out.append(row)
    path = tmp_path / "renamed.raw.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows([header, units, *out])
    return path


def test_backtracking_pattern_runs_in_linear_time(capsys, tmp_path):
    # Python's re took 45 s for this pattern on a 26-character name, doubling per character.
    report = _renamed(tmp_path, "a" * 1500 + "!")
    signal.alarm(60)
    try:
        code, _, err = run_cli(capsys, "diagnose", report, "--kernel", "(a+)+$")
    finally:
        signal.alarm(0)
    assert code == 2
    assert err == f"{PREFIX}'(a+)+$' matched no kernel of {report}; its kernels: {'a' * 1500}!\n"


@pytest.mark.parametrize("pattern, message", [
    ("(?=x)",
     "'(?=x)': not a valid regular expression (invalid perl operator: (?=); quote it or escape special characters (RE2 syntax: no lookarounds or "
     "backreferences)"),
    (r"(a)\1",
     r"'(a)\\1': not a valid regular expression (invalid escape sequence: \1); quote it or escape special characters (RE2 syntax: no lookarounds or "
     r"backreferences)"),
    ("a{1001}",
     "'a{1001}': not a valid regular expression (invalid repetition size: {1001}); quote it or escape special characters (RE2 syntax: no lookarounds or "
     "backreferences)"),
    ("x" * 600, f"'{'x' * 60}'...: the regular expression is 600 characters long (at most 512); match a shorter part of the kernel name"),
    # Python's re raised OverflowError (a traceback); RE2 reads the count as literal text.
    ("a{9999999999}", f"'a{{9999999999}}' matched no kernel of {VECADD}; its kernels: coalesced_add"),
])
def test_bad_patterns_are_one_line(capsys, pattern, message):
    code, out, err = run_cli(capsys, "diagnose", VECADD, "--kernel", pattern)
    assert code == 2 and out == ""
    assert err == f"{PREFIX}{message}\n"


def test_many_kernels_listed_in_part(capsys, tmp_path):
    report = _renamed(tmp_path, "kernel_", copies=25)
    code, _, err = run_cli(capsys, "diagnose", report, "--kernel", "nomatch")
    assert code == 2
    listed = ", ".join(f"kernel_{i}" for i in range(20))
    assert err == f"{PREFIX}'nomatch' matched no kernel of {report}; its kernels: {listed} and 5 more\n"


def test_a_pattern_still_selects(capsys, tmp_path):
    report = _renamed(tmp_path, "kernel_", copies=3)
    code, out, err = run_cli(capsys, "diagnose", report, "--kernel", r"^kernel_[02]$", "-f", "json")
    assert code == 0, err
    import json

    assert [k["name"] for k in expand(json.loads(out))["kernels"]] == ["kernel_0", "kernel_0", "kernel_2", "kernel_2"]


# Issue 42: NVTX names matched in bulk (kernel_filter.search_all), RE2 only on the names that hold the
# literal every match holds. SYNTHETIC names, beside the step names real captures carry.
BULK_NAMES = ["step 3", "Step_7", "ProfilerStep#12", "Optimizer.step#AdamW.step", "train_step", "ſtep 9", "stepper", "x\udcffstep 1",
              "forward", "STEP", "zstep", "", "a\nstep 2"] + [f"op_{i}_aten::mm" for i in range(10_000)]


@pytest.mark.parametrize("pattern, literal, folded", [
    (None, "step", True), ("train_step", None, False), ("step", None, False), ("^[A-Z]+$", None, False), ("p#1", None, False),
])
def test_bulk_matching_agrees_with_one_name_at_a_time(pattern, literal, folded):
    from ncuwrap.core.kernel_filter import compile_filter, search_all
    from ncuwrap.timeline.options import STEP_PATTERN

    pattern = pattern or STEP_PATTERN
    matches = compile_filter(pattern)
    expected = [matches(n) for n in BULK_NAMES]
    assert list(search_all(pattern, BULK_NAMES, literal=literal, folded=folded)) == expected
    assert any(expected)


def test_step_names_are_matched_in_bulk(monkeypatch):
    """10,000 distinct NVTX names, 3 of them steps: RE2 is asked about the few holding 'step', not every
    name (one call each took 2.7 us: 2M names, 5 s)."""
    import numpy as np

    from ncuwrap.core import kernel_filter
    from ncuwrap.timeline import steps
    from ncuwrap.timeline.events import Events, Labels

    asked = []
    compile_filter = kernel_filter.compile_filter

    def counting(*args, **kwargs):
        matches = compile_filter(*args, **kwargs)
        return lambda name: asked.append(name) or matches(name)

    monkeypatch.setattr(kernel_filter, "compile_filter", counting)
    monkeypatch.setattr(steps, "compile_filter", counting, raising=False)  # where ranges() matched one name at a time (steps imports it no more)
    names = [f"op_{i}" for i in range(10_000)] + ["step 1", "step 2", "step 3"]
    n = len(names)
    nvtx = Events({"start": np.arange(n, dtype=np.int64) * 10, "end": np.arange(n, dtype=np.int64) * 10 + 5, "name": Labels.of(names),
                   "tid": np.zeros(n, dtype=np.int64)})
    name, starts, _ = steps.ranges(nvtx)
    assert name == "step 1" and list(starts) == [100_000, 100_010, 100_020]
    assert sorted(asked) == ["step 1", "step 2", "step 3"]
