"""PyTorch's ops in an nsys capture: the NVTX ranges ``nsys profile --pytorch=autograd-nvtx`` records
(PyTorch's ``emit_nvtx``), read into the ``ops`` table of :class:`~ncuwrap.timeline.model.TimelineData`.

Each op is a push/pop range on the thread that ran it, named by PyTorch as (torch 2.11, read from real
captures, tests/data/h200_ncuwrap/kineto/cost_*_backtrace1.sqlite.gz)::

    aten::addmm, seq = 1644, op_id = 19026                  a forward op; seq: its autograd sequence number
    AddmmBackward0, seq = 1644, op_id = 20245               the backward node of that op (autograd thread)
    autograd::engine::evaluate_function: AddmmBackward0, op_id = 20244
    aten::mm, op_id = 20248                                 an op run inside the backward node (no seq)
    Optimizer.step#AdamW.step, op_id = 10049                a record_function range

Older PyTorch wrote a backward node's number as ``stashed seq = N``. With
``--pytorch=autograd-shapes-nvtx`` (``emit_nvtx(record_shapes=True)``) the sizes of the op's inputs follow,
and the ops that made them (PyTorch's ``getNvtxStr``)::

    aten::addmm, seq = 1644, op_id = 19026, sizes = [[4096], [6144, 1024], [1024, 4096], [], []], input_op_ids = [(19020, 0), ...]

one list per input (``[]`` for one that is not a tensor; a list of tensors flattened into its tensors); no
dtype, strides or values. ``input_op_ids`` names, in the same order, the op that made each input and which of its
outputs it was (``(0,-1)``: none known). PyTorch keys that by the tensor's address on the thread, and never forgets one:
a value PyTorch wraps into a 0-d tensor can be named as made by whatever op last wrote a tensor at its address (the
elementwise capture's ``aten::add(mean, 1e-6)`` names its scalar's producer as the op before the mean). The op's
``op_id`` is a column of the ops; the links become ``TimelineData.op_inputs`` (:func:`read`): one row an input with a
known producer, ``op`` the consumer's row in the ops table, so a reader of the dataflow matches (thread, op_id); an op
whose ``input_op_ids`` are missing, not of that layout, or not as many as its ``sizes`` gives none. A range is an op
when its name carries an ``op_id`` or a ``seq``: the program's own NVTX ranges (its steps) and libraries' (CCCL's
``cub::DeviceRadixSort``) are not ops. The name is kept
without those fields; each distinct name is parsed once. The sizes become the op's ``shapes`` text (the
layout of a PyTorch profiler trace's, :mod:`ncuwrap.timeline.readers.kineto_json`: ``[dims, types, strides, concrete]``,
here ``[dims, null, null, null]``), each distinct one kept once; longer than
:data:`~ncuwrap.timeline.events.MAX_SHAPES_BYTES`, kept as none.
"""

from __future__ import annotations

import re
from array import array
from itertools import chain

import numpy as np

from ncuwrap.timeline.events import MAX_SHAPES_BYTES, Events, Labels

# Where PyTorch's fields begin after the op's name, and its sequence number among them.
_FIELDS = re.compile(r", (?:(?:stashed )?seq|op_id) = -?\d+")
_SEQ = re.compile(r"^, (?:stashed )?seq = (-?\d+)")
_SIZES = ", sizes = "
_AFTER_SIZES = ", input_op_ids = "
_OP_ID = re.compile(r", op_id = (\d{1,18})(?:,|$)")
_PAIR = r"\(\s*(-?\d{1,18})\s*,\s*(-?\d{1,9})\s*\)"
_ONE_PAIR = re.compile(_PAIR)
MAX_OP_ID = 1 << 62  # larger (or negative) ids are not PyTorch's counter: read as none
MAX_OUTPUT = 1 << 16  # an output index past this is not one any op has


def sizes(text: str) -> str | None:
    """The ``sizes = [...]`` of an op's range name, as written (None: none, or longer than MAX_SHAPES_BYTES)."""
    at = text.find(_SIZES)
    if at < 0:
        return None
    at += len(_SIZES)
    end = text.find(_AFTER_SIZES, at)
    found = text[at:end if end >= 0 else len(text)]
    return found if found.startswith("[") and len(found) <= MAX_SHAPES_BYTES else None


def op_id(text: str) -> int:
    """The ``op_id`` of an op's range name (-1: none, or not a number below :data:`MAX_OP_ID`)."""
    found = _OP_ID.search(text)
    value = int(found.group(1)) if found else -1
    return value if 0 < value < MAX_OP_ID else -1


def _pairs(text: str) -> list[tuple[str, str]] | None:
    """The ``input_op_ids`` pairs of an op's range name as written, one an input; None where they are missing, not a
    whole list of ``(int, int)`` pairs, or not as many as its ``sizes`` (the positions would not match)."""
    at = text.find(_AFTER_SIZES)
    if at < 0:
        return None
    body = text[at + len(_AFTER_SIZES):]
    if len(body) > 16 * MAX_SHAPES_BYTES or not (body.startswith("[") and body.endswith("]")):
        return None
    pairs = _ONE_PAIR.findall(body)
    if len(pairs) != body.count("(") or len(pairs) != body.count(")"):
        return None  # a pair cut short, or not two integers
    found = sizes(text)
    # As many inputs as its sizes have (PyTorch writes one flat list an input).
    if found is None or found.count("[") != found.count("]") or found.count("[") - 1 != len(pairs):
        return None
    return pairs


def _known(producer, output):
    """Which links name a producer: an op_id in (0, :data:`MAX_OP_ID`) and an output in [0, :data:`MAX_OUTPUT`)."""
    return (producer > 0) & (producer < MAX_OP_ID) & (output >= 0) & (output < MAX_OUTPUT)


def producers(text: str) -> list[tuple[int, int, int]] | None:
    """``(input, op_id, output)`` of each input of an op's range name whose producer is known, from its ``input_op_ids``;
    None where those are not read (:func:`_pairs`)."""
    pairs = _pairs(text)
    if pairs is None:
        return None
    return [(i, int(a), int(b)) for i, (a, b) in enumerate(pairs) if _known(int(a), int(b))]


def parse(text: str) -> tuple[str, int] | None:
    """``(op name, seq)`` of an autograd-nvtx range name (seq -1 where it has none); None for a range
    that is not an op."""
    fields = _FIELDS.search(text)
    if fields is None:
        return None
    seq = _SEQ.match(text[fields.start():])
    return text[:fields.start()], int(seq.group(1)) if seq else -1


def ops_from_nvtx(nvtx: Events | None) -> Events | None:
    """The ops among ``nvtx``'s ranges (start, end, name, tid, seq, fwd_tid, external_id, op_id; -1 where
    unknown), sorted by start; None when no range is an op (captured without --pytorch=autograd-nvtx)."""
    return read(nvtx)[0]


def read(nvtx: Events | None) -> tuple[Events | None, Events | None]:
    """:func:`ops_from_nvtx`'s ops, and their inputs' producers: ``op`` (the consumer's row in those ops), ``input`` (its
    position in the op's sizes), ``producer`` (the op_id that made it) and ``output`` (which of that op's outputs); None
    where no op names one. By columns: each distinct range name is parsed once, and the links are numpy arrays."""
    if nvtx is None or nvtx.empty or "tid" not in nvtx:
        return None, None
    names = nvtx["name"]
    parsed = [parse(str(text)) for text in names.categories]  # once per distinct text: op_ids make most names distinct
    is_op = np.array([p is not None for p in parsed] + [False], dtype=bool)
    rows = np.flatnonzero(is_op[names.codes])
    if not rows.size:
        return None, None
    op_names = [p[0] for p in parsed if p is not None]
    code_of = {n: i for i, n in enumerate(dict.fromkeys(op_names))}
    name_code = np.array([code_of[p[0]] if p is not None else -1 for p in parsed] + [-1], dtype=np.int32)
    seq_of = np.array([p[1] if p is not None else -1 for p in parsed] + [-1], dtype=np.int64)
    shapes = Labels.of([f"[{found},null,null,null]" if (found := sizes(str(text))) is not None else None for text in names.categories])
    codes = names.codes[rows]
    tid = np.asarray(nvtx["tid"], dtype=float)[rows]
    texts = [str(text) if p is not None else "" for text, p in zip(names.categories, parsed)]
    id_of = np.array([op_id(t) if t else -1 for t in texts] + [-1], dtype=np.int64)
    ops = Events({
        "start": np.asarray(nvtx["start"], dtype=np.int64)[rows], "end": np.asarray(nvtx["end"], dtype=np.int64)[rows],
        "name": Labels(name_code[codes], list(code_of)),
        "tid": np.nan_to_num(tid, nan=-1).astype(np.int64),
        "seq": seq_of[codes],
        "fwd_tid": np.full(rows.size, -1, dtype=np.int64),  # emit_nvtx does not say which thread ran the forward op
        "external_id": np.full(rows.size, -1, dtype=np.int64),
        "shapes": shapes[codes],
        "op_id": id_of[codes],
    })
    return ops, _links(texts, codes)


def _links(texts: list[str], codes: np.ndarray) -> Events | None:
    """The producers of the ops' inputs (see :func:`read`): each distinct name's parsed once, then spread over its rows."""
    counts = np.zeros(len(texts) + 1, dtype=np.int64)
    flat = array("q")  # (producer, output) of each input, flat: no Python object per link is kept
    for c, text in enumerate(texts):
        pairs = _pairs(text) if text and _AFTER_SIZES in text else None
        if pairs:
            counts[c] = len(pairs)
            flat.extend(map(int, chain.from_iterable(pairs)))  # at most 18 and 9 digits: each fits an int64
    if not flat:
        return None
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    per_row = counts[codes]
    total = int(per_row.sum())
    row = np.repeat(np.arange(codes.size, dtype=np.int64), per_row)
    # Each row's inputs: its name's, from that name's start on; the input's position is its place among them.
    position = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    table = np.frombuffer(flat, dtype=np.int64).reshape(-1, 2)[np.repeat(starts[codes], per_row) + position]
    keep = _known(table[:, 0], table[:, 1])
    if not keep.any():
        return None
    return Events({"op": row[keep], "input": position[keep].astype(np.int32), "producer": table[keep, 0],
                   "output": table[keep, 1].astype(np.int32)})
