"""A phrase memory: what a character model's training inscriptions put in a lost stretch, found
from the letters that survive around it, mixed into the model's conditional.

Editors restore long supplements from parallels: "ἔδοξεν τῆι βουλῆι καὶ τῶι [.....]" is δήμωι
(δάμωι at Chersonesos) because the formula is everywhere. The network and the lexicon (:mod:`infill.models.lexicon`)
know words; the phrase memory knows the stretches of text around them. It is the corpus memory of
builtin:english (:mod:`infill.models.memory`: hashed contexts, Witten–Bell levels, the same
mixture) over characters, keyed so that a damaged formula still meets its parallels.

**What is stored.** For every character t of every training text (a letter, the space or the
numeral) and every level (l, r) of ``sides``: a 48-bit hash of the l characters left of t and of
the r characters right of t's *hidden rest* -- for h = 0..``rest``, the r characters that follow
t + h, with h in the key (a level with r = 0 has no rest) -- with the character at t and how often
that pair occurred. A level may carry a least rest m (``least``): it speaks only at positions
with at least m ``?`` right of them (the first letters of a long lacuna), so a level with a
right context does not store its keys with a shorter rest. Punctuation is no neighbour (a text
typed without the editors' commas meets its parallels), the start of a text is a neighbour of
its own, a right context never reaches
past a text's end (a text typed only up to its gap is not an inscription that ends there) unless
the memory is built with ``ends`` (its texts whole inscriptions, whose end is a neighbour of its
own too: ``v s l m`` closes a votive text; builtin:latin's memories), and a
context holding a missing ``-``, unknown ``^`` or hidden character was never stored, so it never
matches. Hashes, not text: the file cannot be read back into the corpus.

**At a position t being restored** (its input a ``?``): h is the number of ``?`` right after t
(the rest of the lacuna still hidden; in left-to-right decoding the letters already restored are
t's left neighbours, so a parallel must agree with them). Each level looks up its key; with
n_k(w) the counts there, n_k their sum and u_k the number of distinct characters,

    m_k(w) = n_k(w) / n_k,    λ_k = n_k / (n_k + β u_k)    (Witten–Bell; 0 unseen)
    M      = chain of the levels in :attr:`PhraseMemory.sides` order, M ← λ_k m_k + (1 − λ_k) M
    q'(w)  = S · M(w) + Π_k (1 − λ_k) · q(w)   for every w but unknown and ``-``
    q'(s)  = q(s)                               for those two;   S = Σ_{w not special} q(w)

exactly the corpus memory's mixture (:func:`infill.models.memory.mix_rows`), so q' sums to 1 and
where no level's context was seen q' = q. With ``pool`` (a model's ``"pool_mirrors"``,
builtin:latin's), a one-sided level mixed after its mirror ((0, 8) after (8, 0)) where both saw
their contexts speaks with the logarithmic opinion pool of the two, m_k ∝ m̃_k · m̃_mirror
(each add-½ smoothed over the outputs but unknown and ``-``), at λ = max(λ_k, λ_mirror): the left
and the right context are two witnesses of one letter, not a coarser and a finer context, and
in the chain the later outvoted the earlier (``iulius fel[??] vixit``: the left context says
``felix``, the right one the ``u`` of the commoner ``qui vixit``). The levels are mixed in the
order they are listed; training writes them shorter total context first, so the longest has the
last word:
:data:`PHRASE_SIDES`, β = :data:`PHRASE_BETA` (chosen on the IOSPE validation split,
data/README.md). The phrase memory is mixed last, after the lexicon, the word pairs
(:class:`WordPairs`, below: the words seen beside a lost word's surviving neighbours, in
``pairs.tsv``), the names (:mod:`infill.models.proper_names`, the same mechanism over a class) and the
shape memory (:mod:`infill.models.shapes`: this memory with its contexts read as the lengths of
their words, ``keyed="shapes"``, so that lost letters are neighbours too). A model may keep one
phrase and shape memory per corpus instead, behind a memory gate (:mod:`infill.models.gate`).

On disk: ``phrases.safetensors`` beside the model (no pickle; checked on load,
:func:`load_phrases`); a user adds formulae or names in ``phrases.txt`` beside it, one a line
(optionally ``<TAB>weight``, a whole number), which are counted into the memory on load.
"""
from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save_file

from infill.data.files import input_chars_limit, input_limit, read_bytes
from infill.data.greek import normalize
from infill.errors import InputError, ModelLoadError
from infill.models.lexicon import header_error, matching, read_headed
from infill.models.memory import _context, _splitmix, context_keys, mix_rows, outside_class

__all__ = ["PhraseMemory", "WordPairs", "PAIRS_FILE", "build_pairs", "load_pairs", "pair_counts",
           "PHRASES_FILE", "USER_PHRASES", "PHRASE_SIDES", "PHRASE_REST",
           "PHRASE_BETA", "build_phrases", "drop_rare", "load_phrases", "phrase_classes"]

PHRASES_FILE = "phrases.safetensors"
USER_PHRASES = "phrases.txt"
PHRASE_SIDES = ((3, 3), (8, 0), (0, 8), (6, 6))
"""The levels training writes, in mixing order (chosen on the IOSPE validation split)."""
PHRASE_REST = 9
"""The most hidden characters right of a position a key may skip (supplements of <= 10)."""
PHRASE_BETA = 4.0
POOL_PRIOR = 0.5
"""The add-½ count each output gets before a one-sided level is pooled with its mirror."""
FORMAT = "infill-phrases"
MAX_LEVEL = 64
MAX_LEVELS = 16
BITS = 48


@dataclass
class PhraseMemory:
    """Sorted context hashes ``keys`` [E] with the character ``tokens`` [E] seen there
    ``counts`` [E] times; ``classes`` [n_input_ids] maps an input id to its context class."""

    keys: np.ndarray
    tokens: np.ndarray
    counts: np.ndarray
    classes: np.ndarray
    sides: tuple[tuple[int, int], ...]
    rest: int
    beta: float
    vocab_size: int
    mask_id: int
    special: tuple[int, ...]          # outputs that keep the network's probability
    keyed: str = "letters"            # what a context is read as: KEYED (letters or shapes)
    near: tuple[tuple[int, int], ...] = ()   # per level: letters read as letters, left / right
    ends: bool = False                # its right contexts may reach past a text's end
    least: tuple[int, ...] = ()       # per level: the fewest ``?`` right of t it speaks at
    pool: bool = False                # a one-sided level pooled with its mirror (:meth:`pooled`)

    def mix(self, logq: torch.Tensor, input_ids: torch.Tensor, positions: torch.Tensor
            ) -> torch.Tensor:
        """log q' (the module doc) from log q [R, P, V] at ``positions`` [R, P] of
        ``input_ids`` [R, T]; only the positions some level has seen are touched."""
        ids = input_ids.detach().cpu().numpy().astype(np.int64)
        pos = positions.detach().cpu().numpy().astype(np.int64)
        seen, mixture, keep = self.mixture(ids, pos)
        if not len(seen):
            return logq
        special = np.zeros(logq.shape[-1], dtype=bool)
        special[[i for i in self.special if i < logq.shape[-1]]] = True
        return mix_rows(logq, seen, mixture, keep, special)

    def mixture(self, ids: np.ndarray, pos: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The flattened positions ``seen`` (of ``pos`` [R, P]) whose context some level has
        seen, with M there ([len(seen), V], the chain of the module doc) and Π_k (1 − λ_k)."""
        return self.chain(self._found(ids, pos))

    def chain(self, found: list[tuple[np.ndarray, np.ndarray]]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`mixture` from each level's (first entry, number of entries) [N] at N
        positions; with :attr:`pool`, a one-sided level whose mirror was mixed before it
        speaks, where both saw their contexts, with the two pooled (:meth:`pooled`)."""
        seen = np.nonzero(np.any([w > 0 for _, w in found], axis=0))[0]
        mixture = np.zeros((len(seen), self.vocab_size))
        one_sided: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        for (lo, width), side in zip(found, self.sides):
            if not len(seen):
                break
            counts = self._counts(lo[seen], width[seen])
            n, u = counts.sum(1), width[seen].astype(np.float64)
            lam = np.divide(n, n + self.beta * u, out=np.zeros_like(n), where=n > 0)
            share = np.divide(counts, n[:, None], out=np.zeros_like(counts), where=n[:, None] > 0)
            if self.pool and side[::-1] in one_sided:
                share, lam = self.pooled(counts, lam, share, *one_sided[side[::-1]])
            if self.pool and 0 in side:
                one_sided[side] = (counts, lam)
            mixture = lam[:, None] * share + (1 - lam)[:, None] * mixture
        return seen, mixture, np.clip(1 - mixture.sum(1), 0, 1)

    def pooled(self, counts: np.ndarray, lam: np.ndarray, share: np.ndarray,
               mirror: np.ndarray, mirror_lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(share, λ) of a one-sided level (``counts`` [N, V]) where its ``mirror`` level (the
        other side's, mixed before it) saw its context too: the normalized product of the two
        add-½ distributions over the outputs but the special ones, at the larger λ. The left
        and the right context are two witnesses of one letter (``iulius fel[??] vixit``: the
        left says ``felix``, the right ``qui vixit``), not a finer and a coarser one, so the
        later must not overrule the earlier as a back-off chain's next level does."""
        both = (counts.sum(1) > 0) & (mirror.sum(1) > 0)
        if not both.any():
            return share, lam
        ok = np.ones(self.vocab_size, dtype=bool)
        ok[[i for i in self.special if i < self.vocab_size]] = False
        a = (counts + POOL_PRIOR * ok) / (counts.sum(1) + POOL_PRIOR * ok.sum())[:, None]
        b = (mirror + POOL_PRIOR * ok) / (mirror.sum(1) + POOL_PRIOR * ok.sum())[:, None]
        product = a * b
        product /= product.sum(1, keepdims=True)
        return (np.where(both[:, None], product, share),
                np.where(both, np.maximum(lam, mirror_lam), lam))

    def _found(self, ids: np.ndarray, pos: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """(first entry, number of entries) [R*P] of every level at every position."""
        keys, h = _query_keys(self.classes, ids, pos, self.sides, self.rest, self.mask_id)
        near = [(k, lr) for k, lr in enumerate(self.near) if any(lr)]
        if near:
            letters, _ = _query_keys(letter_view(self.classes), ids, pos,
                                     [lr for _, lr in near], self.rest, self.mask_id)
            for (k, _), extra in zip(near, letters):
                keys[k] = _joined(keys[k], extra)
        found = []
        for k, least in zip(keys, self.least or (0,) * len(keys)):
            lo, width = self.lookup(k)
            found.append((lo, np.where(h >= least, width, 0)))
        return found

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(first entry, number of entries) of each of ``keys``."""
        lo = np.searchsorted(self.keys, keys, "left")
        return lo, np.searchsorted(self.keys, keys, "right") - lo

    def _counts(self, lo: np.ndarray, width: np.ndarray) -> np.ndarray:
        """[N, V] counts of each character in the entries ``lo[i] : lo[i] + width[i]``."""
        out = np.zeros((len(lo), self.vocab_size))
        query = np.repeat(np.arange(len(lo)), width)
        entry = np.repeat(lo - np.cumsum(width) + width, width) + np.arange(width.sum())
        np.add.at(out, (query, self.tokens[entry].astype(np.int64)), self.counts[entry])
        return out

    def merged(self, other: "PhraseMemory") -> "PhraseMemory":
        """This memory with ``other``'s entries (same levels and classes) counted in."""
        return _counted(replace(self), np.r_[self.keys, other.keys],
                        np.r_[self.tokens, other.tokens],
                        np.r_[self.counts.astype(np.int64), other.counts.astype(np.int64)])

    def save(self, path: Path, alphabet) -> None:
        """Write the memory as safetensors (keys in 6 bytes each) with its metadata."""
        save_file({"keys_hi": (self.keys >> np.uint64(16)).astype(np.uint32),
                   "keys_lo": (self.keys & np.uint64(0xFFFF)).astype(np.uint16),
                   "tokens": self.tokens, "counts": self.counts, "classes": self.classes},
                  str(path), metadata={
                      "format": FORMAT, "letters": alphabet.letters,
                      "sides": _levels(self.sides),
                      "rest": str(self.rest), "beta": repr(self.beta),
                      "vocab_size": str(self.vocab_size), "mask_id": str(self.mask_id),
                      "special": ",".join(map(str, self.special)), "keyed": self.keyed,
                      **({"near": _levels(self.near)} if self.near else {}),
                      **({"ends": "1"} if self.ends else {}),
                      **({"least": ",".join(map(str, self.least))} if self.least else {})})


def phrase_classes(alphabet) -> np.ndarray:
    """[n_input_ids] context class of each input id: itself, one class for punctuation (no
    neighbour), the outside class for the start and padding symbols."""
    n = len(alphabet)
    out = np.arange(n, dtype=np.int64)
    out[[alphabet.index[c] for c in alphabet.punctuation]] = n
    out[[alphabet.start_id, alphabet.pad_id]] = outside_class(n)
    return out


def shape_classes(alphabet) -> np.ndarray:
    """[n_input_ids] :func:`phrase_classes` with every letter, the numeral, ``-`` and ``^`` one
    class: a context read as the shape of its words (:mod:`infill.models.shapes`)."""
    out = phrase_classes(alphabet)
    letter = alphabet.index[alphabet.letters[0]]
    out[[alphabet.index[c] for c in alphabet.letters + alphabet.numeral]] = letter
    out[[alphabet.missing_id, alphabet.unk_id]] = letter
    return out


KEYED = {"letters": phrase_classes, "shapes": shape_classes}
"""How a memory reads a context: its letters (the phrase memory) or the shapes of its words."""
MEMORY = {"letters": "phrase memory", "shapes": "shape memory"}


def letter_view(classes: np.ndarray) -> np.ndarray:
    """The :func:`phrase_classes` of the alphabet whose ``classes`` (of either :data:`KEYED`)
    are given: each id itself but punctuation and the outside, which both maps share."""
    n = len(classes)
    return np.where(np.isin(classes, [n, outside_class(n)]), classes, np.arange(n))


def _query_keys(classes, ids: np.ndarray, pos: np.ndarray, sides, rest: int, mask_id: int
                ) -> tuple[list[np.ndarray], np.ndarray]:
    """[R*P] key of each level (left, right) of ``sides`` at ``pos`` [R, P] of ``ids`` [R, T],
    contexts read through ``classes``, and [R*P] h: the ``?`` right after each position (at
    most ``rest`` + 1)."""
    R, T = ids.shape
    most_l = max(l for l, _ in sides)
    most_r = max(r for _, r in sides)
    start = np.repeat(np.arange(R) * T, T)
    t = (np.arange(R)[:, None] * T + pos).reshape(-1)
    ctx = _context(classes, ids.reshape(-1), start, start + T, t, most_l, most_r + rest + 1, True)
    right = ctx[:, most_l:]
    hidden = np.c_[right == classes[mask_id], np.zeros(len(t), dtype=bool)]
    h = np.minimum(np.argmin(hidden, axis=1), rest + 1)       # > rest: a ``?`` in the key
    after = right[np.arange(len(t))[:, None], h[:, None] + np.arange(most_r)]
    return [context_keys(np.concatenate([ctx[:, most_l - left:most_l], after[:, :r]], axis=1),
                         left, r, BITS, h if r else None) for left, r in sides], h


def _joined(shape: np.ndarray, letters: np.ndarray) -> np.ndarray:
    """One key from a level's shape key and the key of its near letters (both BITS wide)."""
    return _splitmix(shape ^ (letters * np.uint64(0x9E3779B97F4A7C15))) >> np.uint64(64 - BITS)


def _good(alphabet) -> np.ndarray:
    """[n_input_ids] the ids a stored context or character may hold: not ``-``, ``^``, ``?``."""
    good = np.ones(len(alphabet) + 2, dtype=bool)
    good[[alphabet.missing_id, alphabet.unk_id, alphabet.mask_id]] = False
    return good


def build_phrases(texts: list[str], alphabet, weights: list[int] | None = None,
                  sides=PHRASE_SIDES, rest: int = PHRASE_REST, beta: float = PHRASE_BETA,
                  keyed: str = "letters", near=(), ends: bool = False, least=()
                  ) -> PhraseMemory:
    """The phrase memory of ``texts`` (normalized, in ``alphabet``; each counted ``weights[i]``
    times, once by default) at the levels ``sides`` (module doc), its contexts read as
    ``keyed`` (:data:`KEYED`): a context may hold what its class shares with a letter. A level
    k with ``near[k]`` = (a, b) also reads the a characters left and the b right of the hidden
    rest as letters (:mod:`infill.models.shapes`). With ``ends``, a right context may reach past
    a text's end (the texts are whole inscriptions: their end is a neighbour of its own). A
    level k with ``least[k]`` = m > 0 speaks only where at least m characters are still hidden
    right of the position (the first letters of a long lacuna); with a right context, its keys
    with a shorter hidden rest are not stored (a left-only key holds no rest: the query skips
    it)."""
    classes = KEYED[keyed](alphabet)
    n = len(alphabet)
    seqs = [np.array(alphabet.encode(x), dtype=np.int64) for x in texts]
    seqs = [s[classes[s] != n] for s in seqs]                  # punctuation is no neighbour
    w = np.ones(len(seqs), dtype=np.int64) if weights is None else np.asarray(weights, np.int64)
    lengths = np.array([len(s) for s in seqs], dtype=np.int64)
    ids = np.concatenate(seqs) if seqs else np.zeros(0, np.int64)
    flat = classes[ids]
    start = np.repeat(np.cumsum(lengths) - lengths, lengths)
    end = start + np.repeat(lengths, lengths)
    weight = np.repeat(w, lengths)
    good = _good(alphabet)
    t = np.nonzero(good[ids])[0]
    near = tuple(tuple(int(x) for x in lr) for lr in near) or ((0, 0),) * len(sides)
    if not _near_fits(sides, near):
        raise ValueError("near letters: one (left, right) per level, right only with a right "
                         "context")
    least = _least(least, len(sides), rest)
    views = [(flat, np.isin(flat, classes[good[:n]]))]
    if any(a or b for a, b in near):
        letters = letter_view(classes)
        views.append((letters[ids], np.isin(letters[ids], letters[good[:n]])))
    keys, tokens, counts = [], [], []
    for (left, right), (a, b), m in zip(sides, near, least or (0,) * len(sides)):
        for h in range(m, rest + 1) if right else [0]:
            k, ok = _full_keys(views[0], start, end, t, (left, right, h), n, ends)
            if a or b:
                extra, also = _full_keys(views[1], start, end, t, (a, b, h if b else 0), n, ends)
                ok &= also
                k = _joined(k, extra)
            keys.append(k[ok])
            tokens.append(ids[t[ok]])
            counts.append(weight[t[ok]])
    memory = PhraseMemory(np.zeros(0, np.uint64), np.zeros(0, np.uint8), np.zeros(0, np.uint32),
                          classes, tuple((int(l), int(r)) for l, r in sides), int(rest),
                          float(beta), alphabet.n_outputs, alphabet.mask_id,
                          (alphabet.unk_id, alphabet.missing_id), keyed,
                          near if any(a or b for a, b in near) else (), bool(ends), least)
    if not keys:
        return memory
    return _counted(memory, np.concatenate(keys), np.concatenate(tokens), np.concatenate(counts))


def _full_keys(view, start, end, t, level: tuple[int, int, int], n: int, ends: bool = False):
    """:func:`_keys` of ``view`` (classes [len(flat)], which of them a context may hold) at
    every one of ``t``, 0 where a context cannot be read; and which can."""
    keys, ok = _keys(view[0], view[1], start, end, t, level, outside_class(n), ends)
    full = np.zeros(len(t), dtype=np.uint64)
    full[ok] = keys
    return full, ok


def _keys(flat, good, start, end, t, level: tuple[int, int, int], outside: int,
          ends: bool = False):
    """Keys of the level (left, right) with rest h (``level``) at the positions ``t`` whose
    context and hidden rest hold only ``good`` characters [len(flat)], and which of ``t`` they
    are; ``outside``: the class past a text's ends (on the right only with ``ends``)."""
    left, right, h = level
    at_l = t[:, None] - left + np.arange(left)
    at_r = t[:, None] + 1 + h + np.arange(right)
    at_h = t[:, None] + 1 + np.arange(h)
    in_l, in_r = at_l >= start[t, None], at_r < end[t, None]
    last = len(flat) - 1
    right_ok = in_r & good[np.clip(at_r, 0, last)]
    if ends:                            # past the end: the outside class, as at the start
        right_ok |= ~in_r
    ok = np.all(~in_l | good[np.clip(at_l, 0, last)], axis=1) & np.all(right_ok, axis=1)
    if ends and not left and right:     # the end alone says only how inscriptions end, and
        ok &= in_r[:, 0]                # would outvote the two-sided levels mixed before it
    if h:
        ok &= np.all((at_h < end[t, None]) & good[np.clip(at_h, 0, last)], axis=1)
    ctx = np.concatenate([np.where(in_l, flat[np.clip(at_l, 0, last)], outside),
                          np.where(in_r, flat[np.clip(at_r, 0, last)], outside)], axis=1)[ok]
    return context_keys(ctx, left, right, BITS, np.full(len(ctx), h) if right else None), ok


def _counted(memory: PhraseMemory, keys: np.ndarray, tokens: np.ndarray, counts: np.ndarray
             ) -> PhraseMemory:
    """``memory`` holding the distinct (key, character) pairs with their summed counts."""
    if not len(keys):                  # nothing counted (an empty phrases.txt): no entries
        memory.keys, memory.tokens = np.zeros(0, np.uint64), np.zeros(0, np.uint8)
        memory.counts = np.zeros(0, np.uint16)
        return memory
    order = np.lexsort((tokens, keys))
    keys, tokens, counts = keys[order], tokens[order], counts[order]
    new = np.r_[True, (keys[1:] != keys[:-1]) | (tokens[1:] != tokens[:-1])]
    first = np.nonzero(new)[0]
    summed = np.add.reduceat(counts, first) if len(first) else counts[:0]
    memory.keys = keys[first].astype(np.uint64)
    memory.tokens = tokens[first].astype(np.uint8)
    summed = np.minimum(summed, 2 ** 31 - 1)
    memory.counts = summed.astype(np.uint16 if summed.max(initial=0) < 2 ** 16 else np.uint32)
    return memory


def drop_rare(memory: PhraseMemory, min_count: int, whole_contexts: bool = True
              ) -> PhraseMemory:
    """``memory`` without what was counted fewer than ``min_count`` times: whole contexts
    (``whole_contexts``; each kept context keeps every character seen there, so its Witten–Bell
    weight is unchanged), or single (context, character) entries. A bound on its size that drops
    what one inscription said once; the keys stay sorted."""
    if min_count <= 1 or not len(memory.keys):
        return memory
    counts = memory.counts.astype(np.int64)
    if whole_contexts:
        first = np.nonzero(np.r_[True, memory.keys[1:] != memory.keys[:-1]])[0]
        keep = np.repeat(np.add.reduceat(counts, first) >= min_count,
                         np.diff(np.r_[first, len(memory.keys)]))
    else:
        keep = counts >= min_count
    return replace(memory, keys=memory.keys[keep], tokens=memory.tokens[keep],
                   counts=memory.counts[keep])


def load_phrases(path: Path, alphabet, keyed: str = "letters", user: Path | None = None
                 ) -> PhraseMemory:
    """Read and check ``phrases.safetensors`` (no pickle) against the model's alphabet: one
    ModelLoadError naming the file when it is not a phrase memory of this model keyed by
    ``keyed`` (files written before shapes hold letters); then count in the user's phrases
    (``user``; None: ``phrases.txt`` beside it), when there are any (:func:`read_user_phrases`)."""
    try:
        with safe_open(str(path), framework="np") as f:
            meta = f.metadata() or {}
            if meta.get("format") != FORMAT or meta.get("letters") != alphabet.letters:
                raise ValueError(f"not a {FORMAT} file for this alphabet")
            found = meta.get("keyed", "letters")
            if found != keyed:
                raise ValueError(f"its contexts are keyed by {found[:20]!r}, not {keyed}")
            sides = _sides(meta["sides"])
            arrays = {k: f.get_tensor(k) for k in ("tokens", "counts", "classes")}
            hi, lo = f.get_tensor("keys_hi"), f.get_tensor("keys_lo")
            if hi.shape != lo.shape or hi.dtype != np.uint32 or lo.dtype != np.uint16:
                raise ValueError("its key arrays do not match")
            keys = hi.astype(np.uint64) << np.uint64(16) | lo.astype(np.uint64)
        memory = PhraseMemory(keys, **arrays, sides=sides, rest=_int(meta["rest"]),
                              beta=float(meta["beta"]), vocab_size=_int(meta["vocab_size"]),
                              mask_id=_int(meta["mask_id"]),
                              special=tuple(_int(k) for k in meta["special"].split(",") if k),
                              keyed=keyed, near=_sides(meta["near"], 0) if "near" in meta else (),
                              ends=_flag(meta.get("ends", "0"), "ends"),
                              least=_least([_int(k) for k in meta["least"].split(",")]
                                           if "least" in meta else (), len(sides),
                                           _int(meta["rest"])))
    except (SafetensorError, OSError, KeyError, ValueError, TypeError, OverflowError) as e:
        reason = str(e).splitlines()[0][:160] if str(e).strip() else ""
        raise ModelLoadError(f"{path}: not a {MEMORY[keyed]} ({type(e).__name__}: {reason})") \
            from None
    _check(memory, path, alphabet)
    user = Path(path).parent / USER_PHRASES if user is None else user
    if os.path.lexists(user):
        memory = memory.merged(_user_memory(user, alphabet, memory, keyed))
    return memory


def _user_memory(user: Path, alphabet, memory: PhraseMemory, keyed: str) -> PhraseMemory:
    """The memory of the phrases in ``user`` at ``memory``'s levels, built once per process for
    one version of the file (its size, time and inode): a model loaded again does not count
    them again."""
    try:
        st = user.stat()
    except OSError as e:
        raise ModelLoadError(f"{user}: cannot read the phrases ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):     # a folder, a pipe or a device: never waited on
        raise ModelLoadError(f"{user}: not a file of phrases (a folder, a pipe or a device); "
                             "remove it or make it a text file, one phrase a line")
    key = (str(user.resolve()), st.st_size, st.st_mtime_ns, st.st_ino, alphabet.letters, keyed,
           memory.sides, memory.rest, memory.beta, memory.near, memory.least)
    if key not in _USER_MEMORIES:
        texts, weights = read_user_phrases(user, alphabet)
        if len(_USER_MEMORIES) >= 8:
            _USER_MEMORIES.pop(next(iter(_USER_MEMORIES)))
        _USER_MEMORIES[key] = build_phrases(texts, alphabet, weights, memory.sides, memory.rest,
                                            memory.beta, keyed, memory.near, least=memory.least)
    return _USER_MEMORIES[key]


_USER_MEMORIES: dict[tuple, PhraseMemory] = {}


def read_user_phrases(path: Path, alphabet) -> tuple[list[str], list[int]]:
    """The formulae or names of a ``phrases.txt`` (one a line, optionally ``<TAB>weight``, a
    whole number from 1 to 10^6), normalized as the model reads its input. Read as inputs are:
    at most :func:`~infill.data.files.input_limit` bytes, and at most
    :func:`~infill.data.files.input_chars_limit` characters of phrases in all (building the
    memory takes time in proportion); a line holding no letter of the alphabet is refused
    (ModelLoadError naming the file and line), so nothing in the file is silently unused."""
    try:
        text = read_bytes(path, "phrases file", input_limit()).decode("utf-8")
    except InputError as e:
        raise ModelLoadError(f"{path}: cannot read the phrases: {e}") from None
    except UnicodeDecodeError as e:
        raise ModelLoadError(f"{path}: not UTF-8 text (byte offset {e.start})") from None
    texts, weights, total, limit = [], [], 0, input_chars_limit()
    letters = set(alphabet.letters)
    for k, line in enumerate(text.splitlines(), 1):
        phrase, tab, weight = line.partition("\t")
        if not phrase.strip():
            continue
        if tab and not (re.fullmatch(r"[0-9]{1,7}", weight.strip()) and
                        1 <= int(weight) <= 10 ** 6):
            raise ModelLoadError(f"{path}:{k}: expected 'phrase' or 'phrase<TAB>weight' with a "
                                 f"whole weight from 1 to 1000000, got {line[:40]!r}")
        total += len(phrase)
        if total > limit:
            raise ModelLoadError(f"{path}:{k}: more than {limit:,} characters of phrases "
                                 "(the limit of one input; set INFILL_MAX_INPUT_CHARS to raise it)")
        texts.append(normalize(phrase, alphabet=alphabet, unknown=True))
        if letters.isdisjoint(texts[-1]):
            raise ModelLoadError(f"{path}:{k}: no letter of this model's alphabet in "
                                 f"{phrase[:40]!r}: nothing of it could be counted")
        weights.append(int(weight) if tab else 1)
    return texts, weights


_INT = re.compile(r"-?[0-9]{1,18}")


def _flag(text: str, name: str) -> bool:
    """A yes/no header field: "1" or "0"."""
    if text not in ("0", "1"):
        raise ValueError(f"{name} must be 0 or 1, not {text[:20]!r}")
    return text == "1"


def _int(text: str) -> int:
    if not isinstance(text, str) or not _INT.fullmatch(text.strip()):
        raise ValueError(f"{str(text)[:20]!r} is not a whole number (ASCII digits)")
    return int(text)


def _least(least, levels: int, rest: int) -> tuple[int, ...]:
    """Per level, the fewest hidden characters right of a position it speaks at (ValueError
    unless one per level, each 0..``rest`` + 1); () where every level speaks everywhere."""
    least = tuple(int(m) for m in least)
    if least and (len(least) != levels or not all(0 <= m <= rest + 1 for m in least)):
        raise ValueError(f"least hidden rest {least!r}: one per level, each 0..{rest + 1}")
    return least if any(least) else ()


def _levels(levels) -> str:
    """``l:r,l:r,...`` of (left, right) pairs, as :func:`_sides` reads them."""
    return ",".join(f"{l}:{r}" for l, r in levels)


def _near_fits(sides, near) -> bool:
    """One (left, right) of near letters per level, and letters right only where the level has
    a right context."""
    return len(near) == len(sides) and not any(b and not r for (_, r), (_, b) in zip(sides, near))


def _sides(text: str, least: int = 1) -> tuple[tuple[int, int], ...]:
    """``l:r,l:r,...``: at most :data:`MAX_LEVELS` levels of 0..:data:`MAX_LEVEL` neighbours
    a side, each with at least ``least`` neighbours (ValueError)."""
    parts = [p for p in text.split(",") if p]
    if not 1 <= len(parts) <= MAX_LEVELS:
        raise ValueError(f"{len(parts)} levels, not 1..{MAX_LEVELS}")
    out = []
    for p in parts:
        left, sep, right = p.partition(":")
        l, r = _int(left), _int(right)
        if not sep or not (0 <= l <= MAX_LEVEL and 0 <= r <= MAX_LEVEL and l + r >= least):
            raise ValueError(f"level {p[:20]!r} is not 'left:right' of 0..{MAX_LEVEL}")
        out.append((l, r))
    return tuple(out)


def _check(m: PhraseMemory, path: Path, alphabet) -> None:
    """The arrays and numbers against the model: ModelLoadError naming the file."""
    n = len(alphabet)
    problem = None
    arrays = (m.keys, m.tokens, m.counts, m.classes)
    if any(a.ndim != 1 for a in arrays) or m.tokens.dtype != np.uint8 or \
            m.counts.dtype not in (np.uint16, np.uint32) or m.classes.dtype.kind not in "iu":
        problem = "its arrays must be 1-D: uint8 characters, uint16/32 counts, whole classes"
    elif not len(m.keys) == len(m.tokens) == len(m.counts):
        problem = "its keys, characters and counts differ in number"
    elif m.vocab_size != alphabet.n_outputs or len(m.classes) != n or \
            not np.array_equal(m.classes, KEYED[m.keyed](alphabet)):
        problem = f"it was built for {m.vocab_size} outputs / another alphabet"
    elif len(m.keys) and (np.any(m.keys[1:] < m.keys[:-1]) or
                          int(m.tokens.max()) >= m.vocab_size or int(m.counts.min()) < 1):
        problem = "its keys are not sorted, or a character or count is out of range"
    elif not 0 <= m.rest <= MAX_LEVEL or m.mask_id != alphabet.mask_id or \
            set(m.special) != {alphabet.unk_id, alphabet.missing_id}:
        problem = f"rest {m.rest} / mask id {m.mask_id} / special ids do not fit this model"
    elif not (0 < m.beta < float("inf")):
        problem = f"beta {m.beta} is not a positive finite number"
    elif m.near and (m.keyed != "shapes" or not _near_fits(m.sides, m.near)):
        problem = "its near letters need a shape memory, one per level, and a right context " \
                  "where they read right"
    if problem:
        raise ModelLoadError(f"{path}: {MEMORY[m.keyed]} does not fit this model: {problem}")


# ---- whole lost words: the words seen beside a word's neighbours -------------------------------
PAIRS_FILE = "pairs.tsv"
PAIRS_BETA = 1.0
PAIRS_PRIOR = 0.5
"""γ: the word pairs' weight at the first letter of a whole lost word with no surviving
neighbour, where the words of its length speak by how often they stand in the pairs (chosen on
the IOSPE validation split: 0.25, 0.5, 0.8)."""
PAIRS_HEADER = "#infill-pairs"


@dataclass
class WordPairs:
    """Pairs of neighbouring words of the training text (one space apart, every character a
    letter): ``before[(w, n)]`` the words of n letters seen right after w, ``after[(w, n)]``
    those seen right before it, each as (letter ids [N, n], counts [N]).

    At a letter t of a word of the input (as the lexicon reads it, :mod:`infill.models.lexicon`)
    whose left neighbour word w (one space before it, all letters known) or right neighbour
    word w' is known, the candidates are the words v of its length seen after w and before w',
    each weighing c(w, v) + c(v, w'), that agree with its known letters (none need be known: a
    whole lost word); with n their total weight, m(x) the weight of those with x at t over n and
    λ = n / (n + β), the lexicon's mixture q'(x) = S · λ m(x) + (1 − λ) q(x) off the unknown
    symbol and ``-``.

    A whole lost word neither of whose neighbour words survives has no pairs to go by; at its
    first letter (no letter of the word known yet) ``lengths[n]`` speaks instead -- the words of
    its length weighing how often they stand in the pairs -- with λ = γ (``prior``)."""

    before: dict
    after: dict
    lexicon: object                    # a WordLexicon: the model's word boundaries and letters
    beta: float
    space_id: int
    prior: float = 0.0                 # γ of the length prior (0: off, as files before it)
    lengths: dict = field(default_factory=dict)      # {n: (letter ids [N, n], counts [N])}

    def mix(self, logq: torch.Tensor, input_ids: torch.Tensor, positions: torch.Tensor
            ) -> torch.Tensor:
        """log q' from log q [R, P, V] at ``positions`` [R, P] of ``input_ids`` [R, T]."""
        ids = input_ids.detach().cpu().numpy()
        pos = positions.detach().cpu().numpy()
        start, end = self.lexicon._words_at(ids, pos)
        R, P = pos.shape
        found = []
        for r in range(R):
            for j in range(P):
                if end[r, j] > start[r, j]:
                    m, lam = self.share(ids[r], int(start[r, j]), int(end[r, j]),
                                        int(pos[r, j]))
                    if lam > 0:
                        found.append((r * P + j, m, lam))
        if not found:
            return logq
        lam = np.array([lam for _, _, lam in found])
        mixture = lam[:, None] * np.stack([m for _, m, _ in found])
        return mix_rows(logq, np.array([i for i, _, _ in found]), mixture, 1 - lam,
                        self.lexicon._special)

    def share(self, ids: np.ndarray, start: int, end: int, t: int) -> tuple[np.ndarray, float]:
        """(m [V], λ) at t of the word ids[start:end]: λ = n / (n + β); where no neighbour
        survives, at a word that keeps no letter, the length prior's with λ = γ; else 0."""
        sides = self.neighbours(ids, start, end)
        m, n = self.marginal(ids, start, end, t, sides)
        if n > 0:
            return m, n / (n + self.beta)
        word = ids[start:end]
        if self.prior <= 0 or sides != (None, None) or len(word) not in self.lengths or \
                np.isin(word, self.lexicon.letter_ids).any():
            return m, 0.0
        table, counts = self.lengths[len(word)]
        m, n = matching(table, counts, word, t - start, self.lexicon.letter_ids,
                        self.lexicon.vocab_size)
        return m, (self.prior if n > 0 else 0.0)

    def neighbours(self, ids: np.ndarray, start: int, end: int
                   ) -> tuple[bytes | None, bytes | None]:
        """The letter ids (bytes) of the word one space left of ids[start:end] and of the one
        one space right of it, each None when there is none whose letters are all known."""
        letters = self.lexicon.letter_ids
        space = self.space_id
        left = right = None
        if start >= 2 and ids[start - 1] == space:
            a = start - 1
            while a > 0 and ids[a - 1] in letters:
                a -= 1
            if a < start - 1 and (a == 0 or ids[a - 1] not in letters):
                left = bytes(ids[a:start - 1].astype(np.uint8))
        if end + 1 < len(ids) and ids[end] == space:
            b = end + 1
            while b < len(ids) and ids[b] in letters:
                b += 1
            if b > end + 1:
                right = bytes(ids[end + 1:b].astype(np.uint8))
        return left, right

    def marginal(self, ids: np.ndarray, start: int, end: int, t: int,
                 sides: tuple[bytes | None, bytes | None]) -> tuple[np.ndarray, float]:
        """(m [V], n) at t of the word ids[start:end] from its neighbour words ``sides``
        (:meth:`neighbours`)."""
        n_letters = end - start
        left, right = sides
        pools = [] if left is None else [self.before.get((left, n_letters))]
        pools += [] if right is None else [self.after.get((right, n_letters))]
        pools = [p for p in pools if p is not None]
        if not pools:
            return np.zeros(self.lexicon.vocab_size), 0.0
        return matching(np.concatenate([p[0] for p in pools]),
                        np.concatenate([p[1] for p in pools]), ids[start:end], t - start,
                        self.lexicon.letter_ids, self.lexicon.vocab_size)

    def save(self, path: Path, alphabet) -> None:
        """Write ``pairs.tsv``: a header, then ``first<TAB>second<TAB>count`` lines."""
        rows = {}
        for (w, n), (table, counts) in self.before.items():
            for v, c in zip(table, counts):
                rows[(alphabet.decode(w), alphabet.decode(bytes(v)))] = c
        head = json.dumps({"beta": self.beta, "letters": alphabet.letters, "prior": self.prior},
                          ensure_ascii=False)
        lines = [f"{PAIRS_HEADER} {head}"] + [f"{a}\t{b}\t{_count(c)}" for (a, b), c in
                                               sorted(rows.items(), key=lambda r: (-r[1], r[0]))]
        Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _count(c: float) -> str:
    return f"{int(c)}" if float(c).is_integer() else f"{c:.6f}"


def pair_counts(texts: list[str], alphabet) -> dict[tuple[str, str], float]:
    """How often each pair of words stands one space apart in ``texts`` (normalized, its
    punctuation left out), every character of both a letter of ``alphabet``."""
    out: dict[tuple[str, str], float] = {}
    letters = re.compile(f"[{re.escape(alphabet.letters)}]+")
    drop = str.maketrans("", "", alphabet.punctuation)      # punctuation stands between no pair
    for text in texts:
        words = text.translate(drop).split(" ")
        for a, b in zip(words, words[1:]):
            if letters.fullmatch(a) and letters.fullmatch(b):
                out[(a, b)] = out.get((a, b), 0.0) + 1.0
    return out


def build_pairs(counts: dict[tuple[str, str], float], alphabet, lexicon,
                beta: float = PAIRS_BETA, prior: float = PAIRS_PRIOR) -> WordPairs:
    """The :class:`WordPairs` of ``counts`` ((first, second) -> count) for ``lexicon``'s
    model."""
    before: dict = {}
    after: dict = {}
    single: dict = {}
    for (a, b), c in counts.items():
        ia, ib = bytes(alphabet.encode(a)), bytes(alphabet.encode(b))
        before.setdefault((ia, len(b)), []).append((ib, c))
        after.setdefault((ib, len(a)), []).append((ia, c))
        single[ia] = single.get(ia, 0.0) + c
        single[ib] = single.get(ib, 0.0) + c
    lengths: dict = {}
    for w, c in single.items():
        lengths.setdefault(len(w), []).append((w, c))
    def pack(d: dict) -> dict:
        return {k: (np.frombuffer(b"".join(w for w, _ in v), np.uint8).reshape(len(v), -1),
                    np.array([c for _, c in v])) for k, v in d.items()}
    return WordPairs(pack(before), pack(after), lexicon, float(beta), alphabet.space_id,
                     float(prior), pack(lengths))


def load_pairs(path: Path, alphabet, lexicon) -> WordPairs:
    """Read and check ``pairs.tsv``: one ModelLoadError naming the file and line when it is
    wrong."""
    head, body = read_headed(path, "word pairs", PAIRS_HEADER, alphabet, "word-pair file",
                             ', "prior": ...')
    beta = head["beta"]
    try:
        prior = float(head.get("prior", 0.0))      # files written before the prior: off
        assert 0 <= prior <= 1
    except (AssertionError, ValueError, TypeError):
        raise header_error(path, "word-pair file", PAIRS_HEADER, ', "prior": ...') from None
    word = f"[{re.escape(alphabet.letters)}]+"
    line = re.compile(f"({word})\t({word})\t([0-9]{{1,12}}(?:\\.[0-9]{{0,6}})?)")
    counts: dict[tuple[str, str], float] = {}
    for k, row in enumerate(body.splitlines(), 2):
        got = line.fullmatch(row)
        if got is None or not float(got.group(3)) > 0:
            raise ModelLoadError(f"{path}:{k}: expected 'word<TAB>word<TAB>count' with words of "
                                 f"the model's letters and a positive count, got {row[:40]!r}")
        pair = (got.group(1), got.group(2))
        counts[pair] = counts.get(pair, 0.0) + float(got.group(3))
    return build_pairs(counts, alphabet, lexicon, beta, prior)
