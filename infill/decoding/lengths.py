"""Gaps of uncertain length: decode every length in a range and rank all completions together.

A gap's length is a :class:`GapLength`: exactly n units, a range [lo, hi] (an epigraphic lacuna
of about n letters, ``[c.5]``; EpiDoc ``<gap atLeast="4" atMost="6">``), or a *whole word* of
1–3 word pieces whose first piece starts a word (never a ``##`` continuation glued to the word
before the gap) and whose other pieces continue it -- or, where the marker touches a word on its
left ("nun___"), 1–3 ``##`` pieces that finish that word. An input whose gaps have several possible
lengths becomes one :class:`Variant` per combination of lengths; each is decoded as usual, and
the completions of all variants are ranked together by a score that is comparable across
lengths (:data:`LENGTH_SCORES`):

- ``pll``      -- the pseudo-log-likelihood of the filled text, −E_local (METHODS §3):
                  Σ_t log q_t(x_t | x with t masked) over every scored position t within
                  ``PLL_REACH`` (32) tokens of the gaps, the context included: the context's
                  terms are what tells a fill that fits its surroundings from one that does
                  not, whatever its length; positions further away (a long inscription) hardly
                  tell fills apart and would cost a forward row each
                  (:func:`infill.decoding.pll.near_gaps`);
- ``pll-gap``  -- the same sum over the gap positions only (one row per gap position);
- ``pll-word`` -- the gap's terms with the later pieces of each term's word masked too
                  (Σ_t log q_t(x_t | x with t and the rest of its word masked); Kauf & Ivanova
                  2023's PLL-word-l2r): a word of several pieces is not scored as if each piece
                  were read off the others, which makes ``pll-gap`` favour long rare words;
- ``per-char`` -- the decoder's own score divided by the number of characters filled in;
- ``per-char-0.7`` -- the decoder's own score divided by that number to the power 0.7 (a length
                  normalization between the raw score, which favours the shortest fill, and
                  ``per-char``, which lets long fills run on; METHODS §1.3).

The HCB and standard beam scores themselves are not comparable across lengths (each is a sum
of as many terms as the gap has positions, and HCB's is relative to a pivot of that length).
"""
from __future__ import annotations

import itertools
import re
import weakref
from dataclasses import dataclass, field, replace

from infill.lazy import torch

from infill.errors import ConfigError, InputError
from infill.names import LENGTH_SCORES
from infill.fields import MAX_LENGTHS, MAX_VARIANTS

__all__ = ["GapLength", "LENGTH_SCORES", "MAX_LENGTHS", "MAX_VARIANTS", "PER_CHAR", "Variant",
           "WORD_PIECES", "gap_lengths", "one_length", "parse_length", "per_char", "shorten",
           "variants", "word_piece_masks"]

PER_CHAR = {"per-char": 1.0, "per-char-0.7": 0.7}
"""The length scores read off the decoder's own score: the power of the characters filled in
that it is divided by."""


def per_char(kind: str, scores, chars) -> list[float]:
    """The decoder's ``scores`` divided by ``chars`` (characters filled in, at least 1) to the
    power :data:`PER_CHAR` of ``kind``."""
    power = PER_CHAR[kind]
    return [float(s) / max(1, c) ** power for s, c in zip(scores, chars)]

WORD_PIECES = 3
"""A whole-word gap (``gap="word"``) is a word of 1 to this many word pieces."""
WORD = "word"


@dataclass(frozen=True)
class GapLength:
    """The length of one gap: ``lo``..``hi`` units; ``word``: a whole word of word pieces."""

    lo: int
    hi: int
    word: bool = False

    @property
    def fixed(self) -> bool:
        return self.lo == self.hi and not self.word


@dataclass
class Variant:
    """One combination of gap lengths of an input: its ``encoding`` and, for whole-word gaps,
    ``allowed``: position -> [V] bool mask of the tokens that may be placed there."""

    lengths: tuple[int, ...]
    encoding: object
    allowed: dict[int, torch.Tensor] = field(default_factory=dict)


def parse_length(text: str) -> int | str:
    """A gap length as typed (``5``, ``4-6``, ``word``): the int, or the checked string."""
    one = one_length(str(text))
    return one if isinstance(one, int) else str(text).strip().lower()


def one_length(gap) -> GapLength | int:
    """One gap length: an int is returned as is (the model checks it), the rest parsed into a
    :class:`GapLength`."""
    if isinstance(gap, str):
        s = gap.strip().lower()
        if s == WORD:
            return GapLength(1, WORD_PIECES, word=True)
        m = re.fullmatch(r"([0-9]+)\s*(?:-|\.\.)\s*([0-9]+)", s)
        if m:
            return _range(_count(m.group(1)), _count(m.group(2)))
        if re.fullmatch("[0-9]+", s):
            return _count(s)
        raise InputError(f"a gap length is a number, a range lo-hi (e.g. 4-6) or 'word', got {gap!r}")
    if isinstance(gap, tuple):
        if len(gap) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in gap):
            raise InputError(f"a gap range is (lo, hi) with two whole numbers, got {gap!r}")
        return _range(*gap)
    return gap


MAX_DIGITS = 9
"""Digits of a gap length as typed: more is no gap length (and never int() of thousands of
digits)."""


def _count(digits: str) -> int:
    """A gap length written in ASCII digits; InputError past :data:`MAX_DIGITS` digits."""
    if len(digits.lstrip("0")) > MAX_DIGITS:
        raise InputError(f"a gap length of {len(digits)} digits is far too long")
    return int(digits)


def _range(lo: int, hi: int) -> GapLength:
    if lo < 1 or hi < lo:
        raise InputError(f"a gap range needs 1 <= lo <= hi, got {lo}-{hi}")
    if hi - lo + 1 > MAX_LENGTHS:
        raise InputError(f"a gap range may span at most {MAX_LENGTHS} lengths, got {lo}-{hi}")
    return GapLength(lo, hi)


def gap_lengths(model, gap) -> int | list[GapLength] | GapLength:
    """The ``gap`` option of :func:`infill.fill` read: an int (every marker that many units, as
    always), one :class:`GapLength` for every marker (``(lo, hi)``, ``"lo-hi"``, ``"word"``), or a
    list with one per marker. Raises :class:`InputError` naming the limits."""
    if isinstance(gap, list):
        if not gap:
            raise InputError("a per-marker gap list needs one length per gap marker")
        out = [one_length(g) for g in gap]
        return [g if isinstance(g, GapLength) else GapLength(*(model.check_gap(g),) * 2)
                for g in out]
    one = one_length(gap)
    if isinstance(one, GapLength):
        model.check_gap(one.hi)
        return one
    return model.check_gap(one)


def word_piece_masks(model) -> tuple[torch.Tensor, torch.Tensor]:
    """([V] first pieces, [V] continuation pieces) of a WordPiece model: a word starts with a
    piece holding a letter or digit that is not a ``##`` continuation; ``##`` pieces continue
    it. ConfigError for a model without WordPiece continuations. Read once per model."""
    try:
        known = _PIECES.get(model)
    except TypeError:                       # a model that cannot be weakly referenced
        known = None
    if known is None:
        known = _word_piece_masks(model)
        try:
            _PIECES[model] = known
        except TypeError:
            pass
    return known


_PIECES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _word_piece_masks(model) -> tuple[torch.Tensor, torch.Tensor]:
    tokens = [model.id_to_token(i) for i in range(model.vocab_size)]
    cont = torch.tensor([t.startswith("##") and len(t) > 2 for t in tokens])
    if not cont.any():
        raise ConfigError(f"a whole-word gap needs a WordPiece model (continuation pieces marked "
                          f"'##'); {getattr(model, 'name', 'this model')!r} has none")
    first = torch.tensor([not t.startswith("##") and any(c.isalnum() for c in t) for t in tokens])
    return first, cont


def shorten(enc, keep: dict[int, int]):
    """``enc`` with gap k cut to its first ``keep[k]`` positions (the rest removed from the
    input, later positions shifted). Gaps are runs of mask ids, so this is the encoding of the
    same text with shorter gaps."""
    drop = {p for k, n in keep.items() for p in enc.gaps[k][n:]}
    new_at, ids = {}, []
    for p, t in enumerate(enc.input_ids):
        if p not in drop:
            new_at[p] = len(ids)
            ids.append(t)
    gaps = [[new_at[p] for p in g if p not in drop] for g in enc.gaps]
    return replace(enc, input_ids=ids, gaps=gaps, segments=list(enc.segments),
                   notes=list(enc.notes))


def variants(model, text: str, lengths, marker: str = "___") -> list[Variant]:
    """Every combination of gap lengths of ``text`` (``lengths`` from :func:`gap_lengths`), one
    :class:`Variant` each, in order of the lengths. Only the gaps made by ``marker`` take these
    lengths; ``?`` runs and mask tokens keep their own."""
    specs = lengths if isinstance(lengths, list) else None
    top = max(s.hi for s in lengths) if specs else lengths.hi
    enc = model.encode(text, top, marker)
    probe = model.encode(text, top - 1 if top > 1 else 2, marker)   # marker gaps change length
    marked = [k for k, g in enumerate(enc.gaps) if len(probe.gaps[k]) != len(g)]
    if specs is None:
        specs = [lengths] * len(marked)
    elif len(specs) != len(marked):
        raise InputError(f"{len(specs)} gap lengths for {len(marked)} gap markers {marker!r}")
    n = 1
    for s in specs:
        n *= s.hi - s.lo + 1
    if n > MAX_VARIANTS:
        raise InputError(f"the gap lengths give {n} combinations, more than the limit of "
                         f"{MAX_VARIANTS}; narrow the ranges")
    masks = word_piece_masks(model) if any(s.word for s in specs) else None
    glued = _glued(text, marker)
    out = []
    for combo in itertools.product(*(range(s.lo, s.hi + 1) for s in specs)):
        var = shorten(enc, dict(zip(marked, combo)))
        allowed = {}
        for i, (k, s) in enumerate(zip(marked, specs)):
            if s.word:
                g = var.gaps[k]
                allowed[g[0]] = masks[1] if glued[i] else masks[0]
                allowed.update({p: masks[1] for p in g[1:]})
        out.append(Variant(tuple(combo), var, allowed))
    return out


def _glued(text: str, marker: str) -> list[bool]:
    """For each ``marker`` in ``text``: whether it touches a word on its left ("nun___"), so
    that a whole-word gap there is the rest of that word: ``##`` pieces only."""
    return [m.start() > 0 and text[m.start() - 1].isalnum()
            for m in re.finditer(re.escape(marker), text)]
