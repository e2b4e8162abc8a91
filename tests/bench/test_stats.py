"""infill.bench.stats: Wilson intervals against a published table, paired bootstrap on cases whose
answer is known by hand."""
import math

import numpy as np
import pytest

from infill.bench.stats import bootstrap_replicates, paired_bootstrap, wilson_interval


# ---- Wilson ----------------------------------------------------------------------------------
# Newcombe (1998), "Two-sided confidence intervals for the single proportion: comparison of seven
# methods", Statistics in Medicine 17:857-872, Table II, method 3 (score interval without
# continuity correction), 95%.
NEWCOMBE = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
    (29, 29, 0.8830, 1.0000),
]


@pytest.mark.parametrize("s,n,lo,hi", NEWCOMBE)
def test_wilson_matches_newcombe_table(s, n, lo, hi):
    got = wilson_interval(s, n)
    assert got[0] == pytest.approx(lo, abs=5e-5)
    assert got[1] == pytest.approx(hi, abs=5e-5)


def test_wilson_by_hand():
    # 5/10, z=1.96: centre (0.5 + 1.9208/10)/(1 + 3.8416/10) = 0.5 by symmetry;
    # half-width 1.96*sqrt(0.025 + 3.8416/400)/1.38416 = 1.96*0.186022/1.38416 = 0.26341
    lo, hi = wilson_interval(5, 10)
    half = 1.96 * math.sqrt(0.25 / 10 + 1.96 ** 2 / 400) / (1 + 1.96 ** 2 / 10)
    assert (lo, hi) == pytest.approx((0.5 - half, 0.5 + half), abs=1e-12)
    assert half == pytest.approx(0.26341, abs=1e-5)


def test_wilson_properties():
    for s, n in [(0, 7), (3, 7), (7, 7), (1, 1000), (500, 1000)]:
        lo, hi = wilson_interval(s, n)
        assert 0.0 <= lo <= s / n <= hi <= 1.0
        flo, fhi = wilson_interval(n - s, n)          # complement: mirrored interval
        assert (flo, fhi) == pytest.approx((1 - hi, 1 - lo), abs=1e-12)
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0
    assert wilson_interval(3, 10, z=0) == pytest.approx((0.3, 0.3))     # no width at z = 0
    wide, narrow = wilson_interval(30, 100, z=2.576), wilson_interval(30, 100)
    assert wide[0] < narrow[0] and wide[1] > narrow[1]                   # 99% contains 95%
    assert wilson_interval(0, 0) == (0.0, 1.0)                           # no data: no information


@pytest.mark.parametrize("s,n,z", [(-1, 5, 1.96), (6, 5, 1.96), (1, -1, 1.96), (1, 5, -1.0),
                                   (True, 5, 1.96), (float("nan"), 5, 1.96)])
def test_wilson_rejects_bad_input(s, n, z):
    with pytest.raises(ValueError):
        wilson_interval(s, n, z)


# ---- paired bootstrap --------------------------------------------------------------------------
def test_identical_scores_give_zero_interval():
    a = np.array([1, 0, 1, 1, 0, 0, 1], dtype=float)
    r = paired_bootstrap(a, a.copy(), n_boot=2000, seed=3)
    assert (r["mean_diff"], r["lo"], r["hi"]) == (0.0, 0.0, 0.0)
    assert r["p_two_sided"] == 1.0
    assert r["n"] == 7 and r["n_groups"] == 7 and r["n_boot"] == 2000


@pytest.mark.parametrize("groups", [None, [0, 0, 1, 1, 2, 3, 3, 3]])
def test_constant_shift_gives_point_interval(groups):
    rng = np.random.default_rng(0)
    b = rng.normal(size=8)
    a = b + 0.25
    r = paired_bootstrap(a, b, n_boot=5000, seed=1, groups=groups)
    assert r["mean_diff"] == pytest.approx(0.25, abs=1e-12)
    assert r["lo"] == pytest.approx(0.25, abs=1e-12) and r["hi"] == pytest.approx(0.25, abs=1e-12)
    assert r["p_two_sided"] == pytest.approx(2 / 5001)        # no replicate at or below 0


def test_two_examples_by_hand():
    # d = (0, 1): a replicate draws two examples -> means 0, 0.5, 1 with prob 1/4, 1/2, 1/4,
    # so the 95% percentile interval is [0, 1] and the observed mean 0.5
    reps = bootstrap_replicates([0.0, 1.0], n_boot=20000, seed=0)
    assert set(np.unique(reps)) == {0.0, 0.5, 1.0}
    assert np.mean(reps == 0.5) == pytest.approx(0.5, abs=0.02)
    r = paired_bootstrap([1.0, 1.0], [1.0, 0.0], n_boot=20000, seed=0)
    assert (r["mean_diff"], r["lo"], r["hi"]) == (0.5, 0.0, 1.0)


def test_groups_resample_together():
    # d = (0, 0, 0 | 1) with groups (x, x, x | y): drawing 2 groups gives {x,x} -> 0,
    # {x,y} -> 1/4, {y,y} -> 1 (prob 1/4, 1/2, 1/4). Examples resampled alone would also give
    # 1/2 and 3/4.
    d = [0.0, 0.0, 0.0, 1.0]
    reps = bootstrap_replicates(d, n_boot=20000, seed=0, groups=["x", "x", "x", "y"])
    assert set(np.unique(reps)) == {0.0, 0.25, 1.0}
    assert np.mean(reps == 0.25) == pytest.approx(0.5, abs=0.02)
    alone = bootstrap_replicates(d, n_boot=20000, seed=0)
    assert {0.5, 0.75} <= set(np.unique(alone))
    r = paired_bootstrap(d, [0.0] * 4, n_boot=20000, seed=0, groups=["x", "x", "x", "y"])
    assert r["n"] == 4 and r["n_groups"] == 2
    assert (r["mean_diff"], r["lo"], r["hi"]) == (0.25, 0.0, 1.0)


def test_deterministic_under_seed():
    rng = np.random.default_rng(7)
    a, b = rng.integers(0, 2, 300), rng.integers(0, 2, 300)
    g = rng.integers(0, 60, 300)
    r1 = paired_bootstrap(a, b, n_boot=3000, seed=11, groups=g)
    r2 = paired_bootstrap(a, b, n_boot=3000, seed=11, groups=g)
    r3 = paired_bootstrap(a, b, n_boot=3000, seed=12, groups=g)
    assert r1 == r2
    assert (r1["lo"], r1["hi"]) != (r3["lo"], r3["hi"])
    assert r1["mean_diff"] == r3["mean_diff"] == pytest.approx(float(np.mean(a - b)))


def test_interval_width_matches_normal_theory():
    # 400 independent N(0.3, 1) differences: the 95% interval is about mean +- 1.96/sqrt(400)
    rng = np.random.default_rng(5)
    d = rng.normal(0.3, 1.0, size=400)
    r = paired_bootstrap(d, np.zeros_like(d), n_boot=10000, seed=0)
    half = 1.96 * d.std(ddof=1) / math.sqrt(d.size)
    assert r["lo"] == pytest.approx(d.mean() - half, abs=0.15 * half)
    assert r["hi"] == pytest.approx(d.mean() + half, abs=0.15 * half)
    assert r["p_two_sided"] < 0.001
    # a null difference: p is not small and the interval covers 0
    n = rng.normal(0.0, 1.0, size=400)
    r0 = paired_bootstrap(n - n.mean(), np.zeros_like(n), n_boot=10000, seed=0)
    assert r0["lo"] < 0 < r0["hi"] and r0["p_two_sided"] > 0.5


def test_chunked_resampling_equals_one_draw(monkeypatch):
    import infill.bench.stats as stats
    rng = np.random.default_rng(2)
    d, g = rng.normal(size=50), rng.integers(0, 10, size=50)
    whole = stats.bootstrap_replicates(d, n_boot=1000, seed=4, groups=g)
    monkeypatch.setattr(stats, "_MAX_CELLS", 10 * 7)        # 7 replicates per chunk
    chunked = stats.bootstrap_replicates(d, n_boot=1000, seed=4, groups=g)
    # the index stream is drawn in row-major chunks: the same replicates, whatever the chunking
    assert np.array_equal(whole, chunked)


@pytest.mark.parametrize("a,b,kw", [([1, 2], [1], {}), ([], [], {}), ([1, float("nan")], [0, 0], {}),
                                    ([1, 2], [0, 0], {"groups": [0]}), ([1, 2], [0, 0], {"n_boot": 0}),
                                    ([1, 2], [0, 0], {"level": 1.0})])
def test_paired_bootstrap_rejects_bad_input(a, b, kw):
    with pytest.raises(ValueError):
        paired_bootstrap(a, b, **kw)
