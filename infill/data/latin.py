"""The Latin character alphabet (Aeneas's letters) and how a text's language or script picks an
alphabet.

builtin:latin reads Latin as the Greek model reads Greek (:func:`infill.data.greek.normalize`
with ``alphabet=LATIN``): NFD, lowercase, no diacritics, every digit ``0``, punctuation
``. , ; ·`` (an interpunct is ``·``), anything else dropped (or the unknown symbol ``^`` in user
input). Its 24 letters are Aeneas's Latin table, ``abcdefghiklmnopqrstuvxyz``:

- **i/j**: the stone has one letter, I; ``j`` (rare in editions, absent from EDH) is read as ``i``.
- **u/v**: the stone has one letter, V, but EDH -- like most editions -- writes ``v`` for the
  consonant and ``u`` for the vowel (``vixit``, ``Iulius``), 7,713 against 30,350 in the first
  3,000 files. The model keeps both letters, as its training editions write them (so it restores
  ``vixit``, not ``uixit``), and the benchmarks compare ``u`` and ``v`` as one letter
  (:func:`fold_uv`), as the stone does.
- ``w`` is no Latin letter: the unknown symbol in user input, dropped from training text.
- The ligatures ``Æ`` and ``Œ`` are their two letters (``CÆSAR`` is ``caesar``), as Leiden's
  ``a͡e`` is.
- An interpunct dividing words (``D·M·S``, :data:`WORD_DIVIDERS`) is the word space; where a
  text divides its words so and has no space, the spaces it restores are written as its
  interpunct (:func:`infill.data.greek.divider_of`).

Editions mark their language with ``xml:lang`` (``la``; ``grc`` for Greek); where a file names
none, the script of its letters decides (:func:`script_of`).
"""
from __future__ import annotations

import re
import unicodedata

from infill.data.greek import GREEK, Alphabet

__all__ = ["GREEK_LANGS", "LATIN", "LATIN_LANGS", "WORD_DIVIDERS", "alphabet_for", "fold_uv",
           "language_name", "letters_by_script", "script_of", "stone_text"]

WORD_DIVIDERS = "\u00b7\u2022\u2219\u22c5\u2e31\u2027"
"""The interpuncts a transcription divides Latin words with (``D·M·S``: the middle dot, bullet,
bullet operator, dot operator, word separator middle dot, hyphenation point), read as the word
space: EDH, the model's training text, divides words with spaces (its 34,972 editions mark no
interpunct), and builtin:latin read ``D·M·C·IVLIVS·F????·VIXIT`` as one long word (``FIERI``
first, ``FELIX`` third)."""

LATIN = Alphabet(letters="abcdefghiklmnopqrstuvxyz",
                 variants={"j": "i", "æ": "ae", "œ": "oe", **{d: " " for d in WORD_DIVIDERS}},
                 name="Latin", expansions="drop")
"""Latin: unknown ``^``, space, missing ``-``, the 24 letters, ``0``, ``. , ; ·``; ``?``, ``#``,
``<`` as for Greek (:data:`infill.data.greek.GREEK`); an editor's expansion in parentheses
(``d(is) m(anibus)``) is not read (:func:`stone_text`): the stone has ``d m``."""

LATIN_LANGS = ("la", "lat")
GREEK_LANGS = ("grc", "el", "gr", "ell")


_EXPANSION = re.compile(r"\([^()]*\)")


def stone_text(text: str, alphabet: Alphabet) -> str:
    """``text`` as the stone has it, for an alphabet that drops expansions (Latin): every
    ``(...)`` removed -- ``co(n)s(ulibus)`` -> ``cos``, a symbol's ``((centurio))`` whole;
    unchanged for one that reads them."""
    if alphabet.expansions != "drop" or "(" not in text:
        return text
    while True:                       # ((centurio)), a symbol resolved: the inner, then the outer
        out = _EXPANSION.sub("", text)
        if out == text:
            return out
        text = out


def fold_uv(text: str) -> str:
    """``text`` with ``v`` read as ``u`` (one letter on the stone): how restorations are
    compared with editors' supplements."""
    return text.replace("v", "u")


def letters_by_script(text: str) -> dict[str, int]:
    """How many of ``text``'s letters are Latin and how many Greek."""
    count = {"latin": 0, "greek": 0}
    for c in text:
        if c.isalpha():
            name = unicodedata.name(c, "")
            if name.startswith("LATIN"):
                count["latin"] += 1
            elif name.startswith("GREEK"):
                count["greek"] += 1
    return count


def script_of(text: str) -> str | None:
    """``"latin"`` or ``"greek"``: the script of most of the letters of ``text`` (None: no
    letters of either)."""
    count = letters_by_script(text)
    if not count["latin"] and not count["greek"]:
        return None
    return "latin" if count["latin"] > count["greek"] else "greek"


def _base(lang: str | None) -> str | None:
    return lang.lower().split("-")[0] if lang else None


def alphabet_for(lang: str | None, text: str = "") -> Alphabet:
    """The alphabet an edition is read in: by its language (``xml:lang``), else by the script
    of ``text``; Greek when neither says Latin."""
    base = _base(lang)
    if base in LATIN_LANGS:
        return LATIN
    if base in GREEK_LANGS:
        return GREEK
    return LATIN if script_of(text) == "latin" else GREEK


def language_name(alphabet: Alphabet) -> str:
    """The alphabet's language for a person (``Latin``, ``Greek``)."""
    return alphabet.name
