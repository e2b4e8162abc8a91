"""A shape memory: what the training inscriptions hold at a place whose neighbourhood has the
same *shape* -- the lengths of its words -- mixed into the model's conditional like the phrase
memory.

Where a stone has lost most of a decree, no letter survives near a supplement, and the phrase
memory (:mod:`infill.models.phrases`), whose contexts must be read letter for letter, says
nothing. Yet an editor still knows the formula from its layout: "----- --- ------ --- --- -----"
is "ἔδοξε τᾶι βουλᾶι καὶ τῶι δάμωι". The shape memory is the phrase memory's mechanism (the same
hashed levels, hidden rest, Witten–Bell weights and mixture, the same file format) over contexts
read as shapes: every letter, the numeral, a lost ``-`` and an unknown ``^`` are one class, the
space and the text's edges stay themselves, punctuation is no neighbour. A context may hold lost
letters (in training: the editions' own losses, which IOSPE keeps as ``-``); the character
stored at a position is always a letter, the space or the numeral the edition reads there.

Its last two levels key a position by its shape *and* by the letters right beside it, where
they survive (:data:`SHAPE_NEAR`: the 3 characters left of it, or the 3 right of its hidden
rest, read as letters; the two keys hashed into one), so a lost stretch next to a surviving word
meets the parallels that share that word's end or beginning as well as the layout.

It is mixed into q after the names and before the phrase memory, so where letters survive
around a position the phrase memory has the last word (:attr:`CharMaskedLM.mixed`). Training
writes ``shapes.safetensors`` from the same texts as the phrase memory, at :data:`SHAPE_SIDES`
(with :data:`SHAPE_NEAR`) and β = :data:`SHAPE_BETA`, chosen on the IOSPE validation split
(docs/METHODS.md §1.7); a user's ``phrases.txt`` is counted into both memories.
"""
from __future__ import annotations

from pathlib import Path

from infill.models.phrases import PHRASE_REST, PhraseMemory, build_phrases, load_phrases

__all__ = ["SHAPES_FILE", "SHAPE_SIDES", "SHAPE_NEAR", "SHAPE_BETA", "build_shapes",
           "load_shapes"]

SHAPES_FILE = "shapes.safetensors"
SHAPE_SIDES = ((10, 10), (20, 20), (10, 10), (10, 10))
"""The levels training writes, in mixing order (chosen on the IOSPE validation split)."""
SHAPE_NEAR = ((0, 0), (0, 0), (3, 0), (0, 3))
"""Per level, how many characters left / right of the position (and its hidden rest) are read
as letters, not shapes: the last two levels key a position also by the letters that survive
beside it, where they do."""
SHAPE_BETA = 12.0


def build_shapes(texts: list[str], alphabet, weights: list[int] | None = None,
                 sides=SHAPE_SIDES, rest: int = PHRASE_REST, beta: float = SHAPE_BETA,
                 near=None, ends: bool = False) -> PhraseMemory:
    """The shape memory of ``texts`` (normalized, in ``alphabet``; each counted ``weights[i]``
    times, once by default); ``near``: per level, the letters read as letters (None:
    :data:`SHAPE_NEAR` at the default levels, none at others); ``ends``: as
    :func:`~infill.models.phrases.build_phrases`."""
    if near is None:
        near = SHAPE_NEAR if tuple(sides) == SHAPE_SIDES else ()
    return build_phrases(texts, alphabet, weights, sides, rest, beta, keyed="shapes",
                         near=near, ends=ends)


def load_shapes(path: Path, alphabet, user: Path | None = None) -> PhraseMemory:
    """Read and check ``shapes.safetensors`` (no pickle; one ModelLoadError naming the file),
    with a user's phrases counted in (``user``; None: ``phrases.txt`` beside it)."""
    return load_phrases(path, alphabet, keyed="shapes", user=user)
