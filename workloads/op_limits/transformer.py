#!/usr/bin/env python3
"""A decoder-only transformer's training step: token embedding, 4 pre-norm blocks (d = 1024, 16 heads of 64,
causal scaled-dot-product attention, MLP 4d with GELU), a final LayerNorm, an LM head (vocabulary 8192, no
bias), cross-entropy; batch 4 of 2048 tokens; bf16 autocast over fp32 weights; AdamW(fused=True).

A block: h = x + proj(sdpa(q, k, v, is_causal=True)) with q, k, v from one qkv linear of ln1(x), heads
split by view/transpose; out = h + fc2(gelu(fc1(ln2(h)))). Every linear has a bias except the LM head. The
tokens and targets are fixed random ids (seed 0). No synchronisation inside the loop; the losses stay on the
GPU and are checked (finite) after the clock stops.

Hand count (hand_count.transformer, in the JSON line), T = batch x seq tokens:
- each linear (fan_in -> fan_out): forward 2 T fan_in fan_out FLOPs, input gradient and weight gradient as
  many again; per block qkv (d -> 3d), proj (d -> d), fc1 (d -> 4d), fc2 (4d -> d): 3 x 2 T 12 d^2;
  the LM head 3 x 2 T d V (its input gradient flows back through every block, so every linear's input
  gradient is computed);
- causal attention: half of the full QK^T and PV products, forward 2 x 2 B h S^2 dh / 2 = 2 B S^2 d FLOPs
  a layer; backward twice that (dV, dP, dQ, dK). A flash-style backward kernel also recomputes QK^T (another
  B S^2 d a layer): printed apart (hand_recompute_flop), not in the step's FLOPs;
- minimal bytes of those ops (bf16 operands; attention: q, k, v, o and the fp32 row log-sum-exp forward,
  q, k, v, o, dO, lse read and dq, dk, dv written backward).
Not counted: layer norms, GELU, residual adds, the embedding and its backward, cross-entropy, autocast's
casts of the weights, AdamW. ``hand_tflops`` = the counted FLOPs a step / the program's own step time.

    python3 workloads/op_limits/transformer.py [--layers 4] [--dim 1024] [--heads 16] [--seq 2048] [--batch 4]
        [--vocab 8192] [--iters 20] [--warmup 3] [--kineto PATH]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "clock"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import clock  # noqa: E402
import hand_count  # noqa: E402


class Block(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Model(nn.Module):
    def __init__(self, vocab: int, dim: int, heads: int, layers: int):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.emb(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def main() -> None:
    p = clock.parser("transformer", __doc__, iters=20)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--vocab", type=int, default=8192)
    args = p.parse_args()
    if args.dim % args.heads:
        p.error("--dim must be a multiple of --heads")
    torch.manual_seed(0)
    model = Model(args.vocab, args.dim, args.heads, args.layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    ids = torch.randint(0, args.vocab, (args.batch, args.seq), device="cuda")
    targets = torch.randint(0, args.vocab, (args.batch * args.seq,), device="cuda")

    def step() -> torch.Tensor:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids)
        loss = F.cross_entropy(logits.float().view(-1, args.vocab), targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.detach()

    clk = clock.Clock(args, "transformer", "bf16")
    losses = []
    for i in range(args.warmup + args.iters):
        if i == args.warmup:
            clk.start()
        losses.append(step())
    clk.stop()
    vals = clock.check_finite("loss", torch.stack(losses))
    count = hand_count.transformer(args.layers, args.dim, args.heads, args.seq, args.batch, args.vocab)
    step_s = (clk.t1 - clk.t0) / args.iters
    params = sum(p.numel() for p in model.parameters())
    clk.report(dtype="bf16 autocast", layers=args.layers, dim=args.dim, heads=args.heads, seq=args.seq, batch=args.batch, vocab=args.vocab,
               params=params, optimizer="AdamW(fused=True)", first_loss=round(vals[0], 6), last_loss=round(vals[-1], 6),
               hand_tflops=round(count.step_flop / step_s / 1e12, 2), hand_tb_per_s=round(count.step_bytes / step_s / 1e12, 3),
               **count.to_json())


if __name__ == "__main__":
    main()
