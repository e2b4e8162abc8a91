"""One-word gaps: hide one whole word of a line of text, let a model fill it, score the word.

The measure of issue 21's English targets, the same for any English model whatever its
tokenizer:

- **Words.** A line's candidate words are its whitespace-separated tokens with the punctuation
  around them removed (``, . ; : ! ? ' " ( ) [ ] -``), kept when what remains is letters only
  (ASCII): ``question,`` gives ``question``; ``I'll``, ``step-dame`` and ``o'er`` are not
  candidates (they are two words to a BERT tokenizer).
- **Choice.** ``n`` lines drawn with a generator seeded by ``seed`` among the lines that have a
  candidate (in line order); in each, one candidate drawn uniformly with a generator seeded by
  ``(seed, line index)`` -- so a line's word does not depend on which other lines are drawn.
- **Gap.** The word is replaced by the gap marker, and the model fills ``k`` tokens there, ``k``
  being the number of pieces the word has in the model's own tokenizer (the gap's length is
  given, as in every infill gap; with a word-level vocabulary most words are one piece).
- **Score.** Top-1 / top-5: the word (case-sensitive) is the first fill / among the first five.
"""
from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass

from infill.api import fill
from infill.bench.gaps import derive_seed
from infill.models.base import MaskedLM

__all__ = ["WordGap", "candidate_words", "word_gaps", "score_word_gaps", "word_pieces"]

_EDGE = ",.;:!?'\"()[]-"


@dataclass(frozen=True)
class WordGap:
    """One test input: ``text`` is ``line`` of the corpus with ``word`` replaced by the marker."""

    line: int
    text: str
    word: str


def candidate_words(line: str) -> list[tuple[int, str]]:
    """(character offset, word) of every candidate word of ``line`` (see the module doc)."""
    out = []
    for m in re.finditer(r"\S+", line):
        token = m.group()
        core = token.strip(_EDGE)
        if core and core.isascii() and core.isalpha():
            out.append((m.start() + token.index(core), core))
    return out


def word_gaps(lines: list[str], n: int | None, seed: int = 0, marker: str = "___"
              ) -> list[WordGap]:
    """Up to ``n`` one-word gaps (all lines with a candidate when ``n`` is None)."""
    usable = [i for i, line in enumerate(lines) if candidate_words(line)]
    if n is not None and n < len(usable):
        usable = sorted(random.Random(derive_seed(seed, "word-lines")).sample(usable, n))
    out = []
    for i in usable:
        words = candidate_words(lines[i])
        at, word = words[random.Random(derive_seed(seed, "word", i)).randrange(len(words))]
        out.append(WordGap(i, lines[i][:at] + marker + lines[i][at + len(word):], word))
    return out


def word_pieces(model: MaskedLM, word: str) -> int:
    """How many tokens ``word`` is in ``model``'s tokenizer."""
    return sum(1 for t in model.tokenize(word) if t not in model.special_ids)


def score_word_gaps(model: MaskedLM, gaps: list[WordGap], scorer: str, order: str = "left-to-right",
                    beam: int = 5, top_k: int = 5, marker: str = "___") -> dict:
    """Fill every gap and score it. Returns ``{"n", "top1", "top5", "one_piece", "rows"}``
    (percentages; ``one_piece``: share of hidden words that are one token of the model;
    ``rows``: per gap the line, word, pieces and the first ``top_k`` fills)."""
    by_len: dict[int, list[int]] = defaultdict(list)
    for j, g in enumerate(gaps):
        by_len[word_pieces(model, g.word)].append(j)
    fills: list[list[str]] = [[] for _ in gaps]
    for k, idx in sorted(by_len.items()):
        results = fill(model, [gaps[j].text for j in idx], gap=k, top_k=top_k, marker=marker,
                       scorer=scorer, order=order, beam_size=max(beam, top_k))
        for j, completions in zip(idx, results):
            fills[j] = [c.fills[0] for c in completions]
    pieces = {j: k for k, idx in by_len.items() for j in idx}
    rows = [{"line": g.line, "word": g.word, "pieces": pieces[j], "fills": fills[j]}
            for j, g in enumerate(gaps)]
    n = max(len(rows), 1)
    return {"n": len(rows),
            "top1": 100.0 * sum(r["fills"][:1] == [r["word"]] for r in rows) / n,
            "top5": 100.0 * sum(r["word"] in r["fills"][:5] for r in rows) / n,
            "one_piece": 100.0 * sum(r["pieces"] == 1 for r in rows) / n,
            "rows": rows}
