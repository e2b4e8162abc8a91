"""The conditional tables of two positions (:class:`PairTables`): what :mod:`infill.joint.tables`
reads from a model and every joint of :mod:`infill.joint.constructions` is built from."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

__all__ = ["PairTables"]


@dataclass
class PairTables:
    """Everything the joints need for one input and two positions a < b (or a > b).

    ``cand_a``/``cand_b`` -- output ids of the candidate sets A and B: the allowed output
    vocabulary when it has at most ``joint_size`` ids, else the top-``joint_size`` of the
    both-masked marginal, best first; the gold token is appended when given and missing.
    ``log_qa``/``log_qb`` -- marginals with a and b masked; ``log_qa_b``/``log_qb_a`` -- the unary
    conditionals; all renormalized over the candidate sets (float64). ``logits_a_b``/``logits_b_a``
    -- the raw logits on the same grid, or None when the adapter has no ``logits`` method.
    ``gold`` -- (index in A, index in B) of the gold pair, or None. ``window`` -- (start, end):
    the context window [start, end) of the input's model-token positions the tables were read in
    (specials kept) when the input was longer than the model's maximum length, else None.
    """

    a: int
    b: int
    cand_a: torch.Tensor
    cand_b: torch.Tensor
    log_qa: torch.Tensor
    log_qb: torch.Tensor
    log_qa_b: torch.Tensor
    log_qb_a: torch.Tensor
    logits_a_b: torch.Tensor | None = None
    logits_b_a: torch.Tensor | None = None
    gold: tuple[int, int] | None = None
    window: tuple[int, int] | None = None
