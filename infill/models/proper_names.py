"""Names as a class of words (issue 35): what a whole lost word draws on when its neighbours say
a name stands there.

Editors restore "Διονύσιος [.........]" as a father's name although no letter of it survives:
a name follows a name, a month follows μηνός, a god follows θεῶι. The word pairs
(:class:`~infill.models.phrases.WordPairs`) give only the words seen beside a neighbour; this
class gives every name of the lacuna's length, weighted by how likely a name is there.

**The names** (``names.tsv`` beside the model): the words of the names the training
inscriptions' editions mark (``<persName>``, ``<name>``, ``<placeName>``, ``<rs type="month">``;
source ``iospe``, :func:`infill.data.inscriptions.training_names`) and the literary corpus's
capitalised words (source ``literary``, :func:`literary_names`), each with its count, normalized
as the model reads text. A user adds names with a text editor: a line ``name<TAB>weight<TAB>user``
(``Διονύσιος<TAB>5<TAB>user``: a name is normalized on reading, as the model reads its input);
a source the header's ``scales`` does not name
(``user``, say) counts at scale 1 and its names are members of the class.

**The class bigram.** A word v of the word pairs (``pairs.tsv``) is a NAME when it is a name of a
*class source* (``iospe`` and ``user`` by default: the marked names, not the literary capitals).
For a neighbour word w and a length L, k(w, L) is how often a NAME of L letters stood right after
w in the training inscriptions and N(w, L) how often any word of L letters did (and likewise
right before w). A neighbour that is itself a name but was never seen as a neighbour backs off to
the class: the counts of all NAME neighbours together.

**At a letter t of a word of L letters** with left neighbour w and/or right neighbour w' (as the
word pairs find them), with k = k(w, L) + k'(w', L) and N likewise,

    λ = k / (N + β)                  (P(NAME | neighbours, length), shrunk towards 0 by β)
    m(x) = Σ_{names v of L letters agreeing with the known letters, v_t = x} p(v) / Σ p(v)
    q'(x) = S · λ m(x) + (1 − λ) q(x)  off the unknown symbol and ``-`` (the lexicon's mixture)

with p(v) = Σ_sources weight · the source's scale (the header's ``scales``; 1 for a source not
named there). Where neither neighbour was seen beside a word of L letters (or none keeps all its
letters), λ = γ · K_L / N_L, the share of NAMEs among the words of L letters beside every
neighbour, with γ the header's ``prior`` (:data:`NAMES_PRIOR`). No name of L letters agrees,
or λ = 0: q' = q. β and the scales were chosen on
the IOSPE validation split (docs/METHODS.md §1.7).
"""
from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from infill.data.greek import GREEK, normalize
from infill.errors import ModelLoadError
from infill.models.lexicon import header_error, matching, read_headed
from infill.models.phrases import WordPairs, _count

__all__ = ["NameClass", "NAMES_FILE", "NAMES_BETA", "NAMES_PRIOR", "NAMES_SCALES", "CLASS_SOURCES",
           "build_names", "literary_names", "load_names", "save_names"]

NAMES_FILE = "names.tsv"
NAMES_HEADER = "#infill-names"
NAMES_BETA = 1.0
NAMES_SCALES = {"iospe": 1.0, "literary": 0.0}
"""Each source's weight scale (chosen on the IOSPE validation split: the literary capitals, at
0.1 or 0.01, put Homer's and Herodotus's names into inscriptions' lacunae and cost top-1)."""
CLASS_SOURCES = ("iospe", "user")
NAMES_PRIOR = 0.0
"""γ: where no neighbour word was seen, λ = γ P(NAME | length) over every neighbour."""
_SOURCE = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_CLASS = b""                      # the key of the class NAME as a neighbour
_CACHE = 1 << 14


@dataclass
class NameClass(WordPairs):
    """The word pairs' mechanism with the names as one class: ``names[L]`` (letter ids [N, L],
    weights [N]); ``ahead[(w, L)]`` / ``behind[(w, L)]`` (k, N): NAMEs and words of L letters
    seen right after / right before the word w (``b""``: any NAME); ``members``: the class's
    words (bytes of letter ids)."""

    names: dict = field(default_factory=dict)
    ahead: dict = field(default_factory=dict)
    behind: dict = field(default_factory=dict)
    members: frozenset = frozenset()
    prior: float = 0.0                 # γ: the weight of P(NAME | length) where no neighbour says
    rates: dict = field(default_factory=dict)     # {L: K_L / N_L} over every neighbour
    _cache: dict = field(default_factory=dict, repr=False)

    def share(self, ids: np.ndarray, start: int, end: int, t: int) -> tuple[np.ndarray, float]:
        """(m [V], λ) at t of the word ids[start:end] (module doc)."""
        size = end - start
        left, right = self.neighbours(ids, start, end)
        k = n = 0.0
        said = False
        for word, table in ((left, self.ahead), (right, self.behind)):
            if word is None:
                continue
            got = table.get((word, size))
            if got is None and word in self.members:
                got = table.get((_CLASS, size))
            if got is not None:
                k, n, said = k + got[0], n + got[1], True
        lam = k / (n + self.beta) if said else self.prior * self.rates.get(size, 0.0)
        if lam <= 0 or size not in self.names:
            return np.zeros(self.lexicon.vocab_size), 0.0
        m, total = self._names_at(ids[start:end], t - start)
        return m, (lam if total > 0 else 0.0)

    def _names_at(self, word: np.ndarray, offset: int) -> tuple[np.ndarray, float]:
        """(m [V], total weight) of the names agreeing with ``word`` at ``offset`` (cached)."""
        key = (bytes(word.astype(np.uint8)), offset)
        if key not in self._cache:
            if len(self._cache) >= _CACHE:
                self._cache.clear()
            table, weights = self.names[len(word)]
            self._cache[key] = matching(table, weights, word, offset, self.lexicon.letter_ids,
                                        self.lexicon.vocab_size)
        return self._cache[key]


def literary_names(lines, min_count: int = 2) -> dict[str, int]:
    """The capitalised words of a literary text (``lines``): a word counts as a name where it is
    written with a capital not at the start of a sentence (after ``. ; · ! ?``; a text's first
    word is one), kept when so written ``min_count`` times at least and at least as often as
    in lower case there; normalized (:func:`infill.data.greek.normalize`)."""
    upper, lower = Counter(), Counter()
    initial = True
    for line in lines:
        for token in line.split():
            word = normalize(token, symbols=False)
            word = word.translate(str.maketrans("", "", GREEK.punctuation))
            first = next((c for c in unicodedata.normalize("NFD", token) if c.isalpha()), "")
            if word and all(c in GREEK.letters for c in word) and len(word) > 1 and \
                    not initial:
                (upper if first.isupper() else lower)[word] += 1
            if any(c.isalpha() for c in token) or token[-1:] in ".;·!?\u037e\u0387":
                initial = token.rstrip("\u2019'\u02bc\u1fbd)]»\"")[-1:] in ".;·!?\u037e\u0387"
    return {w: c for w, c in upper.items() if c >= min_count and c >= lower[w]}


def build_names(entries: dict[tuple[str, str], float], alphabet, pairs: WordPairs,
                beta: float = NAMES_BETA, scales: dict[str, float] | None = None,
                classes: tuple[str, ...] = CLASS_SOURCES, prior: float = NAMES_PRIOR
                ) -> NameClass:
    """The :class:`NameClass` of ``entries`` ((name, source) -> weight, names over
    ``alphabet``'s letters) over the word pairs ``pairs`` (the class bigram, module doc)."""
    scales = NAMES_SCALES if scales is None else scales
    weight: dict[str, float] = {}
    for (name, source), w in entries.items():
        weight[name] = weight.get(name, 0.0) + w * scales.get(source, 1.0)
    members = frozenset(bytes(alphabet.encode(name)) for (name, source) in entries
                        if source in classes or source not in scales)
    by_length: dict[int, list] = {}
    for name, w in weight.items():
        if w > 0:
            by_length.setdefault(len(name), []).append((alphabet.encode(name), w))
    names = {n: (np.array([v for v, _ in rows], dtype=np.uint8).reshape(len(rows), n),
                 np.array([w for _, w in rows])) for n, rows in by_length.items()}
    ahead = _class_counts(pairs.before, members)
    totals: dict[int, list] = {}
    for (w, size), (k, n) in ahead.items():
        if w != _CLASS:
            totals.setdefault(size, [0.0, 0.0])
            totals[size][0] += k
            totals[size][1] += n
    rates = {size: k / n for size, (k, n) in totals.items() if n > 0}
    return NameClass(pairs.before, pairs.after, pairs.lexicon, float(beta), alphabet.space_id,
                     names=names, ahead=ahead, behind=_class_counts(pairs.after, members),
                     members=members, prior=float(prior), rates=rates)


def _class_counts(pools: dict, members: frozenset) -> dict:
    """{(w, L): (k, N)} of the word pairs' pools {(w, L): (words [M, L], counts [M])}: k the
    count of the words that are NAMEs, N of all; and {(b"", L): ...} summed over the w that are
    NAMEs themselves."""
    out: dict = {}
    for (w, size), (table, counts) in pools.items():
        named = np.fromiter((bytes(v) in members for v in table), dtype=bool, count=len(table))
        got = (float(counts[named].sum()), float(counts.sum()))
        out[(w, size)] = got
        if w in members:
            k, n = out.get((_CLASS, size), (0.0, 0.0))
            out[(_CLASS, size)] = (k + got[0], n + got[1])
    return out


def save_names(path: Path, entries: dict[tuple[str, str], float], alphabet,
               beta: float = NAMES_BETA, scales: dict[str, float] | None = None,
               classes: tuple[str, ...] = CLASS_SOURCES, prior: float = NAMES_PRIOR) -> Path:
    """Write ``names.tsv``: a header, then ``name<TAB>weight<TAB>source`` lines, heaviest
    first."""
    head = json.dumps({"beta": beta, "letters": alphabet.letters,
                       "scales": NAMES_SCALES if scales is None else scales,
                       "class": list(classes), "prior": prior}, ensure_ascii=False)
    rows = sorted(entries.items(), key=lambda r: (-r[1], r[0]))
    lines = [f"{NAMES_HEADER} {head}"] + [f"{n}\t{_count(w)}\t{s}" for (n, s), w in rows]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Path(path)


def read_names(path: Path, alphabet) -> tuple[dict, dict]:
    """(entries, header) of ``names.tsv``: one ModelLoadError naming the file and line when it
    is wrong."""
    fields = ', "scales": {...}, "class": [...]'
    head, body = read_headed(path, "names", NAMES_HEADER, alphabet, "names file", fields)
    try:
        assert isinstance(head.get("scales", {}), dict) and \
            isinstance(head.get("class", []), list)
        head = {"beta": head["beta"], "letters": head["letters"],
                "scales": {str(k): float(v) for k, v in head.get("scales", {}).items()},
                "class": tuple(str(c) for c in head.get("class", CLASS_SOURCES)),
                "prior": float(head.get("prior", NAMES_PRIOR))}
        assert 0 <= head["prior"] <= 1
        assert all(0 <= v < float("inf") and _SOURCE.fullmatch(k)
                   for k, v in head["scales"].items())
    except (AssertionError, ValueError, TypeError, OverflowError):
        raise header_error(path, "names file", NAMES_HEADER, fields) from None

    word = re.compile(f"[{re.escape(alphabet.letters)}]+")
    line = re.compile(f"([^\t]{{1,100}})\t([0-9]{{1,12}}(?:\\.[0-9]{{0,6}})?)\t"
                      f"({_SOURCE.pattern})")
    entries: dict[tuple[str, str], float] = {}
    for k, row in enumerate(body.splitlines(), 2):
        got = line.fullmatch(row)
        name = normalize(got.group(1), symbols=False, alphabet=alphabet) if got else ""
        if got is None or not word.fullmatch(name) or not float(got.group(2)) > 0:
            raise ModelLoadError(f"{path}:{k}: expected 'name<TAB>weight<TAB>source' with a "
                                 "name of the model's letters, a positive weight and a source "
                                 f"of lowercase ASCII letters, got {row[:40]!r}")
        entry = (name, got.group(3))
        entries[entry] = entries.get(entry, 0.0) + float(got.group(2))
    return entries, head


def load_names(path: Path, alphabet, pairs: WordPairs) -> NameClass:
    """Read and check ``names.tsv`` (:func:`read_names`) into the :class:`NameClass` over the
    model's word pairs."""
    entries, head = read_names(path, alphabet)
    return build_names(entries, alphabet, pairs, head["beta"], head["scales"], head["class"],
                       head["prior"])


def with_names(lexicon, names: NameClass):
    """``lexicon`` (a :class:`~infill.models.lexicon.WordLexicon`) with every name it lacks
    added at the name's weight p(v), so that a partly preserved name completes (a user's names
    too); the lexicon itself is not changed."""
    words, weights = dict(lexicon.words), dict(lexicon.weights)
    for size, (table, w) in names.names.items():
        have = words.get(size, np.zeros((0, size), np.uint8))
        known = {bytes(v) for v in have}
        new = np.fromiter((bytes(v) not in known for v in table), dtype=bool, count=len(table))
        if new.any():
            words[size] = np.concatenate([have, table[new].astype(have.dtype)])
            weights[size] = np.concatenate([weights.get(size, np.zeros(0)), w[new]])
    return replace(lexicon, words=words, weights=weights, _cache={})
