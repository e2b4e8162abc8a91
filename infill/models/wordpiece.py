"""WordPiece tokens -> text as a reader writes it.

A BERT tokenizer splits on every punctuation mark, so its own decoder gives ``I ' ll``,
``lord ;`` and ``step - dame``; Hugging Face's clean-up then turns ``say 'tis`` into
``say'tis``. :func:`join_wordpieces` rebuilds the spacing of English text from the tokens alone:

- ``##x`` continues the word before it (no space);
- closing marks ``, . ; : ! ? ) ] }`` attach to what precedes them, opening ``( [ {`` to what
  follows;
- a hyphen joins its neighbours (``step-dame``);
- an apostrophe after a word attaches to it; it joins the next piece too when that is a
  contraction's tail (``I'll``, ``o'er``, ``know'st``, ``ta'en``), else it ends a possessive or
  an elision (``lovers' heads``, ``i' the``); before a word that begins with an elision it starts
  that word (``say 'tis``, ``'gainst``).
"""
from __future__ import annotations

__all__ = ["CLOSING", "OPENING", "join_wordpieces"]

CLOSING = frozenset(",.;:!?)]}")
OPENING = frozenset("([{")
ELIDED_STARTS = frozenset({"tis", "twas", "twere", "twill", "twould", "gainst", "em", "tween",
                           "twixt", "mongst", "bout", "scape"})
"""Words written with a leading apostrophe (``'tis``): the apostrophe before them starts them."""
CONTRACTION_TAILS = frozenset({"s", "ll", "t", "d", "st", "er", "en", "re", "ve", "m", "n", "rt",
                               "ld", "lt", "dst", "ert", "clock", "ve", "ry", "rs"})
"""What follows the apostrophe inside one word (``I'll``, ``o'er``, ``know'st``, ``o'clock``)."""


def _wordlike(tok: str) -> bool:
    return tok[:1].isalnum() or tok.startswith("##")


def _space_before(before: str | None, prev: str, tok: str, nxt: str | None) -> bool:
    """Whether a space separates ``prev`` (already written, after ``before``) from ``tok``."""
    if tok.startswith("##") or tok in CLOSING or tok == "-" or prev in OPENING or prev == "-":
        return False
    if tok == "'":
        if nxt is not None and nxt.lower() in ELIDED_STARTS:
            return True                  # say 'tis
        return not _wordlike(prev)       # I'll, lovers', o'er
    if prev == "'":
        if before is None or not _wordlike(before) or tok.lower() in ELIDED_STARTS:
            return False                 # the apostrophe opened this word: 'tis
        return tok.lower() not in CONTRACTION_TAILS
    return True


def join_wordpieces(tokens: list[str]) -> str:
    """The text of a sequence of WordPiece tokens (special tokens already removed)."""
    out: list[str] = []
    for i, tok in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        before = tokens[i - 2] if i >= 2 else None
        if out and _space_before(before, tokens[i - 1], tok, nxt):
            out.append(" ")
        out.append(tok[2:] if tok.startswith("##") else tok)
    return "".join(out)
