#!/usr/bin/env python3
"""An inference serving loop: requests of random batch sizes and sequence lengths through a small model.

(The file is not called requests.py because this folder is first on sys.path when a program here runs, and a
file of that name would hide the well-known ``requests`` package from anything that imports it. Its JSON
line says ``"program": "requests"``.)

The model: token embedding + learned positions, nn.TransformerEncoder (2 layers, d=256, 4 heads, feed-forward
1024, batch_first, no dropout), mean pooling over the sequence and a linear head to 16 classes; fp32, eval
mode, under torch.inference_mode(). Each request draws (numpy, seeded) a batch size from --batches and a
sequence length uniformly in [--min-len, --max-len], builds its token ids on the host, copies them to the GPU,
runs the model and ends with ``.cpu()`` of its logits (a device-to-host copy that waits for the GPU), which
are checked (finite) on the host. So every request synchronises, and shapes change from request to request.
The first --warmup requests are drawn the same way and not timed. Laps (step_ms): one per request.

    python3 workloads/clock/serve_requests.py [--iters 60] [--warmup 3] [--seed 0]
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

import clock


class Classifier(nn.Module):
    def __init__(self, vocab: int, dim: int, heads: int, layers: int, ff: int, max_len: int, classes: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(max_len, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, ff, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        return self.head(self.encoder(x).mean(1))


def main() -> None:
    p = clock.parser("requests", __doc__, iters=60)
    p.add_argument("--batches", default="1,2,4,8,16", help="batch sizes a request draws from")
    p.add_argument("--min-len", type=int, default=16)
    p.add_argument("--max-len", type=int, default=256)
    p.add_argument("--vocab", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    batches = [int(s) for s in args.batches.split(",")]
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    classes = 16
    model = Classifier(args.vocab, 256, 4, 2, 1024, args.max_len, classes).cuda().eval()
    sizes = [(int(rng.choice(batches)), int(rng.integers(args.min_len, args.max_len + 1)))
             for _ in range(args.warmup + args.iters)]

    def serve(batch: int, seq: int) -> torch.Tensor:
        ids = torch.from_numpy(rng.integers(0, args.vocab, size=(batch, seq)))
        logits = model(ids.cuda())
        return logits.cpu()

    clk = clock.Clock(args, "requests", None)
    answers = []
    with torch.inference_mode():
        for i, (batch, seq) in enumerate(sizes):
            if i == args.warmup:
                clk.start()
            out = serve(batch, seq)
            if i >= args.warmup:
                clk.lap()
            answers.append(out)
        clk.stop()
    for (batch, seq), out in zip(sizes, answers):
        if tuple(out.shape) != (batch, classes) or not all(math.isfinite(v) for v in out.reshape(-1).tolist()):
            clock.fail(f"request of batch {batch}, length {seq}: bad result of shape {tuple(out.shape)}")
    timed = sizes[args.warmup:]
    clk.report(laps_synced=True, requests=[list(s) for s in timed], warmup_requests=[list(s) for s in sizes[:args.warmup]],
               batches=batches, min_len=args.min_len, max_len=args.max_len, seed=args.seed, layers=2, dim=256,
               heads=4, ff=1024, vocab=args.vocab, classes=classes, dtype="fp32",
               tokens_total=sum(b * s for b, s in timed),
               first_answer=[int(v) for v in answers[args.warmup].argmax(-1).tolist()])


if __name__ == "__main__":
    main()
