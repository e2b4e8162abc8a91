"""A user's Scorer is checked where the engine receives its update: a wrong type, shape or value
is infill's own error naming the scorer; NaN log-probabilities are said to be the model's."""
from __future__ import annotations

import pytest
import torch

import infill
from infill.decoding.scorers import Scorer
from infill.errors import ConfigError, InfillError


class Returns(Scorer):
    """A scorer whose update is ``make(logq)``."""

    def __init__(self, name, make):
        self.name, self.make = name, make

    def update(self, step):
        return self.make(step.logq)


@pytest.mark.parametrize("name, make, words", [
    ("neg-inf", lambda q: torch.full_like(q, float("-inf")), "scored every candidate token -inf"),
    ("listed", lambda q: q.tolist(), "must return a tensor of shape"),
    ("narrow", lambda q: q[:, :3], "got shape"),
    ("flat", lambda q: q.reshape(-1), "got shape"),
    ("nan", lambda q: torch.full_like(q, float("nan")), "returned NaN or +inf"),
    ("plus-inf", lambda q: torch.full_like(q, float("inf")), "returned NaN or +inf"),
    ("boolean", lambda q: q > 0, "real numbers"),
])
def test_a_broken_scorer_is_named(bert, name, make, words):
    with pytest.raises(ConfigError) as e:
        infill.fill(bert, "the ___ sat", gap=2, scorer=Returns(name, make))
    assert e.value.field == "scorer" and repr(name) in str(e.value) and words in str(e.value)


def test_an_integer_update_is_read_as_numbers(bert):
    got = infill.fill(bert, "the ___ sat", scorer=Returns("ints", lambda q: q.round().long()))
    assert got[0]


@pytest.mark.parametrize("scorer", ["standard", "hcb"])
def test_nan_from_the_model_is_said_to_be_the_models(bert, monkeypatch, scorer):
    real = bert.log_probs
    monkeypatch.setattr(bert, "log_probs", lambda *a: real(*a) * float("nan"))
    with pytest.raises(InfillError, match="model returned non-finite log-probabilities") as e:
        infill.fill(bert, "the ___ sat", scorer=scorer)
    assert "pivot" not in str(e.value)
