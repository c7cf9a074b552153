#!/usr/bin/env python3
"""Each step's batch is built on the host with numpy (image augmentation), copied to the GPU and trained on.

A batch is 16 images of 3x224x224 float32, each made from a raw 3x256x256 uint8 image (a pool of 64, drawn
once, seeded) by numpy code in Augment.__getitem__: a random crop, a random horizontal flip, brightness,
contrast and per-channel gain jitter, a clip, a gamma-like curve, a 3x3 box blur and the ImageNet
normalisation, with a generator seeded by the sample's index (so both variants produce the same batches):
a few ms of numpy an image, tens of ms a batch. The batch then goes to the GPU and a small conv net (three
stride-2 3x3 convolutions 3->32->64->128 with ReLU, global average pooling, a linear layer to 10 classes;
fp32) does forward, backward and a fused AdamW step against labels i % 10: about a millisecond of GPU work.

--workers 0: the batches come from a torch DataLoader with num_workers=0 (the numpy code runs in the main
process, between the steps), pin_memory=False, a blocking ``.cuda()``. --workers 6: the same Dataset in a
DataLoader with 6 worker processes and pin_memory=True, ``.cuda(non_blocking=True)``: the numpy work runs in
parallel with the training loop. The DataLoader (and its workers) starts before the warm-up. No
synchronisation is added in the loop; the losses and a checksum of all the batches are checked after the
clock stops (the checksum is the same in both variants).

    python3 workloads/clock/numpy_prep.py --workers 0|6 [--iters 20] [--warmup 3]
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

import clock

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32).reshape(3, 1, 1)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32).reshape(3, 1, 1)


def augment(img: np.ndarray, rng: np.random.Generator, size: int = 224) -> np.ndarray:
    """One training image (3 x size x size float32, normalised) from a raw uint8 image (3 x H x W)."""
    _, h, w = img.shape
    top, left = int(rng.integers(0, h - size + 1)), int(rng.integers(0, w - size + 1))
    x = img[:, top:top + size, left:left + size]
    if rng.random() < 0.5:
        x = x[:, :, ::-1]
    x = x.astype(np.float32) * np.float32(1 / 255)
    x *= np.float32(rng.uniform(0.8, 1.2))                                    # brightness
    mean = x.mean(axis=(1, 2), keepdims=True)
    x = (x - mean) * np.float32(rng.uniform(0.8, 1.2)) + mean                 # contrast
    x *= rng.uniform(0.9, 1.1, size=(3, 1, 1)).astype(np.float32)             # per-channel gain
    np.clip(x, 0.0, 1.0, out=x)
    g = np.float32(rng.uniform(-0.3, 0.3))
    x += g * (x * x - x)                                                      # a gamma-like curve
    p = np.pad(x, ((0, 0), (1, 1), (1, 1)), mode="edge")
    out = np.zeros_like(x)
    for dy in range(3):                                                       # 3x3 box blur
        for dx in range(3):
            out += p[:, dy:dy + size, dx:dx + size]
    out *= np.float32(1 / 9)
    return ((out - MEAN) / STD).astype(np.float32)


class Augment(Dataset):
    def __init__(self, n: int, raw: np.ndarray, seed: int):
        self.n, self.raw, self.seed = n, raw, seed

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        rng = np.random.default_rng((self.seed, i))
        return torch.from_numpy(augment(self.raw[i % len(self.raw)], rng)), i % 10


def main() -> None:
    p = clock.parser("numpy_prep", __doc__, iters=20)
    p.add_argument("--workers", type=int, required=True)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    raw = np.random.default_rng(args.seed).integers(0, 256, size=(64, 3, 256, 256), dtype=np.uint8)
    total = args.warmup + args.iters
    pinned = args.workers > 0
    loader = DataLoader(Augment(total * args.batch, raw, args.seed), batch_size=args.batch, shuffle=False,
                        num_workers=args.workers, pin_memory=pinned, drop_last=True)
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10),
    ).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    checksum = torch.zeros((), dtype=torch.float64, device="cuda")
    clk = clock.Clock(args, "numpy_prep", f"workers{args.workers}")
    losses = []
    it = iter(loader)
    for i in range(total):
        if i == args.warmup:
            clk.start()
        images, labels = next(it)
        images = images.cuda(non_blocking=pinned)
        labels = labels.cuda(non_blocking=pinned)
        checksum += images.sum(dtype=torch.float64)
        loss = F.cross_entropy(model(images), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    clk.stop()
    del it
    vals = clock.check_finite("loss", torch.stack(losses))
    clock.check_finite("checksum", checksum)
    clk.report(workers=args.workers, pin_memory=pinned, non_blocking=pinned, batch=args.batch,
               image_shape=[3, 224, 224], raw_shape=[3, 256, 256], dtype="fp32", optimizer="AdamW(fused=True)",
               batch_mib=args.batch * 3 * 224 * 224 * 4 / 2 ** 20, checksum=float(checksum),
               first_loss=round(vals[0], 6), last_loss=round(vals[-1], 6))


if __name__ == "__main__":
    main()
