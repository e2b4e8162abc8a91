"""The beam-search engine (SPEC §1): one forward pass per step for every live hypothesis of every input.

The engine knows no model internals (only the :class:`~infill.models.base.MaskedLM` protocol) and no
scoring rule (only :class:`~infill.scoring.Scorer`). State is kept as an [inputs, beam] grid:

  fill[n, b, k]  token placed at the k-th gap slot of input n by hypothesis b (-1: unfilled)
  score[n, b]    the hypothesis' summed update (-inf: no hypothesis in that beam slot)
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from infill.errors import ConfigError, InfillError, InputError
from infill.models.base import MaskedLM, pad_batch
from infill.sampling import Sampler
from infill.scoring import Scorer, Step

ORDERS = ("left-to-right", "best-to-worst")
NEG_INF = float("-inf")


@dataclass(frozen=True)
class Hypothesis:
    """A complete fill: ``tokens`` at the gap positions (in position order) and its ``score``."""

    tokens: tuple[int, ...]
    score: float


def _resolve_pivots(model: MaskedLM, pivot, n_gaps: list[int], P: int) -> torch.Tensor:
    """[N, P] pivot id per gap slot, from None / one token / one token per gap position."""
    if pivot is None or isinstance(pivot, (int, str)):
        return torch.full((len(n_gaps), P), model.resolve_pivot(pivot), dtype=torch.long)
    ids = [model.resolve_pivot(p) for p in pivot]
    rows = []
    for n in n_gaps:
        if len(ids) != n:
            raise ConfigError(f"a per-position pivot needs one token per gap position: got {len(ids)} "
                              f"for an input with {n} gap positions")
        rows.append(ids + [model.default_pivot] * (P - n))
    return torch.tensor(rows, dtype=torch.long)


def beam_search(model: MaskedLM, inputs: Sequence[Sequence[int]], scorer: Scorer,
                order: str = "left-to-right", beam_size: int = 5, dedup: bool = True,
                allow_special: bool = False, sampler: Sampler | None = None, seed: int = 0,
                gaps: Sequence[Sequence[int]] | None = None) -> list[list[Hypothesis]]:
    """Fill the gaps of a batch of token sequences; returns each input's hypotheses, best first.

    inputs -- id sequences (any lengths); gap positions are ``gaps[i]`` or, if not given, every
              position holding ``model.mask_id`` (which must hold the mask id).
    order  -- "left-to-right" or "best-to-worst" (per hypothesis, the most confident position).
    dedup  -- best-to-worst only: merge hypotheses that are the same fill reached in another order.
    sampler -- run the matched-budget sampling baseline instead of keeping the top-B (SPEC §1.1).
    """
    if order not in ORDERS:
        raise ConfigError(f"unknown order {order!r}; choose from {', '.join(ORDERS)}")
    if beam_size < 1:
        raise ConfigError(f"beam size must be at least 1, got {beam_size}")
    if not inputs:
        raise InputError("no input to decode")
    dev = model.device
    B, V = beam_size, model.vocab_size
    seqs = [list(map(int, x)) for x in inputs]
    if gaps is None:
        gaps = [[t for t, w in enumerate(x) if w == model.mask_id] for x in seqs]
    gaps = [sorted(map(int, g)) for g in gaps]
    for i, (x, g) in enumerate(zip(seqs, gaps)):
        if not g:
            raise InputError(f"input {i} has no gap (no mask token) to fill")
        model.check_length(len(x))
        for t in g:
            x[t] = model.mask_id
    base, attn = pad_batch(seqs, model.pad_id)       # [N, T]
    slots, slot_ok = pad_batch(gaps, 0)              # [N, P] gap positions of each input
    N, P = slots.shape
    n_gaps = slot_ok.sum(1)
    pivots = _resolve_pivots(model, scorer.pivot, n_gaps.tolist(), P)
    base, attn, slots, slot_ok, n_gaps, pivots = (t.to(dev) for t in (base, attn, slots, slot_ok, n_gaps, pivots))
    allowed = model.allowed_mask(allow_special).to(dev)
    if not allowed.any():
        raise ConfigError("no token may be placed in a gap (every candidate is special)")
    scorer.prepare(allowed)
    inject = scorer.needs_pivot_pass(pivots[slot_ok], model.mask_id)
    gen = torch.Generator().manual_seed(seed)

    fill = torch.full((N, B, P), -1, dtype=torch.long, device=dev)
    score = torch.full((N, B), NEG_INF, dtype=torch.float64, device=dev)
    score[:, 0] = 0.0                                     # the root: nothing filled
    slot_idx = torch.arange(P, device=dev)

    for step in range(int(n_gaps.max())):
        active = n_gaps > step                           # inputs with positions left to fill
        ni, bi = ((score > NEG_INF) & active[:, None]).nonzero(as_tuple=True)
        f = fill[ni, bi]                                  # [R, P]
        unfilled = slot_ok[ni] & (f < 0)
        at_slots = base[ni].gather(1, slots[ni])
        x = base[ni].scatter(1, slots[ni], torch.where(f >= 0, f, at_slots))   # all unfilled = [MASK]

        if order == "left-to-right":
            target = unfilled.int().argmax(1)             # first unfilled slot
            if not inject:
                logq = model.log_probs(x, attn[ni], slots[ni].gather(1, target[:, None]))[:, 0]
        else:
            lq_all = model.log_probs(x, attn[ni], slots[ni])                      # [R, P, V]
            conf = lq_all.masked_fill(~allowed.to(lq_all.device), NEG_INF).amax(-1).to(dev)
            target = conf.masked_fill(~unfilled, NEG_INF).argmax(1)               # most confident slot
            if not inject:
                logq = lq_all[torch.arange(len(ni), device=lq_all.device), target.to(lq_all.device)]
        if inject:  # the pivots are context: other unfilled slots hold p_g' (SPEC §1, HCB)
            others = unfilled & (slot_idx[None, :] != target[:, None])
            x_ctx = x.scatter(1, slots[ni], torch.where(others, pivots[ni], x.gather(1, slots[ni])))
            logq = model.log_probs(x_ctx, attn[ni], slots[ni].gather(1, target[:, None]))[:, 0]

        logq = logq.to(dev, torch.float64)
        piv = pivots[ni].gather(1, target[:, None]).squeeze(1)
        upd = scorer.update(Step(logq=logq, pivot=piv, owner=ni, generator=gen))
        if (torch.isnan(upd) | (upd == float("inf"))).any():
            raise InfillError(f"scorer {scorer.name!r} produced an infinite/NaN score: the pivot has zero probability "
                              "under the model; choose another pivot")
        upd = upd.masked_fill(~allowed, NEG_INF)

        act = active.nonzero().squeeze(1)
        grid = torch.full((N, B, V), NEG_INF, dtype=torch.float64, device=dev)
        grid[ni, bi] = score[ni, bi, None] + upd
        tgt = torch.zeros((N, B), dtype=torch.long, device=dev)
        tgt[ni, bi] = target
        if sampler is None:
            vals, parent, tok = _select_top(grid[act], B, dedup and order == "best-to-worst", step)
        else:
            logd = torch.full((N, B, V), NEG_INF, dtype=torch.float64, device=dev)
            logd[ni, bi] = sampler.log_dist(logq, allowed)
            vals, parent, tok = _select_sample(grid[act], logd[act], B, step, gen)
        new_fill = fill[act[:, None], parent]                                     # [A, K, P]
        new_fill.scatter_(2, tgt[act[:, None], parent][..., None], tok[..., None])
        if sampler is None and dedup and order == "best-to-worst":
            vals, new_fill = _dedup(vals, new_fill, B)
        fill[act] = new_fill[:, :B]
        score[act] = vals[:, :B]
    scorer.end_batch(N)

    results = []
    score_c, fill_c = score.cpu(), fill.cpu()
    for i in range(N):                       # assemble the output (not the hot path)
        rank = score_c[i].argsort(descending=True, stable=True)
        results.append([Hypothesis(tuple(fill_c[i, b, :int(n_gaps[i])].tolist()), float(score_c[i, b]))
                        for b in rank.tolist() if score_c[i, b] > NEG_INF])
    return results


def _select_top(grid: torch.Tensor, B: int, dedup: bool, step: int):
    """Global top candidates of each input over its [B, V] grid. With dedup, keep extra ones: a
    fill with s+1 tokens can be reached from at most s+1 parents, so B*(s+1) hold B distinct."""
    A, _, V = grid.shape
    k = min(B * (step + 1) if dedup else B, B * V)
    vals, idx = grid.reshape(A, -1).topk(k, dim=1)
    if k < B:
        vals = torch.cat([vals, vals.new_full((A, B - k), NEG_INF)], 1)
        idx = torch.cat([idx, idx.new_zeros((A, B - k))], 1)
    return vals, idx // V, idx % V


def _select_sample(grid: torch.Tensor, logd: torch.Tensor, B: int, step: int, gen: torch.Generator):
    """Draw tokens (SPEC §1.1): B distinct ones from the root at step 0, then one per row."""
    A, _, V = grid.shape
    keys = logd + Sampler.gumbel(logd.shape, gen, grid.device)
    if step == 0:
        top = keys[:, 0].topk(min(B, V), dim=1).indices               # Gumbel-top-B: no replacement
        parent = torch.zeros_like(top)
        tok = top
    else:
        parent = torch.arange(B, device=grid.device).expand(A, B)
        tok = keys.argmax(-1)
    vals = grid[torch.arange(A, device=grid.device)[:, None], parent, tok]
    vals = vals.masked_fill(logd[torch.arange(A, device=grid.device)[:, None], parent, tok] == NEG_INF, NEG_INF)
    if vals.shape[1] < B:
        pad = B - vals.shape[1]
        vals = torch.cat([vals, vals.new_full((A, pad), NEG_INF)], 1)
        parent = torch.cat([parent, parent.new_zeros((A, pad))], 1)
        tok = torch.cat([tok, tok.new_zeros((A, pad))], 1)
    return vals, parent, tok


def _dedup(vals: torch.Tensor, fills: torch.Tensor, B: int):
    """Drop candidates whose fill equals a better-ranked one (same tokens, other order)."""
    K = vals.shape[1]
    same = (fills[:, :, None, :] == fills[:, None, :, :]).all(-1)                  # [A, K, K]
    earlier = torch.ones(K, K, dtype=torch.bool, device=vals.device).tril(-1)      # j < i
    vals = vals.masked_fill((same & earlier).any(-1), NEG_INF)
    vals, order = vals.sort(dim=1, descending=True, stable=True)
    fills = fills.gather(1, order[..., None].expand_as(fills))
    return vals[:, :B], fills[:, :B]
