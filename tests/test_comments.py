"""Issue 53: a comment in ncuwrap/ says why, and points to the docs page that holds a measured figure; it holds
no date and no figure measured on a given machine, which go stale (docs/scale.md, "Figures behind the code", holds
those the code's choices rest on, each with its commit). Checked on every comment and docstring of the package."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "ncuwrap"
# A day, a time of day, or a machine a figure was measured on.
STALE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b|\b\d\d:\d\d UTC\b|2-core box|H200 host|GPU host|\bthis box\b")


def _texts(source: str):
    """(line, text) of every comment and docstring of ``source``."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                yield node.body[0].lineno, doc


def stale(source: str) -> list[tuple[int, str]]:
    return [(line, match.group(0)) for line, text in _texts(source) for match in STALE.finditer(text)]


def test_no_comment_of_the_package_holds_a_date_or_a_machines_figure():
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if hits := stale(path.read_text(encoding="utf-8")):
            found[name] = hits
    assert found == {}


def test_the_checker_sees_a_date_and_a_machine_in_comments_and_docstrings_only():
    source = ('"""Read fast (0.2 s on the H200 host)."""\n'
              "X = 1  # measured 2026-12-03 at 10:58 UTC on the 2-core box\n"
              'MESSAGE = "a string, not a comment: 2026-12-03"\n'
              "def f():\n    '''CVE-2021-42574 is no date.'''\n")
    assert stale(source) == [(2, "2026-12-03"), (2, "10:58 UTC"), (2, "2-core box"), (1, "H200 host")]
