"""The Greek character alphabet (Ithaca's convention) and the normalizer for polytonic Greek.

Ids are laid out so that every *output* class comes first (ids ``0 .. n_outputs-1``) and the
input-only symbols follow; a character has the same id as input and as output:

====  ==========  =====================================================================
id    symbol      meaning
====  ==========  =====================================================================
0     ``^``       unknown character (output class, never placed in a gap by default)
1     `` ``       space (word boundary)
2     ``-``       missing character (damage); input context, never a training label
3-26  ``α..ω``    the 24 letters (final sigma is ``σ``)
27    ``0``       numeral (every digit)
28-31 ``. , ; ·`` punctuation
32    ``?``       mask: "character to restore" (input only, not an output class)
33    ``#``       padding (input only)
34    ``<``       start of text (input only)
====  ==========  =====================================================================
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter

__all__ = ["Alphabet", "GREEK", "divider_of", "lunate_of", "normalize", "unknown_characters",
           "word_weights"]

LETTERS = "αβγδεζηθικλμνξοπρστυφχψω"
PUNCTUATION = ".,;·"

# Letters that have an obvious equivalent in the 24-letter alphabet (after NFD + lowercase).
_MAP = {
    "ς": "σ", "ϲ": "σ",            # final and lunate sigma
    "ϐ": "β", "ϑ": "θ", "ϕ": "φ", "ϰ": "κ", "ϱ": "ρ", "ϵ": "ε", "ϖ": "π",  # letter variants
    "\u00b7": "·", "\u0387": "·",  # middle dot / ano teleia (the Greek colon)
    "\u037e": ";",                 # Greek question mark
    # word dividers of inscriptions (ΕΔΟΞΕ:ΤΕΙ:ΒΟΛΕΙ, the tricolon ⁝): the word space -- dropped,
    # they joined the words they divide (εδοξετειβολει)
    ":": " ", "\u205d": " ", "\u205e": " ", "\u22ee": " ", "\ufe19": " ",
}
_WS = re.compile(r"\s+")
# apostrophes (elision) and the koronis: punctuation, dropped -- never the unknown symbol, although
# Unicode files some of them as modifier letters or symbols (U+02BC, U+1FBD, U+1FBF, U+00B4 ...)
_APOSTROPHES = frozenset("'\u2019\u2018\u02bc\u02b9\u02bd\u1fbd\u1fbf\u1fef\u1ffd\u00b4\u0060\u2032")


class Alphabet:
    """A character alphabet for an Ithaca-style model (see the module docstring for the ids)."""

    def __init__(self, letters: str = LETTERS, numeral: str = "0", punctuation: str = PUNCTUATION,
                 unk: str = "^", space: str = " ", missing: str = "-", mask: str = "?",
                 pad: str = "#", start: str = "<", variants: dict[str, str] | None = None,
                 name: str = "Greek", expansions: str = "read"):
        self.letters, self.numeral, self.punctuation = letters, numeral, punctuation
        self.variants = dict(variants or {})      # letters written as another (Latin j -> i)
        self.name = name
        # an editor's expansion in parentheses, d(is): "read" as letters (Greek, as trained), or
        # "drop"ped -- the stone never had them (Latin, infill.data.latin)
        self.expansions = expansions
        self.unk, self.space, self.missing, self.mask, self.pad, self.start = (
            unk, space, missing, mask, pad, start)
        outputs = [unk, space, missing, *letters, numeral, *punctuation]
        self.symbols: list[str] = outputs + [mask, pad, start]
        if len(set(self.symbols)) != len(self.symbols):
            raise ValueError("alphabet symbols must be distinct")
        self.n_outputs = len(outputs)
        self.index = {c: i for i, c in enumerate(self.symbols)}
        self.unk_id, self.space_id, self.missing_id = (self.index[unk], self.index[space],
                                                      self.index[missing])
        self.mask_id, self.pad_id, self.start_id = (self.index[mask], self.index[pad],
                                                    self.index[start])
        self.letter_ids = [self.index[c] for c in letters]

    def __len__(self) -> int:
        """Number of input symbols (outputs + mask, pad, start)."""
        return len(self.symbols)

    @property
    def text_chars(self) -> str:
        """The characters a normalized text may contain (besides ``-`` and ``?``)."""
        return self.space + self.letters + self.numeral + self.punctuation

    def char_to_id(self, c: str) -> int:
        """Id of one character (``unk_id`` when the alphabet lacks it)."""
        return self.index.get(c, self.unk_id)

    def encode(self, text: str) -> list[int]:
        """Ids of an already normalized text, one per character (no start symbol)."""
        return [self.index.get(c, self.unk_id) for c in text]

    def decode(self, ids) -> str:
        """Characters of ids; padding and start are dropped, the mask is shown as ``?``."""
        return "".join(self.symbols[i] for i in ids if i not in (self.pad_id, self.start_id))

    def to_dict(self) -> dict:
        """The alphabet as ``charmodel.json`` records it (``variants`` and ``name`` only when
        they differ from Greek's, so Greek models' files are unchanged)."""
        extra = {**({"variants": self.variants} if self.variants else {}),
                 **({"name": self.name} if self.name != "Greek" else {}),
                 **({"expansions": self.expansions} if self.expansions != "read" else {})}
        return {"letters": self.letters, "numeral": self.numeral, "punctuation": self.punctuation,
                "unk": self.unk, "space": self.space, "missing": self.missing, "mask": self.mask,
                "pad": self.pad, "start": self.start, **extra}

    @classmethod
    def from_dict(cls, d: dict) -> "Alphabet":
        return cls(**d)


GREEK = Alphabet()


def _unknown(c: str) -> bool:
    """A character with content (a letter, number or symbol: Latin, CJK, emoji, ...; a
    private-use character such as U+E000, whose meaning only its font knows) that the alphabet
    cannot write; punctuation and marks are not content."""
    return unicodedata.category(c)[0] in "LNS" or unicodedata.category(c) == "Co"


def normalize(text: str, symbols: bool = True, strip: bool = True,
              alphabet: Alphabet = GREEK, unknown: bool = False) -> str:
    """Normalize (polytonic) Greek to the model's alphabet.

    Exactly, in order:

    1. Unicode NFD (decomposes accented letters; U+037E -> ``;`` and U+0387 -> U+00B7);
    2. lowercase;
    3. drop every combining mark: accents, breathings, diaeresis, and the iota subscript
       (``ᾳ`` -> ``α``, not ``αι``);
    4. map letter variants: final ``ς`` and lunate ``ϲ`` -> ``σ``; ``ϐ ϑ ϕ ϰ ϱ ϵ ϖ`` -> ``β θ φ κ ρ ε π``;
       ano teleia / middle dot -> ``·``; a word divider of inscriptions (``:``, the tricolon
       ``⁝``, ``⁞``, ``⋮``) -> the space; the alphabet's own ``variants`` (Latin ``j`` -> ``i``,
       its interpuncts -> the space, the ligatures ``æ œ`` -> ``ae oe``:
       :mod:`infill.data.latin`); every decimal digit -> ``0``;
    5. keep the 24 letters, ``0``, the punctuation ``. , ; ·`` and whitespace; with ``symbols``
       (default) also keep the restoration symbols ``-`` (missing) and ``?`` (to restore);
       with ``unknown`` (user input) a letter, number or symbol the alphabet lacks (Latin,
       CJK, emoji, ...) becomes the unknown symbol ``^``, as Ithaca does; drop everything else:
       other punctuation (elision apostrophes ``ʼ ’ ' ᾽``, koronis, quotes, dashes, brackets,
       ``!``), Greek numeral signs, and -- without ``unknown`` (training text) -- other
       scripts;
    6. collapse every whitespace run to one space; with ``strip`` (default) trim both ends.

    A dropped character never joins words: ``"δʼ ἰφθίμους"`` -> ``"δ ιφθιμουσ"``.
    """
    keep = set(alphabet.text_chars)
    if symbols:
        keep |= {alphabet.missing, alphabet.mask}
    out = []
    for c in unicodedata.normalize("NFD", text).lower():
        if unicodedata.combining(c) or c in _APOSTROPHES:
            continue
        c = alphabet.variants.get(c, _MAP.get(c, c))
        if len(c) > 1:                                  # a ligature: its letters (Latin æ)
            out += [x for x in c if x in keep]
            continue
        if c.isdigit():
            c = alphabet.numeral
        elif c.isspace():
            c = " "
        if c == " " or c in keep:
            out.append(c)
        elif unknown and _unknown(c):
            out.append(alphabet.unk)
    s = _WS.sub(" ", "".join(out))
    return s.strip() if strip else s


def divider_of(text: str, alphabet: Alphabet = GREEK) -> str | None:
    """The word divider ``text`` writes instead of spaces (``D·M·S``, ``ΕΔΟΞΕ:ΤΕΙ``): a
    character :func:`normalize` reads as the word space, where the text has no whitespace;
    None otherwise."""
    if any(c.isspace() for c in text):
        return None
    return next((c for c in text if alphabet.variants.get(c, _MAP.get(c)) == " "), None)


def lunate_of(text: str) -> dict[str, str]:
    """How a restored sigma is written in ``text``: as the lunate sigma (``ΑΠΟΛΛΩΝΙΟϹ``), where
    the text writes its sigmas so and no other (``{"σ": "ϲ", "Σ": "Ϲ"}``); else as it is
    (``{}``)."""
    if any(c in "ϲϹ" for c in text) and not any(c in "σςΣ" for c in text):
        return {"σ": "ϲ", "ς": "ϲ", "Σ": "Ϲ"}
    return {}


def unknown_characters(text: str, alphabet: Alphabet = GREEK) -> list[str]:
    """The distinct characters of ``text`` that :func:`normalize` (``unknown=True``) reads as
    the unknown symbol, in order of appearance."""
    seen: dict[str, None] = {}
    for ch in text:
        if normalize(ch, symbols=True, strip=False, alphabet=alphabet, unknown=True) == alphabet.unk \
                and ch != alphabet.unk:
            seen[ch] = None
    return list(seen)


def word_weights(texts, alphabet) -> Counter:
    """How often each word of ``texts`` (normalized) occurs: a maximal run of ``alphabet``'s
    letters that touches no missing, unknown or to-restore character (as
    :class:`infill.models.lexicon.WordLexicon` reads the input)."""
    letters = re.escape(alphabet.letters)
    near = letters + re.escape(alphabet.missing + alphabet.unk + alphabet.mask)
    word = re.compile(f"(?<![{near}])[{letters}]+(?![{near}])")
    return Counter(w for t in texts for w in word.findall(t))
