#!/usr/bin/env python3
"""One matrix product C = A @ B a step, n x n x n (default 8192), forward only, at one of four precisions.

--dtype fp32: float32 A, B, C with torch.set_float32_matmul_precision("highest"): TF32 off, cuBLAS's FP32
  product on the CUDA cores (FFMA).
--dtype tf32: the same float32 tensors with precision "high": TF32 tensor cores.
--dtype bf16: bfloat16 A, B, C (tensor cores).
--dtype fp8: float8_e4m3fn A (row-major) and B (column-major: the transpose of a row-major n x n tensor), one
  float32 scale of 1.0 each (tensor-wise scaling), C = torch._scaled_mm(A, B, scale_a, scale_b,
  out_dtype=torch.bfloat16): bf16 C.

Hand count (hand_count.matmul, in the JSON line): FLOPs a step = 2 n^3 (a multiply-add counts two); minimal
bytes a step = A and B read once, C written once = n^2 (a + b + c), a = b = c = 4 bytes (fp32, tf32) or 2
(bf16); fp8: a = b = 1, c = 2, plus the two 4-byte scales. ``hand_tflops`` = FLOPs a step / the program's own
step time (step_ms_mean).

No synchronisation inside the loop. After the clock stops the last C is checked: finite, and its first 64 x 64
block against a float64 product of the same inputs (as stored: bf16 and fp8 values are exact in float64),
relative L2 error under the dtype's bound: fp32 5e-5 (a TF32 product would miss it: TF32 keeps 10 mantissa
bits), tf32 5e-3, bf16 and fp8 1e-2 (their bf16 output rounds to 8 bits).

    python3 workloads/op_limits/matmul.py --dtype fp32|tf32|bf16|fp8 [--n 8192] [--iters 20] [--warmup 3] [--kineto PATH]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "clock"))

import torch  # noqa: E402

import clock  # noqa: E402
import hand_count  # noqa: E402

BOUND = {"fp32": 5e-5, "tf32": 5e-3, "bf16": 1e-2, "fp8": 1e-2}
BLOCK = 64


def main() -> None:
    p = clock.parser("matmul", __doc__, iters=20)
    p.add_argument("--dtype", choices=["fp32", "tf32", "bf16", "fp8"], required=True)
    p.add_argument("--n", type=int, default=8192, help="rows = columns = inner size (a multiple of 16)")
    args = p.parse_args()
    if args.n < BLOCK or args.n % 16:
        p.error("--n must be a multiple of 16, at least 64")
    n = args.n
    torch.manual_seed(0)
    torch.set_float32_matmul_precision("highest" if args.dtype == "fp32" else "high")
    if args.dtype in ("fp32", "tf32"):
        a = torch.randn(n, n, device="cuda")
        b = torch.randn(n, n, device="cuda")
        step = lambda: a @ b
    elif args.dtype == "bf16":
        a = torch.randn(n, n, device="cuda").to(torch.bfloat16)
        b = torch.randn(n, n, device="cuda").to(torch.bfloat16)
        step = lambda: a @ b
    else:
        a = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm wants its second operand
        one_a = torch.ones((), device="cuda", dtype=torch.float32)
        one_b = torch.ones((), device="cuda", dtype=torch.float32)

        def step():
            out = torch._scaled_mm(a, b, scale_a=one_a, scale_b=one_b, out_dtype=torch.bfloat16)
            return out[0] if isinstance(out, tuple) else out  # older releases returned (out, amax)

    clk = clock.Clock(args, "matmul", args.dtype)
    c = None
    for i in range(args.warmup + args.iters):
        if i == args.warmup:
            clk.start()
        c = step()
    clk.stop()
    if not bool(torch.isfinite(c).all()):
        clock.fail("the product has values that are not finite")
    ref = a[:BLOCK].float().double() @ b[:, :BLOCK].float().double()
    got = c[:BLOCK, :BLOCK].float().double()
    rel_err = float((got - ref).norm() / ref.norm())
    if not rel_err < BOUND[args.dtype]:
        clock.fail(f"{args.dtype}: relative L2 error of the first {BLOCK}x{BLOCK} block {rel_err:.3g} (bound {BOUND[args.dtype]})")
    count = hand_count.matmul(args.dtype, n)
    step_s = (clk.t1 - clk.t0) / args.iters
    clk.report(dtype=args.dtype, n=n, a_dtype=str(a.dtype), b_dtype=str(b.dtype), c_dtype=str(c.dtype),
               b_column_major=b.stride(0) == 1, matmul_fp32_precision=torch.get_float32_matmul_precision(),
               rel_err_block=rel_err, rel_err_bound=BOUND[args.dtype],
               hand_tflops=round(count.step_flop / step_s / 1e12, 2), hand_tb_per_s=round(count.step_bytes / step_s / 1e12, 3),
               **count.to_json())


if __name__ == "__main__":
    main()
