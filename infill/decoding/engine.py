"""The beam-search engine (SPEC §1): one forward pass per step for every live hypothesis of every
input.

The engine knows no model internals (only the :class:`~infill.models.base.MaskedLM` protocol), no
scoring rule (only :class:`~infill.decoding.scorers.Scorer`) and no selection rule (only
:class:`~infill.decoding.selectors.Selector`). Each step reads like the SPEC:

    build inputs -> pick each hypothesis' position -> log q -> scorer.update -> selector.select

State is kept as an [inputs, beam] grid:

  fill[n, b, k]   token placed at the k-th gap slot of input n by hypothesis b (-1: unfilled)
  score[n, b]     the hypothesis' summed update (-inf: no hypothesis in that beam slot)
  placed[n, b, k] log q of that token at the step it was placed; step[n, b, k] that step
"""
from __future__ import annotations

import hashlib
import operator
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from infill.config import DecodeConfig
from infill.decoding.proposals import KeyedRNG, subkeys
from infill.decoding.scorers import Scorer, Step
from infill.decoding.selectors import Candidates
from infill.errors import ConfigError, InfillError, InputError
from infill.models.base import MaskedLM, pad_batch

NEG_INF = float("-inf")
MEMORY_ENV = "INFILL_MAX_MEMORY_GB"
DEFAULT_MEMORY_GB = 4.0


@dataclass(frozen=True)
class Hypothesis:
    """A complete fill: ``tokens`` at the gap positions (in position order) and its ``score``;
    ``logq`` holds, per position, log q of its token at the step it was placed and ``steps`` that
    step (0 = placed first)."""

    tokens: tuple[int, ...]
    score: float
    logq: tuple[float, ...] = ()
    steps: tuple[int, ...] = ()


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


def input_key(ids: Sequence[int], gaps: Sequence[int]) -> int:
    """A 63-bit key of an input (its ids and gap positions): what its random draws depend on."""
    data = np.asarray(list(ids) + [-1] + list(gaps), dtype=np.int64).tobytes()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little") >> 1


def memory_budget() -> float:
    """Bytes the engine may use for its candidate grids (``INFILL_MAX_MEMORY_GB``, default 4)."""
    raw = os.environ.get(MEMORY_ENV, "")
    try:
        gb = float(raw) if raw else DEFAULT_MEMORY_GB
    except ValueError:
        raise ConfigError(f"{MEMORY_ENV} must be a number of GiB, got {raw!r}") from None
    return gb * 2 ** 30


def _bytes_per_input(B: int, V: int, P: int, order: str) -> int:
    """Rough peak of one input's tensors: three [B, V] float64 grids, and [B, P, V] float32
    log-probabilities for best-to-worst."""
    return 3 * 8 * B * V + (4 * B * P * V if order == "best-to-worst" else 4 * B * V)


def _token_id(t) -> int:
    """An integer token id (ints, numpy or 0-d integer tensors); TypeError for anything else
    (a float such as 1.5 is not silently truncated)."""
    if isinstance(t, bool) or isinstance(t, float) or isinstance(t, str):
        raise TypeError
    if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.dim() != 0):
        raise TypeError
    return operator.index(t)


def _validate(model: MaskedLM, inputs, gaps) -> tuple[list[list[int]], list[list[int]]]:
    if not inputs:
        raise InputError("no input to decode")
    seqs = []
    for i, x in enumerate(inputs):
        try:
            if isinstance(x, torch.Tensor) and (x.is_floating_point() or x.is_complex()):
                raise TypeError
            seq = [_token_id(t) for t in x]
        except (TypeError, ValueError):
            raise InputError(f"input {i} is not a sequence of token ids (integers)") from None
        if not seq:
            raise InputError(f"input {i} is empty")
        bad = [t for t in seq if not 0 <= t < model.n_input_ids]
        if bad:
            raise InputError(f"input {i} holds token id {bad[0]}, outside the model's input "
                             f"vocabulary [0, {model.n_input_ids})")
        seqs.append(seq)
    if gaps is None:
        gaps = [[t for t, w in enumerate(x) if w == model.mask_id] for x in seqs]
    if len(gaps) != len(seqs):
        raise InputError(f"{len(gaps)} gap lists for {len(seqs)} inputs")
    out_gaps = []
    for i, (x, g) in enumerate(zip(seqs, gaps)):
        g = sorted(int(p) for p in g)
        if not g:
            raise InputError(f"input {i} has no gap (no mask token) to fill")
        if len(set(g)) != len(g) or g[0] < 0 or g[-1] >= len(x):
            raise InputError(f"input {i}: gap positions must be distinct positions of the input")
        model.check_length(len(x))
        out_gaps.append(g)
    return seqs, out_gaps


def beam_search(model: MaskedLM, inputs: Sequence[Sequence[int]],
                config: DecodeConfig | None = None, gaps: Sequence[Sequence[int]] | None = None
                ) -> list[list[Hypothesis]]:
    """Fill the gaps of a batch of token sequences; returns each input's hypotheses, best first.

    inputs -- id sequences (any lengths); gap positions are ``gaps[i]`` or, if not given, every
              position holding ``model.mask_id``.
    config -- the decoding options (:class:`~infill.config.DecodeConfig`); its ``scorer`` may be
              an instance (e.g. a stateful ablation shared across calls).
    Inputs are decoded together, one forward call per step, in as few chunks as the memory budget
    (:func:`memory_budget`) allows; results do not depend on the chunking or on batch mates.
    """
    config = config if config is not None else DecodeConfig()
    if config.decoder != "beam":
        raise ConfigError(f"beam_search runs the beam decoder, not {config.decoder!r}")
    seqs, gaps = _validate(model, inputs, gaps)
    scorer = config.make_scorer()
    B, V = config.beam_size, model.vocab_size
    P = max(len(g) for g in gaps)
    per_input = _bytes_per_input(B, V, P, config.order)
    budget = memory_budget()
    if per_input > budget:
        raise ConfigError(
            f"beam {B} x vocabulary {V:,} x {P} gap positions needs about "
            f"{per_input / 2 ** 30:.1f} GiB per input, over the {budget / 2 ** 30:.1f} GiB limit; "
            f"lower the beam size (or raise {MEMORY_ENV})")
    chunk = max(1, int(budget // per_input))
    out: list[list[Hypothesis]] = []
    for s in range(0, len(seqs), chunk):
        out += _decode(model, seqs[s:s + chunk], gaps[s:s + chunk], config, scorer)
    return out


def _positions_and_logq(model, order, x, attn, slots, unfilled, allowed, inject, pivots):
    """Each row's target slot and log q at it: one model call (two with injected pivots for
    best-to-worst, whose position is chosen from the all-[MASK] pass)."""
    R = x.shape[0]
    logq = None
    if order == "left-to-right":
        target = unfilled.int().argmax(1)                                     # first unfilled slot
        if not inject:
            logq = model.log_probs(x, attn, slots.gather(1, target[:, None]))[:, 0]
    else:
        lq_all = model.log_probs(x, attn, slots)                              # [R, P, V]
        conf = lq_all.masked_fill(~allowed.to(lq_all.device), NEG_INF).amax(-1).to(x.device)
        target = conf.masked_fill(~unfilled, NEG_INF).argmax(1)               # most confident slot
        if not inject:
            logq = lq_all[torch.arange(R, device=lq_all.device), target.to(lq_all.device)]
    if inject:  # the pivots are context: the other unfilled slots hold p_g' (SPEC §1, HCB)
        slot_idx = torch.arange(slots.shape[1], device=x.device)
        others = unfilled & (slot_idx[None, :] != target[:, None])
        x_ctx = x.scatter(1, slots, torch.where(others, pivots, x.gather(1, slots)))
        logq = model.log_probs(x_ctx, attn, slots.gather(1, target[:, None]))[:, 0]
    return target, logq


def _decode(model: MaskedLM, seqs, gaps, config: DecodeConfig, scorer: Scorer
            ) -> list[list[Hypothesis]]:
    dev = model.device
    B, V = config.beam_size, model.vocab_size
    for x, g in zip(seqs, gaps):
        for t in g:
            x[t] = model.mask_id
    keys_in = torch.tensor([input_key(x, g) for x, g in zip(seqs, gaps)], dtype=torch.long)
    base, attn = pad_batch(seqs, model.pad_id)       # [N, T]
    slots, slot_ok = pad_batch(gaps, 0)              # [N, P] gap positions of each input
    N, P = slots.shape
    n_gaps = slot_ok.sum(1)
    pivots = _resolve_pivots(model, scorer.pivot, n_gaps.tolist(), P)
    base, attn, slots, slot_ok, n_gaps, pivots = (t.to(dev) for t in (base, attn, slots, slot_ok,
                                                                       n_gaps, pivots))
    allowed = model.allowed_mask(config.allow_special).to(dev)
    if not allowed.any():
        raise ConfigError("no token may be placed in a gap (every candidate is special)")
    scorer.prepare(allowed)
    selector = config.make_selector()
    inject = scorer.needs_pivot_pass(pivots[slot_ok], model.mask_id)
    gen = torch.Generator().manual_seed(config.seed)
    rng = KeyedRNG(config.seed)
    keys = subkeys(keys_in, B).to(dev)                                    # [N, B]

    fill = torch.full((N, B, P), -1, dtype=torch.long, device=dev)
    placed = torch.zeros((N, B, P), dtype=torch.float64, device=dev)
    when = torch.full((N, B, P), -1, dtype=torch.long, device=dev)
    score = torch.full((N, B), NEG_INF, dtype=torch.float64, device=dev)
    score[:, 0] = 0.0                                                     # the root: nothing filled

    for step in range(int(n_gaps.max())):
        active = n_gaps > step                               # inputs with positions left to fill
        ni, bi = ((score > NEG_INF) & active[:, None]).nonzero(as_tuple=True)
        f = fill[ni, bi]                                      # [R, P]
        unfilled = slot_ok[ni] & (f < 0)
        x = base[ni].scatter(1, slots[ni], torch.where(f >= 0, f, base[ni].gather(1, slots[ni])))
        target, logq = _positions_and_logq(model, config.order, x, attn[ni], slots[ni], unfilled,
                                           allowed, inject, pivots[ni])
        logq = logq.to(dev, torch.float64)
        upd = scorer.update(Step(logq=logq, pivot=pivots[ni].gather(1, target[:, None]).squeeze(1),
                                 owner=ni, keys=keys[ni, bi], index=step, rng=rng, generator=gen))
        if (torch.isnan(upd) | (upd == float("inf"))).any():
            raise InfillError(f"scorer {scorer.name!r} produced an infinite/NaN score: the pivot has "
                              "zero probability under the model; choose another pivot")
        upd = upd.masked_fill(~allowed, NEG_INF)

        act = active.nonzero().squeeze(1)
        grid = torch.full((N, B, V), NEG_INF, dtype=torch.float64, device=dev)
        grid[ni, bi] = score[ni, bi, None] + upd
        lq_grid = None
        if selector.needs_logq:
            lq_grid = torch.full((N, B, V), NEG_INF, dtype=torch.float64, device=dev)
            lq_grid[ni, bi] = logq
        vals, parent, tok = selector.select(
            Candidates(grid[act], None if lq_grid is None else lq_grid[act], allowed, keys[act],
                       step, rng), B)
        _extend((fill, placed, when, score), act, ni, bi, target, logq, vals, parent, tok,
                step, selector, B)
    scorer.end_batch(N)

    results = []
    score_c, fill_c, placed_c, when_c = score.cpu(), fill.cpu(), placed.cpu(), when.cpu()
    for i in range(N):                       # assemble the output (not the hot path)
        k = int(n_gaps[i])
        rank = score_c[i].argsort(descending=True, stable=True)
        results.append([Hypothesis(tuple(fill_c[i, b, :k].tolist()), float(score_c[i, b]),
                                   tuple(placed_c[i, b, :k].tolist()), tuple(when_c[i, b, :k].tolist()))
                        for b in rank.tolist() if score_c[i, b] > NEG_INF])
    return results


def _extend(beams, act, ni, bi, target, logq, vals, parent, tok, step: int, selector, B: int
            ) -> None:
    """Write the selected candidates into the beams, in place: candidate k of active input a
    extends hypothesis ``parent[a, k]`` with token ``tok[a, k]`` at that hypothesis' target slot
    (and records log q of the token there and the step it was placed)."""
    fill, placed, when, score = beams
    N, _, P = fill.shape
    dev = fill.device
    tgt = torch.zeros((N, B), dtype=torch.long, device=dev)
    tgt[ni, bi] = target
    row = torch.zeros((N, B), dtype=torch.long, device=dev)
    row[ni, bi] = torch.arange(len(ni), device=dev)
    at = tgt[act[:, None], parent][..., None]                             # [A, K, 1]
    new_fill = fill[act[:, None], parent].scatter(2, at, tok[..., None])
    lq_tok = logq[row[act[:, None], parent], tok]                         # [A, K]
    new_placed = placed[act[:, None], parent].scatter(2, at, lq_tok[..., None])
    new_when = when[act[:, None], parent].scatter(2, at, torch.full_like(at, step))
    keep, vals = selector.merge(vals, new_fill, B)
    pick = keep[..., None].expand(-1, -1, P)
    fill[act] = new_fill.gather(1, pick)
    placed[act] = new_placed.gather(1, pick)
    when[act] = new_when.gather(1, pick)
    score[act] = vals
