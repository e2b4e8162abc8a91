"""Pairwise joints (METHODS §2): exactness on explicit joints, AG optimality, metrics, model tables.

Every expected value comes from an explicit joint p or an independent computation (brute force,
plain Python floats, a direct call of the exact oracle), never from the code under test.
"""
from __future__ import annotations

import math

import pytest
import torch

import infill

from infill.errors import ConfigError, InputError
from infill.joint import (ag, ag_objective, build_joints, conditionals, decode_ag, hcb, mlm, mrf,
                          mrf_logits, pair_tables, pair_tables_batch)
from infill.joint.metrics import (PairExample, aggregate, distance_breakdown, evaluate_joints,
                                  example_metrics, format_table, make_pairs, plot_distance)
from infill.models.oracle import OracleMLM

D = torch.float64


def kl(p_log: torch.Tensor, q_log: torch.Tensor) -> float:
    """KL(p || q) of two full tables (flattened), in plain Python."""
    return sum(math.exp(a) * (a - b) for a, b in zip(p_log.reshape(-1).tolist(),
                                                      q_log.reshape(-1).tolist()) if a > -math.inf)


def true_tables(p: torch.Tensor):
    """Exact conditionals of an explicit joint, by hand: (log q_{a|b}, log q_{b|a})."""
    qa_b = p / p.sum(0, keepdim=True)
    qb_a = p / p.sum(1, keepdim=True)
    return qa_b.log(), qb_a.log()


def random_joint(n_a: int, n_b: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    p = torch.rand(n_a, n_b, generator=g, dtype=D) ** 3 + 1e-3
    return p / p.sum()


# ----------------------------------------------------------------------------------------------
# constructions on explicit joints
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hcb_any_pivot_recovers_compatible_joint(seed):
    p = random_joint(4, 5, seed)
    la_b, lb_a = true_tables(p)
    for pivot in range(4):
        j = hcb(la_b, lb_a, pivot_index=pivot)
        assert j.dtype == D and j.shape == (4, 5)
        assert abs(float(j.exp().sum()) - 1) < 1e-12
        assert kl(p.log(), j) < 1e-10
        assert torch.allclose(j.exp(), p, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ag_recovers_compatible_joint_and_mrf_does_not(seed):
    p = random_joint(4, 5, seed)
    la_b, lb_a = true_tables(p)
    j, info = ag(la_b, lb_a, iterations=20000, tol=1e-12)
    assert info.converged and info.iterations < 20000
    assert kl(p.log(), j) < 1e-6
    assert info.objective[-1] < 1e-9
    # MRF: product of the two conditionals is not the joint
    assert kl(p.log(), mrf(la_b, lb_a)) > 1e-3


def test_ag_linear_convergence_needs_iterations():
    """App. B joint: AG converges slowly (linearly); 50 steps are not exact, a tol stop is."""
    p = torch.tensor([[0.97, 0.01], [0.01, 0.01]], dtype=D)
    la_b, lb_a = true_tables(p)
    j50, info50 = ag(la_b, lb_a, iterations=50)
    assert info50.iterations == 50 and not info50.converged
    j, info = ag(la_b, lb_a, iterations=20000, tol=1e-11)   # 20,000: the library's bound
    assert info.converged and 50 < info.iterations < 20000
    assert kl(p.log(), j) < 1e-6 < kl(p.log(), j50)
    obj = info.objective
    assert all(b <= a + 1e-15 for a, b in zip(obj, obj[1:]))


def test_app_b_mrf_kl_is_1_27_nats():
    p = torch.tensor([[0.97, 0.01], [0.01, 0.01]], dtype=D)   # rows w1 (a, b), cols w2 (a, b)
    la_b, lb_a = true_tables(p)
    q = mrf(la_b, lb_a)
    q1_2, _ = conditionals(q)
    p1_2 = la_b
    # KL(p_{1|2}(.|b) || q_{1|2}(.|b)): column 1 (w2 = b)
    value = kl(p1_2[:, 1], q1_2[:, 1])
    # by hand: p(.|b) = (1/2, 1/2); q(.|b) ∝ (0.5·0.01/0.98, 0.5·0.5) = (0.02, 0.98)
    by_hand = 0.5 * math.log(0.5 / 0.02) + 0.5 * math.log(0.5 / 0.98)
    assert value == pytest.approx(by_hand, abs=1e-12)
    assert value == pytest.approx(1.27, abs=0.005)


def test_mlm_is_product_of_marginals():
    qa = torch.tensor([0.2, 0.8], dtype=D)
    qb = torch.tensor([0.5, 0.3, 0.2], dtype=D)
    j = mlm(qa.log(), qb.log())
    assert torch.allclose(j.exp(), qa[:, None] * qb[None, :], atol=1e-15)
    # unnormalized marginals (a top-K slice) are renormalized
    j2 = mlm((qa * 0.3).log(), (qb * 0.7).log())
    assert torch.allclose(j2, j, atol=1e-14)


def test_mrf_logits_needs_true_logits():
    """MRF-L equals MRF when logits = log-probs + one constant, differs with per-row constants."""
    p = random_joint(3, 4, 5)
    la_b, lb_a = true_tables(p)
    assert torch.allclose(mrf_logits(la_b + 7.0, lb_a - 2.0), mrf(la_b, lb_a), atol=1e-12)
    za = torch.tensor([0.0, 1.0, -0.5, 2.0], dtype=D)       # Z_a(w_b): one per column
    zb = torch.tensor([0.3, -1.0, 0.0], dtype=D)            # Z_b(w_a): one per row
    lg = mrf_logits(la_b + za[None, :], lb_a + zb[:, None])
    by_hand = la_b + lb_a + za[None, :] + zb[:, None]
    assert torch.allclose(lg, by_hand - torch.logsumexp(by_hand.reshape(-1), 0), atol=1e-12)
    assert kl(lg, mrf(la_b, lb_a)) > 1e-3


def test_hcb_default_pivot_and_errors():
    p = random_joint(3, 3, 7)
    la_b, lb_a = true_tables(p)
    qa = torch.tensor([0.1, 0.7, 0.2], dtype=D).log()
    # any pivot is exact here, so check the default pivot through an incompatible pair instead
    inc_a = torch.tensor([[0.9, 0.2, 0.3], [0.05, 0.5, 0.3], [0.05, 0.3, 0.4]], dtype=D).log()
    inc_b = torch.full((3, 3), 1 / 3, dtype=D).log()
    assert torch.equal(hcb(inc_a, inc_b, log_qa=qa), hcb(inc_a, inc_b, pivot_index=1))
    assert torch.equal(hcb(inc_a, inc_b), hcb(inc_a, inc_b, pivot_index=0))
    assert not torch.allclose(hcb(inc_a, inc_b, pivot_index=0), hcb(inc_a, inc_b, pivot_index=1))
    with pytest.raises(ConfigError):
        hcb(la_b, lb_a, pivot_index=3)
    zero = la_b.clone()
    zero[0, 1] = -math.inf
    with pytest.raises(InputError):
        hcb(zero, lb_a, pivot_index=0)
    with pytest.raises(InputError):
        mrf(la_b, lb_a[:, :2])
    with pytest.raises(ConfigError):
        ag(la_b, lb_a, iterations=0)


def test_float32_in_float32_out():
    p = random_joint(2, 3, 1).float()
    la, lb = p.sum(1).log(), p.sum(0).log()
    la_b, lb_a = true_tables(p)
    for j in (mlm(la, lb), mrf(la_b, lb_a), hcb(la_b, lb_a), ag(la_b, lb_a, iterations=3)[0]):
        assert j.dtype == torch.float32


# ----------------------------------------------------------------------------------------------
# AG on incompatible conditionals: monotone objective, closest joint (brute force)
# ----------------------------------------------------------------------------------------------
MH_QA_B = torch.tensor([[0.99, 0.01], [0.01, 0.99]], dtype=D)   # q(X1 = row | X2 = col)
MH_QB_A = torch.tensor([[0.5, 0.5], [0.5, 0.5]], dtype=D)       # q(X2 = col | X1 = row)


def objective_of(joints: torch.Tensor, la_b: torch.Tensor, lb_a: torch.Tensor) -> torch.Tensor:
    """D(J) for a batch of joints [N, A, B], written out independently of the code under test."""
    ja_b = joints / joints.sum(1, keepdim=True)
    jb_a = joints / joints.sum(2, keepdim=True)
    qa, qb = la_b.exp(), lb_a.exp()
    return (qa * (qa.log() - ja_b.log())).sum((1, 2)) + (qb * (qb.log() - jb_a.log())).sum((1, 2))


def test_ag_incompatible_pair_is_closest_joint():
    la_b, lb_a = MH_QA_B.log(), MH_QB_A.log()
    j, info = ag(la_b, lb_a, iterations=200)
    obj = info.objective
    assert all(b <= a + 1e-15 for a, b in zip(obj, obj[1:]))
    assert obj[-1] == pytest.approx(ag_objective(la_b, lb_a, j), abs=1e-15)
    assert obj[-1] == pytest.approx(float(objective_of(j.exp()[None], la_b, lb_a)), abs=1e-12)
    # brute force: every joint on a grid of the 3-simplex (step 1/150)
    s = 150
    g = torch.arange(1, s, dtype=D)
    x, y, z = torch.meshgrid(g, g, g, indexing="ij")
    w = s - x - y - z
    keep = w >= 1
    cells = torch.stack([x[keep], y[keep], z[keep], w[keep]], 1) / s
    vals = objective_of(cells.reshape(-1, 2, 2), la_b, lb_a)
    best = int(torch.argmin(vals))
    assert obj[-1] <= float(vals[best]) + 1e-12
    assert torch.allclose(cells[best].reshape(2, 2), j.exp(), atol=2 / s)
    # gradient descent over softmax parameters from random starts never beats AG
    torch.manual_seed(0)
    theta = torch.randn(6, 4, dtype=D, requires_grad=True)
    opt = torch.optim.Adam([theta], lr=0.05)
    for _ in range(1500):
        opt.zero_grad()
        loss = objective_of(torch.softmax(theta, 1).reshape(-1, 2, 2), la_b, lb_a).sum()
        loss.backward()
        opt.step()
    with torch.no_grad():
        final = objective_of(torch.softmax(theta, 1).reshape(-1, 2, 2), la_b, lb_a)
    assert float(final.min()) >= obj[-1] - 1e-10
    assert float(final.max()) == pytest.approx(obj[-1], abs=1e-6)
    # stationarity (the fixed point of the update): J_{a|b} + J_{b|a} = q_{a|b} + q_{b|a}
    ja_b, jb_a = conditionals(j)
    assert torch.allclose(ja_b.exp() + jb_a.exp(), MH_QA_B + MH_QB_A, atol=1e-10)


@pytest.mark.parametrize("seed", [3, 4])
def test_ag_objective_monotone_on_random_incompatible_tables(seed):
    g = torch.Generator().manual_seed(seed)
    la_b = torch.log_softmax(3 * torch.randn(5, 6, generator=g, dtype=D), 0)
    lb_a = torch.log_softmax(3 * torch.randn(5, 6, generator=g, dtype=D), 1)
    j, info = ag(la_b, lb_a, iterations=300)
    obj = info.objective
    assert len(obj) == 301
    assert all(b <= a + 1e-12 for a, b in zip(obj, obj[1:]))
    assert obj[-1] < obj[0]
    # a local perturbation of the AG joint never lowers the objective (it is a minimum)
    pert = torch.randn(200, 5, 6, generator=g, dtype=D) * 1e-3
    cand = torch.softmax(j.reshape(1, -1) + pert.reshape(200, -1), 1).reshape(200, 5, 6)
    assert float(objective_of(cand, la_b, lb_a).min()) >= obj[-1] - 1e-9


# ----------------------------------------------------------------------------------------------
# metrics on hand-computed cases
# ----------------------------------------------------------------------------------------------
def _tables_2x2():
    from infill.joint import PairTables
    qa_b = torch.tensor([[0.6, 0.3], [0.4, 0.7]], dtype=D)   # columns sum to 1
    qb_a = torch.tensor([[0.5, 0.5], [0.2, 0.8]], dtype=D)   # rows sum to 1
    return PairTables(1, 3, torch.tensor([10, 11]), torch.tensor([20, 21]),
                      torch.tensor([0.5, 0.5], dtype=D).log(),
                      torch.tensor([0.25, 0.75], dtype=D).log(),
                      qa_b.log(), qb_a.log(), gold=(0, 1))


def test_example_metrics_by_hand():
    t = _tables_2x2()
    J = torch.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=D)
    m = example_metrics(t, J.log())
    assert m["pair_nll"] == pytest.approx(-math.log(0.2))
    # J's conditionals at gold (A_0, B_1): J(a0|b1) = 0.2/0.6, J(b1|a0) = 0.2/0.3
    assert m["unary_nll"] == pytest.approx(-math.log(0.2 / 0.6) - math.log(0.2 / 0.3))

    def k(p, q):
        return sum(x * math.log(x / y) for x, y in zip(p, q))
    kl_a = [k([0.6, 0.4], [0.1 / 0.4, 0.3 / 0.4]), k([0.3, 0.7], [0.2 / 0.6, 0.4 / 0.6])]
    kl_b = [k([0.5, 0.5], [0.1 / 0.3, 0.2 / 0.3]), k([0.2, 0.8], [0.3 / 0.7, 0.4 / 0.7])]
    assert m["akl"] == pytest.approx(0.5 * (sum(kl_a) / 2 + sum(kl_b) / 2))
    assert m["gkl"] == pytest.approx(0.5 * (kl_a[1] + kl_b[0]))   # gold w_b = B_1, w_a = A_0
    # MLM row: U-PPL uses the unary conditionals themselves
    m2 = example_metrics(t, mlm(t.log_qa, t.log_qb), mlm_row=True)
    assert m2["unary_nll"] == pytest.approx(-math.log(0.3) - math.log(0.5))
    assert m2["pair_nll"] == pytest.approx(-math.log(0.5 * 0.75))


def test_aggregate_by_hand():
    recs = [{"pair_nll": 2.0, "unary_nll": 1.0, "akl": 0.1, "gkl": 0.3},
            {"pair_nll": 4.0, "unary_nll": 3.0, "akl": 0.3, "gkl": 0.5}]
    agg = aggregate(recs)
    assert agg["P-PPL"] == pytest.approx(math.exp(6.0 / 4))
    assert agg["U-PPL"] == pytest.approx(math.exp(4.0 / 4))
    assert agg["A-KL"] == pytest.approx(0.2)
    assert agg["G-KL"] == pytest.approx(0.4)
    with pytest.raises(InputError):
        aggregate([])


def test_distance_breakdown_and_plot(tmp_path):
    def rec(d, v):
        return {"distance": d, "metrics": {"MLM": {"pair_nll": v}, "AG": {"pair_nll": v / 2}}}
    recs = [rec(1, 2.0), rec(1, 4.0), rec(5, 6.0), rec(30, 8.0)]
    br = distance_breakdown(recs)
    assert [r["distance"] for r in br["MLM"]] == ["1", "4-5", "21+"]
    assert [r["count"] for r in br["MLM"]] == [2, 1, 1]
    assert [r["pair_nll"] for r in br["MLM"]] == [3.0, 6.0, 8.0]
    assert [r["pair_nll"] for r in br["AG"]] == [1.5, 3.0, 4.0]
    png = plot_distance(br, tmp_path / "d.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_format_table_layout():
    table = {n: {"U-PPL": 1.0, "P-PPL": 2.0, "A-KL": 0.5, "G-KL": 0.25}
             for n in ("MLM", "MRF", "HCB", "AG")}
    md = format_table(table).splitlines()
    assert md[0] == "| joint | U-PPL | P-PPL | A-KL | G-KL |"
    assert [ln.split("|")[1].strip() for ln in md[2:]] == ["MLM", "MRF-L", "MRF", "HCB", "AG"]
    assert "n/a" in md[3] and "2.000" in md[2]


# ----------------------------------------------------------------------------------------------
# model side against the exact oracle
# ----------------------------------------------------------------------------------------------
def oracle_joint(V: int = 4, L: int = 3, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    p = torch.rand([V] * L, generator=g, dtype=D) ** 2 + 1e-3
    return (p / p.sum()).log()


class LogitOracle(OracleMLM):
    """The oracle plus raw logits: log-probs + a per-row constant depending on the row's input."""

    supports_logits = True

    def logits(self, input_ids, attention_mask, positions):
        lp = self.log_probs(input_ids, attention_mask, positions)
        shift = (0.37 * input_ids.double() * torch.arange(1, input_ids.shape[1] + 1)).sum(1)
        return lp + shift[:, None, None]


def test_pair_tables_match_oracle_and_joints_recover_true_pairwise_joint():
    lj = oracle_joint()
    m = OracleMLM(lj)
    c = 2                                          # token at position 1, positions (0, 2) paired
    t = pair_tables(m, [1, c, 3], 0, 2, joint_size=10)
    assert t.cand_a.tolist() == sorted(range(4), key=lambda w: -float(lj[w, c].exp().sum()))
    true = lj[:, c, :] - torch.logsumexp(lj[:, c, :].reshape(-1), 0)    # p(w0, w2 | w1 = c)
    # tables are the exact conditionals, re-indexed by the candidate order
    ia, ib = t.cand_a, t.cand_b
    sub = true[ia][:, ib]
    qa_b, qb_a = true_tables(sub.exp())
    assert torch.allclose(t.log_qa_b, qa_b, atol=1e-12)
    assert torch.allclose(t.log_qb_a, qb_a, atol=1e-12)
    assert torch.allclose(t.log_qa, torch.logsumexp(sub, 1), atol=1e-12)
    assert t.logits_a_b is None                     # the plain oracle has no logits
    joints, info = build_joints(t, iterations=5000, tol=1e-13)
    assert "MRF-L" not in joints
    for name in ("HCB", "AG"):
        assert kl(sub, joints[name]) < 1e-6, name
    assert kl(sub, joints["MRF"]) > 1e-4
    mlm_true = torch.logsumexp(sub, 1)[:, None] + torch.logsumexp(sub, 0)[None, :]
    assert torch.allclose(joints["MLM"], mlm_true, atol=1e-12)


def test_pair_tables_top_k_gold_and_batching():
    lj = oracle_joint(V=6, seed=1)
    m = OracleMLM(lj)
    items = [([0, 1, 2], 0, 2), ([5, 4, 3], 0, 1), ([2, 2, 2], 1, 2)]
    golds = [(0, 2), (5, 4), (2, 2)]
    calls0 = m.calls
    batch = pair_tables_batch(m, items, joint_size=2, gold=golds, batch_size=3)
    # 3 both-masked rows -> 1 call; each item has 2-3 candidates a side -> 12-18 rows -> 4-6 calls
    n_rows = sum(len(t.cand_a) + len(t.cand_b) for t in batch)
    assert m.calls - calls0 == 1 + math.ceil(n_rows / 3)
    for (ids, a, b), g, t in zip(items, golds, batch):
        one = pair_tables(m, ids, a, b, joint_size=2, gold=g)
        assert torch.equal(one.cand_a, t.cand_a) and torch.equal(one.cand_b, t.cand_b)
        assert torch.allclose(one.log_qa_b, t.log_qa_b) and torch.allclose(one.log_qb_a, t.log_qb_a)
        # top-2 of the marginal, then the gold when missing
        x = list(ids)
        x[a] = x[b] = m.mask_id
        top_a = torch.topk(m.conditional(x, a), 2).indices.tolist()
        assert t.cand_a.tolist()[:2] == top_a
        assert t.cand_a.tolist() == top_a + ([] if g[0] in top_a else [g[0]])
        assert (int(t.cand_a[t.gold[0]]), int(t.cand_b[t.gold[1]])) == g
    with pytest.raises(InputError):
        pair_tables(m, [0, 1, 2], 1, 1)
    with pytest.raises(ConfigError):
        pair_tables(m, [0, 1, 2], 0, 1, joint_size=0)
    with pytest.raises(ConfigError):
        pair_tables(m, [0, 1, 2], 0, 1, logits=True)


def test_mrf_logits_from_adapter_logits():
    lj = oracle_joint(seed=3)
    m = LogitOracle(lj)
    t = pair_tables(m, [0, 1, 0], 0, 2, joint_size=10)
    assert t.logits_a_b is not None
    # logits_a_b[i, j] = f_a(A_i; B_j): the row that masks a and puts B_j at b
    for j, wb in enumerate(t.cand_b.tolist()):
        row = torch.tensor([[m.mask_id, 1, wb]])
        f = m.logits(row, torch.ones_like(row, dtype=torch.bool), torch.tensor([[0]]))[0, 0]
        assert torch.allclose(t.logits_a_b[:, j], f[t.cand_a])
    joints, _ = build_joints(t)
    assert torch.allclose(joints["MRF-L"], mrf_logits(t.logits_a_b, t.logits_b_a))
    assert kl(joints["MRF"], joints["MRF-L"]) > 1e-3   # the per-row constants matter
    # the log-probs derived from the logits are the oracle's exact conditionals
    plain = pair_tables(OracleMLM(lj), [0, 1, 0], 0, 2, joint_size=10)
    assert torch.allclose(t.log_qa_b, plain.log_qa_b, atol=1e-12)


def test_evaluate_on_oracle_matches_true_joint():
    lj = oracle_joint(V=4, seed=5)
    m = OracleMLM(lj)
    seqs = [[0, 1, 2], [3, 3, 1], [2, 0, 0], [1, 2, 3]]
    pos = [(0, 2), (0, 1), (1, 2), (0, 2)]
    ex = [PairExample(s, a, b, k) for k, (s, (a, b)) in enumerate(zip(seqs, pos))]
    res = evaluate_joints(m, ex, joint_size=10, iterations=5000, chunk=3, tol=1e-12)
    assert res.ag_monotone and len(res.records) == 4
    # expected P-PPL of the exact pairwise joints, straight from the explicit joint
    nll = 0.0
    for s, (a, b) in zip(seqs, pos):
        other = 3 - a - b
        sl = lj.select(other, s[other])                       # [V, V] over (a, b)
        nll -= float(sl[s[a], s[b]] - torch.logsumexp(sl.reshape(-1), 0))
    want = math.exp(nll / 8)
    assert res.table["HCB"]["P-PPL"] == pytest.approx(want, rel=1e-9)
    assert res.table["AG"]["P-PPL"] == pytest.approx(want, rel=1e-5)
    for name in ("HCB", "AG"):
        assert res.table[name]["A-KL"] < 1e-6 and res.table[name]["G-KL"] < 1e-6
        # exact conditionals: the joint's U-PPL equals the MLM row's (its unary conditionals)
        assert res.table[name]["U-PPL"] == pytest.approx(res.table["MLM"]["U-PPL"], rel=1e-5)
    assert res.table["MRF"]["A-KL"] > 1e-4 and res.table["MLM"]["A-KL"] > 1e-4
    assert [r["distance"] for r in res.records] == [2, 1, 1, 2]


def test_make_pairs_on_oracle_is_seeded():
    m = OracleMLM(oracle_joint(V=4, L=5))
    lines = ["abcda", "bbbbb", "abc", "dcbad", "aaaaa", "cabbd"]
    p1 = make_pairs(m, lines, 3, scheme="random", seed=1, min_tokens=5)
    p2 = make_pairs(m, lines, 3, scheme="random", seed=1, min_tokens=5)
    assert [(e.line, e.a, e.b) for e in p1] == [(e.line, e.a, e.b) for e in p2]
    assert all(e.a < e.b and lines[e.line] != "abc" for e in p1)
    assert all(m.detokenize(e.input_ids) == lines[e.line] for e in p1)
    c = make_pairs(m, lines, 10, scheme="contiguous", seed=2)
    assert len(c) == 5 and all(e.b == e.a + 1 for e in c)   # "abc" is too short for L = 5
    # several distinct pairs per text, the total capped at n
    many = make_pairs(m, lines, 7, scheme="random", seed=1, min_tokens=5, per_text=3)
    assert len(many) == 7 and [e.line for e in many].count(many[0].line) == 3
    for li in {e.line for e in many}:
        pairs = [(e.a, e.b) for e in many if e.line == li]
        assert len(set(pairs)) == len(pairs)
    adj = make_pairs(m, lines, 100, scheme="contiguous", seed=0, per_text=10)
    assert len(adj) == 5 * 4     # every adjacent pair of each 5-symbol text, once
    with pytest.raises(InputError):
        make_pairs(m, lines, 3, scheme="diagonal")


def test_decode_ag_ranks_true_pairwise_joint():
    lj = oracle_joint(V=4, seed=2)
    m = OracleMLM(lj)
    mk = m.mask_id
    hyps = decode_ag(m, [[mk, 1, mk], [3, mk, mk]],
                     infill.DecodeConfig(decoder="ag", joint_size=10, ag_iterations=5000,
                                         beam_size=5), tol=1e-12)
    for hs, (sl, ) in zip(hyps, [(lj[:, 1, :],), (lj[3],)]):
        true = sl - torch.logsumexp(sl.reshape(-1), 0)
        order = torch.argsort(true.reshape(-1), descending=True)[:5].tolist()
        assert [h.tokens for h in hs] == [(i // 4, i % 4) for i in order]
        for h in hs:
            assert h.score == pytest.approx(float(true[h.tokens]), abs=1e-6)
    with pytest.raises(ConfigError):
        decode_ag(m, [[mk, 1, 2]])


def test_converged_ag_row():
    """AG* (run to a tolerance) recovers the exact pairwise joint; the table shows it last."""
    lj = oracle_joint(V=5, seed=6)
    m = OracleMLM(lj)
    t = pair_tables(m, [0, 3, 1], 0, 2, joint_size=10)
    joints, info = build_joints(t, iterations=2, converged_tol=1e-12)
    sub = lj[:, 3, :][t.cand_a][:, t.cand_b]
    sub = sub - torch.logsumexp(sub.reshape(-1), 0)
    assert info.iterations == 2 and kl(sub, joints["AG"]) > 1e-6
    assert kl(sub, joints["AG*"]) < 1e-8
    ex = [PairExample([0, 3, 1], 0, 2, 0), PairExample([2, 3, 4], 0, 2, 1)]
    res = evaluate_joints(m, ex, joint_size=10, iterations=2, converged_tol=1e-12)
    assert list(res.table) == ["MLM", "MRF", "HCB", "AG", "AG*"]
    assert res.table["AG*"]["P-PPL"] == pytest.approx(res.table["HCB"]["P-PPL"], rel=1e-6)
    assert format_table(res.table).splitlines()[-1].startswith("| AG* |")
