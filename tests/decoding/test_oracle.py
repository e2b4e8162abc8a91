"""Theorem 1 of the HCB beam-search paper on an oracle MLM built from an explicit joint.

With exact conditionals whose mask conditionals are exact marginals, the standard chained score of
a fill is log p(w_G | context), so standard beam search ranks completions exactly as the joint does.
HCB with a non-mask pivot injected as context scores log p(w_G | ctx) − log p(pivot_G | ctx): the
same ranking. Keeping [MASK] at unfilled positions while subtracting a non-mask pivot's
log-probability (the paper's code, ``pivot_context="mask"``) is not exact in general.
"""
from __future__ import annotations

import itertools

import pytest
import torch

import infill
from infill.models.oracle import OracleMLM

V, L = 3, 4


@pytest.fixture(scope="module")
def oracle():
    g = torch.Generator().manual_seed(3)
    logits = torch.randn([V] * L, generator=g, dtype=torch.float64) * 1.5
    return OracleMLM(logits - torch.logsumexp(logits.flatten(), 0))


def true_log_cond(oracle, ctx_tokens: dict[int, int], gap: list[int]):
    """log p(w_G | context) for every fill, by enumeration of the joint."""
    out = {}
    for full in itertools.product(range(V), repeat=L):
        if all(full[t] == w for t, w in ctx_tokens.items()):
            key = tuple(full[t] for t in gap)
            out[key] = float(oracle.log_joint[full])
    z = torch.logsumexp(torch.tensor(list(out.values()), dtype=torch.float64), 0).item()
    return {k: v - z for k, v in out.items()}


@pytest.mark.parametrize("order", ["left-to-right", "best-to-worst"])
@pytest.mark.parametrize("gap", [[1, 2], [0, 2, 3], [0, 1, 2, 3]])
def test_standard_beam_ranks_exactly_as_the_joint(oracle, order, gap):
    ctx = {t: (t + 1) % V for t in range(L) if t not in gap}
    ids = [oracle.mask_id if t in gap else ctx[t] for t in range(L)]
    hyps = infill.decode(oracle, ids, scorer="standard", order=order, beam_size=V ** len(gap))
    truth = true_log_cond(oracle, ctx, gap)
    assert [h.tokens for h in hyps] == sorted(truth, key=lambda k: -truth[k])
    for h in hyps:
        assert h.score == pytest.approx(truth[h.tokens], abs=1e-9)


@pytest.mark.parametrize("order", ["left-to-right", "best-to-worst"])
@pytest.mark.parametrize("pivot", [0, 2, [2, 0, 1]])
def test_hcb_with_injected_pivot_ranks_as_the_joint(oracle, order, pivot):
    gap = [0, 2, 3]
    ctx = {1: 1}
    ids = [oracle.mask_id if t in gap else ctx[t] for t in range(L)]
    hyps = infill.decode(oracle, ids, scorer="hcb", pivot=pivot, order=order, beam_size=V ** 3)
    truth = true_log_cond(oracle, ctx, gap)
    piv = tuple(pivot) if isinstance(pivot, list) else (pivot,) * len(gap)
    assert [h.tokens for h in hyps] == sorted(truth, key=lambda k: -truth[k])
    for h in hyps:
        assert h.score == pytest.approx(truth[h.tokens] - truth[piv], abs=1e-9)


def test_mask_context_with_non_mask_pivot_is_not_exact(oracle):
    gap = [0, 1, 2, 3]
    ids = [oracle.mask_id] * L
    truth = true_log_cond(oracle, {}, gap)
    hyps = infill.decode(oracle, ids, scorer="hcb", pivot=1, pivot_context="mask", beam_size=V ** 4)
    errors = [abs(h.score - (truth[h.tokens] - truth[(1,) * 4])) for h in hyps]
    assert max(errors) > 1e-3


def test_oracle_conditionals_are_exact(oracle):
    """The oracle itself: q_t(w | x) equals the joint's conditional with masked positions summed out."""
    x = torch.tensor([[2, oracle.mask_id, oracle.mask_id, 0]])
    lq = oracle.log_probs(x, torch.ones_like(x, dtype=torch.bool), torch.tensor([[1]]))[0, 0]
    p = oracle.log_joint.exp()[2, :, :, 0].sum(1)
    assert torch.allclose(lq.exp(), p / p.sum(), atol=1e-12)
