"""The input's own text as a memory: a lost stretch restored from the same inscription's parallels.

An editor restores a name or a formula from where the same inscription keeps it: the father's
name given twice, a clause repeated for each party, "ἐκ τῶν ἰδίων ἀνέθηκε" read in one line and
restored in the next. A memory of the training corpora (:mod:`infill.models.phrases`) cannot
know an inscription it never saw, and a small network reads its context but seldom copies from
it. This memory is a phrase memory counted, at every call, from each row's own text (the window
the network reads, the letters already restored included): the phrase memory's keys, levels
(:attr:`OwnText.sides`), hidden rest and Witten–Bell chain, each row's keys salted by its row so
that a row meets only its own text; every occurrence counts once.

A position being restored is a ``?``, and a context or character holding a ``?``, ``-`` or ``^``
is never stored: a row's memory holds its surviving text and restored letters, never the
lacuna's hidden rest, and where no level saw a position's context q' = q. The mixture is the
phrase memory's (:func:`infill.models.memory.mix_rows`), so q' sums to 1. A model mixes it where
its ``"mixtures"`` name ``own_text`` (last by default), when its ``charmodel.json`` holds
``"own_text": {"sides": "l:r,...", "beta": β}`` (:func:`own_text_from`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from infill.errors import ModelLoadError
from infill.models.memory import _splitmix, mix_rows
from infill.models.phrases import (BITS, PHRASE_BETA, PHRASE_REST, PHRASE_SIDES, PhraseMemory,
                                   _counted, _full_keys, _good, _levels, _query_keys, _sides,
                                   phrase_classes)

__all__ = ["OwnText", "OWN_TEXT_SIDES", "own_text_from"]

OWN_TEXT_SIDES = PHRASE_SIDES
"""The phrase memory's levels."""
MAX_BETA = 1000.0


def _salted(keys: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Each key made its row's own (``BITS`` wide, as the keys are)."""
    salt = _splitmix(rows.astype(np.uint64) + np.uint64(1))
    return _splitmix(keys ^ salt) >> np.uint64(64 - BITS)


@dataclass
class OwnText:
    """The memory of each row's own text at the levels ``sides``, Witten–Bell ``beta`` (by
    default the phrase memory's: it is a phrase memory of one text)."""

    alphabet: object
    sides: tuple[tuple[int, int], ...] = OWN_TEXT_SIDES
    beta: float = PHRASE_BETA
    rest: int = PHRASE_REST

    def memory(self, ids: np.ndarray) -> PhraseMemory:
        """The phrase memory of the rows ``ids`` [R, T] together, each row's keys salted."""
        a = self.alphabet
        classes, n = phrase_classes(a), len(a)
        text = (classes[ids] != n) & (ids != a.pad_id) & (ids != a.start_id)
        lengths = text.sum(1)
        rows = np.repeat(np.arange(len(ids)), lengths)
        seq = ids[text]
        start = np.repeat(np.cumsum(lengths) - lengths, lengths)
        end = start + np.repeat(lengths, lengths)
        good = _good(a)
        t = np.nonzero(good[seq])[0]
        view = (classes[seq], np.isin(classes[seq], classes[good[:n]]))
        keys, chars = [np.zeros(0, np.uint64)], [np.zeros(0, np.int64)]
        for left, right in self.sides:
            for h in range(self.rest + 1) if right else [0]:
                k, ok = _full_keys(view, start, end, t, (left, right, h), n)
                keys.append(_salted(k[ok], rows[t[ok]]))
                chars.append(seq[t[ok]])
        empty = PhraseMemory(np.zeros(0, np.uint64), np.zeros(0, np.uint8),
                             np.zeros(0, np.uint32), classes, tuple(self.sides), self.rest,
                             float(self.beta), a.n_outputs, a.mask_id, (a.unk_id, a.missing_id))
        keys = np.concatenate(keys)
        return _counted(empty, keys, np.concatenate(chars), np.ones(len(keys), np.int64))

    def mix(self, logq: torch.Tensor, input_ids: torch.Tensor, positions: torch.Tensor
            ) -> torch.Tensor:
        """log q' from log q [R, P, V] at ``positions`` [R, P] of ``input_ids`` [R, T], each
        row mixed with its own text's memory."""
        ids = input_ids.detach().cpu().numpy().astype(np.int64)
        pos = positions.detach().cpu().numpy().astype(np.int64)
        memory = self.memory(ids)
        if not len(memory.keys):
            return logq
        keys, _ = _query_keys(memory.classes, ids, pos, memory.sides, memory.rest, memory.mask_id)
        rows = np.repeat(np.arange(len(ids)), pos.shape[1])
        seen, mixture, keep = memory.chain([memory.lookup(_salted(k, rows)) for k in keys])
        if not len(seen):
            return logq
        special = np.zeros(logq.shape[-1], dtype=bool)
        special[[i for i in memory.special if i < logq.shape[-1]]] = True
        return mix_rows(logq, seen, mixture, keep, special)

    def settings(self) -> dict:
        """What ``charmodel.json`` holds under ``"own_text"`` (:func:`own_text_from` reads it)."""
        return {"sides": _levels(self.sides), "beta": self.beta}


def own_text_from(raw, alphabet, where: str) -> OwnText:
    """The :class:`OwnText` a ``charmodel.json``'s ``"own_text"`` describes: ``sides``
    (``l:r,...``, as a phrase memory's header) and ``beta`` (> 0); else ModelLoadError."""
    if not isinstance(raw, dict) or set(raw) - {"sides", "beta"}:
        raise ModelLoadError(f"{where}: \"own_text\" must be an object with \"sides\" and "
                             f"\"beta\"")
    beta = raw.get("beta", PHRASE_BETA)
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or \
            not (math.isfinite(beta) and 0 < beta <= MAX_BETA):
        raise ModelLoadError(f"{where}: \"own_text\" beta must be a number in (0, {MAX_BETA:g}]")
    sides = raw.get("sides", _levels(OWN_TEXT_SIDES))
    try:
        if not isinstance(sides, str):
            raise ValueError("not a string 'left:right,...'")
        sides = _sides(sides)
    except ValueError as e:
        raise ModelLoadError(f"{where}: \"own_text\" sides: {e}") from None
    return OwnText(alphabet, sides, float(beta))
