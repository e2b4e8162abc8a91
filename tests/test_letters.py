"""Letter sets (partly visible letters, issue #36): only the allowed tokens are placed, in every
search, scorer, order and sampler, and the scores stay those of the joint restricted to the sets
(METHODS §1.6) -- checked against brute-force enumeration on the oracle MLM (exact joint) and a
tiny character model; bad sets are one line."""
from __future__ import annotations

import itertools
import math

import pytest
import torch

import infill
from infill.errors import InfillError, InputError
from infill.models.oracle import OracleMLM

V, L = 4, 3
A = {0: "ab", 2: "bd"}                        # position -> allowed tokens (oracle tokens a..d)


@pytest.fixture(scope="module")
def oracle() -> OracleMLM:
    g = torch.Generator().manual_seed(7)
    logits = torch.randn([V] * L, generator=g, dtype=torch.float64) * 1.5
    return OracleMLM(logits - torch.logsumexp(logits.flatten(), 0))


def restricted_joint(oracle: OracleMLM, sets: dict[int, str], fixed: dict[int, int] = {}
                     ) -> dict[tuple[int, ...], float]:
    """p(w | w_t in sets[t]) over every allowed fill of the free positions, by enumeration."""
    free = [t for t in range(L) if t not in fixed]
    choices = [[oracle.tokens.index(c) for c in sets[t]] if t in sets else range(V) for t in free]
    logp = {}
    for fill in itertools.product(*choices):
        w = dict(fixed)
        w.update(zip(free, fill))
        logp[fill] = float(oracle.log_joint[tuple(w[t] for t in range(L))])
    z = torch.logsumexp(torch.tensor(list(logp.values())), 0).item()
    return {f: math.exp(lp - z) for f, lp in logp.items()}


@pytest.mark.parametrize("scorer", ["standard", "hcb"])
@pytest.mark.parametrize("order", ["left-to-right", "best-to-worst", "any-order"])
def test_full_beam_is_the_restricted_joint(oracle, scorer, order):
    """A beam as wide as the allowed fills returns exactly them, ranked as the restricted joint,
    and the softmax of their scores is p(w | w in the sets): the oracle's conditionals are
    exact, so the standard score is log p(w) and HCB's log p(w) - log p(pivot), in any order."""
    letters = [[A[0]], None, [A[2]]]                       # one gap per '?' of the oracle
    ref = restricted_joint(oracle, A)
    [got] = infill.fill(oracle, "???", marker="?", letters=letters, scorer=scorer, order=order,
                        beam_size=len(ref), top_k=len(ref))
    assert {c.tokens for c in got} == set(ref)
    assert [c.tokens for c in got] == sorted(ref, key=lambda f: -ref[f])
    z = torch.logsumexp(torch.tensor([c.score for c in got], dtype=torch.float64), 0).item()
    for c in got:
        assert math.exp(c.score - z) == pytest.approx(ref[c.tokens], abs=1e-7)


def test_decode_takes_letters_per_position(oracle):
    ref = restricted_joint(oracle, A)
    ids = [oracle.mask_id] * L
    hyps = infill.decode(oracle, ids, letters={0: "ab", 2: ["b", "d"]}, scorer="standard",
                         beam_size=len(ref))
    assert [h.tokens for h in hyps] == sorted(ref, key=lambda f: -ref[f])
    assert hyps[0].score == pytest.approx(math.log(max(ref.values())) +
                                          _log_mass(oracle, A), abs=1e-6)
    # a fixed reading (part 1's use): one token per position, beam 1, scored exactly
    [h] = infill.decode(oracle, ids, letters={0: "b", 1: "c", 2: "d"}, scorer="standard",
                        beam_size=1)
    assert h.tokens == (1, 2, 3) and h.score == pytest.approx(float(oracle.log_joint[1, 2, 3]))
    both = infill.decode(oracle, [ids, ids], letters=[{0: "a"}, {1: "d"}], beam_size=2)
    assert all(h.tokens[0] == 0 for h in both[0]) and all(h.tokens[1] == 3 for h in both[1])


def _log_mass(oracle, sets) -> float:
    """log p(the sets), by enumeration."""
    free = [[oracle.tokens.index(c) for c in sets[t]] if t in sets else range(V) for t in range(L)]
    return torch.logsumexp(torch.stack([oracle.log_joint[w] for w in itertools.product(*free)]),
                           0).item()


def test_sampling_draws_from_the_restricted_conditional(oracle):
    """A sampling baseline draws only allowed tokens, each as often as the masked conditional
    restricted to the set and renormalized (one position, many seeds)."""
    sets = {1: "acd"}
    ref = restricted_joint(oracle, sets, fixed={0: 1, 2: 0})
    ids = [1, oracle.mask_id, 0]
    counts = {f: 0 for f in ref}
    n = 600
    for seed in range(n):
        [h] = infill.decode(oracle, ids, letters={1: sets[1]}, sampling="pure", beam_size=1,
                            seed=seed)
        counts[h.tokens] += 1
    for f, p in ref.items():
        assert counts[f] / n == pytest.approx(p, abs=0.06)
    hyps = infill.decode(oracle, ids, letters={1: sets[1]}, sampling="pure", beam_size=3)
    assert sorted(h.tokens for h in hyps) == sorted(ref)       # B distinct draws: the set


def test_gibbs_samples_the_restricted_joint(oracle):
    """Gibbs with the oracle's exact conditionals, restricted to the sets, has the restricted
    joint as its stationary distribution; every visited state lies inside the sets."""
    from infill.mcmc import mh
    ref = restricted_joint(oracle, A)
    res = mh(oracle, [oracle.mask_id] * L, letters={0: A[0], 2: A[2]}, gibbs=True, chains=400,
             sweeps=12, burn_in=2, seed=1, init="random")
    dist = res.distribution()
    assert set(dist) <= set(ref)
    for f, p in ref.items():
        assert dist.get(f, 0.0) == pytest.approx(p, abs=0.04)


def test_mh_moves_inside_the_sets(oracle):
    from infill.mcmc import mh
    res = mh(oracle, [oracle.mask_id] * L, letters={0: "b", 2: "cd"}, chains=8, sweeps=6,
             seed=3)
    assert {s.tokens[0] for s in res.samples} == {1}
    assert {s.tokens[2] for s in res.samples} <= {2, 3}
    with pytest.raises(InputError, match="outside the letters"):
        mh(oracle, [oracle.mask_id] * L, letters={0: "b"}, init=(0, 0, 0), chains=2, sweeps=1)


# ---- a real (tiny) character model -----------------------------------------------------------
TEXT = "αβγ???δε"


def _pass(model, ids, positions):
    x = torch.tensor([ids])
    return model.log_probs(x, torch.ones_like(x, dtype=torch.bool),
                           torch.tensor([positions]))[0].double()


def chained(model, ids, gap_pos, fill, scorer, order, masks):
    """The score of one fill recomputed step by step: the restricted order (best-to-worst picks
    the slot whose best *allowed* token is most probable) and the full-softmax update; HCB with
    the model's pivot ('-') injected at the other open positions."""
    pivot, x, remaining, total = model.default_pivot, list(ids), list(gap_pos), 0.0
    while remaining:
        lq = _pass(model, x, remaining)
        k = 0 if order == "left-to-right" else int(torch.stack(
            [lq[i].masked_fill(~masks[gap_pos.index(g)], -math.inf).max()
             for i, g in enumerate(remaining)]).argmax())
        g = remaining[k]
        if scorer == "hcb":
            lq_g = _pass(model, [pivot if (t in remaining and t != g) else w
                                 for t, w in enumerate(x)], [g])[0]
            total += float(lq_g[fill[gap_pos.index(g)]] - lq_g[pivot])
        else:
            total += float(lq[k][fill[gap_pos.index(g)]])
        x[g] = fill[gap_pos.index(g)]
        remaining.remove(g)
    return total


@pytest.fixture(scope="module")
def greek(greek_char_dir):
    return infill.load_model(greek_char_dir)


@pytest.mark.parametrize("scorer", ["standard", "hcb"])
@pytest.mark.parametrize("order", ["left-to-right", "best-to-worst"])
def test_char_model_full_beam_equals_restricted_enumeration(greek, scorer, order):
    sets = ["ΑΈ", "ιην", "οω"]                   # capitals and accents read as the model reads
    enc = greek.encode(TEXT)
    from infill.decoding.letters import letter_masks
    masks = letter_masks(greek, [sets], enc.gaps)
    pos = enc.positions
    cands = [masks[p].nonzero()[:, 0].tolist() for p in pos]
    ref = {f: chained(greek, enc.input_ids, pos, f, scorer, order, [masks[p] for p in pos])
           for f in itertools.product(*cands)}
    [got] = infill.fill(greek, TEXT, letters=[sets], scorer=scorer, order=order,
                        beam_size=len(ref), top_k=len(ref))
    assert len(got) == len(ref) == 12
    for c in got:
        assert c.score == pytest.approx(ref[c.tokens], abs=1e-5)
    assert got[0].tokens == max(ref, key=ref.get)
    assert {c.fills[0][0] for c in got} == {"α", "ε"}


def test_text_syntax_through_the_fill_job(greek):
    from infill.jobs.fill import fill_inputs
    job = fill_inputs(greek, ["αβγ#[ΑΈ]#[ιην]#[οω]δε", "αβ[.2]#[κ]δε"], top_k=12,
                      config=infill.DecodeConfig(beam_size=12, scorer="standard"))
    a, b = list(job)
    assert a.error is None and len(a.completions) == 12
    direct = infill.fill(greek, TEXT, letters=[["ΑΈ", "ιην", "οω"]], top_k=12, beam_size=12,
                         scorer="standard")[0]
    assert [c.text for c in a.completions] == [c.text for c in direct]
    assert a.to_json()["letters"] == [["ΑΈ", "ιην", "οω"]]
    assert b.error is None and all(c.fills[0][2] == "κ" for c in b.completions)   # [..] + set


# ---- bad input: one line each ----------------------------------------------------------------
@pytest.mark.parametrize("letters, message", [
    ([["αz", None, None]], "'z' is not a letter"),
    ([["", None, None]], "an empty set"),
    ([None, None], "2 entries for a text with 1 gaps"),
    ([["α", None]], "gap 1 has 3 positions, got 2"),
    ([["-", None, None]], "may not be placed in a gap"),
    ("αβ", "one entry per gap"),
])
def test_bad_letters_are_one_line(greek, letters, message):
    with pytest.raises(InfillError, match=message) as e:
        infill.fill(greek, TEXT, letters=letters)
    assert "\n" not in str(e.value) and e.value.field == "letters"


def test_a_set_at_a_position_that_is_not_a_gap(oracle):
    with pytest.raises(InputError, match="position 1 is not a gap position"):
        infill.decode(oracle, [oracle.mask_id, 1, oracle.mask_id], letters={1: "a"})


def test_a_gap_of_uncertain_length_takes_no_sets(greek):
    with pytest.raises(InputError, match="uncertain length"):
        infill.fill(greek, "αβ___δε", gap="2-3", letters=[["α", "β"]])


def test_cli_reads_sets_and_refuses_bad_ones(greek_char_dir):
    import json

    from click.testing import CliRunner

    from infill_cli.main import main
    r = CliRunner().invoke(main, ["run", "-m", greek_char_dir, "--json", "-k", "4",
                                  "αβ#[ΗΝ]γ#[κ]ω"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert {c["fills"][0] for c in out["completions"]} <= {"η", "ν"}
    assert all(c["fills"][1] == "κ" for c in out["completions"])
    for text, message in [("αβ#[]γ", "an empty letter set"), ("αβ#[ηz]γ", "'z' is not a letter"),
                          ("αβ#[ηγ", "never closed")]:
        r = CliRunner().invoke(main, ["run", "-m", greek_char_dir, text])
        assert r.exit_code == 2, r.output
        err = [line for line in r.stderr.splitlines() if line.startswith("Error")]
        assert len(err) >= 1 and message in err[0] and "Traceback" not in r.output


def test_sample_cli_reads_sets(greek_char_dir):
    import json

    from click.testing import CliRunner

    from infill_cli.main import main
    r = CliRunner().invoke(main, ["sample", "-m", greek_char_dir, "--json", "--sweeps", "3",
                                  "--chains", "3", "--init", "random", "αβγ#[ηι]#[οω]δε"])
    assert r.exit_code == 0, r.output
    fills = {s["fills"][0] for s in json.loads(r.stdout)["samples"]}
    assert fills and fills <= {a + b for a in "ηι" for b in "οω"}


def test_cli_unclear_restores_underdotted_letters(greek_char_dir):
    import json

    from click.testing import CliRunner

    from infill.data.letters import lookalikes
    from infill_cli.main import main
    text = "αβε\u0323γ δε[.]ζ"
    kept = CliRunner().invoke(main, ["run", "-m", greek_char_dir, "--json", text])
    assert kept.exit_code == 0, kept.output
    assert "letters" not in json.loads(kept.stdout)
    r = CliRunner().invoke(main, ["run", "-m", greek_char_dir, "--json", "-k", "6",
                                  "--unclear", "restore", text])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["letters"] == [[lookalikes("ε")], None]
    assert {c["fills"][0] for c in out["completions"]} <= set(lookalikes("ε"))
    bad = CliRunner().invoke(main, ["run", "-m", greek_char_dir, "--unclear", "maybe", text])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_ag_decoder_draws_its_grid_from_the_sets(oracle):
    """The Arnold-Gokhale decoder (two positions) builds its pairwise joint on the sets."""
    ids = [oracle.mask_id, 2, oracle.mask_id]
    hyps = infill.decode(oracle, ids, letters={0: "ab", 2: "bd"}, decoder="ag", beam_size=16,
                         joint_size=4)
    assert sorted(h.tokens for h in hyps) == sorted(itertools.product([0, 1], [1, 3]))
    [got] = infill.fill(oracle, "?c?", marker="?", letters=[["ab"], ["bd"]], decoder="ag",
                        beam_size=4, top_k=4)
    assert [c.tokens for c in got] == [h.tokens for h in hyps]
