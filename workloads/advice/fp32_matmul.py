"""FP32 matrix multiplies as PyTorch runs them on cuBLAS (SGEMM on the FMA pipe), for issue 24's
next step "move it to the tensor cores": profiled once each (--profile), or timed uninstrumented in
FP32 and in TF32 (--time: CUDA events, 5 warm-ups, median of 20, each case in 3 process runs by the
caller) with the TF32 result's error against FP64.

    python3 fp32_matmul.py --profile          # under ncu: one torch.cdist, one matmul, FP32
    python3 fp32_matmul.py --time             # one JSON line per case and precision
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch


def cases():
    g = torch.Generator(device="cuda").manual_seed(0)
    x, y = (torch.randn(8192, 128, device="cuda", generator=g) for _ in range(2))
    a, b = (torch.randn(4096, 4096, device="cuda", generator=g) for _ in range(2))
    return {
        # cdist's Euclidean distance through a GEMM (K = 128), as the report shows it.
        "cdist_8192x8192x128": (lambda: torch.cdist(x, y), lambda: torch.cdist(x.double(), y.double())),
        "matmul_4096": (lambda: a @ b, lambda: a.double() @ b.double()),
    }


def timed(fn, warmup=5, iters=20) -> list[float]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--time", action="store_true")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    if args.profile:
        for fn, _ in cases().values():
            fn()
        torch.cuda.synchronize()
        return
    for name, (fn, ref) in cases().items():
        exact = ref()
        for tf32 in (False, True):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            times = timed(fn)
            error = ((fn().double() - exact).abs().max() / exact.abs().max()).item()
            print(json.dumps({"case": name, "precision": "tf32" if tf32 else "fp32", "median_ms": statistics.median(times),
                              "min_ms": min(times), "max_ms": max(times), "max_rel_error_vs_fp64": error,
                              "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}))
        torch.backends.cuda.matmul.allow_tf32 = False


if __name__ == "__main__":
    main()
