"""Latin character-model family: the Greek family's code path (:class:`GreekFamily`) in the
Latin alphabet (:data:`infill.data.latin.LATIN`).

``infill train latin`` trains on the Latin literature (``latin`` under the data root, Perseus)
and, with ``--inscriptions DIR`` (EDH unpacked), the training split of the inscriptions, split by
inscription as for Greek (:func:`infill.data.inscriptions.iospe_split`, seed 0, 80/10/10). An
inscription's training text is its edition as the EpiDoc reader reads a Latin edition: editors'
supplements as text, an abbreviation as the stone cut it (the ``<ex>`` expansion dropped), every
other lost stretch as ``-``. It writes the same lexicon, phrase, shape and pair memories as the
Greek family, bounded so that the model ships small (:func:`write_memories`): EDH's 28,000
training inscriptions are 60 times IOSPE's, and a memory of all of them would be hundreds of MB.
Its memories read an inscription's end (:data:`MEMORY_ENDS`) and it mixes its shape memory first
(:data:`MIXING_ORDER`, written into the model's ``charmodel.json``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from infill.data.greek import word_weights
from infill.data.latin import LATIN
from infill.models.char import save_char
from infill.models.lexicon import LEXICON_BETA, LEXICON_FILE, build_lexicon
from infill.models.phrases import (PAIRS_FILE, PHRASE_BETA, PHRASE_SIDES, PHRASES_FILE,
                                  build_pairs, build_phrases, drop_rare, pair_counts)
from infill.models.shapes import SHAPES_FILE, build_shapes
from infill.training.greek import GreekFamily
from infill.training.loop import TrainConfig, TrainResult
from infill.training.loop import train as train_loop

__all__ = ["LEXICON_MIN", "LEXICON_SCALE", "MEMORY_CHARS", "MEMORY_ENDS", "MIN_COUNT",
           "MIXING_ORDER", "PAIRS_MIN", "PHRASE_LEAST", "PHRASE_LEVELS", "PHRASE_WITTEN_BELL",
           "LatinFamily", "lexicon_weights", "train", "write_context_memories", "write_memories"]

MEMORY_CHARS = 1_500_000
"""Characters of training inscriptions (whole inscriptions, a seeded sample: about half of EDH's
training split) that the phrase and shape memories count. On 200 validation supplements half the
split restored 3.5 points more at rank 1 than a fifth (the test split did not confirm it: -2.7,
within its interval; +2.3 in the top 20), and all of it no more than half at twice the size
(benchmarks/results/latin_lengths.md)."""
MIN_COUNT = 3
"""Phrase and shape entries counted fewer times than this are left out."""
MEMORY_ENDS = True
"""The phrase and shape memories' right contexts reach past an inscription's end (its end a
neighbour of its own, as its start is: ``v s l m`` closes a votive text); a right-only context
of the end alone is not stored (:func:`~infill.models.phrases.build_phrases`). On 500 EDH
validation supplements: +1.8 [+0.4, +3.2] points at rank 1, CER -0.019 [-0.034, -0.005], whole
lost words +10.4 (benchmarks/results/latin_lengths.md)."""
PAIRS_MIN = 2
"""Word pairs seen fewer times than this are left out (twice: 31,739 pairs, 0.4 MiB; three
times keeps 16,035)."""
PHRASE_LEVELS = ((2, 2), (4, 0)) + PHRASE_SIDES
"""The phrase memory's levels (left, right characters), in mixing order: builtin:greek's, after
two shorter ones that speak only at the first letters of a long lacuna (:data:`PHRASE_LEAST`).
Speaking everywhere they lost 10 points at rank 1 on 40 validation supplements of 1-3 letters
(benchmarks/results/latin_lengths.md)."""
PHRASE_LEAST = (6, 6, 0, 0, 0, 0)
"""Per level of :data:`PHRASE_LEVELS`, the fewest characters still hidden right of a position
for the level to speak there (``build_phrases(..., least=)``): the short levels only where six or
more letters are still lost, so a lacuna of 1-6 letters is restored as before. On EDH validation
supplements of 7-10 letters: +3.8 points at rank 1 (52 of the usual 500) and +1.5 [-0.5, +4.0]
(200 more), +4.0 [+0.5, +7.5] in the top 10, CER -0.023 [-0.051, +0.003]; 12.7 -> 16.2 MiB.
builtin:greek's memories built so gained nothing (benchmarks/results/greek_field.md)."""
PHRASE_WITTEN_BELL = PHRASE_BETA
"""The phrase memory's Witten-Bell beta (the module doc of :mod:`infill.models.phrases`): on 200
validation supplements 1 / 4 / 16 restored 52.5 / 55.5 / 54.0% at rank 1."""
LEXICON_MIN = 2.0
"""Words of the literature seen fewer times than this are left out of the lexicon (its hapaxes:
117,932 of the 266,391 word forms of Perseus's Latin)."""
LEXICON_SCALE = 100.0
"""How much a training inscription's word weighs in the lexicon against one occurrence in the
literature (each inscription counted once). The literature adds the words inscriptions share
with it but EDH's training split lacks (``fecerat``, ``aliquando``, ``opitulante``); weighed
far below the inscriptions' own, it never outvotes their formulae. On 500 EDH validation
supplements, against the inscriptions' words alone: +1.0 [+0.2, +2.0] points at rank 1, +1.8
[+0.8, +3.0] in the top 10, CER -0.013 [-0.023, -0.006]; at 16 instead of 100, -0.5 at rank 1
on 200 (benchmarks/results/latin_lengths.md)."""

POOL_MIRRORS = True
"""builtin:latin's phrase memory pools its one-sided levels (8, 0) and (0, 8) where both speak
(``charmodel.json``'s ``"pool_mirrors"``, :meth:`infill.models.phrases.PhraseMemory.pooled`):
on 500 EDH validation supplements +1.4 [+0.4, +2.6] points at rank 1 (CER -0.008) in the beam's
order, +0.6 [-0.8, +2.0] reranked (CER -0.000; 7-10 letters +3.9, CER -0.019); builtin:greek's
memories do not (IOSPE validation -0.5 [-1.2, +0.0], IAph +0.0; benchmarks/results/latin_lengths.md)."""

MIXING_ORDER = ("shapes", "lexicon", "pairs", "names", "phrases", "gate")
"""The order builtin:latin mixes its parts into the network's conditional (``charmodel.json``'s
``"mixtures"``): the shape memory first, so that the lexicon and the phrase memory have the
last word over it (builtin:greek's order, :data:`infill.models.char.MIXTURES`, mixes it after
the lexicon). On 500 EDH validation supplements: +1.8 [-0.2, +3.8] points at rank 1, +2.6
[+0.8, +4.4] in the top 20, CER -0.014; on the usual 200, -1.0 at rank 1
(benchmarks/results/latin_lengths.md)."""


class LatinFamily(GreekFamily):
    """A Latin character model (:class:`GreekFamily` with the Latin alphabet, mixing its parts
    in :data:`MIXING_ORDER`)."""

    name = "latin"
    alphabet = LATIN

    def save(self, model, out: Path) -> None:
        save_char(model, out, self.alphabet, dtype=torch.float16,
                  extra={"mixtures": list(MIXING_ORDER), "pool_mirrors": POOL_MIRRORS})

    def save_memory(self, out: Path, train: list[list[int]]) -> None:
        """The lexicon and memories of :func:`write_memories`: the lexicon of the training
        inscriptions' words and the literature's (its windows), the memories of the training
        inscriptions -- without inscriptions, of the first
        :data:`~infill.training.greek.PHRASE_CHARS` characters of the training windows (names
        are not written: EDH marks none)."""
        a, texts = self.alphabet, self.memory_texts(train)
        if self.mix is None:                     # no inscriptions: every window is literature
            inscriptions = []
            literature = [a.decode(i for i in ex if i < a.n_outputs) for ex in train]
        else:
            inscriptions, literature = texts, self.mix.texts[:self.mix.literary]
        write_memories(Path(out), inscriptions, literature, a, memory_texts=texts,
                       ends=MEMORY_ENDS and self.mix is not None)   # windows do not end there


def memory_sample(texts: list[str], chars: int = MEMORY_CHARS, seed: int = 0) -> list[str]:
    """Whole texts in a seeded random order until ``chars`` characters."""
    out, size = [], 0
    for i in np.random.default_rng(seed).permutation(len(texts)):
        if size >= chars:
            break
        out.append(texts[i])
        size += len(texts[i])
    return out


def lexicon_weights(inscriptions: list[str], literature, alphabet=LATIN) -> dict[str, float]:
    """word -> weight: the words of the ``inscriptions`` (each counted once per occurrence)
    times :data:`LEXICON_SCALE`, plus each occurrence in the texts ``literature`` of a word they
    hold at least :data:`LEXICON_MIN` times."""
    weights = {w: LEXICON_SCALE * c for w, c in word_weights(inscriptions, alphabet).items()}
    for w, c in word_weights(literature, alphabet).items():
        if c >= LEXICON_MIN:
            weights[w] = weights.get(w, 0.0) + c
    return weights


def write_memories(out: Path, inscriptions: list[str], literature=(), alphabet=LATIN,
                   chars: int = MEMORY_CHARS, min_count: int = MIN_COUNT,
                   pairs_min: int = PAIRS_MIN, memory_texts: list[str] | None = None,
                   ends: bool = MEMORY_ENDS) -> None:
    """``out/lexicon.tsv`` (:func:`lexicon_weights` of the training ``inscriptions`` and the
    texts ``literature``) and the memories of the inscriptions (or of ``memory_texts`` where
    given: :func:`write_context_memories`)."""
    build_lexicon(lexicon_weights(inscriptions, literature, alphabet), alphabet,
                  LEXICON_BETA).save(out / LEXICON_FILE, alphabet)
    texts = inscriptions if memory_texts is None else memory_texts
    write_context_memories(out, texts, alphabet, chars, min_count, pairs_min, ends)


def write_context_memories(out: Path, texts: list[str], alphabet=LATIN,
                           chars: int = MEMORY_CHARS, min_count: int = MIN_COUNT,
                           pairs_min: int = PAIRS_MIN, ends: bool = MEMORY_ENDS) -> None:
    """``phrases.safetensors`` (at :data:`PHRASE_LEVELS`) and ``shapes.safetensors`` of a
    seeded sample of ``chars`` characters of ``texts``, entries counted ``min_count`` times or
    more (a right context reaching past an inscription's end with ``ends``), and ``pairs.tsv``:
    the word pairs of all ``texts`` seen ``pairs_min`` times or more."""
    a = alphabet
    sample = memory_sample(texts, chars)
    for memory, name in ((build_phrases(sample, a, sides=PHRASE_LEVELS,
                                        beta=PHRASE_WITTEN_BELL, ends=ends,
                                        least=PHRASE_LEAST), PHRASES_FILE),
                         (build_shapes(sample, a, ends=ends), SHAPES_FILE)):
        drop_rare(memory, min_count, whole_contexts=False).save(out / name, a)
    pairs = {k: v for k, v in pair_counts(texts, a).items() if v >= pairs_min}
    build_pairs(pairs, a, None).save(out / PAIRS_FILE, a)


def train(corpus: str | tuple[str, ...], config: TrainConfig, **model_options) -> TrainResult:
    """Train a Latin character model on ``corpus`` (see :mod:`infill.training.loop`)."""
    return train_loop(LatinFamily(**model_options), corpus, config)
