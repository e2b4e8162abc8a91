"""Calibrated probabilities (docs/METHODS.md §1.10): the one place a fill's log-scores become the
probabilities a person reads.

A set of alternatives -- the beam's completions of one input, the readings proposed for a text's
lacunae, an edition's readings of a lacuna -- with log-scores s_i gets

    p_i = exp(s_i / T) / (Σ_j exp(s_j / T) + exp(u))

with T the model's ``temperature`` and u its ``unlisted`` log-score (its ``defaults.json``, read
as :class:`infill.filling.defaults.Recommendation`; T = 1 and no u when it records none): the
alternatives are not all the restorations there are, and exp(u) stands for those not listed, so
the listed ones claim less when all of them are improbable. Without u the p_i sum to 1. The
fewer alternatives are listed, the more of the probability the unlisted ones hold: u may be a
list, u_k for k alternatives listed (the last for more), as an edition lacuna's few distinct
readings or a user's two proposed readings need. T and u
are fitted on validation (benchmarks/greek_calibration.py: least negative log-likelihood of top-1
correctness of the beam's first restoration, on editors' supplements) so that a probability of
0.8 is right about 80% of the time there. u applies to log-probabilities only: scores that rank
fills of several lengths (a ``rank_score``) are on another scale, and get the softmax alone.

Alternatives that fill several gaps at once (an edition's completions, the combinations of the
readings proposed for several lacunae) have joint scores, and u -- one lacuna's unlisted
restorations -- set against a joint score would let each gap's readings share every other gap's
doubt. Where u applies (:func:`gaps_on_their_own`), each gap of one length is calibrated on its
own (:func:`gap_calibrated`): its distinct fills, each with its own log-score there
(:func:`gap_score`, in the best alternative holding it), beside u_k for as many fills.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["MAX_TEMPERATURE", "MAX_UNLISTED", "calibrated", "gap_calibrated", "gap_score",
           "gaps_on_their_own", "model_calibrated"]

MAX_TEMPERATURE = 100.0
"""The largest temperature a ``defaults.json`` may record."""
MAX_UNLISTED = 50.0
"""The largest magnitude of the ``unlisted`` log-score a ``defaults.json`` may record."""


def calibrated(values: Sequence[float], temperature: float | None = None,
               unlisted: float | Sequence[float] | None = None) -> list[float]:
    """The probabilities of alternatives with log-scores ``values`` at ``temperature`` (None:
    1), with ``unlisted`` the log-score of the restorations not among them (None: none, the
    probabilities sum to 1; a list: its k-th for k alternatives, its last for more); a -inf
    value gets 0; uniform when every value is -inf."""
    t = 1.0 if temperature is None else float(temperature)
    if unlisted is not None and not isinstance(unlisted, (int, float)):
        unlisted = unlisted[min(len(values), len(unlisted)) - 1]
    top = max(values)
    if top == float("-inf"):
        return [1.0 / len(values)] * len(values)
    scaled = [v / t for v in values]
    top = max(scaled) if unlisted is None else max(max(scaled), unlisted)
    w = [math.exp(v - top) for v in scaled]
    total = sum(w) + (0.0 if unlisted is None else math.exp(unlisted - top))
    return [x / total for x in w]


def model_calibrated(values: Sequence[float], defaults, ranks_lengths: bool) -> list[float]:
    """:func:`calibrated` at the model's calibration (``defaults``: its
    :class:`~infill.filling.defaults.Defaults`, or None for none); ``ranks_lengths``: the values
    rank fills of several lengths, so the unlisted log-score does not apply."""
    if defaults is None:
        return calibrated(values)
    return calibrated(values, defaults.temperature, None if ranks_lengths else defaults.unlisted)


def gaps_on_their_own(defaults, gaps: int) -> bool:
    """Whether the gaps of alternatives filling ``gaps`` gaps are calibrated one by one: several
    gaps and an unlisted log-score in the model's calibration ``defaults``."""
    return gaps > 1 and defaults is not None and defaults.unlisted is not None


def gap_score(completion, gap: int) -> float:
    """A completion's own log-score at one gap: the sum of the log-probabilities of the gap's
    tokens (its positions' ``logq``), given the text and the gaps filled before them."""
    return sum(p.logq for p in completion.positions if p.gap_index == gap)


def gap_calibrated(best: Sequence, gap: int, defaults) -> list[float]:
    """The probabilities of one gap's distinct fills calibrated on their own, given the best
    completion holding each (``best``): their :func:`gap_score` at the model's calibration,
    beside its unlisted log-score."""
    return model_calibrated([gap_score(c, gap) for c in best], defaults, False)
