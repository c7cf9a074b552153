"""What nsys's ``input_op_ids`` settle for the op model: a reduction's output sizes, as the ops that used its result
recorded them (:func:`output_sizes`).

nsys records an op's input sizes and no argument's value, so a reduction's dimensions are not recorded; the op that
reads its result records that result's sizes. PyTorch names an input's producer by the tensor's address on the
thread it ran on, and never forgets one (:mod:`ncuwrap.timeline.readers.pytorch_nvtx`): a consumer is matched on the
producer's thread and op_id, an input recorded with no sizes (``[]``: a value, a 0-d tensor or a wrapped scalar whose
address an older tensor had) says nothing, and where the consumers of the calls disagree the sizes are unknown.
"""

from __future__ import annotations

import numpy as np

from ncuwrap.timeline.oplimits.inputs import parse


class Readers:
    """The ops that read each op's results in a capture (``data.op_inputs``), looked up by the producer's op_id: sorted
    once, on the first look-up, so that every reduction of a capture of millions of ops costs a binary search."""

    def __init__(self, data):
        self.data = data
        self._order: np.ndarray | None = None
        self._sorted: np.ndarray | None = None

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


def output_sizes(data, calls: np.ndarray) -> tuple[int, ...] | None:
    """:meth:`Readers.output_sizes` of one look-up."""
    return Readers(data).output_sizes(calls)
