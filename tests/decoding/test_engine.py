"""Engine behaviour: model-call budget, batching, sampling baselines, ablations, pivots, errors."""
from __future__ import annotations

import pytest
import torch

import infill
from infill.config import DecodeConfig
from infill.errors import ConfigError, InputError
from infill.decoding.scorers import ContextScrambleScorer, HCBScorer, RandomSwapScorer


class CallCounter:
    """Counts real network forwards with a hook on the HF model's encoder (``base_model``)."""

    def __init__(self, model):
        self.n = 0
        self.handle = model.model.base_model.register_forward_hook(self._hook)

    def _hook(self, *_):
        self.n += 1

    def close(self):
        self.handle.remove()


TEXTS = ["the ___ sat on the mat", "___ sat", "the cat ___ on the ___ mat"]


@pytest.mark.parametrize("beam", [1, 5, 20])
@pytest.mark.parametrize("order", ["left-to-right", "best-to-worst"])
@pytest.mark.parametrize("batch", [1, 3])
def test_n_model_calls_for_an_n_token_gap(bert, beam, order, batch):
    counter = CallCounter(bert)
    try:
        infill.fill(bert, TEXTS[:batch], gap=3, beam_size=beam, top_k=1, order=order)
        # the largest input has 2 markers x 3 tokens = 6 positions; the others finish earlier
        assert counter.n == (6 if batch == 3 else 3)
    finally:
        counter.close()


def test_injected_pivot_costs_one_pass_left_to_right_two_best_to_worst(bert):
    counter = CallCounter(bert)
    try:
        infill.fill(bert, TEXTS[0], gap=3, pivot="dog", order="left-to-right")
        assert counter.n == 3
        counter.n = 0
        infill.fill(bert, TEXTS[0], gap=3, pivot="dog", order="best-to-worst")
        assert counter.n == 6
        counter.n = 0
        infill.fill(bert, TEXTS[0], gap=3, pivot="dog", pivot_context="mask", order="best-to-worst")
        assert counter.n == 3
    finally:
        counter.close()


@pytest.mark.parametrize("scorer", ["standard", "hcb"])
@pytest.mark.parametrize("order", ["left-to-right", "best-to-worst"])
def test_batch_equals_one_by_one(tiny_model, scorer, order):
    """Inputs of different lengths and gap counts decoded together give what each gives alone."""
    together = infill.fill(tiny_model, TEXTS, gap=2, scorer=scorer, order=order, beam_size=6, top_k=6)
    for text, got in zip(TEXTS, together):
        alone = infill.fill(tiny_model, text, gap=2, scorer=scorer, order=order, beam_size=6, top_k=6)[0]
        assert [c.tokens for c in got] == [c.tokens for c in alone]
        assert [c.score for c in got] == pytest.approx([c.score for c in alone], abs=1e-5)


def test_several_gaps_in_one_input_are_filled_and_rendered(bert):
    comp = infill.fill(bert, "the ___ sat on the ___.", gap=2, beam_size=4, top_k=4)[0]
    for c in comp:
        assert len(c.fills) == 2 and len(c.tokens) == 4
        toks = [bert.id_to_token(t) for t in c.tokens]
        assert c.fills[0].replace(" ", "") == "".join(toks[:2]).replace("##", "")
        assert c.text.startswith("the ") and " sat on the " in c.text and c.text.endswith(".")


def _chain_std(model, ids, positions, tokens):
    x = list(ids)
    total = 0.0
    for p, w in zip(positions, tokens):
        t = torch.tensor([x])
        total += float(model.log_probs(t, torch.ones_like(t, dtype=torch.bool), torch.tensor([[p]]))[0, 0, w])
        x[p] = w
    return total


@pytest.mark.parametrize("kind,kw", [("pure", {}), ("temperature", {"temperature": 0.5}),
                                     ("nucleus", {"top_p": 0.9})])
def test_sampling_baselines(bert, kind, kw):
    enc = bert.encode("the ___ sat", gap=3)
    a = infill.decode(bert, enc.input_ids, sampling=kind, beam_size=5, seed=7, **kw)
    b = infill.decode(bert, enc.input_ids, sampling=kind, beam_size=5, seed=7, **kw)
    assert a == b                                        # deterministic under the seed
    assert len({h.tokens[0] for h in a}) == len(a)       # B distinct tokens at the first position
    assert [h.score for h in a] == sorted((h.score for h in a), reverse=True)
    for h in a:                                          # score = Σ log q, untempered
        assert h.score == pytest.approx(_chain_std(bert, enc.input_ids, enc.positions, h.tokens), abs=1e-4)
    seeds = {tuple(h.tokens for h in infill.decode(bert, enc.input_ids, sampling=kind, beam_size=5, seed=s, **kw))
             for s in range(6)}
    assert len(seeds) > 1


def test_tiny_nucleus_is_greedy(bert):
    enc = bert.encode("the ___ sat", gap=3)
    greedy = infill.decode(bert, enc.input_ids, scorer="standard", beam_size=1)[0]
    nuc = infill.decode(bert, enc.input_ids, sampling="nucleus", top_p=1e-6, beam_size=4, seed=3)
    assert [h.tokens for h in nuc] == [greedy.tokens]


def test_random_swap_with_one_candidate_is_hcb_with_that_pivot_and_mask_context(bert):
    enc = bert.encode("the ___ sat on", gap=2)
    dog = bert.token_to_id("dog")
    swap = infill.decode(bert, enc.input_ids, scorer=RandomSwapScorer(torch.tensor([dog])), beam_size=8)
    hcb = infill.decode(bert, enc.input_ids, scorer=HCBScorer(pivot=dog, pivot_context="mask"), beam_size=8)
    assert [h.tokens for h in swap] == [h.tokens for h in hcb]
    assert [h.score for h in swap] == pytest.approx([h.score for h in hcb], abs=1e-9)
    a = infill.decode(bert, enc.input_ids, scorer="swap", beam_size=8, seed=1)
    b = infill.decode(bert, enc.input_ids, scorer="swap", beam_size=8, seed=1)
    assert a == b


def test_context_scramble_draws_the_pivot_term_of_another_input(bert):
    texts = ["the ___ sat on the mat", "a dog ___"]
    encs = [bert.encode(t, gap=1) for t in texts]
    got = infill.decode(bert, [e.input_ids for e in encs], scorer=ContextScrambleScorer(), beam_size=3)
    for i, j in [(0, 1), (1, 0)]:
        x_i, x_j = torch.tensor([encs[i].input_ids]), torch.tensor([encs[j].input_ids])
        lq_i = bert.log_probs(x_i, torch.ones_like(x_i, dtype=torch.bool), torch.tensor([encs[i].positions]))[0, 0]
        lq_j = bert.log_probs(x_j, torch.ones_like(x_j, dtype=torch.bool), torch.tensor([encs[j].positions]))[0, 0]
        h = got[i][0]
        assert h.score == pytest.approx(float(lq_i[h.tokens[0]] - lq_j[bert.mask_id]), abs=1e-5)


def test_scramble_memory_persists_across_calls_and_excludes_own_input(bert):
    sc = ContextScrambleScorer(memory=5)
    enc = bert.encode("the ___ sat on the mat", gap=3)
    infill.decode(bert, enc.input_ids, scorer=sc)
    assert sc.pool_size == 5                    # bounded memory
    first = infill.decode(bert, enc.input_ids, scorer=sc)
    again = infill.decode(bert, enc.input_ids, scorer="hcb")
    assert [h.score for h in first] != pytest.approx([h.score for h in again])


def test_scramble_honours_pivot_context(bert):
    """The scramble ablation reads its step's log q in the context pivot_context says (it was
    always injected, whatever was asked)."""
    enc = bert.encode("the ___ sat on the mat", gap=2)
    assert DecodeConfig(scorer="scramble", pivot_context="mask").make_scorer().pivot_context \
        == "mask"
    got = {c: [h.score for h in infill.decode(bert, enc.input_ids, scorer="scramble", pivot="the",
                                              pivot_context=c, beam_size=3, seed=0)]
           for c in ("inject", "mask")}
    assert got["inject"] != pytest.approx(got["mask"])


def test_per_position_and_token_pivots(bert):
    enc = bert.encode("the ___ sat", gap=2)
    by_name = infill.decode(bert, enc.input_ids, pivot=["dog", "cat"], beam_size=4)
    by_id = infill.decode(bert, enc.input_ids, pivot=[bert.token_to_id("dog"), bert.token_to_id("cat")], beam_size=4)
    assert by_name == by_id
    with pytest.raises(ConfigError, match="one token per gap position"):
        infill.decode(bert, enc.input_ids, pivot=["dog"] * 3)
    with pytest.raises(InputError, match="not in the vocabulary"):
        infill.decode(bert, enc.input_ids, pivot="zebra")
    with pytest.raises(ConfigError, match="pivot only applies"):
        infill.decode(bert, enc.input_ids, scorer="standard", pivot="dog")


def test_api_errors(bert):
    with pytest.raises(InputError, match="no gap marker"):
        infill.fill(bert, "nothing to fill")
    with pytest.raises(InputError, match="empty input"):
        infill.fill(bert, "   ")
    with pytest.raises(InputError, match="maximum length"):
        infill.fill(bert, "the ___ sat", gap=30)
    # a top-k above the beam size raises the beam size (it is not an error)
    wide = infill.fill(bert, "the ___", top_k=6, beam_size=5)[0]
    assert [c.tokens for c in wide] == [c.tokens for c in infill.fill(bert, "the ___", top_k=6,
                                                                       beam_size=6)[0]]
    assert len(wide) == 6
    with pytest.raises(ConfigError, match="unknown scorer"):
        infill.fill(bert, "the ___", scorer="magic")
    with pytest.raises(ConfigError, match="unknown order"):
        infill.fill(bert, "the ___", order="random")
    with pytest.raises(InputError, match="no gap"):
        infill.decode(bert, [2, 5, 3])
    with pytest.raises(ConfigError, match="temperature"):
        infill.fill(bert, "the ___", sampling="temperature", temperature=0)


def test_no_nan_when_pivot_has_zero_probability():
    from infill.models.oracle import OracleMLM
    lj = torch.full((2, 2), 0.25, dtype=torch.float64).log()
    lj[1, 1] = float("-inf")
    lj[0, 1] = torch.tensor(0.5).log()
    oracle = OracleMLM(lj)
    with pytest.raises(infill.InfillError, match="zero probability"):
        infill.decode(oracle, [1, oracle.mask_id], scorer="hcb", pivot=1)


@pytest.mark.parametrize("sampling", ["pure", "temperature", "nucleus"])
def test_sampling_draws_depend_only_on_the_seed_and_the_input(bert, sampling):
    """An input's samples are the same alone, in any batch, in any position of it."""
    texts = ["the ___ sat on the mat", "___ sat", "the cat ___ on the ___ mat", "the dog ___"]
    encs = [bert.encode(t, gap=2) for t in texts]
    tempered = {"temperature": 0.7} if sampling == "temperature" else {}
    cfg = infill.DecodeConfig(sampling=sampling, beam_size=4, seed=11, **tempered)
    together = infill.decode(bert, [e.input_ids for e in encs], cfg)
    alone = [infill.decode(bert, e.input_ids, cfg) for e in encs]
    reordered = infill.decode(bert, [e.input_ids for e in encs[::-1]], cfg)[::-1]
    for t, a, r in zip(together, alone, reordered):
        assert [h.tokens for h in t] == [h.tokens for h in a] == [h.tokens for h in r]
        # float32 forward passes padded to different lengths: equal up to rounding
        assert [h.score for h in t] == pytest.approx([h.score for h in a], abs=1e-5)
    other_seed = infill.decode(bert, [e.input_ids for e in encs], cfg.replace(seed=12))
    assert [[h.tokens for h in hs] for hs in other_seed] != [[h.tokens for h in hs] for hs in together]


def test_memory_budget_is_checked_before_allocating(bert, monkeypatch):
    enc = bert.encode("the ___ sat", gap=2)
    monkeypatch.setenv("INFILL_MAX_MEMORY_GB", "0.000001")
    with pytest.raises(ConfigError, match="GiB per input"):
        infill.decode(bert, enc.input_ids, beam_size=100000)
    monkeypatch.setenv("INFILL_MAX_MEMORY_GB", "0.01")   # fits a few inputs at a time: chunks
    texts = ["the ___ sat", "___ dog", "the cat ___"] * 3
    chunked = infill.fill(bert, texts, beam_size=5, top_k=5)
    monkeypatch.delenv("INFILL_MAX_MEMORY_GB")
    assert [[c.tokens for c in cs] for cs in chunked] == \
        [[c.tokens for c in cs] for cs in infill.fill(bert, texts, beam_size=5, top_k=5)]


@pytest.mark.parametrize("bad, error", [
    (dict(beam_size=0), ConfigError), (dict(beam_size=2.5), ConfigError),
    (dict(seed=-1), ConfigError), (dict(seed=2 ** 64), ConfigError), (dict(seed=None), ConfigError),
    (dict(temperature=float("inf"), sampling="temperature"), ConfigError),
    (dict(temperature=float("nan"), sampling="temperature"), ConfigError),
    (dict(top_p=0.0, sampling="nucleus"), ConfigError), (dict(order="random"), ConfigError),
    (dict(sampling="gibbs"), ConfigError), (dict(pivot=1.5), ConfigError),
    (dict(unknown_option=1), ConfigError),
])
def test_api_boundary_validates_with_infill_errors(bert, bad, error):
    with pytest.raises(error):
        infill.fill(bert, "the ___ sat", **bad)


def test_api_rejects_ids_outside_the_vocabulary_and_odd_gaps(bert):
    with pytest.raises(InputError, match="outside the model's"):
        infill.decode(bert, [2, 99999, bert.mask_id, 3])
    with pytest.raises(InputError, match="outside the model's"):
        infill.decode(bert, [2, -1, bert.mask_id, 3])
    with pytest.raises(InputError, match="whole number"):
        infill.fill(bert, "the ___ sat", gap=1.5)
    with pytest.raises(ConfigError, match="top-k"):
        infill.fill(bert, "the ___ sat", top_k=None)
    with pytest.raises(InputError, match="string or a list of strings"):
        infill.fill(bert, [b"the ___ sat"])


@pytest.mark.parametrize("call, error, message", [
    (lambda m: infill.decode(m, None), InputError, "decode takes token ids"),
    (lambda m: infill.decode(m, "the [MASK]"), InputError, "use fill for text"),
    (lambda m: infill.decode(m, [2, 1.5, m.mask_id, 3]), InputError, "not an int"),
    (lambda m: infill.decode(m, torch.tensor([2.0, float(m.mask_id), 3.0])), InputError, "not an int"),
    (lambda m: infill.decode(m, [2, True, m.mask_id, 3]), InputError, "not an int"),
    (lambda m: infill.fill(m, None), InputError, "string or a list of strings"),
    (lambda m: infill.fill(m, 5), InputError, "string or a list of strings"),
    (lambda m: infill.fill(m, "the ___", config=5), ConfigError, "must be a DecodeConfig"),
    (lambda m: infill.fill(m, "the ___", window="x"), ConfigError, "window must be True or False"),
    (lambda m: infill.fill(m, "the ___", dedup="no"), ConfigError, "dedup must be True or False"),
    (lambda m: infill.fill(m, "the ___", allow_special=1), ConfigError, "allow_special must be"),
])
def test_api_boundary_types(bert, call, error, message):
    with pytest.raises(error, match=message):
        call(bert)


def test_token_ids_as_lists_tensors_and_numpy_arrays_decode_alike(bert):
    import numpy as np
    ids = bert.encode("the ___ sat on the mat", gap=2).input_ids
    want = [h.tokens for h in infill.decode(bert, ids)]
    assert [h.tokens for h in infill.decode(bert, torch.tensor(ids))] == want
    assert [h.tokens for h in infill.decode(bert, np.array(ids))] == want
    assert [h.tokens for h in infill.decode(bert, [np.int64(t) for t in ids])] == want
