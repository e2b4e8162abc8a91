"""Restored Greek letters in the user's script: a lexicon of accented word forms.

A Greek model restores letters in its normalized alphabet (no accents, no case, ``σ`` for final
sigma). :class:`Lexicon` maps a normalized word to the accented form the training corpora write
most often; :meth:`Lexicon.script` gives the restored part of a word in that form when the whole
word (the user's letters around the restoration plus the restored ones) is a known word, and the
plain letters otherwise (a word-final ``σ`` written ``ς``).

The lexicon ships with the package (``data/greek/accents.tsv.gz``: ``normalized<TAB>form`` lines,
built by ``python -m infill.training.accents``) from the literary corpus and the IOSPE training
split, so it needs no corpus at run time.
"""
from __future__ import annotations

import gzip
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from infill.data.builtins import assets_dir
from infill.data.greek import normalize
from infill.errors import ModelLoadError

__all__ = ["Lexicon", "default_lexicon", "in_users_script", "lexicon_path", "script_span",
           "words"]

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_LEXICON: "Lexicon | None" = None


def lexicon_path() -> Path:
    return assets_dir() / "greek" / "accents.tsv.gz"


def words(text: str) -> list[str]:
    """The words of a text: runs of letters (accents and breathings included), NFC; a token
    touching a missing (``-``) or restored (``?``) character is a fragment and left out."""
    out: list[str] = []
    for token in unicodedata.normalize("NFC", text).split():
        if "-" not in token and "?" not in token:
            out += _WORD.findall(token)
    return out


def _clusters(word: str) -> list[str]:
    """A word as base letters each with its combining marks (NFD), NFC'd back one by one."""
    out: list[str] = []
    for c in unicodedata.normalize("NFD", word):
        if unicodedata.combining(c) and out:
            out[-1] += c
        else:
            out.append(c)
    return [unicodedata.normalize("NFC", x) for x in out]


class Lexicon:
    """normalized word -> most frequent accented form."""

    def __init__(self, forms: dict[str, str]):
        self.forms = forms

    def __len__(self) -> int:
        return len(self.forms)

    @classmethod
    def build(cls, texts: Iterable[str], min_count: int = 1) -> "Lexicon":
        """The most frequent form of every word of ``texts`` (ties: the form seen first)."""
        counts: dict[str, Counter] = {}
        for t in texts:
            for w in words(t):
                key = normalize(w, symbols=False)
                if key and " " not in key and len(key) == len(_clusters(w)):
                    counts.setdefault(key, Counter())[w] += 1
        forms = {k: c.most_common(1)[0][0] for k, c in counts.items()
                 if sum(c.values()) >= min_count}
        return cls(forms)

    def save(self, path: str | Path) -> None:
        lines = "".join(f"{k}\t{v}\n" for k, v in sorted(self.forms.items()))
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                                     filename="", compresslevel=9) as f:
            f.write(lines.encode("utf-8"))       # no time stamp: the same corpus, the same bytes

    @classmethod
    def load(cls, path: str | Path) -> "Lexicon":
        try:
            with gzip.open(path, "rt", encoding="utf-8") as f:
                rows = [line.rstrip("\n").split("\t") for line in f]
        except (OSError, UnicodeDecodeError, EOFError) as e:
            raise ModelLoadError(f"cannot read the accent lexicon {str(path)!r}: {e}") from None
        if any(len(r) != 2 for r in rows):
            raise ModelLoadError(f"the accent lexicon {str(path)!r} is not <word>TAB<form> lines")
        return cls(dict(rows))

    def script(self, word: str, lo: int, hi: int) -> tuple[str, bool]:
        """The characters ``word[lo:hi]`` (restored, normalized letters inside the user's
        ``word``) in the user's script: ``(text, True)`` taken from the known accented form
        of the whole word, else ``(plain letters, False)``."""
        plain = word[lo:hi]
        if plain.isupper():               # in capitals, as the text around them: no accents
            return plain, False
        if (hi == len(word) or not word[hi].isalpha()) and plain.endswith("σ"):
            plain = plain[:-1] + "ς"
        # map each letter of the word to its position in the normalized key (punctuation
        # touching the word, "μουσα,", is not part of it: the lexicon's keys are letters)
        key, where = [], []
        for c in word:
            n = normalize(c, symbols=False, strip=False)
            letter = n.isalpha()
            where.append(len(key) if letter else None)
            if letter:
                key.append(n)
        form = self.forms.get("".join(key))
        if form is None:
            return plain, False
        clusters = _clusters(form)
        idx = [where[i] for i in range(lo, hi) if where[i] is not None]
        if len(clusters) != len(key) or len(idx) != hi - lo:
            return plain, False
        return "".join(clusters[i] for i in idx), True


def in_users_script(text: str, spans, lexicon: "Lexicon | None" = None
                    ) -> tuple[str, list[str], list[bool]]:
    """A filled ``text`` whose ``spans`` hold restored (normalized) letters -> (text, fills,
    accented): each fill rewritten by :meth:`Lexicon.script` word by word (``accented`` when
    every word it touches is known), the text around the fills untouched. A fill whose
    accented form would change its length (a letter with no precomposed form) stays plain, so
    the spans keep their places."""
    lexicon = lexicon if lexicon is not None else default_lexicon()
    fills = [text[a:b] for a, b in spans]
    if lexicon is None:
        return text, fills, [False] * len(fills)
    out, accented, last = [], [], 0
    for k, (a, b) in enumerate(spans):
        piece, known = script_span(text, a, b, lexicon)
        if len(piece) != b - a:
            piece, known = text[a:b], False
        out += [text[last:a], piece]
        fills[k], last = piece, b
        accented.append(known)
    out.append(text[last:])
    return "".join(out), fills, accented


def script_span(text: str, start: int, end: int, lexicon: Lexicon) -> tuple[str, bool]:
    """``text[start:end]`` (restored letters) in the user's script, word by word: (text, whether
    every word it touches is a known word)."""
    pieces, known_all, i = [], True, start
    while i < end:
        if text[i] == " ":
            pieces.append(" ")
            i += 1
            continue
        ws = text.rfind(" ", 0, i) + 1
        we = text.find(" ", i)
        we = len(text) if we < 0 else we
        stop = min(we, end)
        piece, known = lexicon.script(text[ws:we], i - ws, stop - ws)
        pieces.append(piece)
        known_all = known_all and known
        i = stop
    return "".join(pieces), known_all and any(p != " " for p in pieces)


def default_lexicon() -> Lexicon | None:
    """The lexicon shipped with the package (None when it is absent)."""
    global _LEXICON
    if _LEXICON is None:
        p = lexicon_path()
        if not p.is_file():
            return None
        _LEXICON = Lexicon.load(p)
    return _LEXICON
