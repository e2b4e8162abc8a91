"""Sampling baselines at matched budget (SPEC §1.1): which tokens a row draws at a step.

The engine runs the same n forward passes over B rows as beam search; instead of keeping the top-B
candidates it draws: B distinct tokens at the first position (Gumbel-top-B = sampling without
replacement), then one token per row. Scores stay the scorer's (untempered) sum.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from infill.errors import ConfigError

SAMPLERS = ("pure", "temperature", "nucleus")


@dataclass(frozen=True)
class Sampler:
    kind: str = "pure"          # pure (T=1) | temperature | nucleus
    temperature: float = 1.0
    top_p: float = 0.9

    def __post_init__(self):
        if self.kind not in SAMPLERS:
            raise ConfigError(f"unknown sampling method {self.kind!r}; choose from {', '.join(SAMPLERS)}")
        if self.kind == "temperature" and not self.temperature > 0:
            raise ConfigError(f"temperature must be > 0, got {self.temperature}")
        if self.kind == "nucleus" and not 0 < self.top_p <= 1:
            raise ConfigError(f"top-p must be in (0, 1], got {self.top_p}")

    def log_dist(self, logq: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        """[R, V] log of the distribution rows draw from (restricted to allowed tokens)."""
        logits = logq.masked_fill(~allowed, float("-inf"))
        if self.kind == "temperature":
            logits = logits / self.temperature
        logp = torch.log_softmax(logits, dim=-1)
        if self.kind == "nucleus":
            sorted_lp, idx = logp.sort(dim=-1, descending=True)
            before = sorted_lp.exp().cumsum(-1) - sorted_lp.exp()   # mass strictly before each token
            drop_sorted = before >= self.top_p                      # keeps the smallest set reaching p
            drop = torch.zeros_like(drop_sorted).scatter(-1, idx, drop_sorted)
            logp = torch.log_softmax(logp.masked_fill(drop, float("-inf")), dim=-1)
        return logp

    @staticmethod
    def gumbel(shape, generator: torch.Generator, device) -> torch.Tensor:
        u = torch.rand(shape, generator=generator, dtype=torch.float64).clamp_(1e-300, 1.0)
        return (-torch.log(-torch.log(u))).to(device)
