"""The input's own words as a lexicon: a damaged word restored from where the same text keeps it
whole.

A treaty names its two cities again and again, a decree its honorand, an epitaph the father's
name beside the son's: "Λυ?????? ... τοῖς τε Λυττίοις" is Λυττίοις to any reader of the stone.
The lexicon (:mod:`infill.models.lexicon`) knows the words of the training corpora, where a
Cretan city's name is rare or absent; the memory of the input's own text
(:mod:`infill.models.own_text`) meets a repeated word only where its neighbours repeat too,
which a fragment's broken lines seldom keep. This part is the lexicon of one text: the *whole
words* of each row -- runs of letters bounded on both sides by a space, a punctuation mark, a
numeral or the text's ends (never by a ``?``, ``-`` or ``^``: a word the stone breaks is not
whole) -- each occurrence weighing 1.

At a position t whose word (the lexicon's: letters, ``?`` and ``-`` between bounds) has a known
letter and at least ``shortest`` characters, with n the number of the row's whole words of its
length that agree with every known letter, u the number of distinct ones among them, and m(w)
the share of them with w at t,

    q'(w) = S · λ m(w) + (1 − λ) q(w),   λ = n / (n + β u),   q'(s) = q(s) for ``^`` and ``-``

-- the lexicon's mixture (S = Σ_{w not special} q(w)) at a Witten–Bell weight, as the phrase
memory's: a word the text repeats is trusted more, a pattern many of its words fit less. So q'
sums to 1, and where no whole word of the row agrees, q' = q. A word with no letter left (a
lost word, ``?????``) is mixed only where ``bare`` is given, at λ = n / (n + β₀ u) with β₀ =
``bare``: every whole word of its length agrees with it, so it is weighed far less than a
word whose letters chose its partners. Shorter words are left alone: an
article or a particle agrees with too many of a text's words to say anything (on the IOSPE
validation split, mixing them too lost 1.1 points at rank 1). The letters a row already has
restored count as the stone's (the word holding t is never whole while t is hidden). A model
mixes it where its ``"mixtures"`` name ``own_words``, when its ``charmodel.json`` holds
``"own_words": {"beta": β, "shortest": k, "bare": β₀}`` (:func:`own_words_from`).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import torch

from infill.errors import ModelLoadError
from infill.models.lexicon import build_lexicon
from infill.models.memory import mix_rows

__all__ = ["OwnWords", "OWN_WORDS_BARE", "OWN_WORDS_BETA", "own_words_from"]

OWN_WORDS_BETA = 1.0
OWN_WORDS_SHORTEST = 4
OWN_WORDS_BARE = 10.0
"""builtin:greek's β₀ (``infill train greek`` writes it); a file without ``"bare"`` mixes no lost
word."""
MAX_BETA = 1000.0
_CACHE = 1 << 10


@dataclass
class OwnWords:
    """The lexicon of each row's own whole words of ``shortest`` letters or more, mixed with
    weight λ = n / (n + ``beta`` u); at a word with no known letter with ``bare`` for β, or
    not at all (None)."""

    alphabet: object
    beta: float = OWN_WORDS_BETA
    shortest: int = OWN_WORDS_SHORTEST
    bare: float | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self._shape = build_lexicon({}, self.alphabet, self.beta)   # words around, specials

    def mix(self, logq: torch.Tensor, input_ids: torch.Tensor, positions: torch.Tensor
            ) -> torch.Tensor:
        """log q' (the module doc) from log q [R, P, V] at ``positions`` [R, P] of
        ``input_ids`` [R, T]."""
        ids = input_ids.detach().cpu().numpy().astype(np.int64)
        pos = positions.detach().cpu().numpy().astype(np.int64)
        start, end = self._shape._words_at(ids, pos)
        rows, cols = np.nonzero(end - start >= self.shortest)
        size = (end - start)[rows, cols]
        seen, mixture, keep = [], [], []
        for n_letters in np.unique(size):       # one pass per word length, every row at once
            at = size == n_letters
            r, j = rows[at], cols[at]
            m, n, lam = self._agreeing(ids, r, start[r, j], pos[r, j] - start[r, j],
                                       int(n_letters))
            mixed = n > 0
            seen.append((r * pos.shape[1] + j)[mixed])
            mixture.append(lam[mixed, None] * m[mixed])
            keep.append(1 - lam[mixed])
        if not seen or not sum(map(len, seen)):
            return logq
        return mix_rows(logq, np.concatenate(seen), np.concatenate(mixture),
                        np.concatenate(keep), self._shape._special)

    def _agreeing(self, ids: np.ndarray, rows: np.ndarray, starts: np.ndarray,
                  offsets: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For Q words of ``size`` characters (at ``starts`` of ``rows``): m [Q, V], the share
        of their row's agreeing whole words with each letter at ``offsets``; n [Q], how many
        agree; λ [Q] (0 where a lost word is not mixed)."""
        letters, V = self._shape.letter_ids, self._shape.vocab_size
        words = ids[rows[:, None], starts[:, None] + np.arange(size)]           # [Q, L]
        known = np.isin(words, letters)
        unique, slot = np.unique(rows, return_inverse=True)
        table, counts = self._padded([self.words_of(ids[u]).get(size) for u in unique], size)
        block, weight = table[slot], counts[slot]                               # [Q, M, L], [Q, M]
        agree = np.all((block == words[:, None]) | ~known[:, None], axis=2) & (weight > 0)
        weight = np.where(agree, weight, 0.0)
        n = weight.sum(1)
        letter = np.take_along_axis(block, offsets[:, None, None], axis=2)[..., 0]   # [Q, M]
        flat = np.arange(len(rows))[:, None] * V + np.maximum(letter, 0)
        m = np.bincount(flat.ravel(), weight.ravel(), len(rows) * V).reshape(len(rows), V)
        m = m / np.maximum(n, 1e-300)[:, None]
        lost = ~known.any(1)
        if self.bare is None:               # a lost word is not mixed
            n = np.where(lost, 0.0, n)
        beta = np.where(lost, self.bare or 1.0, self.beta)
        lam = n / np.maximum(n + beta * agree.sum(1), 1e-300)
        return m, n, lam

    @staticmethod
    def _padded(tables: list, size: int) -> tuple[np.ndarray, np.ndarray]:
        """The rows' tables of whole words of one size as [U, M, size] letter ids (-1 beyond a
        row's words) and [U, M] counts (0 there)."""
        most = max([0] + [len(t[1]) for t in tables if t is not None])
        words = np.full((len(tables), most, size), -1, dtype=np.int64)
        counts = np.zeros((len(tables), most))
        for k, t in enumerate(tables):
            if t is not None:
                words[k, :len(t[1])], counts[k, :len(t[1])] = t
        return words, counts

    def words_of(self, row: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """{length: ([N, length] letter ids, [N] counts)} of a row's whole words."""
        key = row.tobytes()
        if key not in self._cache:
            if len(self._cache) >= _CACHE:
                self._cache.clear()
            counts = Counter(tuple(w) for w in whole_words(row, self._shape))
            table: dict[int, tuple[list, list]] = {}
            for w, c in counts.items():
                table.setdefault(len(w), ([], []))
                table[len(w)][0].append(w)
                table[len(w)][1].append(float(c))
            self._cache[key] = {n: (np.array(ws, dtype=np.int64), np.array(cs))
                                for n, (ws, cs) in table.items()}
        return self._cache[key]

    def settings(self) -> dict:
        """What ``charmodel.json`` holds under ``"own_words"``."""
        bare = {} if self.bare is None else {"bare": self.bare}
        return {"beta": self.beta, "shortest": self.shortest, **bare}


def whole_words(row: np.ndarray, shape) -> list[np.ndarray]:
    """The runs of letters of ``row`` bounded by neither a letter nor a ``?``, ``-`` or ``^``."""
    letter = np.isin(row, shape.letter_ids)
    broken = np.isin(row, shape.wild_ids) | np.isin(row, shape.stop_ids)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], letter.astype(np.int8), [0]])))
    out = []
    for a, b in zip(edges[0::2], edges[1::2]):
        if (a > 0 and broken[a - 1]) or (b < len(row) and broken[b]):
            continue
        out.append(row[a:b])
    return out


def own_words_from(raw, alphabet, where) -> OwnWords:
    """The :class:`OwnWords` a ``charmodel.json``'s ``"own_words"`` describes (``{"beta": β,
    "shortest": k, "bare": β₀}``, 0 < β, β₀ ≤ 1000, k ≥ 1 an integer, β₀ optional); else
    ModelLoadError naming ``where``."""
    if not isinstance(raw, dict) or set(raw) - {"beta", "shortest", "bare"}:
        raise ModelLoadError(f"{where}: \"own_words\" must be an object with \"beta\", "
                             f"\"shortest\" and, optionally, \"bare\"")
    beta = _weight(raw.get("beta", OWN_WORDS_BETA), "beta", where)
    bare = None if raw.get("bare") is None else _weight(raw["bare"], "bare", where)
    shortest = raw.get("shortest", OWN_WORDS_SHORTEST)
    if isinstance(shortest, bool) or not isinstance(shortest, int) or shortest < 1:
        raise ModelLoadError(f"{where}: \"own_words\" shortest must be a whole number of "
                             f"letters, 1 or more")
    return OwnWords(alphabet, beta, shortest, bare)


def _weight(value, name: str, where) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not (math.isfinite(value) and 0 < value <= MAX_BETA):
        raise ModelLoadError(f"{where}: \"own_words\" {name} must be a number in "
                             f"(0, {MAX_BETA:g}]")
    return float(value)
