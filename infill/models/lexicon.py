"""A lexicon: the words of a character model's training text, and what they say about a letter of
a word being restored.

Epigraphers restore a damaged word from the words they know: "τεβ????" between spaces is a
7-letter word beginning τεβ (Τεβέριος). A small character network trained on a small epigraphic
corpus knows far fewer words than its training text holds; the lexicon gives it all of them.

**The word around a position.** At a position t of the input, the *word* is the longest stretch
around t of letters, characters to restore (``?``, or a pivot) and missing characters (``-``), and
it must be bounded on both sides by a space, a punctuation mark, a numeral, or the start or end
of the text (an unknown symbol ``^`` next to it: no word). Its *pattern* fixes the known letters;
every other character is a wildcard.

**What the lexicon says.** With word weights c(v) (how often the training text has v), among
the lexicon's words of the pattern's length that agree with every known letter,

    m(w)  = Σ_{v matches, v_t = w} c(v) / n,     n = Σ_{v matches} c(v)

is the marginal at t of a word drawn by weight -- the same for every decoding order, since the
other wildcards are summed over. No match (or a pattern without a known letter): n = 0.

**The mixture** (the corpus memory's, :mod:`infill.models.memory`, with λ = n / (n + β)):

    q'(w) = S · λ m(w) + (1 − λ) q(w)     for every output w but the unknown symbol and ``-``,
    q'(s) = q(s)                          for those two,     S = Σ_{w not special} q(w)

so q' sums to 1, the HCB correction with the default pivot ``-`` is the network's own, and where
the lexicon is silent q' = q. m puts no mass on a space or a punctuation mark: the lexicon's
weight λ goes to "t is a letter of one word of the lexicon", and the network keeps the rest (a
gap of two words, a word the lexicon lacks). On the IOSPE validation split this domain restored
better than mixing over the letters alone (data/README.md).

On disk: ``lexicon.tsv`` beside the model, a header line ``#infill-lexicon {json}`` (β, the
letters) and one ``word<TAB>weight`` line per word, in the model's normalized alphabet. A user may
add words (a list of personal names, say) with a text editor.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from infill.data.files import input_limit, parse_json, read_bytes
from infill.data.greek import word_weights
from infill.errors import InputError, ModelLoadError
from infill.models.memory import mix_rows

__all__ = ["WordLexicon", "LEXICON_BETA", "LEXICON_FILE", "build_lexicon", "load_lexicon",
           "word_weights"]

LEXICON_FILE = "lexicon.tsv"
LEXICON_BETA = 1.0          # chosen on the IOSPE validation split (data/README.md)
HEADER = "#infill-lexicon"
_CACHE = 1 << 15


@dataclass
class WordLexicon:
    """Word weights by word length: ``words[n]`` [N_n, n] letter ids, ``weights[n]`` [N_n]."""

    words: dict[int, np.ndarray]
    weights: dict[int, np.ndarray]
    letter_ids: np.ndarray                 # output ids of the letters
    wild_ids: np.ndarray                   # input ids read as wildcards (to restore, missing)
    stop_ids: np.ndarray                   # input ids no word may touch (unknown symbol)
    vocab_size: int
    beta: float
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def _special(self) -> np.ndarray:
        """[V] the outputs that keep the network's probability: unknown and missing."""
        out = np.zeros(self.vocab_size, dtype=bool)
        for ids in (self.stop_ids, self.wild_ids):
            out[ids[ids < self.vocab_size]] = True
        return out

    def mix(self, logq: torch.Tensor, input_ids: torch.Tensor, positions: torch.Tensor
            ) -> torch.Tensor:
        """log q' (the module doc) from the network's log q [R, P, V] at ``positions`` [R, P]
        of ``input_ids`` [R, T]."""
        ids = input_ids.detach().cpu().numpy()
        pos = positions.detach().cpu().numpy()
        start, end = self._words_at(ids, pos)
        R, P = pos.shape
        found = [(r * P + j, self.marginal(tuple(ids[r, start[r, j]:end[r, j]]),
                                           pos[r, j] - start[r, j]))
                 for r in range(R) for j in range(P) if end[r, j] > start[r, j]]
        found = [(i, m, n) for i, (m, n) in found if n > 0]
        if not found:
            return logq
        seen = np.array([i for i, _, _ in found])
        n = np.array([n for _, _, n in found])
        lam = n / (n + self.beta)
        mixture = lam[:, None] * np.stack([m for _, m, _ in found])
        return mix_rows(logq, seen, mixture, 1 - lam, self._special)

    def _words_at(self, ids: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[R, P] start and end (exclusive) of the word around each position; start = end
        where there is none."""
        R, T = ids.shape
        inword = np.isin(ids, self.letter_ids) | np.isin(ids, self.wild_ids)
        at = np.arange(T)
        left = np.maximum.accumulate(np.where(inword, -1, at), axis=1)
        right = np.minimum.accumulate(np.where(inword, T, at)[:, ::-1], axis=1)[:, ::-1]
        rows = np.arange(R)[:, None]
        start, end = left[rows, pos] + 1, right[rows, pos]
        stop = np.isin(ids, self.stop_ids)
        touches = stop[rows, np.maximum(start - 1, 0)] & (start > 0) | \
            stop[rows, np.minimum(end, T - 1)] & (end < T)
        none = touches | ~inword[rows, pos]
        return np.where(none, 0, start), np.where(none, 0, end)

    def marginal(self, word: tuple[int, ...], offset: int) -> tuple[np.ndarray, float]:
        """(m [V], n) at ``offset`` of a word pattern (input ids; the module doc)."""
        key = (word, offset)
        if key not in self._cache:
            if len(self._cache) >= _CACHE:
                self._cache.clear()
            self._cache[key] = self._marginal(np.array(word), offset)
        return self._cache[key]

    def _marginal(self, word: np.ndarray, offset: int) -> tuple[np.ndarray, float]:
        if not np.isin(word, self.letter_ids).any() or len(word) not in self.words:
            return np.zeros(self.vocab_size), 0.0
        return matching(self.words[len(word)], self.weights[len(word)], word, offset,
                        self.letter_ids, self.vocab_size)

    def word_weights(self, alphabet) -> dict[str, float]:
        """{word: weight} of every word it holds (what :func:`build_lexicon` takes back)."""
        return {alphabet.decode(v): float(w) for n in self.words
                for v, w in zip(self.words[n], self.weights[n])}

    def save(self, path: Path, alphabet) -> None:
        """Write ``lexicon.tsv`` (heaviest words first)."""
        rows = sorted(((w, word) for word, w in self.word_weights(alphabet).items()),
                      key=lambda r: (-r[0], r[1]))
        head = json.dumps({"beta": self.beta, "letters": alphabet.letters}, ensure_ascii=False)
        lines = [f"{HEADER} {head}"] + [f"{word}\t{w:g}" for w, word in rows]
        Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def build_lexicon(weights: dict[str, float], alphabet, beta: float) -> WordLexicon:
    """The lexicon of ``weights`` (word -> weight, words over ``alphabet``'s letters)."""
    words = list(weights)
    values = np.fromiter(weights.values(), dtype=np.float64, count=len(words))
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    order = np.argsort(lengths, kind="stable")
    # one letter -> one byte (its id): every word of one length becomes an [N, n] array at once
    to_bytes = str.maketrans({c: chr(alphabet.index[c]) for c in alphabet.letters})
    flat = np.frombuffer("".join(words[i] for i in order).translate(to_bytes).encode("latin-1"),
                         dtype=np.uint8)
    sizes, counts = np.unique(lengths, return_counts=True)
    ends = np.cumsum(sizes * counts)
    firsts = np.cumsum(counts) - counts
    table = {int(n): flat[e - n * c:e].reshape(c, n) for n, c, e in zip(sizes, counts, ends)}
    weight = {int(n): values[order[f:f + c]] for n, c, f in zip(sizes, counts, firsts)}
    return WordLexicon(table, weight, np.array(alphabet.letter_ids),
                       np.array([alphabet.mask_id, alphabet.missing_id]),
                       np.array([alphabet.unk_id]), alphabet.n_outputs, float(beta))


def read_headed(path: Path, what: str, header: str, alphabet, kind: str = "",
                fields: str = "") -> tuple[dict, str]:
    """(header, body) of a file beside a character model whose first line is ``header {json}``
    and whose rest is rows (the lexicon, the word pairs, the names): read bounded and as UTF-8,
    the JSON's ``beta`` (a positive number) and ``letters`` (the model's) checked: one
    ModelLoadError naming the file and line when it is not such a file (``kind`` names it
    there, ``fields`` the header's further fields)."""
    try:                            # bounded as inputs are (64 MiB, INFILL_MAX_INPUT_BYTES)
        text = read_bytes(path, what, input_limit()).decode("utf-8")
    except InputError as e:
        raise ModelLoadError(f"{path}: cannot read the {what}: {e}") from None
    except UnicodeDecodeError as e:
        raise ModelLoadError(f"{path}: cannot read the {what}: not UTF-8 text (byte offset "
                             f"{e.start})") from None
    first, _, body = text.partition("\n")
    try:
        assert first.startswith(header + " ")
        head = parse_json(first[len(header) + 1:], f"{path}:1")    # bounded: no RecursionError
        head["beta"] = float(head["beta"])
        assert 0 < head["beta"] < float("inf") and head["letters"] == alphabet.letters
    except (AssertionError, InputError, ValueError, KeyError, TypeError, OverflowError,
            AttributeError):
        raise header_error(path, kind or what, header, fields) from None
    return head, body


def header_error(path: Path, kind: str, header: str, fields: str = "") -> ModelLoadError:
    """The one line for a file beside a model whose header is not one for this model."""
    return ModelLoadError(f"{path}:1: not an infill {kind} for this model's alphabet (a header "
                          f"'{header} {{\"beta\": ..., \"letters\": ...{fields}}}')")


def matching(table: np.ndarray, weights: np.ndarray, word: np.ndarray, offset: int,
             letters: np.ndarray, vocab_size: int) -> tuple[np.ndarray, float]:
    """(m [V], n) of the words ``table`` [N, len(word)] weighing ``weights`` [N] that agree
    with every letter of ``word`` (input ids; any other id a wildcard): n their total weight,
    m(x) the weight of those with x at ``offset`` over n (zero when n = 0)."""
    m = np.zeros(vocab_size)
    known = np.nonzero(np.isin(word, letters))[0]
    match = np.all(table[:, known] == word[known], axis=1)
    total = float(weights[match].sum())
    if total > 0:
        np.add.at(m, table[match, offset], weights[match])
        m /= total
    return m, total


def load_lexicon(path: Path, alphabet) -> WordLexicon:
    """Read and check ``lexicon.tsv``: one line naming the file and line when it is wrong."""
    head, body = read_headed(path, "lexicon", HEADER, alphabet)
    beta = head["beta"]
    rows = body.splitlines()
    line = f"[{re.escape(alphabet.letters)}]+\t[0-9.eE+-]+"
    if not re.fullmatch(f"(?:{line}\n)*(?:{line})?", "\n".join(rows)):
        k, row = next((k, r) for k, r in enumerate(rows, 2) if not re.fullmatch(line, r))
        _bad_line(path, k, row)
    fields = "\t".join(rows).split("\t") if rows else []
    words, numbers = fields[0::2], fields[1::2]
    try:
        values = np.array(numbers, dtype=np.float64)
    except ValueError:
        values = np.full(len(rows), np.nan)
    bad = np.nonzero(~((values > 0) & (values < np.inf)))[0]
    if len(bad):
        _bad_line(path, int(bad[0]) + 2, rows[bad[0]])
    weights: dict[str, float] = {}
    for w, v in zip(words, values.tolist()):
        weights[w] = weights.get(w, 0.0) + v
    return build_lexicon(weights, alphabet, beta)


def _bad_line(path: Path, k: int, row: str) -> None:
    raise ModelLoadError(f"{path}:{k}: expected 'word<TAB>weight' with a word of the model's "
                         f"letters and a positive weight, got {row[:40]!r}")
