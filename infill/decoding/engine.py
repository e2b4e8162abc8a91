"""The beam-search engine (METHODS §1): one forward pass per step for every live hypothesis of every
input.

The engine knows no model internals (only the :class:`~infill.models.base.MaskedLM` protocol), no
scoring rule (only :class:`~infill.decoding.scorers.Scorer`) and no selection rule (only
:class:`~infill.decoding.selectors.Selector`). Each step reads like METHODS §1:

    build inputs -> pick each hypothesis' position -> log q -> scorer.update -> selector.select

State is kept as an [inputs, beam] grid:

  fill[n, b, k]   token placed at the k-th gap slot of input n by hypothesis b (-1: unfilled)
  score[n, b]     the hypothesis' summed update (-inf: no hypothesis in that beam slot)
  placed[n, b, k] log q of that token at the step it was placed; step[n, b, k] that step
"""
from __future__ import annotations

import hashlib
import operator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from infill.decoding.proposals import KeyedRNG, subkeys
from infill.decoding.orders import Order
from infill.decoding.scorers import Context, Scorer, Setup, Step
from infill.decoding.selectors import Candidates, Selector
from infill.data.files import memory_gb
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


@dataclass(frozen=True)
class Search:
    """The parts of one beam search, made from the decoding options by
    :meth:`infill.config.DecodeConfig.search`: the update rule, the order, the rule of which
    candidates survive, the beam size B, the seed of every draw, and whether special tokens may
    be placed in a gap. A scorer instance may be stateful (shared across calls)."""

    scorer: Scorer
    order: Order
    selector: Selector
    beam_size: int
    seed: int = 0
    allow_special: bool = False


def input_key(ids: Sequence[int], gaps: Sequence[int]) -> int:
    """A 63-bit key of an input (its ids and gap positions): what its random draws depend on."""
    data = np.asarray(list(ids) + [-1] + list(gaps), dtype=np.int64).tobytes()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little") >> 1


def memory_budget() -> float:
    """Bytes the engine may use for its candidate grids (``INFILL_MAX_MEMORY_GB``, default 4)."""
    gb = memory_gb()
    return (DEFAULT_MEMORY_GB if gb is None else gb) * 2 ** 30


def _bytes_per_input(B: int, V: int, P: int, order: Order, selector: Selector) -> int:
    """Rough peak of one input's tensors: three [B, W*V] float64 candidate grids (W = P for an
    order that moves at every slot, else 1), [B, P, V] float32 log-probabilities when the
    order reads every slot (else [B, V]), and the selector's own work (the [K, K] comparisons of
    merging equal fills: :meth:`Selector.work_bytes`)."""
    W = order.width(P)
    return (3 * 8 * B * W * V + 4 * B * (P if order.reads_all else 1) * V
            + selector.work_bytes(B, V, P, order.several))


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


def beam_search(model: MaskedLM, inputs: Sequence[Sequence[int]], search: Search,
                positions: Sequence[Sequence[int]] | None = None,
                allowed: Sequence[torch.Tensor | None] | None = None,
                groups: Sequence[int] | None = None) -> list[list[Hypothesis]]:
    """Fill the gaps of a batch of token sequences; returns each input's hypotheses, best first.

    inputs  -- id sequences (any lengths); the gap positions to fill are ``positions[i]`` or,
               if not given, every position holding ``model.mask_id``.
    search  -- the parts of the search (:class:`Search`; ``DecodeConfig.search()`` makes them
               from the decoding options).
    allowed -- optional per input: None, or a [n_gaps, V] bool mask of the tokens that may be
               placed at each of its gap positions (in position order), on top of the model's
               own restriction (e.g. a whole-word gap: no continuation piece first).
    groups  -- optional per input: a group id. The inputs of one group share one beam: after
               each step only the B best hypotheses of the group's unfinished inputs live on
               (compared at equal steps, each a sum of as many updates), so B hypotheses cost
               one forward row each however many inputs the group has. The length variants of
               one text are such a group (:mod:`infill.decoding.lengths`). A group's inputs are
               adjacent and decoded in one chunk. None: every input its own beam.
    Inputs are decoded together, one forward call per step, in as few chunks as the memory budget
    (:func:`memory_budget`) allows; results do not depend on the chunking or on batch mates.
    """
    seqs, gaps = _validate(model, inputs, positions)
    allowed = _slot_masks(model, gaps, allowed, search.allow_special)
    order = search.order
    B, V = search.beam_size, model.vocab_size
    P = max(len(g) for g in gaps)
    per_input = _bytes_per_input(B, V, P, order, search.selector)
    budget = memory_budget()
    if per_input > budget:
        raise ConfigError(
            f"beam {B} x vocabulary {V:,} x {P} gap positions needs about "
            f"{per_input / 2 ** 30:.1f} GiB per input, over the {budget / 2 ** 30:.1f} GiB limit; "
            f"lower the beam size (or raise {MEMORY_ENV})")
    chunk = max(1, int(budget // per_input))
    out: list[list[Hypothesis]] = []
    for s, e in _chunks(len(seqs), chunk, groups):
        out += _decode(model, seqs[s:e], gaps[s:e], allowed[s:e], search,
                       None if groups is None else groups[s:e])
    return out


def _chunks(n: int, size: int, groups: Sequence[int] | None) -> list[tuple[int, int]]:
    """[start, end) chunks of at most ``size`` inputs (more when one group is bigger), never
    splitting a group; InputError when a group's inputs are not adjacent."""
    if groups is None:
        return [(s, min(s + size, n)) for s in range(0, n, size)]
    if len(groups) != n:
        raise InputError(f"{len(groups)} group ids for {n} inputs")
    starts = [i for i in range(n) if i == 0 or groups[i] != groups[i - 1]]
    if len({groups[i] for i in starts}) != len(starts):
        raise InputError("the inputs of one group (a shared beam) must be adjacent")
    out, s = [], 0
    for a, b in zip(starts, starts[1:] + [n]):
        if b - s > size and a > s:
            out.append((s, a))
            s = a
    out.append((s, n))
    return out


def _slot_masks(model: MaskedLM, gaps, allowed, allow_special: bool) -> list[torch.Tensor]:
    """Per input, the [n_gaps, V] tokens that may be placed at each gap position."""
    base = model.allowed_mask(allow_special)
    if not base.any():
        raise ConfigError("no token may be placed in a gap (every candidate is special)")
    if allowed is not None and len(allowed) != len(gaps):
        raise InputError(f"{len(allowed)} allowed-token masks for {len(gaps)} inputs")
    out = []
    for i, g in enumerate(gaps):
        a = None if allowed is None else allowed[i]
        if a is None:
            out.append(base.expand(len(g), -1))
            continue
        a = torch.as_tensor(a, dtype=torch.bool)
        if a.shape != (len(g), model.vocab_size):
            raise InputError(f"input {i}: the allowed-token mask must be [{len(g)}, "
                             f"{model.vocab_size}], got {list(a.shape)}")
        a = a & base
        if not a.any(-1).all():
            raise InputError(f"input {i}: a gap position has no token that may be placed")
        out.append(a)
    return out


def _step_logq(model, order: Order, scorer: Scorer, x, attn, slots, unfilled, allowed, owner):
    """The moves of R hypotheses and log q at each: one model call (two when the scorer asks
    for a context of its own and the order reads every slot).

    Returns (row [M], slot [M], logq [M, V])."""
    lq_all = model.log_probs(x, attn, slots) if order.reads_all else None    # [R, P, V]
    row, slot = order.moves(unfilled, lq_all, allowed)
    return row, slot, move_logq(model, scorer, x, attn, slots, unfilled, owner, row, slot,
                                lq_all)


def move_logq(model, scorer: Scorer, x, attn, slots, unfilled, owner, row, slot, lq_all=None,
              call=None) -> torch.Tensor:
    """log q [M, V] of each move (row [M], slot [M]) of a step: from the scorer's own context
    pass when it asks for one, else from the step's pass over every slot (``lq_all``, when the
    order read them), else from a pass at the move's position. ``call(ids, attention,
    positions)``: the model call (default ``model.log_probs``); the engine's step and the
    exact score of a fixed filling (:mod:`infill.decoding.fixed`) share this."""
    call = call if call is not None else model.log_probs
    ctx = scorer.context(Context(x[row], slots[row], unfilled[row], slot, owner[row]))
    pos = slots[row].gather(1, slot[:, None])
    if ctx is not None:
        return call(ctx, attn[row], pos)[:, 0]
    if lq_all is not None:
        return lq_all[row.to(lq_all.device), slot.to(lq_all.device)]
    return call(x[row], attn[row], pos)[:, 0]


def _decode(model: MaskedLM, seqs, gaps, allowed_in, search: Search, groups=None
            ) -> list[list[Hypothesis]]:
    dev = model.device
    scorer, order, selector = search.scorer, search.order, search.selector
    B, V = search.beam_size, model.vocab_size
    for x, g in zip(seqs, gaps):
        for t in g:
            x[t] = model.mask_id
    keys_in = torch.tensor([input_key(x, g) for x, g in zip(seqs, gaps)], dtype=torch.long)
    base, attn = pad_batch(seqs, model.pad_id)       # [N, T]
    slots, slot_ok = pad_batch(gaps, 0)              # [N, P] gap positions of each input
    N, P = slots.shape
    W = order.width(P)
    n_gaps = slot_ok.sum(1)
    allowed = torch.zeros((N, P, V), dtype=torch.bool)
    for i, a in enumerate(allowed_in):
        allowed[i, :len(a)] = a
    scorer.prepare(Setup(model, model.allowed_mask(search.allow_special), n_gaps.tolist(), P))
    base, attn, slots, slot_ok, n_gaps, allowed = (t.to(dev) for t in (base, attn, slots, slot_ok,
                                                                        n_gaps, allowed))
    gen = torch.Generator().manual_seed(search.seed)
    rng = KeyedRNG(search.seed)
    keys = subkeys(keys_in, B).to(dev)                                    # [N, B]

    fill, placed, when, score = _roots(N, B, P, dev)
    share = None if groups is None else torch.as_tensor(groups, device=dev)
    for step in range(int(n_gaps.max())):
        active = n_gaps > step                               # inputs with positions left to fill
        ni, bi = ((score > NEG_INF) & active[:, None]).nonzero(as_tuple=True)
        if not len(ni):                          # a shared beam whose hypotheses all finished
            break
        f = fill[ni, bi]                                      # [R, P]
        unfilled = slot_ok[ni] & (f < 0)
        x = base[ni].scatter(1, slots[ni], torch.where(f >= 0, f, base[ni].gather(1, slots[ni])))
        row, slot, logq = _step_logq(model, order, scorer, x, attn[ni], slots[ni], unfilled,
                                     allowed[ni], ni)
        logq = logq.to(dev, torch.float64)
        mkeys = keys[ni, bi][row] if W == 1 else _mix_keys(keys[ni, bi][row], slot)
        upd = _checked_update(scorer, Step(logq=logq, slot=slot, owner=ni[row], keys=mkeys,
                                           index=step, rng=rng, generator=gen))
        ok = allowed[ni[row], slot]                                       # [M, V]
        upd = upd.masked_fill(~ok, NEG_INF)
        live = torch.zeros_like(active)
        live[ni] = True                               # (a shared beam may leave an input none)
        _check_alive(scorer, upd, logq.masked_fill(~ok, NEG_INF), ni[row], live, step)

        act = active.nonzero().squeeze(1)
        at = (ni[row], bi[row], slot if W > 1 else torch.zeros_like(slot))
        grid, ok_grid, lq_grid, tgt = _grids((N, B, W, V), act, at, score[at[:2]][:, None] + upd,
                                             ok, logq, slot)
        vals, parent, cand = selector.select(
            Candidates(grid, lq_grid if selector.needs_logq else None, ok_grid, keys[act], step,
                       rng, fill[act], V, order.several), B)
        _extend((fill, placed, when, score), act, tgt, lq_grid, vals, parent, cand,
                V, step, selector, B)
        if share is not None:
            _share_beam(score, act, share[act], B)
    scorer.end_batch(N)
    return _assemble(score, fill, placed, when, n_gaps)


def _scorer_name(scorer) -> str:
    return str(getattr(scorer, "name", None) or type(scorer).__name__)


def _checked_update(scorer: Scorer, step: Step) -> torch.Tensor:
    """The scorer's update at ``step``, checked where the engine receives it: an [M, V] real
    tensor with no NaN or +inf. A user's scorer that returns anything else gets a ConfigError
    naming it; NaN log-probabilities from the model are said to be the model's."""
    upd = scorer.update(step)
    name, want = _scorer_name(scorer), list(step.logq.shape)
    if not isinstance(upd, torch.Tensor):
        raise ConfigError(f"scorer {name!r}: update() must return a tensor of shape {want} "
                          f"(moves x vocabulary), got a {type(upd).__name__}", field="scorer")
    if list(upd.shape) != want:
        raise ConfigError(f"scorer {name!r}: update() must return a tensor of shape {want} "
                          f"(moves x vocabulary), got shape {list(upd.shape)}", field="scorer")
    if upd.dtype == torch.bool or upd.is_complex():
        raise ConfigError(f"scorer {name!r}: update() must return real numbers, got {upd.dtype}",
                          field="scorer")
    upd = upd.to(step.logq.device, torch.float64)
    if (torch.isnan(upd) | (upd == float("inf"))).any():
        raise _non_finite(scorer, step)
    return upd


def _non_finite(scorer: Scorer, step: Step) -> InfillError:
    """The error for a NaN or +inf score increment: the model's fault when its log q is
    NaN (or +inf), the pivot's for HCB, else the scorer's."""
    name = _scorer_name(scorer)
    lq = step.logq
    if (torch.isnan(lq) | (lq == float("inf"))).any():
        return InfillError(f"the model returned non-finite log-probabilities (NaN) at step "
                           f"{step.index} (scorer {name!r}): its weights or its output are "
                           "broken (e.g. NaN in the checkpoint, or an fp16 overflow: try "
                           "--dtype bf16 or float32)")
    if hasattr(scorer, "pivots"):
        return InfillError(f"scorer {name!r} produced an infinite/NaN score: the pivot has "
                           "zero probability under the model; choose another pivot")
    return ConfigError(f"scorer {name!r}: update() returned NaN or +inf score increments "
                       f"at step {step.index}", field="scorer")


def _check_alive(scorer: Scorer, upd, logq, owner, active, step: int) -> None:
    """InfillError when an active input has no candidate left (every allowed token scored
    -inf): the model's fault when it gives them all zero probability, else the scorer's."""
    alive = torch.zeros(active.shape[0], dtype=torch.long, device=upd.device)
    alive.index_add_(0, owner.to(upd.device), (upd > NEG_INF).any(-1).long())
    dead = (active.to(upd.device) & (alive == 0)).nonzero()
    if not len(dead):
        return
    mine = owner.to(upd.device) == int(dead[0])
    if not (logq.to(upd.device)[mine] > NEG_INF).any():
        raise InfillError(f"the model gives every token that may be placed zero probability "
                          f"at step {step}: nothing can fill the gap")
    raise ConfigError(f"scorer {_scorer_name(scorer)!r} scored every candidate token -inf at "
                      f"step {step}: no hypothesis can be extended", field="scorer")


def _grids(shape, act, at, cand_scores, ok, logq, slot):
    """The step's candidates as [A, B, W*V] grids of the active inputs (scores, allowed, log q;
    -inf / False where there is no candidate) and the [A, B, W] slot of each move column."""
    N, B, W, V = shape
    dev = cand_scores.device
    grid = torch.full(shape, NEG_INF, dtype=torch.float64, device=dev)
    grid[at] = cand_scores
    ok_grid = torch.zeros(shape, dtype=torch.bool, device=dev)
    ok_grid[at] = ok
    lq_grid = torch.full(shape, NEG_INF, dtype=torch.float64, device=dev)
    lq_grid[at] = logq
    tgt = torch.zeros((N, B, W), dtype=torch.long, device=dev)
    tgt[at] = slot
    flat = (t[act].reshape(len(act), B, W * V) for t in (grid, ok_grid, lq_grid))
    return (*flat, tgt[act])


def _roots(N: int, B: int, P: int, dev) -> tuple[torch.Tensor, ...]:
    """The empty beams (fill, placed, when, score): one root hypothesis per input, nothing
    filled."""
    fill = torch.full((N, B, P), -1, dtype=torch.long, device=dev)
    placed = torch.zeros((N, B, P), dtype=torch.float64, device=dev)
    when = torch.full((N, B, P), -1, dtype=torch.long, device=dev)
    score = torch.full((N, B), NEG_INF, dtype=torch.float64, device=dev)
    score[:, 0] = 0.0
    return fill, placed, when, score


def _share_beam(score: torch.Tensor, act: torch.Tensor, group: torch.Tensor, B: int) -> None:
    """Keep, in place, the B best live hypotheses of each group among the active inputs
    ``act`` (``group``: their group ids); the others' scores become -inf. Ties keep the
    earlier input and beam slot."""
    vals = score[act]                                                     # [A, B]
    flat, gid = vals.reshape(-1), group.repeat_interleave(vals.shape[1])
    by_val = flat.argsort(descending=True, stable=True)
    order = by_val[gid[by_val].argsort(stable=True)]                     # group, then best first
    sorted_gid = gid[order]
    first = torch.searchsorted(sorted_gid, sorted_gid, right=False)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(len(order), device=order.device) - first
    score[act] = flat.masked_fill(rank >= B, NEG_INF).reshape(vals.shape)


def _mix_keys(keys: torch.Tensor, slot: torch.Tensor) -> torch.Tensor:
    """Distinct keys for the moves of one hypothesis at different slots."""
    return subkeys(keys * 1_000_003 + slot, 1)[:, 0]


def _assemble(score, fill, placed, when, n_gaps) -> list[list[Hypothesis]]:
    """The final beams as ranked hypotheses per input (not the hot path)."""
    results = []
    score_c, fill_c, placed_c, when_c = score.cpu(), fill.cpu(), placed.cpu(), when.cpu()
    for i in range(score_c.shape[0]):
        k = int(n_gaps[i])
        rank = score_c[i].argsort(descending=True, stable=True)
        results.append([Hypothesis(tuple(fill_c[i, b, :k].tolist()), float(score_c[i, b]),
                                   tuple(placed_c[i, b, :k].tolist()), tuple(when_c[i, b, :k].tolist()))
                        for b in rank.tolist() if score_c[i, b] > NEG_INF])
    return results


def _extend(beams, act, tgt, lq, vals, parent, cand, V: int, step: int, selector, B: int
            ) -> None:
    """Write the selected candidates into the beams, in place: candidate k of active input a
    extends hypothesis ``parent[a, k]`` with token ``cand % V`` at the slot of its move
    ``cand // V`` (``tgt[a, parent, move]``), and records log q of the token there (``lq``,
    [A, B, W*V]) and the step it was placed."""
    fill, placed, when, score = beams
    P = fill.shape[2]
    rows = torch.arange(len(act), device=fill.device)[:, None]
    tok = cand % V
    at = tgt[rows, parent, cand // V][..., None]                          # [A, K, 1]
    new_fill = fill[act[:, None], parent].scatter(2, at, tok[..., None])
    lq_tok = lq[rows, parent, cand]                                       # [A, K]
    new_placed = placed[act[:, None], parent].scatter(2, at, lq_tok[..., None])
    new_when = when[act[:, None], parent].scatter(2, at, torch.full_like(at, step))
    keep, vals = selector.merge(vals, new_fill, B)
    pick = keep[..., None].expand(-1, -1, P)
    fill[act] = new_fill.gather(1, pick)
    placed[act] = new_placed.gather(1, pick)
    when[act] = new_when.gather(1, pick)
    score[act] = vals
