"""Partly visible letters in a text: letter sets ``#[ηιν]``, Leiden underdots, look-alikes.

A position to restore may be limited to a set of letters (a damaged letter whose trace allows only
a few): ``#[ηιν]`` stands for *one* character (residue) to restore, limited to η, ι or ν. It is
a ``?`` that may take only those letters, and joins the ``?`` run it touches (``??#[ηιν]?`` is one
gap of four positions). The syntax is infill's own: every bracket of ASCII already means
something in Leiden (``[αβ]`` restored, ``{αβ}`` superfluous, ``(αβ)`` expanded, ``<αβ>`` added),
and ``#`` is neither a Leiden siglum, nor a letter of any model's alphabet, nor a residue; a
letter set is read before the Leiden sigla, so it may stand anywhere, also inside brackets.
Inside the brackets each character is one allowed letter, written as the user writes Greek
(accents, capitals and final sigma are read as the model reads them) or as residues.

A Leiden underdot (U+0323 after a letter, ``ẹ``: the editor reads the letter but it is not
certain) is read by ``unclear``: ``keep`` (default) reads the letter as written (the underdot is
dropped as every diacritic is); ``restore`` makes the position a letter set of that letter's
look-alikes (:func:`lookalikes`, the Greek epigraphic capitals). EpiDoc ``<unclear>`` follows the
same choice (:mod:`infill.data.epidoc`).

The reading of a text happens in two steps, because Leiden sigla are read in between
(:mod:`infill.jobs.inputs`): :func:`mark_sets` puts :data:`PLACE` at every restricted position and
keeps the sets; :func:`place_sets` turns each :data:`PLACE` into ``?`` and gives the letters per
gap (the ``letters`` of :func:`infill.fill`: one entry per gap, None or one entry per position).
"""
from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from infill.errors import InputError
from infill.lazy import LazyModule
from infill.names import UNCLEAR

json = LazyModule("json")                     # `infill run --help` imports this module: no json
greek = LazyModule("infill.data.greek")       # nor the alphabet tables
latin = LazyModule("infill.data.latin")

__all__ = ["OPEN", "CLOSE", "PLACE", "UNCLEAR", "Marked", "check_letters", "entry_tokens",
           "lookalikes", "lookalike_table", "mark_sets", "place_sets", "has_sets", "read_sets"]

OPEN, CLOSE = "#[", "]"
"""A letter set is written ``#[`` letters ``]``."""
PLACE = "\ue000"
"""Stands for a restricted position between :func:`mark_sets` and :func:`place_sets` (a private
use character: Leiden's reader passes it through as text; refused in a user's text)."""
UNDERDOT = "\u0323"
_MARKS = "\u0300-\u036f"
_UNDERDOTTED = re.compile(rf"([^\W\d_])([{_MARKS}]*{UNDERDOT}[{_MARKS}]*)")


@dataclass(frozen=True)
class Marked:
    """A text with each restricted position as :data:`PLACE`, and their ``sets`` in order."""

    text: str
    sets: tuple[str, ...] = ()


TABLES = {"greek": "lookalikes.json", "latin": "lookalikes_latin.json"}
"""The shipped look-alike tables by script (``infill/data/``)."""


@functools.lru_cache(maxsize=2)
def lookalike_table(script: str = "greek") -> dict:
    """The shipped look-alike groups of a script (:data:`TABLES`: ``letters``, ``traces``, and
    where they come from)."""
    with resources.files("infill.data").joinpath(TABLES[script]).open(encoding="utf-8") as f:
        return json.load(f)


def lookalikes(letter: str) -> str:
    """The letters a partial trace of ``letter`` may be, itself included, from the table of its
    script (any Greek spelling: capital, accented, final sigma; a Latin capital or small
    letter, ``j`` as ``i``); InputError when no table has it."""
    script = "latin" if unicodedata.name(letter[:1], "").startswith("LATIN") else "greek"
    alphabet = latin.LATIN if script == "latin" else greek.GREEK
    key = greek.normalize(letter, symbols=False, alphabet=alphabet)
    found = lookalike_table(script)["letters"].get(key)
    if found is None:
        raise InputError(f"no look-alikes known for the unclear letter {letter!r} (the tables "
                         "hold the Greek and Latin letters); write its letters as #[...]",
                         field="unclear")
    return found


def has_sets(text: str) -> bool:
    """Whether ``text`` holds a letter set or an underdot (also one composed with its letter:
    ``Ẹ``, U+1EB8)."""
    return OPEN in text or UNDERDOT in unicodedata.normalize("NFD", text)


def mark_sets(text: str, unclear: str = "keep") -> Marked:
    """Every ``#[...]`` of ``text`` (and, with ``unclear="restore"``, every underdotted letter)
    as :data:`PLACE`, with its letters. InputError (one line, with the column) for an empty
    set, one never closed, a set inside a set, or :data:`PLACE` in the text."""
    if unclear not in UNCLEAR:
        raise InputError(f"unknown unclear {unclear!r}; choose from {', '.join(UNCLEAR)}",
                         field="unclear")
    if PLACE in text:
        raise InputError(f"the text holds U+E000 (private use) at column {text.index(PLACE) + 1}",
                         field="letters")
    out, sets, i = [], [], 0
    while True:
        j = text.find(OPEN, i)
        if j < 0:
            out.append(text[i:])
            break
        end = text.find(CLOSE, j + len(OPEN))
        if end < 0:
            raise _fail(text, j, "'#[' is never closed")
        body = text[j + len(OPEN):end]
        if OPEN in body:
            raise _fail(text, j, "a letter set inside a letter set")
        letters = "".join(c for c in body if not c.isspace())
        if not letters:
            raise _fail(text, j, "an empty letter set: nothing may be placed there")
        out += [text[i:j], PLACE]
        sets.append(letters)
        i = end + len(CLOSE)
    marked = "".join(out)
    if unclear == "restore" and any(UNDERDOT in unicodedata.normalize("NFD", c) for c in marked):
        marked = "".join(unicodedata.normalize("NFD", c)
                         if UNDERDOT in unicodedata.normalize("NFD", c) else c for c in marked)
        return _restore_underdots(marked, sets)
    return Marked(marked, tuple(sets))


def _fail(text: str, col: int, message: str) -> InputError:
    return InputError(f"letter set at column {col + 1}: {message}: "
                      f"{text[max(0, col - 12):col + 12]!r}", field="letters")


def _restore_underdots(text: str, sets: list[str]) -> Marked:
    """Each underdotted letter as :data:`PLACE` with its look-alikes, the sets kept in text
    order among those of ``#[...]``."""
    out, found, i, k = [], [], 0, 0
    for m in _UNDERDOTTED.finditer(text):
        before = text[i:m.start()]
        n = before.count(PLACE)
        found += sets[k:k + n]
        k += n
        out += [before, PLACE]
        found.append(lookalikes(m.group(1)))
        i = m.end()
    rest = text[i:]
    found += sets[k:k + rest.count(PLACE)]
    return Marked("".join(out) + rest, tuple(found))


def place_sets(text: str, sets: tuple[str, ...], marker: str = "___",
               mask_tokens: tuple[str, ...] = ()) -> tuple[str, list | None]:
    """(``text`` with every :data:`PLACE` as ``?``, the letters per gap): the gaps are the
    marker, each run of ``?`` (restricted positions included) and each mask token, in text
    order, as the character and protein models read them; a gap without a set gets None, a
    gap with one a list with an entry per position. None when there is no set."""
    if not sets:
        return text, None
    if text.count(PLACE) != len(sets):
        raise InputError(f"{len(sets)} letter sets for {text.count(PLACE)} restricted positions")
    kinds = [re.escape(marker)] if marker and set(marker) != {"?"} else []
    kinds += [f"[?{PLACE}]+"] + [re.escape(t) for t in mask_tokens if t]
    letters, k = [], 0
    for m in re.finditer("|".join(kinds), text):
        run = m.group()
        if PLACE not in run:
            letters.append(None)
            continue
        entry = []
        for c in run:
            entry.append(sets[k] if c == PLACE else None)
            k += c == PLACE
        letters.append(entry)
    return text.replace(PLACE, "?"), letters


def read_sets(text: str, unclear: str = "keep", marker: str = "___",
              mask_tokens: tuple[str, ...] = ()) -> tuple[str, list | None]:
    """:func:`mark_sets` then :func:`place_sets` (a text read without Leiden sigla)."""
    marked = mark_sets(text, unclear)
    return place_sets(marked.text, marked.sets, marker, mask_tokens)


def check_letters(letters) -> None:
    """InputError naming 'letters' unless it is None or a list with, per gap, None or a list
    with, per position, None, a non-empty string or a non-empty list of strings / token ids."""
    if letters is None:
        return
    if isinstance(letters, (str, bytes)) or not isinstance(letters, Sequence):
        raise InputError("letters must be a list with one entry per gap (None, or a list with "
                         f"one entry per position), got {type(letters).__name__}", field="letters")
    for k, gap in enumerate(letters, 1):
        if gap is None:
            continue
        if isinstance(gap, (str, bytes)) or not isinstance(gap, Sequence):
            raise InputError(f"letters: gap {k} must be None or a list with one entry per "
                             f"position, got {gap!r}", field="letters")
        for j, entry in enumerate(gap, 1):
            if entry is not None:
                entry_tokens(entry, f"gap {k}, position {j}")


def entry_tokens(entry, where: str) -> list:
    """The tokens of one entry (a string: its characters; a list: its items)."""
    if isinstance(entry, str):
        tokens = [c for c in unicodedata.normalize("NFC", entry)
                  if not c.isspace() and not unicodedata.combining(c)]
    elif isinstance(entry, (list, tuple, set, frozenset)):
        tokens = list(entry)
        if not all(isinstance(t, str) or (isinstance(t, int) and not isinstance(t, bool))
                   for t in tokens):
            raise InputError(f"letters ({where}): a set holds token strings or ids, got "
                             f"{entry!r}", field="letters")
    else:
        raise InputError(f"letters ({where}): a set is a string of letters or a list of tokens, "
                         f"got {entry!r}", field="letters")
    if not tokens:
        raise InputError(f"letters ({where}): an empty set: nothing may be placed there",
                         field="letters")
    return tokens
