"""nsys's dataflow (``input_op_ids``): read into columns (ncuwrap.timeline.readers.pytorch_nvtx) and used for a
reduction's output size (ncuwrap.timeline.oplimits.dataflow, counts.reduction). The real capture is
tests/data/h200_ncuwrap/op_limits/elementwise_eager.sqlite.gz; the range names and tables built here are SYNTHETIC, labelled so."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ncuwrap.timeline.events import Events, Labels
from ncuwrap.timeline.launches import categories_of
from ncuwrap.timeline.oplimits import counts as C
from ncuwrap.timeline.oplimits import dataflow
from ncuwrap.timeline.oplimits.inputs import parse
from ncuwrap.timeline.readers import pytorch_nvtx
from tests import op_limits_checks as OC

ADDMM = "aten::addmm, seq = 1644, op_id = 19026, sizes = [[4096], [6144, 1024], [1024, 4096], [], []]"


# -- parsing the range names (SYNTHETIC texts) ------------------------------------------------------

@pytest.mark.parametrize("ids, links", [
    ("[(19020, 0), (19021,0), (19022, 1), (0,-1), (0,-1)]", [(0, 19020, 0), (1, 19021, 0), (2, 19022, 1)]),
    ("[(19020,0),(19021,0),(19022,1),(0,-1),(0,-1)]", [(0, 19020, 0), (1, 19021, 0), (2, 19022, 1)]),
    ("[(0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]", []),  # no producer known: no link
    ("[(-5, 0), (1, -2), (1, 70000), (2, 0), (3, 0)]", [(3, 2, 0), (4, 3, 0)]),  # negative ids and outputs, an output past any op's
    ("[(999999999999999999, 0), (1, 0), (0,-1), (0,-1), (0,-1)]", [(0, 999999999999999999, 0), (1, 1, 0)]),  # huge, within int64
])
def test_input_op_ids_become_links(ids, links):
    assert pytorch_nvtx.producers(f"{ADDMM}, input_op_ids = {ids}") == links


@pytest.mark.parametrize("text", [
    ADDMM,  # no input_op_ids (autograd-nvtx without shapes, an older PyTorch)
    f"{ADDMM}, input_op_ids = [(19020, 0), (19021, 0), (19022, 1), (0,-1)",  # truncated
    f"{ADDMM}, input_op_ids = [(19020, 0), (19021, 0), (19022, 1), (0,-1), (0,",
    f"{ADDMM}, input_op_ids = [(19020, 0), (x, 0), (19022, 1), (0,-1), (0,-1)]",  # not a number
    f"{ADDMM}, input_op_ids = [(19020, 0.5), (1, 0), (19022, 1), (0,-1), (0,-1)]",
    f"{ADDMM}, input_op_ids = [(19020, 0), (19021, 0), (19022, 1)]",  # fewer than its sizes: positions would not match
    f"{ADDMM}, input_op_ids = [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0)]",  # more
    f"{ADDMM}, input_op_ids = [(99999999999999999999999, 0), (1, 0), (2, 0), (3, 0), (4, 0)]",  # too many digits for an int64
    f"{ADDMM}, input_op_ids = [(4611686018427387904, 0), (1, 0), (2, 0), (3, 0), (4, 0)]",
    f"{ADDMM}, input_op_ids = ",
    "aten::mm, op_id = 3, input_op_ids = [(1, 0), (2, 0)]",  # no sizes to align with
    f"{ADDMM.replace('sizes = [[4096]', 'sizes = [[4096')}, input_op_ids = [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0)]",  # sizes not a list
])
def test_malformed_input_op_ids_give_no_links(text):
    assert pytorch_nvtx.producers(text) is None


@pytest.mark.parametrize("text, op_id", [(ADDMM, 19026), ("aten::mm, op_id = 0", -1), ("aten::mm, seq = 3", -1),
                                         ("aten::mm, op_id = 4611686018427387904", -1), ("aten::mm, op_id = 12x", -1),
                                         ("aten::mm, op_id = 99999999999999999999", -1), ("aten::mm, op_id = 7, sizes = []", 7)])
def test_op_id(text, op_id):
    assert pytorch_nvtx.op_id(text) == op_id


def _nvtx(names: list[str], tid: list[int] | None = None) -> Events:
    n = len(names)
    return Events({"start": np.arange(n, dtype=np.int64) * 10, "end": np.arange(n, dtype=np.int64) * 10 + 5, "name": Labels.of(names),
                   "tid": np.asarray(tid or [1] * n, dtype=float)})


def test_the_links_are_columns_of_each_ops_row():
    """SYNTHETIC: a step range (not an op), a mean, a sub reading it, a truncated range and a repeated name (two rows of
    one text: each gets the links)."""
    names = ["step 1", "aten::mean, op_id = 5, sizes = [[8, 4], [], [], []], input_op_ids = [(2, 0), (0,-1), (0,-1), (0,-1)]",
             "aten::sub, op_id = 6, sizes = [[8, 4], [8, 1], []], input_op_ids = [(2,0), (5,0), (0,-1)]",
             "aten::mul, op_id = 7, sizes = [[8, 4], [8, 4]], input_op_ids = [(6,0), (6,",
             "aten::exp, sizes = [[8, 4]], input_op_ids = [(6, 0)]", "aten::exp, sizes = [[8, 4]], input_op_ids = [(6, 0)]"]
    names[4] = names[5] = "aten::exp, seq = 2, sizes = [[8, 4]], input_op_ids = [(6, 0)]"
    ops, links = pytorch_nvtx.read(_nvtx(names))
    assert ops["op_id"].tolist() == [5, 6, 7, -1, -1]
    assert (links["op"].tolist(), links["input"].tolist(), links["producer"].tolist(), links["output"].tolist()) == (
        [0, 1, 1, 3, 4], [0, 0, 1, 0, 0], [2, 2, 5, 6, 6], [0, 0, 0, 0, 0])
    assert pytorch_nvtx.ops_from_nvtx(_nvtx(names))["op_id"].tolist() == [5, 6, 7, -1, -1]
    assert pytorch_nvtx.read(_nvtx(["step 1", "aten::mm, op_id = 3"]))[1] is None  # no input_op_ids anywhere
    assert pytorch_nvtx.read(None) == (None, None)


# -- a reduction's output size (SYNTHETIC tables) ------------------------------------------------------

def _data(rows: list[tuple[str, int, int, str, list[tuple[int, int, int]]]]):
    """Ops (name, tid, op_id, sizes text, links (input, producer, output)) as the reader leaves them."""
    links = [(i, *link) for i, row in enumerate(rows) for link in row[4]]
    ops = Events({"name": Labels.of(r[0] for r in rows), "tid": np.array([r[1] for r in rows], dtype=np.int64),
                  "op_id": np.array([r[2] for r in rows], dtype=np.int64),
                  "shapes": Labels.of(f"[{r[3]},null,null,null]" for r in rows)})
    table = Events({"op": np.array([x[0] for x in links], dtype=np.int64), "input": np.array([x[1] for x in links], dtype=np.int32),
                    "producer": np.array([x[2] for x in links], dtype=np.int64), "output": np.array([x[3] for x in links], dtype=np.int32)})
    return SimpleNamespace(ops=ops, op_inputs=table)


MEAN = "[[8, 4], [], [], []]"


def test_a_reductions_output_is_what_its_readers_recorded():
    data = _data([("aten::mean", 1, 5, MEAN, []), ("aten::sub", 1, 6, "[[8, 4], [8, 1], []]", [(1, 5, 0)]),
                  ("aten::add", 1, 7, "[[8, 1], [], []]", [(0, 5, 0), (1, 3, 0)]),
                  ("aten::mul", 1, 8, "[[8, 4], []]", [(1, 5, 0)]),  # a wrapped scalar whose address the mean's result had: [] says nothing
                  ("aten::mean", 1, 9, MEAN, []), ("aten::mean", 2, 10, MEAN, []),
                  ("aten::sub", 2, 11, "[[8, 4], [8]]", [(1, 10, 0)]), ("aten::sub", 1, 12, "[[8, 4], [4]]", [(1, 10, 0)])])
    calls = np.array([0])
    assert dataflow.output_sizes(data, calls) == (8, 1)
    assert dataflow.output_sizes(data, np.array([4])) is None  # no reader
    assert dataflow.output_sizes(data, np.array([0, 4])) is None  # one call of the row has none
    assert dataflow.output_sizes(data, np.array([5])) == (8,)  # its thread's reader, not op 10 of thread 1
    assert dataflow.output_sizes(data, np.array([0, 5])) is None  # the calls disagree
    assert dataflow.output_sizes(SimpleNamespace(ops=data.ops, op_inputs=None), calls) is None
    disagree = _data([("aten::sum", 1, 5, MEAN, []), ("aten::sub", 1, 6, "[[8, 4], [8, 1]]", [(1, 5, 0)]),
                      ("aten::sub", 1, 7, "[[8, 4], [8]]", [(1, 5, 0)])])
    assert dataflow.output_sizes(disagree, calls) is None


@pytest.mark.parametrize("output, row", [((8, 1), 4), ((8,), 4), ((1, 4), 8), ((4,), 8), ((1, 1), 32), ((8, 4), 1)])
def test_a_reduction_counts_the_output_its_readers_recorded(output, row):
    work = C.count("aten::mean", parse(f"[{MEAN},null,null,null]"), "fp32", C.KernelFacts(output=output))
    assert (work.row, work.written, work.bytes) == (row, 4 * 32 // row, 4 * 32 + 4 * 32 // row)


@pytest.mark.parametrize("output", [(4, 8), (8, 2), (16,), (8, 4, 1, 1), (0,), (8, 0)])
def test_sizes_that_are_no_reduction_of_the_input_are_not_modelled(output):
    work = C.count("aten::sum", parse(f"[{MEAN},null,null,null]"), "fp32", C.KernelFacts(output=output))
    assert isinstance(work, C.NotModelled) and "no reduction of 8x4" in work.reason


def test_without_readers_a_reduction_stays_not_modelled_under_nsys():
    work = C.count("aten::amax", parse(f"[{MEAN},null,null,null]"), "fp32")
    assert isinstance(work, C.NotModelled) and "nsys records none" in work.reason


def test_a_softmax_row_is_its_last_dim_where_its_kernels_say_so():
    x = parse("[[[8, 4096], [], []],null,null,null]")
    assert C.count("aten::_softmax", x, "fp32", C.KernelFacts(last_dim=True)).row == 4096
    assert C.count("aten::_softmax", x, "fp32").row is None
    assert C.count("aten::_softmax", parse("[[[8, 1], [], []],null,null,null]"), "fp32", C.KernelFacts(last_dim=True)).row is None
    backward = parse("[[[8, 4096], [8, 4096], [], []],null,null,null]")
    assert C.count("aten::_softmax_backward_data", backward, "fp32", C.KernelFacts(last_dim=True)).row is None


# -- the real capture -----------------------------------------------------------------------------

def test_the_elementwise_captures_dataflow():
    """elementwise_eager under nsys: 321 op ranges, 442 inputs with a named producer; each mean's result is read as
    16384x1 (the rows of 4,096 reduced); the add of the mean and 1e-6 names its scalar's producer as the op before
    the mean (PyTorch's stale address), a [] input the reduction ignores."""
    data = OC.read("elementwise_eager", OC.NSYS)
    ops, links = data.ops, data.op_inputs
    assert (len(ops), len(links), int((ops["op_id"] < 0).sum())) == (321, 442, 0)
    add = int(np.flatnonzero(ops["op_id"] == 27)[0])
    mine = links["op"] == add
    assert (ops["name"][add], links["producer"][mine].tolist(), links["input"][mine].tolist()) == ("aten::add", [26, 25], [0, 1])
    names = categories_of(ops["name"])
    assert dataflow.output_sizes(data, np.flatnonzero(names == "aten::mean")) == (16384, 1)
    _, limits = OC.capture("elementwise_eager", OC.NSYS, steps=True)
    rows = {(r.op, r.kind): r for r in limits.rows}
    assert (rows[("aten::mean", C.REDUCTION)].calls, rows[("aten::mean", C.REDUCTION)].bytes) == (18, 18 * (2 ** 28 + 4 * 16384))
    assert rows[("aten::sum", C.REDUCTION)].calls == 6
    assert not [u for u in limits.unmodelled if "reduces" in u.reason]
