"""Data flows one way: ingest -> metrics -> rules -> verdict -> render -> api -> cli. No module imports a layer
above its own (at the top of the file or inside a function, by ``import`` or by ``importlib.import_module``),
nothing inside the package imports its root, nothing imports itself in a circle, and the wings (core, the
rules engine, the timeline, the bundled benchmarks, the kernel, profile, render, api, cli) stack in 10
levels or fewer. Beside the package, workloads/ (the programs that made the fixtures), benchmarks/ (the
yardsticks) and scripts/ (the tools) stand above it, in that order: the package imports none of them, none
imports a later one, none calls a private name of the package. The import graph is scripts/import_graph.py's
(it prints the figures)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "ncuwrap"
sys.path.insert(0, str(ROOT.parent / "scripts"))
import import_graph  # noqa: E402

LAYERS = ("base", "ingest", "metrics", "rules", "verdict", "render", "api", "cli")

# Modules by layer; a package listed covers its modules unless one of them is listed itself.
LAYER_OF = {
    # Used everywhere: no knowledge of reports, rules or verdicts; the rules choice and the launch selection
    # as values (core/rules_choice.py, core/launch_selection.py), made before any work.
    "ncuwrap.core": "base",
    # Reading files and running the profilers' exporters.
    "ncuwrap.kernel.reading": "ingest", "ncuwrap.timeline.readers": "ingest", "ncuwrap.timeline.model": "ingest", "ncuwrap.timeline.events": "ingest",
    "ncuwrap.timeline.nsysrep": "ingest", "ncuwrap.timeline.ranks.files": "ingest",
    "ncuwrap.bundled.report": "ingest",
    # What kind of input a file is, above the two wings that read kernel reports and timelines.
    "ncuwrap.inputs": "ingest",
    # Quantities computed from what was read.
    "ncuwrap.kernel.metrics": "metrics", "ncuwrap.kernel.estimate": "metrics", "ncuwrap.kernel.attribution": "metrics",
    "ncuwrap.timeline.metrics": "metrics", "ncuwrap.timeline.analysis": "metrics", "ncuwrap.timeline.measured": "metrics",
    "ncuwrap.timeline.launches": "metrics", "ncuwrap.timeline.steps": "metrics", "ncuwrap.timeline.repetition": "metrics",
    "ncuwrap.timeline.launched_from": "metrics", "ncuwrap.timeline.options": "metrics", "ncuwrap.timeline.tracer": "metrics",
    "ncuwrap.timeline.shape_loops": "metrics", "ncuwrap.timeline.iterations": "metrics", "ncuwrap.timeline.whatif": "metrics",
    "ncuwrap.timeline.oplimits": "metrics", "ncuwrap.timeline.kernel_join": "metrics",
    "ncuwrap.timeline.ranks.metrics": "metrics", "ncuwrap.timeline.ranks.analysis": "metrics", "ncuwrap.timeline.ranks.model": "metrics",
    # The rules: their files and the engine that applies them (it knows no domain).
    "ncuwrap.ruleset": "rules",
    # Verdicts, and the workflows that produce them (profile, bench, capture).
    "ncuwrap.kernel": "verdict", "ncuwrap.timeline": "verdict", "ncuwrap.profile": "verdict", "ncuwrap.bundled": "verdict",
    "ncuwrap.render": "render",
    # The Python API: the commands as functions, over the library and the renderers; the package root exports it.
    "ncuwrap.api": "api", "ncuwrap": "api",
    "ncuwrap.cli": "cli", "ncuwrap.__main__": "cli",
}

# The wings, lowest first: each imports only the wings before it (a module of a wing imports its own
# wing's modules freely; the layers above keep their order).
WINGS = ("ncuwrap.core", "ncuwrap.ruleset", "ncuwrap.timeline", "ncuwrap.bundled", "ncuwrap.kernel", "ncuwrap.inputs", "ncuwrap.profile", "ncuwrap.render",
         "ncuwrap.api", "ncuwrap.cli", "ncuwrap", "ncuwrap.__main__")
# The imports between wings that run back up: none (a new one fails). The two of the move (ruleset.load's
# default kernel catalogue, compare_files' run folders) went with the typed options: each caller names its
# catalogue, and the API hands compare_files the profile wing's reader of run folders.
KNOWN_UP: set = set()
MAX_LEVELS = 10


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    while module not in LAYER_OF:
        module = module.rpartition(".")[0]
        assert module, f"{module!r} has no layer: add it to LAYER_OF"
    return LAYER_OF[module]


MODULES = import_graph.modules(ROOT)


def imports(path: Path, module: str) -> set[str]:
    return import_graph.imports(path, module, MODULES)


GRAPH = {m: imports(p, m) for m, p in MODULES.items()}


def wing(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_every_module_has_a_layer_and_a_wing():
    for module in MODULES:
        assert layer(module) in LAYERS and wing(module) in WINGS, module


def test_no_module_imports_a_layer_above_its_own():
    wrong = []
    for module, targets in sorted(GRAPH.items()):
        for target in sorted(targets):
            if LAYERS.index(layer(target)) > LAYERS.index(layer(module)):
                wrong.append(f"{module} ({layer(module)}) imports {target} ({layer(target)})")
    assert wrong == []


def test_nothing_in_the_package_imports_its_root():
    # The root exports the API (it imports ncuwrap.api on first use): a module importing it for a name
    # (__version__: ncuwrap.core.version) runs back up to the top.
    assert sorted(m for m, targets in GRAPH.items() if "ncuwrap" in targets) == []


def test_no_import_cycle():
    graph = {m: set(targets) for m, targets in GRAPH.items()}
    # A module's package __init__ runs first when it is imported: count that edge too (not the root's:
    # it imports the API on first use of one of its names, not when a module of the package loads).
    for m in MODULES:
        parent = m.rpartition(".")[0]
        if parent in MODULES and parent != "ncuwrap":
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
    # Packages import their own modules to re-export or register them (ncuwrap.kernel.reading,
    # ncuwrap.profile, the cli's commands on its app): not a cycle of layers.
    cycles = [c for c in cycles if not _package_reexport(c)]
    assert cycles == []


def _package_reexport(cycle: str) -> bool:
    nodes = cycle.split(" -> ")
    return any(b.startswith(a + ".") for a, b in zip(nodes, nodes[1:])) and len({wing(n) for n in nodes}) == 1


def _wings_up(graph) -> set[tuple[str, str]]:
    return {(m, t) for m, targets in graph.items() for t in targets if WINGS.index(wing(t)) > WINGS.index(wing(m))}


def test_no_import_runs_back_up_a_wing():
    assert _wings_up(GRAPH) == KNOWN_UP


def test_the_wings_stack_in_ten_levels_or_fewer():
    stacked = {m: {t for t in targets if (m, t) not in KNOWN_UP} for m, targets in GRAPH.items()}
    rooms = import_graph.wings(stacked)
    assert import_graph.back_up(rooms) == []  # no cycle left among the wings
    chain = import_graph.longest_chain(rooms)
    assert 5 <= len(chain) <= MAX_LEVELS, chain


def test_no_module_imports_back_up():
    # Module by module (each module or package a room), not only wing by wing: no import is on a cycle.
    # The cli's commands register on the app of cli/root.py, which the package imports them after.
    assert import_graph.in_cycles({m: set(targets) for m, targets in GRAPH.items()}) == []


def test_the_checker_sees_an_upward_import(tmp_path):
    # The layer test must be able to fail: an engine that imported the renderers is caught.
    fake = tmp_path / "engine.py"
    fake.write_text("def f():\n    from ncuwrap.render import Format\n", encoding="utf-8")
    (target,) = imports(fake, "ncuwrap.kernel.diagnosis")
    assert target == "ncuwrap.render" and LAYERS.index(layer(target)) > LAYERS.index(layer("ncuwrap.kernel.diagnosis"))


def test_the_checker_sees_importlib_and_the_root(tmp_path):
    # importlib.import_module with a literal, with a name built from a prefix, and the package root
    # (import ncuwrap; from ncuwrap import __version__) are imports too.
    fake = tmp_path / "engine.py"
    fake.write_text("import importlib\nimport ncuwrap\nfrom ncuwrap import __version__\n\n\ndef f(kind):\n"
                    "    importlib.import_module('ncuwrap.render.jsonfmt')\n    return importlib.import_module(f'ncuwrap.cli.{kind}')\n",
                    encoding="utf-8")
    found = imports(fake, "ncuwrap.kernel.diagnosis")
    assert {"ncuwrap", "ncuwrap.render.jsonfmt", "ncuwrap.cli.diagnose", "ncuwrap.cli.timeline"} <= found
    assert all(m in ("ncuwrap", "ncuwrap.render.jsonfmt") or m.startswith("ncuwrap.cli.") for m in found)
    up = {t for t in found if LAYERS.index(layer(t)) > LAYERS.index(layer("ncuwrap.kernel.diagnosis"))}
    assert up == found and _wings_up({"ncuwrap.kernel.diagnosis": found}) == {("ncuwrap.kernel.diagnosis", t) for t in found}


def test_the_level_count_sees_a_long_chain():
    chain = {f"ncuwrap.w{i}": {f"ncuwrap.w{i + 1}"} for i in range(MAX_LEVELS)} | {f"ncuwrap.w{MAX_LEVELS}": set()}
    assert len(import_graph.longest_chain(chain)) == MAX_LEVELS + 1
    assert import_graph.back_up({"ncuwrap.a": {"ncuwrap.b"}, "ncuwrap.b": {"ncuwrap.a"}}) == [("ncuwrap.b", "ncuwrap.a")]


def test_the_rules_load_without_the_readers():
    # Issue 21: loading (and checking) a rules file needs neither pandas nor pyarrow, so `ncuwrap rules`
    # and the timeline's worker processes do not pay for the kernel readers.
    code = ("import sys; from ncuwrap import ruleset; from ncuwrap.kernel.metrics import KERNEL; r = ruleset.load(None, KERNEL); "
            "from ncuwrap.timeline.metrics import TIMELINE; t = ruleset.load(None, TIMELINE); "
            "print(sorted({'pandas', 'pyarrow', 'ncuwrap.kernel.reading.ncu_csv'} & set(sys.modules)), len(r.findings) > 0 < len(t.findings))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT.parent)
    assert done.stdout.split() == ["[]", "True"]


# The timeline's stages, in the order a capture goes through them (issue 53): read -> events -> steps -> analysis
# -> measure -> verdict, the model and its vocabulary before all of them. A module imports only its own stage and
# those before it; a later stage takes the readers' result through readers.read (not a reader's own module) and the
# steps' result (Steps, its methods), not their helpers: only the stage that runs the others in order calls
# steps.measure.
TIMELINE_STAGES = (
    ("model", ("model", "events", "options", "metrics", "nsysrep")),
    ("read", ("readers", "ranks.files")),
    ("events", ("launches",)),
    ("steps", ("steps", "iterations", "repetition", "shape_loops")),
    ("analysis", ("analysis", "launched_from", "tracer", "whatif", "kernel_join", "oplimits", "values", "ranks.analysis", "ranks.model", "ranks.metrics")),
    ("measure", ("measured",)),
    ("verdict", ("diagnosis", "verdict", "compare", "capture", "ranks")),
)
_STEPS_RESULT = {"Steps"}  # what a later stage imports of ncuwrap.timeline.steps
_STEPS_RUN = {"measure"}  # what the stage running the others calls of it


def timeline_stage(module: str) -> int:
    """The index in TIMELINE_STAGES of a module of ncuwrap.timeline (its longest listed prefix)."""
    name = module.removeprefix("ncuwrap.timeline.")
    found = [(len(prefix), i) for i, (_, prefixes) in enumerate(TIMELINE_STAGES) for prefix in prefixes
             if name == prefix or name.startswith(prefix + ".")]
    assert found, f"{module} has no stage: add it to TIMELINE_STAGES"
    return max(found)[1]


def _timeline_modules() -> list[str]:
    return [m for m in MODULES if m.startswith("ncuwrap.timeline.")]


def test_the_timeline_runs_one_way():
    back = [f"{m} ({TIMELINE_STAGES[timeline_stage(m)][0]}) imports {t} ({TIMELINE_STAGES[timeline_stage(t)][0]})"
            for m in sorted(_timeline_modules()) for t in sorted(GRAPH[m])
            if t.startswith("ncuwrap.timeline.") and timeline_stage(t) > timeline_stage(m)]
    assert back == []


def _helpers_reached(module: str) -> list[str]:
    """What ``module`` reaches of the steps' and the readers' own modules beyond their results."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found, steps_bound = [], False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "ncuwrap.timeline.steps":
            found += [f"steps.{a.name}" for a in node.names if a.name not in _STEPS_RESULT]
        elif isinstance(node, ast.ImportFrom) and node.module == "ncuwrap.timeline":
            steps_bound |= any(a.name == "steps" and a.asname is None for a in node.names)
            found += [f"readers.{a.name}" for a in node.names if a.name != "readers" and a.name.startswith("readers.")]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ncuwrap.timeline.readers."):
            found.append(node.module.removeprefix("ncuwrap.timeline."))
        elif isinstance(node, ast.ImportFrom) and node.module == "ncuwrap.timeline.readers":
            found += [f"readers.{a.name}" for a in node.names if a.name in ("nsys", "kineto", "nsys_sqlite", "kineto_json", "kineto_stream",
                                                                             "pytorch_nvtx", "interface")]
    if steps_bound:
        found += [f"steps.{n.attr}" for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                  and n.value.id == "steps" and n.attr not in _STEPS_RUN | _STEPS_RESULT]
    return found


def test_no_later_stage_of_the_timeline_calls_an_earlier_ones_helpers():
    read, steps = (next(i for i, (name, _) in enumerate(TIMELINE_STAGES) if name == stage) for stage in ("read", "steps"))
    reached = {m: _helpers_reached(m) for m in _timeline_modules() if timeline_stage(m) > steps
               or (timeline_stage(m) > read and not m.startswith("ncuwrap.timeline.readers"))}
    assert {m: found for m, found in reached.items() if found} == {}


def test_the_stage_checkers_see_a_helper_reached(tmp_path):
    fake = tmp_path / "late.py"
    fake.write_text("from ncuwrap.timeline.steps import Steps, api_starts\nfrom ncuwrap.timeline import steps\n"
                    "from ncuwrap.timeline.readers import nsys_sqlite\n\ndef f(d):\n    return steps.measure(d), steps.ranges(d)\n",
                    encoding="utf-8")
    MODULES["ncuwrap.timeline.late_probe"] = fake
    try:
        assert sorted(_helpers_reached("ncuwrap.timeline.late_probe")) == ["readers.nsys_sqlite", "steps.api_starts", "steps.ranges"]
    finally:
        del MODULES["ncuwrap.timeline.late_probe"]
    assert timeline_stage("ncuwrap.timeline.readers.nsys_sqlite") < timeline_stage("ncuwrap.timeline.steps") < timeline_stage("ncuwrap.timeline.verdict")


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
    # Issue 21: how many kernels get a section, summary rows, unfolded sections, slowest calls: ncuwrap.kernel.shown
    # decides (PAGE, COMMENT), the renderers draw what it gives them.
    assert _renderers_where(_cuts_by_a_number) == {}


def test_the_limit_checker_sees_a_limit():
    assert _cuts_by_a_number(ast.parse("DETAIL = 5\nx = result.pairs[:DETAIL]\ny = t.api[:10]\nz = name[:33]\nw = t.api[:shown.calls]")) == [2, 3]


def test_the_architecture_page_names_only_modules_that_exist():
    # docs/architecture.md is the map of this test's LAYER_OF: every module or folder it names in code
    # spans (`kernel/diagnosis.py`, `ruleset/model.py`, `timeline/ranks/`) is there.
    text = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:[a-z_]+/)*[a-z_]+(?:\.py|/))`", text))
    outside = {"rules/", "templates/", "kernels/", "benchmarks/", "workloads/", "scripts/", "cli/"}  # top-level folders (cli/ is under ncuwrap)
    missing = sorted(n for n in named - outside if not any((base / n).exists() for base in (ROOT, ROOT.parent, ROOT / "timeline", ROOT / "render",
                                                                                                ROOT / "profile", ROOT / "ruleset", ROOT / "kernel",
                                                                                                ROOT / "core")))
    assert len(named) > 30 and missing == []


def _classes_by_name(modules: dict[str, Path]) -> dict[str, list[str]]:
    """Each class name defined in ``modules`` (at any depth of a module), with the modules that define it."""
    found: dict[str, list[str]] = {}
    for name, path in sorted(modules.items()):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, []).append(name)
    return found


def test_no_two_classes_of_the_package_share_a_name():
    # Issue 53: a name says which thing it is (ruleset.model.NextStepRule, the declared step, against
    # ruleset.outcome.NextStep, the decided one; bundled.manifest.TimelineBound against timeline.model.Timeline;
    # launched_from.KernelOrigins, each kernel's op and frame, against repetition.Launches, the launches as tokens).
    shared = {name: where for name, where in _classes_by_name(MODULES).items() if len(where) > 1}
    assert shared == {}


def test_the_class_name_checker_sees_a_second_class(tmp_path):
    for name, text in (("a.py", "class Step:\n    pass\n"), ("b.py", "def f():\n    class Step:\n        pass\n")):
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert _classes_by_name({"a": tmp_path / "a.py", "b": tmp_path / "b.py"}) == {"Step": ["a", "b"]}


# --- beside the package: workloads/, benchmarks/, scripts/ ---------------------------------------------------

CHECKOUT = ROOT.parent
OUTSIDE = import_graph.outside_graph(CHECKOUT)


def test_the_folders_beside_the_package_are_seen():
    folders = {import_graph.folder_of(m) for m in OUTSIDE}
    assert folders == set(import_graph.OUTSIDE)
    # The step programs share their timing and their transformer; the yardsticks their process launcher.
    assert {"workloads.steps.step_clock", "workloads.steps.transformer"} <= OUTSIDE["workloads.steps.gpu_train"]
    assert "benchmarks.process_tree" in OUTSIDE["benchmarks.kineto_scale"]
    assert "ncuwrap.kernel.reading.ncu_rep_format" in OUTSIDE["benchmarks.ncurep_repeat"]


def test_nothing_beside_the_package_imports_back_up():
    # The package imports none of the folders beside it; workloads/ none of benchmarks/ or scripts/; benchmarks/
    # not scripts/. A workload runs without the yardsticks; a yardstick may run a workload.
    assert import_graph.outside_back_up(OUTSIDE, import_graph.package_into_outside(CHECKOUT)) == []
    assert import_graph.outside_cycles(OUTSIDE) == []


def test_nothing_beside_the_package_calls_a_private_name_of_it():
    # Issue 53: what a workload, a yardstick or a tool calls of ncuwrap is public (a yardstick that timed the
    # reader's phases through its private functions measured what no user runs, and broke with each change).
    assert import_graph.outside_private_uses(CHECKOUT) == {}


def test_the_checkers_beside_the_package_see_a_private_name_and_an_import_back_up(tmp_path):
    package = import_graph.modules(ROOT)
    script = tmp_path / "probe.sh"
    script.write_text("python3 - <<'PY'\nfrom ncuwrap.kernel.reading import ncu_rep_reader as r, disassembly\n"
                      "r._parse(1); disassembly.sass(1)\nfrom ncuwrap.core.forked import _answer, Forked\nPY\n"
                      "python3 -c 'import ncuwrap.kernel.reading.ncu_rep_format as f; f.__name__; f._raw(0)'\n", encoding="utf-8")
    assert import_graph.private_uses(script, package) == [
        (3, "r._parse"), (4, "from ncuwrap.core.forked import _answer"), (6, "f._raw")]
    # A workload importing a yardstick runs back up; a yardstick importing a workload does not.
    graph = {"workloads.steps.a": {"benchmarks.process_tree"}, "benchmarks.b": {"workloads.steps.a", "ncuwrap.api"}}
    assert import_graph.outside_back_up(graph, {"ncuwrap.core.x": {"process_tree"}}) == [
        ("ncuwrap.core.x", "process_tree"), ("workloads.steps.a", "benchmarks.process_tree")]
