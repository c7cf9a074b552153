#!/usr/bin/env python3
"""GPU-bound training steps: the fixture tests/data/h200_ncuwrap/steps/gpu_train.sqlite.gz is an nsys capture of it.

A 4-layer GPT-like transformer (dim 1024, 16 heads, sequence 1024, batch 16, vocabulary 32768, tied
embedding), trained in bf16 autocast with scaled_dot_product_attention and AdamW(fused=True). Each step
(an NVTX range named `step`) runs forward, cross-entropy, backward and the optimizer, and ends with
loss.item(): the host waits for the GPU once a step, as a training loop that logs its loss does. The GPU
work of a step (~10-30 ms on an H200) is far longer than the host's time to launch it (a few hundred
launches), so the steady steps are GPU-bound; the first step is slow (lazy module loading, cuBLAS
heuristics, the optimizer's state): the warm-up.

Prints one line of JSON at the end: step_wall_ms (host, time.perf_counter() between successive step
starts, the last one to the loop's end), step_gpu_ms (a torch.cuda.Event pair around each step's GPU
work, elapsed_time) and their medians over the steady steps (all but the first).

    python3 workloads/steps/gpu_train.py [--steps 8] [--batch 16] [--seq 1024] [--dim 1024]
        [--heads 16] [--layers 4] [--vocab 32768] [--eval-steps 0]
        [--marks nvtx|none] [--kineto PATH ...]
"""

from __future__ import annotations

import argparse
import json
import time

import torch
import torch.nn.functional as F

from marks import Marks, add_arguments  # this folder's: how iterations are marked
from step_clock import StepClock  # and how they are timed
from transformer import GPT  # train_step.py's too


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=32768)
    parser.add_argument("--eval-steps", type=int, default=0,
                        help="after training, this many evaluation iterations (forward and loss.item() without gradients): a second loop")
    add_arguments(parser)
    args = parser.parse_args()
    marks = Marks(args)
    torch.manual_seed(0)
    model = GPT(args.vocab, args.dim, args.heads, args.layers, embed_std=0.02).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    tokens = torch.randint(0, args.vocab, (args.batch, args.seq + 1), device="cuda")
    inputs, targets = tokens[:, :-1], tokens[:, 1:].reshape(-1)
    clock, losses = StepClock(args.steps), []
    marks.start()
    for step in range(args.steps):
        clock.step()
        marks.push()
        clock.gpu_start(step)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(inputs)
            loss = F.cross_entropy(logits.float().view(-1, args.vocab), targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        clock.gpu_end(step)
        losses.append(loss.item())
        marks.pop()
    marks.stop()
    clock.stop()
    eval_wall = []
    if args.eval_steps:  # a second loop, shorter iterations with less GPU work each: never marked
        model.eval()
        with torch.no_grad():
            for _ in range(args.eval_steps):
                t = time.perf_counter()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = F.cross_entropy(model(inputs).float().view(-1, args.vocab), targets)
                loss.item()
                eval_wall.append(round((time.perf_counter() - t) * 1e3, 3))
    params = sum(p.numel() for p in model.parameters())
    print(json.dumps({
        "program": "gpu_train", "steps": args.steps, "batch": args.batch, "seq": args.seq, "dim": args.dim,
        "heads": args.heads, "layers": args.layers, "vocab": args.vocab, "params": params,
        **clock.timings(3),
        "losses": [round(v, 4) for v in losses], "eval_steps": args.eval_steps, "eval_wall_ms": eval_wall,
        "device": torch.cuda.get_device_name(), "torch": torch.__version__,
    }))


if __name__ == "__main__":
    main()
