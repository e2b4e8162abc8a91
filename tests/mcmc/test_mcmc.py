"""Metropolis–Hastings from MLM energies (METHODS §3), checked against exact enumeration."""
from __future__ import annotations

import itertools
import math

import pytest
import torch

from infill import mcmc
from infill.errors import ConfigError, InputError
from infill.models.base import Encoding, MaskedLM
from infill.models.oracle import OracleMLM


# ------------------------------------------------------------------------------------------------
# test adapters
# ------------------------------------------------------------------------------------------------
class TableOracle(OracleMLM):
    """OracleMLM with every conditional precomputed: one tensor lookup per forward call."""

    def __init__(self, log_joint: torch.Tensor):
        super().__init__(log_joint)
        L, V = self.length, self.vocab_size
        inputs = list(itertools.product(range(V + 1), repeat=L))       # V = mask
        self.table = torch.stack([torch.stack([self.conditional(list(s), t) for t in range(L)])
                                  for s in inputs])                    # [(V+1)^L, L, V]
        self.radix = torch.tensor([(V + 1) ** (L - 1 - j) for j in range(L)])
        self.rows = 0

    def log_probs(self, input_ids, attention_mask, positions):
        self.calls += 1
        self.rows += input_ids.shape[0]
        index = (input_ids[:, : self.length] * self.radix).sum(-1)
        return self.table[index[:, None], positions]


class WithLogits(TableOracle):
    """Adds unnormalized logits f = log q + c(row, t) with a context-dependent shift c, so that
    E_raw differs from E_local."""

    supports_logits = True

    def shift(self, input_ids, positions):
        ids = input_ids[:, : self.length]
        observed = torch.where(ids < self.vocab_size, ids, 0)          # masks count 0
        return 0.8 * observed.sum(-1, keepdim=True).double() + 0.7 * positions.double()

    def logits(self, input_ids, attention_mask, positions):
        return self.log_probs(input_ids, attention_mask, positions) + \
            self.shift(input_ids, positions)[..., None]


class TwoTables(MaskedLM):
    """The MH paper's incompatible conditionals (METHODS §3) over V = {a, b}, L = 2:
    p(X1 | X2) = [[0.99, 0.01], [0.01, 0.99]], p(X2 | X1) = [[0.5, 0.5], [0.5, 0.5]]
    (rows: the conditioning value). With the other position masked too, both are uniform."""

    def __init__(self):
        self.name, self.vocab_size, self.mask_id, self.pad_id = "two-tables", 2, 2, 3
        self.max_length, self.special_ids, self.default_pivot = 2, frozenset(), 0
        self.device = torch.device("cpu")
        self.p1_given_2 = torch.tensor([[0.99, 0.01], [0.01, 0.99]], dtype=torch.float64)
        self.p2_given_1 = torch.full((2, 2), 0.5, dtype=torch.float64)

    def log_probs(self, input_ids, attention_mask, positions):
        other = input_ids.gather(1, 1 - positions)                     # [R, P]
        tables = torch.stack([self.p1_given_2, self.p2_given_1,        # [2, 3 (other), 2]
                              ]).log()
        tables = torch.cat([tables, torch.full((2, 1, 2), math.log(0.5),
                                               dtype=torch.float64)], 1)
        return tables[positions, other.clamp(max=2)]

    def tokenize(self, text): return ["ab".index(c) for c in text]
    def detokenize(self, ids): return "".join("ab"[i] for i in ids)
    def encode(self, text, gap=1, marker="?"):
        return Encoding([self.mask_id if c == marker else "ab".index(c) for c in text],
                        [[i] for i, c in enumerate(text) if c == marker])
    def render(self, encoding, gap_tokens): raise NotImplementedError
    def token_to_id(self, token): return "ab".index(token)
    def id_to_token(self, token_id): return "ab"[token_id]


def make_joint(L=3, V=3, scale=1.0, seed=1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    lj = torch.randn([V] * L, generator=g, dtype=torch.float64) * scale
    return lj - lj.logsumexp(tuple(range(L)))


def states_of(L, V):
    return list(itertools.product(range(V), repeat=L))


def boltzmann(model, L, V, kind="local", tau=1.0):
    st = states_of(L, V)
    E = mcmc.energy(model, [list(s) for s in st], kind)
    return st, E, torch.softmax(-E / tau, 0)


def tv(p: torch.Tensor, states, emp: dict) -> float:
    return 0.5 * sum(abs(float(p[i]) - emp.get(s, 0.0)) for i, s in enumerate(states))


def sweep_kernel(model, states, E, blocks=None, proposal_temperature=1.0, rule="mh"):
    """Exact transition matrix of one sweep (METHODS §3): for each block I in turn, propose all of
    I from the masked conditionals (tempered), accept by ``rule``: "mh" (the MH ratio),
    "no-ratio" (proposal ratio dropped: wrong) or "gibbs" (always accept)."""
    L_ = len(states[0])
    blocks = blocks or [[i] for i in range(L_)]
    index = {s: i for i, s in enumerate(states)}
    K = torch.eye(len(states), dtype=torch.float64)
    for block in blocks:
        Ki = torch.zeros_like(K)
        for s in states:
            masked = [model.mask_id if j in block else v for j, v in enumerate(s)]
            r = [torch.softmax(model.conditional(masked, i) / proposal_temperature, 0)
                 for i in block]
            for ws in itertools.product(range(model.vocab_size), repeat=len(block)):
                t = list(s)
                for i, w in zip(block, ws):
                    t[i] = w
                t = tuple(t)
                fwd = math.prod(float(r[k][w]) for k, w in enumerate(ws))
                rev = math.prod(float(r[k][s[i]]) for k, i in enumerate(block))
                log_a = float(E[index[s]] - E[index[t]])
                if rule == "mh":
                    log_a += math.log(rev) - math.log(fwd)
                a = 1.0 if rule == "gibbs" else math.exp(min(log_a, 0.0))
                Ki[index[s], index[t]] += fwd * a
                Ki[index[s], index[s]] += fwd * (1 - a)
        K = K @ Ki
    return K


def stationary(K: torch.Tensor) -> torch.Tensor:
    """The stationary distribution of a kernel (left eigenvector for eigenvalue 1)."""
    vals, vecs = torch.linalg.eig(K.T)
    v = vecs[:, int(vals.real.argmax())].real
    return v / v.sum()


def tv_bound(K: torch.Tensor, pi: torch.Tensor, n_sweeps: int) -> float:
    """3x the expected TV distance between pi and the visit frequencies of n_sweeps draws from
    the chain with sweep kernel K, from the exact Markov-chain CLT: each state's frequency has
    asymptotic variance <f, (2Z - I) f>_pi / n with f its centred indicator and
    Z = (I - K + 1 pi^T)^-1 (the fundamental matrix); E|N(0, s^2)| = s sqrt(2/pi).
    Mixing enters through Z: a slowly mixing kernel gets a wider bound."""
    S = len(pi)
    eye = torch.eye(S, dtype=torch.float64)
    Z = torch.linalg.inv(eye - K + pi[None, :].expand(S, S))
    F = eye - pi[None, :]                                 # column x: 1[state = x] - pi_x
    var = (pi[:, None] * F * ((2 * Z - eye) @ F)).sum(0)
    expected = 0.5 * math.sqrt(2 / math.pi) * float(var.clamp(min=0).sqrt().sum()) \
        / math.sqrt(n_sweeps)
    return 3 * expected


L, V = 3, 3


@pytest.fixture(scope="module")
def oracle():
    return TableOracle(make_joint(L, V))


# ------------------------------------------------------------------------------------------------
# energies
# ------------------------------------------------------------------------------------------------
def test_local_energy_is_minus_pseudo_log_likelihood_by_hand(oracle):
    p = oracle.log_joint.exp()
    for s in [(0, 1, 2), (2, 2, 0), (1, 0, 1)]:
        want = 0.0
        for t in range(L):
            alts = [tuple(w if j == t else v for j, v in enumerate(s)) for w in range(V)]
            want -= math.log(p[s] / sum(p[a] for a in alts))
        got = mcmc.energy(oracle, list(s))
        assert got.shape == (1,) and got.dtype == torch.float64
        assert float(got[0]) == pytest.approx(want, abs=1e-10)


def test_energy_batches_rows_and_chunks_the_same(oracle):
    seqs = [list(s) for s in states_of(L, V)]
    oracle.calls = 0
    whole = mcmc.energy(oracle, seqs, max_rows=1000)
    assert oracle.calls == 1                                # 27 x 3 masked rows, one call
    oracle.calls = 0
    chunked = mcmc.energy(oracle, torch.tensor(seqs), max_rows=7)
    assert oracle.calls == math.ceil(27 * 3 / 7)
    assert torch.allclose(whole, chunked, atol=0, rtol=0)


def test_raw_energy_uses_logits_by_hand():
    m = WithLogits(make_joint(L, V, seed=4))
    s = [2, 0, 1]
    want = 0.0
    for t in range(L):
        masked = list(s)
        masked[t] = m.mask_id
        f = m.conditional(masked, t)[s[t]] + 0.8 * sum(masked[j] for j in range(L) if j != t) \
            + 0.7 * t
        want -= float(f)
    assert float(mcmc.energy(m, s, "raw")[0]) == pytest.approx(want, abs=1e-10)
    assert float(mcmc.energy(m, s, "raw")[0]) != pytest.approx(float(mcmc.energy(m, s)[0]))


def test_raw_energy_without_logits_is_a_config_error(oracle):
    with pytest.raises(ConfigError, match="energy .raw. needs the model.s unnormalized logits"):
        mcmc.energy(oracle, [0, 1, 2], "raw")
    with pytest.raises(ConfigError, match="energy .raw. needs the model.s unnormalized logits"):
        mcmc.mh(oracle, [3, 3, 3], energy="raw", sweeps=1)
    with pytest.raises(ConfigError, match="unknown energy"):
        mcmc.energy(oracle, [0, 1, 2], "global")
    with pytest.raises(InputError, match="mask"):
        mcmc.energy(oracle, [0, oracle.mask_id, 2])


# ------------------------------------------------------------------------------------------------
# acceptance and proposals
# ------------------------------------------------------------------------------------------------
def test_log_acceptance_is_finite_for_extreme_energies():
    f64 = dict(dtype=torch.float64)
    big = torch.tensor([1e308, -1e308, 1e308, 0.0, float("inf"), 5.0, 1e300], **f64)
    prop = torch.tensor([-1e308, 1e308, 1e308, 1e308, float("inf"), -1e300, 1e300], **f64)
    fwd = torch.tensor([-1e4, 0.0, -3.0, -1.0, -1.0, -2.0, float("-inf")], **f64)
    rev = torch.tensor([0.0, -1e4, -3.0, -1.0, -1.0, float("-inf"), float("-inf")], **f64)
    out = mcmc.log_acceptance(big, prop, fwd, rev, tau=1e-3)
    assert not torch.isnan(out).any() and (out <= 0).all()
    assert out[0] == 0.0                        # huge energy drop: always accept
    assert out[1] == float("-inf")              # huge energy rise: never (no overflow to NaN)
    assert out[2] == 0.0 and out[4] == 0.0      # equal energies (also equal infinities)
    assert out[3] == float("-inf")
    assert out[5] == float("-inf")              # impossible reverse move
    assert out[6] == 0.0                        # same state proposed from a support of ~0
    # the ordinary case equals the textbook formula
    a = mcmc.log_acceptance(torch.tensor([3.0]), torch.tensor([2.5]), torch.tensor([-1.2]),
                            torch.tensor([-2.0]), tau=0.5)
    assert float(a) == pytest.approx(min(0.0, (3.0 - 2.5) / 0.5 - 2.0 + 1.2))


def test_proposal_is_tempered_then_truncated():
    log_q = torch.log(torch.tensor([0.5, 0.3, 0.15, 0.05], dtype=torch.float64))
    allowed = torch.tensor([True, True, True, False])
    lp = mcmc.proposal_log_probs(log_q, allowed, temperature=2.0)
    want = torch.tensor([0.5, 0.3, 0.15]).double().sqrt()
    assert torch.allclose(lp[:3].exp(), want / want.sum()) and lp[3] == float("-inf")
    nuc = mcmc.proposal_log_probs(log_q, None, temperature=1.0, top_p=0.8)
    assert torch.allclose(nuc.exp(), torch.tensor([0.625, 0.375, 0.0, 0.0], dtype=torch.float64))
    assert mcmc.proposal_log_probs(log_q, None, top_p=0.1).exp()[0] == 1.0


def test_extreme_model_scores_give_no_nan():
    lj = torch.full((V,) * 2, -800.0, dtype=torch.float64)
    lj[0, 0] = 0.0                               # nearly degenerate joint: energies ~ 1e3
    m = TableOracle(lj - lj.logsumexp((0, 1)))
    res = mcmc.mh(m, [m.mask_id] * 2, sweeps=6, chains=8, init="random", anneal=0.2,
                  min_temperature=1e-4, seed=3)
    assert torch.isfinite(res.energy_trace).all()
    assert res.energy_trace[0].max() > 700                 # some chains start at E ~ 800
    assert res.best.tokens == (0, 0)
    # (2, 2) is a local minimum (E = 2 log 3) behind an energy wall of ~800: chains end in
    # one of the two minima, never on the wall
    assert set(res.final) <= {(0, 0), (1, 1), (2, 2), (1, 2), (2, 1)}
    assert res.energy_trace[-1].max() < 3


# ------------------------------------------------------------------------------------------------
# convergence to the Boltzmann distribution of the energy
# ------------------------------------------------------------------------------------------------
def test_exact_sweep_kernels_have_the_boltzmann_distribution_and_a_wrong_rule_does_not(oracle):
    st, E, pi = boltzmann(oracle, L, V)
    for blocks in ([[0], [1], [2]], [[0, 1], [2]], [[2, 0, 1]]):
        stat = stationary(sweep_kernel(oracle, st, E, blocks))
        assert float((stat - pi).abs().sum()) < 1e-10
    stat = stationary(sweep_kernel(oracle, st, E, proposal_temperature=0.5))
    assert float((stat - pi).abs().sum()) < 1e-10
    wrong = stationary(sweep_kernel(oracle, st, E, rule="no-ratio"))
    assert 0.5 * float((wrong - pi).abs().sum()) > 0.2


@pytest.mark.parametrize("options", [dict(), dict(proposal_temperature=0.5)],
                         ids=["plain", "tempered"])
def test_mh_converges_to_boltzmann_and_ignoring_the_proposal_ratio_fails(oracle, options,
                                                                          monkeypatch):
    st, E, pi = boltzmann(oracle, L, V)
    K = sweep_kernel(oracle, st, E, proposal_temperature=options.get("proposal_temperature", 1))
    chains, sweeps, burn_in = 256, 240, 60
    bound = tv_bound(K, pi, chains * (sweeps - burn_in))
    assert bound < 0.06
    run = dict(sweeps=sweeps, chains=chains, burn_in=burn_in, init="random", seed=11, **options)
    res = mcmc.mh(oracle, [oracle.mask_id] * L, **run)
    got = tv(pi, st, res.distribution())
    assert got < bound, (got, bound)
    assert 0.05 < res.novel_rate < res.acceptance_rate <= 1.0
    assert sum(s.count for s in res.samples) == chains * (sweeps - burn_in) * L
    for s in res.samples:                               # reported energies are the real ones
        assert s.energy == pytest.approx(float(E[st.index(s.tokens)]), abs=1e-9)

    # The same chain with a wrong acceptance rule (proposal ratio dropped) misses the bound.
    def no_ratio(e_cur, e_prop, log_q_fwd, log_q_rev, tau=1.0):
        return ((e_cur - e_prop) / tau).clamp(max=0.0)

    monkeypatch.setattr(mcmc.chains, "log_acceptance", no_ratio)
    bad = mcmc.mh(oracle, [oracle.mask_id] * L, **run)
    assert tv(pi, st, bad.distribution()) > bound


def test_block_mh_converges_to_boltzmann(oracle):
    st, E, pi = boltzmann(oracle, L, V)
    res = mcmc.mh(oracle, [oracle.mask_id] * L, block=2, block_schedule="fixed", sweeps=200,
                  chains=256, burn_in=40, init="random", seed=5)
    assert res.block_sizes == [2] * 200 and res.steps == 200 * 2        # blocks {0,1}, {2}
    K = sweep_kernel(oracle, st, E, blocks=[[0, 1], [2]])
    assert tv(pi, st, res.distribution()) < tv_bound(K, pi, 256 * 160)


def test_raw_energy_chain_targets_exp_minus_raw_energy():
    m = WithLogits(make_joint(2, 3, seed=2))
    st, E, pi = boltzmann(m, 2, 3, kind="raw")
    res = mcmc.mh(m, [m.mask_id] * 2, energy="raw", sweeps=150, chains=256, burn_in=30,
                  init="random", seed=2)
    bound = tv_bound(sweep_kernel(m, st, E), pi, 256 * 120)
    assert tv(pi, st, res.distribution()) < bound
    _, E_local, pi_local = boltzmann(m, 2, 3)
    assert 0.5 * float((pi - pi_local).abs().sum()) > 2 * bound   # a different target indeed


def test_gibbs_on_compatible_conditionals_finds_the_joint_not_the_energy(oracle):
    st, E, pi = boltzmann(oracle, L, V)
    joint = oracle.log_joint.exp().flatten()
    K = sweep_kernel(oracle, st, E, rule="gibbs")
    assert torch.allclose(stationary(K), joint, atol=1e-10)          # exact conditionals
    res = mcmc.mh(oracle, [oracle.mask_id] * L, gibbs=True, sweeps=240, chains=256, burn_in=60,
                  init="random", seed=1)
    assert res.acceptance_rate == 1.0
    emp = res.distribution()
    bound = tv_bound(K, joint, 256 * 180)
    assert tv(joint, st, emp) < bound
    assert tv(pi, st, emp) > 2 * bound


def test_gibbs_on_incompatible_conditionals_matches_no_joint_but_mh_is_sound():
    m = TwoTables()
    st = states_of(2, 2)
    res = mcmc.mh(m, [m.mask_id] * 2, gibbs=True, sweeps=400, chains=128, burn_in=20,
                  init="random", seed=0)
    emp = torch.tensor([res.distribution().get(s, 0.0) for s in st], dtype=torch.float64)
    emp = emp.view(2, 2)
    # conditionals of the distribution the Gibbs chain settles in, vs the given tables
    p1_given_2 = (emp / emp.sum(0, keepdim=True)).T                # rows: value of X2
    p2_given_1 = emp / emp.sum(1, keepdim=True)                    # rows: value of X1
    assert (p1_given_2 - m.p1_given_2).abs().max() > 0.2
    assert (p2_given_1 - m.p2_given_1).abs().max() > 0.2
    # exact: visits after the X1 step follow 0.5 * p(X1|X2); after the X2 step, uniform
    half = 0.5 * m.p1_given_2.T
    assert torch.allclose(emp, (half + 0.25) / 2, atol=0.02)

    # MH on the same conditionals targets exp(-E_local): p(x) ∝ p(x1|x2) p(x2|x1)
    E = mcmc.energy(m, [list(s) for s in st])
    pi = torch.softmax(-E, 0)
    assert torch.allclose(pi, torch.tensor([0.495, 0.005, 0.005, 0.495], dtype=torch.float64))
    mh_res = mcmc.mh(m, [m.mask_id] * 2, sweeps=400, chains=128, burn_in=20, init="random",
                     seed=0)
    assert tv(pi, st, mh_res.distribution()) < 0.03


# ------------------------------------------------------------------------------------------------
# annealing, schedules, warm starts, determinism, infilling
# ------------------------------------------------------------------------------------------------
def test_annealing_finds_the_energy_minimum(oracle):
    st, E, _ = boltzmann(oracle, L, V)
    mode = st[int(E.argmin())]
    res = mcmc.mh(oracle, [oracle.mask_id] * L, anneal=0.1, min_temperature=0.02, sweeps=20,
                  chains=16, init="random", seed=0)
    assert res.temperatures[0] == 1.0 and res.temperatures[-1] == 0.02
    assert res.temperatures[5] == pytest.approx(0.5)
    assert res.best.tokens == mode and res.best.energy == pytest.approx(float(E.min()))
    index = {s: i for i, s in enumerate(st)}

    def local_minimum(s):
        return all(E[index[s]] <= E[index[tuple(w if j == i else v for j, v in enumerate(s))]]
                   for i in range(L) for w in range(V))

    assert all(local_minimum(f) for f in res.final)        # frozen: no downhill move left
    assert sum(f == mode for f in res.final) >= 4
    assert res.energy_trace.shape == (21, 16)
    assert res.energy_trace[-1].mean() < res.energy_trace[0].mean()


def test_block_size_schedule_anneals_to_one(oracle):
    # round(4 - 3e/4) for e = 0..4: 4, 3.25, 2.5 (half to even: 2), 1.75, 1
    assert mcmc.block_sizes(4, 6, 5, "anneal") == [4, 3, 2, 2, 1]
    assert mcmc.block_sizes(4, 6, 4, "anneal")[0] == 4
    assert mcmc.block_sizes(4, 6, 4, "anneal")[-1] == 1
    assert mcmc.block_sizes(9, 3, 3, "fixed") == [3, 3, 3]
    res = mcmc.mh(oracle, [oracle.mask_id] * L, block=3, sweeps=3, chains=2, seed=0)
    assert res.block_sizes == [3, 2, 1] and res.steps == 1 + 2 + 3


def test_only_gap_positions_move_and_greedy_warm_start(oracle):
    ids = [1, oracle.mask_id, oracle.mask_id]
    greedy = []
    x = list(ids)
    for p in (1, 2):                                  # left-to-right greedy by hand
        x[p] = int(oracle.conditional(x, p).argmax())
        greedy.append(x[p])
    res = mcmc.mh(oracle, ids, sweeps=1, chains=3, gibbs=True, seed=0)
    res0 = mcmc.mh(oracle, ids, sweeps=1, chains=3, anneal=0.0, seed=0, init="greedy")
    assert res.positions == [1, 2]
    assert all(len(s.tokens) == 2 for s in res.samples)
    e0 = mcmc.energy(oracle, [1, *greedy])
    assert torch.allclose(res0.energy_trace[0], e0.expand(3))
    # a given warm start (e.g. a beam result) is used as is, cycled over chains
    res1 = mcmc.mh(oracle, ids, sweeps=1, chains=3, init=[(0, 0), (2, 2)], seed=0)
    assert torch.allclose(res1.energy_trace[0],
                          mcmc.energy(oracle, [[1, 0, 0], [1, 2, 2], [1, 0, 0]]))
    with pytest.raises(InputError, match="exactly 2 tokens"):
        mcmc.mh(oracle, ids, init=[(0,)])


def test_seeded_runs_are_identical_and_seeds_matter(oracle):
    run = dict(sweeps=30, chains=8, init="random", order="random", block=2, top_p=0.95,
               proposal_temperature=1.5)
    a = mcmc.mh(oracle, [oracle.mask_id] * L, seed=7, **run)
    b = mcmc.mh(oracle, [oracle.mask_id] * L, seed=7, **run)
    c = mcmc.mh(oracle, [oracle.mask_id] * L, seed=8, **run)
    assert a.samples == b.samples and a.final == b.final
    assert torch.equal(a.energy_trace, b.energy_trace)
    assert (a.accepted, a.novel) == (b.accepted, b.novel)
    assert a.samples != c.samples             # another seed, other visit counts


def test_bad_options_are_config_errors(oracle):
    ids = [oracle.mask_id] * L
    for kw in [dict(proposal_temperature=0), dict(top_p=0.0), dict(block=0), dict(sweeps=0),
               dict(chains=0), dict(order="zigzag"), dict(anneal=-1), dict(burn_in=5, sweeps=5),
               dict(init="sideways"), dict(temperature=0)]:
        with pytest.raises(ConfigError):
            mcmc.mh(oracle, ids, **kw)
    with pytest.raises(InputError, match="no gap"):
        mcmc.mh(oracle, [0, 1, 2])


def test_rescore_ranks_by_energy(oracle):
    seqs = [[0, 1, 2], [2, 2, 2], [1, 0, 0]]
    got = mcmc.rescore(oracle, seqs)
    assert got == pytest.approx(mcmc.energy(oracle, seqs).tolist())
    assert mcmc.rescore(oracle, "abc") == pytest.approx(mcmc.rescore(oracle, [[0, 1, 2]]))


def test_text_level_sample_on_the_oracle(oracle):
    res = mcmc.sample(oracle, "b??", marker="?", sweeps=20, chains=4, seed=0)
    assert isinstance(res, mcmc.SampleResult)
    assert all(s.text.startswith("b") and len(s.text) == 3 for s in res.samples)
    assert all(len(s.fills) == 2 and s.text == "b" + "".join(s.fills) for s in res.samples)
    counts = [s.count for s in res.samples]
    assert counts == sorted(counts, reverse=True) and sum(counts) == 20 * 2 * 4
    assert res.best.text is not None and res.best.energy <= min(s.energy for s in res.samples)
    assert [r.text for r in mcmc.sample(oracle, ["a?c", "?bc"], marker="?", sweeps=2)] == \
        ["a?c", "?bc"]


def test_one_call_per_step_serves_all_chains_and_equal_states_share_energy(oracle):
    oracle.calls = oracle.rows = 0
    res = mcmc.mh(oracle, [oracle.mask_id] * L, sweeps=2, chains=6, init=(0, 0, 0), seed=0,
                  max_rows=10_000)
    assert res.forward_rows == oracle.rows
    # initial energy: 6 identical chains -> one evaluation (L rows, one call); then per step
    # one proposal call (6 rows) and at most one energy call
    energy_calls = oracle.calls - res.steps
    assert 1 <= energy_calls <= 1 + res.steps
    assert oracle.rows <= L + res.steps * (6 + 6 * L)
    assert res.steps == 2 * L


def test_the_floor_stops_annealing_and_never_raises_the_target():
    """``min_temperature`` is where annealing stops; a target below the default floor stays
    what was asked (it was raised to the floor, 0.01, from the first sweep)."""
    from infill.mcmc.kernel import temperatures

    assert temperatures(0.005, 0.0, 0.01, 3) == [0.005] * 3
    assert temperatures(1.0, 0.4, 0.1, 5) == pytest.approx([1.0, 0.6, 0.2, 0.1, 0.1])
