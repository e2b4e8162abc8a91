"""any-order (Ithaca's non-sequential beam search, METHODS §1) against brute-force enumeration.

The references below recompute everything with their own forward passes, independently of the
engine: the chained score of a fill along every filling order (a permutation of the gap
positions), and a plain dictionary-based any-order beam search.
"""
from __future__ import annotations

import itertools

import pytest
import torch

import infill
from infill.models.oracle import OracleMLM

TEXT = "the ___ sat on the mat"


class Conditionals:
    """log q at the gap positions of a partially filled input, one forward pass per distinct
    partial fill (memoized): the reference's own model calls."""

    def __init__(self, model, ids, gap_pos):
        self.model, self.ids, self.gap_pos = model, list(ids), list(gap_pos)
        self.cache: dict[tuple, torch.Tensor] = {}

    def __call__(self, partial: dict[int, int]) -> torch.Tensor:
        key = tuple(sorted(partial.items()))
        if key not in self.cache:
            x = list(self.ids)
            for p, w in partial.items():
                x[p] = w
            t = torch.tensor([x])
            self.cache[key] = self.model.log_probs(
                t, torch.ones_like(t, dtype=torch.bool), torch.tensor([self.gap_pos]))[0].double()
        return self.cache[key]


def update(cond, partial, g, w, scorer):
    lq = cond(partial)[cond.gap_pos.index(g)]
    return float(lq[w]) - (float(lq[cond.model.mask_id]) if scorer == "hcb" else 0.0)


def path_score(cond, fill, order, scorer):
    """The chained score of ``fill`` (tokens in position order) filled in ``order``."""
    partial, total = {}, 0.0
    for g in order:
        w = fill[cond.gap_pos.index(g)]
        total += update(cond, partial, g, w, scorer)
        partial[g] = w
    return total


def per_order_scores(model, ids, gap_pos, scorer):
    cond = Conditionals(model, ids, gap_pos)
    cands = model.allowed_mask().nonzero().squeeze(1).tolist()
    return {f: [path_score(cond, f, o, scorer) for o in itertools.permutations(gap_pos)]
            for f in itertools.product(cands, repeat=len(gap_pos))}


def reference_beam(model, ids, gap_pos, beam, scorer, keep):
    """Any-order beam search written plainly: every hypothesis proposes every (position, token)
    pair; candidates reaching the same fill are one, keeping the higher / lower score."""
    cond = Conditionals(model, ids, gap_pos)
    cands = model.allowed_mask().nonzero().squeeze(1).tolist()
    beams = {(): 0.0}
    for _ in gap_pos:
        new: dict[tuple, float] = {}
        for key, s in beams.items():
            partial = dict(key)
            for g in gap_pos:
                if g in partial:
                    continue
                for w in cands:
                    k = tuple(sorted({**partial, g: w}.items()))
                    v = s + update(cond, partial, g, w, scorer)
                    if k not in new or (v > new[k] if keep == "higher" else v < new[k]):
                        new[k] = v
        beams = dict(sorted(new.items(), key=lambda kv: -kv[1])[:beam])
    return [(tuple(w for _, w in k), v) for k, v in beams.items()]


@pytest.mark.parametrize("scorer", ["standard", "hcb"])
@pytest.mark.parametrize("keep", ["higher", "lower"])
def test_full_beam_scores_every_fill_by_its_best_or_worst_order(tiny_model, scorer, keep):
    enc = tiny_model.encode(TEXT, gap=3)
    n_cand = int(tiny_model.allowed_mask().sum())
    hyps = infill.decode(tiny_model, enc.input_ids, scorer=scorer, order="any-order",
                         beam_size=n_cand ** 3, dedup_keep=keep)
    ref = per_order_scores(tiny_model, enc.input_ids, enc.positions, scorer)
    pick = max if keep == "higher" else min
    assert len(hyps) == len(ref) == n_cand ** 3                  # every fill, once
    got = {h.tokens: h for h in hyps}
    for fill_, scores in ref.items():
        assert got[fill_].score == pytest.approx(pick(scores), abs=1e-4)
    assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
    # the surviving path is the one the score belongs to: its order and per-step log q
    cond = Conditionals(tiny_model, enc.input_ids, enc.positions)
    for h in hyps[:: max(1, len(hyps) // 20)]:
        order = [p for _, p in sorted(zip(h.steps, enc.positions))]
        assert path_score(cond, h.tokens, order, scorer) == pytest.approx(h.score, abs=1e-4)


def test_keep_higher_and_lower_differ_where_orders_disagree(bert):
    enc = bert.encode(TEXT, gap=2)
    n_cand = int(bert.allowed_mask().sum())
    hi = {h.tokens: h.score for h in infill.decode(bert, enc.input_ids, order="any-order",
                                                   scorer="standard", beam_size=n_cand ** 2)}
    lo = {h.tokens: h.score for h in infill.decode(bert, enc.input_ids, order="any-order",
                                                   scorer="standard", beam_size=n_cand ** 2,
                                                   dedup_keep="lower")}
    assert hi.keys() == lo.keys()
    assert all(hi[f] >= lo[f] - 1e-9 for f in hi)
    assert max(hi[f] - lo[f] for f in hi) > 1e-3                  # a random MLM is incompatible


@pytest.mark.parametrize("keep", ["higher", "lower"])
@pytest.mark.parametrize("beam", [1, 3, 10])
def test_narrow_beam_equals_the_plain_reference(tiny_model, keep, beam):
    enc = tiny_model.encode(TEXT, gap=3)
    hyps = infill.decode(tiny_model, enc.input_ids, scorer="hcb", order="any-order",
                         beam_size=beam, dedup_keep=keep)
    ref = reference_beam(tiny_model, enc.input_ids, enc.positions, beam, "hcb", keep)
    assert [h.tokens for h in hyps] == [f for f, _ in ref]
    assert [h.score for h in hyps] == pytest.approx([s for _, s in ref], abs=1e-4)


def test_without_dedup_every_path_is_a_hypothesis(bert):
    """dedup off: the classic algorithm, each fill once per filling order with that order's score."""
    enc = bert.encode(TEXT, gap=2)
    n_cand = int(bert.allowed_mask().sum())
    hyps = infill.decode(bert, enc.input_ids, scorer="standard", order="any-order",
                         beam_size=2 * n_cand ** 2, dedup=False)
    ref = per_order_scores(bert, enc.input_ids, enc.positions, "standard")
    assert len(hyps) == 2 * n_cand ** 2
    by_fill: dict[tuple, list[float]] = {}
    for h in hyps:
        by_fill.setdefault(h.tokens, []).append(h.score)
    for fill_, scores in ref.items():
        assert sorted(by_fill[fill_]) == pytest.approx(sorted(scores), abs=1e-4)


V, L = 3, 4


@pytest.fixture(scope="module")
def oracle():
    g = torch.Generator().manual_seed(5)
    logits = torch.randn([V] * L, generator=g, dtype=torch.float64) * 1.5
    return OracleMLM(logits - torch.logsumexp(logits.flatten(), 0))


def true_log_cond(oracle, ctx: dict[int, int], gap: list[int]) -> dict[tuple, float]:
    out = {}
    for full in itertools.product(range(V), repeat=L):
        if all(full[t] == w for t, w in ctx.items()):
            out[tuple(full[t] for t in gap)] = float(oracle.log_joint[full])
    z = torch.logsumexp(torch.tensor(list(out.values()), dtype=torch.float64), 0).item()
    return {k: v - z for k, v in out.items()}


@pytest.mark.parametrize("keep", ["higher", "lower"])
@pytest.mark.parametrize("pivot", [None, 2, [2, 0, 1]])
def test_oracle_every_order_gives_the_joint(oracle, keep, pivot):
    """Exact conditionals: every filling order chains to log p(w_G | context) (standard), and
    HCB with pivots injected to log p(w_G | ctx) - log p(pivot_G | ctx); so keeping the higher
    or the lower changes nothing and the ranking is the joint's."""
    gap, ctx = [0, 2, 3], {1: 1}
    ids = [oracle.mask_id if t in gap else ctx[t] for t in range(L)]
    truth = true_log_cond(oracle, ctx, gap)
    scorer = "standard" if pivot is None else "hcb"
    hyps = infill.decode(oracle, ids, scorer=scorer, pivot=pivot, order="any-order",
                         beam_size=V ** 3, dedup_keep=keep)
    shift = 0.0 if pivot is None else \
        truth[tuple(pivot) if isinstance(pivot, list) else (pivot,) * 3]
    assert [h.tokens for h in hyps] == sorted(truth, key=lambda k: -truth[k])
    for h in hyps:
        assert h.score == pytest.approx(truth[h.tokens] - shift, abs=1e-9)


def test_one_pass_per_step_and_two_with_an_injected_pivot(oracle):
    ids = [oracle.mask_id, 1, oracle.mask_id, oracle.mask_id]
    oracle.calls = 0
    infill.decode(oracle, ids, order="any-order", beam_size=4, scorer="standard")
    assert oracle.calls == 3
    oracle.calls = 0
    infill.decode(oracle, ids, order="any-order", beam_size=4, pivot=2)  # pivots as context
    assert oracle.calls == 6


@pytest.mark.parametrize("kind,kw", [("pure", {}), ("temperature", {"temperature": 0.5}),
                                     ("nucleus", {"top_p": 0.9})])
def test_sampling_draws_position_token_pairs(bert, kind, kw):
    enc = bert.encode(TEXT, gap=3)
    cfg = infill.DecodeConfig(order="any-order", sampling=kind, beam_size=6, seed=3, **kw)
    a = infill.decode(bert, enc.input_ids, cfg)
    assert a == infill.decode(bert, enc.input_ids, cfg)               # seeded
    firsts = {next((p, t) for p, t, s in zip(enc.positions, h.tokens, h.steps) if s == 0)
              for h in a}
    assert len(firsts) == len(a)                # B distinct (position, token) pairs at step 0
    assert len({tuple(sorted(h.steps)) for h in a}) == 1 and sorted(a[0].steps) == [0, 1, 2]
    cond = Conditionals(bert, enc.input_ids, enc.positions)
    for h in a:                                 # score = Σ log q along the drawn order
        order = [p for _, p in sorted(zip(h.steps, enc.positions))]
        assert h.score == pytest.approx(path_score(cond, h.tokens, order, "standard"), abs=1e-4)
    other = {tuple(h.tokens for h in infill.decode(bert, enc.input_ids, cfg.replace(seed=s)))
             for s in range(5)}
    assert len(other) > 1


def test_batch_equals_one_by_one(tiny_model):
    texts = ["the ___ sat on the mat", "___ sat", "the cat ___ on the ___ mat"]
    together = infill.fill(tiny_model, texts, gap=2, order="any-order", beam_size=5, top_k=5)
    for text, got in zip(texts, together):
        alone = infill.fill(tiny_model, text, gap=2, order="any-order", beam_size=5, top_k=5)[0]
        assert [c.tokens for c in got] == [c.tokens for c in alone]
        assert [c.score for c in got] == pytest.approx([c.score for c in alone], abs=1e-5)


def test_memory_budget_counts_the_position_grid(bert, monkeypatch):
    enc = bert.encode("the ___ sat", gap=3)
    B, V, P = 200, bert.vocab_size, 3
    l2r = 3 * 8 * B * V + 4 * B * V
    monkeypatch.setenv("INFILL_MAX_MEMORY_GB", str(1.5 * l2r / 2 ** 30))
    infill.decode(bert, enc.input_ids, beam_size=B)                   # fits left-to-right
    with pytest.raises(infill.ConfigError, match="GiB per input"):
        infill.decode(bert, enc.input_ids, beam_size=B, order="any-order")   # P x larger grid


def test_dedup_keep_is_validated():
    with pytest.raises(infill.ConfigError, match="dedup_keep"):
        infill.DecodeConfig(order="any-order", dedup_keep="max")
    assert infill.DecodeConfig(dedup_keep="lower").to_json()["dedup_keep"] == "lower"


def test_bench_grid_runs_any_order():
    from infill.bench.methods import build_grid, expand_names
    names = expand_names("any-order")
    assert names == ["hcb-any", "standard-any"]
    cfgs = [m.decode_config(infill.DecodeConfig()) for m in build_grid(names, [3])]
    assert [(c.scorer_name, c.order, c.beam_size) for c in cfgs] == \
        [("hcb", "any-order", 3), ("standard", "any-order", 3)]
