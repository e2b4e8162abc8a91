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

from dataclasses import dataclass
from pathlib import Path

from infill.data.epidoc import Edition, read_edition
from infill.data.epidoc_corpus import corpus_files, split_files
from infill.data.greek import normalize

__all__ = ["MixedExamples", "inscription_text", "iospe_split", "mixed_examples", "pack",
           "training_texts"]


def inscription_text(edition: Edition) -> str:
    """An edition's training text (module doc): the supplements as the benchmark's golds, the
    rest normalized as the Greek model reads its input."""
    r = edition.render(lambda lac: "restore" if lac.kind == "supplied" else "missing")
    out, last = [], 0
    for index, start, end in r.restore:          # the supplements' spans, in text order
        out.append(normalize(r.text[last:start], strip=False, unknown=True))
        out.append(normalize(edition.lacunae[index].editor, symbols=False))
        last = end
    out.append(normalize(r.text[last:], strip=False, unknown=True))
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


def iospe_split(folder: str | Path) -> dict[str, list[Path]]:
    """The committed by-inscription split of an EpiDoc folder (seed 0, 80/10/10):
    :func:`infill.data.epidoc_corpus.split_files`, the one definition of that split."""
    return split_files(corpus_files(folder))


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
    from infill.data.examples import windows
    import numpy as np

    order = np.random.default_rng([seed, 31]).permutation(len(texts))
    pieces = [p for i in order for p in windows(texts[i], size)]
    out, cur = [], ""
    for p in pieces:
        if cur and len(cur) + 1 + len(p) > size:
            out.append(cur)
            cur = ""
        cur = f"{cur} {p}" if cur else p
    return out + ([cur] if cur else [])


def mixed_examples(corpus: str | Path, max_length: int, folder: str | Path, copies: int
                   ) -> MixedExamples:
    """Literary windows (:func:`infill.data.examples.greek_examples`) + ``copies`` differently
    packed copies of the IOSPE training inscriptions + the validation inscriptions once."""
    from infill.data.examples import greek_examples
    from infill.data.greek import GREEK

    lit = greek_examples(corpus, max_length).examples
    split = iospe_split(folder)
    train, val = training_texts(split["train"]), training_texts(split["validation"])
    ins = [w for k in range(copies) for w in pack(train, max_length - 1, k)]
    ins_val = pack(val, max_length - 1, 0)
    encode = lambda ws: [[GREEK.start_id] + GREEK.encode(w) for w in ws]  # noqa: E731
    texts = [GREEK.decode(e) for e in lit] + train
    return MixedExamples(lit + encode(ins) + encode(ins_val), len(lit), len(ins), len(ins_val),
                         texts)
