"""Selectors: which candidates survive a step (like fairseq's ``Search`` classes).

At every step the engine hands a selector the candidate scores of each active input, a
[A, B, C] grid (beam slot x (move, token); ``-inf`` where there is no hypothesis or the token may
not be placed), and gets back, per input, K >= B ranked (score, parent slot, column) triples. After the
engine has built the new fills, :meth:`Selector.merge` keeps B of them.

- :class:`TopB` -- beam search: the global top-B of each input (METHODS §1), optionally merging
  duplicate fills reached in different orders (dedup; any-order merges on the whole grid);
- :class:`GumbelSample` -- the matched-budget sampling baselines (METHODS §1.1): B distinct tokens
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
    """One step's candidates for A active inputs, on a grid of C = W x V columns per beam slot:
    column ``w * V + v`` is token v at the hypothesis' w-th move (W = 1: its one chosen slot;
    W = P for an order that moves at every slot, where w is the gap slot).

    scores -- [A, B, C] score of every (beam slot, move, token) extension (-inf: none)
    logq   -- [A, B, C] the model's log q at each move's position (None unless the selector
              ``needs_logq``)
    allowed-- [A, B, C] bool, tokens that may be placed there
    keys   -- [A, B] per-slot keys for counter-based draws (depend on the input and the slot only)
    index  -- the step number
    rng    -- the keyed RNG of this decode
    fills  -- [A, B, P] the parents' fills (-1: unfilled)
    vocab  -- V
    several-- whether the columns are gap slots (W = P; equal fills can meet within a step)
    """

    scores: torch.Tensor
    logq: torch.Tensor | None
    allowed: torch.Tensor
    keys: torch.Tensor
    index: int
    rng: KeyedRNG
    fills: torch.Tensor
    vocab: int
    several: bool = False


class Selector(ABC):
    """Picks the candidates that survive a step."""

    needs_logq: bool = False

    @abstractmethod
    def select(self, c: Candidates, B: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(scores, parent slot, token), each [A, K] with K >= B, best first; ``-inf`` = empty."""

    def work_bytes(self, B: int, V: int, P: int, several: bool) -> int:
        """Rough peak bytes of one input's own work tensors (beyond the [B, W*V] candidate
        grids the engine counts) at beam B, vocabulary V, P gap slots; ``several``: the
        order moves at every slot. The engine's memory bound adds it (0: nothing notable)."""
        return 0

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
    one completion: the one with the ``keep`` (``"higher"`` or ``"lower"``) score survives. For an order
    that moves at every slot the duplicates are merged on the whole candidate grid before the
    top-B is taken (:func:`merge_equal_fills`). Otherwise a fill with s+1 tokens can be reached
    from at most s+1 parents, so B*(s+1) candidates always hold B distinct ones; the better of
    equal ones is kept (best-to-worst; equal fills never meet there, see METHODS §1 "Dedup").
    """

    def __init__(self, dedup: bool = False, keep: str = "higher"):
        self.dedup = dedup
        self.keep = keep

    def select(self, c: Candidates, B: int):
        A, _, C = c.scores.shape
        scores = c.scores
        if self.dedup and c.several:
            scores = merge_equal_fills(scores, c.fills, c.vocab, self.keep)
        k = min(B * (c.index + 1) if self.dedup and not c.several else B, c.scores.shape[1] * C)
        vals, idx = scores.reshape(A, -1).topk(k, dim=1)
        return _pad_to(B, vals, idx // C, idx % C)

    def work_bytes(self, B, V, P, several):
        """Dedup compares every pair of fills: [K, K, P] masks and [K, K] ones, K = B for an
        order that moves at every slot (plus :func:`merge_equal_fills`' [B, B, P] int and bool
        tensors), else up to B * P candidates (B per filled slot, padded to at least B)."""
        if not self.dedup:
            return 0
        K = B if several else B * min(P, V)
        merge = K * K * (P + 8)
        equal_fills = B * B * (12 * P + 64) if several else 0
        return merge + equal_fills

    def merge(self, scores, fills, B):
        if not self.dedup:
            return super().merge(scores, fills, B)
        K = scores.shape[1]
        same = (fills[:, :, None, :] == fills[:, None, :, :]).all(-1)                 # [A, K, K]
        earlier = torch.ones(K, K, dtype=torch.bool, device=scores.device).tril(-1)  # j < i
        scores = scores.masked_fill((same & earlier).any(-1), NEG_INF)
        scores, order = scores.sort(dim=1, descending=True, stable=True)
        return order[:, :B], scores[:, :B]


def merge_equal_fills(scores: torch.Tensor, fills: torch.Tensor, V: int, keep: str = "higher"
                      ) -> torch.Tensor:
    """Merge the cells of a [A, B, P*V] candidate grid (column g*V + w: token w at slot g) that
    give the same fill: only the one with the higher (``keep="lower"``: lower) score survives,
    the lowest parent index among equal scores; the others become -inf. The survivor's own path
    (its tokens' log q and steps) is the one its score belongs to.

    Two distinct parents b, b' (fills of s tokens each) extend to the same fill iff they agree
    on s-1 slots and each holds one slot the other lacks: b fills b''s slot g with b''s token,
    and b' fills b's slot g' with b's token. Every such pair is found on the [B, B] parent grid,
    and the extensions of one fill are pairwise such pairs."""
    A, B, P = fills.shape
    live = (scores > NEG_INF).any(-1)
    fb, fb2 = fills[:, :, None, :], fills[:, None, :, :]                    # b, b'
    only_b2 = (fb < 0) & (fb2 >= 0)
    only_b = (fb >= 0) & (fb2 < 0)
    clash = (fb >= 0) & (fb2 >= 0) & (fb != fb2)
    adj = (only_b2.sum(-1) == 1) & (only_b.sum(-1) == 1) & ~clash.any(-1) \
        & live[:, :, None] & live[:, None, :]                               # [A, B, B]
    g = only_b2.int().argmax(-1)                                            # the slot b lacks
    w = fills[:, None, :, :].expand(A, B, B, P).gather(-1, g[..., None])[..., 0].clamp(min=0)
    col = (g * V + w).masked_fill(~adj, 0)                                  # b's cell of the pair
    own = scores.gather(2, col)                                             # [A, b, b']
    partner = own.transpose(1, 2)                                           # b''s cell of the pair
    better = partner > own if keep == "higher" else partner < own
    idx = torch.arange(B, device=scores.device)
    tie = (partner == own) & (idx[None, None, :] < idx[None, :, None])      # b' < b
    lose = (adj & torch.isfinite(partner) & (better | tie)).to(scores.dtype)
    drop = torch.zeros_like(scores).scatter_reduce(2, col, lose, "amax") > 0
    return scores.masked_fill(drop, NEG_INF)


class GumbelSample(Selector):
    """Sampling baseline: each input draws from its proposal (:class:`Proposal`) -- B distinct
    tokens at the root (step 0), then one token per row. Scores stay the scorer's.

    With an order that moves at every slot (any-order) a draw is a (slot, token) pair from
    r(g, w) = r_g(w) / m over the m remaining slots: a uniformly drawn remaining slot, then a token
    from that slot's proposal (for pure sampling: the normalized joint of q_g(w) over all pairs).
    The uniform factor is the same for every pair of a row, so it does not change the draw."""

    needs_logq = True

    def __init__(self, proposal: Proposal):
        self.proposal = proposal

    def select(self, c: Candidates, B: int):
        A, Bslots, C = c.scores.shape
        V = c.vocab
        dev = c.scores.device
        logd = torch.full_like(c.scores, NEG_INF).reshape(-1, V)             # one row per move
        lq = c.logq.reshape(-1, V)
        valid = (c.scores > NEG_INF).reshape(-1, V).any(-1)                  # moves with a candidate
        logd[valid] = self.proposal.log_dist(lq[valid], c.allowed.reshape(-1, V)[valid]
                                             ).to(logd.dtype)
        logd = logd.reshape(A, Bslots, C)
        noise = c.rng.gumbel(c.keys.reshape(-1), c.index, C).reshape(A, Bslots, C).to(dev)
        keys = logd + noise
        if c.index == 0:
            tok = keys[:, 0].topk(min(B, C), dim=1).indices          # without replacement
            parent = torch.zeros_like(tok)
        else:
            parent = torch.arange(Bslots, device=dev).expand(A, Bslots)
            tok = keys.argmax(-1)
        rows = torch.arange(A, device=dev)[:, None]
        vals = c.scores[rows, parent, tok]
        vals = vals.masked_fill(logd[rows, parent, tok] == NEG_INF, NEG_INF)
        return _pad_to(B, vals, parent, tok)
