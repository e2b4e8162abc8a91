"""Scorers: the per-step update rule of beam search (SPEC §1, §1.2). One class = one rule.

Extending hypothesis h by filling gap position g with token w adds ``update(...)[w]`` to its score.
Every scorer reads the log-probabilities of one forward pass; the engine decides which input that
pass sees via :attr:`Scorer.pivot_context` (all unfilled positions ``[MASK]``, or the pivot injected
at the unfilled positions other than g).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from infill.lazy import torch

from infill.decoding.proposals import KeyedRNG
from infill.errors import ConfigError


@dataclass
class Step:
    """What a scorer may read at one step, for R live hypotheses.

    logq   -- [R, V] log q_g(. | x) at the position g being filled, x the scorer's context
    pivot  -- [R] the pivot token p_g at that position
    owner  -- [R] index of the input each hypothesis belongs to (distinct inputs, distinct ids)
    keys   -- [R] a key per hypothesis that depends only on its input and beam slot
    index  -- the step number (0 = the first position filled)
    rng    -- counter-based RNG: ``rng.uniform(keys, index, n)`` (draws independent of batching)
    generator -- seeded sequential RNG (for draws that depend on the batch by definition)
    """

    logq: torch.Tensor
    pivot: torch.Tensor
    owner: torch.Tensor
    keys: torch.Tensor
    index: int
    rng: KeyedRNG
    generator: torch.Generator


class Scorer(ABC):
    """One update rule. ``pivot`` and ``pivot_context`` tell the engine what the model must see."""

    name: str = "scorer"
    #: pivot spec: None (the model's default pivot), a token id / token string, or one per gap position
    pivot: int | str | Sequence[int | str] | None = None
    #: "inject": unfilled positions other than g hold their pivot token; "mask": they hold [MASK]
    pivot_context: str = "mask"

    @abstractmethod
    def update(self, step: Step) -> torch.Tensor:
        """[R, V] score increments, one per candidate token at the position being filled."""

    @classmethod
    def from_options(cls, pivot=None, pivot_context: str = "inject") -> "Scorer":
        """A scorer of this class from the decoding options (``DecodeConfig.pivot`` and
        ``pivot_context``); :class:`ConfigError` for an option the rule does not take."""
        if pivot is not None:
            raise ConfigError(f"a pivot does not apply to the {cls.name} scorer")
        return cls()

    def prepare(self, allowed: torch.Tensor) -> None:
        """Called by the engine before decoding with the [V] mask of placeable tokens."""

    def end_batch(self, n_inputs: int) -> None:
        """Called by the engine after each decoded batch (stateful scorers hook in here)."""

    def needs_pivot_pass(self, pivots: torch.Tensor, mask_id: int) -> bool:
        """Whether the pass that scores must differ from the all-``[MASK]`` pass."""
        return self.pivot_context == "inject" and bool((pivots != mask_id).any())


class StandardScorer(Scorer):
    """score(h + (g,w)) = score(h) + log q_g(w | x(h)), every unfilled position ``[MASK]``."""

    name = "standard"

    @classmethod
    def from_options(cls, pivot=None, pivot_context: str = "inject") -> "StandardScorer":
        if pivot is not None:
            raise ConfigError("a pivot only applies to the hcb (or ablation) scorers")
        return cls()

    def update(self, step: Step) -> torch.Tensor:
        return step.logq


class HCBScorer(Scorer):
    """score(h + (g,w)) = score(h) + log q_g(w | x) − log q_g(p_g | x)   (Hammersley–Clifford–Besag).

    ``pivot``: None (the model's default: ``[MASK]``, or ``-`` for Ithaca-style models), one token
    (id or string) for every position, or one per gap position. ``pivot_context="inject"`` (SPEC)
    puts the pivot at the other unfilled positions of x; ``"mask"`` keeps ``[MASK]`` there and only
    subtracts the pivot's log-probability (the paper's published code, for comparison). With the
    ``[MASK]`` pivot the two coincide and HCB costs no extra model call.
    """

    name = "hcb"

    def __init__(self, pivot=None, pivot_context: str = "inject"):
        if pivot_context not in ("inject", "mask"):
            raise ConfigError(f"pivot_context must be 'inject' or 'mask', not {pivot_context!r}")
        self.pivot = pivot
        self.pivot_context = pivot_context

    @classmethod
    def from_options(cls, pivot=None, pivot_context: str = "inject") -> "HCBScorer":
        return cls(pivot=pivot, pivot_context=pivot_context)

    def update(self, step: Step) -> torch.Tensor:
        return step.logq - step.logq.gather(1, step.pivot[:, None])


class ContextScrambleScorer(Scorer):
    """Ablation: the pivot term log q_g(p_g | x(h)) replaced by one drawn from the last ``memory``
    such values computed on *other* inputs (SPEC §1.2). The buffer persists across calls; until it
    holds a value from another input, values from other inputs of the same step are used, and for
    the very first step of a single input the row's own value (plain HCB) is kept.
    """

    name = "scramble"

    def __init__(self, pivot=None, memory: int = 1000):
        self.pivot = pivot
        self.pivot_context = "inject"
        self.memory = memory
        self._values = torch.empty(0, dtype=torch.float64)
        self._owners = torch.empty(0, dtype=torch.long)
        self._batch = 0  # owners are offset per call so different calls count as different inputs

    @classmethod
    def from_options(cls, pivot=None, pivot_context: str = "inject") -> "ContextScrambleScorer":
        return cls(pivot=pivot)

    def update(self, step: Step) -> torch.Tensor:
        own = step.logq.gather(1, step.pivot[:, None]).squeeze(1).double().cpu()
        owner = step.owner.cpu() + self._batch
        pool_v = torch.cat([self._values, own])
        pool_o = torch.cat([self._owners, owner])
        other = pool_o[None, :] != owner[:, None]                      # [R, M]
        has_other = other.any(1)
        weights = other.double() + (~has_other)[:, None].double() * (pool_o[None, :] == owner[:, None])
        pick = torch.multinomial(weights, 1, generator=step.generator).squeeze(1)
        replacement = pool_v[pick].to(step.logq.device, step.logq.dtype)
        self._values = pool_v[-self.memory:]
        self._owners = pool_o[-self.memory:]
        return step.logq - replacement[:, None]

    def end_batch(self, n_inputs: int) -> None:
        self._batch += n_inputs

    @property
    def pool_size(self) -> int:
        """How many pivot terms of earlier inputs are remembered (at most ``memory``)."""
        return len(self._values)


class RandomSwapScorer(Scorer):
    """Ablation: the pivot replaced by a uniformly random token u ∉ specials: subtract log q_g(u | x(h))."""

    name = "swap"
    pivot_context = "mask"

    def __init__(self, candidates: torch.Tensor | None = None):
        self.candidates = candidates  # [K] ids to draw u from; None: the placeable tokens

    @classmethod
    def from_options(cls, pivot=None, pivot_context: str = "inject") -> "RandomSwapScorer":
        if pivot is not None:
            raise ConfigError("the swap ablation draws its own pivot; --pivot does not apply")
        return cls()

    def prepare(self, allowed: torch.Tensor) -> None:
        if self.candidates is None:
            self.candidates = allowed.nonzero().squeeze(1)

    def update(self, step: Step) -> torch.Tensor:
        cand = self.candidates.to(step.logq.device)
        u = cand[step.rng.integers(step.keys, step.index, len(cand)).to(cand.device)]
        return step.logq - step.logq.gather(1, u[:, None])


SCORERS: dict[str, type[Scorer]] = {cls.name: cls for cls in (
    HCBScorer, StandardScorer, ContextScrambleScorer, RandomSwapScorer)}
"""Scorer names (``--scorer``, ``scorer=``) -> classes; the first is the default."""


def make_scorer(scorer: "str | Scorer", pivot=None, pivot_context: str = "inject") -> Scorer:
    """A fresh scorer from its name (a key of :data:`SCORERS`), or the given instance."""
    if isinstance(scorer, Scorer):
        return scorer
    if scorer not in SCORERS:
        raise ConfigError(f"unknown scorer {scorer!r}; choose from {', '.join(SCORERS)}")
    return SCORERS[scorer].from_options(pivot=pivot, pivot_context=pivot_context)
