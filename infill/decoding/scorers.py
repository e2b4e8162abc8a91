"""Scorers: the per-step update rule of beam search (METHODS §1, §1.2). One class = one rule.

Extending hypothesis h by filling gap position g with token w adds ``update(...)[w]`` to its score.
Every scorer reads the log-probabilities of one forward pass: the step's own pass, where every
unfilled position holds ``[MASK]``, unless the scorer's :meth:`Scorer.context` hook returns the
inputs of a pass of its own (HCB with a non-mask pivot injected as context). The engine knows no
pivot; a new rule is one class here and one entry in :data:`SCORER_CLASSES`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from infill.lazy import torch

from infill.decoding.proposals import KeyedRNG
from infill.errors import ConfigError


@dataclass
class Setup:
    """What a scorer may read before decoding a batch of N inputs.

    model   -- the :class:`~infill.models.base.MaskedLM`
    allowed -- [V] bool, the tokens that may be placed in a gap
    n_slots -- [N] gap positions of each input (slots 0..n-1, in position order)
    width   -- P, the padded number of slots
    """

    model: object
    allowed: torch.Tensor
    n_slots: list[int]
    width: int


@dataclass
class Context:
    """One step's moves, for a scorer that needs a pass of its own (:meth:`Scorer.context`).

    x        -- [M, T] each move's hypothesis input: filled slots hold their tokens, every
                unfilled slot (the one being filled included) holds ``[MASK]``
    slots    -- [M, P] the gap positions of the move's input
    unfilled -- [M, P] bool, the hypothesis' unfilled slots
    target   -- [M] the slot the move fills
    owner    -- [M] the input the move belongs to
    """

    x: torch.Tensor
    slots: torch.Tensor
    unfilled: torch.Tensor
    target: torch.Tensor
    owner: torch.Tensor


@dataclass
class Step:
    """What a scorer may read at one step, for M moves (a hypothesis filling one slot).

    logq   -- [M, V] log q_g(. | x) at the slot g being filled, x the scorer's context
    slot   -- [M] that slot (index into the input's gap positions)
    owner  -- [M] index of the input each move belongs to (distinct inputs, distinct ids)
    keys   -- [M] a key per move that depends only on its input, beam slot (and gap slot)
    index  -- the step number (0 = the first position filled)
    rng    -- counter-based RNG: ``rng.uniform(keys, index, n)`` (draws independent of batching)
    generator -- seeded sequential RNG (for draws that depend on the batch by definition)
    """

    logq: torch.Tensor
    slot: torch.Tensor
    owner: torch.Tensor
    keys: torch.Tensor
    index: int
    rng: KeyedRNG
    generator: torch.Generator


class Scorer(ABC):
    """One update rule. The engine asks it what extra context a step needs (:meth:`context`)."""

    name: str = "scorer"

    @abstractmethod
    def update(self, step: Step) -> torch.Tensor:
        """[M, V] score increments, one per candidate token at the slot being filled."""

    @classmethod
    def from_options(cls, pivot=None, **_) -> "Scorer":
        """A scorer of this class from the decoding options (``DecodeConfig.pivot`` and
        ``pivot_context``); :class:`ConfigError` for an option the rule does not take."""
        if pivot is not None:
            raise ConfigError(f"a pivot does not apply to the {cls.name} scorer")
        return cls()

    def prepare(self, setup: Setup) -> None:
        """Called by the engine before decoding a batch (:class:`Setup`)."""

    def context(self, ctx: Context) -> torch.Tensor | None:
        """[M, T] inputs of a second pass that scores the moves (log q read at each move's
        target position), or None: score from the step's own pass, where every unfilled slot
        holds ``[MASK]``."""
        return None

    def end_batch(self, n_inputs: int) -> None:
        """Called by the engine after each decoded batch (stateful scorers hook in here)."""


class StandardScorer(Scorer):
    """score(h + (g,w)) = score(h) + log q_g(w | x(h)), every unfilled position ``[MASK]``."""

    name = "standard"

    @classmethod
    def from_options(cls, pivot=None, pivot_context: str = "inject", **_) -> "StandardScorer":
        if pivot is not None:
            raise ConfigError("a pivot only applies to the hcb (or ablation) scorers")
        _no_pivot_context(cls.name, pivot_context)
        return cls()

    def update(self, step: Step) -> torch.Tensor:
        return step.logq


class HCBScorer(Scorer):
    """score(h + (g,w)) = score(h) + log q_g(w | x) − log q_g(p_g | x)   (Hammersley–Clifford–Besag).

    ``pivot``: None (the model's default: ``[MASK]``, or ``-`` for Ithaca-style models), one token
    (id or string) for every position, or one per gap position. ``pivot_context="inject"`` (METHODS §1)
    puts the pivot at the other unfilled positions of x; ``"mask"`` keeps ``[MASK]`` there and only
    subtracts the pivot's log-probability (the paper's published code, for comparison). With the
    ``[MASK]`` pivot the two coincide and HCB costs no extra model call: :meth:`context` asks the
    engine for a second pass only when a non-mask pivot is injected.
    """

    name = "hcb"

    def __init__(self, pivot=None, pivot_context: str = "inject"):
        if pivot_context not in ("inject", "mask"):
            raise ConfigError(f"pivot_context must be 'inject' or 'mask', not {pivot_context!r}")
        self.pivot = pivot
        self.pivot_context = pivot_context
        self._pivots: torch.Tensor | None = None   # [N, P] pivot id per gap slot (prepare)
        self._inject = False

    @classmethod
    def from_options(cls, pivot=None, pivot_context: str = "inject", **_) -> "HCBScorer":
        return cls(pivot=pivot, pivot_context=pivot_context)

    def prepare(self, setup: Setup) -> None:
        model = setup.model
        self._pivots = _resolve_pivots(model, self.pivot, setup.n_slots, setup.width)
        real = self._pivots[_slot_ok(setup.n_slots, setup.width)]
        self._inject = self.pivot_context == "inject" and bool((real != model.mask_id).any())

    def pivots(self, owner: torch.Tensor, slot: torch.Tensor) -> torch.Tensor:
        """[M] the pivot token p_g of each move's slot."""
        piv = self._pivots.to(owner.device)
        return piv[owner, slot.to(owner.device)]

    def context(self, ctx: Context) -> torch.Tensor | None:
        if not self._inject:
            return None
        piv = self._pivots.to(ctx.x.device)[ctx.owner]                       # [M, P]
        slot_idx = torch.arange(ctx.slots.shape[1], device=ctx.x.device)
        others = ctx.unfilled & (slot_idx[None, :] != ctx.target[:, None])
        return ctx.x.scatter(1, ctx.slots, torch.where(others, piv, ctx.x.gather(1, ctx.slots)))

    def update(self, step: Step) -> torch.Tensor:
        return step.logq - step.logq.gather(1, self.pivots(step.owner, step.slot)[:, None])


def _slot_ok(n_slots: list[int], width: int) -> torch.Tensor:
    """[N, P] bool: which padded slots are real gap positions."""
    return torch.arange(width)[None, :] < torch.tensor(n_slots, dtype=torch.long)[:, None]


def _resolve_pivots(model, pivot, n_slots: list[int], width: int) -> torch.Tensor:
    """[N, P] pivot id per gap slot, from None / one token / one token per gap position."""
    if pivot is None or isinstance(pivot, (int, str)):
        return torch.full((len(n_slots), width), model.resolve_pivot(pivot), dtype=torch.long)
    ids = [model.resolve_pivot(p) for p in pivot]
    rows = []
    for n in n_slots:
        if len(ids) != n:
            raise ConfigError(f"a per-position pivot needs one token per gap position: got {len(ids)} "
                              f"for an input with {n} gap positions")
        rows.append(ids + [model.default_pivot] * (width - n))
    return torch.tensor(rows, dtype=torch.long)


class ContextScrambleScorer(HCBScorer):
    """Ablation: the pivot term log q_g(p_g | x(h)) replaced by one drawn from the last ``memory``
    such values computed on *other* inputs (METHODS §1.2). The buffer persists across calls; until it
    holds a value from another input, values from other inputs of the same step are used, and for
    the very first step of a single input the row's own value (plain HCB) is kept.
    """

    name = "scramble"

    def __init__(self, pivot=None, memory: int = 1000, pivot_context: str = "inject"):
        super().__init__(pivot=pivot, pivot_context=pivot_context)
        self.memory = memory
        self._values = torch.empty(0, dtype=torch.float64)
        self._owners = torch.empty(0, dtype=torch.long)
        self._batch = 0  # owners are offset per call so different calls count as different inputs

    @classmethod
    def from_options(cls, pivot=None, pivot_context: str = "inject",
                     **_) -> "ContextScrambleScorer":
        return cls(pivot=pivot, pivot_context=pivot_context)

    def update(self, step: Step) -> torch.Tensor:
        own = step.logq.gather(1, self.pivots(step.owner, step.slot)[:, None]).squeeze(1)
        own = own.double().cpu()
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

    def __init__(self, candidates: torch.Tensor | None = None):
        self.candidates = candidates  # [K] ids to draw u from; None: the placeable tokens

    @classmethod
    def from_options(cls, pivot=None, pivot_context: str = "inject", **_) -> "RandomSwapScorer":
        if pivot is not None:
            raise ConfigError("the swap ablation draws its own pivot; 'pivot' does not apply",
                              field="pivot")
        _no_pivot_context(cls.name, pivot_context)
        return cls()

    def prepare(self, setup: Setup) -> None:
        if self.candidates is None:
            self.candidates = setup.allowed.nonzero().squeeze(1)

    def update(self, step: Step) -> torch.Tensor:
        cand = self.candidates.to(step.logq.device)
        u = cand[step.rng.integers(step.keys, step.index, len(cand)).to(cand.device)]
        return step.logq - step.logq.gather(1, u[:, None])


def _no_pivot_context(name: str, pivot_context: str) -> None:
    """ConfigError for ``pivot_context="mask"`` given to a scorer that injects no pivot (the
    option is honoured or refused, never dropped)."""
    if pivot_context != "inject":
        raise ConfigError(f"'pivot_context' says what stands at the other unfilled positions "
                          f"when a pivot is injected; the {name} scorer injects none (the hcb "
                          "and scramble scorers do: give scorer hcb)", field="pivot_context")


SCORER_CLASSES: dict[str, type[Scorer]] = {cls.name: cls for cls in (
    HCBScorer, StandardScorer, ContextScrambleScorer, RandomSwapScorer)}
"""Scorer names (``--scorer``, ``scorer=``) -> classes; the first is the default."""


def make_scorer(scorer: "str | Scorer", **options) -> Scorer:
    """A fresh scorer from its name (a key of :data:`SCORER_CLASSES`) and the decoding options
    (``pivot=``, ``pivot_context=``), or the given instance."""
    if isinstance(scorer, Scorer):
        return scorer
    if scorer not in SCORER_CLASSES:
        raise ConfigError(f"unknown scorer {scorer!r}; choose from {', '.join(SCORER_CLASSES)}")
    return SCORER_CLASSES[scorer].from_options(**options)
