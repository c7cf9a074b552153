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
"""

from __future__ import annotations

import ast
import random
import sys
from pathlib import Path

ROOT_PACKAGE = "ncuwrap"


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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
