"""Energies a masked LM defines (METHODS §3), for sequences and for ranking completions.

- ``E_raw(x)   = -sum_t f_t(x_t; x with t masked)``, f the unnormalized logit;
- ``E_local(x) = -sum_t log q_t(x_t | x with t masked)`` (the pseudo-log-likelihood).

The sum runs over every scored position t of the sequence (:func:`scored_positions`). Each costs
T forward rows (the T one-position-masked copies), batched into as few calls as ``max_rows``
allows. For infilling the context is fixed but its terms still depend on the gap tokens, so E
sums over *all* scored positions, context included, as METHODS §3 says.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from infill.decoding.pll import (PLL_REACH, _body, energy_terms, length_scores, near_gaps,
                                 score_function, scored_positions, word_rests)
from infill.errors import ConfigError, InfillError, InputError, LongInputWarning
from infill.models.base import MaskedLM, pad_batch
from infill.requests import ENERGIES, RescoreRequest

__all__ = ["ENERGIES", "PLL_REACH", "Scored", "energy", "energy_terms", "length_scores",
           "near_gaps", "rescore", "rescore_each", "score_function", "scored_positions",
           "sliding_window", "word_rests"]
# the PLL terms (energy_terms, scored_positions, ...) live below this module and the fill's
# rankings, in infill.decoding.pll; they are re-exported here, where the energies use them


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


def energy(model: MaskedLM, input_ids, kind: str = "local",
           positions: Sequence[int] | None = None, max_rows: int = 256) -> torch.Tensor:
    """E_local or E_raw of one or several sequences (METHODS §3) -> float64 tensor [N].

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


