"""One truth per fact (issue 38): what README.md, docs/ and the commands' --help texts quote exists and
is current. sqlite-utils' tests/test_docs.py is the model; tests/test_lint.py checks the other way (every
command and option has help and is documented).

- Every JSON schema named (``ncuwrap.NAME/vN``) is one ncuwrap writes today; a list of the versions
  'compare' reads (``v2, v3 or v4``) is exactly those it reads.
- Every option quoted (``--name``) is an option of ncuwrap, or of the NVIDIA tool the text speaks of.
- Every transcript (a fenced block starting with ``$ ncuwrap ...`` and stating its width) is today's
  output at that width; a line ``...`` stands for lines left out. The Python sessions of the README and
  docs/api.md give the values they show. A transcript taken on the GPU host names the folder holding
  what it printed then, and quotes only lines of it.
- The README is a landing page (issue 39): 200 lines at most, the two commands, four journeys, the
  notebook, a link to the threat model. Every command has its page in docs/cli/ ending with its ``--help``
  as a transcript (so the reference cannot drift from the command; NCUWRAP_REGEN=1 rewrites them), and
  every relative link of the README and docs/ leads to a file.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex

import pytest
import typer

from tests.conftest import REGEN

from ncuwrap.kernel import document as diagnosis_doc
from ncuwrap.cli import app
from tests.conftest import ROOT, run_cli

README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").rglob("*.md"))]
# The pages that hold what the README held before issue 39 (options and schemas quoted are checked there too).
REFERENCE = [README, *sorted((ROOT / "docs" / "cli").glob("*.md")),
             *(ROOT / "docs" / name for name in ("README.md", "api.md", "verdicts.md", "json.md", "measuring.md", "development.md"))]
SCHEMA = re.compile(r"ncuwrap\.[a-z][a-z-]*/v\d+")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]")
# Options of the tools ncuwrap drives or reads, quoted where the text says how a report was made.
FOREIGN = {
    "--help",  # every command's
    # ncu
    "--import", "--csv", "--page", "--print-units", "--print-kernel-base", "--print-source", "--section", "--set", "--metrics",
    "--kernel-id", "--nvtx", "--import-source", "--export", "--target-processes", "--replay-mode", "--graph-profiling",
    # nsys
    "--trace", "--cuda-graph-trace", "--type",
    # torchrun
    "--no-python",
}


def _commands():
    root = typer.main.get_command(app)
    out = [("ncuwrap", root)]

    def walk(cmd, path):
        for name, sub in getattr(cmd, "commands", {}).items():
            out.append((f"{path} {name}", sub))
            walk(sub, f"{path} {name}")

    walk(root, "ncuwrap")
    return out


def _help_texts() -> list[tuple[str, str]]:
    """(where, text) for every command's and option's own help string (unwrapped, as written)."""
    out = []
    for path, command in _commands():
        out.append((path, command.help or ""))
        out += [(f"{path} {param.opts[0]}", getattr(param, "help", None) or "") for param in command.params]
    return out


def _options() -> set[str]:
    return {o for _, command in _commands() for param in command.params for o in (*param.opts, *getattr(param, "secondary_opts", ()))
            if o.startswith("--")}


def _current_schemas() -> set[str]:
    from ncuwrap.kernel import compare, verdict
    from ncuwrap.bundled import report
    from ncuwrap.profile import rundir
    from ncuwrap.timeline import compare as timeline_compare, verdict as timeline_verdict
    from ncuwrap.timeline.ranks import verdict as ranks

    return {m.SCHEMA for m in (verdict, compare, timeline_compare, timeline_verdict, ranks, report, rundir)}


def _texts():
    # The pages' --help blocks are the commands' own help, wrapped (checked against it below): left out here.
    return [(str(p.relative_to(ROOT)), HELP_BLOCK.sub("", p.read_text(encoding="utf-8"))) for p in REFERENCE] + _help_texts()


# A list of the diagnosis versions 'compare' reads, oldest first ("ncuwrap.diagnosis/v2, v3 or v4").
READ_LIST = re.compile(r"\bv2(?:(?:, |,? or )v\d+)+")


def test_every_schema_quoted_is_one_written_today():
    current = _current_schemas()
    assert "ncuwrap.diagnosis/v4" in current
    stale = [(where, name) for where, text in _texts() for name in SCHEMA.findall(READ_LIST.sub("", text)) if name not in current]
    assert not stale, f"schemas named that ncuwrap no longer writes: {stale}"


def test_lists_of_the_versions_compare_reads_are_the_versions_it_reads():
    reads = [int(s.rsplit("/v", 1)[1]) for s in diagnosis_doc.SCHEMAS]
    found = 0
    for where, text in _texts():
        for listing in READ_LIST.findall(text):
            found += 1
            assert [int(v) for v in re.findall(r"v(\d+)", listing)] == reads, f"{where}: {listing!r}"
    assert found >= 2  # the README and compare's help


def test_every_option_quoted_exists():
    known = _options() | FOREIGN
    unknown = sorted({(where, o) for where, text in _texts() for o in OPTION.findall(text) if o not in known})
    assert not unknown, f"options quoted that no command has: {unknown}"


# --- transcripts ---------------------------------------------------------------------------------------

def _transcripts():
    """(file, command line, width, expected lines) of every fenced block that opens with '$ ... ncuwrap'."""
    out = []
    for path in DOCS:
        for block in re.findall(r"^```\n(\$ .*?)^```", path.read_text(encoding="utf-8"), re.S | re.M):
            first, *lines = block.rstrip("\n").split("\n")
            command, _, comment = first[2:].partition("#")
            if "ncuwrap" not in command or "on the H200" in comment:
                continue  # a capture made on the GPU host
            width = re.search(r"at (\d+) columns", comment)
            out.append(pytest.param(path.name, command.strip(), int(width.group(1)) if width else None, lines,
                                    id=f"{path.name}:{command.strip()[:60]}"))
    return out


def _matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is ``expected`` with each '...' line standing for any lines."""
    parts, part = [], []
    for line in expected:
        if line.strip() == "...":
            parts.append(part)
            part = []
        else:
            part.append(line.rstrip())
    parts.append(part)
    actual = [line.rstrip() for line in actual]
    if len(parts) == 1:
        return actual == parts[0]
    if actual[:len(parts[0])] != parts[0] or (parts[-1] and actual[len(actual) - len(parts[-1]):] != parts[-1]):
        return False
    pos = len(parts[0])
    for middle in parts[1:-1]:
        pos = next((i for i in range(pos, len(actual) - len(middle) + 1) if actual[i:i + len(middle)] == middle), None)
        if pos is None:
            return False
        pos += len(middle)
    return pos <= len(actual) - len(parts[-1])


@pytest.mark.parametrize("doc, command, width, expected", _transcripts())
def test_every_transcript_is_todays_output(capsys, monkeypatch, doc, command, width, expected):
    assert width, f"{doc}: '$ {command}': say the terminal width the transcript was taken at ('# at 100 columns')"
    monkeypatch.setenv("COLUMNS", str(width))
    folder, _, command = command.rpartition("&&")
    if folder.strip():
        monkeypatch.chdir(ROOT / shlex.split(folder)[-1])
    argv = shlex.split(command)
    assert argv[0] == "ncuwrap"
    _, out, _ = run_cli(capsys, *argv[1:])
    assert _matches(expected, out.splitlines()), f"{doc}: '$ {command.strip()}' prints today:\n{out}"


@pytest.mark.parametrize("doc", [README, ROOT / "docs" / "api.md"], ids=lambda p: p.name)
def test_the_python_sessions_give_what_they_show(monkeypatch, doc):
    monkeypatch.chdir(ROOT)
    session = re.search(r"```python\n(>>> import ncuwrap.*?)```", doc.read_text(encoding="utf-8"), re.S).group(1)
    scope: dict = {}
    statement, checked = "", 0
    lines = session.splitlines() + [">>> "]
    for line in lines:
        if line.startswith(">>> ") or line.startswith("... "):
            if line.startswith(">>> ") and statement:
                _run(statement, scope)
                statement = ""
            statement += re.sub(r"\s+#.*$", "", line[4:]) + "\n"
        else:  # the value the statement before shows
            assert repr(_run(statement, scope)) == line, statement
            statement, checked = "", checked + 1
    assert checked >= 2


def _run(statement: str, scope: dict):
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            return eval(compile(statement, "README.md", "eval"), scope)
        except SyntaxError:
            exec(compile(statement, "README.md", "exec"), scope)


# --- the README as a landing page, the reference in docs/cli ------------------------------------------------

def test_the_readme_is_a_landing_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    headings = re.findall(r"^## (.*)$", text, re.M)
    assert headings[:6] == ["The two commands", "Diagnose a report", "Profile my program", "Find where my training loop's time goes",
                            "Compare before and after in CI", "In a notebook"]
    assert "    python3 -m venv .venv && . .venv/bin/activate && pip install . && ncuwrap diagnose\n" in text
    assert "    ./scripts/test\n" in text
    assert "(docs/threat-model.md)" in text
    # Each journey shows real output: a transcript checked against today's output, or one taken on the GPU host.
    sections = re.split(r"^## ", text, flags=re.M)
    for section in sections[2:6]:
        assert re.search(r"^```\n\$ (cd \S+ && )?ncuwrap ", section, re.M), section.splitlines()[0]


def _leaf_commands():
    return [path for path, command in _commands() if not getattr(command, "commands", None)]


def _help(path: str) -> str:
    import os

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        with contextlib.redirect_stdout(io.StringIO()) as out:
            from ncuwrap.cli import main

            assert main([*path.split()[1:], "--help"]) == 0
    finally:
        if old is None:
            os.environ.pop("COLUMNS")
        else:
            os.environ["COLUMNS"] = old
    return out.getvalue()


HELP_BLOCK = re.compile(r"^```\n\$ (ncuwrap [a-z ]+?) --help   # at 100 columns\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("path", _leaf_commands())
def test_every_command_has_its_page_with_its_help(path):
    """The page's --help block is the command's own (the transcript test checks it too, line by line; this one
    also says which page lacks one, and NCUWRAP_REGEN=1 rewrites the block from the command)."""
    pages = {p: p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs" / "cli").glob("*.md"))}
    found = [(p, m) for p, text in pages.items() for m in HELP_BLOCK.finditer(text) if m.group(1) == path]
    assert found, f"no page in docs/cli/ shows '{path} --help' (add it to the command's page)"
    page, match = found[0]
    today = _help(path)
    if REGEN and match.group(2) != today:
        text = pages[page]
        page.write_text(text[:match.start(2)] + today + text[match.end(2):], encoding="utf-8")
        return
    assert match.group(2) == today, f"{page.relative_to(ROOT)}: '{path} --help' differs from the command's; regenerate with NCUWRAP_REGEN=1"


def test_every_relative_link_leads_to_a_file():
    broken = []
    for page in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:|#", target):
                continue
            if not (page.parent / target.partition("#")[0]).exists():
                broken.append((str(page.relative_to(ROOT)), target))
    assert not broken


def test_transcripts_taken_on_the_gpu_host_quote_what_it_printed():
    """A transcript marked 'on the H200 (FOLDER)' quotes lines of FOLDER/stdout.txt and stderr.txt only."""
    checked = 0
    for page in DOCS:
        for block in re.findall(r"^```\n(\$ .*?)^```", page.read_text(encoding="utf-8"), re.S | re.M):
            first, *lines = block.rstrip("\n").split("\n")
            folder = re.search(r"# on the H200 \((tests/data/[^)]+)\)", first)
            if not folder:
                continue
            printed = set()
            for name in ("stdout.txt", "stderr.txt"):
                printed |= {line.rstrip() for line in (ROOT / folder.group(1) / name).read_text(encoding="utf-8").splitlines()}
            assert [line for line in lines if line.strip() != "..." and line.rstrip() not in printed] == [], page.name
            checked += 1
    assert checked >= 1


def test_the_scale_page_leads_with_what_stands_today():
    """docs/scale.md (issue 53): at most 300 lines, led by the table of the figures that stand, each row with the day
    it was taken and a command whose scripts exist (a row another change is filling says so); the journal is
    docs/history/scale.md."""
    text = (ROOT / "docs" / "scale.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    first = re.search(r"^## (.*)$", text, re.M)
    assert first.group(1) == "What stands today"
    section = text[first.end():text.index("\n## ", first.end())]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| what ")]
    assert len(rows) >= 10
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert re.search(r"20\d\d-\d\d-\d\d", cells[-2]) or "to be filled" in row, row
        scripts = re.findall(r"(?:benchmarks|scripts|workloads)/[\w/]+\.(?:py|sh)", cells[-1])
        assert scripts and all((ROOT / s).is_file() for s in scripts), row
    assert (ROOT / "docs" / "history" / "scale.md").is_file()
