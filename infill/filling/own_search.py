"""Fills served by a model's own search: Aeneas's restoration search
(:mod:`infill.decoding.aeneas`), which also restores lacunae of unknown length (``#``).

It runs when the model has one (an Aeneas checkpoint) and the options ask for it: order
``any-order`` with the ``standard`` scorer, beam search (no sampling baseline). Its options are
the fill's: ``beam_size`` (beam width), ``temperature``, ``unknown_max_length``,
``length_penalty`` and ``dedup_keep`` (``lower`` is Aeneas's own rule). Its completions are
ranked as Aeneas ranks them, by log-prob / (1 + decisions) ** ``length_penalty``, which each
carries as ``rank_score``; ``score`` is the summed log-probability (characters and lengths).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from infill.errors import ConfigError, InfillError
from infill.filling.results import Completion, FillResult, Position
from infill.lazy import LazyModule

aeneas_search = LazyModule("infill.decoding.aeneas")     # the model's own search, on first use

__all__ = ["applies", "fill_own"]

NOTE = "restored by Aeneas's own search (its text preparation: lower case, no accents)"


def applies(model, config) -> bool:
    """Whether a fill with ``config`` runs the model's own search."""
    return (hasattr(model, "restore_input") and config.decoder == "beam"
            and config.sampling is None and config.order_name == "any-order"
            and config.scorer_name == "standard")


def _check(request) -> None:
    """ConfigError for a fill option Aeneas's search does not take."""
    if getattr(request, "unknown_lengths", None) is not None:
        raise ConfigError("Aeneas's own search sizes a lacuna of unknown length with its own "
                          "length head: type it as '#' (at most 'unknown_max_length' characters "
                          "in all); unknown_lengths decodes each length of LO-HI with infill's "
                          "decoders (another order or scorer)", field="unknown_lengths")
    if not isinstance(request.gap, int) or isinstance(request.gap, bool):
        raise ConfigError("Aeneas's own search restores '?' (a character each), a marker of N "
                          "characters and '#' (a lacuna of unknown length); type '#' instead of "
                          "a range of lengths", field="gap")
    if getattr(request, "letters", None):
        raise ConfigError("Aeneas's own search takes no letter sets", field="letters")
    if (getattr(request, "rerank", None) or "off") != "off":
        raise ConfigError("Aeneas's own search ranks its restorations itself; rerank must be "
                          "off", field="rerank")


def fill_own(model, texts: Sequence[str], request, results: list[FillResult],
             _raise: bool = False) -> list[FillResult]:
    """``results`` (one per text) filled by the model's own search; an input that cannot be
    restored gets its error (``_raise``: the first raises)."""
    _check(request)
    config = request.config
    tempered = {} if config.temperature is None else {"temperature": config.temperature}
    options = aeneas_search.RestoreOptions(
        beam_width=config.beam_size, unknown_max=config.unknown_max_length,
        length_penalty=config.length_penalty, keep=config.dedup_keep, **tempered)
    for result, text in zip(results, texts):
        try:
            ids, positions, gaps = model.restore_input(text, request.gap, request.marker)
        except InfillError as e:
            if _raise:
                raise
            result.error, result.error_field = e.message(), e.field
            continue
        found, _ = aeneas_search.restore(model, ids, positions, gaps, options)
        result.notes = [NOTE]
        result.completions = [_completion(model, r) for r in found[:request.top_k]]
    return results


def _completion(model, r) -> Completion:
    """A restoration as a completion: its text (without the start symbol), each gap's fill and
    span, each restored character with its log q and step."""
    text = model.detokenize(r.ids)
    n_gaps = max(r.gap) + 1
    fills, spans = [""] * n_gaps, [None] * n_gaps
    positions = []
    for p, g, lq, step in zip(r.open, r.gap, r.logq, r.step):
        token = model.id_to_token(r.ids[p])
        fills[g] += token
        start, end = spans[g] or (p - 1, p - 1)
        spans[g] = (min(start, p - 1), max(end, p))
        positions.append(Position(gap_index=g, index=p - 1, token=token, token_id=r.ids[p],
                                  logq=lq, prob=math.exp(lq), step=step))
    return Completion(text=text, fills=tuple(fills), tokens=tuple(r.ids[p] for p in r.open),
                      score=r.log_prob, positions=tuple(positions), spans=tuple(spans),
                      rank_score=r.rank_key)

