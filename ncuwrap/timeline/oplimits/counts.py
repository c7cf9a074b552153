"""Each op's FLOPs and minimal bytes from its inputs (:mod:`ncuwrap.timeline.oplimits.inputs`).

**FLOPs** count a multiply-add as two:

- matrix products (``mm``, ``addmm``, ``bmm``, ``baddbmm``, ``matmul``, ``linear``, ``_scaled_mm``, ``mv``,
  ``dot``): 2·m·k·n per product (batched: times the batch), plus m·n for an added bias or ``self``;
- convolutions (``convolution``, ``_convolution``, ``cudnn_convolution``, ``conv1d/2d/3d``, their
  transposed forms, ``convolution_backward``): 2·N·C_out·prod(output)·(C_in/groups)·prod(kernel), plus
  N·C_out·prod(output) for a bias; the backward, that once for each of grad_input and grad_weight it
  computes (``output_mask``) plus the bias gradient's sum;
- attention (SDPA: flash, memory-efficient and cuDNN kernels, forward and backward, by the layout each
  op takes: [B, H, L, E] for ``_scaled_dot_product_*`` and ``_cudnn_attention_*``, [B, L, H, E] for
  ``_flash_attention_*`` and ``_efficient_attention_*``): forward 2·B·H·P·(E + Ev), backward
  2·B·H·P·(3E + 2Ev) (QKᵀ recomputed, then dV, dP, dQ, dK), where P is the (query, key) pairs the mask
  keeps: L·S, or under a causal mask sum over queries i of min(i + 1, S) (PyTorch's top-left mask; L·(L+1)/2,
  about half, for L = S); H is the query heads (GQA: the key/value heads are read, not multiplied);
- elementwise ops: one FLOP per output element for arithmetic ones, none for copies, casts and fills;
  reductions one per input element; normalisations (layer, RMS, group, batch norm) and softmax a fixed
  number per element (:data:`PER_ELEMENT`): these ops are bounded by memory, so the FLOP count is a
  convention that never decides their limit.

**Minimal bytes**: every tensor input read once (an ``expand``ed input's repeated elements once: a
dimension of stride 0 counts one), every output written once, at the dtypes recorded. An op whose
inputs lack what a count needs (a dtype, a stride or a padding nsys does not record, a list of tensors
PyTorch left out) is :class:`NotModelled` with the reason; an op name not here is not modelled at all.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from ncuwrap.timeline.oplimits.inputs import FLOATING, SCALAR_TYPES, BYTES, OpInputs, Tensor, TensorList, Value

# What kind of work an op is: which limit can bind it, and which remedy applies.
MATMUL, CONV, ATTENTION = "matrix product", "convolution", "attention"
ELEMENTWISE, REDUCTION, NORM, SOFTMAX, COPY, EMBEDDING = "elementwise", "reduction", "normalisation", "softmax", "copy", "embedding"
TENSOR_KINDS = (MATMUL, CONV, ATTENTION)  # run on tensor cores where the dtype allows
OPTIMIZER = "optimizer"
MEMORY_KINDS = (ELEMENTWISE, REDUCTION, NORM, SOFTMAX, COPY, EMBEDDING, OPTIMIZER)

# FLOPs per element of the normalisations and softmax (mean, variance, normalise, affine; max, subtract,
# exponent, sum, divide): a convention, memory bounds these ops.
PER_ELEMENT = {"layer_norm": 8, "layer_norm_backward": 12, "rms_norm": 5, "rms_norm_backward": 8, "group_norm": 8, "group_norm_backward": 12,
               "batch_norm": 8, "batch_norm_backward": 12, "softmax": 5, "softmax_backward": 3, "adam": 12}


@dataclass(frozen=True)
class Work:
    """An op's work: FLOPs, minimal bytes (None: a dtype is unknown), the dtype its arithmetic takes, and
    for a convolution whether the op allowed TF32 (None: not recorded)."""

    kind: str
    flop: int
    bytes: int | None
    dtype: str | None
    shapes: str  # the sizes that made the count, as a reader writes them ("6144x1024 @ 1024x4096")
    allow_tf32: bool | None = None
    written: int | None = None  # of ``bytes``, those written (a memory-bound op's outputs; None: not told apart)
    weights: int = 0  # elements of its weight operands (a matrix product's second matrix and bias, a convolution's weight and bias)
    weight_tensors: int = 0  # how many tensors those are (autocast casts each one: a launch)
    row: int | None = None  # a reduction's, softmax's or normalisation's elements reduced into each result (None: not one, or not recorded)
    gemm: Gemm | None = None  # a matrix product's sizes as its GEMM (None: not a matrix product)
    # ``written`` by output, in the op's order, where it has more than one (None: its one output is all it writes)
    outputs: tuple[int | None, ...] | None = None

    @property
    def read(self) -> int | None:
        return self.bytes - self.written if self.bytes is not None and self.written is not None else None

    def output_bytes(self, output: int) -> int | None:
        """The bytes of its output number ``output`` (None: not counted apart, or no such output)."""
        if self.outputs is not None:
            return self.outputs[output] if 0 <= output < len(self.outputs) else None
        return self.written if output == 0 else None


@dataclass(frozen=True)
class Gemm:
    """A matrix product as the GEMM its kernels run: ``batch`` products of an m x k matrix by a k x n one (a batch
    broadcast over a single second matrix folded into m, as torch.matmul folds it), and the minimal bytes of each
    operand (None: its dtype unknown). ``bias_spans``: the dims the added bias (or ``self``) grows with: "n" for a row
    broadcast over m, "mn" for a whole matrix, "m" for a column, "" for one that grows with neither."""

    batch: int
    m: int
    n: int
    k: int
    a_bytes: int | None
    b_bytes: int | None
    out_bytes: int | None
    bias_bytes: int | None = 0
    bias_spans: str = ""


def _spans(bias: Tensor | None, m: int, n: int) -> str:
    """The dims of an m x n product a bias grows with: its last dim n, its one before m (each of more than one element,
    and not broadcast: stride 0)."""
    if bias is None or not bias.dims:
        return ""
    dims = bias.dims
    strides = bias.strides if bias.strides is not None and len(bias.strides) == len(dims) else (1,) * len(dims)
    rows = len(dims) >= 2 and dims[-2] == m and m > 1 and strides[-2] != 0
    cols = dims[-1] == n and n > 1 and strides[-1] != 0
    return ("m" if rows else "") + ("n" if cols else "")


@dataclass(frozen=True)
class KernelFacts:
    """What an op's kernels (and ops paired with it) say that its recorded inputs do not: nsys records sizes only."""

    out_dtype: str | None = None  # a matrix product's result dtype (cuBLAS's nvjet kernel names it)
    grads: tuple[bool, bool, bool] | None = None  # a convolution backward's gradients: input, weight, bias (its kernels)
    grads_how: str = ""
    output: tuple[int, ...] | None = None  # a convolution's output sizes: its backward's gradient's (the sequence number pairs them);
    # a reduction's: what the ops that read its result recorded (nsys's input_op_ids, ncuwrap.timeline.oplimits.dataflow)
    last_dim: bool = False  # a softmax's kernels reduce over the last dimension (PyTorch's cunn_SoftMax*, softmax_warp_*)
    forward: OpInputs | None = None  # a backward op's forward op's inputs (the sequence number pairs them)
    same: frozenset[int] = frozenset()  # input positions that are an earlier input again (nsys's input_op_ids): read once


NO_FACTS = KernelFacts()


@dataclass(frozen=True)
class NotModelled:
    """An op of a modelled name whose inputs do not give its count, and why. An attention op whose inputs give all
    but whether its mask is causal (nsys records sizes only; no mask tensor recorded) carries its two possible
    counts: under PyTorch's causal mask and under none."""

    reason: str
    if_causal: Work | None = None
    if_full: Work | None = None


def _x(dims) -> str:
    return "x".join(str(d) for d in dims) if dims else "scalar"


def _nb(t: Tensor | None, dtype: str | None = None, *, numel: int | None = None) -> int | None:
    """Bytes of ``t`` (its distinct elements; ``numel`` of them where given) at its dtype, else ``dtype``."""
    if t is None:
        return 0
    size = BYTES.get(t.dtype or dtype or "")
    if size is None:
        return None
    return size * (t.stored if numel is None else numel)


tensor_bytes = _nb  # an input's bytes as the counts size it (a fused chain's reads of values made outside it)


def _total(*parts) -> int | None:
    return None if any(p is None for p in parts) else sum(parts)


def _out(numel: int, dtype: str | None) -> int | None:
    size = BYTES.get(dtype or "")
    return None if size is None else size * numel


# -- matrix products ------------------------------------------------------------------------------

def _mm(a: Tensor, b: Tensor, bias: Tensor | None, hint: str | None, out_dtype: str | None = None) -> Work | NotModelled:
    if len(a.dims) != 2 or len(b.dims) != 2 or a.dims[1] != b.dims[0]:
        return NotModelled(f"sizes {_x(a.dims)} @ {_x(b.dims)} are not a matrix product")
    m, k = a.dims
    n = b.dims[1]
    dtype = a.dtype or b.dtype or hint
    flop = 2 * m * k * n + (m * n if bias is not None else 0)
    out = _out(m * n, out_dtype or dtype)
    gemm = Gemm(1, m, n, k, _nb(a, hint), _nb(b, hint), out, _nb(bias, hint), _spans(bias, m, n))
    return Work(MATMUL, flop, _total(_nb(a, hint), _nb(b, hint), _nb(bias, hint), out), dtype,
                f"{_x(a.dims)} @ {_x(b.dims)}" + (f" + {_x(bias.dims)}" if bias is not None else ""),
                weights=b.stored + (bias.stored if bias is not None else 0), weight_tensors=1 + (bias is not None), written=out, gemm=gemm)


def _bmm(a: Tensor, b: Tensor, bias: Tensor | None, hint: str | None) -> Work | NotModelled:
    if len(a.dims) != 3 or len(b.dims) != 3 or a.dims[0] != b.dims[0] or a.dims[2] != b.dims[1]:
        return NotModelled(f"sizes {_x(a.dims)} @ {_x(b.dims)} are not a batched matrix product")
    batch, m, k = a.dims
    n = b.dims[2]
    dtype = a.dtype or b.dtype or hint
    flop = 2 * batch * m * k * n + (batch * m * n if bias is not None else 0)
    out = _out(batch * m * n, dtype)
    gemm = Gemm(batch, m, n, k, _nb(a, hint), _nb(b, hint), out, _nb(bias, hint), _spans(bias, m, n))
    return Work(MATMUL, flop, _total(_nb(a, hint), _nb(b, hint), _nb(bias, hint), out), dtype, written=out,
                shapes=f"{_x(a.dims)} @ {_x(b.dims)}" + (f" + {_x(bias.dims)}" if bias is not None else ""), gemm=gemm)


def _broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """NumPy's broadcast of ``shapes``; None where they do not broadcast."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        sizes = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0} - {1}
        if len(sizes) > 1:
            return None
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _matmul(a: Tensor, b: Tensor, bias: Tensor | None, hint: str | None, *, weight_rows: bool = False) -> Work | NotModelled:
    """torch.matmul's broadcasting (``weight_rows``: ``b`` is a linear layer's [out, in] weight)."""
    bd = tuple(reversed(b.dims)) if weight_rows and len(b.dims) == 2 else b.dims
    if not a.dims or not bd:
        return NotModelled("a scalar operand")
    ad = a.dims if len(a.dims) > 1 else (1,) + a.dims
    bd2 = bd if len(bd) > 1 else bd + (1,)
    if ad[-1] != bd2[-2]:
        return NotModelled(f"sizes {_x(a.dims)} @ {_x(b.dims)} do not multiply")
    batch = _broadcast(ad[:-2], bd2[:-2])
    if batch is None:
        return NotModelled(f"batch sizes {_x(a.dims)} @ {_x(b.dims)} do not broadcast")
    m, k, n = ad[-2], ad[-1], bd2[-1]
    count = math.prod(batch)
    dtype = a.dtype or b.dtype or hint
    out = count * m * n
    flop = 2 * count * m * k * n + (out if bias is not None else 0)
    # One second matrix: torch.matmul folds the first operand's batch into its rows (one GEMM of count*m rows).
    folded = len(bd2) == 2
    rows, products = (count * m, 1) if folded else (m, count)
    gemm = Gemm(products, rows, n, k, _nb(a, hint), _nb(b, hint), _out(out, dtype), _nb(bias, hint), _spans(bias, rows, n))
    return Work(MATMUL, flop, _total(_nb(a, hint), _nb(b, hint), _nb(bias, hint), _out(out, dtype)), dtype,
                f"{_x(a.dims)} @ {_x(b.dims)}" + ("ᵀ" if weight_rows else "") + (f" + {_x(bias.dims)}" if bias is not None else ""),
                weights=b.stored + (bias.stored if bias is not None else 0), weight_tensors=1 + (bias is not None),
                written=_out(out, dtype), gemm=gemm)


def _two(x: OpInputs, i: int, j: int) -> tuple[Tensor, Tensor] | NotModelled:
    a, b = x.tensor(i), x.tensor(j)
    if a is None or b is None:
        return NotModelled("its operands' sizes are not recorded")
    return a, b


def mm(x: OpInputs, hint: str | None) -> Work | NotModelled:
    ab = _two(x, 0, 1)
    return ab if isinstance(ab, NotModelled) else _mm(*ab, None, hint)


def addmm(x: OpInputs, hint: str | None) -> Work | NotModelled:
    ab = _two(x, 1, 2)
    return ab if isinstance(ab, NotModelled) else _mm(*ab, x.tensor(0), hint)


def bmm(x: OpInputs, hint: str | None) -> Work | NotModelled:
    ab = _two(x, 0, 1)
    return ab if isinstance(ab, NotModelled) else _bmm(*ab, None, hint)


def baddbmm(x: OpInputs, hint: str | None) -> Work | NotModelled:
    ab = _two(x, 1, 2)
    return ab if isinstance(ab, NotModelled) else _bmm(*ab, x.tensor(0), hint)


def matmul(x: OpInputs, hint: str | None) -> Work | NotModelled:
    ab = _two(x, 0, 1)
    return ab if isinstance(ab, NotModelled) else _matmul(*ab, None, hint)


def linear(x: OpInputs, hint: str | None) -> Work | NotModelled:
    ab = _two(x, 0, 1)
    return ab if isinstance(ab, NotModelled) else _matmul(*ab, x.tensor(2), hint, weight_rows=True)


def scaled_mm(x: OpInputs, hint: str | None, out_hint: str | None = None) -> Work | NotModelled:
    """``_scaled_mm(self, mat2, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum)``: FP8 operands,
    the result in ``out_dtype`` (recorded, else ``out_hint``, the kernel's name's; unknown bytes without either)."""
    ab = _two(x, 0, 1)
    if isinstance(ab, NotModelled):
        return ab
    out_code = x.value(6).integer() if x.value(6) is not None else None
    out_dtype = SCALAR_TYPES.get(out_code) if out_code is not None else None
    if out_dtype is None and x.full and x.value(6) is not None and x.value(6).text is not None:
        return NotModelled(f"out_dtype {x.value(6).text} is not a dtype known here")
    if out_dtype is None and not x.full:
        out_dtype = out_hint
    work = _mm(*ab, x.tensor(4), hint, out_dtype=out_dtype)
    if isinstance(work, Work) and out_dtype is None:
        return dataclasses.replace(work, bytes=None, written=None, gemm=dataclasses.replace(work.gemm, out_bytes=None))  # the result's size is not known
    if isinstance(work, Work):
        scales = _total(_nb(x.tensor(2), "fp32"), _nb(x.tensor(3), "fp32"))
        work = dataclasses.replace(work, bytes=_total(work.bytes, scales))
    return work


def mv(x: OpInputs, hint: str | None) -> Work | NotModelled:
    ab = _two(x, 0, 1)
    if isinstance(ab, NotModelled):
        return ab
    a, v = ab
    if len(a.dims) != 2 or len(v.dims) != 1 or a.dims[1] != v.dims[0]:
        return NotModelled(f"sizes {_x(a.dims)} @ {_x(v.dims)} are not a matrix-vector product")
    dtype = a.dtype or v.dtype or hint
    gemm = Gemm(1, a.dims[0], 1, a.dims[1], _nb(a, hint), _nb(v, hint), _out(a.dims[0], dtype))
    return Work(MATMUL, 2 * a.dims[0] * a.dims[1], _total(_nb(a, hint), _nb(v, hint), _out(a.dims[0], dtype)), dtype,
                f"{_x(a.dims)} @ {_x(v.dims)}", gemm=gemm)


# -- convolutions ---------------------------------------------------------------------------------

def _ints(v: Value | None, n: int) -> tuple[int, ...] | None:
    """A convolution's stride/padding/dilation: a list of n (one value repeated) or None."""
    if v is None:
        return None
    values = v.integers()
    if values is None:
        single = v.integer()
        values = (single,) if single is not None else None
    if values is None or any(i < 0 for i in values):
        return None
    if len(values) == 1:
        return values * n
    return values if len(values) == n else None


def _conv(x: OpInputs, hint: str | None, *, bias: Tensor | None, stride: int, padding: int, dilation: int, transposed: bool | None,
          output_padding: int | None, tf32: int | None, groups: int | None = None, output: tuple[int, ...] | None = None) -> Work | NotModelled:
    """A convolution of input ``x.tensor(0)`` by weight ``x.tensor(1)``; the other arguments are positions."""
    inp, weight = x.tensor(0), x.tensor(1)
    if inp is None or weight is None:
        return NotModelled("its input's or weight's sizes are not recorded")
    spatial = len(weight.dims) - 2
    if spatial < 1 or len(inp.dims) != spatial + 2:
        return NotModelled(f"sizes {_x(inp.dims)} by {_x(weight.dims)} are not a convolution")
    n, c_in, ins = inp.dims[0], inp.dims[1], inp.dims[2:]
    kernel = weight.dims[2:]
    if transposed is None:
        return NotModelled("whether it is transposed is not recorded")
    allow = x.value(tf32).boolean() if tf32 is not None and x.value(tf32) is not None else None
    dtype = inp.dtype or weight.dtype or hint
    if transposed:
        # weight [C_in, C_out/groups, k...]: each input element meets C_out/groups x kernel weights.
        c_out_g = weight.dims[1]
        macs = n * c_in * math.prod(ins) * c_out_g * math.prod(kernel)
        s, p, d = (_ints(x.value(i), spatial) for i in (stride, padding, dilation))
        op = _ints(x.value(output_padding), spatial) if output_padding is not None else (0,) * spatial
        count = x.value(groups).integer() if groups is not None and x.value(groups) is not None else None
        outs = None
        if s and p and d and op is not None:
            outs = tuple((i - 1) * si - 2 * pi + di * (k - 1) + oi + 1 for i, si, pi, di, k, oi in zip(ins, s, p, d, kernel, op))
        c_out = c_out_g * count if count else None
        out_numel = n * c_out * math.prod(outs) if outs and c_out else None
    else:
        c_out = weight.dims[0]
        if weight.dims[1] <= 0 or c_in % weight.dims[1]:
            return NotModelled(f"input channels {c_in} are not a multiple of the weight's {weight.dims[1]}")
        s, p, d = (_ints(x.value(i), spatial) for i in (stride, padding, dilation))
        if (s and p and d) and 0 not in s:
            outs = tuple((i + 2 * pi - di * (k - 1) - 1) // si + 1 for i, si, pi, di, k in zip(ins, s, p, d, kernel))
        elif output is not None and len(output) == spatial + 2 and output[:2] == (n, c_out):
            outs = tuple(output[2:])  # its backward's gradient's sizes (the caller paired them)
        else:
            why = "nsys does not record them" if not x.full else "they are not recorded as numbers"
            return NotModelled(f"its stride, padding and dilation are needed for its output size, and {why}")
        if any(o <= 0 for o in outs):
            return NotModelled(f"sizes {_x(inp.dims)} by {_x(weight.dims)} leave no output")
        out_numel = n * c_out * math.prod(outs)
        macs = out_numel * weight.dims[1] * math.prod(kernel)
    flop = 2 * macs + (out_numel if bias is not None and out_numel else 0)
    nbytes = _total(_nb(inp, hint), _nb(weight, hint), _nb(bias, hint), _out(out_numel, dtype) if out_numel else None)
    return Work(CONV, flop, nbytes, dtype, f"{_x(inp.dims)} * {_x(weight.dims)}" + (f" -> {_x((n, c_out, *outs))}" if out_numel else ""),
                allow_tf32=allow, weights=weight.stored + (bias.stored if bias is not None else 0), weight_tensors=1 + (bias is not None),
                written=_out(out_numel, dtype) if out_numel else None)


def convolution(x: OpInputs, hint: str | None, facts: KernelFacts = NO_FACTS) -> Work | NotModelled:
    """``convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)``; ``_convolution``
    adds benchmark, deterministic, cudnn_enabled, allow_tf32 (12)."""
    transposed = x.value(6).boolean() if x.value(6) is not None else None
    if transposed is None and not x.full and facts.output is not None:
        transposed = False  # paired with a backward whose gradient has the output's sizes: cuDNN's forward (fprop) kernels
    return _conv(x, hint, bias=x.tensor(2), stride=3, padding=4, dilation=5, transposed=transposed, output_padding=7,
                 tf32=12 if len(x.args) > 12 else None, groups=8, output=facts.output)


def conv_nd(x: OpInputs, hint: str | None) -> Work | NotModelled:
    """``conv2d(input, weight, bias, stride, padding, dilation, groups)`` (and conv1d, conv3d)."""
    padding = x.value(4)
    if padding is not None and padding.text in ("valid", "same"):
        return NotModelled(f"padding '{padding.text}': the output size is the inner op's to count")
    return _conv(x, hint, bias=x.tensor(2), stride=3, padding=4, dilation=5, transposed=False, output_padding=None, tf32=None)


def cudnn_convolution(x: OpInputs, hint: str | None, facts: KernelFacts = NO_FACTS) -> Work | NotModelled:
    """``cudnn_convolution(self, weight, padding, stride, dilation, groups, benchmark, deterministic, allow_tf32)``."""
    return _conv(x, hint, bias=None, stride=3, padding=2, dilation=4, transposed=False, output_padding=None, tf32=8, output=facts.output)


def cudnn_convolution_transpose(x: OpInputs, hint: str | None) -> Work | NotModelled:
    """``cudnn_convolution_transpose(self, weight, padding, output_padding, stride, dilation, groups, benchmark,
    deterministic, allow_tf32)``: the FLOPs need no stride; the output's bytes do."""
    return _conv(x, hint, bias=None, stride=4, padding=2, dilation=5, transposed=True, output_padding=3, tf32=9, groups=6)


def convolution_backward(x: OpInputs, hint: str | None, facts: KernelFacts = NO_FACTS) -> Work | NotModelled:
    """``convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
    output_padding, groups, output_mask)``: the output's size is grad_output's, so no stride is needed. With sizes
    alone (nsys), the gradients it computes are its kernels' (``facts.grads``: cuDNN's dgrad and wgrad kernels are
    a convolution's, not a transposed one's)."""
    grad, inp, weight = x.tensor(0), x.tensor(1), x.tensor(2)
    if grad is None or inp is None or weight is None:
        return NotModelled("its gradient's, input's or weight's sizes are not recorded")
    spatial = len(weight.dims) - 2
    if spatial < 1 or len(inp.dims) != spatial + 2 or len(grad.dims) != spatial + 2:
        return NotModelled(f"sizes {_x(grad.dims)}, {_x(inp.dims)}, {_x(weight.dims)} are not a convolution's")
    transposed = x.value(7).boolean() if x.value(7) is not None else None
    mask = x.value(10).text if x.value(10) is not None else None
    if transposed is None and mask is None and not x.full and facts.grads is not None:
        transposed, wants = False, list(facts.grads)
    elif transposed is None or mask is None:
        return NotModelled("whether it is transposed, and which gradients it computes, are not recorded")
    else:
        wants = [w.strip() == "True" for w in mask.strip("[]").split(",")]
    if len(wants) != 3:
        return NotModelled(f"output_mask {mask} is not three flags")
    kernel = math.prod(weight.dims[2:])
    # The forward's multiply-adds: output elements x (C_in/groups) x kernel; transposed: input elements x (C_out/groups) x kernel.
    macs = (inp.numel * weight.dims[1] * kernel) if transposed else (grad.numel * weight.dims[1] * kernel)
    # The bias's gradient (wants[2]) is an op of its own inside it (aten::sum of the gradient), counted as that op.
    flop = 2 * macs * (wants[0] + wants[1])
    dtype = grad.dtype or inp.dtype or weight.dtype or hint
    written = _total(_out(inp.numel, dtype) if wants[0] else 0, _out(weight.numel, dtype) if wants[1] else 0)
    nbytes = _total(_nb(grad, hint), _nb(inp, hint) if wants[1] else 0, _nb(weight, hint) if wants[0] else 0, written)
    return Work(CONV, flop, nbytes, dtype, f"grad {_x(grad.dims)}, {_x(inp.dims)} * {_x(weight.dims)}", written=written)


# -- attention ------------------------------------------------------------------------------------

def _pairs(lq: int, lk: int, causal: bool) -> int:
    """The (query, key) pairs a mask keeps: all, or PyTorch's top-left causal mask (query i sees keys 0..i)."""
    if not causal:
        return lq * lk
    full = min(lq, lk)
    return full * (full + 1) // 2 + max(0, lq - lk) * lk


def _attention(q: Tensor, k: Tensor, v: Tensor, causal: bool | None, *, heads_first: bool, backward: bool, extra: list,
               hint: str | None) -> Work | NotModelled:
    if causal is None:
        return NotModelled("whether its mask is causal is not recorded")
    if len(q.dims) != 4 or len(k.dims) != 4 or len(v.dims) != 4:
        return NotModelled(f"sizes {_x(q.dims)}, {_x(k.dims)}, {_x(v.dims)} are not 4-d attention inputs")
    if heads_first:
        b, h, lq, e = q.dims
        lk, ev = k.dims[2], v.dims[3]
    else:
        b, lq, h, e = q.dims
        lk, ev = k.dims[1], v.dims[3]
    pairs = _pairs(lq, lk, causal)
    flop = 2 * b * h * pairs * ((3 * e + 2 * ev) if backward else (e + ev))
    dtype = q.dtype or hint
    out = b * h * lq * ev
    reads = _total(_nb(q, hint), _nb(k, hint), _nb(v, hint), *[_nb(t, hint) for t in extra])
    if backward:
        written = _out(q.numel + k.numel + v.numel, dtype)  # grad_q, grad_k, grad_v
    else:
        written = _total(_out(out, dtype), 4 * b * h * lq)  # the output and the fp32 log-sum-exp a training forward keeps
    nbytes = _total(reads, written)
    shape = f"q {_x(q.dims)}, k {_x(k.dims)}, v {_x(v.dims)}" + (", causal" if causal else "")
    return Work(ATTENTION, flop, nbytes, dtype, shape, written=written)


def _causal(x: OpInputs, i: int) -> bool | None:
    v = x.value(i)
    return v.boolean() if v is not None else None


def _sdpa(q: int, causal: int, *, heads_first: bool, backward: bool, extra: tuple[int, ...] = (), custom_mask: bool = False):
    """A counter for an attention op: where its q, k, v are (q, q+1, q+2), its causal flag (or mask type) and
    the tensors a backward reads besides q, k, v (``extra``: the gradient, output and log-sum-exp)."""

    def count(x: OpInputs, hint: str | None) -> Work | NotModelled:
        t = [x.tensor(q), x.tensor(q + 1), x.tensor(q + 2)]
        if any(v is None for v in t):
            return NotModelled("its query's, key's or value's sizes are not recorded")
        if custom_mask:  # _efficient_attention_*: 0 none, 1 causal from the top left, 2 from the bottom right
            mask_type = x.value(causal).integer() if x.value(causal) is not None else None
            if mask_type not in (0, 1):
                return NotModelled("its mask type is not recorded" if mask_type is None else f"mask type {mask_type} is not counted here")
            flag = mask_type == 1
        else:
            flag = _causal(x, causal)
        reads = [x.tensor(i) for i in extra]
        if flag is None and not x.full:
            why = "whether its mask is causal is not recorded (nsys records sizes only)"
            # No tensor besides q, k, v and the backward's reads: no mask, bias or packed sequence lengths, so the
            # mask is PyTorch's causal one or none, and the count is one of two.
            if any(i not in (q, q + 1, q + 2, *extra) and x.tensor(i) is not None for i in range(len(x.args))):
                return NotModelled(why)
            both = [_attention(*t, c, heads_first=heads_first, backward=backward, extra=reads, hint=hint) for c in (True, False)]
            return NotModelled(why, *both) if all(isinstance(w, Work) for w in both) else NotModelled(why)
        return _attention(*t, flag, heads_first=heads_first, backward=backward, extra=reads, hint=hint)

    return count


# -- memory-bound ops -----------------------------------------------------------------------------

def _promote(tensors: list[Tensor], hint: str | None) -> str | None:
    """The result dtype of an elementwise op over ``tensors`` (PyTorch's promotion among floating types;
    dimensioned tensors first, 0-d ones only where there are no others)."""
    ranked = [t for t in tensors if t.dims] or tensors
    types = [t.dtype or hint for t in ranked]
    if any(t is None for t in types):
        return None
    floats = [t for t in types if t in FLOATING]
    if not floats:
        return max(types, key=lambda t: BYTES.get(t, 0)) if types else None
    if len(set(floats)) == 1:
        return floats[0]
    widest = max(BYTES[t] for t in floats)
    wide = {t for t in floats if BYTES[t] == widest}
    return wide.pop() if len(wide) == 1 else "fp32"  # bf16 with fp16 promotes to fp32


COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and", "logical_or", "isnan", "isinf", "isfinite"})
NO_ARITHMETIC = frozenset({"copy", "clone", "_to_copy", "fill", "zero", "masked_fill", "where"})


def elementwise(op: str):
    """A counter for an elementwise op (``op``: its name without ``aten::``): the output takes the broadcast
    of the tensor inputs; in place (a trailing underscore), the first input's place."""
    in_place = op.endswith("_")
    base = op.rstrip("_")

    def count(x: OpInputs, hint: str | None) -> Work | NotModelled:
        tensors = [t for t in x.args if isinstance(t, Tensor)]
        if len(tensors) > 1 and tensors[-1].numel == 0:
            tensors = tensors[:-1]  # the empty result an out= variant resizes (aten::abs calls aten::abs.out(x, out=empty))
        if not tensors:
            return NotModelled("no tensor input's sizes are recorded")
        if any(isinstance(a, TensorList) for a in x.args):
            return NotModelled("a list of tensors")
        if in_place or base in ("fill", "zero"):
            out_shape, out_dtype = tensors[0].dims, tensors[0].dtype or hint
        else:
            out_shape = _broadcast(*[t.dims for t in tensors])
            if out_shape is None:
                return NotModelled("its inputs' sizes do not broadcast")
            out_dtype = "bool" if base in COMPARISONS else _promote(tensors, hint)
        if base in ("_to_copy", "to"):
            code = x.value(1).integer() if x.value(1) is not None else None
            out_dtype = SCALAR_TYPES.get(code) if code is not None else (None if x.full else out_dtype)
            if x.full and out_dtype is None:
                return NotModelled("its target dtype is not recorded")
        numel = math.prod(out_shape)
        reads = tensors[1:] if base in ("fill", "zero") or (in_place and base == "copy") else tensors
        if base in ("fill", "zero"):
            reads = []
        read_bytes = _total(*[_nb(t, hint) for t in reads])
        written = _out(numel, out_dtype)
        flop = 0 if base in NO_ARITHMETIC else numel
        dtype = _promote(tensors, hint)
        return Work(COPY if flop == 0 else ELEMENTWISE, flop, _total(read_bytes, written), dtype, ", ".join(_x(t.dims) for t in tensors),
                    written=written)

    return count


def _reduced(dims: tuple[int, ...], out: tuple[int, ...]) -> bool:
    """Whether ``out`` is what reducing some of ``dims`` leaves: the same rank with the reduced dims 1 (keepdim), or the
    kept dims in order."""
    if len(out) == len(dims):
        return all(o in (d, 1) for d, o in zip(dims, out))
    left = iter(dims)
    return len(out) < len(dims) and all(any(o == d for d in left) for o in out)


def reduction(x: OpInputs, hint: str | None, facts: KernelFacts = NO_FACTS) -> Work | NotModelled:
    """``sum(self, dim, keepdim, dtype)``, ``mean``, ``amax``...: the input read once, the reduced output written. With
    sizes alone (nsys) the output's size is the one the ops that read it recorded (``facts.output``)."""
    inp = x.tensor(0)
    if inp is None:
        return NotModelled("its input's sizes are not recorded")
    dims = x.value(1).integers() if x.value(1) is not None else None
    if x.full and x.value(1) is not None and x.value(1).text is not None and dims is None:
        single = x.value(1).integer()
        dims = (single,) if single is not None else None
    if dims is None and x.full and (x.value(1) is None or x.value(1).text is None or len(x.args) == 1):
        out = 1  # over every dimension
    elif dims is None and not x.full and facts.output is not None:
        if not _reduced(inp.dims, facts.output) or math.prod(facts.output) == 0:
            return NotModelled(f"the sizes {_x(facts.output)} its result was read with are no reduction of {_x(inp.dims)}")
        out = math.prod(facts.output)
    elif dims is None:
        why = " (nsys records none, and no op read its result with sizes that agree)" if not x.full else ""
        return NotModelled(f"the dimensions it reduces are not recorded{why}")
    else:
        rank = len(inp.dims)
        if any(not -rank <= d < rank for d in dims):
            return NotModelled(f"dimensions {list(dims)} are not among its input's {rank}")
        kept = [s for i, s in enumerate(inp.dims) if i not in {d % rank for d in dims}] if dims else []
        out = math.prod(kept)
    dtype = inp.dtype or hint
    return Work(REDUCTION, inp.numel, _total(_nb(inp, hint), _out(out, dtype)), dtype, _x(inp.dims), written=_out(out, dtype),
                row=inp.numel // out if out else None)


def layer_norm(x: OpInputs, hint: str | None) -> Work | NotModelled:
    """``native_layer_norm(input, normalized_shape, weight, bias, eps)``: the output and the fp32 mean and
    inverse deviation of each normalised row (fp32 where the input is low precision, its dtype otherwise)."""
    inp = x.tensor(0)
    shape = x.value(1).integers() if x.value(1) is not None else None
    if inp is None:
        return NotModelled("its input's sizes are not recorded")
    if shape is None:
        weight = x.tensor(2)
        shape = weight.dims if weight is not None else None
    if shape is None or tuple(inp.dims[len(inp.dims) - len(shape):]) != tuple(shape):
        return NotModelled("its normalised shape is not recorded")
    rows = math.prod(inp.dims[:len(inp.dims) - len(shape)])
    dtype = inp.dtype or hint
    stat = _out(rows, "fp64" if dtype == "fp64" else "fp32")
    outputs = (_out(inp.numel, dtype), stat, stat)  # the output, the mean, the inverse deviation
    written = _total(*outputs)
    nbytes = _total(_nb(inp, hint), _nb(x.tensor(2), hint), _nb(x.tensor(3), hint), written)
    return Work(NORM, PER_ELEMENT["layer_norm"] * inp.numel, nbytes, dtype, _x(inp.dims), written=written, row=math.prod(shape),
                outputs=outputs)


def layer_norm_backward(x: OpInputs, hint: str | None) -> Work | NotModelled:
    """``native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)``."""
    grad, inp = x.tensor(0), x.tensor(1)
    if grad is None or inp is None:
        return NotModelled("its gradient's or input's sizes are not recorded")
    weight, bias = x.tensor(5), x.tensor(6)
    mask = (x.value(7).text or "") if x.value(7) is not None else ""
    wants = [w.strip() == "True" for w in mask.strip("[]").split(",")] if mask else [True, weight is not None, bias is not None]
    if len(wants) != 3:
        return NotModelled(f"output_mask {mask} is not three flags")
    dtype = inp.dtype or hint
    writes = [_out(inp.numel, dtype) if wants[0] else 0, _nb(weight, hint) if wants[1] and weight is not None else 0,
              _nb(bias, hint) if wants[2] and bias is not None else 0]
    nbytes = _total(_nb(grad, hint), _nb(inp, hint), _nb(x.tensor(3), "fp32"), _nb(x.tensor(4), "fp32"), _nb(weight, hint), *writes)
    return Work(NORM, PER_ELEMENT["layer_norm_backward"] * inp.numel, nbytes, dtype, _x(inp.dims), written=_total(*writes),
                outputs=tuple(writes))


def rms_norm(x: OpInputs, hint: str | None) -> Work | NotModelled:
    """``_fused_rms_norm(input, normalized_shape, weight, eps)``: the output and an fp32 inverse RMS per row."""
    inp = x.tensor(0)
    if inp is None:
        return NotModelled("its input's sizes are not recorded")
    shape = x.value(1).integers() if x.value(1) is not None else None
    weight = x.tensor(2)
    if shape is None:
        shape = weight.dims if weight is not None else None
    if shape is None or tuple(inp.dims[len(inp.dims) - len(shape):]) != tuple(shape):
        return NotModelled("its normalised shape is not recorded")
    rows = math.prod(inp.dims[:len(inp.dims) - len(shape)])
    dtype = inp.dtype or hint
    outputs = (_out(inp.numel, dtype), _out(rows, "fp32"))  # the output, the inverse RMS
    written = _total(*outputs)
    return Work(NORM, PER_ELEMENT["rms_norm"] * inp.numel, _total(_nb(inp, hint), _nb(weight, hint), written), dtype, _x(inp.dims), written=written,
                row=math.prod(shape), outputs=outputs)


def softmax(kind: str):
    """``_softmax(self, dim, half_to_float)`` / ``_log_softmax``: read once, written once (fp32 where half_to_float);
    the backward ``_softmax_backward_data(grad_output, output, dim, input_dtype)`` reads two and writes one. With sizes
    alone (nsys) a forward's row is its last dimension where its kernels say they reduce over that one (``facts.last_dim``)."""
    backward = kind.endswith("backward")

    def count(x: OpInputs, hint: str | None, facts: KernelFacts = NO_FACTS) -> Work | NotModelled:
        inp = x.tensor(0)
        if inp is None:
            return NotModelled("its input's sizes are not recorded")
        dtype = inp.dtype or hint
        if backward:
            other = x.tensor(1)
            code = x.value(3).integer() if x.value(3) is not None else None
            out_dtype = SCALAR_TYPES.get(code, dtype) if code is not None else dtype
            written = _out(inp.numel, out_dtype)
            nbytes = _total(_nb(inp, hint), _nb(other, hint), written)
        else:
            to_float = x.value(2).boolean() if x.value(2) is not None else False
            written = _out(inp.numel, "fp32" if to_float else dtype)
            nbytes = _total(_nb(inp, hint), written)
        at = 2 if backward else 1  # the backward's dim follows its two tensors
        dim = x.value(at).integer() if x.value(at) is not None else None
        row = inp.dims[dim] if dim is not None and -len(inp.dims) <= dim < len(inp.dims) else None
        if dim is None and not x.full and not backward and facts.last_dim and inp.dims and inp.dims[-1] > 1:
            row = inp.dims[-1]  # its kernels reduce over the last dimension: only a last dimension over 1 leaves no other
        return Work(SOFTMAX, PER_ELEMENT[kind] * inp.numel, nbytes, dtype, _x(inp.dims), written=written, row=row)

    return count


def embedding(x: OpInputs, hint: str | None) -> Work | NotModelled:
    """``embedding(weight, indices, ...)``: the indices read, the rows gathered read and written once."""
    weight, idx = x.tensor(0), x.tensor(1)
    if weight is None or idx is None or len(weight.dims) != 2:
        return NotModelled("its weight's or indices' sizes are not recorded")
    rows = idx.numel * weight.dims[1]
    dtype = weight.dtype or hint
    return Work(EMBEDDING, 0, _total(_nb(idx, "int64"), _out(rows, dtype), _out(rows, dtype)), dtype, f"{_x(weight.dims)}[{_x(idx.dims)}]",
                written=_out(rows, dtype))


def embedding_dense_backward(x: OpInputs, hint: str | None, facts: KernelFacts = NO_FACTS) -> Work | NotModelled:
    """``embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)``: the
    gradient and indices read, the weight's gradient written whole (rows no index names are zeros). With sizes alone
    (nsys) the number of rows is the forward embedding's weight's."""
    grad, idx = x.tensor(0), x.tensor(1)
    rows = x.value(2).integer() if x.value(2) is not None else None
    weight = facts.forward.tensor(0) if rows is None and facts.forward is not None else None
    if weight is not None and len(weight.dims) == 2:
        rows = weight.dims[0]
    if grad is None or idx is None or rows is None or not grad.dims:
        return NotModelled("its gradient's or indices' sizes, or the number of rows, are not recorded")
    dtype = grad.dtype or hint
    return Work(EMBEDDING, grad.numel, _total(_nb(grad, hint), _nb(idx, "int64"), _out(rows * grad.dims[-1], dtype)), dtype,
                f"{_x(grad.dims)} into {rows} rows", written=_out(rows * grad.dims[-1], dtype))


def index_select(x: OpInputs, hint: str | None) -> Work | NotModelled:
    """``index_select(self, dim, index)`` (an embedding's lookup): the index and the selected slices read, the
    output written."""
    inp, idx = x.tensor(0), x.tensor(2)
    dim = x.value(1).integer() if x.value(1) is not None else None
    if inp is None or idx is None or dim is None or not -len(inp.dims) <= dim < len(inp.dims) or not inp.dims[dim]:
        return NotModelled("its input's or index's sizes, or the dimension, are not recorded")
    out = inp.numel // inp.dims[dim] * idx.numel
    dtype = inp.dtype or hint
    return Work(EMBEDDING, 0, _total(_nb(idx, "int64"), _out(out, dtype), _out(out, dtype)), dtype, f"{_x(inp.dims)}[{_x(idx.dims)}]",
                written=_out(out, dtype))


def gather(x: OpInputs, hint: str | None) -> Work | NotModelled:
    """``gather(self, dim, index, sparse_grad)``: the index and the gathered elements read, the output written."""
    inp, idx = x.tensor(0), x.tensor(2)
    if inp is None or idx is None:
        return NotModelled("its input's or index's sizes are not recorded")
    dtype = inp.dtype or hint
    return Work(EMBEDDING, 0, _total(_nb(idx, "int64"), _out(2 * idx.numel, dtype)), dtype, f"{_x(inp.dims)}[{_x(idx.dims)}]",
                written=_out(idx.numel, dtype))


def cat(x: OpInputs, hint: str | None) -> Work | NotModelled:
    """``cat(tensors, dim)`` / ``stack``: each tensor read once and written once; the list's dtype is not
    recorded (a PyTorch profiler trace names it TensorList), so only the kernels' names give it."""
    parts = x.args[0] if x.args else None
    tensors = parts.tensors if isinstance(parts, TensorList) else [t for t in x.args if isinstance(t, Tensor)]
    if not tensors:
        return NotModelled("its tensors' sizes are not recorded")
    dtype = next((t.dtype for t in tensors if t.dtype), None) or hint
    total = sum(t.numel for t in tensors)
    return Work(COPY, 0, _total(_out(total, dtype), _out(total, dtype)), dtype, ", ".join(_x(t.dims) for t in tensors[:4]) +
                (", ..." if len(tensors) > 4 else ""), written=_out(total, dtype))


def nll_loss_forward(x: OpInputs, hint: str | None) -> Work | NotModelled:
    """``nll_loss_forward(self, target, weight, reduction, ignore_index)``: the targets and one element per row read."""
    inp, target = x.tensor(0), x.tensor(1)
    if inp is None or target is None:
        return NotModelled("its input's or target's sizes are not recorded")
    dtype = inp.dtype or hint
    return Work(REDUCTION, target.numel, _total(_nb(target, "int64"), _out(target.numel, dtype), _out(2, dtype)), dtype,
                f"{_x(inp.dims)}, {_x(target.dims)}", written=_out(2, dtype), outputs=(_out(1, dtype), _out(1, dtype)))


def nll_loss_backward(x: OpInputs, hint: str | None) -> Work | NotModelled:
    """``nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight)``: the targets read,
    one element per row written (the rest of the gradient is the zero_ before it)."""
    inp, target = x.tensor(1), x.tensor(2)
    if inp is None or target is None:
        return NotModelled("its input's or target's sizes are not recorded")
    dtype = inp.dtype or hint
    return Work(ELEMENTWISE, target.numel, _total(_nb(target, "int64"), _out(target.numel, dtype)), dtype, f"{_x(inp.dims)}, {_x(target.dims)}",
                written=_out(target.numel, dtype))


def _lists(x: OpInputs, count: int) -> list[tuple[Tensor, ...]] | NotModelled:
    """The first ``count`` inputs as lists of tensors, sizes recorded."""
    lists = []
    for i in range(count):
        arg = x.args[i] if i < len(x.args) else None
        if not isinstance(arg, TensorList):
            return NotModelled("its lists of tensors are not recorded")
        if arg.tensors is None:
            return NotModelled("its lists' sizes are not recorded (PyTorch records a list of at most 30 tensors)")
        lists.append(arg.tensors)
    return lists


def fused_adam(x: OpInputs, hint: str | None) -> Work | NotModelled:
    """``_fused_adam_/_fused_adamw_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, ...)``: parameters,
    gradients and both moments read, parameters and moments written (the max moments too under amsgrad)."""
    amsgrad = x.value(11).boolean() if x.value(11) is not None else None
    if amsgrad is None:
        return NotModelled("whether it keeps max moments (amsgrad) is not recorded")
    lists = _lists(x, 5 if amsgrad else 4)
    if isinstance(lists, NotModelled):
        return lists
    params, grads, avgs, sqs = lists[:4]
    maxes = lists[4] if amsgrad else ()
    numel = sum(t.numel for t in params)
    dtype = next((t.dtype for t in params if t.dtype), None) or hint
    reads = _total(*[_nb(t, hint) for t in (*params, *grads, *avgs, *sqs, *maxes)])
    written = _total(*[_nb(t, hint) for t in (*params, *avgs, *sqs, *maxes)])
    return Work(OPTIMIZER, PER_ELEMENT["adam"] * numel, _total(reads, written), dtype, f"{len(params)} tensors, {numel} elements",
                written=written, outputs=())  # lists written in place: no one output's bytes


def foreach(x: OpInputs, hint: str | None) -> Work | NotModelled:
    """``_foreach_<op>_(self, other or scalar...)`` in place: each list read, the first written; one FLOP an element."""
    lists = [a for a in x.args if isinstance(a, TensorList)]
    if not lists or any(a.tensors is None for a in lists):
        return NotModelled("its lists' sizes are not recorded (PyTorch records a list of at most 30 tensors)")
    first = lists[0].tensors
    numel = sum(t.numel for t in first)
    dtype = next((t.dtype for t in first if t.dtype), None) or hint
    written = _total(*[_nb(t, hint) for t in first])
    reads = _total(*[_nb(t, hint) for a in lists for t in a.tensors])
    return Work(ELEMENTWISE, numel, _total(reads, written), dtype, f"{len(first)} tensors, {numel} elements", written=written,
                outputs=())  # a list written in place: no one output's bytes


def dropout(x: OpInputs, hint: str | None) -> Work | NotModelled:
    """``native_dropout(input, p, train)``: the output and a bool mask written."""
    inp = x.tensor(0)
    if inp is None:
        return NotModelled("its input's sizes are not recorded")
    dtype = inp.dtype or hint
    outputs = (_out(inp.numel, dtype), inp.numel)  # the output, the bool mask
    written = _total(*outputs)
    return Work(ELEMENTWISE, inp.numel, _total(_nb(inp, hint), written), dtype, _x(inp.dims), written=written, outputs=outputs)


_UNARY = ("relu", "gelu", "silu", "sigmoid", "tanh", "exp", "exp2", "log", "log1p", "neg", "abs", "sqrt", "rsqrt", "reciprocal", "sin", "cos",
          "erf", "threshold", "hardtanh", "leaky_relu", "elu", "softplus", "clamp", "clamp_min", "clamp_max", "pow", "square", "sign", "floor",
          "ceil", "round", "trunc", "nan_to_num", "mish", "hardswish", "hardsigmoid", "logical_not", "bitwise_not", "isnan", "isinf",
          "isfinite", "sgn", "frac", "expm1", "log2", "log10")
_BINARY = ("add", "sub", "mul", "div", "rsub", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "where", "lerp", "addcmul", "addcdiv",
           "threshold_backward", "gelu_backward", "silu_backward", "sigmoid_backward", "tanh_backward", "hardtanh_backward",
           "leaky_relu_backward", "elu_backward", "softplus_backward", "mish_backward", "hardswish_backward", "masked_fill", "copy_",
           "fill_", "zero_", "clone", "_to_copy", "logical_and", "logical_or", "bitwise_and", "bitwise_or", "remainder", "fmod",
           "floor_divide", "atan2", "hypot", "xlogy", "_masked_scale", "native_dropout_backward", "mse_loss", "mse_loss_backward")


def _registry() -> dict:
    table = {
        "aten::mm": mm, "aten::addmm": addmm, "aten::bmm": bmm, "aten::baddbmm": baddbmm, "aten::matmul": matmul, "aten::linear": linear,
        "aten::_scaled_mm": scaled_mm, "aten::mv": mv,
        "aten::convolution": convolution, "aten::_convolution": convolution, "aten::conv1d": conv_nd, "aten::conv2d": conv_nd,
        "aten::conv3d": conv_nd, "aten::cudnn_convolution": cudnn_convolution, "aten::cudnn_convolution_transpose": cudnn_convolution_transpose,
        "aten::convolution_backward": convolution_backward,
        # q, k, v at 0 (forward) or 1 (backward, after grad_out); the causal flag's position; the layout.
        "aten::scaled_dot_product_attention": _sdpa(0, 5, heads_first=True, backward=False),
        "aten::_scaled_dot_product_flash_attention": _sdpa(0, 4, heads_first=True, backward=False),
        "aten::_scaled_dot_product_efficient_attention": _sdpa(0, 6, heads_first=True, backward=False),
        "aten::_scaled_dot_product_cudnn_attention": _sdpa(0, 6, heads_first=True, backward=False),
        "aten::_flash_attention_forward": _sdpa(0, 8, heads_first=False, backward=False),
        "aten::_efficient_attention_forward": _sdpa(0, 9, heads_first=False, backward=False, custom_mask=True),
        "aten::_cudnn_attention_forward": _sdpa(0, 10, heads_first=True, backward=False),
        "aten::_scaled_dot_product_flash_attention_backward": _sdpa(1, 11, heads_first=True, backward=True, extra=(0, 4, 5)),
        "aten::_flash_attention_backward": _sdpa(1, 11, heads_first=False, backward=True, extra=(0, 4, 5)),
        "aten::_scaled_dot_product_efficient_attention_backward": _sdpa(1, 11, heads_first=True, backward=True, extra=(0, 5, 6)),
        "aten::_efficient_attention_backward": _sdpa(1, 14, heads_first=False, backward=True, extra=(0, 5, 10), custom_mask=True),
        "aten::_scaled_dot_product_cudnn_attention_backward": _sdpa(1, 14, heads_first=True, backward=True, extra=(0, 4, 5)),
        "aten::_cudnn_attention_backward": _sdpa(1, 14, heads_first=True, backward=True, extra=(0, 4, 5)),
        "aten::sum": reduction, "aten::mean": reduction, "aten::amax": reduction, "aten::amin": reduction, "aten::prod": reduction,
        "aten::max": reduction, "aten::min": reduction,
        "aten::native_layer_norm": layer_norm, "aten::native_layer_norm_backward": layer_norm_backward, "aten::_fused_rms_norm": rms_norm,
        "aten::_softmax": softmax("softmax"), "aten::_log_softmax": softmax("softmax"),
        "aten::_softmax_backward_data": softmax("softmax_backward"), "aten::_log_softmax_backward_data": softmax("softmax_backward"),
        "aten::embedding": embedding, "aten::embedding_dense_backward": embedding_dense_backward, "aten::native_dropout": dropout,
        "aten::index_select": index_select, "aten::gather": gather, "aten::cat": cat, "aten::stack": cat,
        "aten::nll_loss_forward": nll_loss_forward, "aten::nll_loss_backward": nll_loss_backward,
        "aten::_fused_adam_": fused_adam, "aten::_fused_adamw_": fused_adam,
        **{f"aten::_foreach_{op}_": foreach for op in ("add", "sub", "mul", "div", "lerp", "addcmul", "addcdiv", "sqrt", "neg", "zero",
                                                        "copy", "maximum", "clamp_min", "clamp_max")},
    }
    for op in _UNARY + _BINARY:
        for name in (op, op.rstrip("_") + "_") if not op.endswith("_") else (op,):
            table.setdefault(f"aten::{name}", elementwise(name))
    return table


COUNTERS = _registry()


FACT_TAKERS = frozenset({"aten::convolution", "aten::_convolution", "aten::cudnn_convolution", "aten::convolution_backward",
                         "aten::embedding_dense_backward", "aten::_softmax", "aten::_log_softmax",
                         *(name for name, counter in COUNTERS.items() if counter is reduction)})


def count(name: str, inputs: OpInputs | None, hint: str | None = None, facts: KernelFacts = NO_FACTS) -> Work | NotModelled | None:
    """The work of op ``name`` with ``inputs``; ``hint``: the dtype of tensors whose own is not recorded (nsys;
    told from the kernels' names), ``facts`` what else its kernels or paired ops say (an FP8 product's result dtype,
    a convolution's gradients or output sizes). None for an op name not modelled; NotModelled where the inputs do not say."""
    counter = COUNTERS.get(name)
    if counter is None:
        return None
    if inputs is None:
        return NotModelled("its inputs' shapes are not recorded")
    if counter is scaled_mm:
        return scaled_mm(inputs, hint, facts.out_dtype)
    if name in FACT_TAKERS:
        return counter(inputs, hint, facts)
    work = counter(inputs, hint)
    if facts.same and isinstance(work, Work) and work.kind == ELEMENTWISE and work.bytes is not None:
        # A tensor passed twice (d * d) is read once: its second read comes from the same loads.
        again = [_nb(inputs.tensor(i), hint) for i in sorted(facts.same) if inputs.tensor(i) is not None]
        if again and None not in again:
            work = dataclasses.replace(work, bytes=work.bytes - sum(again))
    return work
