"""The import graph of a checkout's ncuwrap/: each module or package a room, each import an arrow.

    python scripts/import_graph.py [CHECKOUT]     # default: this checkout

prints the rooms, the imports between them, the imports that run back up (the fewest found whose cutting
leaves no cycle: see :func:`back_up`), the imports that lie on a cycle at all, and the
levels (the longest chain of imports, in rooms, once those running back up are left out), for every
module and package and for the top-level wings (``ncuwrap.kernel`` holding all its modules). tests/test_layers.py reads the
same graph (:func:`graph`) and holds it to its limits.

An arrow is any ``import`` of an ncuwrap module (at the top of a file or inside a function, under
TYPE_CHECKING too) and any ``importlib.import_module``: a literal names its module; a name built at run
time (an f-string, a variable) may load any module under its constant prefix, or else under the
calling package. ``import ncuwrap`` and ``from ncuwrap import x`` (x not a module) are arrows to the
package root. That importing ``a.b`` runs ``a/__init__.py`` first is not an arrow here (test_layers
counts it for cycles).

Beside the package (:func:`outside_graph`): the folders of :data:`OUTSIDE`, each of their Python files a room,
each above the package and above the folders before it: ``workloads/`` (the programs that made the fixtures),
``benchmarks/`` (the yardsticks, which may run a workload) and ``scripts/`` (the developer's tools). Their
arrows are their imports of the package and of each other (a plain ``import name`` of a file beside the
importer, or of the one file of that name in another of these folders, which it puts on ``sys.path``),
including the imports of the code they run in fresh processes (a string constant that parses as Python).
An import from the package into one of them, or from a folder into a later one, runs back up. What they
call of the package must be public: :func:`private_uses` lists every underscored name of the package they
reach (``ncu_rep_reader._parse``, ``from ncuwrap.x import _y``), in their Python and in their shell scripts.
"""

from __future__ import annotations

import ast
import random
import re
import sys
from pathlib import Path

ROOT_PACKAGE = "ncuwrap"
# The folders beside the package, lowest first: each may import the package and the folders before it.
OUTSIDE = ("workloads", "benchmarks", "scripts")


def modules(package_dir: Path) -> dict[str, Path]:
    """Every module and package under ``package_dir`` (a package by its ``__init__.py``), by dotted name."""
    out = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _resolve(name: str, known) -> str | None:
    """The deepest module of ``known`` that ``name`` is or is inside (``ncuwrap.x.Y`` -> ``ncuwrap.x``)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _dynamic(node: ast.Call, module: str, package: str, known) -> set[str]:
    """The modules an ``importlib.import_module(...)`` call may load."""
    if not node.args:
        return set()
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        target = _resolve(arg.value, known) if arg.value.startswith(ROOT_PACKAGE) else None
        return {target} if target else set()
    prefix = ""
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        prefix = arg.values[0].value
    if not prefix.startswith(ROOT_PACKAGE):
        prefix = package + "."
    return {m for m in known if m.startswith(prefix) and m != module}


def imports(path: Path, module: str, known) -> set[str]:
    """The rooms ``module`` (at ``path``) imports: each an ncuwrap module or package of ``known``."""
    out = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {_resolve(a.name, known) for a in node.names if a.name.split(".")[0] == ROOT_PACKAGE}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] == ROOT_PACKAGE:
                # "from ncuwrap.kernel import metrics" imports the module ncuwrap.kernel.metrics.
                out |= {f"{base}.{a.name}" if f"{base}.{a.name}" in known else _resolve(base, known) for a in node.names}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "importlib":
            out |= _dynamic(node, module, package, known)
    out.discard(None)
    out.discard(module)
    return out


def graph(package_dir: Path) -> dict[str, set[str]]:
    """Each room of ``package_dir`` and the rooms it imports."""
    known = modules(package_dir)
    return {m: imports(p, m, known) for m, p in known.items()}


def wings(rooms: dict[str, set[str]]) -> dict[str, set[str]]:
    """The same graph with each top-level package one room (``ncuwrap.kernel.metrics`` -> ``ncuwrap.kernel``)."""

    def wing(m: str) -> str:
        return ".".join(m.split(".")[:2])

    out: dict[str, set[str]] = {}
    for m, targets in rooms.items():
        out.setdefault(wing(m), set()).update(wing(t) for t in targets)
    for m, targets in out.items():
        targets.discard(m)
    return out


def _walk(rooms: dict[str, set[str]], order: list[str], key) -> list[tuple[str, str]]:
    """The back edges of a depth-first walk starting from the rooms in ``order``, successors by ``key``."""
    state, found = {}, []

    def visit(start):
        state[start] = "open"
        stack = [(start, iter(sorted(rooms[start], key=key)))]
        while stack:
            node, nexts = stack[-1]
            for nxt in nexts:
                if state.get(nxt) == "open":
                    found.append((node, nxt))
                elif nxt not in state:
                    state[nxt] = "open"
                    stack.append((nxt, iter(sorted(rooms[nxt], key=key))))
                    break
            else:
                state[node] = "done"
                stack.pop()

    for m in order:
        if m not in state:
            visit(m)
    return found


def back_up(rooms: dict[str, set[str]], tries: int = 300) -> list[tuple[str, str]]:
    """The imports that run back up: the fewest found whose cutting leaves no cycle (each closes one),
    the back edges of the depth-first walk, among ``tries`` walks in shuffled orders (seeded: the same
    answer every run) and the one from the package root in name order, that has the fewest."""
    names = sorted(rooms)
    best = _walk(rooms, sorted(names, key=lambda m: (m != ROOT_PACKAGE, m)), key=str)
    shuffle = random.Random(40)
    for _ in range(tries if best else 0):
        rank = {m: shuffle.random() for m in names}
        found = _walk(rooms, sorted(names, key=rank.get), key=rank.get)
        if len(found) < len(best):
            best = found
    return sorted(best)


def in_cycles(rooms: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The imports that lie on a cycle (both ends in one strongly connected part of the graph): unlike
    :func:`back_up`, which of a cycle's imports is counted does not depend on an order of walking."""
    index, low, on, stack, part, counter = {}, {}, set(), [], {}, [0]

    def connect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(rooms[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            while True:
                w = stack.pop()
                on.discard(w)
                part[w] = v
                if w == v:
                    break

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(rooms)))
    for v in sorted(rooms):
        if v not in index:
            connect(v)
    return sorted((a, b) for a, targets in rooms.items() for b in targets if part[a] == part[b])


def longest_chain(rooms: dict[str, set[str]]) -> list[str]:
    """The longest chain of imports (its rooms, importer first), the imports that run back up left out:
    its length is the number of levels."""
    cut = set(back_up(rooms))
    below: dict[str, list[str]] = {}

    def chain(m: str) -> list[str]:
        if m not in below:
            below[m] = [m]  # (a cycle is cut above: this is never read before it is set)
            longest = max((chain(t) for t in rooms[m] if (m, t) not in cut), key=len, default=[])
            below[m] = [m, *longest]
        return below[m]

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(rooms)))
    return max((chain(m) for m in sorted(rooms)), key=len, default=[])


def figures(rooms: dict[str, set[str]]) -> dict:
    return {"rooms": len(rooms), "imports": sum(len(t) for t in rooms.values()), "back up": back_up(rooms),
            "in cycles": in_cycles(rooms), "levels": len(longest_chain(rooms)), "chain": longest_chain(rooms)}


# ------------------------------------------------------------------------------------- beside the package

def outside_modules(checkout: Path) -> dict[str, Path]:
    """Every Python file of the folders of :data:`OUTSIDE`, by dotted name (``benchmarks.process_tree``)."""
    return {".".join(path.relative_to(checkout).with_suffix("").parts): path
            for folder in OUTSIDE if (checkout / folder).is_dir() for path in sorted((checkout / folder).rglob("*.py"))}


def _trees(text: str):
    """The syntax tree of ``text`` and of each string constant in it that parses as Python holding an import (the code
    a script runs in a fresh process: ``python -c``, a heredoc)."""
    tree = ast.parse(text)
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "import " in node.value and "\n" in node.value:
            try:
                yield from _trees(node.value)
            except SyntaxError:
                pass


def outside_imports(path: Path, name: str, outside: dict[str, Path], package: dict[str, Path]) -> set[str]:
    """The rooms a file beside the package (``name`` at ``path``) imports: modules of the package, and files of
    :data:`OUTSIDE` (see the module's docstring)."""
    folder = name.rpartition(".")[0]
    by_stem: dict[str, list[str]] = {}
    for other in outside:
        by_stem.setdefault(other.rpartition(".")[2], []).append(other)
    out: set[str | None] = set()
    for tree in _trees(path.read_text(encoding="utf-8")):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in package else node.module for a in node.names]
            else:
                continue
            for imported in names:
                if imported.split(".")[0] == ROOT_PACKAGE:
                    out.add(_resolve(imported, package))
                    continue
                stem = imported.split(".")[0]
                if f"{folder}.{stem}" in outside:
                    out.add(f"{folder}.{stem}")
                elif len(by_stem.get(stem, [])) == 1:
                    out.add(by_stem[stem][0])
    out.discard(None)
    out.discard(name)
    return out


def outside_graph(checkout: Path) -> dict[str, set[str]]:
    """Each file of the folders beside the package and the rooms it imports (the package's modules among them)."""
    outside, package = outside_modules(checkout), modules(checkout / ROOT_PACKAGE)
    return {name: outside_imports(path, name, outside, package) for name, path in outside.items()}


def folder_of(room: str) -> str:
    """``workloads`` for ``workloads.steps.gpu_train``; the package's rooms are all ``ncuwrap``."""
    return room.split(".")[0]


def package_into_outside(checkout: Path) -> dict[str, set[str]]:
    """Each module of the package with what it imports of the folders beside it (a folder's name, or the name of
    one of their files, as a top-level import: what a path put on ``sys.path`` would let it import)."""
    outside = outside_modules(checkout)
    names = set(OUTSIDE) | {name.rpartition(".")[2] for name in outside}
    found: dict[str, set[str]] = {}
    for module, path in modules(checkout / ROOT_PACKAGE).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            imported = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else []
            found.setdefault(module, set()).update(i for i in imported if i.split(".")[0] in names)
    return {module: targets for module, targets in found.items() if targets}


def outside_back_up(outside: dict[str, set[str]], into_outside: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The imports that run back up: from the package into the folders beside it (``into_outside``:
    :func:`package_into_outside`), and from a folder of :data:`OUTSIDE` into a later one."""
    level = {ROOT_PACKAGE: -1, **{folder: i for i, folder in enumerate(OUTSIDE)}}
    up = [(a, b) for a, targets in outside.items() for b in targets if level[folder_of(b)] > level[folder_of(a)]]
    return sorted(up + [(a, b) for a, targets in into_outside.items() for b in targets])


def outside_cycles(outside: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The imports between files beside the package that lie on a cycle."""
    return in_cycles({m: {t for t in targets if t in outside} for m, targets in outside.items()})


# ``from ncuwrap.x import _y``, a dotted path through the package that ends in an underscored name, and ``NAME._y``
# where NAME is bound to a module of the package.
_FROM_PRIVATE = re.compile(r"from\s+(ncuwrap(?:\.\w+)*)\s+import\s+\(?([^)\n]*)")
_DOTTED_PRIVATE = re.compile(r"\bncuwrap(?:\.\w+)*\._[a-z]\w*")


def private_uses(path: Path, package: dict[str, Path]) -> list[tuple[int, str]]:
    """(line, what) of every underscored name of the package the file at ``path`` reaches (dunders are not private)."""
    text = path.read_text(encoding="utf-8")
    found = []
    line = lambda at: text.count("\n", 0, at) + 1  # noqa: E731
    bound = set()
    for match in _FROM_PRIVATE.finditer(text):
        for part in match.group(2).split(","):
            imported, _, alias = part.strip().partition(" as ")
            if re.fullmatch(r"_[a-z]\w*", imported.strip()):
                found.append((line(match.start()), f"from {match.group(1)} import {imported.strip()}"))
            elif f"{match.group(1)}.{imported.strip()}" in package:
                bound.add((alias or imported).strip())
    for match in re.finditer(r"import\s+(ncuwrap(?:\.\w+)*)(?:\s+as\s+(\w+))?", text):
        bound.add(match.group(2) or "ncuwrap")
    found += [(line(m.start()), m.group(0)) for m in _DOTTED_PRIVATE.finditer(text)]
    if bound:
        names = "|".join(sorted(re.escape(b) for b in bound if b != "ncuwrap"))
        if names:
            found += [(line(m.start()), m.group(0)) for m in re.finditer(rf"(?<![\w.])(?:{names})\._[a-z]\w*", text)]
    return sorted(set(found))


def outside_private_uses(checkout: Path) -> dict[str, list[tuple[int, str]]]:
    """Each file beside the package (Python and shell) that reaches an underscored name of it, with where and what."""
    package = modules(checkout / ROOT_PACKAGE)
    files = [path for folder in OUTSIDE if (checkout / folder).is_dir() for path in sorted((checkout / folder).rglob("*"))
             if path.suffix in (".py", ".sh")]
    found = {str(path.relative_to(checkout)): private_uses(path, package) for path in files}
    return {name: uses for name, uses in found.items() if uses}


def main(argv: list[str]) -> int:
    checkout = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parent.parent)
    rooms = graph(checkout / ROOT_PACKAGE)
    for title, g in (("modules and packages", rooms), ("top-level wings", wings(rooms))):
        f = figures(g)
        print(f"{title}: {f['rooms']} rooms, {f['levels']} levels, {f['imports']} imports, {len(f['back up'])} back up "
              f"({len(f['in cycles'])} imports on a cycle)")
        print(f"  longest chain: {' -> '.join(f['chain'])}")
        for a, b in f["back up"]:
            print(f"  back up: {a} -> {b}")
    outside = outside_graph(checkout)
    counts = {folder: sum(folder_of(m) == folder for m in outside) for folder in OUTSIDE}
    into = sum(folder_of(t) == ROOT_PACKAGE for targets in outside.values() for t in targets)
    between = sum(folder_of(t) != ROOT_PACKAGE for targets in outside.values() for t in targets)
    up, cycles = outside_back_up(outside, package_into_outside(checkout)), outside_cycles(outside)
    private = outside_private_uses(checkout)
    print(f"beside the package: {', '.join(f'{folder}/ {n} files' for folder, n in counts.items())}; {into} imports of the package, "
          f"{between} between them, {len(up)} back up, {len(cycles)} on a cycle, {sum(map(len, private.values()))} private names used")
    for a, b in up:
        print(f"  back up: {a} -> {b}")
    for name, uses in private.items():
        print(f"  private: {name}: {', '.join(f'{what} (line {line})' for line, what in uses)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
