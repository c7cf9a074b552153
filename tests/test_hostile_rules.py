"""Hostile rules files (issue 10, A1-A3): alias bombs, deep or huge expressions, huge format widths.
Each is the bundled rules/default.yaml with one line replaced; each must end in one line naming the
file (and the rule), exit code 2, in bounded time and memory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ncuwrap.core.expr import parse
from tests.conftest import H200, ROOT, run_cli

DEFAULT = ROOT / "rules" / "default.yaml"
REPORT = H200 / "vecadd" / "bench_add.raw.csv"
LATENCY_WHEN = 'when: "max(sm_pct, memory_pct) < busy"'
TITLE = 'title: "Uncoalesced global loads: {gld_sectors_per_request:.1f} sectors'
# Nine levels of nine aliases: 9**9 (387 million) strings once expanded, from 380 bytes.
LAUGHS = "laughs: [&a [lol,lol,lol,lol,lol,lol,lol,lol,lol], " + ", ".join(
    f"&{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi")) + "]"


def _rules(tmp_path: Path, old: str, new: str) -> Path:
    text = DEFAULT.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / "rules.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def _refused(capsys, path: Path, message: str) -> None:
    code, out, err = run_cli(capsys, "diagnose", REPORT, "--rules", path)
    assert code == 2 and out == ""
    assert err == f"ncuwrap: error: {path}: {message}\n"


@pytest.mark.parametrize("old, new, message", [
    # A1: aliases of aliases, nesting past the composer's stack, a value that contains itself.
    ("version: 1\n", f"version: 1\n{LAUGHS}\n", "its aliases (*name) expand to more than 100,000 values; write it out without aliases of aliases"),
    ("version: 1\n", "version: 1\nx: " + "[" * 100 + "]" * 100 + "\n", "lists and mappings nest more than 64 levels deep at line 12; flatten them"),
    ("version: 1\n", "version: 1\nx: &a [1, *a]\n", "the value at line 12 contains an alias of itself, which never ends; remove that alias"),
    # A2: expressions deeper, longer or larger than the evaluator's bounds.
    (LATENCY_WHEN, 'when: "' + "not " * 60 + 'sm_pct"',
     "bound[0] (latency): 'not not not not not not not not not not '... nests deeper than 50 levels (a + b + ... counts one level per term); simplify it"),
    (LATENCY_WHEN, 'when: "' + " + ".join(["sm_pct"] * 400) + ' > 1"',
     "bound[0] (latency): the condition is 3,601 characters long (at most 2,000); split it or use constants"),
    (LATENCY_WHEN, 'when: "sm_pct > 10**10**10"', "bound[0] (latency): exponent 10 ** 10 is too large in 'sm_pct > 10**10**10' (at most 64)"),
    (LATENCY_WHEN, 'when: "sm_pct > 9999999999**99"', "bound[0] (latency): exponent 99 is too large in 'sm_pct > 9999999999**99' (at most 64)"),
    (LATENCY_WHEN, 'when: "sm_pct * 99999999999999999999 > 1"',
     "bound[0] (latency): integer 99999999999999999999 is too large in 'sm_pct * 99999999999999999999 > 1' (at most 2**53); write it as a float, e.g. 1e20"),
    (LATENCY_WHEN, 'when: "sm_pct > 1e999"', "bound[0] (latency): number 1e999 is out of range in 'sm_pct > 1e999'"),
    ("  busy: 60\n", "  busy: .inf\n", "constants: busy: inf is out of range (a finite number, integers up to 2**53)"),
    ("  busy: 60\n", "  busy: 99999999999999999999\n", "constants: busy: 99999999999999999999 is out of range (a finite number, integers up to 2**53)"),
    # A3: format widths and precisions that would write megabytes per text.
    (TITLE, 'title: "Uncoalesced global loads: {gld_sectors_per_request:200000000f} sectors',
     "finding 'uncoalesced_global_loads': placeholder {gld_sectors_per_request:200000000f} is too wide (width at most 64, precision at most 12), e.g. "
     "{gld_sectors_per_request:.1f}"),
    (TITLE, 'title: "Uncoalesced global loads: {gld_sectors_per_request:.99f} sectors',
     "finding 'uncoalesced_global_loads': placeholder {gld_sectors_per_request:.99f} is too wide (width at most 64, precision at most 12), e.g. "
     "{gld_sectors_per_request:.1f}"),
    (TITLE, 'title: "Uncoalesced global loads: {gld_sectors_per_request:' + "9" * 5000 + 'f} sectors',
     "finding 'uncoalesced_global_loads': placeholder {gld_sectors_per_request:999999999999999 is too wide (width at most 64, precision at most 12), e.g. "
     "{gld_sectors_per_request:.1f}"),
], ids=["alias-bomb", "deep-yaml", "self-alias", "deep-not", "long-sum", "power-tower", "big-power", "big-int", "inf-literal",
        "inf-constant", "big-constant", "wide-format", "long-precision", "5000-digit-width"])
def test_hostile_rules_refused(capsys, tmp_path, old, new, message):
    _refused(capsys, _rules(tmp_path, old, new), message)


def test_bounds_leave_the_bundled_rules_alone(capsys):
    code, out, err = run_cli(capsys, "rules", "check", DEFAULT)
    assert code == 0 and err == "" and out.startswith(f"{DEFAULT}: ok (kernel rules:")


@pytest.mark.parametrize("text, expected", [
    ("x * 2**64", 2.0**65),  # numpy integers wrapped this around to 0
    ("x ** -1", 0.5),  # numpy refused negative integer powers
    ("x + " * 45 + "x", 92.0),  # deep, but within the bound
])
def test_numbers_evaluate_as_floats(text, expected):
    assert parse(text).evaluate(lambda name: np.array([2.0]), {}).tolist() == [expected]
