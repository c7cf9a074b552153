"""The real-world corpus: library kernels people actually profile, each case run twice.

Run under ncu with ``--kernel-id :::2`` (the second launch of every distinct kernel and launch
configuration): every case launches its work twice in a row, so the profiled launch of a kernel first
seen in a case belongs to that case. Before each case the script prints ``@@CASE <group>/<name>``
(and ``@@SETUP`` before building its inputs); ncu's ``==PROF== Profiling`` lines interleave with
these markers on the console, which is how capture_realworld.sh maps each profiled kernel to its case.

    python3 realworld_corpus.py --group blas|dnn|ops|triton|all [--list]
    python3 realworld_corpus.py --group ops,triton        # several groups, in that order, in one process

Correctness first: every case checks its result against a reference (float64 on the GPU, or the
same op in fp32) once, outside the profiled launches' way (the check runs after them).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")  # no compile workers forked under ncu

import torch
import torch.nn.functional as F

CASES: dict[str, list] = {}


def case(group: str):
    def register(fn):
        CASES.setdefault(group, []).append(fn)
        return fn
    return register


def mark(kind: str, group: str, name: str) -> None:
    print(f"@@{kind} {group}/{name}", flush=True)


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    out, ref = out.double(), ref.double()
    return float(torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref).clamp_min(1e-30))


def check(name: str, ok: bool, detail: str) -> None:
    print(f"@@CHECK {name} {'ok' if ok else 'WRONG'} {detail}", flush=True)


VERIFY = os.environ.get("CORPUS_VERIFY", "1") == "1"


def verify() -> bool:
    """True when references are to be checked (CORPUS_VERIFY=1, the plain run). Under ncu the checks
    are off (CORPUS_VERIFY=0) so their reference kernels cost no replay passes; kernels launched after
    the marker would be labelled apart from the case's own anyway."""
    torch.cuda.synchronize()
    print("@@VERIFY", flush=True)
    return VERIFY


def twice(fn):
    """Run the case's work twice (the profiled launch is the second), return the last result."""
    fn()
    out = fn()
    torch.cuda.synchronize()
    return out


dev = "cuda"
gen = torch.Generator(device=dev)


def rand(*shape, dtype=torch.float32, scale=1.0):
    return (torch.randn(*shape, device=dev, generator=gen, dtype=torch.float32) * scale).to(dtype)


# ----------------------------------------------------------------------------------------- cuBLAS

def _gemm_case(name, m, n, k, dtype, tol, tf32=None):
    @case("blas")
    def run():
        mark("SETUP", "blas", name)
        a, b = rand(m, k, dtype=dtype), rand(k, n, dtype=dtype)
        if tf32 is not None:
            torch.backends.cuda.matmul.allow_tf32 = tf32
        mark("CASE", "blas", name)
        out = twice(lambda: a @ b)
        torch.backends.cuda.matmul.allow_tf32 = False
        if verify():
            rows = slice(0, min(m, 256))
            err = rel_err(out[rows], a[rows].double() @ b.double())
            check(name, err < tol, f"rel_err={err:.2e}")
    run.__name__ = name
    return run


_gemm_case("gemm_bf16_8192", 8192, 8192, 8192, torch.bfloat16, 1e-2)
_gemm_case("gemm_fp16_4096", 4096, 4096, 4096, torch.float16, 1e-2)
_gemm_case("gemm_tf32_4096", 4096, 4096, 4096, torch.float32, 3e-3, tf32=True)
_gemm_case("gemm_fp32_4096", 4096, 4096, 4096, torch.float32, 1e-4, tf32=False)
_gemm_case("gemm_fp64_2048", 2048, 2048, 2048, torch.float64, 1e-10)
_gemm_case("gemm_skinny_bf16_m16", 16, 8192, 8192, torch.bfloat16, 1e-2)
_gemm_case("gemv_bf16_8192", 8192, 1, 8192, torch.bfloat16, 1e-2)


@case("blas")
def gemm_fp8_4096():
    name = "gemm_fp8_4096"
    if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
        print("@@SKIP fp8 not available", flush=True)
        return
    mark("SETUP", "blas", name)
    a = rand(4096, 4096).to(torch.float8_e4m3fn)
    b = rand(4096, 4096).to(torch.float8_e4m3fn).t()  # column-major second operand, as cuBLASLt wants
    one = torch.ones((), device=dev)
    mark("CASE", "blas", name)
    out = twice(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
    if verify():
        err = rel_err(out[:256], a[:256].float().double() @ b.float().double())
        check(name, err < 1e-2, f"rel_err={err:.2e}")


@case("blas")
def bmm_small_bf16():
    name = "bmm_small_bf16"
    mark("SETUP", "blas", name)
    a, b = rand(2048, 64, 64, dtype=torch.bfloat16), rand(2048, 64, 64, dtype=torch.bfloat16)
    mark("CASE", "blas", name)
    out = twice(lambda: torch.bmm(a, b))
    if verify():
        err = rel_err(out[:64], a[:64].double() @ b[:64].double())
        check(name, err < 1e-2, f"rel_err={err:.2e}")


@case("blas")
def linear_bias_gelu_bf16():
    name = "linear_bias_gelu_bf16"
    mark("SETUP", "blas", name)
    x, w, bias = rand(8192, 4096, dtype=torch.bfloat16), rand(4096, 4096, dtype=torch.bfloat16, scale=0.02), rand(4096, dtype=torch.bfloat16)
    mark("CASE", "blas", name)
    out = twice(lambda: F.gelu(F.linear(x, w, bias), approximate="tanh"))
    if verify():
        err = rel_err(out[:128], F.gelu(F.linear(x[:128].double(), w.double(), bias.double()), approximate="tanh"))
        check(name, err < 2e-2, f"rel_err={err:.2e}")


# ---------------------------------------------------------------------------------- cuDNN, attention

@case("dnn")
def conv2d_fwd_bwd_bf16():
    name = "conv2d_bf16_nhwc"
    mark("SETUP", "dnn", name)
    torch.backends.cudnn.benchmark = False
    x = rand(32, 128, 56, 56, dtype=torch.bfloat16).to(memory_format=torch.channels_last).requires_grad_()
    w = rand(128, 128, 3, 3, dtype=torch.bfloat16, scale=0.03).to(memory_format=torch.channels_last).requires_grad_()
    g = rand(32, 128, 56, 56, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    mark("CASE", "dnn", name + "_fwd")
    out = twice(lambda: F.conv2d(x, w, padding=1))
    if verify():
        err = rel_err(out[:2], F.conv2d(x[:2].double(), w.double(), padding=1))
        check(name + "_fwd", err < 2e-2, f"rel_err={err:.2e}")
    mark("CASE", "dnn", name + "_bwd")
    for _ in range(2):
        x.grad = w.grad = None
        F.conv2d(x, w, padding=1).backward(g)
    if verify():
        check(name + "_bwd", bool(torch.isfinite(w.grad.float()).all() and torch.isfinite(x.grad.float()).all()), "grads finite")


@case("dnn")
def conv2d_fp32_nchw():
    name = "conv2d_fp32_nchw_1x1"
    mark("SETUP", "dnn", name)
    x = rand(64, 256, 28, 28)
    w = rand(512, 256, 1, 1, scale=0.05)
    mark("CASE", "dnn", name)
    out = twice(lambda: F.conv2d(x, w))
    if verify():
        err = rel_err(out[:2], F.conv2d(x[:2].double(), w.double()))
        check(name, err < 5e-3, f"rel_err={err:.2e}")


def _sdpa_case(name, backend_name, causal):
    @case("dnn")
    def run():
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backend = getattr(SDPBackend, backend_name)
        mark("SETUP", "dnn", name)
        q, k, v = (rand(4, 16, 4096, 128, dtype=torch.bfloat16).requires_grad_() for _ in range(3))
        g = rand(4, 16, 4096, 128, dtype=torch.bfloat16)
        try:
            with sdpa_kernel([backend]):
                mark("CASE", "dnn", name + "_fwd")
                out = twice(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
                mark("CASE", "dnn", name + "_bwd")
                for _ in range(2):
                    q.grad = k.grad = v.grad = None
                    F.scaled_dot_product_attention(q, k, v, is_causal=causal).backward(g)
                torch.cuda.synchronize()
        except RuntimeError as exc:
            print(f"@@SKIP {name}: {str(exc).splitlines()[0]}", flush=True)
            return
        if verify():
            qs, ks, vs = (t[:1, :2].detach().float() for t in (q, k, v))
            err = rel_err(out[:1, :2], F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal))
            check(name, err < 2e-2 and bool(torch.isfinite(q.grad.float()).all()), f"rel_err={err:.2e}")
    run.__name__ = name
    return run


_sdpa_case("sdpa_flash", "FLASH_ATTENTION", False)
_sdpa_case("sdpa_cudnn_causal", "CUDNN_ATTENTION", True)
_sdpa_case("sdpa_mem_efficient", "EFFICIENT_ATTENTION", False)


# ----------------------------------------------------------------------- CUB through torch, torch ops

@case("ops")
def sort_fp32():
    name = "sort_fp32_16M"
    mark("SETUP", "ops", name)
    x = rand(1 << 24)
    mark("CASE", "ops", name)
    vals, idx = twice(lambda: torch.sort(x))
    if verify():
        check(name, bool((vals[1:] >= vals[:-1]).all()) and bool((x[idx] == vals).all()), "sorted, permutation")


@case("ops")
def sort_segmented_rows():
    name = "sort_rows_4096x4096"
    mark("SETUP", "ops", name)
    x = rand(4096, 4096)
    mark("CASE", "ops", name)
    vals, _ = twice(lambda: torch.sort(x, dim=1))
    if verify():
        check(name, bool((vals[:, 1:] >= vals[:, :-1]).all()), "rows sorted")


@case("ops")
def cumsum_int():
    name = "cumsum_int32_64M"
    mark("SETUP", "ops", name)
    x = torch.randint(0, 4, (1 << 26,), device=dev, generator=gen, dtype=torch.int32)
    mark("CASE", "ops", name)
    out = twice(lambda: torch.cumsum(x, 0))
    if verify():
        check(name, int(out[-1]) == int(x.long().sum()), f"last={int(out[-1])}")


@case("ops")
def cumsum_rows_fp32():
    name = "cumsum_rows_fp32"
    mark("SETUP", "ops", name)
    x = rand(8192, 4096)
    mark("CASE", "ops", name)
    out = twice(lambda: torch.cumsum(x, 1))
    if verify():
        err = rel_err(out[:64], torch.cumsum(x[:64].double(), 1))
        check(name, err < 1e-4, f"rel_err={err:.2e}")


@case("ops")
def topk():
    name = "topk_16M_k1024"
    mark("SETUP", "ops", name)
    x = rand(1 << 24)
    mark("CASE", "ops", name)
    vals, _ = twice(lambda: torch.topk(x, 1024))
    if verify():
        check(name, bool(torch.equal(vals.sort(descending=True).values, torch.sort(x, descending=True).values[:1024])), "top 1024")


@case("ops")
def bincount():
    name = "bincount_16M_1024bins"
    mark("SETUP", "ops", name)
    x = torch.randint(0, 1024, (1 << 24,), device=dev, generator=gen)
    mark("CASE", "ops", name)
    out = twice(lambda: torch.bincount(x, minlength=1024))
    if verify():
        check(name, int(out.sum()) == x.numel(), f"sum={int(out.sum())}")


@case("ops")
def histc():
    name = "histc_16M_256bins"
    mark("SETUP", "ops", name)
    x = rand(1 << 24)
    mark("CASE", "ops", name)
    out = twice(lambda: torch.histc(x, bins=256, min=-4, max=4))
    if verify():
        check(name, abs(int(out.sum()) - int(((x >= -4) & (x <= 4)).sum())) == 0, f"sum={int(out.sum())}")


@case("ops")
def unique():
    name = "unique_int64_16M"
    mark("SETUP", "ops", name)
    x = torch.randint(0, 100000, (1 << 24,), device=dev, generator=gen)
    mark("CASE", "ops", name)
    out = twice(lambda: torch.unique(x))
    if verify():
        check(name, out.numel() <= 100000 and bool((out[1:] > out[:-1]).all()), f"n={out.numel()}")


@case("ops")
def elementwise():
    for name, dtype, fn, ref in [
        ("add_fp32_64M", torch.float32, lambda a, b: a + b, lambda a, b: a.double() + b.double()),
        ("mul_bf16_64M", torch.bfloat16, lambda a, b: a * b, lambda a, b: a.double() * b.double()),
        ("gelu_bf16_64M", torch.bfloat16, lambda a, b: F.gelu(a), lambda a, b: F.gelu(a.double())),
        ("silu_mul_fp16_64M", torch.float16, lambda a, b: F.silu(a) * b, lambda a, b: F.silu(a.double()) * b.double()),
        ("where_fp32_64M", torch.float32, lambda a, b: torch.where(a > 0, a, b), lambda a, b: torch.where(a > 0, a, b).double()),
    ]:
        mark("SETUP", "ops", name)
        a, b = rand(1 << 26, dtype=dtype), rand(1 << 26, dtype=dtype)
        mark("CASE", "ops", name)
        out = twice(lambda: fn(a, b))
        if verify():
            err = rel_err(out[:1 << 20], ref(a[:1 << 20], b[:1 << 20]))
            check(name, err < 1e-2, f"rel_err={err:.2e}")
        a = b = out = None  # free the GPU memory before the next case (the closures above read them)


@case("ops")
def transpose_copy():
    name = "transpose_contiguous_fp32"
    mark("SETUP", "ops", name)
    x = rand(8192, 8192)
    mark("CASE", "ops", name)
    out = twice(lambda: x.t().contiguous())
    if verify():
        check(name, bool(torch.equal(out[:100, :100], x[:100, :100].t())), "equal")


@case("ops")
def reductions():
    mark("SETUP", "ops", "reductions")
    x = rand(1 << 26)
    m = rand(8192, 8192)
    for name, fn, ref in [
        ("sum_fp32_64M", lambda: x.sum(), lambda: x.double().sum()),
        ("sum_rows_fp32", lambda: m.sum(dim=1), lambda: m.double().sum(dim=1)),
        ("amax_cols_fp32", lambda: m.amax(dim=0), lambda: m.double().amax(dim=0)),
        ("norm_fp32_64M", lambda: torch.linalg.vector_norm(x), lambda: torch.linalg.vector_norm(x.double())),
    ]:
        mark("CASE", "ops", name)
        out = twice(fn)
        if verify():
            err = rel_err(out, ref())
            check(name, err < 1e-4, f"rel_err={err:.2e}")


@case("ops")
def softmax_cases():
    for name, shape, dtype in [("softmax_fp32_8192x8192", (8192, 8192), torch.float32),
                               ("softmax_bf16_4096x32768", (4096, 32768), torch.bfloat16),
                               ("log_softmax_fp32_32x50304", (32 * 128, 50304), torch.float32)]:
        mark("SETUP", "ops", name)
        x = rand(*shape, dtype=dtype)
        mark("CASE", "ops", name)
        fn = F.log_softmax if name.startswith("log") else F.softmax
        out = twice(lambda: fn(x, dim=-1))
        if verify():
            err = rel_err(out[:16], fn(x[:16].double(), dim=-1))
            check(name, err < 1e-2, f"rel_err={err:.2e}")
        x = out = None  # free the GPU memory before the next case


@case("ops")
def cross_entropy():
    name = "cross_entropy_fwd_bwd"
    mark("SETUP", "ops", name)
    logits = rand(4096, 50304, dtype=torch.bfloat16).requires_grad_()
    target = torch.randint(0, 50304, (4096,), device=dev, generator=gen)
    mark("CASE", "ops", name)
    for _ in range(2):
        logits.grad = None
        loss = F.cross_entropy(logits, target)
        loss.backward()
    if verify():
        ref = F.cross_entropy(logits.detach()[:64].double(), target[:64])
        sub = F.cross_entropy(logits.detach()[:64].float(), target[:64])
        check(name, abs(float(sub) - float(ref)) < 1e-2 and bool(torch.isfinite(logits.grad.float()).all()), f"loss={float(loss):.4f}")


@case("ops")
def layer_norm():
    name = "layer_norm_bf16_16384x4096"
    mark("SETUP", "ops", name)
    x = rand(16384, 4096, dtype=torch.bfloat16).requires_grad_()
    w = torch.ones(4096, device=dev, dtype=torch.bfloat16, requires_grad=True)
    b = torch.zeros(4096, device=dev, dtype=torch.bfloat16, requires_grad=True)
    g = rand(16384, 4096, dtype=torch.bfloat16)
    mark("CASE", "ops", name + "_fwd")
    out = twice(lambda: F.layer_norm(x, (4096,), w, b))
    if verify():
        err = rel_err(out[:16], F.layer_norm(x[:16].double(), (4096,)))
        check(name + "_fwd", err < 1e-2, f"rel_err={err:.2e}")
    mark("CASE", "ops", name + "_bwd")
    for _ in range(2):
        x.grad = w.grad = b.grad = None
        F.layer_norm(x, (4096,), w, b).backward(g)
    if verify():
        check(name + "_bwd", bool(torch.isfinite(x.grad.float()).all()), "grads finite")


@case("ops")
def rms_norm():
    name = "rms_norm_bf16_16384x4096"
    if not hasattr(F, "rms_norm"):
        return
    mark("SETUP", "ops", name)
    x = rand(16384, 4096, dtype=torch.bfloat16)
    w = torch.ones(4096, device=dev, dtype=torch.bfloat16)
    mark("CASE", "ops", name)
    out = twice(lambda: F.rms_norm(x, (4096,), w, eps=1e-6))
    if verify():
        ref = x[:16].double() * torch.rsqrt(x[:16].double().pow(2).mean(-1, keepdim=True) + 1e-6)
        err = rel_err(out[:16], ref)
        check(name, err < 1e-2, f"rel_err={err:.2e}")


@case("ops")
def embedding():
    name = "embedding_50304x1024"
    mark("SETUP", "ops", name)
    table = rand(50304, 1024, dtype=torch.bfloat16).requires_grad_()
    idx = torch.randint(0, 50304, (16384,), device=dev, generator=gen)
    g = rand(16384, 1024, dtype=torch.bfloat16)
    mark("CASE", "ops", name + "_fwd")
    out = twice(lambda: F.embedding(idx, table))
    if verify():
        check(name + "_fwd", bool(torch.equal(out[:100], table.detach()[idx[:100]])), "equal")
    mark("CASE", "ops", name + "_bwd")
    for _ in range(2):
        table.grad = None
        F.embedding(idx, table).backward(g)
    if verify():
        ref = torch.zeros(50304, 1024, device=dev, dtype=torch.float64).index_add_(0, idx, g.double())
        err = rel_err(table.grad, ref)
        check(name + "_bwd", err < 1e-2, f"rel_err={err:.2e}")


@case("ops")
def index_add_scatter():
    name = "index_add_fp32"
    mark("SETUP", "ops", name)
    out0 = torch.zeros(65536, 256, device=dev)
    idx = torch.randint(0, 65536, (1 << 18,), device=dev, generator=gen)
    src = rand(1 << 18, 256)
    mark("CASE", "ops", name)
    out = twice(lambda: out0.clone().index_add_(0, idx, src))
    if verify():
        err = rel_err(out, torch.zeros(65536, 256, device=dev, dtype=torch.float64).index_add_(0, idx, src.double()))
        check(name, err < 1e-5, f"rel_err={err:.2e}")
    name = "scatter_add_hot_fp32"
    mark("SETUP", "ops", name)
    index = torch.randint(0, 64, (1 << 24,), device=dev, generator=gen)
    values = rand(1 << 24)
    mark("CASE", "ops", name)
    out = twice(lambda: torch.zeros(64, device=dev).scatter_add_(0, index, values))
    if verify():
        err = rel_err(out, torch.zeros(64, device=dev, dtype=torch.float64).scatter_add_(0, index, values.double()))
        check(name, err < 1e-4, f"rel_err={err:.2e}")
    name = "index_select_rows"
    mark("CASE", "ops", name)
    got = twice(lambda: torch.index_select(src, 0, idx[: 1 << 16] % src.shape[0]))
    if verify():
        check(name, bool(torch.equal(got[:10], src[idx[:10] % src.shape[0]])), "equal")


@case("ops")
def adamw_fused():
    name = "adamw_fused_step"
    mark("SETUP", "ops", name)
    params = [torch.nn.Parameter(rand(4096, 4096)) for _ in range(8)]
    for p in params:
        p.grad = rand(4096, 4096, scale=1e-2)
    opt = torch.optim.AdamW(params, lr=1e-3, fused=True)
    mark("CASE", "ops", name)
    twice(lambda: opt.step())
    if verify():
        check(name, all(bool(torch.isfinite(p).all()) for p in params), "finite")


@case("ops")
def dropout():
    name = "dropout_bf16_64M"
    mark("SETUP", "ops", name)
    x = rand(1 << 26, dtype=torch.bfloat16)
    mark("CASE", "ops", name)
    out = twice(lambda: F.dropout(x, 0.1, training=True))
    if verify():
        kept = float((out != 0).float().mean())
        check(name, abs(kept - 0.9) < 0.01, f"kept={kept:.3f}")


# ------------------------------------------------------------------- Triton, torch.compile, a block

@case("triton")
def triton_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
        pid = tl.program_id(0)
        num_m, num_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
        group = pid // (GROUP * num_n)
        first_m = group * GROUP
        size_m = min(num_m - first_m, GROUP)
        pm = first_m + (pid % (GROUP * num_n)) % size_m
        pn = (pid % (GROUP * num_n)) // size_m
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
        b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for _ in range(0, tl.cdiv(K, BK)):
            acc += tl.dot(tl.load(a), tl.load(b))
            a += BK * sak
            b += BK * sbk
        tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.bfloat16))

    @triton.jit
    def softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(y_ptr + row * stride + cols, (e / tl.sum(e, axis=0)).to(tl.bfloat16), mask=mask)

    name = "triton_matmul_bf16_4096"
    mark("SETUP", "triton", name)
    M = N = K = 4096
    a, b = rand(M, K, dtype=torch.bfloat16), rand(K, N, dtype=torch.bfloat16)
    c = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 256),)
    launch = lambda: matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                                         BM=128, BN=256, BK=64, GROUP=8, num_warps=8, num_stages=3)
    launch()  # compile outside the marked case
    torch.cuda.synchronize()
    mark("CASE", "triton", name)
    twice(launch)
    if verify():
        err = rel_err(c[:128], a[:128].double() @ b.double())
        check(name, err < 1e-2, f"rel_err={err:.2e}")

    name = "triton_softmax_bf16_8192x4096"
    mark("SETUP", "triton", name)
    x = rand(8192, 4096, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    launch = lambda: softmax_kernel[(8192,)](x, y, 4096, x.stride(0), BLOCK=4096, num_warps=8)
    launch()
    torch.cuda.synchronize()
    mark("CASE", "triton", name)
    twice(launch)
    if verify():
        err = rel_err(y[:16], F.softmax(x[:16].double(), -1))
        check(name, err < 1e-2, f"rel_err={err:.2e}")


@case("triton")
def torch_compile():
    name = "compiled_rmsnorm_silu"

    def fn(x, w, y):
        xf = x.float()
        n = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
        return (n * w).to(x.dtype) * F.silu(y)

    mark("SETUP", "triton", name)
    x, y = rand(16384, 4096, dtype=torch.bfloat16), rand(16384, 4096, dtype=torch.bfloat16)
    w = rand(4096, dtype=torch.bfloat16)
    compiled = torch.compile(fn)
    compiled(x, w, y)  # compile outside the marked case
    torch.cuda.synchronize()
    mark("CASE", "triton", name)
    out = twice(lambda: compiled(x, w, y))
    if verify():
        err = rel_err(out[:16], fn(x[:16].double(), w.double(), y[:16].double()))
        check(name, err < 2e-2, f"rel_err={err:.2e}")


@case("triton")
def transformer_block():
    name = "transformer_block_fwd_bwd"
    mark("SETUP", "triton", name)
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=1024, nhead=16, dim_feedforward=4096, dropout=0.1,
                                             batch_first=True, norm_first=True, activation="gelu",
                                             device=dev, dtype=torch.bfloat16)
    x = rand(8, 1024, 1024, dtype=torch.bfloat16).requires_grad_()
    mark("CASE", "triton", name)
    for _ in range(2):
        layer.zero_grad(set_to_none=True)
        x.grad = None
        out = layer(x)
        out.float().pow(2).mean().backward()
    if verify():
        check(name, bool(torch.isfinite(x.grad.float()).all()), f"loss={float(out.float().pow(2).mean()):.4f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", default="all", help=f"all, or one or more of {', '.join(CASES)} separated by commas")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    groups = list(CASES) if args.group == "all" else args.group.split(",")
    if unknown := [g for g in groups if g not in CASES]:
        parser.error(f"unknown group(s) {', '.join(unknown)}; choose from all, {', '.join(CASES)}")
    if args.list:
        for g in groups:
            print(g, [f.__name__ for f in CASES[g]])
        return 0
    print(f"@@ENV torch={torch.__version__} cuda={torch.version.cuda} gpu={torch.cuda.get_device_name()}", flush=True)
    gen.manual_seed(1234)
    failures = 0
    for g in groups:
        for fn in CASES[g]:
            t0 = time.time()
            try:
                fn()
            except Exception as exc:  # one broken case must not lose the others' profiles
                failures += 1
                print(f"@@ERROR {g}/{fn.__name__}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", flush=True)
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            print(f"@@DONE {g}/{fn.__name__} {time.time() - t0:.1f}s", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
