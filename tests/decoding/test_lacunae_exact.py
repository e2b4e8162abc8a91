"""Gaps of uncertain length: the bounded ranking (only what can reach the top-k is rescored)
gives exactly the completions and scores of scoring every completion in full."""
from __future__ import annotations

import importlib

import pytest
import torch

import infill
from infill.filling import length_ranking as rank_lengths
from infill.filling.length_ranking import rank

energy = importlib.import_module("infill.mcmc.energy")


def candidates(model, text: str, lengths, per_length: int, seed: int = 0):
    """Completions of ``text``'s gap at each length: random output tokens (seeded), as
    (filled ids, gap positions)."""
    gen = torch.Generator().manual_seed(seed)
    ok = model.allowed_mask(False).nonzero()[:, 0]
    out = []
    for n in lengths:
        enc = model.encode(text, n)
        for _ in range(per_length):
            ids = list(enc.input_ids)
            for p in enc.positions:
                ids[p] = int(ok[torch.randint(len(ok), (1,), generator=gen)])
            out.append((ids, list(enc.positions)))
    return out


def brute(model, kind, cands, k):
    """Every completion scored (the library's exhaustive scorer), sorted, ties in order."""
    values = energy.length_scores(model, kind, [f for f, _ in cands], [g for _, g in cands],
                                  [0.0] * len(cands), [1] * len(cands))
    order = sorted(range(len(cands)), key=lambda j: (-values[j], j))[:k]
    return order, [values[j] for j in order]


@pytest.mark.parametrize("kind", ["pll", "pll-gap"])
@pytest.mark.parametrize("k", [1, 3, 7])
def test_bounded_ranking_is_the_exhaustive_one_greek(greek_char_dir, kind, k):
    m = infill.load_model(greek_char_dir, device="cpu")
    cands = candidates(m, "αβγ δεζ ___ ηθι κλμ", (2, 3, 4), 4)
    args = (m, kind, [f for f, _ in cands], [g for _, g in cands], [0.0] * len(cands),
            [1] * len(cands), k)
    fast, full = rank(*args), rank(*args, exhaustive=True)
    assert fast == full                                      # the same floats, bit for bit
    order, values = brute(m, kind, cands, k)
    assert [j for j, _ in fast] == order
    assert [v for _, v in fast] == pytest.approx(values, abs=1e-5)    # batched otherwise


@pytest.mark.parametrize("kind", ["pll", "pll-word"])
def test_bounded_ranking_is_the_exhaustive_one_wordpiece(bert, kind):
    cands = candidates(bert, "the ___ sat on the mat", (1, 2, 3), 5, seed=1)
    args = (bert, kind, [f for f, _ in cands], [g for _, g in cands], [0.0] * len(cands),
            [1] * len(cands), 4)
    fast = rank(*args)
    assert fast == rank(*args, exhaustive=True)
    order, values = brute(bert, kind, cands, 4)
    assert [j for j, _ in fast] == order
    assert [v for _, v in fast] == pytest.approx(values, abs=1e-5)    # batched otherwise


def test_poor_completions_are_not_scored_in_full(greek_char_dir, monkeypatch):
    """A completion whose partial sum is already below the k-th best stops: fewer forward rows
    than scoring everything, same answer."""
    m = infill.load_model(greek_char_dir, device="cpu")
    good = candidates(m, "αβγ δεζ ___ ηθι κλμ", (3,), 1, seed=3)
    filled, gaps = [f for f, _ in good], [g for _, g in good]
    for n in (2, 3, 4):                        # the same fill as the best, and junk fills
        enc = m.encode("αβγ δεζ ___ ηθι κλμ", n)
        for junk in ("ωωωω", "ψψψψ", "ξξξξ"):
            ids = list(enc.input_ids)
            for p, c in zip(enc.positions, junk):
                ids[p] = m.token_to_id(c)
            filled.append(ids)
            gaps.append(list(enc.positions))
    rows = []
    pll = importlib.import_module("infill.decoding.pll")
    real = pll.energy_terms
    monkeypatch.setattr(pll, "energy_terms",
                        lambda model, ids, attn, scored, *a: rows.append(int(scored.sum()))
                        or real(model, ids, attn, scored, *a))
    monkeypatch.setattr(rank_lengths, "BLOCK_TOKENS_CPU", 1)     # one row per call
    args = (m, "pll", filled, gaps, [0.0] * len(filled), [1] * len(filled), 1)
    fast = rank(*args)
    fast_rows = sum(rows)
    rows.clear()
    assert fast == rank(*args, exhaustive=True)
    assert fast_rows < sum(rows)


def test_fill_ranks_lengths_as_the_exhaustive_path(greek_char_dir, monkeypatch):
    """infill.fill with a range of lengths: the same completions and rank scores as with every
    completion rescored."""
    m = infill.load_model(greek_char_dir, device="cpu")
    text = "αβγ ___ δεζ ηθ ___ ικλ"
    got = infill.fill(m, text, gap=[(1, 3), (2, 3)], top_k=4, beam_size=4)[0]
    full = rank_lengths.rank
    monkeypatch.setattr(rank_lengths, "rank", lambda *a, **o: full(*a, **o, exhaustive=True))
    want = infill.fill(m, text, gap=[(1, 3), (2, 3)], top_k=4, beam_size=4)[0]
    assert [(c.text, c.score, c.rank_score) for c in got] == \
        [(c.text, c.score, c.rank_score) for c in want]


def test_the_ranking_shows_a_bar_when_asked(greek_char_dir, capsys):
    m = infill.load_model(greek_char_dir, device="cpu")
    cands = candidates(m, "αβγ ___ δεζ", (1, 2), 2)
    args = (m, "pll", [f for f, _ in cands], [g for _, g in cands], [0.0] * 4, [1] * 4, 2)
    rank(*args, progress=True)
    assert "lengths:" in capsys.readouterr().err
    rank(*args, progress=False)
    assert capsys.readouterr().err == ""
