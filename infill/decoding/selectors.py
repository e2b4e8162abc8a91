"""Selectors: which candidates survive a step (like fairseq's ``Search`` classes).

At every step the engine hands a selector the candidate scores of each active input, a
[A, B, V] grid (beam slot x token; ``-inf`` where there is no hypothesis or the token may not be
placed), and gets back, per input, K >= B ranked (score, parent slot, token) triples. After the
engine has built the new fills, :meth:`Selector.merge` keeps B of them.

- :class:`TopB` -- beam search: the global top-B of each input (SPEC §1), optionally merging
  duplicate fills reached in different orders (best-to-worst dedup);
- :class:`GumbelSample` -- the matched-budget sampling baselines (SPEC §1.1): B distinct tokens
  drawn at the first step (Gumbel-top-B = sampling without replacement), then one per row.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from infill.lazy import torch

from infill.decoding.proposals import KeyedRNG, Proposal

NEG_INF = float("-inf")


@dataclass
class Candidates:
    """One step's candidates for A active inputs.

    scores -- [A, B, V] score of every (beam slot, token) extension
    logq   -- [A, B, V] the model's log q at each slot's position (None unless the selector
              ``needs_logq``)
    allowed-- [V] tokens that may be placed
    keys   -- [A, B] per-slot keys for counter-based draws (depend on the input and the slot only)
    index  -- the step number
    rng    -- the keyed RNG of this decode
    """

    scores: torch.Tensor
    logq: torch.Tensor | None
    allowed: torch.Tensor
    keys: torch.Tensor
    index: int
    rng: KeyedRNG


class Selector(ABC):
    """Picks the candidates that survive a step."""

    needs_logq: bool = False

    @abstractmethod
    def select(self, c: Candidates, B: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(scores, parent slot, token), each [A, K] with K >= B, best first; ``-inf`` = empty."""

    def merge(self, scores: torch.Tensor, fills: torch.Tensor, B: int
              ) -> tuple[torch.Tensor, torch.Tensor]:
        """Keep B of the K selected (scores [A, K], fills [A, K, P])."""
        return torch.arange(B, device=scores.device).expand(scores.shape[0], B), scores[:, :B]


def _pad_to(B: int, *ts: torch.Tensor, fill_first=NEG_INF):
    """Pad [A, k] tensors to [A, B] (scores with -inf, the others with 0)."""
    k = ts[0].shape[1]
    if k >= B:
        return ts
    out = []
    for i, t in enumerate(ts):
        pad = t.new_full((t.shape[0], B - k), fill_first if i == 0 else 0)
        out.append(torch.cat([t, pad], 1))
    return tuple(out)


class TopB(Selector):
    """Beam search: keep the global top-B candidates of each input.

    ``dedup``: two candidates with the same fill (the same tokens placed in another order) are
    one completion; keep the better. A fill with s+1 tokens can be reached from at most s+1
    parents, so B*(s+1) candidates always hold B distinct ones.
    """

    def __init__(self, dedup: bool = False):
        self.dedup = dedup

    def select(self, c: Candidates, B: int):
        A, _, V = c.scores.shape
        k = min(B * (c.index + 1) if self.dedup else B, c.scores.shape[1] * V)
        vals, idx = c.scores.reshape(A, -1).topk(k, dim=1)
        return _pad_to(B, vals, idx // V, idx % V)

    def merge(self, scores, fills, B):
        if not self.dedup:
            return super().merge(scores, fills, B)
        K = scores.shape[1]
        same = (fills[:, :, None, :] == fills[:, None, :, :]).all(-1)                 # [A, K, K]
        earlier = torch.ones(K, K, dtype=torch.bool, device=scores.device).tril(-1)  # j < i
        scores = scores.masked_fill((same & earlier).any(-1), NEG_INF)
        scores, order = scores.sort(dim=1, descending=True, stable=True)
        return order[:, :B], scores[:, :B]


class GumbelSample(Selector):
    """Sampling baseline: each input draws from its proposal (:class:`Proposal`) -- B distinct
    tokens at the root (step 0), then one token per row. Scores stay the scorer's."""

    needs_logq = True

    def __init__(self, proposal: Proposal):
        self.proposal = proposal

    def select(self, c: Candidates, B: int):
        A, Bslots, V = c.scores.shape
        dev = c.scores.device
        live = (c.scores > NEG_INF).any(-1)                            # [A, B] slots with a hypothesis
        logd = torch.full_like(c.scores, NEG_INF)
        logd[live] = self.proposal.log_dist(c.logq[live], c.allowed).to(logd.dtype)
        noise = c.rng.gumbel(c.keys.reshape(-1), c.index, V).reshape(A, Bslots, V).to(dev)
        keys = logd + noise
        if c.index == 0:
            tok = keys[:, 0].topk(min(B, V), dim=1).indices          # without replacement
            parent = torch.zeros_like(tok)
        else:
            parent = torch.arange(Bslots, device=dev).expand(A, Bslots)
            tok = keys.argmax(-1)
        rows = torch.arange(A, device=dev)[:, None]
        vals = c.scores[rows, parent, tok]
        vals = vals.masked_fill(logd[rows, parent, tok] == NEG_INF, NEG_INF)
        return _pad_to(B, vals, parent, tok)
