"""The options the commands share (issue 40, item 6): each a typed value (RulesChoice, LaunchSelection,
TimelineOptions) that refuses a wrong value in one line, that the command line builds exactly as an API
caller would, and whose flag is declared once (ncuwrap/cli/options.py)."""

from __future__ import annotations

import ast
import dataclasses
from collections import defaultdict
from pathlib import Path

import pytest

import ncuwrap
from ncuwrap import api
from ncuwrap.cli import options
from ncuwrap.core.errors import InputError, NcuwrapError, OptionError
from ncuwrap.core.launch_selection import LaunchSelection
from ncuwrap.render import Format, render
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.timeline.options import TimelineOptions
from tests.conftest import DATA, H200, ROOT, run_cli

NAIVE = H200 / "transpose" / "transposeNaive.raw.csv"
STEPS = DATA / "h200_ncuwrap" / "steps"
RULES = ROOT / "rules" / "default.yaml"
CLI = ROOT / "ncuwrap" / "cli"


# --- each value refuses what cannot be right, in the commands' one line ----------------------------------

@pytest.mark.parametrize("make, error, message", [
    (lambda: RulesChoice(extend=True), OptionError, "--extend adds the rules of --rules FILE to the bundled ones; give --rules too"),
    (lambda: LaunchSelection(launch_skip=-1), OptionError, "--launch-skip must be 0 or more (got -1)"),
    (lambda: LaunchSelection(launch_count=-2), OptionError, "--launch-count must be 0 (no limit) or more (got -2)"),
    (lambda: LaunchSelection(nth_launch=0), OptionError, "--nth-launch must be 1 or more (got 0)"),
    (lambda: LaunchSelection(nth_launch=2, launch_skip=3), OptionError,
     "--nth-launch and --launch-skip exclude each other: --nth-launch N already picks the Nth launch of each kernel"),
    (lambda: TimelineOptions(steps="sometimes"), OptionError, "--steps 'sometimes': expected one of auto, marked, none"),
    (lambda: TimelineOptions(warmup=-1), OptionError, "--warmup must be 0 or more (got -1)"),
    (lambda: TimelineOptions(step_range="(?=step)"), InputError,
     "--step-range '(?=step)': not a valid regular expression (invalid perl operator: (?=); quote it or escape special characters "
     "(RE2 syntax: no lookarounds or backreferences)"),
], ids=["extend-alone", "skip", "count", "nth", "nth-and-skip", "steps", "warmup", "step-range"])
def test_a_wrong_value_is_refused_when_it_is_made(make, error, message):
    with pytest.raises(error) as raised:
        make()
    assert str(raised.value) == message


def test_the_values_are_frozen_and_their_defaults_are_the_commands():
    assert RulesChoice("mine.yaml").path == Path("mine.yaml") and not RulesChoice().extend
    assert not LaunchSelection().active and LaunchSelection().flags == ()
    assert LaunchSelection(kernel="k", launch_count=0, nth_launch=2).flags == ("--kernel", "--nth-launch")
    assert TimelineOptions().flags == () and TimelineOptions(steps="marked", warmup=0).flags == ("--warmup", "--steps")
    for value in (RulesChoice(), LaunchSelection(), TimelineOptions()):
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.extend = True


def test_a_value_that_does_not_apply_to_the_input_is_refused_by_the_function():
    with pytest.raises(InputError, match="--kernel, --launch-skip, --launch-count, --process, --ncu-rules and --source-page apply to "
                                         "Nsight Compute reports"):
        ncuwrap.diagnose(STEPS / "gpu_train.sqlite.gz", launches=LaunchSelection(kernel="gemm"))
    with pytest.raises(InputError, match="transposeNaive.raw.csv: --nth-launch picks the launches ncu profiles"):
        ncuwrap.diagnose(NAIVE, launches=LaunchSelection(nth_launch=1))
    with pytest.raises(InputError, match="^--kernel: applies to kernel reports; two timelines are compared as wholes"):
        ncuwrap.compare_reports(STEPS / "gpu_train.sqlite.gz", STEPS / "decode_eager.sqlite.gz", launches=LaunchSelection(kernel="x"))


def test_the_command_says_a_wrong_value_in_one_line(capsys):
    code, out, err = run_cli(capsys, "timeline", STEPS / "gpu_train.sqlite.gz", "--extend")
    assert (code, out, err) == (2, "", "ncuwrap: error: --extend adds the rules of --rules FILE to the bundled ones; give --rules too\n")
    code, out, err = run_cli(capsys, "diagnose", NAIVE, "-c", "-2")
    assert (code, out, err) == (2, "", "ncuwrap: error: --launch-count must be 0 (no limit) or more (got -2)\n")


# --- the command line builds the values an API caller gives ------------------------------------------------

class _Called(NcuwrapError):
    """Raised by a stand-in after it recorded its arguments: the command ends there, in one line."""


def _recorder(monkeypatch, target: str):
    calls = []

    def record(*args, **kwargs):
        calls.append((args, kwargs))
        raise _Called("recorded")

    monkeypatch.setattr(target, record)
    return calls


def test_diagnose_hands_the_api_the_values_a_direct_call_gives(monkeypatch, capsys):
    calls, real = [], api.diagnose

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr("ncuwrap.api.diagnose", spy)
    code, out, _ = run_cli(capsys, "diagnose", NAIVE, "--rules", RULES, "--extend", "-k", "Naive", "-s", "0", "-c", "1", "-f", "json")
    assert code == 0
    (given,) = calls
    assert given["rules"] == RulesChoice(RULES, extend=True)
    assert given["launches"] == LaunchSelection(kernel="Naive", launch_skip=0, launch_count=1)
    assert given["timeline"] == TimelineOptions()
    direct = real(NAIVE, rules=RulesChoice(RULES, extend=True), launches=LaunchSelection(kernel="Naive", launch_skip=0, launch_count=1))
    assert out == render(direct, Format.json)


def test_compare_timeline_and_profile_build_the_same_values(monkeypatch, capsys):
    eager, graph = STEPS / "decode_eager.sqlite.gz", STEPS / "graph_decode.sqlite.gz"
    calls = _recorder(monkeypatch, "ncuwrap.api.compare_reports")
    run_cli(capsys, "compare", eager, graph, "--rules", RULES, "--step-range", "decode", "--warmup", "1", "--steps", "marked",
            "--nsys-path", "/opt/nsys")
    (_, given), = calls
    assert (given["rules"], given["launches"], given["timeline"]) == (
        RulesChoice(RULES), LaunchSelection(), TimelineOptions(step_range="decode", warmup=1, steps="marked", nsys="/opt/nsys"))

    calls = _recorder(monkeypatch, "ncuwrap.timeline.diagnosis.diagnose_timeline")
    run_cli(capsys, "timeline", eager, "--steps", "none", "--nsys-path", "/opt/nsys")
    assert calls == [((eager, RulesChoice(), TimelineOptions(steps="none", nsys="/opt/nsys")), {"kernels": None})]

    calls = _recorder(monkeypatch, "ncuwrap.timeline.ranks.diagnosis.diagnose_ranks")
    run_cli(capsys, "timeline", "--ranks", STEPS, "--warmup", "2", "--workers", "0")
    (_, given), = calls
    assert (given["rules"], given["timeline"]) == (RulesChoice(), TimelineOptions(warmup=2))

    calls = _recorder(monkeypatch, "ncuwrap.api.profile_run")
    code, _, err = run_cli(capsys, "profile", "-k", "gemm", "--nth-launch", "2", "-c", "0", "--rules", RULES, "--steps", "marked",
                           "--", "./app")
    assert (code, err) == (2, "ncuwrap: error: recorded\n")
    (_, given), = calls
    assert (given["launches"], given["rules"], given["timeline"]) == (
        LaunchSelection(kernel="gemm", launch_count=0, nth_launch=2), RulesChoice(RULES), TimelineOptions(steps="marked"))


# --- each flag declared once --------------------------------------------------------------------------------

def _declarations() -> dict[str, list[str]]:
    """Every flag of a typer.Option call in ncuwrap/cli/*.py -> where it is declared (file:line)."""
    found = defaultdict(list)
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Option":
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("-"):
                        for flag in arg.value.split("/"):  # --source/--no-source
                            found[flag].append(f"{path.name}:{node.lineno}")
    return found


def test_no_flag_is_declared_twice():
    declared = _declarations()
    assert "--rules" in declared and "--step-range" in declared  # the scan finds the aliases of options.py
    twice = {flag: places for flag, places in declared.items() if len(places) > 1 and flag not in options.MEANINGS}
    assert twice == {}, "declare these once, in ncuwrap/cli/options.py"
    # A flag with several meanings has one declaration per meaning, and options.py's are its aliases.
    for flag, meanings in options.MEANINGS.items():
        assert len(declared[flag]) == len(meanings), flag
        ours = [m for m in meanings if hasattr(options, m)]
        assert len([p for p in declared[flag] if p.startswith("options.py:")]) == len(ours) >= 1, flag


def test_a_flag_shared_by_commands_has_one_help_text():
    import typer.main

    from ncuwrap.cli import app

    helps = defaultdict(set)

    def walk(command, path):
        for param in getattr(command, "params", []):
            for flag in getattr(param, "opts", []):
                if flag.startswith("-"):
                    helps[flag].add(param.help)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(typer.main.get_command(app), "ncuwrap")
    assert len(helps["--rules"]) == 1 and len(helps["-k"]) == 1
    differing = {flag: texts for flag, texts in helps.items() if len(texts) > 1 and flag not in options.MEANINGS}
    assert differing == {}
