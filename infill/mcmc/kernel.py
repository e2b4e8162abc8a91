"""One Metropolis–Hastings step (METHODS §3): the masked-conditional proposal, the acceptance rule,
and the per-sweep schedules of target temperature and block size.

A step masks a block I of gap positions in every chain, draws each ``w_i ~ r_i(. | x with I
masked)`` independently from one forward pass (``r_i`` the model's masked conditional restricted
to allowed tokens, optionally tempered and nucleus-truncated: :func:`proposal_log_probs`), and
accepts ``x'`` with probability

    min(1, exp(-E(x')/tau + E(x)/tau) * prod_i r_i(x_i | .) / prod_i r_i(x'_i | .))

computed in log space (:func:`log_acceptance`).
"""
from __future__ import annotations

import torch

from infill.decoding.proposals import gumbel_argmax, proposal_log_probs
from infill.models.base import MaskedLM

__all__ = ["block_sizes", "log_acceptance", "propose", "proposal_log_probs", "temperatures"]


def log_acceptance(e_cur: torch.Tensor, e_prop: torch.Tensor, log_q_fwd: torch.Tensor,
                   log_q_rev: torch.Tensor, tau: float = 1.0) -> torch.Tensor:
    """log of the MH acceptance probability, in log space (never overflows, never NaN):

    ``min(0, (E(x) - E(x')) / tau + log q(x | x') - log q(x' | x))``.

    Equal energies (also equal infinities) contribute 0; an impossible reverse move
    (``log_q_rev = -inf``) gives ``-inf`` (always rejected).
    """
    e_cur, e_prop = e_cur.to(torch.float64), e_prop.to(torch.float64)
    diff = torch.where(e_cur == e_prop, torch.zeros_like(e_cur), e_cur - e_prop) / tau
    fwd, rev = log_q_fwd.to(torch.float64), log_q_rev.to(torch.float64)
    ratio = torch.where(rev == fwd, torch.zeros_like(rev), rev - fwd)
    out = diff + ratio
    # +inf + -inf (absurd energies against an impossible reverse move) -> reject.
    out = torch.where(torch.isnan(out), torch.full_like(out, float("-inf")), out)
    return out.clamp(max=0.0)


def propose(model: MaskedLM, x: torch.Tensor, block: torch.Tensor, allowed: torch.Tensor,
             proposal_temperature: float, top_p: float | None, gen: torch.Generator):
    """One proposal per chain from one forward pass: mask ``block`` in every row of ``x``
    [C, T], draw each position independently from its proposal distribution.

    Returns (x' [C, T], log q(x'|x) [C], log q(x|x') [C], changed [C] bool). The reverse
    probability comes from the same pass: x and x' agree outside the block.
    """
    chains = x.shape[0]
    masked = x.clone()
    masked[:, block] = model.mask_id
    log_q = model.log_probs(masked.to(model.device),
                            torch.ones_like(masked, dtype=torch.bool).to(model.device),
                            block.repeat(chains, 1).to(model.device))
    lp = proposal_log_probs(log_q.detach().to("cpu"), allowed, proposal_temperature, top_p)
    w = gumbel_argmax(lp, gen)                                           # [C, b]
    cur = x[:, block]
    fwd = lp.gather(-1, w[..., None])[..., 0].sum(-1)
    rev = lp.gather(-1, cur[..., None])[..., 0].sum(-1)
    prop = x.clone()
    prop[:, block] = w
    return prop, fwd, rev, (w != cur).any(-1)


def temperatures(temperature: float, anneal: float, min_temperature: float,
                  sweeps: int) -> list[float]:
    """Target temperature per sweep: ``max(floor, temperature - anneal * sweep)``, the floor
    ``min(min_temperature, temperature)``: annealing stops at ``min_temperature``, which never
    raises the target itself (a target of 0.005 stays 0.005 under the default floor 0.01)."""
    floor = min(min_temperature, temperature)
    return [max(floor, temperature - anneal * e) for e in range(sweeps)]


def block_sizes(block: int, n: int, sweeps: int, schedule: str) -> list[int]:
    """Block size per sweep: ``fixed``, or ``anneal`` = linear from ``block`` down to 1."""
    block = min(block, n)
    if schedule == "fixed" or sweeps == 1:
        return [block] * sweeps
    return [max(1, round(block - (block - 1) * e / (sweeps - 1))) for e in range(sweeps)]
