"""Data flows one way: ingest -> metrics -> rules -> verdict -> render -> api -> cli. No module imports a layer
above its own (at the top of the file or inside a function), and nothing imports itself in a circle."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "ncuwrap"
LAYERS = ("base", "ingest", "metrics", "rules", "verdict", "render", "api", "cli")

# Modules by layer; a package listed covers its modules unless one of them is listed itself.
LAYER_OF = {
    # Used everywhere: no knowledge of reports, rules or verdicts.
    "ncuwrap": "base", "ncuwrap.errors": "base", "ncuwrap.units": "base", "ncuwrap.resources": "base",
    "ncuwrap.fileio": "base", "ncuwrap.numbers": "base", "ncuwrap.gc_pause": "base", "ncuwrap.expr": "base", "ncuwrap.schema": "base",
    "ncuwrap.safeyaml": "base", "ncuwrap.safejson": "base", "ncuwrap.terminal": "base", "ncuwrap.process": "base",
    "ncuwrap.nvidia_smi": "base", "ncuwrap.kernel_filter": "base", "ncuwrap.display": "base", "ncuwrap.catalogue": "base",
    "ncuwrap.json_delta": "base", "ncuwrap.forked": "base", "ncuwrap.progress": "base", "ncuwrap.launch_selection": "base",
    # Reading files and running the profilers' exporters.
    "ncuwrap.ingest": "ingest", "ncuwrap.timeline.sqlite": "ingest", "ncuwrap.timeline.events": "ingest", "ncuwrap.timeline.nsysrep": "ingest",
    "ncuwrap.timeline.files": "ingest", "ncuwrap.timeline.ranks.files": "ingest", "ncuwrap.timeline.readers": "ingest",
    "ncuwrap.timeline.kineto": "ingest", "ncuwrap.timeline.pytorch_nvtx": "ingest",
    "ncuwrap.bundled.report": "ingest",
    # Quantities computed from what was read.
    "ncuwrap.metrics": "metrics", "ncuwrap.estimate": "metrics", "ncuwrap.attribution": "metrics", "ncuwrap.timeline.metrics": "metrics",
    "ncuwrap.timeline.analysis": "metrics", "ncuwrap.timeline.measured": "metrics", "ncuwrap.timeline.model": "metrics", "ncuwrap.timeline.steps": "metrics",
    "ncuwrap.timeline.repetition": "metrics", "ncuwrap.timeline.options": "metrics",
    "ncuwrap.timeline.launched_from": "metrics",
    "ncuwrap.timeline.ranks.metrics": "metrics", "ncuwrap.timeline.ranks.analysis": "metrics", "ncuwrap.timeline.ranks.model": "metrics",
    "ncuwrap.ruleset": "rules", "ncuwrap.rules_choice": "rules",
    # Verdicts, and the workflows that produce them (profile, bench, capture).
    "ncuwrap.verdict": "verdict", "ncuwrap.evaluate": "verdict", "ncuwrap.kernel_diagnosis": "verdict", "ncuwrap.compare": "verdict",
    "ncuwrap.shown": "verdict", "ncuwrap.diagnosis_doc": "verdict",
    "ncuwrap.timeline": "verdict", "ncuwrap.profile": "verdict", "ncuwrap.bundled": "verdict",
    "ncuwrap.render": "render",
    # The Python API: the commands as functions, over the library and the renderers.
    "ncuwrap.api": "api",
    "ncuwrap.cli": "cli", "ncuwrap.__main__": "cli",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    while module not in LAYER_OF:
        module = module.rpartition(".")[0]
        assert module, f"{module!r} has no layer: add it to LAYER_OF"
    return LAYER_OF[module]


def imports(path: Path, module: str) -> set[str]:
    out = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("ncuwrap")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if base.startswith("ncuwrap"):
                # "from ncuwrap import metrics" imports the module ncuwrap.metrics.
                out |= {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names}
    return out


MODULES = {module_name(p): p for p in ROOT.rglob("*.py")}


def test_every_module_has_a_layer():
    for module in MODULES:
        assert layer(module) in LAYERS


def test_no_module_imports_a_layer_above_its_own():
    wrong = []
    for module, path in sorted(MODULES.items()):
        for target in sorted(imports(path, module)):
            if target in MODULES and LAYERS.index(layer(target)) > LAYERS.index(layer(module)):
                wrong.append(f"{module} ({layer(module)}) imports {target} ({layer(target)})")
    assert wrong == []


def test_no_import_cycle():
    graph = {m: {t for t in imports(p, m) if t in MODULES and t != m} for m, p in MODULES.items()}
    # A module's package __init__ runs first when it is imported: count that edge too.
    for m in MODULES:
        parent = m.rpartition(".")[0]
        if parent in MODULES:
            graph[m].add(parent)
    seen, cycles = {}, []

    def visit(node, stack):
        seen[node] = "open"
        for nxt in sorted(graph[node]):
            if seen.get(nxt) == "open":
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in seen:
                visit(nxt, stack + [nxt])
        seen[node] = "done"

    for m in sorted(graph):
        if m not in seen:
            visit(m, [m])
    # Packages import their own modules to re-export them (ncuwrap.ingest, ncuwrap.profile): not a cycle of layers.
    cycles = [c for c in cycles if not _package_reexport(c)]
    assert cycles == []


def _package_reexport(cycle: str) -> bool:
    nodes = cycle.split(" -> ")
    return any(b.startswith(a + ".") for a, b in zip(nodes, nodes[1:])) and len({n.split(".")[1] if "." in n else n for n in nodes}) == 1


def test_the_checker_sees_an_upward_import(tmp_path):
    # The layer test must be able to fail: an engine that imported the renderers is caught.
    fake = tmp_path / "engine.py"
    fake.write_text("def f():\n    from ncuwrap.render import Format\n", encoding="utf-8")
    (target,) = imports(fake, "ncuwrap.kernel_diagnosis")
    assert target == "ncuwrap.render" and LAYERS.index(layer(target)) > LAYERS.index(layer("ncuwrap.kernel_diagnosis"))


def test_the_rules_load_without_the_readers():
    # Issue 21: loading (and checking) a rules file needs neither pandas nor pyarrow, so `ncuwrap rules`
    # and the timeline's worker processes do not pay for the kernel readers.
    code = ("import sys; from ncuwrap import ruleset; r = ruleset.load(None); from ncuwrap.timeline.metrics import TIMELINE; t = ruleset.load(None, TIMELINE); "
            "print(sorted({'pandas', 'pyarrow', 'ncuwrap.ingest.ncu_csv'} & set(sys.modules)), len(r.findings) > 0 < len(t.findings))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT.parent)
    assert done.stdout.split() == ["[]", "True"]


def _renderers_where(check) -> dict[str, list[int]]:
    """The render-layer modules in which ``check`` (a tree -> lines function) finds lines, with them."""
    found = {name: check(ast.parse(path.read_text(encoding="utf-8"))) for name, path in MODULES.items() if layer(name) == "render"}
    return {name: lines for name, lines in found.items() if lines}


def _computes_a_share(tree: ast.AST) -> list[int]:
    """Lines holding ``100 * a / b`` (or ``a * 100 / b``, ``100.0 * ...``): a share computed from raw numbers."""

    def hundred(node) -> bool:
        return isinstance(node, ast.Constant) and node.value in (100, 100.0)

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left = node.left
            if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mult) and (hundred(left.left) or hundred(left.right)):
                lines.append(node.lineno)
    return lines


def test_renderers_compute_no_share():
    # Issue 21: shares are computed once, in the model (Diagnosis.share_pct, the groups' and the ranking's
    # share_pct, timeline.model.pct); a renderer only formats them.
    assert _renderers_where(_computes_a_share) == {}


def test_the_share_checker_sees_a_share():
    assert _computes_a_share(ast.parse("x = 100.0 * part / whole\ny = f'{part * 100 / whole:.1f}'")) == [1, 2]
    assert _computes_a_share(ast.parse("x = 100 * share\ny = width * part / whole")) == []


# Sequences of results a renderer could cut to a length of its own choosing.
_RESULT_SEQUENCES = {"api", "pairs", "kernels", "launches", "groups", "findings", "ranks", "steps", "gaps", "copies", "rules", "fix_first"}


def _cuts_by_a_number(tree: ast.AST) -> list[int]:
    """Lines slicing a result's sequence by a number written in the renderer (``t.api[:5]``,
    ``result.pairs[:DETAIL]`` with DETAIL a module constant): what to show decided outside the model."""
    constants = {t.id for node in tree.body if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                 and isinstance(node.value.value, int) for t in node.targets if isinstance(t, ast.Name)}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and isinstance(node.value, ast.Attribute) \
                and node.value.attr in _RESULT_SEQUENCES:
            for bound in (node.slice.lower, node.slice.upper):
                if isinstance(bound, ast.Constant) or (isinstance(bound, ast.Name) and bound.id in constants):
                    lines.append(node.lineno)
    return lines


def test_renderers_hold_no_limits_of_what_they_show():
    # Issue 21: how many kernels get a section, summary rows, unfolded sections, slowest calls: ncuwrap.shown
    # decides (PAGE, COMMENT), the renderers draw what it gives them.
    assert _renderers_where(_cuts_by_a_number) == {}


def test_the_limit_checker_sees_a_limit():
    assert _cuts_by_a_number(ast.parse("DETAIL = 5\nx = result.pairs[:DETAIL]\ny = t.api[:10]\nz = name[:33]\nw = t.api[:shown.calls]")) == [2, 3]


def test_the_architecture_page_names_only_modules_that_exist():
    # docs/architecture.md is the map of this test's LAYER_OF: every module or folder it names in code
    # spans (`kernel_diagnosis.py`, `ruleset/model.py`, `timeline/ranks/`) is there.
    text = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:[a-z_]+/)*[a-z_]+(?:\.py|/))`", text))
    outside = {"rules/", "templates/", "kernels/", "benchmarks/", "cli/"}  # top-level folders (cli/ is under ncuwrap)
    missing = sorted(n for n in named - outside if not any((base / n).exists() for base in (ROOT, ROOT.parent, ROOT / "timeline", ROOT / "render",
                                                                                                ROOT / "profile", ROOT / "ruleset")))
    assert len(named) > 30 and missing == []
