#!/usr/bin/env python3
"""Each step copies a fresh 64 MiB float32 host batch to the GPU, then computes on it (two fp32 matrix products).

The host batches come from a pool of --pool different host tensors (4096 x 4096 float32, filled once before
the loop, as a dataset already in memory); step i uses batch i % pool. The compute: gelu(x @ w1) @ w2,
squared and averaged, accumulated in a device scalar (~5-6 ms on an H200, no TF32).

--autocast bf16: the compute under torch.autocast(bfloat16) (the products on the BF16 tensor cores; the batch
is still copied as float32), for a precision pair with the same copies (workloads/clock/pageable_precision.sh).

--mode pageable: the pool is ordinary (pageable) memory and each step does a blocking ``x.cuda()``: the copy
(staged through the driver's pinned buffers) and the compute run one after the other, and the host waits
in each copy. --mode pinned: the pool is page-locked (pin_memory) and the copy of step i+1 is issued, non-
blocking, on a side stream while step i computes (prefetch one step ahead; the compute stream waits for the
copy with wait_stream, and the copied tensor is record_stream'ed on the compute stream): the copies hide
under the compute.

Laps (step_ms): the host's time at each step's end. pageable: each step's copy waits for the step before,
so the laps are near step times (laps_synced true); pinned: nothing waits, the laps are issue times.

    python3 workloads/clock/input_loop.py --mode pageable|pinned [--autocast none|bf16] [--iters 20] [--warmup 3] [--pool 3]
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

import clock


def main() -> None:
    p = clock.parser("input_loop", __doc__, iters=20)
    p.add_argument("--mode", choices=["pageable", "pinned"], required=True)
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--cols", type=int, default=4096)
    p.add_argument("--pool", type=int, default=3, help="distinct host batches, used in turn")
    p.add_argument("--autocast", choices=["none", "bf16"], default="none", help="the compute under bf16 autocast")
    args = p.parse_args()
    torch.manual_seed(0)
    pinned = args.mode == "pinned"
    pool = [torch.randn(args.rows, args.cols) for _ in range(args.pool)]
    if pinned:
        pool = [t.pin_memory() for t in pool]
    host_sums = [float(t.double().sum()) for t in pool]
    w1 = torch.randn(args.cols, args.cols, device="cuda") / args.cols ** 0.5
    w2 = torch.randn(args.cols, args.cols, device="cuda") / args.cols ** 0.5
    acc = torch.zeros((), device="cuda")
    copy_stream = torch.cuda.Stream() if pinned else None
    compute = torch.cuda.current_stream()
    seen_sums = []

    def compute_on(x: torch.Tensor) -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.autocast == "bf16"):
            out = F.gelu(x @ w1) @ w2
            acc.add_(out.float().square().mean())

    def prefetch(i: int) -> torch.Tensor:
        with torch.cuda.stream(copy_stream):
            return pool[i % args.pool].to("cuda", non_blocking=True)

    clk = clock.Clock(args, "input_loop", args.mode if args.autocast == "none" else f"{args.mode}_{args.autocast}")
    total = args.warmup + args.iters
    nxt = prefetch(0) if pinned else None
    for i in range(total):
        if i == args.warmup:
            clk.start()
        if pinned:
            compute.wait_stream(copy_stream)
            x = nxt
            x.record_stream(compute)
            if i + 1 < total:
                nxt = prefetch(i + 1)
        else:
            x = pool[i % args.pool].cuda()
        if i < min(args.warmup, args.pool):
            seen_sums.append(x.double().sum())     # the copy's checksum (warm-up steps only), compared after the loop
        compute_on(x)
        if i >= args.warmup:
            clk.lap()
    clk.stop()
    clock.check_finite("acc", acc)
    for i, s in enumerate(seen_sums):
        got, want = float(s), host_sums[i % args.pool]
        if abs(got - want) > 1e-6 * max(1.0, abs(want)) + 1e-3:
            clock.fail(f"batch {i} arrived wrong on the GPU: sum {got}, host {want}")
    batch_bytes = args.rows * args.cols * 4
    clk.report(laps_synced=not pinned, mode=args.mode, batch_shape=[args.rows, args.cols], dtype="fp32",
               compute="fp32" if args.autocast == "none" else "bf16 autocast",
               batch_mib=batch_bytes / 2 ** 20, pool=args.pool,
               copy="x.cuda() (blocking, pageable)" if not pinned else
               "pinned .to(cuda, non_blocking=True) on a side stream, one step ahead",
               step_gflop=round(2 * 2 * args.rows * args.cols * args.cols / 1e9, 1),
               acc=float(acc))


if __name__ == "__main__":
    main()
