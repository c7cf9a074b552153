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


def output_sizes(data, calls: np.ndarray) -> tuple[int, ...] | None:
    """The sizes of the result (any output index) of the op calls ``calls`` (rows of ``data.ops``), as every op that read
    it recorded them; None where a call's result has no consumer with recorded sizes, or where they disagree (between
    consumers or between calls)."""
    ops, links = data.ops, getattr(data, "op_inputs", None)
    if links is None or ops is None or "op_id" not in ops or not calls.size:
        return None
    op_id = np.asarray(ops["op_id"], dtype=np.int64)
    tid = np.asarray(ops["tid"], dtype=np.int64)
    ids = op_id[calls]
    if (ids < 0).any():
        return None
    producer = np.asarray(links["producer"], dtype=np.int64)
    hits = np.flatnonzero(np.isin(producer, ids))
    if not hits.size:
        return None
    consumer = np.asarray(links["op"], dtype=np.int64)[hits]
    position = np.asarray(links["input"], dtype=np.int64)[hits]
    wanted = {(int(t), int(i)) for t, i in zip(tid[calls], ids)}
    shapes = ops["shapes"]
    found: dict[tuple[int, int], set] = {}
    parsed: dict[int, object] = {}
    for c, i, p in zip(consumer.tolist(), position.tolist(), producer[hits].tolist()):
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
