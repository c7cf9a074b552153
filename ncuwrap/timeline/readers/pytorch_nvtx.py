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
dtype, strides or values. A range is an op when its name carries an ``op_id`` or a ``seq``: the program's
own NVTX ranges (its steps) and libraries' (CCCL's ``cub::DeviceRadixSort``) are not ops. The name is kept
without those fields; each distinct name is parsed once. The sizes become the op's ``shapes`` text (the
layout of a PyTorch profiler trace's, :mod:`ncuwrap.timeline.readers.kineto_json`: ``[dims, types, strides, concrete]``,
here ``[dims, null, null, null]``), each distinct one kept once; longer than
:data:`~ncuwrap.timeline.events.MAX_SHAPES_BYTES`, kept as none.
"""

from __future__ import annotations

import re

import numpy as np

from ncuwrap.timeline.events import MAX_SHAPES_BYTES, Events, Labels

# Where PyTorch's fields begin after the op's name, and its sequence number among them.
_FIELDS = re.compile(r", (?:(?:stashed )?seq|op_id) = -?\d+")
_SEQ = re.compile(r"^, (?:stashed )?seq = (-?\d+)")
_SIZES = ", sizes = "
_AFTER_SIZES = ", input_op_ids = "


def sizes(text: str) -> str | None:
    """The ``sizes = [...]`` of an op's range name, as written (None: none, or longer than MAX_SHAPES_BYTES)."""
    at = text.find(_SIZES)
    if at < 0:
        return None
    at += len(_SIZES)
    end = text.find(_AFTER_SIZES, at)
    found = text[at:end if end >= 0 else len(text)]
    return found if found.startswith("[") and len(found) <= MAX_SHAPES_BYTES else None


def parse(text: str) -> tuple[str, int] | None:
    """``(op name, seq)`` of an autograd-nvtx range name (seq -1 where it has none); None for a range
    that is not an op."""
    fields = _FIELDS.search(text)
    if fields is None:
        return None
    seq = _SEQ.match(text[fields.start():])
    return text[:fields.start()], int(seq.group(1)) if seq else -1


def ops_from_nvtx(nvtx: Events | None) -> Events | None:
    """The ops among ``nvtx``'s ranges (start, end, name, tid, seq, fwd_tid, external_id; -1 where
    unknown), sorted by start; None when no range is an op (captured without --pytorch=autograd-nvtx)."""
    if nvtx is None or nvtx.empty or "tid" not in nvtx:
        return None
    names = nvtx["name"]
    parsed = [parse(str(text)) for text in names.categories]  # once per distinct text: op_ids make most names distinct
    is_op = np.array([p is not None for p in parsed] + [False], dtype=bool)
    rows = np.flatnonzero(is_op[names.codes])
    if not rows.size:
        return None
    op_names = [p[0] for p in parsed if p is not None]
    code_of = {n: i for i, n in enumerate(dict.fromkeys(op_names))}
    name_code = np.array([code_of[p[0]] if p is not None else -1 for p in parsed] + [-1], dtype=np.int32)
    seq_of = np.array([p[1] if p is not None else -1 for p in parsed] + [-1], dtype=np.int64)
    shapes = Labels.of([f"[{found},null,null,null]" if (found := sizes(str(text))) is not None else None for text in names.categories])
    codes = names.codes[rows]
    tid = np.asarray(nvtx["tid"], dtype=float)[rows]
    return Events({
        "start": np.asarray(nvtx["start"], dtype=np.int64)[rows], "end": np.asarray(nvtx["end"], dtype=np.int64)[rows],
        "name": Labels(name_code[codes], list(code_of)),
        "tid": np.nan_to_num(tid, nan=-1).astype(np.int64),
        "seq": seq_of[codes],
        "fwd_tid": np.full(rows.size, -1, dtype=np.int64),  # emit_nvtx does not say which thread ran the forward op
        "external_id": np.full(rows.size, -1, dtype=np.int64),
        "shapes": shapes[codes],
    })
