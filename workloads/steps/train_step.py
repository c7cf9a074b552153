#!/usr/bin/env python3
"""A small transformer training step in PyTorch: the program `ncuwrap profile --top 5` is shown on (docs/profile.md).

Token embedding, two pre-norm blocks (flash attention through scaled_dot_product_attention, a GELU MLP),
a tied output projection, cross-entropy, backward and AdamW, in bf16 autocast on the GPU: a few hundred
launches per step of cuBLAS, flash attention, layer norm, softmax, reductions and elementwise kernels.

    python3 workloads/steps/train_step.py [--steps 6] [--batch 8] [--seq 1024] [--dim 1024]
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F

from transformer import GPT  # this folder's, gpu_train.py's too


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--vocab", type=int, default=8192)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = GPT(args.vocab, args.dim, heads=args.dim // 64, layers=2).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    tokens = torch.randint(0, args.vocab, (args.batch, args.seq + 1), device="cuda")
    for step in range(args.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens[:, :-1])
            loss = F.cross_entropy(logits.float().view(-1, args.vocab), tokens[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    print(f"loss after {args.steps} steps: {loss.item():.4f}")


if __name__ == "__main__":
    main()
