"""Drawing tokens from a masked conditional: the sampling baselines (METHODS §1.1) and the MH
proposals (METHODS §3) share these.

- :func:`proposal_log_probs` -- log r(.) of the distribution actually drawn from: the model's
  log q restricted to the allowed tokens, tempered, nucleus-truncated, renormalized;
- :class:`Proposal` -- a named sampling baseline (pure / temperature / nucleus) as such an r;
- :func:`gumbel` / :func:`gumbel_argmax` -- draws from a seeded ``torch.Generator``;
- :class:`KeyedRNG` -- counter-based uniforms: every number is a hash of (seed, key, counter), so
  the draws of one input depend only on the seed and that input, never on its batch mates or the
  batch size (splitmix64 finalizer, vectorized in int64 arithmetic).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from infill.lazy import torch

from infill.errors import ConfigError
from infill.names import SAMPLERS
from infill.fields import MAX_TEMPERATURE


_TINY = 1e-300  # smallest uniform used by a Gumbel draw (-log(-log u) stays finite)


def proposal_log_probs(log_q: torch.Tensor, allowed: torch.Tensor | None = None,
                       temperature: float = 1.0, top_p: float | None = None) -> torch.Tensor:
    """log r(.) [..., V] (float64): ``log_q`` restricted to ``allowed``, tempered
    (softmax(log q / T)) and nucleus-truncated (the smallest set of most probable tokens whose
    tempered mass reaches ``top_p``; the most probable token is always kept), renormalized.
    Tokens outside the support get ``-inf``."""
    lp = log_q.to(torch.float64)
    if allowed is not None:
        lp = lp.masked_fill(~allowed.to(lp.device), float("-inf"))
    lp = torch.log_softmax(lp / temperature, dim=-1)
    if top_p is not None and top_p < 1.0:
        sorted_lp, order = lp.sort(dim=-1, descending=True)
        mass_before = sorted_lp.exp().cumsum(-1) - sorted_lp.exp()
        keep = torch.zeros_like(mass_before, dtype=torch.bool).scatter(-1, order, mass_before < top_p)
        lp = torch.log_softmax(lp.masked_fill(~keep, float("-inf")), dim=-1)
    return lp


@dataclass(frozen=True)
class Proposal:
    """A sampling baseline: ``pure`` (T = 1), ``temperature`` (T), ``nucleus`` (top-p at T = 1)."""

    kind: str = "pure"
    temperature: float = 1.0
    top_p: float = 0.9

    def __post_init__(self):
        if self.kind not in SAMPLERS:
            raise ConfigError(f"unknown sampling method {self.kind!r}; choose from {', '.join(SAMPLERS)}")
        check_temperature(self.temperature, "sampling temperature")
        check_top_p(self.top_p)

    def log_dist(self, log_q: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        """[R, V] log of the distribution rows draw from (restricted to allowed tokens)."""
        return proposal_log_probs(log_q, allowed,
                                  self.temperature if self.kind == "temperature" else 1.0,
                                  self.top_p if self.kind == "nucleus" else None)




def check_temperature(t: float, what: str = "temperature") -> None:
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
        raise ConfigError(f"{what} must be a finite number > 0, got {t!r}")


def check_top_p(p: float, what: str = "top-p") -> None:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p <= 1:
        raise ConfigError(f"{what} must be in (0, 1], got {p!r}")


def gumbel(shape, generator: torch.Generator, device=None) -> torch.Tensor:
    """Standard Gumbel noise (float64) from a seeded generator."""
    u = torch.rand(shape, generator=generator, dtype=torch.float64).clamp_(min=_TINY)
    return (-torch.log(-torch.log(u))).to(device or "cpu")


def gumbel_argmax(log_p: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One draw per row of the categorical exp(log_p) (Gumbel-max)."""
    return (log_p + gumbel(log_p.shape, generator, log_p.device)).argmax(-1)


# ---- counter-based random numbers -----------------------------------------------------------
def _signed(x: int) -> int:
    return x - (1 << 64) if x >= 1 << 63 else x


_GOLDEN, _M1, _M2 = (_signed(0x9E3779B97F4A7C15), _signed(0xBF58476D1CE4E5B9),
                     _signed(0x94D049BB133111EB))


def _mix(z: torch.Tensor) -> torch.Tensor:
    """splitmix64's finalizer on int64 (wrapping products; logical shifts by masking)."""
    z = z ^ ((z >> 30) & ((1 << 34) - 1))
    z = z * _M1
    z = z ^ ((z >> 27) & ((1 << 37) - 1))
    z = z * _M2
    return z ^ ((z >> 31) & ((1 << 33) - 1))


def hash_key(*parts: int) -> int:
    """A 63-bit key from integers (e.g. a seed and the token ids of an input)."""
    z = torch.tensor(0, dtype=torch.long)
    for p in parts:
        z = _mix(z + _GOLDEN + int(p) % (1 << 62))
    return int(z) & ((1 << 63) - 1)


def subkeys(keys: torch.Tensor, n: int) -> torch.Tensor:
    """[N] keys -> [N, n] distinct keys (e.g. one per beam slot of each input)."""
    slots = torch.arange(n, dtype=torch.long, device=keys.device)
    return _mix(keys.to(torch.long)[:, None] * _GOLDEN + slots[None, :] + 1)


class KeyedRNG:
    """Uniforms in (0, 1) that are a pure function of (seed, row key, counter, column).

    ``uniform(keys, counter, n)`` gives one row of ``n`` numbers per key: rows with the same key
    and counter get the same numbers whatever else is in the batch."""

    def __init__(self, seed: int):
        self.seed = int(seed)

    def uniform(self, keys: torch.Tensor, counter: int, n: int) -> torch.Tensor:
        keys = keys.to(torch.long)
        base = _mix(keys * _GOLDEN + hash_key(self.seed, counter))               # [R]
        cols = torch.arange(n, dtype=torch.long, device=keys.device)
        z = _mix(base[:, None] + (cols[None, :] + 1) * _GOLDEN)                  # [R, n]
        return (((z >> 11) & ((1 << 53) - 1)).double() + 0.5) / float(1 << 53)

    def gumbel(self, keys: torch.Tensor, counter: int, n: int) -> torch.Tensor:
        return -torch.log(-torch.log(self.uniform(keys, counter, n)))

    def integers(self, keys: torch.Tensor, counter: int, high: int) -> torch.Tensor:
        """One integer in [0, high) per key."""
        return (self.uniform(keys, counter, 1)[:, 0] * high).long().clamp_(max=high - 1)
