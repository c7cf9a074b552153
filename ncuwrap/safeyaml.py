"""YAML loading with bounds: ``yaml.safe_load`` (no tags that run code) that also refuses documents
whose aliases expand past a budget, that nest too deeply, or that refer to themselves.

``safe_load`` keeps an alias as a reference to one object, so "billion laughs" (nine aliases of nine
aliases of ...) loads in no time; the cost comes later, when the rules code walks or prints the
value: 9**8 strings for a 500-byte file (a minute and gigabytes). Counting aliases is not enough
(twenty levels of two aliases each expand a million times), so the size of the document *with every
alias expanded* is measured on the node graph before anything is built from it.
"""

from __future__ import annotations

import yaml

# Values (scalars, lists, mappings) of the document with every alias expanded. The bundled rules
# have about 2,000; a rules file that needs more than this is not a rules file.
MAX_NODES = 100_000
# Nesting of lists and mappings (the bundled files nest 6 deep). PyYAML composes recursively and
# runs out of Python stack near 300 levels.
MAX_DEPTH = 64


class TooLarge(yaml.YAMLError):
    """The document is over a bound; the message says which and what to do (without the file name)."""


class _BoundedLoader(yaml.SafeLoader):
    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise TooLarge(f"lists and mappings nest more than {MAX_DEPTH} levels deep at line {mark.line + 1}; flatten them")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def get_single_node(self):
        node = super().get_single_node()
        if node is not None:
            _check_expanded_size(node)
        return node


def load(text: str):
    """Parse one YAML document like ``yaml.safe_load``; raise :class:`TooLarge` past the bounds
    (a yaml.YAMLError, so callers that report YAML errors report these too)."""
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _children(node) -> list:
    if isinstance(node, yaml.SequenceNode):
        return node.value
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    return []


def _check_expanded_size(root) -> None:
    """Count the nodes of ``root`` as if every alias were copied out, without copying: each distinct
    node's expanded size is computed once (post-order, iterative) and reused wherever it is aliased."""
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in _children(node))
            if size[key] > MAX_NODES:
                raise TooLarge(f"its aliases (*name) expand to more than {MAX_NODES:,} values; write it out without aliases of aliases")
            continue
        if key in size:
            continue
        if key in on_path:
            line = node.start_mark.line + 1
            raise TooLarge(f"the value at line {line} contains an alias of itself, which never ends; remove that alias")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in size)
