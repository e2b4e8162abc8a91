"""Energies a masked LM defines (SPEC §3), for sequences and for ranking completions.

- ``E_raw(x)   = -sum_t f_t(x_t; x with t masked)``, f the unnormalized logit;
- ``E_local(x) = -sum_t log q_t(x_t | x with t masked)`` (the pseudo-log-likelihood).

The sum runs over every scored position t of the sequence (:func:`scored_positions`). Each costs
T forward rows (the T one-position-masked copies), batched into as few calls as ``max_rows``
allows. For infilling the context is fixed but its terms still depend on the gap tokens, so E
sums over *all* scored positions, context included, as the SPEC says.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from infill.decoding.lengths import LENGTH_SCORES, word_piece_masks
from infill.decoding.windows import body_bounds, truncate
from infill.errors import ConfigError, InfillError, InputError, LongInputWarning
from infill.models.base import MaskedLM, pad_batch
from infill.requests import ENERGIES, RescoreRequest

__all__ = ["ENERGIES", "Scored", "energy", "energy_terms", "length_scores", "rescore", "rescore_each",
           "scored_positions", "sliding_window"]



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


def _as_batch(model: MaskedLM, input_ids) -> tuple[torch.Tensor, torch.Tensor]:
    """One sequence or several (possibly of different lengths) -> padded [N, T] ids + mask."""
    if isinstance(input_ids, torch.Tensor):
        seqs = [input_ids.tolist()] if input_ids.dim() == 1 else input_ids.tolist()
    else:
        seqs = list(input_ids)
        if seqs and not isinstance(seqs[0], (list, tuple, torch.Tensor)):
            seqs = [seqs]
        seqs = [s.tolist() if isinstance(s, torch.Tensor) else list(s) for s in seqs]
    if not seqs or any(len(s) == 0 for s in seqs):
        raise InputError("nothing to score: empty sequence")
    return pad_batch(seqs, model.pad_id)


def _body(model: MaskedLM, seq: list[int]) -> tuple[int, int]:
    """(lo, hi): the sequence without its leading / trailing structural specials."""
    structural = {x for x in seq if x >= model.vocab_size or x in model.special_ids}
    return body_bounds(seq, structural)


def sliding_window(model: MaskedLM, ids: Sequence[int]) -> list[dict]:
    """How a sequence longer than the model's maximum length is scored: ``[{start, end, width,
    positions}]``, each of the ``positions`` scored tokens of the body [start, end) (model-token
    positions, specials excluded) in the ``width`` body tokens centred on it; [] when it fits."""
    ids = [int(x) for x in ids]
    if len(ids) <= model.max_length:
        return []
    lo, hi = _body(model, ids)
    return [{"start": lo, "end": hi, "width": model.max_length - lo - (len(ids) - hi),
             "positions": len(scored_positions(model, ids))}]


def _warn_long(model: MaskedLM, n: int) -> None:
    warnings.warn(f"{n} text(s) longer than the model's maximum length ({model.max_length} "
                  "tokens): each position scored in the longest context window centred on it",
                  LongInputWarning, stacklevel=3)


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


def energy(model: MaskedLM, input_ids, kind: str = "local",
           positions: Sequence[int] | None = None, max_rows: int = 256) -> torch.Tensor:
    """E_local or E_raw of one or several sequences (SPEC §3) -> float64 tensor [N].

    ``input_ids``: one sequence (list / 1-D tensor) or several (a list of them, or a 2-D tensor).
    ``positions``: the positions t to sum over (shared by all rows); default every scored
    position of each row (:func:`scored_positions`). ``max_rows`` bounds the rows per forward call.
    """
    score_function(model, kind)
    if max_rows < 1:
        raise ConfigError("max_rows must be at least 1")
    ids, attn = _as_batch(model, input_ids)
    scored = torch.zeros(ids.shape, dtype=torch.bool)
    for r in range(ids.shape[0]):
        row = ids[r, attn[r]].tolist()
        pos = scored_positions(model, row) if positions is None else list(positions)
        if any(not 0 <= p < len(row) for p in pos):
            raise InputError(f"position out of range for a sequence of length {len(row)}")
        if positions is not None and any(row[p] == model.mask_id for p in pos):
            raise InputError("cannot compute the energy of a sequence that still holds a mask")
        scored[r, pos] = True
    return energy_terms(model, ids, attn, scored, kind, max_rows).sum(-1)


@dataclass
class Scored:
    """:func:`rescore_each`'s result for one text: its ``energy`` over ``tokens`` scored
    positions, or ``error``; ``windows``: how it was scored when it was longer than the model's
    maximum length (:func:`sliding_window`), else empty."""

    energy: float = float("nan")
    tokens: int = 0
    error: str | None = None
    windows: list[dict] = field(default_factory=list)
    error_field: str | tuple[str, ...] | None = field(default=None, compare=False)
    """The request field(s) the ``error`` names (:attr:`InfillError.field`), for front ends."""

    @property
    def windowed(self) -> bool:
        """Whether the text was scored in context windows."""
        return bool(self.windows)


def rescore(model: MaskedLM, texts_or_ids, energy: str = "local", max_rows: int = 256,
            window: bool = True, **renamed) -> list[float]:
    """Energies of complete texts (tokenized with the model's specials) or id sequences, in
    input order. Lower is better; sort by it to rank completions (e.g. a beam). A sequence
    longer than the model's maximum length scores each position in a context window centred on
    it (a :class:`~infill.errors.LongInputWarning` says so; ``window=False``: the length error). A
    text with nothing to score raises InputError. Options: :class:`~infill.requests.RescoreRequest`
    (``kind=`` is the old name of ``energy=``)."""
    o = RescoreRequest.from_options(energy=energy, max_rows=max_rows, window=window, **renamed)
    items = [texts_or_ids] if isinstance(texts_or_ids, str) else list(texts_or_ids)
    if not items:
        return []
    if isinstance(items[0], int):
        items = [items]
    seqs = [model.tokenize(it) if isinstance(it, str) else list(it) for it in items]
    for s in seqs:
        if not o.window:
            model.check_length(len(s))
        if not scored_positions(model, s):
            raise InputError("nothing to score: the text has no ordinary token")
    long = sum(len(s) > model.max_length for s in seqs)
    if long:
        _warn_long(model, long)
    return _energy(model, seqs, o.energy, max_rows=o.max_rows).tolist()


def rescore_each(model: MaskedLM, texts: Sequence[str], energy: str = "local",
                 max_rows: int = 256, window: bool = True, **renamed) -> list[Scored]:
    """:func:`rescore` for many texts, one :class:`Scored` each (errors reported per text,
    the others scored together; ``window=False``: a text longer than the model's maximum length
    gets the length error)."""
    o = RescoreRequest.from_options(energy=energy, max_rows=max_rows, window=window, **renamed)
    score_function(model, o.energy)
    out = [Scored() for _ in texts]
    ok, seqs = [], []
    for i, text in enumerate(texts):
        try:
            ids = model.tokenize(text)
            if not o.window:
                model.check_length(len(ids))
            n = len(scored_positions(model, ids))
            if n == 0:
                raise InputError("nothing to score: the text has no ordinary token")
        except InfillError as e:
            out[i].error, out[i].error_field = e.message(), e.field
            continue
        out[i].tokens, out[i].windows = n, sliding_window(model, ids)
        ok.append(i)
        seqs.append(ids)
    long = sum(bool(out[i].windows) for i in ok)
    if long:
        _warn_long(model, long)
    if seqs:
        for i, e in zip(ok, _energy(model, seqs, o.energy, max_rows=o.max_rows).tolist()):
            out[i].energy = e
    return out


_energy = energy      # the function, where a parameter of that name hides it


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
    scores -- the decoder's scores; chars -- characters filled in (for ``per-char``)."""
    if kind not in LENGTH_SCORES:
        raise ConfigError(f"unknown length score {kind!r}; choose from {', '.join(LENGTH_SCORES)}")
    if kind == "per-char":
        return [float(s) / max(1, c) for s, c in zip(scores, chars)]
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
