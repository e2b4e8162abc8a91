"""A text typed without word division (scriptio continua), read with its words divided.

The stone divides no words, and a diplomatic transcript keeps it so: ``ΗΒΟΥΛΗΚΑΙΟΔΗΜ??ΕΤΙΜΗϹΕΝ``.
A character model learned from editions, whose editors divided the words; given one long run of
letters it reads a word it never saw, and its lexicon and memories, keyed by words and their
neighbours, are silent. Such a text is read with its words divided where the lexicon's words
are likeliest, and what is restored is written back as the text is typed, undivided.

**When.** A text divides no words when its letters (``?`` counted, not ``-``) run, on average,
:data:`UNDIVIDED` or more to a stretch between its spaces (Greek words average about six
letters; a transcript typed line by line has its lines for stretches), and it has :data:`LEAST`
such letters or more; a shorter text of one stretch, where its division (below) falls between
two visible letters (:data:`SHORTEST`).

**Where the words are** (a unigram segmentation; the best division by dynamic programming). A
word is a stretch of letters, ``?`` and ``-`` (the last two stand for any letter). With the
lexicon's weights c(v) (N their sum) and K letters in the alphabet, a word w of n letters, k of
them visible, has

    P(w) = (1 − α) Σ_{v of n letters agreeing with w's visible letters} c(v) / N
           + α · (1 − ρ) ρ^(n−1) · K^(−k)

(the lexicon's words, or a word it lacks: a geometric length, uniform letters). The division
maximizes Σ log P(w) over the words; any other character (a numeral, a punctuation mark, the
unknown symbol) ends a word and keeps its place; a Greek word written with the iota beside its
vowel (``γλυκυτατηι``, as the stone writes it, every letter visible) counts as the lexicon's
word without it (its editions print the iota below, which the model's letters drop); and where
text lost for good (``-``) meets a lacuna (``?``) a word begins (an editor's supplements are
words: on the IOSPE and IAph validation texts typed undivided, the lacuna edges beside lost text
were divided as the editors divide them 41–46% and 33–35% of the time without this rule, 84–89%
and 95% with it; ``benchmarks/word_division.py``).

A ``?`` is a letter of the stone, so no word space is restored at it
(:func:`infill.decoding.letters.apply_undivided`); a lacuna holding two words is restored as
one run of letters, which the division around it cannot split (dividing it as the lexicon
would, and decoding those divisions beside it, restored no more on EDH validation).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["UNDIVIDED", "Divider", "divided_note", "undivided"]

UNDIVIDED = 12
"""Mean letters per stretch between spaces at which a text is read as divided into no words."""
LEAST = 16
"""The fewest letters in which a text is seen to divide no words (``Feli????????``, a fragment of
one word, divides its words as far as anyone can tell)."""
SHORTEST = 8
"""A shorter text of one stretch (``ΑΓΑΘΗΙΤΥ??Ι``) is read as undivided where its division cuts
it between two visible letters (``αγαθηι τυ??ι``), as one word otherwise (``Feli????????``)."""
OOV = 0.1
"""α: the weight of a word the lexicon lacks."""
RHO = 0.9
"""ρ: the geometric length of such a word (mean 1 / (1 − ρ) = 10 letters)."""
LONGEST = 24
"""The longest word the division considers."""
ADSCRIPT = 0.01
"""The weight of a Greek word's spelling with the iota beside its last vowel, as a share of the
word's (the lexicon holds its editions' spelling, iota below and dropped)."""


def undivided(text: str, alphabet) -> bool | None:
    """Whether ``text`` (normalized: as the model reads it) divides no words (the module doc):
    True, False, or None for a short text of one stretch, which its division decides
    (:meth:`Divider.splits`)."""
    body = set(alphabet.letters) | {alphabet.mask}
    runs = [sum(c in body for c in part) for part in text.split()]
    runs = [n for n in runs if n]
    if sum(runs) >= LEAST and sum(runs) / len(runs) >= UNDIVIDED:
        return True
    return None if len(runs) == 1 and runs[0] >= SHORTEST else False


def _adscripts(exact: dict[bytes, float], alphabet) -> dict[bytes, float]:
    """Greek words with the iota written beside the vowel (the stone's ``ΓΛΥΚΥΤΑΤΗΙ``) that
    the lexicon holds only as its editions print them, iota subscript dropped (``γλυκυτατη``):
    each lexicon word ending in α, η or ω, with ι after it, at :data:`ADSCRIPT` of that word's
    weight, where the lexicon lacks the spelling with ι."""
    ids = [alphabet.index.get(c) for c in "αηωι"]
    if None in ids:
        return {}
    *vowels, iota = ids
    return {w + bytes([iota]): ADSCRIPT * c for w, c in exact.items()
            if w and w[-1] in vowels and w + bytes([iota]) not in exact}


def _folds(alphabet) -> dict[int, int]:
    """Letters the division reads as one: Latin u and v (a text in capitals writes V for
    both, :mod:`infill.models.uv`)."""
    if alphabet.name == "Latin" and "u" in alphabet.letters and "v" in alphabet.letters:
        return {alphabet.char_to_id("u"): alphabet.char_to_id("v")}
    return {}


class Divider:
    """The division of a run of ids into words, by a :class:`~infill.models.lexicon.WordLexicon`
    (its ``words[n]`` [N_n, n] letter ids and ``weights[n]``); ``adscripts``: Greek words
    written with the iota beside the vowel count as the lexicon's without it."""

    def __init__(self, lexicon, alphabet, adscripts: bool = True):
        self.fold = _folds(alphabet)
        fold = np.arange(256, dtype=np.uint8)
        for a, b in self.fold.items():
            fold[a] = b
        self.words = {n: fold[t] for n, t in lexicon.words.items()}
        self.weights = lexicon.weights
        total = sum(float(w.sum()) for w in lexicon.weights.values())
        self.scale = (1 - OOV) / total
        self.exact: dict[bytes, float] = {}
        for n, table in self.words.items():
            for row, w in zip(table, lexicon.weights[n]):
                key = bytes(row)
                self.exact[key] = self.exact.get(key, 0.0) + float(w)
        if adscripts:                  # a visible word only: a lost letter is any letter
            self.exact.update(_adscripts(self.exact, alphabet))
        self.by_length = {n: float(w.sum()) for n, w in lexicon.weights.items()}
        self.log_k = math.log(len(alphabet.letters))
        self.letters = frozenset(alphabet.letter_ids)
        self.wild = frozenset((alphabet.mask_id, alphabet.missing_id))
        self.is_wild = np.zeros(256, dtype=bool)
        self.is_wild[sorted(self.wild)] = True
        self._cache: dict[bytes, float] = {}                 # wildcard words, by pattern

    def log_p(self, word: bytes) -> float:
        """log P(w) of one word (its ids as bytes: letters and wildcards)."""
        if word not in self._cache:
            self._cache[word] = self._log_p(np.frombuffer(word, dtype=np.uint8))
        return self._cache[word]

    def _unseen(self, n: int, known: int) -> float:
        return OOV * (1 - RHO) * RHO ** (n - 1) * math.exp(-self.log_k * known)

    def _log_p(self, word: np.ndarray) -> float:
        n = len(word)
        known = ~self.is_wild[word]
        if known.all():
            c = self.exact.get(word.tobytes(), 0.0)
        elif not known.any():
            c = self.by_length.get(n, 0.0)
        elif n in self.words:
            table = self.words[n]
            c = float(self.weights[n][np.all(table[:, known] == word[known], axis=1)].sum())
        else:
            c = 0.0
        return math.log(self.scale * c + self._unseen(n, int(known.sum())))

    def divide(self, run: list[int], closed: frozenset = frozenset(),
               forced: frozenset = frozenset()) -> list[int]:
        """The offsets in ``run`` (ids of letters and wildcards, no space) before which a word
        begins, the first excepted; none at an offset in ``closed``, one at each in
        ``forced``."""
        n, b = len(run), bytes(run)
        floor = [max([0] + [k for k in forced if k < j]) for j in range(n + 1)]
        wild = np.concatenate([[0], np.cumsum([t in self.wild for t in run])]).tolist()
        unseen = [0.0] + [math.log(self._unseen(k, k)) for k in range(1, LONGEST + 1)]
        best = [0.0] + [-math.inf] * n
        back = [0] * (n + 1)
        for j in range(1, n + 1):
            if j < n and j in closed:
                continue
            for i in range(max(floor[j], j - LONGEST), j):
                if best[i] == -math.inf:
                    continue
                key = b[i:j]
                if wild[j] == wild[i] and key not in self.exact:
                    s = best[i] + unseen[j - i]            # a word the lexicon lacks
                else:
                    s = best[i] + self.log_p(key)
                if s > best[j]:
                    best[j], back[j] = s, i
        if best[n] == -math.inf:                  # a lacuna longer than any word: undivided
            return []
        cuts, j = [], n
        while j > 0:
            j = back[j]
            if j:
                cuts.append(j)
        return cuts[::-1]

    def splits(self, ids: list[int], cuts) -> bool:
        """Whether the division ``cuts`` of ``ids`` falls between two visible letters."""
        return any(ids[k - 1] in self.letters and ids[k] in self.letters for k in cuts)

    def spaces(self, ids: list[int], closed: set[int] = frozenset(),
               forced: set[int] = frozenset()) -> list[int]:
        """The positions of ``ids`` (a text's ids without word spaces) before which a word space
        belongs: each maximal stretch of letters and wildcards divided (:meth:`divide`), never
        before a position in ``closed`` (within a lacuna), always before one in ``forced``."""
        out, start = [], None
        for p, t in enumerate(list(ids) + [-1]):
            inword = t in self.letters or t in self.wild
            if inword and start is None:
                start = p
            elif not inword and start is not None:
                shut = frozenset(k - start for k in closed if start < k < p)
                cut = frozenset(k - start for k in forced if start < k < p)
                out += [start + c for c in self.divide([self.fold.get(x, x) for x in ids[start:p]],
                                                       shut, cut)]
                start = None
        return out


def divided_note(read: list[int] | None, alphabet) -> list[str]:
    """The note of a text read with its words divided: how it was read (its first words)."""
    if read is None:
        return []
    shown = alphabet.decode(read[1:] if read[:1] == [alphabet.start_id] else read)
    shown = shown if len(shown) <= 60 else shown[:60].rsplit(" ", 1)[0] + " …"
    return [f"the text divides no words (scriptio continua): read with its words divided by the "
            f"lexicon, {shown!r}; restored letters are written undivided"]
