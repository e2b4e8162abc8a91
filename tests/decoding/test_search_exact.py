"""Beam search against exhaustive enumeration on tiny models (METHODS §1).

The reference below recomputes the chained score of every fill in V^n with its own forward passes,
independently of the engine: with a beam wide enough to keep every prefix, the engine's best
completion and score must equal the exhaustive argmax.
"""
from __future__ import annotations

import itertools

import pytest
import torch

import infill

TEXT = "the ___ sat on the mat"


def _pass(model, ids, positions):
    x = torch.tensor([ids])
    return model.log_probs(x, torch.ones_like(x, dtype=torch.bool), torch.tensor([positions]))[0].double()


def chained(model, ids, gap_pos, fill, scorer, order, pivot=None):
    """(score, per-step subtracted pivot terms) of one complete fill, recomputed step by step."""
    allowed = model.allowed_mask()
    pivot = model.mask_id if pivot is None else pivot
    x = list(ids)
    remaining = list(gap_pos)
    total, pivot_terms = 0.0, []
    while remaining:
        lq = _pass(model, x, remaining)                               # all unfilled = [MASK]
        if order == "left-to-right":
            k = 0
        else:
            k = int(lq.masked_fill(~allowed, float("-inf")).amax(-1).argmax())
        g = remaining[k]
        if scorer == "hcb" and pivot != model.mask_id:                 # pivots injected as context
            ctx = [pivot if (t in remaining and t != g) else w for t, w in enumerate(x)]
            lq_g = _pass(model, ctx, [g])[0]
        else:
            lq_g = lq[k]
        w = fill[gap_pos.index(g)]
        total += float(lq_g[w])
        if scorer == "hcb":
            total -= float(lq_g[pivot])
            pivot_terms.append(float(lq_g[pivot]))
        x[g] = w
        remaining.remove(g)
    return total, pivot_terms


def exhaustive(model, ids, gap_pos, scorer, order, pivot=None):
    cands = model.allowed_mask().nonzero().squeeze(1).tolist()
    scores = {f: chained(model, ids, gap_pos, f, scorer, order, pivot)[0]
              for f in itertools.product(cands, repeat=len(gap_pos))}
    return sorted(scores.items(), key=lambda kv: -kv[1])


@pytest.mark.parametrize("scorer", ["standard", "hcb"])
@pytest.mark.parametrize("order", ["left-to-right", "best-to-worst"])
def test_full_beam_equals_exhaustive_argmax(tiny_model, scorer, order):
    enc = tiny_model.encode(TEXT, gap=3)
    n_cand = int(tiny_model.allowed_mask().sum())
    hyps = infill.decode(tiny_model, enc.input_ids, scorer=scorer, order=order, beam_size=n_cand ** 3)
    ref = exhaustive(tiny_model, enc.input_ids, enc.positions, scorer, order)
    assert hyps[0].tokens == ref[0][0]
    assert hyps[0].score == pytest.approx(ref[0][1], abs=1e-4)
    # every fill is kept with a full beam: the whole ranking matches
    assert len(hyps) == n_cand ** 3
    got = {h.tokens: h.score for h in hyps}
    for fill_, s in ref:
        assert got[fill_] == pytest.approx(s, abs=1e-4)


@pytest.mark.parametrize("order", ["left-to-right", "best-to-worst"])
def test_hcb_with_injected_pivot_equals_exhaustive(bert, order):
    enc = bert.encode(TEXT, gap=2)
    pivot = bert.token_to_id("dog")
    n_cand = int(bert.allowed_mask().sum())
    hyps = infill.decode(bert, enc.input_ids, scorer="hcb", order=order, beam_size=n_cand ** 2,
                         pivot="dog")
    ref = exhaustive(bert, enc.input_ids, enc.positions, "hcb", order, pivot=pivot)
    assert hyps[0].tokens == ref[0][0]
    assert hyps[0].score == pytest.approx(ref[0][1], abs=1e-4)


@pytest.mark.parametrize("order", ["left-to-right", "best-to-worst"])
def test_hcb_minus_standard_is_minus_sum_log_q_mask(tiny_model, order):
    enc = tiny_model.encode(TEXT, gap=3)
    n_cand = int(tiny_model.allowed_mask().sum())
    hcb = {h.tokens: h.score for h in infill.decode(tiny_model, enc.input_ids, scorer="hcb",
                                                    order=order, beam_size=n_cand ** 3)}
    std = {h.tokens: h.score for h in infill.decode(tiny_model, enc.input_ids, scorer="standard",
                                                    order=order, beam_size=n_cand ** 3)}
    assert hcb.keys() == std.keys()
    for fill_ in list(hcb)[:: max(1, len(hcb) // 25)]:
        _, mask_terms = chained(tiny_model, enc.input_ids, enc.positions, fill_, "hcb", order)
        assert len(mask_terms) == 3
        assert hcb[fill_] - std[fill_] == pytest.approx(-sum(mask_terms), abs=1e-4)


def test_narrow_beam_is_a_beam_not_exhaustive(bert):
    """A beam of 2 keeps 2 hypotheses per step; its result is a valid chained score of its fill."""
    enc = bert.encode(TEXT, gap=3)
    hyps = infill.decode(bert, enc.input_ids, scorer="hcb", beam_size=2)
    assert len(hyps) == 2 and hyps[0].score >= hyps[1].score
    for h in hyps:
        ref, _ = chained(bert, enc.input_ids, enc.positions, h.tokens, "hcb", "left-to-right")
        assert h.score == pytest.approx(ref, abs=1e-4)


def test_dedup_switch_and_no_duplicate_fills(bert):
    """best-to-worst picks its next position as a function of the partial fill, so a fill is reached
    by one path only; with or without dedup the results agree and contain no duplicate fill."""
    enc = bert.encode(TEXT, gap=3)
    on = infill.decode(bert, enc.input_ids, order="best-to-worst", beam_size=30, dedup=True)
    off = infill.decode(bert, enc.input_ids, order="best-to-worst", beam_size=30, dedup=False)
    assert [h.tokens for h in on] == [h.tokens for h in off]
    assert len({h.tokens for h in on}) == len(on) == 30


def test_beam_wider_than_candidates_keeps_every_candidate(bert):
    enc = bert.encode("the ___ sat", gap=1)
    hyps = infill.decode(bert, enc.input_ids, beam_size=50)
    assert len(hyps) == int(bert.allowed_mask().sum())
    assert all(t not in bert.special_ids for h in hyps for t in h.tokens)
    with_special = infill.decode(bert, enc.input_ids, beam_size=50, allow_special=True)
    assert len(with_special) == bert.vocab_size
