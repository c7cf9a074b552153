"""The code's own quality bar (issue 21): ruff passes over the whole tree, with mccabe's complexity limit on
(issue 40), and every command and option has help text and is mentioned in the README or docs/."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib

import pytest
import typer

from ncuwrap.cli import app
from tests.conftest import ROOT


def test_ruff_passes_on_the_whole_tree():
    if shutil.which("ruff") is None and subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True).returncode:
        pytest.fail("ruff is not installed: it is in the test extra (pip install '.[test]')")
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", "."], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_limits_complexity_to_15():
    """The ruff run above checks mccabe's complexity (C901) at 15 at most: a function past it is split."""
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]
    assert "C90" in lint["select"] or "C901" in lint["select"], lint["select"]
    assert lint["mccabe"]["max-complexity"] <= 15


def test_every_public_class_has_a_docstring():
    """A reader meets a type before its fields: each public class of the package says what it is and who makes or uses it."""
    missing = []
    for path in sorted((ROOT / "ncuwrap").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_") and not ast.get_docstring(node):
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert len(list((ROOT / "ncuwrap").rglob("*.py"))) > 50  # the walk found the package
    assert not missing, "public classes without a docstring:\n" + "\n".join(missing)


def _commands():
    """(path, click command) for every command and subcommand of the CLI."""
    root = typer.main.get_command(app)
    out = []

    def walk(cmd, path):
        for name, sub in getattr(cmd, "commands", {}).items():
            out.append((f"{path} {name}", sub))
            walk(sub, f"{path} {name}")

    walk(root, "ncuwrap")
    return out


# README.md and docs/, without the pages' --help blocks (docs/cli/: the commands' own help, which would
# mention every option): an option counts as documented where prose says what it is for.
_HELP_BLOCK = re.compile(r"^```\n\$ ncuwrap [a-z ]+ --help .*?^```", re.S | re.M)
DOCS = "\n".join(_HELP_BLOCK.sub("", p.read_text(encoding="utf-8")) for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))])


def test_the_cli_has_its_commands():
    names = [path for path, _ in _commands()]
    assert {"ncuwrap diagnose", "ncuwrap compare", "ncuwrap profile", "ncuwrap timeline", "ncuwrap bench", "ncuwrap rules check"} <= set(names)
    options = sum(1 for _, c in _commands() for p in c.params if p.param_type_name == "option")
    assert options > 80  # every option of every command is checked below


@pytest.mark.parametrize("path, command", _commands(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_command_and_option_has_help_and_docs(path, command):
    missing = []
    if not (command.help or "").strip():
        missing.append(f"{path}: no help text")
    if path not in DOCS and path.replace("ncuwrap ", "", 1) not in DOCS:
        missing.append(f"{path}: neither README.md nor docs/ mentions it")
    for param in command.params:
        if param.param_type_name == "option":
            longs = [o for o in param.opts if o.startswith("--")] or param.opts
            if not (param.help or "").strip():
                missing.append(f"{path} {longs[0]}: no help text")
            if not any(re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", DOCS) for o in longs):
                missing.append(f"{path} {longs[0]}: neither README.md nor docs/ mentions it")
        elif param.param_type_name == "argument" and not (getattr(param, "help", None) or "").strip():
            missing.append(f"{path} {param.name}: no help text")
    assert not missing, "\n".join(missing)
