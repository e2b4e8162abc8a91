"""Conditional tables of two positions, from a masked LM through the adapter protocol (METHODS §2).

For an input and positions a, b: the marginals with both masked, and the unary conditionals
q_{a|b}(. | w_b) (mask a, put a candidate w_b at b) and q_{b|a}, on candidate sets A and B (the
whole allowed vocabulary when small, else the top-K of each marginal). Forward passes are batched
across items and conditioning tokens.
"""
from __future__ import annotations

import warnings

import torch

from infill.decoding.windows import windows_for
from infill.errors import ConfigError, InputError, LongInputWarning
from infill.joint.conditional_tables import PairTables
from infill.joint.constructions import normalize_columns, normalize_rows
from infill.models.base import MaskedLM, pad_batch

__all__ = ["PairTables", "pair_tables", "pair_tables_batch"]


def _forward(model: MaskedLM, rows: list[list[int]], positions: list[list[int]],
             batch_size: int, want_logits: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """P positions per row; returns (log-probs [R, P, V], logits or None), float64 on CPU.

    Rows are padded with ``pad_id`` and sent in chunks of ``batch_size`` (one model call each).
    With ``want_logits`` the adapter's ``logits`` is called instead and the log-probs are its
    log-softmax (the same single pass).
    """
    lps, lgs = [], []
    for s in range(0, len(rows), batch_size):
        chunk, pos = rows[s:s + batch_size], positions[s:s + batch_size]
        ids, attn = pad_batch(chunk, model.pad_id)
        p = torch.tensor(pos, dtype=torch.long)
        with torch.inference_mode():
            if want_logits:
                lg = model.logits(ids, attn, p).double().cpu()
                lgs.append(lg)
                lps.append(torch.log_softmax(lg, dim=-1))
            else:
                lps.append(model.log_probs(ids, attn, p).double().cpu())
    return torch.cat(lps), (torch.cat(lgs) if want_logits else None)


def _candidates(lp: torch.Tensor, allowed: torch.Tensor, k: int, gold: int | None) -> torch.Tensor:
    scores = lp.masked_fill(~allowed, float("-inf"))
    n = int(allowed.sum())
    top = torch.topk(scores, min(k, n)).indices
    if gold is not None and not bool((top == gold).any()):
        top = torch.cat([top, torch.tensor([gold])])
    return top


def _windowed(model: MaskedLM, ids: list[int], a: int, b: int, window: bool
              ) -> tuple[list[int], int, int, tuple[int, int] | None]:
    """The input (and a, b in it) cut to the longest context window centred on the pair when it
    is longer than the model's maximum length, and that window (None when it fits);
    ``window=False``: the length error."""
    plan, lo, hi = windows_for(model, ids, [[a], [b]], window)
    if len(plan) > 1:
        raise InputError(f"positions {a} and {b} are too far apart for one context window of "
                         f"the model's maximum length ({model.max_length})")
    w = plan[0]
    cut = (w.left, w.right) if len(ids) > model.max_length else None
    return w.ids(ids, lo, hi), a - w.left + lo, b - w.left + lo, cut


def pair_tables_batch(model: MaskedLM, items: list[tuple[list[int], int, int]],
                      joint_size: int = 50, gold: list[tuple[int, int] | None] | None = None,
                      allow_special: bool = False, batch_size: int = 128,
                      logits: bool | None = None, window: bool = True,
                      restrict: list | None = None) -> list[PairTables]:
    """:func:`pair_tables` for many (input_ids, a, b) items, batching the forward passes across
    items: one pass over every both-masked input, then one pass per conditioning token
    (|A| + |B| rows per item), all in chunks of ``batch_size`` rows.

    ``gold[k]`` = (gold token at a, gold token at b) for item k (added to the candidate sets), or
    None. ``logits``: fetch raw logits for MRF-L (default: when the adapter has ``logits``).
    An input longer than the model's maximum length is read in the longest context window
    centred on its pair (``PairTables.window``; a :class:`~infill.errors.LongInputWarning` says
    so); ``window=False`` makes it an error. ``restrict[k]``: None or a [2, V] mask of the
    tokens item k's positions a and b may take (letter sets, :mod:`infill.decoding.letters`):
    its candidate sets are drawn from them only.
    """
    want_logits = _want_logits(model, joint_size, batch_size, logits)
    golds = gold if gold is not None else [None] * len(items)
    if len(golds) != len(items):
        raise InputError("give one gold pair (or None) per item")
    allowed = model.allowed_mask(allow_special)
    cut_items, cuts = _fit_windows(model, items, window)
    marg, _ = _forward(model, *_both_masked(model, cut_items), batch_size, False)   # [N, 2, V]
    restrict = restrict if restrict is not None else [None] * len(items)
    cands = [_candidate_sets(marg[k], allowed if r is None else
                             torch.as_tensor(r).bool().cpu() & allowed, joint_size, g)
             for k, (g, r) in enumerate(zip(golds, restrict))]
    cond, cond_logits = _forward(model, *_conditioning_rows(model, cut_items, cands), batch_size,
                                 want_logits)
    cond = cond[:, 0]
    cond_logits = None if cond_logits is None else cond_logits[:, 0]
    out, r = [], 0
    for k, (ca, cb) in enumerate(cands):
        rows = slice(r, r + len(ca) + len(cb))
        r = rows.stop
        _, a, b = items[k]                   # report the positions of the caller's input
        out.append(_tables(a, b, ca, cb, marg[k], cond[rows],
                           None if cond_logits is None else cond_logits[rows], golds[k], cuts[k]))
    return out


def _want_logits(model: MaskedLM, joint_size: int, batch_size: int, logits: bool | None) -> bool:
    """Whether to fetch raw logits (default: when the adapter has them), the sizes checked."""
    if joint_size < 1:
        raise ConfigError(f"joint size must be >= 1, got {joint_size}")
    if batch_size < 1:
        raise ConfigError(f"batch size must be >= 1, got {batch_size}")
    want_logits = model.supports_logits if logits is None else bool(logits)
    if want_logits and not model.supports_logits:
        raise ConfigError("this model adapter has no logits() method, so MRF-L is unavailable")
    return want_logits


def _fit_windows(model: MaskedLM, items: list[tuple[list[int], int, int]], window: bool
                 ) -> tuple[list[tuple[list[int], int, int]], list[tuple[int, int] | None]]:
    """The items checked and each cut to its context window (:func:`_windowed`), with the
    windows; a :class:`~infill.errors.LongInputWarning` counts the inputs that needed one."""
    fitted, cuts = [], []
    for ids, a, b in items:
        ids = [int(t) for t in ids]
        if a == b or not (0 <= a < len(ids) and 0 <= b < len(ids)):
            raise InputError(f"positions ({a}, {b}) must be two different positions of the input "
                             f"(length {len(ids)})")
        *item, cut = _windowed(model, ids, a, b, window)
        fitted.append(tuple(item))
        cuts.append(cut)
    long = sum(c is not None for c in cuts)
    if long:
        warnings.warn(f"{long} input(s) longer than the model's maximum length "
                      f"({model.max_length} tokens): read in the longest context window centred "
                      "on the pair", LongInputWarning, stacklevel=3)
    return fitted, cuts


def _both_masked(model: MaskedLM, items: list[tuple[list[int], int, int]]
                 ) -> tuple[list[list[int]], list[list[int]]]:
    """(rows, positions) for the marginals: each item with a and b masked, one row per item."""
    rows, pos = [], []
    for ids, a, b in items:
        x = list(ids)
        x[a] = x[b] = model.mask_id
        rows.append(x)
        pos.append([a, b])
    return rows, pos


def _candidate_sets(marg: torch.Tensor, allowed: torch.Tensor, joint_size: int,
                    gold: tuple[int, int] | None) -> tuple[torch.Tensor, torch.Tensor]:
    """(A, B) of one item from its both-masked marginals [2, V], each with its gold token;
    ``allowed``: [V], or [2, V] (one mask per position)."""
    at = allowed if allowed.dim() == 2 else allowed.expand(2, -1)
    return (_candidates(marg[0], at[0], joint_size, None if gold is None else int(gold[0])),
            _candidates(marg[1], at[1], joint_size, None if gold is None else int(gold[1])))


def _conditioning_rows(model: MaskedLM, items: list[tuple[list[int], int, int]],
                       cands: list[tuple[torch.Tensor, torch.Tensor]]
                       ) -> tuple[list[list[int]], list[list[int]]]:
    """(rows, positions) for the unary conditionals: per item, |B| rows for q_{a|b} then |A|
    rows for q_{b|a}."""
    rows, pos = [], []
    for (ids, a, b), (ca, cb) in zip(items, cands):
        base = [int(t) for t in ids]
        for w in cb.tolist():            # q_{a|b}(. | w_b = w): mask a, put w at b
            x = list(base)
            x[a], x[b] = model.mask_id, w
            rows.append(x)
            pos.append([a])
        for w in ca.tolist():            # q_{b|a}(. | w_a = w): mask b, put w at a
            x = list(base)
            x[a], x[b] = w, model.mask_id
            rows.append(x)
            pos.append([b])
    return rows, pos


def _tables(a: int, b: int, ca: torch.Tensor, cb: torch.Tensor, marg: torch.Tensor,
            cond: torch.Tensor, cond_logits: torch.Tensor | None, gold: tuple[int, int] | None,
            cut: tuple[int, int] | None) -> PairTables:
    """One item's :class:`PairTables` from its marginals [2, V] and its conditioning rows
    (``cond``: [|B| + |A|, V], in the order of :func:`_conditioning_rows`)."""
    nb = len(cb)
    qa_rows = cond[:nb][:, ca]                           # [|B|, |A|]: row j = q_a(. | B_j)
    qb_rows = cond[nb:][:, cb]                           # [|A|, |B|]: row i = q_b(. | A_i)
    la_b, lb_a = normalize_columns(qa_rows.T.contiguous()), normalize_rows(qb_rows)
    lga = lgb = None
    if cond_logits is not None:
        lga = cond_logits[:nb][:, ca].T.contiguous()
        lgb = cond_logits[nb:][:, cb]
    lqa, lqb = marg[0][ca], marg[1][cb]
    gi = None
    if gold is not None:
        gi = (int((ca == int(gold[0])).nonzero()[0]), int((cb == int(gold[1])).nonzero()[0]))
    return PairTables(a, b, ca, cb, lqa - torch.logsumexp(lqa, 0), lqb - torch.logsumexp(lqb, 0),
                      la_b, lb_a, lga, lgb, gi, cut)


def pair_tables(model: MaskedLM, input_ids: list[int] | torch.Tensor, a: int, b: int,
                joint_size: int = 50, gold: tuple[int, int] | None = None,
                allow_special: bool = False, batch_size: int = 128,
                logits: bool | None = None, window: bool = True,
                restrict: torch.Tensor | None = None) -> PairTables:
    """Unary-conditional tables for positions a, b of one input (the tokens at a and b are
    ignored: the marginals mask both, each conditional masks one and fills the other with a
    candidate). See :class:`PairTables` and :func:`pair_tables_batch` (``window``: read an
    input longer than the model's maximum length in a context window, else refuse it;
    ``restrict``: None or the [2, V] mask of the tokens a and b may take)."""
    ids = input_ids.tolist() if isinstance(input_ids, torch.Tensor) else list(input_ids)
    return pair_tables_batch(model, [(ids, a, b)], joint_size, None if gold is None else [gold],
                             allow_special, batch_size, logits, window, [restrict])[0]
