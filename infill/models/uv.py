"""A Latin text that writes one letter for u and v, read as the model's editions spell it.

The stone has one letter, V. builtin:latin's training editions write ``v`` for the consonant and
``u`` for the vowel (``vixit``, ``Iulius``), but a text typed from the stone in capitals writes V
for both (``D M C IVLIVS``), and some editions write ``u`` for both (``uixit``). Read letter for
letter, ``ivlivs`` is a word the model never saw: ``D M C IVLIVS F???? VIXIT`` gave ``FILUI``.

**Which letter.** At each u or v of a word (a run of letters, characters to restore and missing
characters, as the lexicon reads words: :mod:`infill.models.lexicon`), the lexicon's words of
the word's length that agree with its other visible letters (u and v alike; a character to
restore or a missing one agrees with any letter) vote with their weights for ``u`` or ``v`` at
that place: ``ivlivs`` -> ``iulius``, ``avg????`` -> ``aug????``, ``xxv`` stays ``xxv``. Where
no word agrees, the letters on either side vote: how often the lexicon's words have ``u`` or
``v`` between those two neighbours (a word's edge is a neighbour too).

**When.** Only where the text shows it writes one letter: it has V or v and no U or u, and either
it is in capitals (V is the stone's letter: a transcription in capitals writes no U) or the lexicon
spells a whole word of it (no character lost in it) with ``u``, nine times in ten or more
(:data:`SURE`); or it has u and no lowercase v (capitals V, as such editions write them: ``Valeria
uixit ann XXV``), and a whole word the lexicon so spells with ``v`` (``uixit``). A text in the
editions' spelling is read as typed (``d m ????? felici vixit annis xxv``: every v stays v). The
restored letters are then written as the text writes them (``AVGVSTI``), and the input's notes say
so.
"""
from __future__ import annotations

import numpy as np

__all__ = ["SURE", "UVReading", "one_letter", "read_uv", "uv_note", "written_as"]

SURE = 0.9
"""The share of the agreeing words' weight a whole word's other spelling must have to show
that the text writes one letter for u and v (``uixit``: 0.999 say ``vixit``; ``du``: 0.665
say ``dv``, an abbreviation read either way, so no evidence)."""


class UVReading:
    """The u/v reading of one lexicon: ``spell(ids)`` spells each u and v as the lexicon does,
    ``respell(ids, ...)`` where the text shows it writes one letter for both."""

    def __init__(self, lexicon, alphabet):
        self.lexicon = lexicon
        self.u, self.v = alphabet.index["u"], alphabet.index["v"]
        self.letters = np.zeros(len(alphabet) + 1, dtype=bool)
        self.letters[alphabet.letter_ids] = True
        self.wild = np.zeros(len(alphabet) + 1, dtype=bool)
        self.wild[[alphabet.mask_id, alphabet.missing_id]] = True
        self.edge = len(alphabet)                      # a word's edge, as a neighbour
        self.context = self._context(len(alphabet) + 1)

    def _fold(self, ids: np.ndarray) -> np.ndarray:
        return np.where(ids == self.v, self.u, ids)

    def _context(self, size: int) -> np.ndarray:
        """[size, size, 2] the lexicon's weight of u (0) and v (1) between each two neighbours
        (u and v folded as neighbours; ``edge`` at a word's ends)."""
        table = np.zeros((size, size, 2))
        for n, words in self.lexicon.words.items():
            w = self.lexicon.weights[n]
            padded = np.pad(self._fold(words.astype(np.int64)), ((0, 0), (1, 1)),
                            constant_values=self.edge)
            rows, cols = np.nonzero((words == self.u) | (words == self.v))
            np.add.at(table, (padded[rows, cols], padded[rows, cols + 2],
                              (words[rows, cols] == self.v).astype(np.int64)), w[rows])
        return table

    def _by_words(self, word: np.ndarray, at: np.ndarray) -> np.ndarray | None:
        """[len(at), 2] the weight of the lexicon's words agreeing with ``word`` that have u
        or v at each of ``at``; None where none agrees."""
        table = self.lexicon.words.get(len(word))
        if table is None:
            return None
        known = self.letters[word] & (word != self.u) & (word != self.v)
        ok = np.all(table[:, known] == word[known], axis=1)
        ok &= np.all((table[:, at] == self.u) | (table[:, at] == self.v), axis=1)
        if not ok.any():
            return None
        w, rows = self.lexicon.weights[len(word)][ok], table[ok][:, at]
        return np.stack([(w[:, None] * (rows == self.u)).sum(0),
                         (w[:, None] * (rows == self.v)).sum(0)], axis=1)

    def _by_neighbours(self, word: np.ndarray, at: np.ndarray) -> np.ndarray:
        padded = np.pad(self._fold(word), 1, constant_values=self.edge)
        left, right = padded[at], padded[at + 2]
        out = np.zeros((len(at), 2))
        for k, (a, b) in enumerate(zip(left, right)):
            rows = self.context[a] if not self.wild[a] else self.context.sum(0)
            out[k] = rows[b] if not self.wild[b] else rows.sum(0)
        return out

    def _words(self, ids: np.ndarray) -> list[tuple[int, int]]:
        """[start, end) of each word of ``ids``: runs of letters and wildcards."""
        inside = np.concatenate([[False], self.letters[ids] | self.wild[ids], [False]])
        edges = np.flatnonzero(inside[1:] != inside[:-1])
        return list(zip(edges[0::2].tolist(), edges[1::2].tolist()))

    def _spelled(self, ids: list[int]) -> tuple[np.ndarray, bool]:
        """``ids`` with each u or v as the lexicon spells its word, and whether a whole word
        (no character to restore or missing) came out spelled otherwise where the lexicon's
        agreeing words are :data:`SURE` of it -- the evidence that the text writes one letter
        for both."""
        arr = np.asarray(ids, dtype=np.int64)
        out, evidence = arr.copy(), False
        for a, b in self._words(arr):
            word = arr[a:b]
            at = np.flatnonzero((word == self.u) | (word == self.v))
            if not len(at):
                continue
            votes = self._by_words(word, at)
            known = votes is not None
            if not known:
                votes = self._by_neighbours(word, at)
            out[a + at] = np.where(votes[:, 1] > votes[:, 0], self.v, self.u)
            if known and not self.wild[word].any():
                changed = out[a + at] != word[at]
                sure = votes.max(1) >= SURE * votes.sum(1)
                evidence |= bool((changed & sure).any())
        return out, evidence

    def spell(self, ids: list[int]) -> list[int]:
        """``ids`` with each u or v as the lexicon spells its word."""
        return self._spelled(ids)[0].tolist()

    def respell(self, ids: list[int], written: str | None, capitals: bool = False
                ) -> tuple[list[int], str | None]:
        """``ids`` spelled as the lexicon spells them, and ``written`` (the letter the typed
        text may write for both: :func:`one_letter`) where the text shows it writes one letter:
        a whole word the lexicon spells otherwise (``ivlivs``, ``uixit``), or V for both in a
        text in ``capitals`` (as the stone is read); else ``ids`` unchanged and None."""
        if written is None:
            return list(ids), None
        spelled, evidence = self._spelled(ids)
        if not (evidence or capitals and written == "v"):
            return list(ids), None
        return spelled.tolist(), written


def read_uv(lexicon, alphabet) -> UVReading | None:
    """The u/v reading of a Latin model's lexicon; None for a model without a lexicon or whose
    alphabet is not Latin."""
    if lexicon is None or alphabet.name != "Latin":
        return None
    return UVReading(lexicon, alphabet)


def one_letter(text: str) -> str | None:
    """The letter a typed text may write for both u and v: ``"v"`` where it has no u at all
    (capitals ``IVLIVS``), ``"u"`` where it has no lowercase v (``uixit``, with V as such
    editions write a capital: ``Valeria uixit ann XXV``); None where it writes both, or
    neither."""
    has = {c for c in text if c in "uvUV"}
    if has and not has & {"u", "U"}:
        return "v"
    if "u" in has and "v" not in has:
        return "u"
    return None


def written_as(written: str | None) -> dict[str, str]:
    """A restored letter, in its case -> the letter the text writes for it: ``"v"`` (V for
    both) ``{"u": "v", "U": "V"}``; ``"u"`` (u for both, V a capital's letter)
    ``{"v": "u", "U": "V"}``."""
    if written is None:
        return {}
    return {"u": "v", "U": "V"} if written == "v" else {"v": "u", "U": "V"}


def uv_note(written: str | None) -> list[str]:
    """The input's note for a text that writes one letter for u and v."""
    if written is None:
        return []
    shown, example = ("V", "IVLIVS as Iulius") if written == "v" else ("u", "uixit as vixit")
    how = "V" if written == "v" else "u (V in capitals)"
    return [f"u and v written as one letter ({shown}): read as the lexicon spells each word "
            f"({example}), restored letters written {how}"]

