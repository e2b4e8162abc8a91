"""Pseudo-log-likelihood terms of a masked LM: each scored position of a sequence masked alone
and read back, batched over rows -- what the MH sampler's energies (:mod:`infill.mcmc.energy`,
docs/METHODS.md §3) and the fill's rankings by a PLL (:mod:`infill.filling.length_ranking`,
:mod:`infill.filling.reranking`) share, so that it lives below both.

- ``-f_t(x_t; x with t masked)``, f the log-probability (``local``) or the raw logit (``raw``);
- a PLL sums them over the scored positions (:func:`scored_positions`); ``pll`` / ``pll-gap`` /
  ``pll-word`` read a filled text within :data:`PLL_REACH` tokens of its gaps
  (:func:`length_scores`).
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

from infill.decoding.lengths import LENGTH_SCORES, PER_CHAR, per_char, word_piece_masks
from infill.decoding.windows import body_bounds, truncate
from infill.errors import ConfigError, InputError
from infill.models.base import MaskedLM, pad_batch
from infill.requests import ENERGIES

__all__ = ["PLL_REACH", "energy_terms", "length_scores", "near_gaps", "score_function",
           "scored_positions", "word_rests"]


def scored_positions(model: MaskedLM, ids: Sequence[int]) -> list[int]:
    """Positions t that E sums over: every position holding an ordinary output token.

    Structural specials (cls/bos, sep/eos, pad) and any other id in ``model.special_ids`` are
    skipped; a sequence still holding ``model.mask_id`` cannot be scored (InputError), unless
    the mask is also a text symbol (``model.mask_in_text``: it is then skipped as a special).
    """
    if not model.mask_in_text and any(int(i) == model.mask_id for i in ids):
        raise InputError("cannot compute the energy of a sequence that still holds a mask")
    special = model.special_ids
    return [t for t, i in enumerate(ids) if int(i) < model.vocab_size and int(i) not in special]


def score_function(model: MaskedLM, kind: str):
    """The adapter call an energy reads: ``log_probs`` (E_local) or raw ``logits`` (E_raw)."""
    if kind == "local":
        return model.log_probs
    if kind == "raw":
        if not model.supports_logits:
            raise ConfigError(
                f"energy 'raw' needs the model's unnormalized logits, and the adapter for "
                f"{getattr(model, 'name', type(model).__name__)!r} has no logits() method; "
                "use energy 'local'")
        return model.logits
    raise ConfigError(f"unknown energy {kind!r}; choose one of {', '.join(ENERGIES)}")


def _body(model: MaskedLM, seq: list[int]) -> tuple[int, int]:
    """(lo, hi): the sequence without its leading / trailing structural specials."""
    structural = {x for x in seq if x >= model.vocab_size or x in model.special_ids}
    return body_bounds(seq, structural)


def _windowed_rows(model: MaskedLM, ids: torch.Tensor, attn: torch.Tensor, r: torch.Tensor,
                   t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """For rows longer than the model's maximum: each job (r, t) sees the longest context
    window centred on t (specials kept); returns (ids, attention, position of t) per job."""
    rows, where = [], []
    for rr, tt in zip(r.tolist(), t.tolist()):
        seq = ids[rr, attn[rr]].tolist()
        if len(seq) <= model.max_length:
            rows.append(seq)
            where.append(tt)
            continue
        lo, hi = _body(model, seq)
        win, pos = truncate(seq, tt, 1, lo, hi, model.max_length)
        rows.append(win)
        where.append(pos)
    padded, mask = pad_batch(rows, model.pad_id)
    return padded, mask, torch.tensor(where, dtype=torch.long)


@torch.inference_mode()
def energy_terms(model: MaskedLM, ids: torch.Tensor, attn: torch.Tensor, scored: torch.Tensor,
                 kind: str, max_rows: int, hidden: torch.Tensor | None = None) -> torch.Tensor:
    """Per-position terms -f_t(x_t; x_{-t}) as [N, T] float64 (0 where not scored). Rows longer
    than the model's maximum length score each position in a context window centred on it.
    ``hidden`` [N, T]: how many positions right of t are masked too while t is scored (default
    none)."""
    fn = score_function(model, kind)
    jobs = scored.nonzero(as_tuple=False)                      # [J, 2]: (row, t)
    terms = torch.zeros(ids.shape, dtype=torch.float64)
    long_rows = bool((attn.sum(1) > model.max_length).any())
    for start in range(0, jobs.shape[0], max_rows):
        job = jobs[start: start + max_rows]
        r, t = job[:, 0], job[:, 1]
        if long_rows:
            rows, mask, at = _windowed_rows(model, ids, attn, r, t)
        else:
            rows, mask, at = ids[r].clone(), attn[r], t
        k = torch.arange(len(r))
        gold = rows[k, at].clone()
        rows[k, at] = model.mask_id
        if hidden is not None:
            after = torch.arange(rows.shape[1]) - at[:, None]
            rows[(after > 0) & (after <= hidden[r, t][:, None]) & mask] = model.mask_id
        out = fn(rows.to(model.device), mask.to(model.device), at[:, None].to(model.device))
        vals = out[:, 0, :].gather(-1, gold[:, None].to(out.device))[:, 0]
        terms[r, t] = -vals.detach().to("cpu", torch.float64)
    if not torch.isfinite(terms).all():
        raise InputError("the model gave a non-finite score to a token of the sequence")
    return terms


PLL_REACH = 32
"""``pll`` and ``pll-gap`` read a filled text within this many tokens of its gaps, each side (all
of a shorter text): the terms of positions further away hardly tell one fill from another, and
every position scored costs a forward row as long as the text."""


def near_gaps(model, ids: list[int], gaps: list[int]) -> tuple[list[int], list[int]]:
    """``ids`` cut to their gaps and :data:`PLL_REACH` tokens each side (leading and trailing
    specials kept; a window shifted inwards at the text's ends), and the gaps' positions in it."""
    structural = {t for t in ids if t >= model.vocab_size or t in model.special_ids}
    lo, hi = body_bounds(ids, structural)
    first, n = min(gaps), max(gaps) + 1 - min(gaps)
    width = lo + (len(ids) - hi) + n + 2 * PLL_REACH
    cut, start = truncate(ids, first, n, lo, hi, width)
    return cut, [p - first + start for p in gaps]


def length_scores(model, kind: str, filled: Sequence[Sequence[int]],
                  gaps: Sequence[Sequence[int]], scores: Sequence[float],
                  chars: Sequence[int], max_rows: int = 256) -> list[float]:
    """The score each completion of a gap of uncertain length is ranked by across lengths
    (higher is better; :data:`~infill.decoding.lengths.LENGTH_SCORES`: ``pll`` is −E_local of
    the text within :data:`PLL_REACH` tokens of the gaps, ``pll-gap`` its gap terms,
    ``pll-word`` the gap terms each with the later pieces of its word masked too).

    filled -- the completions' full id sequences (gaps filled); gaps -- their gap positions;
    scores -- the decoder's scores; chars -- characters filled in (for ``per-char`` and
    ``per-char-0.7``)."""
    if kind not in LENGTH_SCORES:
        raise ConfigError(f"unknown length score {kind!r}; choose from {', '.join(LENGTH_SCORES)}")
    if kind in PER_CHAR:
        return per_char(kind, scores, chars)
    cut = [near_gaps(model, list(map(int, f)), list(g)) for f, g in zip(filled, gaps)]
    ids, attn = pad_batch([f for f, _ in cut], model.pad_id)
    scored = torch.zeros(ids.shape, dtype=torch.bool)
    for r, (f, g) in enumerate(cut):
        scored[r, scored_positions(model, f) if kind == "pll" else g] = True
    hidden = word_rests(model, ids, scored) if kind == "pll-word" else None
    terms = energy_terms(model, ids, attn, scored, "local", max_rows, hidden)
    return (-terms.sum(-1)).tolist()


def word_rests(model, ids: torch.Tensor, scored: torch.Tensor) -> torch.Tensor:
    """[N, T] how many scored positions right after t continue t's word (WordPiece ``##``
    pieces; 0 for every position of a model without them): the pieces ``pll-word`` masks
    with t (Kauf & Ivanova 2023's PLL-word-l2r)."""
    try:
        cont = word_piece_masks(model)[1]
    except ConfigError:
        return torch.zeros(ids.shape, dtype=torch.long)
    follows = scored & cont[ids.clamp(max=len(cont) - 1)] & (ids < len(cont))
    rest = torch.zeros(ids.shape, dtype=torch.long)
    for j in range(ids.shape[1] - 2, -1, -1):                   # runs of continuations, leftwards
        rest[:, j] = torch.where(follows[:, j + 1], rest[:, j + 1] + 1, 0)
    return rest
