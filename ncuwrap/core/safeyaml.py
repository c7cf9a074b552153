"""YAML loading with bounds: ``yaml.safe_load`` (no tags that run code) that also refuses documents
whose aliases expand past a budget, that nest too deeply, or that refer to themselves.

``safe_load`` keeps an alias as a reference to one object, so "billion laughs" (nine aliases of nine
aliases of ...) loads in no time; the cost comes later, when the rules code walks or prints the
value: 9**8 strings for a 500-byte file (a minute and gigabytes). Counting aliases is not enough
(twenty levels of two aliases each expand a million times), so the size of the document *with every
alias expanded* is measured on the node graph before anything is built from it.

Scanning and parsing are libyaml's (PyYAML's C extension: the bundled rules' YAML loads several times faster,
docs/scale.md, figures behind the code) where
PyYAML has it; the nodes are still composed by PyYAML's Python Composer, which checks the depth, and
built by its SafeConstructor. Where libyaml reads text otherwise than PyYAML's own parser (tabs,
'[a?b]', a few more: _UNLIKE_PYYAML and _LibyamlLoader.compose_scalar_node), and wherever libyaml or a
bound refuses a document, the pure-Python parser loads it again: the objects and the error messages
are PyYAML's, as before libyaml.
"""

from __future__ import annotations

import re

import yaml
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.resolver import Resolver

try:
    from yaml._yaml import CParser
except ImportError:  # PyYAML built without libyaml: the pure-Python parser alone
    CParser = None

# Values (scalars, lists, mappings) of the document with every alias expanded. The bundled rules
# have about 2,000; a rules file that needs more than this is not a rules file.
MAX_NODES = 100_000
# Nesting of lists and mappings (the bundled files nest 6 deep). PyYAML composes recursively and
# runs out of Python stack near 300 levels.
MAX_DEPTH = 64
# Whether load() tries libyaml first; False forces the pure-Python parser (tests, benchmarks).
USE_LIBYAML = CParser is not None

# YAML's line breaks (PyYAML's reader and libyaml alike), to give a bad character's line.
_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")
# Text that libyaml reads where PyYAML's own parser refuses it or reads it otherwise (found by comparing
# the two on mutated rules files and on the YAML test suite), which therefore goes to PyYAML's parser.
# Each search starts with a character, so it skips from one to the next fast (a small share of a load: benchmarks/yaml_load_speed.py).
_UNLIKE_PYYAML = tuple(re.compile(pattern, re.DOTALL) for pattern in [
    "\t",  # PyYAML refuses tabs in many places
    "\ufeff(?<=.\ufeff)",  # a byte-order mark past the start: libyaml skips one at any line's start
    "#(?:(?<=[|>]#)|(?<=[|>][-+0-9]#)|(?<=[|>][-+0-9][-+0-9]#))",  # '|-#': PyYAML wants a space before the comment
    "%(?<![^\n\r\x85\u2028\u2029]%)",  # a directive ('%YAML 1.1#' is another comment without a space)
    "![^\\s!]*,",  # a tag then ',': libyaml ends the tag there, PyYAML reads on ('!!str,' is another tag)
])


class TooLarge(yaml.YAMLError):
    """The document is over a bound; the message says which and what to do (without the file name)."""


class BadCharacter(yaml.MarkedYAMLError):
    """A character YAML does not allow (a control character, say), with its line: PyYAML's
    ReaderError gives only an offset."""


class _UnlikePyYAML(Exception):
    """libyaml read a scalar that PyYAML's parser refuses or reads otherwise; the pure-Python parser
    takes over."""


class _Bounds:
    """The bounds, over PyYAML's Composer, whichever parser gives it the events."""

    _depth = 0

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

    def construct_object(self, node, deep=False):
        try:
            return super().construct_object(node, deep)
        except (ValueError, LookupError, AttributeError, TypeError) as exc:
            # A scalar its tag does not fit (a 30th of February, !!int x, !!bool x): PyYAML's constructors fail
            # with int()'s, date()'s or their own errors; a YAML error names the value and the line.
            if not isinstance(node, yaml.ScalarNode):
                raise
            value = node.value if len(node.value) <= 40 else node.value[:40] + "..."
            why = f" ({exc})" if isinstance(exc, ValueError) else ""
            raise ConstructorError(None, None, f"{value!r} is not a valid {node.tag.rsplit(':', 1)[-1]}{why}", node.start_mark) from None


class _PythonLoader(_Bounds, yaml.SafeLoader):
    pass


if CParser is not None:
    class _LibyamlLoader(_Bounds, Composer, CParser, SafeConstructor, Resolver):
        """libyaml's events into PyYAML's Python Composer, which comes before CParser's own: that one
        composes recursively in C, with no depth bound."""

        _flow = 0  # how many [...] or {...} the next node is inside

        def __init__(self, stream):
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

        def compose_sequence_node(self, anchor):
            return self._collection(super().compose_sequence_node, anchor)

        def compose_mapping_node(self, anchor):
            return self._collection(super().compose_mapping_node, anchor)

        def _collection(self, compose, anchor):
            flow = bool(self.peek_event().flow_style)
            self._flow += flow
            try:
                return compose(anchor)
            finally:
                self._flow -= flow

        def compose_scalar_node(self, anchor):
            event = self.peek_event()
            # PyYAML's scanner ends a plain scalar at '?' inside [...] or {...} and then refuses the '?';
            # a bare '!' with no value is '' to libyaml and None to PyYAML.
            if (self._flow and not event.style and "?" in event.value) or (event.tag == "!" and not event.value):
                raise _UnlikePyYAML
            return super().compose_scalar_node(anchor)


def load(text: str):
    """Parse one YAML document like ``yaml.safe_load``; raise :class:`TooLarge` past the bounds
    (a yaml.YAMLError, so callers that report YAML errors report these too)."""
    if USE_LIBYAML and not any(unlike.search(text) for unlike in _UNLIKE_PYYAML):
        try:
            return _load(_LibyamlLoader, text)
        except (yaml.YAMLError, _UnlikePyYAML):
            pass  # refused: PyYAML's parser decides, and its message is the one users saw before libyaml
    try:
        return _load(_PythonLoader, text)
    except yaml.reader.ReaderError as exc:
        # Of a str, PyYAML checks every character before parsing; its position counts characters.
        at = exc.position
        column = at - 1 - max(text.rfind(c, 0, at) for c in "\n\r\x85\u2028\u2029")
        mark = yaml.Mark("<unicode string>", at, len(_BREAK.findall(text, 0, at)), column, None, None)
        raise BadCharacter(problem=f"unacceptable character #x{exc.character:04x}: {exc.reason}", problem_mark=mark) from None


def _load(loader_class, text: str):
    loader = loader_class(text)
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
