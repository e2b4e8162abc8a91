"""Rerank the beam's completions of a gap of one length by their score pooled with a PLL.

Beam search ranks a completion by its decoder score: for the standard update
Σ log q(x_t | context, the positions filled before t), read in one order, each position blind to
the positions filled after it. The pseudo-log-likelihood of the filled text (``pll``,
:mod:`infill.decoding.lengths`: every position read with all the others in place, gap and
context within ``PLL_REACH`` tokens) reads each one in both directions, and its context terms
say whether the fill fits what follows it. ``rerank`` ranks the beam's completions by

    rank_score = (score + PLL) / 2      (kind ``pll``; ``pll-gap``: the gap's terms only;
                                         ``pll-word``: those with the rest of each word hidden)

-- the logarithmic opinion pool of the two, with equal weights: n-best rescoring with a masked
LM's PLL (Salazar et al. 2020) at weight 1, halved so that it stays on the scale of one
log-probability. The order is that of the sum; the halving matters to what a softmax of it
means: a PLL sums the terms of every position near the gap and alone makes the softmax over the
beam far too sure, the pool is as well calibrated as the beam's own scores (builtin:greek, IOSPE
validation: expected calibration error of the top reading 0.072 against 0.070; the sum's 0.232).
The beam decides which completions there are; the reranking orders all of the beam (so that the
order never depends on ``top_k``), and each completion carries the value as ``rank_score``. It
costs a forward row per scored position of every completion, computed only as far as it can
change the top-k (:func:`infill.filling.length_ranking.rank`, exact). Gaps of uncertain length are
ranked by ``length_score`` instead (decoder scores of different lengths are sums of different
numbers of terms).

On builtin:greek, ``pll`` raised top-1 on the 560 IOSPE validation supplements from 47.7 to 50.4%
(CER 0.421 -> 0.400) but not on the test split (51.1% against 50.3%, CER 0.405 against 0.401),
and it turns the Odyssey's "μ[..]σα" into μέσσα; builtin:greek does not rerank
(benchmarks/results/iospe_rerank.md). builtin:latin does (its ``defaults.json``): on 500 EDH
validation supplements +4.6 points at rank 1, CER -0.044, at about 20 times the decoding time
(benchmarks/results/latin_lengths.md). infill's default is ``off``.
"""
from __future__ import annotations

from collections.abc import Sequence

from infill.errors import ConfigError
from infill.lazy import LazyModule
from infill.names import RERANKS

__all__ = ["RERANKS", "rerank"]

length_ranking = LazyModule("infill.filling.length_ranking")     # torch: imported when it ranks


def rerank(model, kind: str, filled: Sequence[Sequence[int]], gaps: Sequence[Sequence[int]],
           scores: Sequence[float], top_k: int, exhaustive: bool = False
           ) -> list[tuple[int, float]]:
    """The ``top_k`` best completions as (index, (score + PLL) / 2), best first, ties in input
    order. ``filled``: each completion's ids (gaps filled); ``gaps``: its gap positions;
    ``scores``: the decoder's scores; ``kind``: a name of :data:`RERANKS` other than ``off``;
    ``exhaustive``: score every completion in full (the reference)."""

    if kind not in RERANKS or kind == "off":
        raise ConfigError(f"unknown rerank {kind!r}; choose from {', '.join(RERANKS)}",
                          field="rerank")
    best = length_ranking.rank(model, kind, filled, gaps, scores, [0] * len(filled), top_k,
                               exhaustive=exhaustive, base=scores)
    return [(j, v / 2) for j, v in best]
