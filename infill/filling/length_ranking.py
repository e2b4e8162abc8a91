"""Rank the completions of gaps of uncertain length, computing only what can reach the top-k.

The length scores ``pll``, ``pll-gap`` and ``pll-word`` (:mod:`infill.decoding.lengths`) are sums
of log-probabilities, one forward row per scored position, and every term is <= 0: the sum over
the positions scored so far is an upper bound of a completion's score. Each completion's
positions are split into blocks (one forward call each); the completion with the highest bound
gets its next block, and a completion whose bound falls below the k-th best complete score is
dropped. The first completion (the pilot) is scored in full first; the others score their
positions in order of the pilot's terms there, most negative first, so that a poor completion's
bound drops early (the order changes the work, never the result). The top-k and their scores
are those of scoring everything (:func:`rank` with ``exhaustive=True``), bit for bit: a block's
terms do not depend on which other blocks were computed, and the search stops only when no
unfinished completion can reach the k-th score (ties included).
"""
from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from infill.decoding import pll
from infill.decoding.lengths import PER_CHAR, per_char
from infill.errors import ConfigError
from infill.progress import progress as bar_for
from infill.names import LENGTH_SCORES

__all__ = ["rank"]

BLOCK_TOKENS_CPU = 2048
"""Tokens per forward call on a CPU (rows x row length; as the models' ``CPU_TOKENS_PER_CALL``)."""
BLOCK_TOKENS_GPU = 32768
"""Tokens per forward call on an accelerator (it takes a bigger batch at no extra cost)."""
SLACK = 1e-6
"""Added per unscored term: a float32 log-probability (of a lexicon mixture) may round a hair
above 0."""


@dataclass
class _Candidate:
    """One completion's rescoring: its cut ``ids`` [1, T], the positions scored (``where``) and
    its ``gaps`` there, the [1, T] ``hidden`` counts of ``pll-word`` (or None), the position
    ``blocks`` in the order they are scored, how many are done, and the [T] float64 ``terms``
    computed so far (0 elsewhere)."""

    ids: torch.Tensor
    where: list[int]
    gaps: list[int]
    hidden: torch.Tensor | None
    terms: torch.Tensor
    blocks: list[list[int]] = field(default_factory=list)
    done: int = 0
    base: float = 0.0

    @property
    def finished(self) -> bool:
        return self.done == len(self.blocks)

    def bound(self) -> float:
        """The score so far: the exact score once finished, else an upper bound of it."""
        left = sum(len(b) for b in self.blocks[self.done:])
        return self.base + float(self.terms.sum()) + SLACK * left

    def keys(self) -> list[int | None]:
        """Per scored position, which context character it holds, counted from the first gap
        (the same character in every completion of an input); None for a gap position."""
        gaps = set(self.gaps)
        before = torch.zeros(len(self.terms) + 1, dtype=torch.long)
        before[torch.tensor(sorted(gaps)) + 1] = 1
        before = before.cumsum(0)
        first = min(self.gaps)
        return [None if t in gaps else t - first - int(before[t]) for t in self.where]


def rank(model, kind: str, filled: Sequence[Sequence[int]], gaps: Sequence[Sequence[int]],
         scores: Sequence[float], chars: Sequence[int], top_k: int, exhaustive: bool = False,
         progress: bool | None = None, base: Sequence[float] | None = None
         ) -> list[tuple[int, float]]:
    """The ``top_k`` best completions by the length score ``kind`` as (index, score), best
    first, ties in input order -- as sorting every score (:func:`infill.decoding.pll.length_scores`).
    filled / gaps / scores / chars as there. ``exhaustive``: score every completion in full (the
    reference); ``progress``: a bar of forward rows on stderr (None: when it is a terminal);
    ``base``: a value added to each completion's score (:mod:`infill.filling.reranking`: the beam's)."""
    if kind not in LENGTH_SCORES:
        raise ConfigError(f"unknown length score {kind!r}; choose from {', '.join(LENGTH_SCORES)}")
    if kind in PER_CHAR:
        values = per_char(kind, scores, chars)
        return _top(range(len(values)), values, top_k)
    cands = [_candidate(model, kind, f, g) for f, g in zip(filled, gaps)]
    for c, b in zip(cands, base if base is not None else ()):
        c.base = float(b)
    total = sum(len(c.where) for c in cands)
    with bar_for(total=total, desc="lengths", unit="row", enabled=progress, leave=False) as bar:
        _schedule(model, cands, top_k, exhaustive, bar)
        bar.total = bar.n
        bar.refresh()
    values = {j: c.bound() for j, c in enumerate(cands) if c.finished}
    return _top(list(values), values, top_k)


def _schedule(model, cands: list[_Candidate], k: int, exhaustive: bool, bar) -> None:
    """Score the pilot in full, order the others' positions by it, then score them all
    (``exhaustive``) or best first."""
    tokens = _block_tokens(model)
    _block(cands[0], cands[0].where, tokens)
    _finish(model, cands[0], bar)
    for c in cands[1:]:
        _block(c, _order(c, cands[0]), tokens)
        if exhaustive:
            _finish(model, c, bar)
    _best_first(model, cands, k, bar)


def _finish(model, cand: _Candidate, bar) -> None:
    while not cand.finished:
        bar.update(_advance(model, cand))


def _top(indices, values, k: int) -> list[tuple[int, float]]:
    """The ``k`` best (index, value), highest first, ties in index order."""
    best = sorted(indices, key=lambda j: (-values[j], j))[:k]
    return [(j, values[j]) for j in best]


def _candidate(model, kind: str, filled: Sequence[int], gaps: Sequence[int]) -> _Candidate:
    """A completion ready to be scored block by block (cut to
    :data:`infill.decoding.pll.PLL_REACH` of its gaps)."""

    cut, at = pll.near_gaps(model, [int(t) for t in filled], list(gaps))
    ids = torch.tensor([cut], dtype=torch.long)
    where = pll.scored_positions(model, cut) if kind == "pll" else sorted(at)
    hidden = None
    if kind == "pll-word":
        scored = torch.zeros(ids.shape, dtype=torch.bool)
        scored[0, where] = True
        hidden = pll.word_rests(model, ids, scored)
    return _Candidate(ids, list(where), sorted(at), hidden,
                      torch.zeros(len(cut), dtype=torch.float64))


def _block(cand: _Candidate, order: list[int], tokens: int) -> None:
    """Split the candidate's positions, in ``order``, into blocks of ``tokens`` per call."""
    size = max(1, tokens // cand.ids.shape[1])
    cand.blocks = [order[s:s + size] for s in range(0, len(order), size)]


def _block_tokens(model) -> int:
    device = getattr(model, "device", "cpu")
    return BLOCK_TOKENS_CPU if torch.device(device).type == "cpu" else BLOCK_TOKENS_GPU


def _order(cand: _Candidate, pilot: _Candidate) -> list[int]:
    """The candidate's positions, most negative term of the pilot at the same character first
    (a gap position: the pilot's mean gap term; a character the pilot lacks: its mean term)."""
    at = {k: t for k, t in zip(pilot.keys(), pilot.where) if k is not None}
    gap = float(pilot.terms[pilot.gaps].mean())
    ctx = float(pilot.terms[list(at.values())].mean()) if at else 0.0
    guess = [gap if k is None else float(pilot.terms[at[k]]) if k in at else ctx
             for k in cand.keys()]
    return [cand.where[i] for i in sorted(range(len(guess)), key=lambda i: (guess[i], i))]


def _advance(model, cand: _Candidate) -> int:
    """Score the candidate's next block (one forward call); the rows it took."""

    block = cand.blocks[cand.done]
    scored = torch.zeros(cand.ids.shape, dtype=torch.bool)
    scored[0, block] = True
    attn = torch.ones(cand.ids.shape, dtype=torch.bool)
    terms = pll.energy_terms(model, cand.ids, attn, scored, "local", len(block), cand.hidden)
    cand.terms[block] = -terms[0, block]
    cand.done += 1
    return len(block)


def _best_first(model, cands: list[_Candidate], k: int, bar) -> None:
    """Advance the candidate with the highest bound until no unfinished one can reach the k-th
    best finished score (kept in a min-heap of the k best)."""
    best: list[float] = []                                 # the k best finished scores
    live = []
    for j, c in enumerate(cands):
        if c.finished:
            _keep(best, c.bound(), k)
        else:
            live.append((-c.bound(), j))
    heapq.heapify(live)
    while live:
        neg, j = heapq.heappop(live)
        if len(best) == k and -neg < best[0]:
            return                                         # no one left can enter the top-k
        cand = cands[j]
        bar.update(_advance(model, cand))
        if cand.finished:
            _keep(best, cand.bound(), k)
        else:
            heapq.heappush(live, (-cand.bound(), j))


def _keep(best: list[float], value: float, k: int) -> None:
    """Add a finished score to the min-heap of the ``k`` best."""
    if len(best) < k:
        heapq.heappush(best, value)
    elif value > best[0]:
        heapq.heapreplace(best, value)
