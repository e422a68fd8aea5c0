"""A small GPT over bytes: the reference PyTorch trainer's model (vocabulary: 256 bytes + BOS).

Pre-LN transformer blocks with causal self-attention (scaled_dot_product_attention), a GELU MLP, and the
output head tied to the token embedding. BOS stands before a text that starts inside the context.
"""
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F

BOS = 256
VOCAB = 257
# A target that is not trained on (a prompt position, padding): cross-entropy skips it.
IGNORE = -1


def window_loss(logits, targets):
    """Each row's (window's) mean cross-entropy in nats over its targets not IGNORE, then the mean over the rows
    that have any: a row is one drawn example, so an example's share of the loss is set by how often it is drawn
    (its weight), not by how many of its bytes a window holds. On the text path every row has `context` targets and
    this is the plain mean over targets."""
    per_target = F.cross_entropy(logits.float().view(-1, VOCAB), targets.reshape(-1), ignore_index=IGNORE, reduction='none')
    counted = (targets != IGNORE).sum(1)
    per_row = per_target.view(targets.shape).sum(1) / counted.clamp(min=1)
    return per_row[counted > 0].mean()


@dataclass(frozen=True)
class GPTConfig:
    n_layer: int
    n_head: int
    d_model: int
    context: int
    dropout: float = 0.0

    def to_dict(self):
        return asdict(self)


class SelfAttention(nn.Module):
    def __init__(self, c: GPTConfig):
        super().__init__()
        self.n_head = c.n_head
        self.qkv = nn.Linear(c.d_model, 3 * c.d_model)
        self.proj = nn.Linear(c.d_model, c.d_model)
        self.dropout = c.dropout
        self.resid_drop = nn.Dropout(c.dropout)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.n_head, d // self.n_head).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0)
        return self.resid_drop(self.proj(y.transpose(1, 2).contiguous().view(b, t, d)))


class Block(nn.Module):
    def __init__(self, c: GPTConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(c.d_model)
        self.attn = SelfAttention(c)
        self.ln2 = nn.LayerNorm(c.d_model)
        self.mlp = nn.Sequential(nn.Linear(c.d_model, 4 * c.d_model), nn.GELU(), nn.Linear(4 * c.d_model, c.d_model), nn.Dropout(c.dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, c: GPTConfig):
        super().__init__()
        self.config = c
        self.tok_emb = nn.Embedding(VOCAB, c.d_model)
        self.pos_emb = nn.Embedding(c.context, c.d_model)
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.n_layer))
        self.ln_f = nn.LayerNorm(c.d_model)
        self.apply(self._init)
        # GPT-2's scaled init of the projections into the residual stream keeps its variance flat with depth.
        for name, p in self.named_parameters():
            if name.endswith('proj.weight') or name.endswith('mlp.2.weight'):
                nn.init.normal_(p, mean=0.0, std=0.02 / (2 * c.n_layer) ** 0.5)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, idx, targets=None):
        """Logits (B, T, VOCAB); with targets, also the loss in nats: each row's mean cross-entropy over its
        targets not IGNORE, averaged over the rows that have any (window_loss)."""
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))
        for block in self.blocks:
            x = block(x)
        logits = F.linear(self.ln_f(x), self.tok_emb.weight)  # the head is the token embedding, transposed
        if targets is None:
            return logits, None
        return logits, window_loss(logits, targets)

    def flops_per_token(self) -> float:
        """Training FLOPs per token: 6N for the weights (N without the position table, which is a lookup)
        plus the attention scores and mixing, 12 * layers * d_model * context (PaLM, appendix B)."""
        c = self.config
        n = sum(p.numel() for p in self.parameters()) - self.pos_emb.weight.numel()
        return 6 * n + 12 * c.n_layer * c.d_model * c.context


@torch.inference_mode()
def greedy_complete(model: GPT, prompt: bytes, max_bytes: int, device) -> bytes:
    """The most likely next `max_bytes` bytes after BOS + prompt, one argmax at a time (the oldest bytes
    fall out of a full context). Stops early at BOS, which has no byte to emit."""
    ids = [BOS] + list(prompt)
    out = bytearray()
    for _ in range(max_bytes):
        ctx = torch.tensor([ids[-model.config.context:]], dtype=torch.long, device=device)
        logits, _ = model(ctx)
        best = int(logits[0, -1].argmax())
        if best == BOS:
            break
        ids.append(best)
        out.append(best)
    return bytes(out)
