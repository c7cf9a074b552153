"""What nsys's ``input_op_ids`` settle for the op model: a reduction's output sizes, as the ops that used its result
recorded them (:func:`output_sizes`).

nsys records an op's input sizes and no argument's value, so a reduction's dimensions are not recorded; the op that
reads its result records that result's sizes. PyTorch names an input's producer by the tensor's address on the
thread it ran on, and never forgets one (:mod:`ncuwrap.timeline.readers.pytorch_nvtx`): a consumer is matched on the
producer's thread and op_id, an input recorded with no sizes (``[]``: a value, a 0-d tensor or a wrapped scalar whose
address an older tensor had) says nothing, and where the consumers of the calls disagree the sizes are unknown.

And which ops read each op's results with GPU work of their own (:func:`reads`), for where a fused chain begins and
ends and the values it must still write and read (:mod:`ncuwrap.timeline.oplimits.analysis`). There a producer is
matched by its op_id alone: PyTorch draws op_ids from one counter for every thread (each of the captures' ops has its
own), and the backward's ops, on
autograd's thread, name the forward's that made the values they read (1,912 of the transformer capture's 18,207
links cross threads); an op_id two ops carry is ambiguous, and its links are left out. The op a value belongs to is
the innermost op that launched the GPU work making it, the level the op model counts (its kernels are its own); but
PyTorch tags a result with the op_id of the last op to return it, and an outer op returns its inner op's result after
it (``aten::layer_norm`` after ``aten::native_layer_norm``, ``aten::to`` after ``aten::_to_copy`` after
``aten::copy_``). So an outer op that launched no GPU work of its own stands for its last inner op, whose result it
returns; a view (``aten::view``, ``aten::t``, ``aten::detach``, ...) that launched none stands for its input's value,
whose data it shares. A read is one by an op that launched GPU work itself (a kernel, a copy or a memset): an outer
op's read is its inner ops' (each names the same producer), and an op that launched nothing read no data (an
allocation of the same sizes, a view, a shape check). The first input of an op that only writes it (``copy_``,
``fill_``, ``zero_``) is not read, and an input recorded with no sizes (``[]``) says nothing (above).

Last, which inputs of a call are one tensor passed twice (:meth:`Readers.same_inputs`: the same producer, output and
sizes), which its count reads once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ncuwrap.core.numbers import distinct
from ncuwrap.timeline.launched_from import op_rows, parents as nested_parents
from ncuwrap.timeline.launches import categories_of
from ncuwrap.timeline.oplimits.inputs import Tensor, parse


class Readers:
    """The ops that read each op's results in a capture (``data.op_inputs``), looked up by the producer's op_id: sorted
    once, on the first look-up, so that every reduction of a capture of millions of ops costs a binary search."""

    def __init__(self, data):
        self.data = data
        self._order: np.ndarray | None = None
        self._sorted: np.ndarray | None = None
        self._by_op: np.ndarray | None = None  # op_inputs sorted on the consumer, on the first look-up by call
        self._consumers: np.ndarray | None = None

    def _links_of(self, ids: np.ndarray) -> np.ndarray:
        """The rows of ``op_inputs`` whose producer is one of ``ids``."""
        if self._order is None:
            producer = np.asarray(self.data.op_inputs["producer"], dtype=np.int64)
            self._order = np.argsort(producer, kind="stable")
            self._sorted = producer[self._order]
        lo = np.searchsorted(self._sorted, ids, side="left")
        hi = np.searchsorted(self._sorted, ids, side="right")
        if not (hi > lo).any():
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([self._order[a:b] for a, b in zip(lo.tolist(), hi.tolist()) if b > a])

    def output_sizes(self, calls: np.ndarray) -> tuple[int, ...] | None:
        """The sizes of the result (any output index) of the op calls ``calls`` (rows of ``data.ops``), as every op that
        read it recorded them; None where a call's result has no reader with recorded sizes, or where they disagree
        (between readers or between calls)."""
        data = self.data
        ops, links = data.ops, getattr(data, "op_inputs", None)
        if links is None or ops is None or "op_id" not in ops or not calls.size:
            return None
        op_id = np.asarray(ops["op_id"], dtype=np.int64)
        tid = np.asarray(ops["tid"], dtype=np.int64)
        ids = op_id[calls]
        if (ids < 0).any():
            return None
        hits = self._links_of(np.unique(ids))
        if not hits.size:
            return None
        consumer = np.asarray(links["op"], dtype=np.int64)[hits]
        position = np.asarray(links["input"], dtype=np.int64)[hits]
        producer = np.asarray(links["producer"], dtype=np.int64)[hits]
        wanted = {(int(t), int(i)) for t, i in zip(tid[calls], ids)}
        shapes = ops["shapes"]
        found: dict[tuple[int, int], set] = {}
        parsed: dict[int, object] = {}
        for c, i, p in zip(consumer.tolist(), position.tolist(), producer.tolist()):
            key = (int(tid[c]), p)
            if key not in wanted:
                continue  # another thread's op of that id
            code = int(shapes.codes[c])
            if code not in parsed:
                parsed[code] = parse(shapes.categories[code]) if code >= 0 else None
            inputs = parsed[code]
            tensor = inputs.tensor(i) if inputs is not None else None
            if tensor is not None:
                found.setdefault(key, set()).add(tensor.dims)
        if len(found) != len(wanted):
            return None
        sizes = set().union(*found.values())
        return sizes.pop() if len(sizes) == 1 else None

    def same_inputs(self, calls: np.ndarray, inputs) -> frozenset[int]:
        """The input positions of the op calls ``calls`` (rows of ``data.ops``, one row's: ``inputs`` their recorded
        inputs) that name the producer and output, and have the sizes, of one of the same call's earlier inputs: one
        tensor passed twice (``d * d``), read once. Only positions every call so names; none without ``op_inputs``."""
        data = self.data
        links = getattr(data, "op_inputs", None)
        if links is None or data.ops is None or not calls.size:
            return frozenset()
        if self._by_op is None:
            consumer = np.asarray(links["op"], dtype=np.int64)
            self._by_op = np.argsort(consumer, kind="stable")
            self._consumers = consumer[self._by_op]
        lo = np.searchsorted(self._consumers, calls, side="left")
        hi = np.searchsorted(self._consumers, calls, side="right")
        if not (hi > lo).any():
            return frozenset()
        rows = np.concatenate([self._by_op[a:b] for a, b in zip(lo.tolist(), hi.tolist()) if b > a])
        call = np.asarray(links["op"], dtype=np.int64)[rows]
        position = np.asarray(links["input"], dtype=np.int64)[rows]
        # A value ([]: a stale name that says nothing) or a position without a tensor is no read of a tensor; the sizes
        # are the row's, one for every call.
        dims = [inputs.tensor(i).dims if inputs.tensor(i) is not None else () for i in range(len(inputs.args))]
        position = np.where((position >= 0) & (position < len(dims)), position, len(dims))  # a position no input has: none
        dims.append(())
        codes = {d: c for c, d in enumerate(dict.fromkeys(dims))}
        sized = np.array([bool(dims[i]) for i in position.tolist()], dtype=bool)
        size_code = np.array([codes[dims[i]] for i in position.tolist()], dtype=np.int64)
        key = np.stack([call, np.asarray(links["producer"], dtype=np.int64)[rows], np.asarray(links["output"], dtype=np.int64)[rows],
                        size_code, position], axis=1)[sized]
        key = key[np.lexsort(key.T[::-1])]  # by call, value, sizes, then position: a value's first position first
        again = np.concatenate([[False], (key[1:, :4] == key[:-1, :4]).all(axis=1)])
        positions, times = np.unique(key[again, 4], return_counts=True)
        return frozenset(int(p) for p, n in zip(positions.tolist(), times.tolist()) if n == np.unique(calls).size)


def output_sizes(data, calls: np.ndarray) -> tuple[int, ...] | None:
    """:meth:`Readers.output_sizes` of one look-up."""
    return Readers(data).output_sizes(calls)


# Ops whose result is their first input's data (a view of it, or the tensor itself) where they launch no GPU work.
PASS_THROUGH = frozenset(f"aten::{name}" for name in (
    "view", "_unsafe_view", "reshape", "_reshape_alias", "as_strided", "t", "transpose", "permute", "expand", "expand_as", "view_as",
    "unsqueeze", "squeeze", "select", "slice", "narrow", "split", "split_with_sizes", "chunk", "unbind", "unflatten", "flatten",
    "diagonal", "alias", "detach", "detach_", "contiguous", "to", "type_as", "lift_fresh", "movedim", "swapaxes", "unfold", "view_as_real",
    "view_as_complex", "resolve_conj", "resolve_neg", "_conj", "numpy_T", "mT", "real")) | {"detach"}
# Ops that write their first input without reading it.
WRITE_ONLY = frozenset({"aten::copy_", "aten::fill_", "aten::zero_", "aten::uniform_", "aten::normal_", "aten::random_", "aten::resize_"})
_MAX_HOPS = 64  # views of views: a capture's longest chain of them is a few


@dataclass(frozen=True)
class Reads:
    """Each read of an op's result by an op with GPU work of its own, rows of ``data.ops`` (see the module's text): the
    op that made the value (``producer``: the innermost op whose GPU work wrote it), which of its outputs it is
    (``output``), the op that read it (``reader``) and as which of its inputs (``input``)."""

    producer: np.ndarray
    output: np.ndarray
    reader: np.ndarray
    input: np.ndarray

    def __len__(self) -> int:
        return int(self.producer.size)


def parents(start: np.ndarray, end: np.ndarray, tid: np.ndarray) -> np.ndarray:
    """Each interval's innermost enclosing interval on its thread (-1: none), by row; the intervals of a thread nest."""
    parent = np.full(start.size, -1, dtype=np.int64)
    for thread in distinct(tid).tolist():
        rows = np.flatnonzero(tid == thread)
        found = nested_parents(start[rows], end[rows])
        parent[rows] = np.where(found >= 0, rows[np.clip(found, 0, None)], -1)
    return parent


def _last_child(parent: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Each op's inner op begun last (-1: none)."""
    last = np.full(parent.size, -1, dtype=np.int64)
    children = np.flatnonzero(parent >= 0)
    if not children.size:
        return last
    children = children[np.lexsort((start[children], parent[children]))]
    ends = np.flatnonzero(np.concatenate([parent[children][1:] != parent[children][:-1], [True]]))
    last[parent[children[ends]]] = children[ends]
    return last


def launched(data, n: int) -> np.ndarray:
    """Which of ``data``'s ``n`` ops launched GPU work (a kernel, a copy, a memset) as the innermost op around the launch."""
    out = np.zeros(n, dtype=bool)
    for table in (data.kernels, data.copies, data.memsets):
        if table is None or not len(table) or "correlation" not in table:
            continue
        op = op_rows(data, table).op
        out[op[op >= 0]] = True
    return out


def _recorded_tensors(shapes, consumer: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Whether each consumer's input at ``position`` is recorded with sizes (a tensor of at least one dimension):
    each distinct shapes text parsed once."""
    codes = shapes.codes[consumer]
    first = np.zeros(len(shapes.categories), dtype=np.int64)
    count = np.zeros(len(shapes.categories), dtype=np.int64)
    table: list[bool] = []
    for code in distinct(codes[codes >= 0]).tolist():
        inputs = parse(shapes.categories[code])
        args = inputs.args if inputs is not None else ()
        first[code], count[code] = len(table), len(args)
        table.extend(isinstance(a, Tensor) and bool(a.dims) for a in args)
    sized = np.asarray(table + [False], dtype=bool)
    code = np.clip(codes, 0, None)
    ok = (codes >= 0) & (position >= 0) & (position < count[code])
    return sized[np.where(ok, first[code] + position, len(table))]


def reads(data) -> Reads | None:
    """Which ops read each op's results with GPU work of their own (:class:`Reads`); None where the capture names no
    input's producer (nsys without ``--pytorch=autograd-shapes-nvtx``; a PyTorch profiler trace records none)."""
    ops, links = data.ops, getattr(data, "op_inputs", None)
    if links is None or ops is None or "op_id" not in ops or "shapes" not in ops or not len(links):
        return None
    n = len(ops)
    start, end, tid = (np.asarray(ops[c], dtype=np.int64) for c in ("start", "end", "tid"))
    parent = parents(start, end, tid)
    has_inner = np.zeros(n, dtype=bool)
    has_inner[parent[parent >= 0]] = True
    worked = launched(data, n)
    # An outer op with no GPU work of its own returns its last inner op's result: follow them to the innermost.
    last = _last_child(parent, start)
    root = np.where(has_inner & ~worked & (last >= 0), last, np.arange(n))
    for _ in range(_MAX_HOPS):
        deeper = root[root]
        if np.array_equal(deeper, root):
            break
        root = deeper
    op_id = np.asarray(ops["op_id"], dtype=np.int64)
    by_id = np.argsort(op_id, kind="stable")
    ids = op_id[by_id]
    # An op_id two ops carry names neither for sure: its links are left out.
    once = np.ones(n, dtype=bool)
    twice = np.flatnonzero(ids[1:] == ids[:-1])
    once[twice], once[twice + 1] = False, False
    named = np.asarray(links["producer"], dtype=np.int64)
    at = np.clip(np.searchsorted(ids, named), 0, n - 1)
    producer = np.where((ids[at] == named) & once[at], by_id[at], -1)
    consumer = np.asarray(links["op"], dtype=np.int64)
    position = np.asarray(links["input"], dtype=np.int64)
    output = np.asarray(links["output"], dtype=np.int64).copy()
    sized = _recorded_tensors(ops["shapes"], consumer, position)
    names = categories_of(ops["name"])
    # A view with no GPU work stands for its first input's value.
    view = names.test(lambda t: str(t) in PASS_THROUGH) & ~has_inner & ~worked
    source = np.full(n, -1, dtype=np.int64)
    source_output = np.full(n, -1, dtype=np.int64)
    first = np.flatnonzero((position == 0) & (producer >= 0) & sized & view[consumer])
    source[consumer[first]], source_output[consumer[first]] = producer[first], output[first]
    value = np.where(producer >= 0, root[np.clip(producer, 0, None)], -1)
    for _ in range(_MAX_HOPS):
        hop = np.flatnonzero(value >= 0)
        hop = hop[source[value[hop]] >= 0]
        if not hop.size:
            break
        via = value[hop]
        value[hop], output[hop] = root[source[via]], source_output[via]
    written_only = names.test(lambda t: str(t) in WRITE_ONLY)[consumer] & (position == 0)
    keep = (value >= 0) & sized & worked[consumer] & ~written_only & ~view[value.clip(0)]
    return Reads(producer=value[keep], output=output[keep], reader=consumer[keep], input=position[keep])
