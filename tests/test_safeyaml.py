"""ncuwrap.core.safeyaml: libyaml's events composed by PyYAML's Python Composer give the same objects and the
same errors as PyYAML's own parser (the fallback, and the only parser where PyYAML lacks libyaml), with
the same bounds on both paths."""

from __future__ import annotations

import math
import random
import subprocess
import sys

import pytest
import yaml

from ncuwrap.kernel import metrics
from ncuwrap import ruleset
from ncuwrap.core import safeyaml
from ncuwrap.core.errors import RulesError
from tests.conftest import ROOT

needs_libyaml = pytest.mark.skipif(safeyaml.CParser is None, reason="PyYAML without libyaml: only the fallback to test")

YAML_FILES = sorted(p for folder in ("rules", "tests", "kernels") for p in (ROOT / folder).rglob("*") if p.suffix in (".yaml", ".yml"))
RULES_TEXTS = [(ROOT / "rules" / name).read_text(encoding="utf-8") for name in ("default.yaml", "timeline.yaml", "reference.yaml")]
# Pieces of YAML for mutations, weighted to the corners where the parsers differ (with safeyaml's checks
# for them taken out, about 4% of the mutated texts below load otherwise on the two paths).
PIECES = list(":-[]{},&*!|>'\"#?% \t\n\ufeff") + [": ", "- ", "\n  ", "\n- ", "? ", "*x", "&x ", "!!str ", "!!str,", "! ", "|-#", "\n%YAML 1.1#",
                                                 "a?", "\n\ufeff", "\t"]
# Nine levels of nine aliases: 9**9 values once expanded.
LAUGHS = "laughs: [&a [lol,lol,lol,lol,lol,lol,lol,lol,lol], " + ", ".join(
    f"&{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi")) + "]"


def _same(a, b) -> bool:
    """Equal values of the same types all the way down (1 == 1.0 == True would hide a difference)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def _outcome(text: str, libyaml: bool, monkeypatch):
    monkeypatch.setattr(safeyaml, "USE_LIBYAML", libyaml)
    try:
        return "ok", safeyaml.load(text)
    except yaml.YAMLError as exc:
        return type(exc), str(exc)


def _both(text: str, monkeypatch):
    fast, python = _outcome(text, True, monkeypatch), _outcome(text, False, monkeypatch)
    assert fast[0] == python[0] and (_same(fast[1], python[1]) if fast[0] == "ok" else fast[1] == python[1]), (fast, python)
    return python


@pytest.fixture(params=[pytest.param(True, marks=needs_libyaml), False], ids=["libyaml", "python"])
def path(request, monkeypatch):
    monkeypatch.setattr(safeyaml, "USE_LIBYAML", request.param)
    return request.param


def test_the_yaml_files_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in YAML_FILES}
    assert {"rules/default.yaml", "rules/timeline.yaml", "kernels/manifest.yaml", "tests/data/bad/rules_not_yaml.yaml"} <= names


@needs_libyaml
@pytest.mark.parametrize("yaml_file", YAML_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_yaml_file_gives_the_same_objects_or_error_on_both_paths(monkeypatch, yaml_file):
    _both(yaml_file.read_text(encoding="utf-8"), monkeypatch)


@needs_libyaml
def test_valid_files_take_the_libyaml_path(monkeypatch):
    """No valid file of the repository needs the fallback (else libyaml would buy nothing)."""
    loaded = []
    for yaml_file in YAML_FILES:
        text = yaml_file.read_text(encoding="utf-8")
        try:
            expected = safeyaml.load(text)
        except yaml.YAMLError:
            continue
        with monkeypatch.context() as patch:
            patch.setattr(safeyaml, "_PythonLoader", None)  # calling it would fail
            assert _same(safeyaml.load(text), expected), yaml_file
        loaded.append(yaml_file.name)
    assert {"default.yaml", "timeline.yaml", "ranks.yaml", "reference.yaml", "manifest.yaml"} <= set(loaded)


@pytest.mark.parametrize("text", [
    "x: [a?b, c]", "x: {a?: b}",  # PyYAML ends a plain scalar at '?' in [...] and {...}
    "x: !\ny: 1", "x: [!, a]",  # a bare '!': '' to libyaml, None to PyYAML
    "x: a\tb", "x: [a,\tb]", "x: |\n \tfoo\n",  # tabs
    "k: v\n\ufeffy: 1\n", "x: |\n  a\n  \ufeffb\n", "\ufeffx: 1",  # byte-order marks
    "x: |-#c\n  a\n", "x: >2# c\n  a\n",  # a comment right after a block scalar's header
    "%YAML 1.1#\n---\nx: 1\n", "%YAML 1.1\n---\nx: 1\n", "%YAML 1.3\n---\nx: 1\n",
    "x: [!!str, a]", "{foo : !!str,\n !!str : bar}", "x: [!!str a]",  # a tag then ','
    "x: " + "[" * 1100 + "]" * 1100,  # past libyaml's own nesting limit (1,000)
    "a: 1\n---\nb: 2\n", "x: *nowhere", "x: [1, 2",
    "x: 2001-02-30", "x: !!int 12x", "x: !!float", "x: !!bool 1", "x: !!timestamp x", "x: !!python/name:os.system",
], ids=lambda text: repr(text[:24]))
@needs_libyaml
def test_text_libyaml_reads_otherwise_loads_as_pyyaml_reads_it(monkeypatch, text):
    _both(text, monkeypatch)


@needs_libyaml
def test_mutated_rules_load_the_same_on_both_paths(monkeypatch):
    """Slices of the bundled rules with a few pieces of YAML put in: the same objects or error."""
    rng = random.Random(0)
    for _ in range(1000):
        lines = rng.choice(RULES_TEXTS).splitlines(keepends=True)
        start = rng.randrange(len(lines))
        text = "".join(lines[start:start + rng.randint(1, 10)])
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(text) + 1)
            text = text[:at] + "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 3))) + text[at + rng.randint(0, 2):]
        _both(text, monkeypatch)


def test_deep_flow_nesting_is_refused_in_one_line(path):
    """100,000 '[' would overflow the C stack of a recursive composer, and libyaml gives up past 1,000 levels
    with its own message; both paths give the bound's."""
    with pytest.raises(safeyaml.TooLarge, match=r"^lists and mappings nest more than 64 levels deep at line 2; flatten them$"):
        safeyaml.load("version: 1\nx: " + "[" * 100_000)
    with pytest.raises(safeyaml.TooLarge, match=r"^lists and mappings nest more than 64 levels deep at line 1; flatten them$"):
        safeyaml.load("{a: " * 100_000)


def test_deep_block_nesting_is_refused(path):
    text = "".join(" " * level + f"k{level}:\n" for level in range(100))
    with pytest.raises(safeyaml.TooLarge, match=r"^lists and mappings nest more than 64 levels deep at line 64; flatten them$"):
        safeyaml.load(text)
    assert safeyaml.load("".join(" " * level + f"k{level}:\n" for level in range(63)))  # 64 levels with the last value: loads


def test_alias_bounds_hold(path):
    with pytest.raises(safeyaml.TooLarge, match=r"^its aliases \(\*name\) expand to more than 100,000 values; write it out without aliases of aliases$"):
        safeyaml.load(LAUGHS)
    with pytest.raises(safeyaml.TooLarge, match=r"^the value at line 2 contains an alias of itself, which never ends; remove that alias$"):
        safeyaml.load("version: 1\nx: &a [1, *a]\n")
    ladder = safeyaml.load("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n")  # within the budget: the same list, shared
    assert ladder["c"][0] is ladder["b"] and ladder["b"][1] is ladder["a"]


def test_a_control_character_is_refused_with_its_line(path, tmp_path):
    with pytest.raises(safeyaml.BadCharacter) as info:
        safeyaml.load("version: 1\r\nx: é\x01b\n")
    assert (info.value.problem_mark.line, info.value.problem_mark.column) == (1, 4)
    rules = tmp_path / "rules.yaml"
    rules.write_text("version: 1\nx: a\x01b\n", encoding="utf-8")
    with pytest.raises(RulesError) as info:
        ruleset.load(rules, metrics.KERNEL)
    assert str(info.value) == f"{rules}: not valid YAML at line 2 (unacceptable character #x0001: special characters are not allowed); fix the syntax"


@pytest.mark.parametrize("text, line, problem", [
    ("version: 1\nbound: [\n  - verdict: x\n", 3, "expected the node content, but found '-'"),
    ("version: 1\nx: 2001-02-30\n", 2, "'2001-02-30' is not a valid timestamp (day is out of range for month)"),
    ("version: !!int one\n", 1, "'one' is not a valid int (invalid literal for int() with base 10: 'one')"),
    ("version: 1\nx: !!bool maybe\n", 2, "'maybe' is not a valid bool"),
    ("version: 1\nx:\n  !!timestamp " + "9" * 50 + ": 1\n", 3, "'" + "9" * 40 + "...' is not a valid timestamp"),
], ids=["syntax", "bad-date", "bad-int", "bad-bool", "bad-timestamp"])
def test_rules_errors_name_the_file_and_line_in_one_line(path, tmp_path, text, line, problem):
    """The message is PyYAML's on both paths (libyaml's refusals are read again by PyYAML)."""
    rules = tmp_path / "rules.yaml"
    rules.write_text(text, encoding="utf-8")
    with pytest.raises(RulesError) as info:
        ruleset.load(rules, metrics.KERNEL)
    assert str(info.value) == f"{rules}: not valid YAML at line {line} ({problem}); fix the syntax"


def test_without_libyaml_the_python_parser_loads_alone():
    """PyYAML built without its C extension: safeyaml falls back, with the same objects."""
    code = ("import sys; sys.modules['yaml._yaml'] = None\n"
            "import yaml; from ncuwrap.core import safeyaml\n"
            "assert not yaml.__with_libyaml__ and safeyaml.CParser is None and not safeyaml.USE_LIBYAML\n"
            "print(repr(safeyaml.load(open('rules/default.yaml', encoding='utf-8').read())))\n"
            "try:\n    safeyaml.load('x: ' + '[' * 100000)\nexcept safeyaml.TooLarge as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout.splitlines()
    assert out[0] == repr(safeyaml.load((ROOT / "rules" / "default.yaml").read_text(encoding="utf-8")))
    assert out[1] == "lists and mappings nest more than 64 levels deep at line 1; flatten them"
