#!/usr/bin/env python3
"""Greedy token-by-token decoding with a small decoder, op by op (eager) or one CUDA graph replay a token (graph).

The decoder: 2 layers, d=256, 4 heads, LayerNorm, fp32, a KV cache of fixed length (--ctx 128 positions),
vocabulary 4096, batch 1. The token and its position live in device tensors: each layer writes its key and
value at that position (index_copy_), attends over the whole cache with an additive mask that hides the
positions not yet written (scaled_dot_product_attention), and the next token is the argmax of the logits,
written back into the input token's buffer and into a device-side list of produced tokens. Nothing is
read back while decoding: no per-token synchronisation. So one token's work has fixed shapes and
addresses and can be captured once and replayed.

--mode eager: each token is ~30 small kernel launches from Python; the GPU finishes each kernel long
before the host launches the next one (launch-bound). --mode graph: the warm-up tokens run eagerly on a
side stream (as PyTorch's docs ask), then one torch.cuda.CUDAGraph of one token's work is captured and
replayed once per timed token: the host is done at once and the GPU sets the pace. Both modes decode the
same tokens: in graph mode, after the clock stops, the state is reset and the warm-up tokens and the first
--check-tokens timed tokens are decoded again eagerly and compared (a short re-run keeps the capture small).

    python3 workloads/clock/decode.py --mode eager|graph [--iters 64] [--warmup 3]
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

import clock


class Decoder(nn.Module):
    def __init__(self, vocab: int, dim: int, heads: int, layers: int, ctx: int):
        super().__init__()
        self.dim, self.heads, self.hd, self.layers, self.ctx = dim, heads, dim // heads, layers, ctx
        self.embed = nn.Embedding(vocab, dim)
        self.ln1 = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.qkv = nn.ModuleList(nn.Linear(dim, 3 * dim, bias=False) for _ in range(layers))
        self.proj = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        self.ln2 = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.fc1 = nn.ModuleList(nn.Linear(dim, 4 * dim) for _ in range(layers))
        self.fc2 = nn.ModuleList(nn.Linear(4 * dim, dim, bias=False) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.register_buffer("k_cache", torch.zeros(layers, 1, heads, ctx, dim // heads))
        self.register_buffer("v_cache", torch.zeros(layers, 1, heads, ctx, dim // heads))
        self.register_buffer("positions", torch.arange(ctx))

    def forward(self, tok: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """The next token (shape [1]) after tok (shape [1]) at position pos (a device tensor of shape [1])."""
        h_, d_ = self.heads, self.hd
        x = self.embed(tok)                                                    # [1, dim]
        bias = torch.where(self.positions <= pos, 0.0, float("-inf")).view(1, 1, 1, self.ctx)
        for i in range(self.layers):
            q, k, v = self.qkv[i](self.ln1[i](x)).view(3, 1, h_, 1, d_).unbind(0)   # each [1, heads, 1, hd]
            self.k_cache[i].index_copy_(2, pos, k)
            self.v_cache[i].index_copy_(2, pos, v)
            a = F.scaled_dot_product_attention(q, self.k_cache[i], self.v_cache[i], attn_mask=bias)
            x = torch.addmm(x, a.transpose(1, 2).reshape(1, self.dim), self.proj[i].weight.t())
            u = F.gelu(self.fc1[i](self.ln2[i](x)))
            x = torch.addmm(x, u, self.fc2[i].weight.t())
        return self.head(self.ln_f(x)).argmax(-1)


def main() -> None:
    p = clock.parser("decode", __doc__, iters=64)
    p.add_argument("--mode", choices=["eager", "graph"], required=True)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ctx", type=int, default=128, help="KV cache positions")
    p.add_argument("--vocab", type=int, default=4096)
    p.add_argument("--check-tokens", type=int, default=8,
                   help="graph mode: after the clock, re-decode the warm-up and this many tokens eagerly and compare")
    args = p.parse_args()
    if args.warmup + args.iters > args.ctx:
        p.error("--warmup + --iters must fit in --ctx")
    if args.mode == "graph" and args.warmup < 1:
        p.error("graph mode needs at least one warm-up token before the capture")
    torch.manual_seed(0)
    model = Decoder(args.vocab, args.dim, args.heads, args.layers, args.ctx).cuda().eval()
    tok = torch.ones(1, dtype=torch.long, device="cuda")          # the start token
    pos = torch.zeros(1, dtype=torch.long, device="cuda")
    produced = torch.full((args.ctx,), -1, dtype=torch.long, device="cuda")

    def one_token() -> None:
        tok.copy_(model(tok, pos))
        produced.index_copy_(0, pos, tok)
        pos.add_(1)

    def reset() -> None:
        tok.fill_(1)
        pos.zero_()
        produced.fill_(-1)
        model.k_cache.zero_()
        model.v_cache.zero_()

    clk = clock.Clock(args, "decode", args.mode)
    with torch.no_grad():
        graph = None
        if args.mode == "eager":
            for _ in range(args.warmup):
                one_token()
        else:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(args.warmup):
                    one_token()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                one_token()                      # captured, not run: pos stays at args.warmup
        clk.start()
        for _ in range(args.iters):
            if graph is None:
                one_token()
            else:
                graph.replay()
        clk.stop()
        n = args.warmup + args.iters
        tokens = produced[:n].cpu().tolist()
        final_pos = int(pos.item())
        if final_pos != n or any(t < 0 or t >= args.vocab for t in tokens):
            clock.fail(f"decoding went wrong: position {final_pos} (expected {n}), tokens {tokens}")
        clock.check_finite("k_cache", model.k_cache[:, :, :, :n])
        matches_eager = None
        if graph is not None:
            m = min(n, args.warmup + args.check_tokens)
            reset()
            for _ in range(m):
                one_token()
            again = produced[:m].cpu().tolist()
            matches_eager = again == tokens[:m]
            if not matches_eager:
                clock.fail(f"graph replay tokens {tokens[:m]} differ from an eager re-run {again}")
    clk.report(mode=args.mode, layers=args.layers, dim=args.dim, heads=args.heads, ctx=args.ctx,
               vocab=args.vocab, batch=1, dtype="fp32", tokens=tokens, graph_matches_eager=matches_eager,
               check_tokens=args.check_tokens if graph is not None else None)


if __name__ == "__main__":
    main()
