"""The exact score of a fixed filling under a beam search's scorer and order (METHODS §1).

For a filling w of the gap slots, the standard and HCB scores are sums of one update per slot,
taken in the order the slots are filled. The order of a fixed filling is the order a hypothesis
of the beam search that holds it was filled in:

- ``left-to-right``: slots in position order;
- ``best-to-worst``: at each step the hypothesis (the partial filling w restricted to the slots
  filled so far, the others ``[MASK]``) picks its slot as the beam does -- the remaining slot
  whose best *allowed* token is most probable, from the same forward pass -- and places w's
  token there. A hypothesis picks its own slot from its own partial fill, so the path is unique:
  a fill the beam found has exactly this score;
- ``any-order``: every remaining slot is a move, and a fill reached by several orders is one
  completion keeping the higher score (METHODS §1; ``dedup_keep="lower"``: the lower). The score of a
  fixed filling is therefore the best over its filling orders -- the score an unbounded beam
  gives it -- computed exactly by dynamic programming over the subsets of filled slots (2^n
  partial fillings; one forward row each). Past :data:`ANY_ORDER_STATES` partial fillings of
  one size the best ones are kept (``exact=False``: a lower bound). A finite beam that found
  the fill may have lost its best order: its score is then at most this one.

Every step is one batched model call over all the fillings (all candidates of all inputs), in
row chunks of :data:`ROWS_PER_CALL`; a scorer that asks for a context pass of its own (HCB with a
non-mask pivot injected) gets it, as in the engine. The update rule is the scorer's own
(:meth:`~infill.decoding.scorers.Scorer.update`), so the numbers are the engine's.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from infill.decoding.engine import Search, move_logq
from infill.decoding.proposals import KeyedRNG
from infill.decoding.scorers import Setup, Step
from infill.errors import InputError
from infill.models.base import MaskedLM, pad_batch

__all__ = ["ANY_ORDER_STATES", "FixedScore", "ROWS_PER_CALL", "fixed_scores"]

NEG_INF = float("-inf")
ANY_ORDER_STATES = 4096
"""any-order: partial fillings of one size kept per filling (C(14, 7) = 3432: exact up to 14
slots)."""
ROWS_PER_CALL = 256
"""Model rows per forward call."""


@dataclass(frozen=True)
class FixedScore:
    """A fixed filling's ``score`` (the sum of its updates along its order), per slot the log q
    of its token when placed (``logq``) and that ``steps`` (0 = first); ``exact``: False when
    any-order kept only the best :data:`ANY_ORDER_STATES` partial fillings (a lower bound)."""

    score: float
    logq: tuple[float, ...]
    steps: tuple[int, ...]
    exact: bool = True


def fixed_scores(model: MaskedLM, inputs: Sequence[Sequence[int]], slots: Sequence[Sequence[int]],
                 tokens: Sequence[Sequence[int]], search: Search,
                 allowed: Sequence[torch.Tensor | None] | None = None,
                 keep_lower: bool = False) -> list[FixedScore]:
    """The score of each filling: ``inputs[i]`` (ids; its gap positions ``slots[i]``, in
    position order) with ``tokens[i]`` placed at them, under ``search``'s scorer and order.
    ``allowed[i]``: the [n_slots, V] tokens the beam may place at each slot (what best-to-worst
    chooses its slot by; None: the model's placeable tokens); a token outside it scores -inf.
    ``keep_lower``: any-order keeps a fill's lower score (``dedup_keep="lower"``)."""
    if not (len(inputs) == len(slots) == len(tokens)):
        raise InputError("fixed_scores: one slot list and one token list per input")
    if any(len(s) != len(t) or not s for s, t in zip(slots, tokens)):
        raise InputError("fixed_scores: one token per slot, at least one slot per input")
    base = model.allowed_mask(search.allow_special)
    masks = []
    for s, a in zip(slots, allowed if allowed is not None else [None] * len(slots)):
        a = base.expand(len(s), -1) if a is None else torch.as_tensor(a, dtype=torch.bool) & base
        masks.append(a)
    run = _any_order if search.order.several else _sequential
    out: list[FixedScore] = []
    chunk = ROWS_PER_CALL if not search.order.several else max(1, ROWS_PER_CALL // 16)
    for s in range(0, len(inputs), chunk):
        part = slice(s, s + chunk)
        out += run(model, [list(x) for x in inputs[part]], list(slots[part]),
                   list(tokens[part]), masks[part], search, keep_lower)
    return out


def _batch(model: MaskedLM, seqs, slots, tokens, masks, search: Search):
    """The padded tensors of a chunk of fillings, the scorer prepared for them."""
    for x, g in zip(seqs, slots):
        for p in g:
            x[p] = model.mask_id
    ids, attn = pad_batch(seqs, model.pad_id)
    slot_t, slot_ok = pad_batch([list(g) for g in slots], 0)
    tok_t, _ = pad_batch([list(t) for t in tokens], 0)
    N, P = slot_t.shape
    allowed = torch.zeros((N, P, model.vocab_size), dtype=torch.bool)
    for i, a in enumerate(masks):
        allowed[i, :len(a)] = a
    n = slot_ok.sum(1)
    search.scorer.prepare(Setup(model, model.allowed_mask(search.allow_special), n.tolist(), P))
    return ids, attn, slot_t, slot_ok, tok_t, allowed, n


def _calls(model: MaskedLM, x: torch.Tensor, attn: torch.Tensor, pos: torch.Tensor
           ) -> torch.Tensor:
    """log q at ``pos`` of every row, in calls of at most :data:`ROWS_PER_CALL` rows (float64,
    on the CPU)."""
    parts = [model.log_probs(x[s:s + ROWS_PER_CALL], attn[s:s + ROWS_PER_CALL],
                             pos[s:s + ROWS_PER_CALL]).double().cpu()
             for s in range(0, x.shape[0], ROWS_PER_CALL)]
    return torch.cat(parts)


def _moves_logq(model, search: Search, x, attn, slots, unfilled, owner, moves):
    """log q [M, V] of each move (row [M], slot [M]; the engine's :func:`~infill.decoding.engine.
    move_logq`, in calls of :data:`ROWS_PER_CALL` rows) and the scorer's update [M, V]."""
    row, slot, lq_all = moves
    logq = move_logq(model, search.scorer, x, attn, slots, unfilled, owner, row, slot, lq_all,
                     call=lambda ids, att, pos: _calls(model, ids, att, pos))
    step = Step(logq=logq, slot=slot, owner=owner[row], keys=torch.zeros(len(row),
                dtype=torch.long), index=0, rng=KeyedRNG(search.seed),
                generator=torch.Generator().manual_seed(search.seed))
    return logq, search.scorer.update(step).double()


def _sequential(model, seqs, slots, tokens, masks, search: Search, keep_lower: bool
                ) -> list[FixedScore]:
    """left-to-right / best-to-worst: one path per filling, every filling advanced one slot per
    step (one batched call per step; two for an injected pivot)."""
    ids, attn, slot_t, slot_ok, tok_t, allowed, n = _batch(model, seqs, slots, tokens, masks,
                                                           search)
    N, P = slot_t.shape
    filled = torch.zeros((N, P), dtype=torch.bool)
    score = torch.zeros(N, dtype=torch.float64)
    logq_out = torch.zeros((N, P), dtype=torch.float64)
    steps = torch.full((N, P), -1, dtype=torch.long)
    for step in range(int(n.max())):
        ni = (n > step).nonzero().squeeze(1)
        f = filled[ni]
        x = ids[ni].scatter(1, slot_t[ni], torch.where(f, tok_t[ni], ids[ni].gather(1, slot_t[ni])))
        unfilled = slot_ok[ni] & ~f
        lq_all = _calls(model, x, attn[ni], slot_t[ni]) if search.order.reads_all else None
        row, slot = search.order.moves(unfilled, lq_all, allowed[ni])
        row, slot = row.cpu(), slot.cpu()
        logq, upd = _moves_logq(model, search, x, attn[ni], slot_t[ni], unfilled, ni,
                                (row, slot, lq_all))
        who = ni[row]
        tok = tok_t[who, slot]
        inc = upd.gather(1, tok[:, None])[:, 0]
        inc = inc.masked_fill(~allowed[who, slot, tok], NEG_INF)
        score[who] += inc
        logq_out[who, slot] = logq.gather(1, tok[:, None])[:, 0]
        steps[who, slot] = step
        filled[who, slot] = True
    search.scorer.end_batch(N)
    return [FixedScore(float(score[i]), tuple(logq_out[i, :k].tolist()),
                       tuple(steps[i, :k].tolist())) for i, k in enumerate(n.tolist())]


def _any_order(model, seqs, slots, tokens, masks, search: Search, keep_lower: bool
               ) -> list[FixedScore]:
    """any-order: the best (``keep_lower``: the lowest) score over every filling order, by
    dynamic programming over the subsets of filled slots, level by level (one batched call per
    level; two for an injected pivot)."""
    ids, attn, slot_t, slot_ok, tok_t, allowed, n = _batch(model, seqs, slots, tokens, masks,
                                                           search)
    N, P = slot_t.shape
    better = (lambda a, b: a < b) if keep_lower else (lambda a, b: a > b)
    # per filling: subset (bit mask of filled slots) -> (score, logq per slot, step per slot)
    level: list[dict[int, tuple]] = [{0: (0.0, (0.0,) * P, (-1,) * P)} for _ in range(N)]
    exact = [True] * N
    for step in range(int(n.max())):
        states = [(i, m) for i in range(N) if step < int(n[i]) for m in level[i]]
        owner = torch.tensor([i for i, _ in states], dtype=torch.long)
        bits = torch.tensor([[m >> k & 1 for k in range(P)] for _, m in states],
                            dtype=torch.bool).reshape(len(states), P)
        x = ids[owner].scatter(1, slot_t[owner], torch.where(bits, tok_t[owner],
                                                             ids[owner].gather(1, slot_t[owner])))
        unfilled = slot_ok[owner] & ~bits
        lq_all = _calls(model, x, attn[owner], slot_t[owner])
        row, slot = search.order.moves(unfilled, lq_all, allowed[owner])
        row, slot = row.cpu(), slot.cpu()
        logq, upd = _moves_logq(model, search, x, attn[owner], slot_t[owner], unfilled, owner,
                                (row, slot, lq_all))
        who = owner[row]
        tok = tok_t[who, slot]
        inc = upd.gather(1, tok[:, None])[:, 0].masked_fill(~allowed[who, slot, tok], NEG_INF)
        lq_tok = logq.gather(1, tok[:, None])[:, 0]
        nxt: list[dict[int, tuple]] = [{} for _ in range(N)]
        for r, g, v, lq in zip(row.tolist(), slot.tolist(), inc.tolist(), lq_tok.tolist()):
            i, m = states[r]
            s0, lqs, sts = level[i][m]
            key, val = m | 1 << g, s0 + v
            if key not in nxt[i] or better(val, nxt[i][key][0]):
                nxt[i][key] = (val, _put(lqs, g, lq), _put(sts, g, step))
        for i in range(N):
            if step < int(n[i]):
                level[i], exact[i] = _prune(nxt[i], keep_lower, exact[i])
    search.scorer.end_batch(N)
    out = []
    for i, k in enumerate(n.tolist()):
        s, lqs, sts = level[i][(1 << k) - 1]
        out.append(FixedScore(s, tuple(lqs[:k]), tuple(sts[:k]), exact[i]))
    return out


def _put(values: tuple, at: int, value) -> tuple:
    return values[:at] + (value,) + values[at + 1:]


def _prune(states: dict[int, tuple], keep_lower: bool, exact: bool
           ) -> tuple[dict[int, tuple], bool]:
    """The best :data:`ANY_ORDER_STATES` partial fillings of one size (all when fewer)."""
    if len(states) <= ANY_ORDER_STATES:
        return states, exact
    ranked = sorted(states.items(), key=lambda kv: kv[1][0], reverse=True)   # as a beam keeps
    return dict(ranked[:ANY_ORDER_STATES]), False
