"""The Greek model's epigraphic training text (issue 20): EpiDoc editions (IOSPE) as the Greek
model reads them, packed beside the literary windows.

An inscription's training text is its edition as the EpiDoc reader (:mod:`infill.data.epidoc`)
renders it for the benchmark of editors' supplements (:mod:`infill.bench.epidoc`): every lost
stretch but the supplements missing (``-`` per character, ``---`` for an unknown extent), and
normalized the same way -- each editor's supplement as the benchmark's gold
(:func:`infill.data.greek.normalize` of the editor's text), the text around it as the Greek model
normalizes its input (characters outside the alphabet become the unknown symbol ``^``). So it is
exactly the text ``infill bench`` shows around a hidden supplement with that supplement filled
back in (every other supplement shown there as missing).
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from infill.data.epidoc import TEI, Edition, _local, _Reader, _render, read_edition
from infill.data.epidoc_corpus import corpus_files, split_files
from infill.data.examples import greek_examples, windows
from infill.data.greek import GREEK, normalize, word_weights
from infill.lazy import LazyModule

np = LazyModule("numpy")

__all__ = ["MixedExamples", "NAME_TAGS", "edition_names", "inscription_folders",
           "inscription_text", "iospe_split",
           "mixed_examples", "pack", "training_names", "training_texts"]


def inscription_text(edition: Edition) -> str:
    """An edition's training text (module doc): the supplements as the benchmark's golds, the
    rest normalized as the Greek model reads its input."""
    r = edition.render(lambda lac: "restore" if lac.kind == "supplied" else "missing")
    a = edition.alphabet or GREEK                # Greek or Latin (infill.data.latin)
    out, last = [], 0
    for index, start, end in r.restore:          # the supplements' spans, in text order
        out.append(normalize(r.text[last:start], strip=False, unknown=True, alphabet=a))
        out.append(normalize(edition.lacunae[index].editor, symbols=False, alphabet=a))
        last = end
    out.append(normalize(r.text[last:], strip=False, unknown=True, alphabet=a))
    return "".join(out).strip()


def training_texts(files: list[Path]) -> list[str]:
    """One training text per file (:func:`inscription_text`); editions without a letter are
    left out."""
    texts = []
    for f in files:
        t = inscription_text(read_edition(f, require_text=False))
        if any(c.isalpha() for c in t):
            texts.append(t)
    return texts


# ---- the names an edition marks (issue 35) ------------------------------------------------------
NAME_TAGS = ("persName", "name", "placeName")
"""The EpiDoc elements read as names, besides ``<rs type="month">`` (IOSPE marks no other
``<rs>`` in its editions)."""


def _is_name(el) -> bool:
    if not isinstance(el.tag, str):
        return False
    tag = _local(el.tag)
    return tag in NAME_TAGS or (tag == "rs" and el.get("type") == "month")


def edition_names(edition: Edition) -> list[str]:
    """The words of the names the edition marks (``<persName>``, ``<name>``, ``<placeName>``,
    ``<rs type="month">``), each as the training text has it: the editor's supplements read as
    text, normalized (:func:`infill.data.greek.normalize`); a ``<persName>`` holding ``<name>``
    gives those only (not its titles); only a word that is a whole word of the edition's training
    text (:func:`inscription_text`, as the lexicon reads it) -- not a fragment beside a gap."""
    whole = word_weights([inscription_text(edition)], GREEK)
    out = []
    for el in edition.div.iter(f"{{{TEI}}}*"):
        if not _is_name(el) or any(_is_name(a) for a in el.iterancestors()):
            continue
        parts = [el]
        if _local(el.tag) == "persName":
            parts = list(el.iter(f"{{{TEI}}}name")) or parts
        for part in parts:
            reader = _Reader([], edition.path)
            reader.element_content(part)
            text = _render(reader.atoms, reader.lacunae, lambda lac: "text").text
            words = normalize(text, unknown=True).translate(
                str.maketrans("", "", GREEK.punctuation)).split()
            out += [w for w in words if len(w) > 1 and w in whole]
    return out


def training_names(files: list[Path], share: float = 0.5) -> dict[str, int]:
    """How often each name word (:func:`edition_names`) is marked in the editions ``files``,
    for the words marked as names in at least ``share`` of their occurrences in the editions'
    training texts (an article or a καί inside a ``<placeName>`` is no name)."""
    marked, every = Counter(), Counter()
    for f in files:
        edition = read_edition(f, require_text=False)
        marked.update(edition_names(edition))
        every.update(word_weights([inscription_text(edition)], GREEK))
    return {w: c for w, c in marked.items() if c >= share * every[w]}


def iospe_split(folder: str | Path) -> dict[str, list[Path]]:
    """The committed by-inscription split of EpiDoc folders (seed 0, 80/10/10):
    :func:`infill.data.epidoc_corpus.split_files`, the one definition of that split, made per
    folder of :func:`inscription_folders` (so IOSPE keeps its split beside another corpus) and
    joined part by part."""
    parts: dict[str, list[Path]] = {}
    for one in inscription_folders(folder):
        for name, files in split_files(corpus_files(one)).items():
            parts.setdefault(name, []).extend(files)
    return parts


def inscription_folders(folders: str | Path) -> list[Path]:
    """The EpiDoc folders of an ``inscriptions`` option: one path, or several joined by
    ``os.pathsep`` (``greek/iospe:greek/iaph``), in their order."""
    return [Path(f) for f in os.fspath(folders).split(os.pathsep) if f]


# ---- training examples: literary windows + packed inscriptions ---------------------------------
@dataclass
class MixedExamples:
    """Token-id examples of the literary corpus followed by the inscriptions': ``literary``
    windows, then ``copies`` packings of the training inscriptions (``train``), then one of the
    validation inscriptions (``validation``)."""

    examples: list[list[int]]
    literary: int
    train: int
    validation: int
    texts: list[str]                  # literary text + training inscriptions (for a word list)


def pack(texts: list[str], size: int, seed: int) -> list[str]:
    """``texts`` in a seeded random order, cut into pieces of <= ``size`` characters, packed
    into windows of <= ``size`` characters joined by spaces (no padding wasted on short
    inscriptions)."""
    order = np.random.default_rng([seed, 31]).permutation(len(texts))
    pieces = [p for i in order for p in windows(texts[i], size)]
    out, cur = [], ""
    for p in pieces:
        if cur and len(cur) + 1 + len(p) > size:
            out.append(cur)
            cur = ""
        cur = f"{cur} {p}" if cur else p
    return out + ([cur] if cur else [])


def mixed_examples(corpus: str | Path, max_length: int, folder: str | Path, copies: int,
                   alphabet=GREEK) -> MixedExamples:
    """Literary windows (:func:`infill.data.examples.greek_examples`) + ``copies`` differently
    packed copies of the training inscriptions of ``folder`` (one EpiDoc folder or several,
    :func:`inscription_folders`) + their validation inscriptions once."""
    lit = greek_examples(corpus, max_length, alphabet).examples
    split = iospe_split(folder)
    train, val = training_texts(split["train"]), training_texts(split["validation"])
    ins = [w for k in range(copies) for w in pack(train, max_length - 1, k)]
    ins_val = pack(val, max_length - 1, 0)
    encode = lambda ws: [[alphabet.start_id] + alphabet.encode(w) for w in ws]  # noqa: E731
    texts = [alphabet.decode(e) for e in lit] + train
    return MixedExamples(lit + encode(ins) + encode(ins_val), len(lit), len(ins), len(ins_val),
                         texts)
