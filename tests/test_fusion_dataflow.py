"""The values between a fused chain's ops that ops outside it read (issue 51), and the values its later ops read that
none of its ops made: nsys's ``input_op_ids`` resolved to the ops the op model counts
(ncuwrap.timeline.oplimits.dataflow.reads), each chain's escaping values and outside inputs and their bytes
(model.Chain.escapes and outside_inputs, added to its fused minimum), the fusion prediction they move, and what a PyTorch
profiler trace, which keeps no tensor's identity, says instead. On the real H200 captures of tests/data/h200_ncuwrap/op_limits (README
there); one table, labelled SYNTHETIC, spells the nesting rules out on a few ops."""

from __future__ import annotations

import gzip
import html
import json
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest

from ncuwrap.timeline import steps as steps_module
from ncuwrap.timeline.events import Events, Labels
from ncuwrap.timeline.launched_from import op_rows
from ncuwrap.timeline.launches import categories_of
from ncuwrap.timeline.oplimits import dataflow, remedies
from ncuwrap.timeline.whatif.predict import predict
from tests import op_limits_checks as C
from tests.conftest import run_cli

UNKNOWN = "the capture does not record which ops read them"


def _kinds(limits) -> dict:
    """The escaping values by (op, its sizes, output, first reader): (calls over the steps, bytes a call)."""
    return {(e.op, e.shapes, e.output, e.reader): (e.calls, e.bytes // e.calls) for e in limits.escaping}


def _outside(limits) -> dict:
    """The outside inputs by (producer, sizes, first reader): (calls over the steps, bytes a call)."""
    return {(i.op, i.sizes, i.reader): (i.calls, i.bytes // i.calls) for i in limits.outside_inputs}


def _runs(name: str) -> Counter:
    """The capture's chains by their ops' names in launch order (``aten::`` left out): how many of each."""
    data, limits = C.capture(name, C.NSYS, steps=True)
    names = categories_of(data.ops["name"])
    return Counter(" ".join(str(names.categories[names.codes[o]]).removeprefix("aten::") for o in dict.fromkeys(ops.tolist()))
                   for ops in (op_rows(data, data.kernels.rows(c.rows)).op for c in limits.chains))


# -- the training step: its forward's values are read by its backward --------------------------------------------------

def test_the_transformers_runs_are_cut_where_no_value_crosses():
    """A run of memory-bound ops launched one after another is cut where no value made before is read after (nsys's
    input_op_ids): a GELU and the weight cast launched after it, a bias gradient's cast and the next weight gradient's,
    are not one fused kernel's work. 287 runs of 1,169 op calls were 224 of 980 (the others are single ops now)."""
    _, limits = C.capture("transformer", C.NSYS, steps=True)
    assert limits.escapes_known and (limits.steps, len(limits.chains), sum(c.ops for c in limits.chains)) == (7, 224, 980)
    assert _runs("transformer") == {"sum copy_ copy_": 56, "add native_layer_norm copy_ copy_ copy_": 49,
                                    "sum copy_ copy_ copy_ native_layer_norm_backward add_ copy_": 49, "cat copy_": 28,
                                    "native_layer_norm copy_ copy_ copy_": 7, "add native_layer_norm copy_ copy_": 7,
                                    "copy_ _log_softmax nll_loss_forward": 7, "nll_loss_backward _log_softmax_backward_data copy_": 7,
                                    "copy_ copy_ native_layer_norm_backward copy_": 7, "sum copy_ copy_ copy_ native_layer_norm_backward add_": 7}


def test_the_transformers_chains_write_what_the_backward_and_the_next_ops_read():
    _, limits = C.capture("transformer", C.NSYS, steps=True)
    assert sum(1 for c in limits.chains if c.escapes) == 189 and limits.unsized_escapes == 0
    # 1.12 GB a step of values between fused ops are read outside them; with the runs' ends, 9.27 GB.
    assert limits.step_escaping_bytes == 1_116_520_448
    assert limits.step_min_bytes - limits.step_outside_input_bytes - limits.step_escaping_bytes == 8_154_005_512
    kinds = _kinds(limits)
    assert len(kinds) == 21
    # What the backward reads of the forward: each layer norm's fp32 mean and inverse deviation (8,192 rows), ...
    assert kinds[("aten::native_layer_norm", "4x2048x1024", 1, "aten::native_layer_norm_backward")] == (63, 32_768)
    assert kinds[("aten::native_layer_norm", "4x2048x1024", 2, "aten::native_layer_norm_backward")] == (63, 32_768)
    # ... the log-probabilities (fp32) the loss's backward reads; and what the next ops read: the residual stream (the
    # next residual add), the bf16 weight casts (the products), the fp32 gradient casts (AdamW).
    assert kinds[("aten::_log_softmax", "8192x8192", 0, "aten::nll_loss_backward")] == (7, 268_435_456)
    assert kinds[("aten::add", "4x2048x1024, 4x2048x1024", 0, "aten::add")] == (49, 33_554_432)
    assert kinds[("aten::copy_", "3072x1024, 3072x1024", 0, "aten::addmm")] == (28, 6_291_456)
    assert kinds[("aten::copy_", "1024x4096, 1024x4096", 0, "aten::_fused_adamw_")] == (28, 16_777_216)
    # The step's first chain (the first layer norm and the casts of the first product's weights and input): its mean and
    # inverse deviation, and the two weight casts, escape; the layer norm's output is read only by the cast after it.
    first = limits.chains[0]
    assert [(e.op, e.output, e.bytes, e.reader) for e in first.escapes] == [
        ("aten::native_layer_norm", 1, 32_768, "aten::native_layer_norm_backward"),
        ("aten::native_layer_norm", 2, 32_768, "aten::native_layer_norm_backward"),
        ("aten::copy_", 0, 6_144, "aten::addmm"), ("aten::copy_", 0, 6_291_456, "aten::addmm")]
    assert (first.escaping_bytes, first.fused_bytes - first.outside_input_bytes, first.bytes) == (6_363_136, 56_702_976, 113_332_224)


def test_the_bf16_mlps_chains_write_the_casts():
    _, limits = C.capture("call4/mlp_train_bf16", C.NSYS, steps=True)
    assert (limits.steps, len(limits.chains), sum(1 for c in limits.chains if c.escapes)) == (6, 30, 24)
    assert (limits.step_escaping_bytes, limits.step_min_bytes - limits.step_outside_input_bytes) == (125_829_120, 1_715_562_496)
    assert _kinds(limits) == {("aten::copy_", "4096x4096, 4096x4096", 0, "aten::_fused_adamw_"): (6, 67_108_864),  # gradients cast back to fp32
                              ("aten::copy_", "1024x4096, 1024x4096", 0, "aten::_fused_adamw_"): (6, 16_777_216),
                              ("aten::copy_", "4096x1024, 4096x1024", 0, "aten::_fused_adamw_"): (6, 16_777_216),
                              ("aten::copy_", "6144x1024, 6144x1024", 0, "aten::mse_loss_backward"): (6, 25_165_824)}  # fp32 output for the loss
    # GELU and its backward are no run's: each sits between two products, the cast launched after it reads none of its values.
    assert _runs("call4/mlp_train_bf16") == {"copy_ mse_loss": 6, "fill_ mse_loss_backward copy_": 6, "sum copy_ copy_": 18}


def test_the_fp32_mlps_bias_gradients_are_no_run_with_the_activations_backward():
    """A bias gradient's sum and the GELU backward launched after it read different values (the sum the gradient of the
    layer above, the backward the next product's gradient and GELU's input): two kernels, not one run. They were one
    (its fused minimum then missed the backward's two 100.7 MB inputs), and the sums' results escaped to AdamW."""
    _, limits = C.capture("call4/mlp_train_fp32", C.NSYS, steps=True)
    assert _runs("call4/mlp_train_fp32") == {"fill_ mse_loss_backward": 6}
    assert _kinds(limits) == {} and limits.step_escaping_bytes == 0


# -- what the chains' later ops read that no op of theirs made ------------------------------------------------------------

def test_the_transformers_chains_read_the_residual_stream_the_norms_weights_and_the_weights_the_casts_read():
    _, limits = C.capture("transformer", C.NSYS, steps=True)
    assert sum(1 for c in limits.chains if c.outside_inputs) == 189 and limits.unsized_outside_inputs == 0
    # 1.15 GB a step that the chains' ops after the first read and no op of their chain made: a fused minimum of 10.42 GB.
    assert (limits.step_outside_input_bytes, limits.step_min_bytes) == (1_150_058_496, 10_420_584_456)
    inputs = _outside(limits)
    assert len(inputs) == 21 and None not in {op for op, _, _ in inputs}  # each one's producer is in the capture
    # A layer norm's weight and bias (the fp32 ones_ and zeros_ of their init); the residual stream the norm's backward
    # reads (its forward's input, made by the residual add); the gradient casts the products' gradients; the loss's
    # forward its targets; the casts the fp32 weights (sized at the bf16 their kernels' names give, as the casts' own
    # counts size them: nsys records no dtype).
    assert inputs[("aten::fill_", "1024", "aten::native_layer_norm")] == (56, 4_096)
    assert inputs[("aten::zero_", "1024", "aten::native_layer_norm")] == (56, 4_096)
    assert inputs[("aten::add", "4x2048x1024", "aten::native_layer_norm_backward")] == (56, 33_554_432)
    assert inputs[("aten::mm", "1024x4096", "aten::copy_")] == (28, 16_777_216)
    assert inputs[("aten::random_", "8192", "aten::nll_loss_forward")] == (7, 32_768)
    assert inputs[("aten::uniform_", "3072x1024", "aten::copy_")] == (28, 6_291_456)
    # The step's first chain (the first layer norm, the casts of the first product's weight and bias): the casts read
    # the weight and the bias: 63.0 MB fused.
    first = limits.chains[0]
    assert [(i.op, i.sizes, i.bytes, i.reader) for i in first.outside_inputs] == [
        ("aten::uniform_", "3072x1024", 6_291_456, "aten::copy_"), ("aten::uniform_", "3072", 6_144, "aten::copy_")]
    assert (first.outside_input_bytes, first.fused_bytes) == (6_297_600, 63_000_576)
    # Fusion: 1.087x plain and 1.217x replayed at 14f9735 (runs not cut, no outside inputs), 1.063x and 1.156x now.
    plain, replayed = _fusion("transformer")
    assert (round(plain, 3), round(replayed, 3)) == (1.063, 1.156)
    # A bias gradient's sum whose result only its cast uses makes no second pass: 63 runs of 2 passes were, 7 are (the
    # log-softmax's, which reads its row again to scale it).
    assert Counter(c.passes for c in limits.chains) == {1: 217, 2: 7}


def test_the_bf16_mlps_runs_read_what_they_move():
    _, limits = C.capture("call4/mlp_train_bf16", C.NSYS, steps=True)
    assert sum(1 for c in limits.chains if c.outside_inputs) == 30 and limits.unsized_outside_inputs == 0
    # 176 MB a step: a fused minimum of 1.89 GB.
    assert (limits.step_outside_input_bytes, limits.step_min_bytes) == (176_160_768, 1_891_723_264)
    assert _outside(limits) == {("aten::mm", "4096x4096", "aten::copy_"): (6, 67_108_864),  # a weight's gradient, cast to fp32
                                ("aten::mm", "1024x4096", "aten::copy_"): (6, 16_777_216),
                                ("aten::mm", "4096x1024", "aten::copy_"): (6, 16_777_216),
                                ("aten::normal_", "6144x1024", "aten::mse_loss"): (6, 25_165_824),  # the loss's target
                                ("aten::normal_", "6144x1024", "aten::mse_loss_backward"): (6, 25_165_824),
                                ("aten::copy_", "6144x1024", "aten::mse_loss_backward"): (6, 25_165_824)}  # the fp32 output
    # The step's first chain: the output's cast to fp32 and the loss, which reads it and the target.
    first = limits.chains[0]
    assert (first.ops, first.outside_input_bytes, first.fused_bytes, first.bytes) == (2, 25_165_824, 100_663_296, 125_829_120)
    # A bias gradient's sum over 6,144 rows and the two casts after it (its result's, a weight gradient's): the ops after
    # the sum use only the reduced value, so a fused kernel does not read its rows again (one pass; 1.5x to 2x the bytes
    # its kernels move at 87a204b, which charged a pass, and left them unfused). They save the sum's round trip only.
    sums = [c for c in limits.chains if c.ops == 3 and c.fused_bytes != 62_914_560]
    assert (len(sums), {c.passes for c in sums}, sorted({c.bytes - c.fused_kernel_bytes for c in sums})) == (18, {1}, [6_144, 24_576])
    plain, replayed = _fusion("call4/mlp_train_bf16")
    assert (round(plain, 3), round(replayed, 3)) == (1.007, 1.025)


def test_the_fp32_mlps_loss_backward_reads_the_output_and_the_target():
    _, limits = C.capture("call4/mlp_train_fp32", C.NSYS, steps=True)
    assert _outside(limits) == {("aten::addmm", "6144x1024", "aten::mse_loss_backward"): (6, 25_165_824),
                                ("aten::normal_", "6144x1024", "aten::mse_loss_backward"): (6, 25_165_824)}
    assert (limits.step_outside_input_bytes, limits.step_min_bytes) == (50_331_648, 2_902_532_096)
    # Fusion 1.0055x plain at 14f9735 (the sums and the GELU backwards fused), 1.0007x now.
    assert round(remedies.predict(limits, remedies.FUSION).speedup, 4) == 1.0007


def test_the_backward_reads_the_forwards_values_across_threads():
    """The level the chains count: the innermost op whose GPU work made a value. A layer norm's statistics are named by
    the backward (on autograd's thread) as aten::native_layer_norm's outputs 1 and 2; its output by later ops as
    aten::layer_norm's (the outer op, no GPU work of its own), which stands for the inner one."""
    data = C.read("transformer", C.NSYS)
    reads = dataflow.reads(data)
    ops, links = data.ops, data.op_inputs
    names = categories_of(ops["name"])
    tid = np.asarray(ops["tid"], dtype=np.int64)
    assert (len(reads), int((tid[reads.producer] != tid[reads.reader]).sum())) == (5_061, 1_240)
    made = [str(names.categories[names.codes[p]]) for p in reads.producer]
    assert not {"aten::layer_norm", "aten::linear", "aten::to", "aten::t", "aten::view", "aten::detach"} & set(made)
    # The links name aten::layer_norm's output 0 (295: its readers and their inner ops) and aten::native_layer_norm's
    # outputs 1 and 2 (72 each, the backward's); the reads with GPU work are all of aten::native_layer_norm's: its
    # output by the cast before the next product, its statistics by the backward.
    by_id = dict(zip(np.asarray(ops["op_id"]).tolist(), range(len(ops))))
    named = Counter((str(names.categories[names.codes[by_id[p]]]), o) for p, o in zip(links["producer"].tolist(), links["output"].tolist()))
    assert (named[("aten::layer_norm", 0)], named[("aten::native_layer_norm", 0)], named[("aten::native_layer_norm", 1)]) == (295, 0, 72)
    norm = Counter((int(o), str(names.categories[names.codes[r]])) for m, o, r in zip(made, reads.output, reads.reader)
                   if m == "aten::native_layer_norm")
    assert norm == {(0, "aten::copy_"): 72, (1, "aten::native_layer_norm_backward"): 72, (2, "aten::native_layer_norm_backward"): 72}


# -- where nothing escapes, and where it is not known ---------------------------------------------------------------------

def _fusion(name: str, suffix: str = C.NSYS) -> tuple[float, float]:
    """Fusion's plain and replayed speedups on a capture over its steady steps."""
    data = C.read(name, suffix)
    steps = steps_module.measure(data)
    _, limits = C.capture(name, suffix, steps=True)
    return remedies.predict(limits, remedies.FUSION).speedup, predict(data, steps, op_limits=limits).get(remedies.FUSION).speedup


@pytest.mark.parametrize("call", ["", "call4"])
def test_the_eager_chain_is_cut_at_its_iterations_and_its_check_holds(call):
    # No value between the 31 ops is read outside them (a forward under no_grad; the step's output is the last op's).
    # The steps begin at abs, the iteration's fourth op; the runs begin at the iteration's first, where no value made
    # before is read after (each iteration reads x, a and b, made before the loop). The steady steps hold the last 28
    # ops of one iteration, five whole ones and the first 3 ops of the next: each piece is counted for its ops inside the
    # steps (the first piece's first op, the last's last, are outside: their reads and writes are the other piece's).
    name = f"{call}/elementwise_eager" if call else "elementwise_eager"
    _, limits = C.capture(name, C.NSYS, steps=True)
    assert limits.escapes_known and all(c.escapes == () for c in limits.chains)
    assert [(c.ops, c.passes) for c in limits.chains] == [(28, 6)] + [(31, 6)] * 5 + [(3, 6)] and limits.steps == 6
    assert [c.ends_bytes for c in limits.chains] == [2 ** 28] + [2 ** 29 + 16_384] * 5 + [2 ** 28 + 16_384]
    # Later ops read b (the second op's and the sixteenth's: one value, counted once a run, by its first reader inside
    # the steps); x, read by the first op and the residual add, is in the ends; a 0-element out= argument is no read.
    assert [[(i.op, i.sizes, i.bytes, i.reader) for i in c.outside_inputs] for c in limits.chains] == (
        [[]] + [[("aten::mul", "4096", 16_384, "aten::add")]] * 6)
    # The fused minimum: x read, the result written, a and b (fp32, 4,096 each): 805 MB at 14f9735, where the runs were
    # the steps (abs to the next iteration's GELU), which read the previous GELU's result and x both.
    assert (limits.step_escaping_bytes, limits.step_outside_input_bytes, limits.step_min_bytes) == (0, 16_384, 2 ** 29 + 2 * 16_384)
    plain, replayed = _fusion(name)
    measured = C.plain_ms("elementwise", "eager", call) / C.plain_ms("elementwise", "compiled", call)
    # Within 50% of torch.compile's measured speedup: call 1 6.41x plain, 6.40x replayed against 5.92x; call 4 6.35x,
    # 6.33x against 5.94x.
    assert (round(plain, 2), round(replayed, 2), round(measured, 2)) == ((6.41, 6.40, 5.92) if not call else (6.35, 6.33, 5.94))
    assert abs(replayed / measured - 1) < 0.5 and abs(plain / measured - 1) < 0.5


@pytest.mark.parametrize("name", ["transformer", "elementwise_eager", "call4/mlp_train_bf16"])
def test_a_profiler_trace_says_its_escaping_values_are_not_known(name):
    # Its cpu_ops record sizes, dtypes, strides and values, an event index and External id (to their launches), a
    # sequence number (forward to backward), and no tensor's identity: "Record function id" is 0 on every op.
    with gzip.open(C.DATA / f"{name}{C.KINETO}", "rt", encoding="utf-8") as f:
        trace = json.load(f)
    ops = [e for e in trace["traceEvents"] if e.get("cat") == "cpu_op"]
    keys = set().union(*(e["args"] for e in ops))
    assert keys <= {"External id", "Record function id", "Ev Idx", "Concrete Inputs", "Input type", "Input Strides", "Input Dims",
                    "Sequence number", "Fwd thread id"}
    assert {e["args"]["Record function id"] for e in ops} == {0}
    data, limits = C.capture(name, C.KINETO, steps=True)
    assert dataflow.reads(data) is None and limits.chains
    assert all(c.escapes is None for c in limits.chains) and not limits.escapes_known and limits.step_escaping_bytes is None
    assert limits.to_json()["chains"]["escaping_bytes"] is None and limits.to_json()["chains"]["escaping"] is None
    # Nor what the chains' later ops read from outside them: not known, and not in the fused minimum.
    assert all(c.outside_inputs is None and c.fused_bytes == c.ends_bytes for c in limits.chains)
    assert limits.step_outside_input_bytes is None and limits.outside_inputs == ()
    assert limits.to_json()["chains"]["outside_input_bytes"] is None and limits.to_json()["chains"]["outside_inputs"] is None
    p = remedies.predict(limits, remedies.FUSION)
    assert UNKNOWN in p.assumes and "its later ops as reading nothing made outside it" in p.assumes
    if name == "elementwise_eager":  # the figure kept: 6.85x against 5.92x
        assert round(p.speedup, 2) == 6.85 and limits.step_min_bytes == 2 * 2 ** 28


# -- every format ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["table", "markdown", "html", "json"])
def test_every_format_says_the_escaping_values(capsys, monkeypatch, fmt):
    monkeypatch.setenv("COLUMNS", "400")
    known = run_cli(capsys, "timeline", str(C.DATA / f"call4/mlp_train_bf16{C.NSYS}"), "-f", fmt)
    unknown = run_cli(capsys, "timeline", str(C.DATA / f"elementwise_eager{C.KINETO}"), "-f", fmt)
    assert known[0] == 0 and unknown[0] == 0
    if fmt == "json":
        chains = json.loads(known[1])["op_limits"]["chains"]
        assert chains["escaping_bytes"] == 6 * 125_829_120
        assert chains["escaping"][0] == {"op": "aten::copy_", "shapes": "4096x4096, 4096x4096", "output": 0, "reader": "aten::_fused_adamw_",
                                         "calls": 6, "bytes": 6 * 67_108_864}
        assert chains["outside_input_bytes"] == 6 * 176_160_768
        assert chains["outside_inputs"][0] == {"op": "aten::mm", "sizes": "4096x4096", "reader": "aten::copy_", "calls": 6,
                                               "bytes": 6 * 67_108_864}
        assert json.loads(unknown[1])["op_limits"]["chains"]["escaping"] is None
        assert json.loads(unknown[1])["op_limits"]["chains"]["outside_inputs"] is None
        return

    def shown(out: str) -> str:
        text = html.unescape(out) if fmt == "html" else out.replace("\\_", "_") if fmt == "markdown" else out
        return " ".join(text.split())

    assert ("at least 1.89 GB, 126 MB of it values between the fused ops that other ops read, which the fused kernels still write "
            "(nsys's input_op_ids; 4 kinds, the most: aten::copy_'s result 4096x4096, 4096x4096, read by aten::_fused_adamw_); 176 MB of "
            "it values the fused ops after the first read that no op of their run made, which the fused kernels still read (6 kinds, "
            "the most: aten::mm's 4096x4096, read by aten::copy_)") in shown(known[1])
    assert ("at least 537 MB; the values between the fused ops are taken as read nowhere else, and their later ops as reading nothing "
            "made outside the run: " + UNKNOWN) in shown(unknown[1])


# -- the nesting rules, spelled out (SYNTHETIC) ---------------------------------------------------------------------------

def _capture(ops: list[tuple], kernels: list[int]):
    """SYNTHETIC ops (name, op_id, start, end, tid, sizes text, links (input, producer op_id, output)) and the ops that
    launch a kernel (by row), as the nsys reader leaves them."""
    links = [(row, *link) for row, op in enumerate(ops) for link in op[6]]
    table = Events({"start": np.array([o[2] for o in ops], dtype=np.int64), "end": np.array([o[3] for o in ops], dtype=np.int64),
                    "name": Labels.of(o[0] for o in ops), "tid": np.array([o[4] for o in ops], dtype=np.int64),
                    "seq": np.full(len(ops), -1, dtype=np.int64), "op_id": np.array([o[1] for o in ops], dtype=np.int64),
                    "shapes": Labels.of(f"[{o[5]},null,null,null]" for o in ops)})
    inputs = Events({"op": np.array([x[0] for x in links], dtype=np.int64), "input": np.array([x[1] for x in links], dtype=np.int32),
                     "producer": np.array([x[2] for x in links], dtype=np.int64), "output": np.array([x[3] for x in links], dtype=np.int32)})
    at = np.array([(ops[r][2] + ops[r][3]) // 2 for r in kernels], dtype=np.int64)  # each launch inside its op
    api = Events({"start": at, "end": at + 1, "name": Labels.of(["cudaLaunchKernel"] * len(kernels)),
                  "tid": np.array([ops[r][4] for r in kernels], dtype=np.int64), "correlation": np.arange(1, len(kernels) + 1, dtype=np.int64)})
    gpu = Events({"start": at + 10, "end": at + 20, "correlation": np.arange(1, len(kernels) + 1, dtype=np.int64)})
    return SimpleNamespace(ops=table, op_inputs=inputs, api=api, kernels=gpu, copies=None, memsets=None)


X, ROW = "[[8, 4]]", "[[8, 4], [8, 4]]"


def test_wrappers_and_views_stand_for_the_op_whose_work_made_the_value():
    ops = [("aten::add", 1, 0, 10, 1, ROW, []),                                   # 0: makes x
           ("aten::layer_norm", 2, 20, 100, 1, X, [(0, 1, 0)]),                   # 1: outer, no work of its own
           ("aten::native_layer_norm", 3, 30, 90, 1, X, [(0, 1, 0)]),             # 2: its kernel: output, mean, rstd
           ("aten::t", 4, 110, 150, 1, X, [(0, 2, 0)]),                           # 3: a view of layer_norm's result ...
           ("aten::transpose", 5, 115, 145, 1, X, [(0, 2, 0)]),                   # 4
           ("aten::as_strided", 6, 120, 140, 1, X, [(0, 2, 0)]),                  # 5: ... made by its innermost op
           ("aten::mm", 7, 160, 200, 1, ROW, [(0, 4, 0), (1, 1, 0)]),             # 6: reads the view and x
           ("aten::empty_like", 8, 210, 220, 1, X, [(0, 2, 0)]),                  # 7: no work: reads no data
           ("aten::copy_", 9, 230, 260, 1, ROW, [(0, 8, 0), (1, 3, 1)]),          # 8: writes its first input, reads the mean
           ("aten::mul", 10, 300, 320, 2, ROW, [(0, 3, 2), (1, 1, 0)]),           # 9: another thread reads the rstd
           ("aten::sum", 11, 330, 340, 1, "[[], [8, 4]]", [(0, 1, 0)]),           # 10: [] (a wrapped scalar's stale name) says nothing
           ("aten::exp", 12, 350, 360, 1, X, []), ("aten::exp", 12, 370, 380, 1, X, []),  # 11, 12: one op_id twice
           ("aten::neg", 13, 390, 400, 1, X, [(0, 12, 0)])]                       # 13: names it: left out
    data = _capture(ops, kernels=[0, 2, 6, 8, 9, 10, 11, 12, 13])
    reads = dataflow.reads(data)
    got = sorted(zip(reads.producer.tolist(), reads.output.tolist(), reads.reader.tolist()))
    assert got == [(0, 0, 2), (0, 0, 6), (0, 0, 9), (2, 0, 6), (2, 1, 8), (2, 2, 9)]
    assert dataflow.parents(data.ops["start"], data.ops["end"], data.ops["tid"]).tolist() == [-1, -1, 1, -1, 3, 4, -1, -1, -1, -1, -1, -1, -1, -1]


def test_a_run_reads_each_outside_value_once_and_an_unnamed_input_apart():
    """SYNTHETIC: a run of four calls (rows 1-4). Its first reads x and w (made by row 0); row 2 reads w again (in the
    ends already); row 3 reads p, whose producer no link names (a value from before the capture); row 4, a copy_, writes
    its first input (not read) and reads row 3's result (the run's own)."""
    from ncuwrap.timeline.oplimits.analysis import _outside_inputs, _Runs
    from ncuwrap.timeline.oplimits.inputs import parse

    names = ["aten::mul", "aten::add", "aten::mul", "aten::add", "aten::copy_"]
    ops = Events({"start": np.arange(5, dtype=np.int64) * 10, "end": np.arange(5, dtype=np.int64) * 10 + 5, "name": Labels.of(names)})
    flow = dataflow.Reads(producer=np.array([0, 1, 0, 2, 3]), output=np.zeros(5, dtype=np.int64), reader=np.array([1, 2, 2, 3, 4]),
                          input=np.array([1, 0, 1, 0, 1]))
    inputs = {g: (parse(f"[{ROW},null,null,null]"), "fp32", names[g + 1]) for g in range(4)}
    calls = np.array([1, 2, 3, 4])
    args = (flow, SimpleNamespace(ops=ops), _Runs.of(5, calls, np.arange(4), np.array([0, 4])), calls, inputs)
    got = _outside_inputs(*args, np.ones(5, dtype=bool))
    # x (row 1's input 0) has no link either, but a first op's inputs are in the run's ends.
    assert [(i.op, i.sizes, i.bytes, i.reader) for i in got[0]] == [(None, "8x4", 128, "aten::add")]
    # Row 3 outside the steps (the run crosses their edge): what it reads is counted with the steps beyond.
    assert _outside_inputs(*args, np.array([True, True, True, False, True])) == {}


def test_a_run_is_cut_where_no_value_crosses():
    """SYNTHETIC: six calls launched one after another (rows 0-5), as two iterations of a loop: row 0 reads x (made
    before the loop, row 9) and makes y, row 1 reads y and makes z, row 2 reads z and x; rows 3-5 again. No value made
    at or before row 2 is read after it, and x, read on both sides, was made long before (a loop's input): two runs. A
    value made within a step and read on both sides of a gap (a gradient read by a bias's sum and by the next op) keeps
    the gap crossed."""
    from ncuwrap.timeline.oplimits.analysis import _cut

    calls = np.array([0, 1, 1, 2, 3, 4, 5])  # row 1 runs two kernels
    producer, reader = np.array([9, 0, 1, 9, 9, 3, 4, 9]), np.array([0, 1, 2, 2, 3, 4, 5, 5])
    flow = dataflow.Reads(producer=producer, output=np.zeros(8, dtype=np.int64), reader=reader, input=np.zeros(8, dtype=np.int64))
    old = np.zeros(8, dtype=bool)
    assert _cut(np.zeros(7, dtype=np.int64), calls, flow, old).tolist() == [0, 0, 0, 0, 1, 1, 1]
    # x made within the step: read by rows 0, 2, 3 and 5, it keeps one run.
    assert _cut(np.zeros(7, dtype=np.int64), calls, flow, producer == 9).tolist() == [0] * 7
    # Runs already apart stay apart, each cut on its own.
    assert _cut(np.array([0, 0, 0, 0, 1, 1, 1]), calls, flow, old).tolist() == [0, 0, 0, 0, 1, 1, 1]
    assert _cut(np.array([0, 0, 0, 1, 1, 1, 1]), calls, flow, old).tolist() == [0, 0, 0, 1, 2, 2, 2]


def test_a_reduction_brought_back_to_its_rows_is_read_again():
    """SYNTHETIC: calls 0-3 of one run: 0 a mean over rows of 8x4 (result 8x1), 1 adds to it (8x1), 2 takes its rsqrt
    (8x1), 3 multiplies a row (8x4) by it; call 4 a sum (8x4 -> 4) whose result call 5 casts (4). The mean's result
    comes back to its rows two ops later: a fused kernel reads them again; the sum's never does."""
    from ncuwrap.timeline.oplimits.analysis import _Children, _row_again
    from ncuwrap.timeline.oplimits.inputs import parse

    shapes = ["[[8, 4]]", "[[8, 1], []]", "[[8, 1]]", "[[8, 4], [8, 1]]", "[[8, 4]]", "[[4], [4]]"]
    inputs = {g: (parse(f"[{text},null,null,null]"), "fp32", "aten::op") for g, text in enumerate(shapes)}
    flow = dataflow.Reads(producer=np.array([0, 1, 2, 4]), output=np.zeros(4, dtype=np.int64), reader=np.array([1, 2, 3, 5]),
                          input=np.array([0, 0, 1, 1]))
    calls = np.arange(6)  # each call its own group
    children = _Children(flow, np.zeros(6, dtype=np.int64))  # calls are rows 0-5: each call's run by op row
    assert [_row_again(c, children, calls, inputs) for c in (0, 4)] == [True, False]
    # Cut after call 2 (another run), the mean's result never comes back to its rows in its run.
    assert _row_again(0, _Children(flow, np.array([0, 0, 0, 1, 1, 1])), calls, inputs) is False


def test_a_tensor_passed_twice_is_read_once():
    """d * d and y * y (the eager chain's variance and RMS): nsys's dataflow names one producer for both inputs, so the
    count reads the tensor once; at 14f9735 it read both, and the op ran at 132% of HBM's peak by its count. The
    profiler's trace records no tensor identity: there it still reads both operands (as the hand count by operand)."""
    rows = {}
    for suffix in (C.NSYS, C.KINETO):
        _, limits = C.capture("elementwise_eager", suffix, steps=True)
        rows[suffix] = next(r for r in limits.rows if r.op == "aten::mul" and r.shapes == "16384x4096, 16384x4096")
    nsys, kineto = rows[C.NSYS], rows[C.KINETO]
    assert (nsys.calls, nsys.bytes, nsys.written) == (12, 12 * 2 * 2 ** 28, 12 * 2 ** 28)
    assert (kineto.calls, kineto.bytes) == (6, 6 * 3 * 2 ** 28)
    assert nsys.bytes / (nsys.time_ns * 1e-9) < nsys.peak_bytes_per_s < kineto.bytes / (kineto.time_ns * 1e-9)


def test_which_inputs_are_one_tensor_passed_twice():
    """SYNTHETIC: the links of four calls (rows 1-4) to the values of rows 0 and 5. Row 1 reads row 0's output twice at
    one size; row 2 reads it twice at two sizes (a view at the same address: not the same data); row 3 once and a value
    ([]); row 4 reads rows 0's and 5's."""
    from ncuwrap.timeline.oplimits.inputs import parse

    ops = [("aten::add", 1, 0, 10, 1, ROW, []),
           ("aten::mul", 2, 20, 30, 1, ROW, [(0, 1, 0), (1, 1, 0)]),
           ("aten::mul", 3, 40, 50, 1, "[[8, 4], [4]]", [(0, 1, 0), (1, 1, 0)]),
           ("aten::mul", 4, 60, 70, 1, "[[8, 4], []]", [(0, 1, 0), (1, 1, 0)]),
           ("aten::mul", 5, 80, 90, 1, ROW, [(0, 1, 0), (1, 6, 0)]),
           ("aten::add", 6, 15, 18, 1, ROW, [])]
    data = _capture(ops, kernels=[0, 1, 2, 3, 4, 5])
    readers = dataflow.Readers(data)
    got = [readers.same_inputs(np.array([r]), parse(f"[{ops[r][5]},null,null,null]")) for r in (1, 2, 3, 4)]
    assert got == [frozenset({1}), frozenset(), frozenset(), frozenset()]
    # Over calls of one row: only what every call says.
    assert readers.same_inputs(np.array([1, 4]), parse(f"[{ROW},null,null,null]")) == frozenset()
    # A link to an input position the op does not have (a hostile file's 10**12, or -1) names no tensor.
    data.op_inputs = Events({"op": np.array([1, 1, 1]), "input": np.array([0, 10 ** 12, -1], dtype=np.int64),
                             "producer": np.array([1, 1, 1]), "output": np.array([0, 0, 0])})
    assert dataflow.Readers(data).same_inputs(np.array([1]), parse(f"[{ROW},null,null,null]")) == frozenset()
