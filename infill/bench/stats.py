"""Uncertainty for benchmark tables: Wilson intervals for accuracies and a paired (cluster)
bootstrap for the difference of two methods scored on the same examples.

    wilson_interval(37, 200)                       # (0.137..., 0.246...): 95% interval of 37/200
    paired_bootstrap(hcb_top1, std_top1, groups=seq_ids)
    # {'mean_diff': 0.012, 'lo': -0.004, 'hi': 0.029, 'p_two_sided': 0.16, 'n': 700, ...}

Both are plain numpy, vectorized and deterministic (the bootstrap under its ``seed``).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["wilson_interval", "paired_bootstrap", "bootstrap_replicates"]

_MAX_CELLS = 20_000_000   # resampling indices drawn per chunk (n_boot x groups), ~160 MB of int64


def wilson_interval(successes, n, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval (without continuity correction) of a proportion ``successes / n``,
    as fractions in [0, 1].

    ``z`` is the normal quantile (1.96: 95%). ``n == 0`` carries no information and gives the
    whole range (0.0, 1.0). Raises ValueError for a negative ``n``, ``successes`` outside
    [0, n] or a negative ``z``.
    """
    if isinstance(successes, bool) or isinstance(n, bool):
        raise ValueError("successes and n are counts, not booleans")
    s, n, z = float(successes), float(n), float(z)
    if not (math.isfinite(s) and math.isfinite(n) and math.isfinite(z)):
        raise ValueError(f"wilson_interval needs finite numbers, got {successes!r}/{n!r} (z={z!r})")
    if n < 0 or s < 0 or s > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes!r} of {n!r}")
    if z < 0:
        raise ValueError(f"z must be >= 0, got {z!r}")
    if n == 0:
        return 0.0, 1.0
    p = s / n
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n)) / denom
    lo = 0.0 if s == 0 else max(0.0, center - half)
    hi = 1.0 if s == n else min(1.0, center + half)
    return lo, hi


def _paired_diff(a, b) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"paired scores need equal lengths, got {a.size} and {b.size}")
    if a.size == 0:
        raise ValueError("no paired examples")
    d = a - b
    if not np.all(np.isfinite(d)):
        raise ValueError("paired scores must be finite numbers")
    return d


def _group_codes(groups, n: int) -> np.ndarray:
    if groups is None:
        return np.arange(n)
    g = list(groups) if not isinstance(groups, np.ndarray) else groups
    if len(g) != n:
        raise ValueError(f"one group per example: {len(g)} groups for {n} examples")
    _, codes = np.unique(np.asarray(g, dtype=object).astype(str), return_inverse=True)
    return codes.reshape(-1)


def bootstrap_replicates(diff: Sequence[float] | np.ndarray, n_boot: int = 10_000, seed: int = 0,
                         groups=None) -> np.ndarray:
    """``n_boot`` bootstrap replicates of the mean of ``diff`` (one value per example).

    Without ``groups`` every example is resampled on its own. With ``groups`` (one label per
    example, e.g. the sequence an example was cut from) whole groups are drawn with replacement,
    as many as there are groups, and a replicate is the mean over all examples of the drawn groups
    (a cluster bootstrap: examples of one group move together)."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}")
    d = np.asarray(diff, dtype=np.float64).reshape(-1)
    if d.size == 0:
        raise ValueError("no examples to resample")
    codes = _group_codes(groups, d.size)
    n_groups = int(codes.max()) + 1
    sums = np.bincount(codes, weights=d, minlength=n_groups)
    counts = np.bincount(codes, minlength=n_groups).astype(np.float64)
    rng = np.random.default_rng(seed)
    out = np.empty(int(n_boot), dtype=np.float64)
    step = max(1, _MAX_CELLS // n_groups)
    for s in range(0, int(n_boot), step):
        k = min(step, int(n_boot) - s)
        idx = rng.integers(0, n_groups, size=(k, n_groups))
        out[s:s + k] = sums[idx].sum(1) / counts[idx].sum(1)
    return out


def paired_bootstrap(a, b, n_boot: int = 10_000, seed: int = 0, groups=None,
                     level: float = 0.95) -> dict:
    """Mean of the paired differences ``a - b`` with a percentile bootstrap interval.

    ``a[i]`` and ``b[i]`` are two methods' scores on the same example i (e.g. 0/1 top-1 hits).
    ``groups`` (optional): the sequence id of each example; groups are resampled as wholes (see
    :func:`bootstrap_replicates`), so several spans cut from one sequence count as one draw.
    Returns ``mean_diff`` (the observed mean), ``lo``/``hi`` (the ``level`` percentile
    interval of the replicates), ``p_two_sided`` (twice the smaller tail of the replicates at 0,
    with the +1 correction, capped at 1: the bootstrap's answer to "is the difference zero?"),
    ``n`` (examples), ``n_groups`` and ``n_boot``. Deterministic for a given ``seed``.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    d = _paired_diff(a, b)
    codes = _group_codes(groups, d.size)
    reps = bootstrap_replicates(d, n_boot=n_boot, seed=seed, groups=codes)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    mean = float(d.mean())
    # replicates are ratios of sums: a tie with 0 (or with the constant) can come out one ulp off
    tol = 1e-12 * max(1.0, float(np.abs(d).max()))
    below = int(np.count_nonzero(reps <= tol))
    above = int(np.count_nonzero(reps >= -tol))
    p = min(1.0, 2.0 * (1 + min(below, above)) / (n_boot + 1))
    lo, hi = float(lo), float(hi)
    if np.all(d == d[0]):         # a constant difference: every replicate is that constant
        lo = hi = mean = float(d[0])
    return {"mean_diff": mean, "lo": lo, "hi": hi, "p_two_sided": p,
            "n": int(d.size), "n_groups": int(codes.max()) + 1, "n_boot": int(n_boot),
            "level": level}
