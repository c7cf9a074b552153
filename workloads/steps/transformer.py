"""The transformer the training programs of this folder share: pre-norm blocks (flash attention through
scaled_dot_product_attention, a GELU MLP) over a token embedding tied to the output projection."""

from __future__ import annotations

import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class GPT(nn.Module):
    """``layers`` blocks; ``embed_std``: the embedding drawn again from N(0, embed_std) after its default
    initialisation (None: left as it is). Either way the random draws come in the same order as the
    programs' own classes made them, so a seed gives the weights their fixtures were captured with."""

    def __init__(self, vocab: int, dim: int, heads: int, layers: int, embed_std: float | None = None):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        if embed_std is not None:
            nn.init.normal_(self.embed.weight, std=embed_std)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.norm(x) @ self.embed.weight.t()
