#!/usr/bin/env python3
"""A small transformer-encoder training loop whose sequence length changes from step to step.

Token embedding + learned positions, nn.TransformerEncoder (2 layers, d=256, 4 heads, feed-forward 1024,
pre-norm, no dropout, batch_first), a linear head over a 1000-token vocabulary, cross-entropy against
random targets, fused AdamW; fp32, batch 16. Each step's inputs are drawn on the GPU (a seeded
torch.Generator) at a sequence length drawn (random.Random(--seed)) from --lengths: so the matrix
products' shapes, the attention kernels' grids and cuBLAS's kernel choices change from step to step.
No synchronisation inside the loop; the losses are checked (finite) after the clock stops.

The warm-up runs each length of --lengths once, in order (--warmup defaults to their number), so every shape
has been seen before the clock starts; the timed steps' lengths are in the JSON line (``seq_lens``).

(24 timed steps by default, fewer than the ~40 first planned: each step is ~100 kernels and several hundred
PyTorch ops, and the nsys export of 40 would be too large a test fixture.)

    python3 workloads/clock/varlen_train.py [--iters 24] [--lengths 128,192,256,384,512] [--seed 0]
"""

from __future__ import annotations

import random

import torch
import torch.nn.functional as F
from torch import nn

import clock


class Encoder(nn.Module):
    def __init__(self, vocab: int, dim: int, heads: int, layers: int, ff: int, max_len: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(max_len, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, ff, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        return self.head(self.encoder(x))


def main() -> None:
    p = clock.parser("varlen_train", __doc__, iters=24, warmup=-1)
    p.add_argument("--lengths", default="128,192,256,384,512", help="sequence lengths to draw from")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--vocab", type=int, default=1000)
    args = p.parse_args()
    lengths = [int(s) for s in args.lengths.split(",")]
    if args.warmup == -1:
        args.warmup = len(lengths)
    torch.manual_seed(args.seed)
    model = Encoder(args.vocab, 256, 4, 2, 1024, max(lengths)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    rng = random.Random(args.seed)
    warm = [lengths[i % len(lengths)] for i in range(args.warmup)]
    timed = [rng.choice(lengths) for _ in range(args.iters)]

    def step(seq: int) -> torch.Tensor:
        tokens = torch.randint(0, args.vocab, (args.batch, seq), device="cuda", generator=gen)
        targets = torch.randint(0, args.vocab, (args.batch, seq), device="cuda", generator=gen)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, args.vocab), targets.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.detach()

    clk = clock.Clock(args, "varlen_train", None)
    losses = []
    for i, seq in enumerate(warm + timed):
        if i == args.warmup:
            clk.start()
        losses.append(step(seq))
    clk.stop()
    vals = clock.check_finite("loss", torch.stack(losses))
    tokens_per_step = [args.batch * s for s in timed]
    clk.report(seq_lens=timed, warmup_seq_lens=warm, lengths=lengths, seed=args.seed, batch=args.batch,
               layers=2, dim=256, heads=4, ff=1024, vocab=args.vocab, dtype="fp32", optimizer="AdamW(fused=True)",
               mean_tokens_per_step=sum(tokens_per_step) / len(tokens_per_step),
               first_loss=round(vals[0], 5), last_loss=round(vals[-1], 5))


if __name__ == "__main__":
    main()
