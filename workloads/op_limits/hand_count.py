#!/usr/bin/env python3
"""Hand counts of the op_limits programs (and of workloads/clock's mlp_train and elementwise): the FLOPs and
the minimal bytes of one step, op by op, as exact integers. Pure Python (no torch): the programs print these
counts in their JSON lines, and ``python3 hand_count.py PROGRAM [--option value ...]`` prints one as JSON.

Conventions, the same for every program:

- A multiply-add counts two FLOPs. A matrix product of an (m x k) and a (k x n) matrix: 2 m n k FLOPs.
- Minimal bytes of an op: each distinct input tensor read once, each output written once, at its dtype's size
  (fp32 4, bf16 2, fp8 1 bytes). An op that takes the same tensor twice (``d * d``) reads it once.
- Backward ops are counted by their forward op's shapes: a linear layer's backward is two matrix products (the
  input's gradient, skipped where the input needs none, and the weight's), each as many FLOPs as the forward.
- Causal attention is half of the full QK^T and PV products (exactly half: the diagonal's n/2 extra entries
  are not counted); its backward is twice its forward (dV, dP, dQ, dK). A flash-style backward kernel also
  recomputes QK^T: that recomputation is given apart (``recompute_flop``), not in the step's FLOPs.
- What a count leaves out is said in its ``counted`` line (e.g. the elementwise ops of a training step).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field

SIZE = {"fp32": 4, "tf32": 4, "bf16": 2, "fp8": 1}


@dataclass(frozen=True)
class Op:
    """One op of a step: ``calls`` a step, each ``flop`` FLOPs (None: not counted) and ``bytes`` minimal bytes."""

    op: str
    calls: int
    flop: int | None
    bytes: int
    dtype: str
    shapes: str = ""

    def to_json(self) -> dict:
        return {"op": self.op, "calls": self.calls, "flop": self.flop, "bytes": self.bytes, "dtype": self.dtype, "shapes": self.shapes}


@dataclass(frozen=True)
class Count:
    """A program's hand count: its ops a step, what is counted, and figures beside the ops (``extra``)."""

    program: str
    variant: str
    counted: str
    ops: tuple[Op, ...]
    extra: dict = field(default_factory=dict)

    @property
    def step_flop(self) -> int | None:
        if any(o.flop is None for o in self.ops):
            return None
        return sum(o.calls * o.flop for o in self.ops)

    @property
    def step_bytes(self) -> int:
        return sum(o.calls * o.bytes for o in self.ops)

    def to_json(self) -> dict:
        return {"hand_program": self.program, "hand_variant": self.variant, "hand_step_flop": self.step_flop,
                "hand_step_bytes": self.step_bytes, "hand_counted": self.counted, **{f"hand_{k}": v for k, v in self.extra.items()},
                "hand_ops": [o.to_json() for o in self.ops]}


def mm(name: str, m: int, n: int, k: int, a: int, b: int, c: int, calls: int = 1, dtype: str = "", bias: int = 0) -> Op:
    """(m x k) @ (k x n) with element sizes a, b (inputs) and c (output) bytes; ``bias``: bytes of a bias read too."""
    return Op(name, calls, 2 * m * n * k, m * k * a + k * n * b + m * n * c + bias, dtype, f"({m}x{k}) @ ({k}x{n})")


# ------------------------------------------------------------------------------------------- matmul.py


def matmul(dtype: str, n: int = 8192) -> Count:
    """C = A @ B, n x n x n: 2 n^3 FLOPs; A and B read, C written (fp8: 1-byte inputs, bf16 output, two fp32 scales)."""
    if dtype == "fp8":
        op = mm("aten::_scaled_mm", n, n, n, 1, 1, 2, dtype="fp8 e4m3 -> bf16", bias=2 * 4)
    else:
        op = mm("aten::mm", n, n, n, SIZE[dtype], SIZE[dtype], SIZE[dtype], dtype=dtype)
    return Count("matmul", dtype, "the one matrix product a step", (op,))


# --------------------------------------------------------------------------------------------- conv.py


def conv(batch: int = 64, cin: int = 256, cout: int = 256, hw: int = 56, kernel: int = 3, pad: int = 1, dtype: str = "bf16") -> Count:
    """Conv2d forward 2 N K C R S P Q FLOPs; backward the input's and the weight's gradients, each as many."""
    s = SIZE[dtype]
    p = hw + 2 * pad - kernel + 1
    flop = 2 * batch * cout * cin * kernel * kernel * p * p
    x, w, y = batch * cin * hw * hw * s, cout * cin * kernel * kernel * s, batch * cout * p * p * s
    shapes = f"x {batch}x{cin}x{hw}x{hw}, w {cout}x{cin}x{kernel}x{kernel}, y {batch}x{cout}x{p}x{p}"
    ops = (Op("convolution (forward)", 1, flop, x + w + y, dtype, shapes),
           Op("convolution_backward (input gradient)", 1, flop, y + w + x, dtype, shapes),
           Op("convolution_backward (weight gradient)", 1, flop, y + x + w, dtype, shapes))
    return Count("conv", dtype, "the convolution's forward and its two backward products (no bias, no loss: backward of a given gradient)", ops)


# ---------------------------------------------------------------------------------------- transformer.py


def linear_ops(name: str, tokens: int, fan_in: int, fan_out: int, s: int, bias: bool, input_grad: bool = True, dtype: str = "bf16") -> list[Op]:
    """A linear layer in a training step: forward (addmm, or mm without bias), the input's gradient (mm,
    unless the input needs none) and the weight's (mm)."""
    ops = [mm(f"{name} forward ({'addmm' if bias else 'mm'})", tokens, fan_out, fan_in, s, s, s, dtype=dtype, bias=fan_out * s if bias else 0)]
    if input_grad:
        ops.append(mm(f"{name} input gradient (mm)", tokens, fan_in, fan_out, s, s, s, dtype=dtype))
    ops.append(mm(f"{name} weight gradient (mm)", fan_out, fan_in, tokens, s, s, s, dtype=dtype))
    return ops


def transformer(layers: int = 4, dim: int = 1024, heads: int = 16, seq: int = 2048, batch: int = 4, vocab: int = 8192) -> Count:
    """Pre-norm decoder blocks (qkv, causal SDPA, proj; fc1 4d, GELU, fc2), an LM head, bf16 autocast: the
    matrix products and the attention of one training step."""
    s = SIZE["bf16"]
    tokens = batch * seq
    per_layer: list[Op] = []
    for name, fi, fo in (("qkv", dim, 3 * dim), ("proj", dim, dim), ("fc1", dim, 4 * dim), ("fc2", 4 * dim, dim)):
        per_layer += linear_ops(name, tokens, fi, fo, s, bias=True)
    qkvo = batch * seq * dim * s  # one of q, k, v, o (or their gradients), bf16
    lse = batch * heads * seq * 4  # the row log-sum-exp the forward saves, fp32
    full = 4 * batch * seq * seq * dim  # QK^T and PV, both full: 2 * (2 B h S^2 dh)
    shapes = f"q, k, v {batch}x{heads}x{seq}x{dim // heads}, causal"
    per_layer.append(Op("scaled_dot_product_attention (forward)", 1, full // 2, 4 * qkvo + lse, "bf16", shapes))
    per_layer.append(Op("scaled_dot_product_attention (backward)", 1, full, 8 * qkvo + lse, "bf16", shapes))
    ops = [Op(o.op, o.calls * layers, o.flop, o.bytes, o.dtype, o.shapes) for o in per_layer]
    ops += linear_ops("lm_head", tokens, dim, vocab, s, bias=False)
    recompute = layers * (full // 4)  # the backward's QK^T again, causal
    return Count("transformer", "bf16", "matrix products (linear layers, LM head) and attention; not the layer norms, GELU, residual adds, "
                 "embedding, cross-entropy, autocast casts or AdamW", tuple(ops),
                 {"recompute_flop": recompute, "layers": layers, "tokens": tokens})


# ------------------------------------------------------------------------- workloads/clock/mlp_train.py


def mlp_train(dtype: str, batch: int = 6144, dims: tuple[int, ...] = (1024, 4096, 4096, 1024)) -> Count:
    """mlp_train.py's matrix products: forward, weight gradient, and the input gradient of every layer but
    the first (its input, the data, needs no gradient)."""
    s = SIZE[dtype]
    ops: list[Op] = []
    for i, (a, b) in enumerate(zip(dims, dims[1:])):
        ops += linear_ops(f"linear{i} {a}->{b}", batch, a, b, s, bias=True, input_grad=i > 0, dtype=dtype)
    naive = 6 * sum(a * b for a, b in zip(dims, dims[1:])) * batch
    return Count("mlp_train", dtype, "matrix products only (not GELU, MSE, bias gradients, autocast casts or AdamW)", tuple(ops),
                 {"six_n_flop": naive})


# ----------------------------------------------------------------------- workloads/clock/elementwise.py

# elementwise.py's chain, op by op as eager PyTorch runs it: (op, inputs, output). X: a rows x cols fp32
# tensor; C: a row of cols (a, b); R: a column of rows (per-row statistics); "XX": the same X twice.
CHAIN = (
    ("mul (x * a)", "XC", "X"), ("add (+ b)", "XC", "X"), ("gelu", "X", "X"), ("abs", "X", "X"), ("neg", "X", "X"),
    ("exp", "X", "X"), ("softmax", "X", "X"), ("mean (row)", "X", "R"), ("sub (y - m)", "XR", "X"),
    ("mul (d * d)", "XX", "X"), ("mean (row)", "X", "R"), ("add (v + 1e-5)", "R", "R"), ("rsqrt", "R", "R"),
    ("mul (d * rsqrt)", "XR", "X"), ("mul (y * a)", "XC", "X"), ("add (+ b)", "XC", "X"), ("tanh", "X", "X"),
    ("sigmoid", "X", "X"), ("mul (* 0.5)", "X", "X"), ("add (tanh + sigmoid)", "XX2", "X"), ("sum (row)", "X", "R"),
    ("div (s / cols)", "R", "R"), ("sub (y - s / cols)", "XR", "X"), ("clamp", "X", "X"), ("mul (y * y)", "XX", "X"),
    ("mean (row)", "X", "R"), ("add (+ 1e-6)", "R", "R"), ("rsqrt", "R", "R"), ("mul (y * r)", "XR", "X"),
    ("silu", "X", "X"), ("add (+ x)", "XX2", "X"),
)


def elementwise(mode: str, rows: int = 16384, cols: int = 4096) -> Count:
    """The 31 eager ops' minimal bytes (each op reads its inputs once and writes its output once), and the
    fused minimum: x, a and b read once, the result written once. FLOPs are not counted: the chain is
    memory-bound, and its transcendental ops have no agreed FLOP count."""
    size = {"X": rows * cols * 4, "C": cols * 4, "R": rows * 4}

    def read(inputs: str) -> int:
        if inputs == "XX":  # one tensor, used twice
            return size["X"]
        if inputs == "XX2":  # two different rows x cols tensors
            return 2 * size["X"]
        return sum(size[t] for t in inputs)

    eager = tuple(Op(name, 1, None, read(i) + size[o], "fp32", f"{i} -> {o}") for name, i, o in CHAIN)
    by_operand = sum(size["X"] * 2 if i == "XX" else read(i) for _, i, _ in CHAIN) + sum(size[o] for _, _, o in CHAIN)
    fused = 2 * size["X"] + 2 * size["C"]
    extra = {"eager_step_bytes": sum(o.bytes for o in eager), "eager_step_bytes_by_operand": by_operand, "fused_min_bytes": fused,
             "tensor_bytes": size["X"], "aten_ops": len(CHAIN)}
    if mode == "eager":
        return Count("elementwise", mode, "bytes of the 31 eager ops (FLOPs not counted)", eager, extra)
    fused_op = Op("the chain, fused (x, a, b read once; the result written once)", 1, None, fused, "fp32", "X C C -> X")
    return Count("elementwise", mode, "the fused minimum: x, a and b read once, the result written once (FLOPs not counted)", (fused_op,), extra)


def count(program: str, **kw) -> Count:
    table = {"matmul": matmul, "conv": conv, "transformer": transformer, "mlp_train": mlp_train, "elementwise": elementwise}
    return table[program](**kw)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("program", choices=["matmul", "conv", "transformer", "mlp_train", "elementwise"])
    p.add_argument("variant", help="matmul: fp32|tf32|bf16|fp8; mlp_train: fp32|bf16; elementwise: eager|compiled; conv, transformer: bf16")
    args = p.parse_args()
    if args.program in ("matmul", "mlp_train"):
        c = count(args.program, dtype=args.variant)
    elif args.program == "elementwise":
        c = count(args.program, mode=args.variant)
    elif args.program == "conv":
        c = count(args.program, dtype=args.variant)
    else:
        c = count(args.program)
    print(json.dumps(c.to_json()))


if __name__ == "__main__":
    main()
