"""Leiden-convention sigla (epigraphic editions) -> infill's restoration conventions.

infill's Greek models read ``?`` = one character to restore (a run of them is one gap), ``-`` =
a missing character that is not restored, and the gap marker (``___``) = ``gap`` characters to
restore. Editions print damaged text with the Leiden sigla instead; :func:`convert` rewrites
them, exactly as follows (everything else is left as typed; the model's normalizer later drops
accents, case and punctuation):

==========================  ==========================================  =====================
Leiden                      meaning                                     becomes
==========================  ==========================================  =====================
``[...]``, ``[. . .]``      lacuna, one dot per lost letter             ``???`` (one ``?`` per
                            (``․`` U+2024 counts as a dot)              dot)
``[.3]``                    lacuna of 3 letters                         ``???``
``[c.3]``, ``[ca. 3]``      lacuna of about 3 letters                   the gap marker, of
                                                                        2-4 letters (a note)
``[- - -]``, ``[---]``      lacuna of unknown length                    ``---`` (missing, not
                                                                        restored; one per
                                                                        hyphen)
``[αβγ]``                   letters restored by the editor              ``αβγ`` (kept as text)
``[αβ..]``, ``[αβ.2]``      restored letters and lost ones              ``αβ??``
``[[αβ]]``, ``⟦αβ⟧``,       erased in antiquity, still legible          ``αβ``
``〚αβ〛``
``((αβ))``                  a symbol the editor resolves (EDH's         as ``(αβ)``
                            ``((centurio))``, ``((mulieris))``)
``(αβ)``                    expansion of an abbreviation                ``αβ``; in Latin
                                                                        script kept as
                                                                        ``(ab)`` (Latin
                                                                        reads the stone)
``⟨αβ⟩``, ``<αβ>``          letters the engraver omitted                ``αβ``
``<αβ=ΓΔ>``                 the editor's letters for the stone's ``ΓΔ``  ``αβ``
                            (``<i=E>``, as EDH writes a correction)
``{αβ}``                    superfluous letters (engraver's error)      dropped
``⸢αβ⸣``                    partly preserved letters                    ``αβ``
``(?)``                     the editor's doubt                          dropped (and a note)
``vac.``, ``vacat``,        uninscribed space                           one space
``(vac. 3)``
``|``, ``‖``                line / column division                      dropped
==========================  ==========================================  =====================

Inside square brackets a space between two sigla (``. .``, ``- -``) is typography and is
dropped, as are spaces just inside the brackets; a space next to restored text is a word
boundary and is kept. Dots *outside* square brackets are left alone (``.`` is punctuation in
the Greek alphabet): write ``?`` for illegible letters there. Underdots (U+0323, uncertain
letters) are kept; the normalizer drops them with the other diacritics (with ``unclear="restore"``
they are restored among their look-alikes instead, and ``#[ηιν]`` is a letter set: both are read
before these sigla, :mod:`infill.data.letters`). Occurrences of the gap
marker are left untouched, inside brackets too.

Malformed sigla raise :class:`~infill.errors.InputError` (one line, with the column):
unbalanced or crossed brackets, brackets of one kind nested in the same kind, empty brackets,
digits in a lacuna that are not a count (``[.3]``, ``[c.3]``), a lacuna of unknown length
written ``[.?]``, and counts above :data:`MAX_COUNT`.

An approximate lacuna ``[c.n]`` becomes the gap marker with a range of lengths,
:func:`~infill.data.epidoc.approximate_lengths` (n ± a fifth of n, at least ± 1, as EpiDoc's
``precision="low"``), listed in :attr:`Converted.gaps`: every length is decoded and all the
completions ranked together (``infill.fill(..., gap=converted.gap_list(gap))``). A range of more
than :data:`~infill.fields.MAX_LENGTHS` lengths is refused; when the text's ranges give
more than :data:`~infill.fields.MAX_VARIANTS` combinations, each lacuna is read as
exactly n characters instead (and a note says so).
"""
from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass

from infill.data.epidoc import approximate_lengths
from infill.data.latin import script_of
from infill.errors import InputError
from infill.fields import MAX_LENGTHS, MAX_VARIANTS

__all__ = ["MAX_COUNT", "Converted", "convert", "has_sigla"]

MAX_COUNT = 500
"""The largest lacuna count accepted (``[.500]``)."""

# opening sigla -> (kind, closing siglum); ``[[``/``]]`` are read before ``[``/``]``
_OPEN = {"[[": ("erasure", "]]"), "⟦": ("erasure", "⟧"), "〚": ("erasure", "〛"),
         "((": ("symbol", "))"),
         "[": ("lacuna", "]"), "(": ("expansion", ")"), "⟨": ("addition", "⟩"),
         "<": ("addition", ">"), "{": ("deletion", "}"), "⸢": ("partial", "⸣")}
_CLOSE = {close: opener for opener, (_, close) in _OPEN.items()}
_DIVIDERS = "|‖"
_DOTS = ".\u2024"

_VACAT = re.compile(r"\(\s*vac(?:at|\.)(?:\s*(?:\d+|\?))?\s*\)|\bvac(?:at\b|\.)(?:\s*\d+)?")
_DOUBT = re.compile(r"\(\s*\?\s*\)")
_APPROX = re.compile(r"ca?\.\s*(\d+)")
_APPROX_BARE = re.compile(r"ca?\.\s*\]")        # [c.]: the count left out
_DECIMAL = re.compile(r"[.,]\d+")                # [c.2.5]: not a whole count
_EXACT = re.compile(r"[.\u2024](\d+)")
_SIGLA_CHARS = "[]⟦⟧〚〛()⟨⟩<>{}⸢⸣|‖"
_SIGLA = re.compile(r"[\[\]⟦⟧〚〛()⟨⟩<>{}⸢⸣|‖]|vac(?:at|\.)")


@dataclass(frozen=True)
class Converted:
    """The converted ``text`` and ``notes`` on what was read loosely (approximate lacunae,
    dropped doubt marks)."""

    text: str
    notes: tuple[str, ...] = ()
    gaps: tuple[tuple[int, int] | None, ...] = ()
    """One entry per gap marker of ``text``, in order, when it has approximate lacunae: their
    (fewest, most) characters, None for a marker typed by the user; empty otherwise."""
    breaks: int = 0
    """Lacunae of unknown length (``[---]``) left as breaks (``unknown`` not given)."""

    def gap_list(self, gap):
        """The ``gap`` option of :func:`infill.fill` for ``text``: ``gap`` itself without
        approximate lacunae, else one length per marker (``gap`` for the user's markers)."""
        if not self.gaps:
            return gap
        return [gap if g is None else g for g in self.gaps]


def has_sigla(text: str) -> bool:
    """Whether ``text`` holds any Leiden siglum that :func:`convert` rewrites."""
    return bool(_SIGLA.search(text))


def convert(text: str, marker: str = "___", unknown: tuple[int, int] | None = None
            ) -> Converted:
    """Rewrite the Leiden sigla of ``text`` into infill's ``?`` / ``-`` conventions (see the
    module docstring for the exact table). Text without sigla comes back unchanged. With
    ``unknown`` (fewest, most), a lacuna of unknown length (``[---]``) is the gap marker of that
    range instead of a break (``unknown_lengths``, METHODS §1.3)."""
    if not has_sigla(text):
        return Converted(text)
    notes: list[str] = []
    if _DOUBT.search(text):
        notes.append("the editor's doubt marks '(?)' were dropped")
        text = _DOUBT.sub("", text)
    text = _VACAT.sub(" ", text)

    unknown = unknown if marker else None
    scan = _Scanner(text, marker, ranged=bool(marker), unknown=unknown)
    out = scan.run(ranged_notes := list(notes))
    combos = math.prod(hi - lo + 1 for lo, hi in scan.spans.values())
    if combos <= MAX_VARIANTS:
        return Converted(out, tuple(ranged_notes), tuple(scan.gaps) if scan.spans else (),
                         len(scan.breaks))
    if unknown is not None and scan.unknowns:
        _check_unknown_combos(scan.unknowns, unknown)
    notes.append(f"the {combos} combinations of this text's approximate lacuna lengths exceed "
                 f"{MAX_VARIANTS}: each decoded as exactly its stated length")
    scan = _Scanner(text, marker, ranged=False, unknown=unknown)
    out = scan.run(notes)
    return Converted(out, tuple(notes), tuple(scan.gaps) if scan.spans else (), len(scan.breaks))


def _check_unknown_combos(count: int, unknown: tuple[int, int]) -> None:
    """InputError when ``count`` lacunae of unknown length at ``unknown`` lengths each give more
    combinations than :data:`MAX_VARIANTS`."""
    combos = (unknown[1] - unknown[0] + 1) ** count
    if combos > MAX_VARIANTS:
        raise InputError(f"the text's {count} lacunae of unknown length ([---]) at "
                         f"{unknown[0]}-{unknown[1]} characters each give {combos:,} combinations "
                         f"of lengths, more than {MAX_VARIANTS}; narrow unknown_lengths or "
                         "restore fewer of them at a time", field="unknown_lengths")


class _Scanner:
    """One left-to-right pass with a stack of open brackets."""

    def __init__(self, text: str, marker: str, ranged: bool = True,
                 unknown: tuple[int, int] | None = None):
        self.text, self.marker, self.ranged, self.unknown = text, marker, ranged, unknown
        self.unknowns = 0                                # lacunae of unknown length restored
        self.breaks: set[int] = set()                    # columns of those left as breaks
        self.spans: dict[int, tuple[int, int]] = {}     # out index -> range of [c.n] lacunae
        self.gaps: list[tuple[int, int] | None] = []    # per marker of the joined text
        self.stack: list[tuple[str, str, int]] = []     # (opener, kind, column)
        self.open_kinds: set[str] = set()                # the kinds on the stack
        self.out: list[tuple[str, str]] = []            # (kind, piece): text | sigla | space | edge

    def fail(self, message: str, col: int) -> InputError:
        return InputError(f"malformed Leiden sigla at column {col + 1}: {message}: "
                          f"{self.text[max(0, col - 12):col + 12]!r}")

    def in_kind(self, kind: str) -> bool:
        return kind in self.open_kinds

    def emit(self, kind: str, piece: str) -> None:
        if not self.in_kind("deletion"):
            self.out.append((kind, piece))

    def run(self, notes: list[str]) -> str:
        t, i = self.text, 0
        stops = "".join(set(_SIGLA_CHARS + (self.marker[:1] or "[")))
        plain = re.compile(f"[^{re.escape(stops)}]+")
        while i < len(t):
            if "lacuna" not in self.open_kinds:
                m = plain.match(t, i)     # a run of plain text, in one piece (linear, fast)
                if m:
                    self.emit("text", m.group(0))
                    i = m.end()
                    continue
            if self.marker and t.startswith(self.marker, i):
                self.emit("text", self.marker)
                i += len(self.marker)
                continue
            opener = next((o for o in ("[[", "((") if t.startswith(o, i)), None) or \
                (t[i] if t[i] in _OPEN else None)
            if opener == "[[" and self.in_kind("lacuna"):
                raise self.fail("'[' inside a lacuna", i + 1)
            if opener is not None:
                kind = _OPEN[opener][0]
                if self.in_kind(kind):
                    raise self.fail(f"{opener!r} inside another {kind}", i)
                self.stack.append((opener, kind, i))
                self.open_kinds.add(kind)
                self.emit_edge(kind)
                i += len(opener)
                continue
            closer = self.closer_at(i)
            if closer is not None:
                self.close(closer, i)
                i += len(closer)
                continue
            if t[i] in _DIVIDERS:
                i += 1
                continue
            if self.in_kind("lacuna"):
                i = self.lacuna_item(i, notes)
                continue
            self.emit("text", t[i])
            i += 1
        if self.stack:
            opener, kind, col = self.stack[-1]
            raise self.fail(f"{opener!r} ({kind}) is never closed", col)
        return self.join()

    def closer_at(self, i: int) -> str | None:
        t = self.text
        if t[i] not in _CLOSE and not t.startswith(("]]", "))"), i):
            return None
        # ']]' closes an erasure '[[' unless the innermost bracket is a lacuna '['; '))' a '(('
        for double in ("]]", "))"):
            if t.startswith(double, i) and self.stack and self.stack[-1][0] == _CLOSE[double]:
                return double
        return t[i]

    def close(self, closer: str, i: int) -> None:
        opener = _CLOSE[closer]
        if not self.stack:
            raise self.fail(f"{closer!r} closes nothing", i)
        top, kind, col = self.stack[-1]
        if top != opener:
            raise self.fail(f"{closer!r} closes {top!r} opened at column {col + 1}", i)
        start = next(n for n in range(len(self.out) - 1, -1, -1)
                     if self.out[n] == ("edge", kind + ":open")) \
            if not self.in_kind("deletion") else None
        if start is not None and start == len(self.out) - 1:
            raise self.fail(f"empty {opener}{closer}", col)
        if kind == "deletion" and col + 1 == i:
            raise self.fail(f"empty {opener}{closer}", col)
        if kind == "addition" and start is not None:
            self.out[start + 1:] = self.corrected(self.out[start + 1:], col)
        self.stack.pop()
        self.open_kinds.discard(kind)     # one of a kind at a time: nesting it is refused
        if kind in ("expansion", "symbol") and start is not None and self.latin_expansion(start):
            self.out[start] = ("text", opener)  # kept: a Latin model reads the stone's letters
            self.emit("text", closer)
            return
        self.emit_edge(kind, opening=False)

    def corrected(self, items: list, col: int) -> list:
        """The letters of ``<...>`` as the editor reads them: in ``<i=E>`` (the editor's ``i``
        for the stone's ``E``) the part before ``=``."""
        if not all(kind == "text" for kind, _ in items):
            return items
        joined = "".join(piece for _, piece in items)
        if "=" not in joined:
            return items
        editor = joined.split("=")[0]
        if not editor.strip():
            raise self.fail("no letters before '=' in a correction <...=...>", col)
        return [("text", editor)]

    def latin_expansion(self, start: int) -> bool:
        """Whether the expansion opened at ``self.out[start]`` is in Latin script (kept in
        parentheses: the Latin model drops it, :func:`infill.data.latin.stone_text`, and the
        output shows it)."""
        return script_of("".join(p for k, p in self.out[start + 1:] if k == "text")) == "latin"

    def emit_edge(self, kind: str, opening: bool = True) -> None:
        if kind == "deletion":
            return
        self.emit("edge", kind + (":open" if opening else ":close"))

    def lacuna_item(self, i: int, notes: list[str]) -> int:
        """One item inside square brackets: a count, a dot, a hyphen, a space or text."""
        t = self.text
        if _APPROX_BARE.match(t, i) and (i == 0 or not t[i - 1].isalpha()):
            raise self.fail("an approximate lacuna needs its count, as in [c.3]", i)
        m = _APPROX.match(t, i)
        if m and (i == 0 or not t[i - 1].isalpha()):
            if _DECIMAL.match(t, m.end()):
                raise self.fail(f"a lacuna count is a whole number of characters, not "
                                f"{t[i:_DECIMAL.match(t, m.end()).end()]!r}; as in [c.3]", i)
            n = self.count(m.group(1), i)
            if not self.ranged:
                notes.append(f"approximate lacuna {m.group(0)!r} read as exactly {n} characters")
                self.emit("sigla", "?" * n)
                return m.end()
            self.approximate(m.group(0), n, i, notes)
            return m.end()
        m = _EXACT.match(t, i)
        if m:
            self.emit("sigla", "?" * self.count(m.group(1), i))
            return m.end()
        c = t[i]
        if c in _DOTS:
            if t.startswith("?", i + 1):
                raise self.fail("a lacuna of unknown length ('.?') cannot be restored; give its "
                                "length ([.3]) or write it as missing ([---])", i)
            self.emit("sigla", "?")
        elif c == "-" and self.unknown is not None:
            return self.unknown_lacuna(i, notes)
        elif c in "-?":
            if c == "-":
                self.breaks.add(next(col for _, k, col in reversed(self.stack) if k == "lacuna"))
            self.emit("sigla", c)
        elif c.isspace():
            self.emit("space", c)
        elif c.isdigit():
            raise self.fail("digits in a lacuna must be a count, as in [.3] or [c.3]", i)
        else:
            self.emit("text", c)
        return i + 1

    def approximate(self, siglum: str, n: int, col: int, notes: list[str]) -> None:
        """``[c.n]``: the gap marker, decoded at every length of its range."""
        lo, hi = approximate_lengths(n)
        if hi - lo + 1 > MAX_LENGTHS:
            raise self.fail(f"an approximate lacuna {siglum!r} ranges over {lo}-{hi} characters, "
                            f"more than the limit of {MAX_LENGTHS} lengths; give its exact "
                            f"length as [.{n}]", col)
        if self.in_kind("deletion"):
            return
        self.spans[len(self.out)] = (lo, hi)
        notes.append(f"approximate lacuna {siglum!r} decoded at every length from {lo} to {hi}, "
                     f"all completions ranked together")
        self.emit("sigla", self.marker)

    def unknown_lacuna(self, i: int, notes: list[str]) -> int:
        """``[---]``, ``[- - -]`` with ``unknown`` lengths: the gap marker, decoded at every
        length of the range; returns the index after its hyphens."""
        m = re.compile(r"-(?:\s*-)*").match(self.text, i)
        if not self.in_kind("deletion"):
            lo, hi = self.unknown
            self.spans[len(self.out)] = (lo, hi)
            self.unknowns += 1
            if self.unknowns == 1:
                notes.append(f"lacunae of unknown length ([---]) decoded at every length from {lo} "
                             f"to {hi}, all completions ranked together")
            self.emit("sigla", self.marker)
        return m.end()

    def count(self, digits: str, col: int) -> int:
        significant = digits.lstrip("0") or "0"
        if len(significant) > len(str(MAX_COUNT)):     # never int() thousands of digits
            raise self.fail(f"a lacuna count must be between 1 and {MAX_COUNT}, got a number of "
                            f"{len(significant):,} digits", col)
        n = int(significant)
        if not 1 <= n <= MAX_COUNT:
            raise self.fail(f"a lacuna count must be between 1 and {MAX_COUNT}, got {n}", col)
        return n

    def join(self) -> str:
        """The pieces as text; lacuna spaces dropped next to an edge or between two sigla."""
        # what a lacuna space sits between: other brackets' edges are transparent
        kinds = ["edge" if p.startswith("lacuna:") else k for k, p in self.out]
        solid = [n for n, k in enumerate(kinds) if k not in ("space", "edge") or
                 self.out[n][1].startswith("lacuna:")]
        pieces = []
        for n, (kind, piece) in enumerate(self.out):
            if kind == "edge":
                continue
            if kind == "space":     # its solid neighbours, by bisection (linear overall)
                k = bisect.bisect_left(solid, n)
                prev = kinds[solid[k - 1]] if k > 0 else "edge"
                nxt = kinds[solid[k]] if k < len(solid) else "edge"
                if "edge" in (prev, nxt) or prev == nxt == "sigla":
                    continue
            pieces.append(piece)
            if n in self.spans:
                self.gaps.append(self.spans[n])
            elif kind == "text" and piece == self.marker:
                self.gaps.append(None)
        return re.sub(" {2,}", " ", "".join(pieces))
