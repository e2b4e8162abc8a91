"""Calibrated probabilities (docs/METHODS.md §1.10): the one place a fill's log-scores become the
probabilities a person reads.

A set of alternatives -- the beam's completions of one input, the readings proposed for a text's
lacunae, an edition's readings of a lacuna -- with log-scores s_i gets

    p_i = exp(s_i / T) / Σ_j exp(s_j / T)

with T the model's ``temperature`` (its ``defaults.json``, read as
:attr:`infill.filling.defaults.Recommendation.temperature`; 1 when it records none). T is fitted
on validation (benchmarks/greek_calibration.py: the T that minimises the negative log-likelihood
of top-1 correctness of the beam's first restoration, on editors' supplements) so that a
probability of 0.8 is right about 80% of the time there.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["MAX_TEMPERATURE", "calibrated"]

MAX_TEMPERATURE = 100.0
"""The largest temperature a ``defaults.json`` may record."""


def calibrated(values: Sequence[float], temperature: float | None = None) -> list[float]:
    """The probabilities of alternatives with log-scores ``values`` at ``temperature`` (None:
    1); a -inf value gets 0; uniform when every value is -inf."""
    t = 1.0 if temperature is None else float(temperature)
    top = max(values)
    if top == float("-inf"):
        return [1.0 / len(values)] * len(values)
    w = [math.exp((v - top) / t) for v in values]
    total = sum(w)
    return [x / total for x in w]

