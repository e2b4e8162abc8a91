"""Inputs that share one beam (``beam_search(..., groups=)``; the length variants of a text).

The reference is written out independently of the engine: the live hypotheses of a group's
inputs form one pool; each step extends every unfinished one by every token (left to right,
standard scores recomputed from the oracle's exact conditionals), the B best of all candidates
live on, and a hypothesis that has filled its input's last gap is finished and leaves the pool.
"""
from __future__ import annotations

from collections import Counter

import pytest
import torch

import infill
from infill.config import DecodeConfig
from infill.decoding.engine import beam_search
from infill.errors import InputError
from infill.models.oracle import OracleMLM

V, L = 3, 5


@pytest.fixture(scope="module")
def oracle():
    g = torch.Generator().manual_seed(7)
    logits = 2.5 * torch.randn([V] * L, generator=g, dtype=torch.float64)
    return OracleMLM(logits - torch.logsumexp(logits.flatten(), 0))


# three inputs: different contexts and numbers of gaps (2, 3, 1)
INPUTS = [([0, 1, None, None, 2], [2, 3]),
          ([None, 1, None, 0, None], [0, 2, 4]),
          ([2, None, 0, 1, 1], [1])]


def _ids(model, ctx):
    return [model.mask_id if t is None else t for t in ctx]


def pooled(model, inputs, B):
    """{(input, tokens): score} of the finished hypotheses of one shared beam of B."""
    pool = [(i, ()) for i in range(len(inputs))]
    score = {p: 0.0 for p in pool}
    done = {}
    while pool:
        cands = {}
        for i, prefix in pool:
            ids, gaps = inputs[i]
            x = _ids(model, ids)
            for g, w in zip(gaps, prefix):
                x[g] = w
            lq = model.conditional(x, gaps[len(prefix)])
            for w in range(V):
                cands[i, prefix + (w,)] = score[i, prefix] + float(lq[w])
        best = sorted(cands.items(), key=lambda kv: -kv[1])[:B]
        score.update(best)
        pool = []
        for (i, toks), s in best:
            (done.__setitem__((i, toks), s) if len(toks) == len(inputs[i][1])
             else pool.append((i, toks)))
    return done


def engine(model, inputs, B, groups):
    search = DecodeConfig(scorer="standard", order="left-to-right", beam_size=B).search()
    hyps = beam_search(model, [_ids(model, x) for x, _ in inputs], search,
                       positions=[g for _, g in inputs], groups=groups)
    return {(i, h.tokens): h.score for i, hs in enumerate(hyps) for h in hs}


@pytest.mark.parametrize("B", [1, 2, 4])
def test_a_shared_beam_keeps_the_best_b_of_the_group_at_every_step(oracle, B):
    got = engine(oracle, INPUTS, B, groups=[0, 0, 0])
    want = pooled(oracle, INPUTS, B)
    assert got.keys() == want.keys()
    for k in want:
        assert got[k] == pytest.approx(want[k], abs=1e-9)


def test_groups_are_independent_and_a_group_of_one_is_the_plain_beam(oracle):
    plain = engine(oracle, INPUTS, 2, groups=None)
    alone = engine(oracle, INPUTS, 2, groups=[0, 1, 2])
    assert alone == plain
    two = engine(oracle, INPUTS, 2, groups=[5, 5, 9])
    want = {k: v for k, v in pooled(oracle, INPUTS[:2], 2).items()}
    want.update({(2, t): s for (i, t), s in plain.items() if i == 2})
    assert two.keys() == want.keys()


def test_a_beam_wide_enough_shares_nothing_away(oracle):
    assert engine(oracle, INPUTS, 27, groups=[0, 0, 0]) == engine(oracle, INPUTS, 27, None)


def test_a_group_must_be_adjacent(oracle):
    with pytest.raises(InputError, match="adjacent"):
        engine(oracle, INPUTS, 2, groups=[0, 1, 0])


def test_length_variants_share_a_beam_unless_asked_for_each(greek_char_dir):
    """With a beam that holds every hypothesis, shared and each are the same completions; with
    a narrow one the shared beam's completions are among what the variants can give, ranked by
    the same length score."""
    model = infill.load_model(str(greek_char_dir))
    text = "αβ ___ γδ"
    each = infill.fill(model, text, gap="1-2", top_k=3, length_beam="each",
                       length_score="per-char", beam_size=400)[0]
    shared = infill.fill(model, text, gap="1-2", top_k=3, length_beam="shared",
                         length_score="per-char", beam_size=400)[0]
    assert [(c.fills, c.rank_score) for c in shared] == [(c.fills, c.rank_score) for c in each]
    narrow = infill.fill(model, text, gap="1-2", top_k=2, length_beam="shared",
                         length_score="per-char", beam_size=2)[0]
    assert len(narrow) == 2 and all(c.rank_score is not None for c in narrow)


def test_a_long_texts_window_decodes_its_lengths_in_one_beam(greek_char_dir, monkeypatch):
    """A long text, decoded in context windows: the window holding the lacuna of 1-2 letters
    decodes both lengths in one shared beam (before, a windowed input's lengths each had their
    own beam, whatever length_beam said), the other window once; with a beam that holds every
    hypothesis, shared and each give the same completions."""
    from infill.filling import planner

    model = infill.load_model(str(greek_char_dir))
    text = "και ___ τον δημον " + "των αθηναιων " * 5 + "εδοξε τηι βουλ___"
    calls = []
    run = planner.run_decoder

    def recorded(model, inputs, *a, groups=None, **k):
        calls.append((len(inputs), groups))
        return run(model, inputs, *a, groups=groups, **k)

    monkeypatch.setattr(planner, "run_decoder", recorded)
    kw = {"gap": [1, "1-2"], "top_k": 4, "length_score": "per-char", "beam_size": 1000}
    shared = infill.fill(model, text, length_beam="shared", **kw)[0]
    assert sum(n for n, _ in calls) == 3
    sizes = [n for _, g in calls if g for n in Counter(g).values()]
    assert sorted(sizes) == [1, 2]
    calls.clear()
    each = infill.fill(model, text, length_beam="each", **kw)[0]
    assert sum(n for n, _ in calls) == 3 and all(g is None for _, g in calls)
    assert [(c.fills, c.rank_score) for c in shared] == [(c.fills, c.rank_score) for c in each]
    assert {len(c.fills[1]) for c in shared} == {1, 2}


def test_a_model_may_recommend_the_shared_beam_and_a_choice_wins(recommending):
    """defaults.json's "length_beam" is used when the user chooses none (recorded in the
    defaults and the JSON config); an explicit choice wins; infill's own is "each"."""
    from infill.filling.defaults import recommendation
    assert recommendation("builtin:english").length_beam is None
    d = recommending("english", {"scorer": "hcb", "order": "left-to-right", "gap": "word",
                                 "length_beam": "shared", "why": "measured"})
    m = infill.load_model(str(d), device="cpu")
    text = "And here's ___"
    auto = infill.fill_each(m, [text], top_k=3)[0]
    assert auto.length_beam == "shared" and auto.defaults.values["length_beam"] == "shared"
    assert auto.to_json()["config"]["length_beam"] == "shared"
    given = infill.fill_each(m, [text], top_k=3, length_beam="shared")[0]
    assert [c.tokens for c in given.completions] == [c.tokens for c in auto.completions]
    each = infill.fill_each(m, [text], top_k=3, length_beam="each")[0]
    assert each.length_beam == "each" and "length_beam" not in each.defaults.values
    plain = infill.fill_each(infill.load_model("builtin:english", device="cpu"), [text])[0]
    assert plain.length_beam == "each"


@pytest.mark.parametrize("bad", ["both", 3])
def test_a_malformed_recommended_length_beam_names_the_file(tmp_path, bad):
    import json
    from infill.filling.defaults import recommendation
    from infill.errors import ModelLoadError
    (tmp_path / "defaults.json").write_text(json.dumps(
        {"scorer": "hcb", "order": "left-to-right", "length_beam": bad, "why": "w"}))
    with pytest.raises(ModelLoadError, match=r"defaults\.json: \"length_beam\""):
        recommendation(str(tmp_path))


def test_the_cli_takes_length_beam_and_refuses_others(greek_char_dir):
    from click.testing import CliRunner
    from infill_cli.main import main
    import json
    args = ["run", "--json", "--model", str(greek_char_dir), "--gap", "1-2", "αβ ___ γδ"]
    r = CliRunner().invoke(main, args + ["--length-beam", "each"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["config"]["length_beam"] == "each"
    r = CliRunner().invoke(main, args + ["--length-beam", "wide"])
    assert r.exit_code == 2 and "Traceback" not in r.output
