#!/usr/bin/env python3
"""Token-by-token decoding, op by op or as one CUDA graph a token: the fixtures
tests/data/h200_ncuwrap/steps/{decode_eager,graph_decode,graph_decode_pergraph}.sqlite.gz are nsys captures of it.

A small decoder (4 layers, dim 512, 8 heads, RMSNorm, SiLU-gated MLP, fp32) decodes
greedily, batch 1, with a static KV cache of 256 positions. The position lives in a device tensor: each
layer writes its key and value at that position with index_copy_, masks the positions after it, and the
token picks its successor by argmax, written back into the same input buffer; so one token's work has
fixed shapes and addresses and can be captured once and replayed.

--mode eager: each token is ~130 launches of tiny kernels from Python; the GPU is busy a small share of
the token's time. --mode graph: after the warm-up, one torch.cuda.CUDAGraph of one token's work is
captured and replayed once per token. In both modes 3 warm-up tokens run first (the graph's on a side
stream, as PyTorch's docs ask), the state is reset, and then each token is one NVTX range named `step`
that ends with .item() of the new token (the host streams each token out, as a chat server does).

Prints one line of JSON at the end: step_wall_ms (host, time.perf_counter() between successive step
starts, the last one to the loop's end), step_gpu_ms (a torch.cuda.Event pair around the token's GPU
work), their medians over the steady steps (all but the first), and the tokens produced (the same in both
modes).

    python3 workloads/steps/graph_decode.py --mode {eager,graph} [--steps 64] [--layers 4]
        [--dim 512] [--heads 8] [--ctx 256] [--vocab 32768]
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.nn.functional as F
from torch import nn

from marks import Marks, add_arguments  # this folder's: how iterations are marked
from step_clock import StepClock  # and how they are timed


def rms_norm(x, weight, eps: float = 1e-6):
    return x * x.pow(2).mean(-1, keepdim=True).add(eps).rsqrt() * weight


class Layer(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm1, self.norm2 = nn.Parameter(torch.ones(dim)), nn.Parameter(torch.ones(dim))
        self.qkv, self.proj = nn.Linear(dim, 3 * dim, bias=False), nn.Linear(dim, dim, bias=False)
        self.gate, self.up = nn.Linear(dim, 4 * dim, bias=False), nn.Linear(dim, 4 * dim, bias=False)
        self.down = nn.Linear(4 * dim, dim, bias=False)


class Decoder(nn.Module):
    def __init__(self, vocab: int, dim: int, heads: int, layers: int, ctx: int):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Layer(dim) for _ in range(layers))
        self.norm = nn.Parameter(torch.ones(dim))
        self.head = nn.Linear(dim, vocab, bias=False)
        self.register_buffer("k_cache", torch.zeros(layers, 1, heads, ctx, dim // heads))
        self.register_buffer("v_cache", torch.zeros(layers, 1, heads, ctx, dim // heads))
        self.register_buffer("positions", torch.arange(ctx))

    def forward(self, tok, pos):
        """Next token after tok (shape [1]) at position pos (a device tensor of shape [1])."""
        h_, d_ = self.heads, self.head_dim
        x = self.embed(tok)                                        # [1, dim]
        future = self.positions > pos                              # [ctx]: the cache entries not yet written
        for i, layer in enumerate(self.layers):
            q, k, v = layer.qkv(rms_norm(x, layer.norm1)).view(1, 3, h_, 1, d_).unbind(1)
            self.k_cache[i].index_copy_(2, pos, k)
            self.v_cache[i].index_copy_(2, pos, v)
            scores = (q @ self.k_cache[i].transpose(-1, -2)) * d_ ** -0.5   # [1, heads, 1, ctx]
            att = scores.masked_fill(future, float("-inf")).softmax(-1) @ self.v_cache[i]
            x = x + layer.proj(att.reshape(1, h_ * d_))
            h = rms_norm(x, layer.norm2)
            x = x + layer.down(F.silu(layer.gate(h)) * layer.up(h))
        return self.head(rms_norm(x, self.norm)).argmax(-1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["eager", "graph"], required=True)
    parser.add_argument("--steps", type=int, default=64, help="tokens decoded, one step each")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--ctx", type=int, default=256, help="KV cache positions")
    parser.add_argument("--vocab", type=int, default=32768)
    parser.add_argument("--warmup", type=int, default=3, help="tokens decoded (and discarded) before the steps")
    add_arguments(parser)
    args = parser.parse_args()
    marks = Marks(args)
    if max(args.steps, args.warmup) > args.ctx:
        parser.error("--steps and --warmup must fit in --ctx")
    torch.manual_seed(0)
    model = Decoder(args.vocab, args.dim, args.heads, args.layers, args.ctx).cuda().eval()
    tok = torch.ones(1, dtype=torch.long, device="cuda")   # the start token
    pos = torch.zeros(1, dtype=torch.long, device="cuda")

    def one_token():
        tok.copy_(model(tok, pos))
        pos.add_(1)

    def reset():
        tok.fill_(1)
        pos.zero_()
        model.k_cache.zero_()
        model.v_cache.zero_()

    graph = None
    with torch.no_grad():
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
                one_token()
        reset()
        torch.cuda.synchronize()
        clock, tokens = StepClock(args.steps), []
        marks.start()
        for step in range(args.steps):
            clock.step()
            marks.push()
            clock.gpu_start(step)
            if graph is None:
                one_token()
            else:
                graph.replay()
            clock.gpu_end(step)
            tokens.append(tok.item())
            marks.pop()
        marks.stop()
        clock.stop()
    print(json.dumps({
        "program": "graph_decode", "mode": args.mode, "steps": args.steps, "layers": args.layers,
        "dim": args.dim, "heads": args.heads, "ctx": args.ctx, "vocab": args.vocab, "warmup": args.warmup,
        **clock.timings(4),
        "tokens": tokens,
        "device": torch.cuda.get_device_name(), "torch": torch.__version__,
    }))


if __name__ == "__main__":
    main()
