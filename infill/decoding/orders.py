"""Orders: which (gap position, token) moves a hypothesis may make at a step (METHODS §1 "Order").

An order sees, for R live hypotheses, which gap slots are still unfilled and (when it
:attr:`~Order.reads_all`) log q at every slot from the step's one forward pass, and returns the
moves to score: pairs (row, slot). The engine scores every move with the scorer's update and
lets the selector choose among all (move, token) candidates; it knows no order by name. A new
order is one class here and one entry in :data:`ORDERS`.

- ``left-to-right`` -- the first unfilled slot;
- ``best-to-worst`` -- the slot whose best allowed token is most probable (from the same pass);
- ``any-order``     -- every unfilled slot: each hypothesis proposes every (slot, token) pair and
  the global top-B survive (Ithaca's non-sequential beam search). Hypotheses that reach the
  same fill by different orders are one completion (the selector merges them).

Kept free of infill imports beyond torch so that :mod:`infill.config` can read the registry.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from infill.lazy import torch

NEG_INF = float("-inf")


class Order(ABC):
    """Chooses the moves of each hypothesis at a step."""

    name: str = "order"
    code: str = "order"
    """The short code of method names (``hcb-l2r``), :data:`infill.names.ORDER_CODES`."""
    #: whether choosing needs log q at every unfilled slot (one pass over all gap slots)
    reads_all: bool = False
    #: whether a hypothesis makes moves at several slots per step (the candidate grid is then
    #: [beam, slots, vocabulary] instead of [beam, vocabulary], and equal fills can meet)
    several: bool = False
    #: whether equal fills reached in different orders are merged (``dedup``): pointless when
    #: every hypothesis fills the same slot at a step
    dedup: bool = True

    def width(self, n_slots: int) -> int:
        """Columns of the candidate grid per hypothesis: 1, or one per gap slot."""
        return n_slots if self.several else 1

    @abstractmethod
    def moves(self, unfilled: torch.Tensor, logq_all: torch.Tensor | None,
              allowed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(row [M], slot [M]) of every move, rows ascending.

        unfilled -- [R, P] bool, slots still to fill
        logq_all -- [R, P, V] log q at every slot (None unless :attr:`reads_all`)
        allowed  -- [R, P, V] bool, the tokens that may be placed at each slot
        """


class LeftToRight(Order):
    """g = min(G \\ F(h)): the first unfilled slot."""

    name = "left-to-right"
    code = "l2r"
    dedup = False

    def moves(self, unfilled, logq_all, allowed):
        rows = torch.arange(unfilled.shape[0], device=unfilled.device)
        return rows, unfilled.int().argmax(1)


class BestToWorst(Order):
    """g = argmax over unfilled slots of max_w log q_g(w | x(h)) (allowed w), per hypothesis."""

    name = "best-to-worst"
    code = "b2w"
    reads_all = True

    def moves(self, unfilled, logq_all, allowed):
        conf = logq_all.masked_fill(~allowed.to(logq_all.device), NEG_INF).amax(-1)
        conf = conf.to(unfilled.device).masked_fill(~unfilled, NEG_INF)
        rows = torch.arange(unfilled.shape[0], device=unfilled.device)
        return rows, conf.argmax(1)


class AnyOrder(Order):
    """Every unfilled slot of every hypothesis (Ithaca's non-sequential beam search)."""

    name = "any-order"
    code = "any"
    reads_all = True
    several = True

    def moves(self, unfilled, logq_all, allowed):
        rows, slots = unfilled.nonzero(as_tuple=True)
        return rows, slots


ORDERS: dict[str, Order] = {o.name: o for o in (LeftToRight(), BestToWorst(), AnyOrder())}
"""Order names (``--order``, ``order=``) -> orders; the first is the default."""


def get_order(name: str) -> Order:
    """The registered order of that name (``KeyError`` is the caller's to word)."""
    return ORDERS[name]
