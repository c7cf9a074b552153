"""A PyTorch profiler trace's events read from its file a piece at a time, whatever the file's size.

torch.profiler writes one JSON document: a few keys, the ``traceEvents`` array, a few keys. The file (plain,
or gzip unpacked as it is read) is read in blocks of READ_BYTES; the array is cut between two events
(``}``, a comma, ``{``: :data:`_BETWEEN`) into pieces of about CHUNK_BYTES, and each piece is handed to the
caller (:mod:`ncuwrap.timeline.readers.kineto_json`), who parses it and keeps what it needs as columns. At any time the
memory holds a block, one piece's objects and the caller's columns, never the file (docs/kineto.md).

Why a cut can be trusted: a piece is parsed as ``[[`` + piece + ``]]``, which is valid JSON only where the
piece is a run of whole events. A cut inside a string leaves the piece's last string open; a cut inside an
event (a list of objects in its args) leaves a bracket open; either way the piece fails to parse, and its end
is found again by a scan that reads strings and brackets (:meth:`_Stream.exact_cut`; slower, but only where
a name holds "}, {"). Two brackets around a piece, so that it nests as deep as the document does (an object
and the array): orjson's 1,024 levels are the same limit in both. No event may run past MAX_PIECE_BYTES.

The document around the events is checked too: its opening (up to the array) must parse as an object whose
``traceEvents`` is that array, before any event is read, and the opening with the array's end and what
follows it must parse, at the end. A file of another layout raises :class:`Unstreamed`; a damaged one,
:class:`Fault`, in words that name the first thing wrong and where (the caller adds the file's name). A gzip
that inflates past :data:`ncuwrap.core.packed.MAX_RATIO` times, or that is not readable, is refused as
:mod:`ncuwrap.core.packed` refuses a gzipped export.
"""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path
from typing import Callable

import orjson

from ncuwrap.core import packed
from ncuwrap.core.errors import InputError

# Pieces of about 1 MiB: small enough to stay in the CPU's caches, large enough that a piece's fixed costs
# (a slice, a parse call, a check of its times) are a small part of it. Measured on a 100 MB trace (docs/kineto.md).
CHUNK_BYTES = 1 << 20
READ_BYTES = 8 << 20  # read from the file (or the gzip) at a time
MAX_HEAD_BYTES = 64 << 20  # what may come before the events (torch.profiler writes a few KiB)
MAX_PIECE_BYTES = 64 << 20  # one event, or what follows the events (a real event is a few KiB at most)

_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
_BETWEEN = re.compile(rb"\}\s*,\s*\{")  # one event's end and the next one's start
_SOMETHING = re.compile(rb"\S")
# What exact_cut reads: a string (to its closing quote, or to the end of the bytes held), or a bracket.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[{}\[\]]', re.DOTALL)
_SPACES = re.compile(rb"\s*")
_QUOTE, _COMMA, _OPEN_OBJECT, _CLOSE_ARRAY = b'"'[0], b","[0], b"{"[0], b"]"[0]
_OPENERS = (b"{"[0], b"["[0])
_CLOSED = (-1, -1)

# Takes a piece's text (``[[`` + events + ``]]``) and the index in traceEvents of its first event; gives how many
# events it held, or raises orjson.JSONDecodeError where the text is not JSON (then the cut is looked for again).
Add = Callable[[bytes, int], int]
FIX = "record it again with torch.profiler (export_chrome_trace or tensorboard_trace_handler)"


class Unstreamed(Exception):
    """The file is not laid out as a trace is (no ``traceEvents`` array where an object's key opens it): the
    caller may read it whole. Its text says what was found."""


class Fault(Exception):
    """The trace is damaged: its text says what is wrong and what to do, all but the file's name."""


def json_fault(exc: orjson.JSONDecodeError, where: str = "") -> str:
    """What orjson's error says, in words (``where``: a place to add, as " near byte N")."""
    what = str(exc) if not where else exc.msg + where
    if "unexpected end of data" in what:
        return "truncated JSON (the trace ends early: it was cut while written or copied)"
    if "depth limit" in what:
        return "JSON nested deeper than 1,024 levels (a Kineto trace nests 5)"
    if "infinity" in what:
        return f"a number past a double's range ({what})"
    return f"invalid JSON ({what})"


class _Source:
    """The file's bytes, unpacked where it is gzipped, READ_BYTES at a time; ``read()`` is b"" at the end."""

    def __init__(self, path: Path):
        self.path = path
        self.raw = path.open("rb")
        self.gzip = gzip.GzipFile(fileobj=self.raw, mode="rb") if self.raw.read(2) == b"\x1f\x8b" else None
        self.raw.seek(0)
        self.out = 0

    def read(self) -> bytes:
        if self.gzip is None:
            return self.raw.read(READ_BYTES)
        try:
            block = self.gzip.read(READ_BYTES)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{self.path}: not a readable gzip file ({exc}); give the trace again, gzipped whole, or unpacked") from None
        self.out += len(block)
        if packed.inflates_too_much(self.out, self.raw.tell()):
            raise InputError(f"{self.path}: inflates more than {packed.MAX_RATIO} times its size (a real trace inflates 5-20 times), "
                             f"so it is damaged or made to exhaust memory; {FIX}")
        return block

    def close(self) -> None:
        if self.gzip is not None:
            self.gzip.close()
        self.raw.close()


def read(path: Path, add: Add) -> dict:
    """Hand each piece of ``path``'s ``traceEvents`` to ``add`` (in order) and give the document without its
    events (``traceEvents`` empty). Raises Unstreamed, Fault (and whatever ``add`` raises), or InputError
    naming the file for a gzip that cannot be read or inflates too much."""
    source = _Source(path)
    try:
        return _Stream(source, add).run()
    finally:
        source.close()


class _Stream:
    """The reading under way: ``buf`` holds the bytes not yet handed on, from file offset ``base``."""

    def __init__(self, source: _Source, add: Add):
        self.source, self.add = source, add
        self.buf, self.base, self.eof = b"", 0, False
        self.count = 0  # events handed on

    def more(self, keep: int) -> bool:
        """Drop the bytes before ``keep`` and read the next block; False at the end of the file."""
        block = self.source.read() if not self.eof else b""
        if not block:
            self.eof = True
            return False
        self.buf = self.buf[keep:] + block
        self.base += keep
        return True

    def run(self) -> dict:
        head = self.head()
        at, exact = len(head), False
        while True:
            found = self.exact_cut(at) if exact else self.quick_cut(at)
            if found is None or found == _CLOSED:  # no cut in the bytes held; or (_CLOSED) the events are over
                if len(self.buf) - at > MAX_PIECE_BYTES + CHUNK_BYTES:
                    raise self.too_long(at)
                if self.more(at):
                    at = 0
                    continue
                return self.end(head, at)
            end, after = found
            try:
                self.count += self.add(b"[[" + self.buf[at:end] + b"]]", self.count)
            except orjson.JSONDecodeError as exc:
                if not exact:  # cut in a string, or inside an event: the cut found again by a scan that knows strings
                    exact = True
                    continue
                raise Fault(f"{json_fault(exc, f' near byte {self.base + at + exc.pos - 2:,}')}; {FIX}") from None
            if after is None:  # the scan stopped at something no trace holds, and the parse did not see it
                raise Fault(f"invalid JSON near byte {self.base + end:,}; {FIX}")
            at, exact = after, False

    def quick_cut(self, at: int) -> tuple[int, int] | None:
        """The first "}, {" at least CHUNK_BYTES after ``at``: the piece's end and the next one's start. Where it
        is in a string or inside an event, the piece does not parse, and :meth:`exact_cut` looks again."""
        want = at + CHUNK_BYTES
        cut = _BETWEEN.search(self.buf, want) if want < len(self.buf) else None
        return (cut.start() + 1, cut.end() - 1) if cut else None

    def exact_cut(self, at: int):
        """The end of the first event that ends at least CHUNK_BYTES after ``at`` (an event's start), found by
        its brackets outside strings, and the next event's start; _CLOSED where the array ends at ``at``; None
        where the bytes held end first. Where the text is not JSON, a place past the fault (and no next start),
        so that the piece's parse says what it is."""
        buf, depth, want = self.buf, 0, at + CHUNK_BYTES
        for token in _TOKEN.finditer(buf, at):
            c = buf[token.start()]
            if c == _QUOTE:
                if token.end() - token.start() < 2 or buf[token.end() - 1] != _QUOTE:
                    return None  # a string that runs past the bytes held
                continue
            if c in _OPENERS:
                depth += 1
                continue
            depth -= 1
            if depth < 0:
                return _CLOSED if c == _CLOSE_ARRAY and not _SOMETHING.search(buf, at, token.start()) else (token.end(), None)
            if depth or token.end() < want:
                continue
            nxt = _SPACES.match(buf, token.end()).end()
            if nxt == len(buf):
                return None
            if buf[nxt] == _COMMA:
                start = _SPACES.match(buf, nxt + 1).end()
                if start == len(buf):
                    return None
                return (token.end(), start) if buf[start] == _OPEN_OBJECT else (start + 1, None)
            return (token.end(), token.end()) if buf[nxt] == _CLOSE_ARRAY else (nxt + 1, None)
        return None

    def too_long(self, at: int) -> Fault:
        return Fault(f"no event ends within {MAX_PIECE_BYTES / 2**20:g} MiB from byte {self.base + at:,} (torch.profiler's events "
                     f"are a few KiB); {FIX}")

    def head(self) -> bytes:
        """The document up to and with the ``[`` that opens its events; checked to open an object whose
        ``traceEvents`` is that array."""
        while (key := _EVENTS_KEY.search(self.buf)) is None:
            if len(self.buf) > MAX_HEAD_BYTES:
                raise Unstreamed(f"no traceEvents array in its first {MAX_HEAD_BYTES >> 20} MiB")
            if not self.more(0):
                raise Unstreamed("no traceEvents array")
        head = self.buf[:key.end()]
        try:
            doc = orjson.loads(head + b"]}")
        except orjson.JSONDecodeError as exc:
            if exc.pos < len(head):  # the opening is damaged (past it: the array is not the document's own)
                raise Fault(f"{json_fault(exc, f' near byte {exc.pos:,}')}; {FIX}") from None
            doc = None
        if not isinstance(doc, dict) or doc.get("traceEvents") != []:
            raise Unstreamed("a traceEvents array that is not the document's own")
        return head

    def end(self, head: bytes, at: int) -> dict:
        """The last events (from ``at`` to the array's ``]``) and the document: its opening with what follows the
        array (the "]" is the last one of the last three whose document parses: not one in a string after it)."""
        rest, close = self.buf, len(self.buf)
        if _EVENTS_KEY.search(rest, at):
            raise Unstreamed("a second traceEvents array after the first")
        for _ in range(3):
            close = rest.rfind(b"]", at, close)
            if close < 0:
                break
            try:
                doc = orjson.loads(head + rest[close:])
            except orjson.JSONDecodeError:
                continue
            if not isinstance(doc, dict) or doc.get("traceEvents") != []:
                raise Unstreamed("a traceEvents array that is not the document's own")
            if _SOMETHING.search(rest, at, close):
                try:
                    self.count += self.add(b"[[" + rest[at:close] + b"]]", self.count)
                except orjson.JSONDecodeError:
                    break
            return doc
        # The end is damaged: what orjson finds first in the opening and the rest (the events before them are whole).
        try:
            orjson.loads(head + rest[at:])
        except orjson.JSONDecodeError as exc:
            raise Fault(f"{json_fault(exc, f' near byte {self.base + at + exc.pos - len(head):,}')}; {FIX}") from None
        raise Unstreamed("a traceEvents array whose end was not found")
