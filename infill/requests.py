"""The requests of sampling, rescoring and serving; with every other request type, their field
names are infill's vocabulary (API keyword = JSON field = ``--flag``).

Each is a frozen dataclass whose fields carry their own rules, checked at construction by the
one mechanism of :mod:`infill.fields` (re-exported here). This module imports neither torch nor
transformers.

    SampleRequest(energy="raw", chains=8, target_temperature=0.5)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from infill.errors import ConfigError
from infill.fields import (AG_MAX_ITERATIONS, MAX_LENGTHS, MAX_SEED, MAX_TEMPERATURE,  # noqa: F401
                           MAX_VARIANTS, Request, Spec, check_seed, described, option,
                           seed_option, spec_of, temperature_option)

__all__ = ["Spec", "option", "Request", "SampleRequest", "RescoreRequest", "ServeLimits",
           "ENERGIES", "SWEEP_ORDERS", "BLOCK_SCHEDULES", "INITS", "MAX_SWEEPS", "MAX_CHAINS",
           "MAX_SEED", "MAX_TEMPERATURE", "AG_MAX_ITERATIONS", "check_seed", "seed_option"]

ENERGIES = ("local", "raw")
"""E_local (-pseudo-log-likelihood) and E_raw (-sum of unnormalized logits), METHODS §3."""
SWEEP_ORDERS = ("left-to-right", "random")
"""Orders in which a Metropolis-Hastings sweep visits the gap positions."""
BLOCK_SCHEDULES = ("anneal", "fixed")
"""anneal: the block size falls linearly from ``block`` to 1 over the sweeps; fixed: constant."""
INITS = ("greedy", "random")
"""Named warm starts of the chains (token tuples are accepted too)."""
MAX_SWEEPS = 1_000_000
"""The most sweeps one sampling may ask for."""
MAX_CHAINS = 4096
"""The most chains one sampling may run (one batch)."""
# ---- Metropolis-Hastings (sample) and rescoring -------------------------------------------------
def _temperature(default: float, help: str, what: str) -> Any:
    return temperature_option(default, help, what)


def _is_token_states(value) -> bool:
    return not isinstance(value, str)


@dataclass(frozen=True)
class SampleRequest(Request):
    """Every option of Metropolis-Hastings (:func:`infill.mcmc.mh`), validated at construction.

    energy               -- "local" (E_local) or "raw" (E_raw, needs the model's logits)
    proposal_temperature -- temper the masked-conditional proposal (its exact r enters the ratio)
    top_p                -- nucleus-truncate the proposal (None: no truncation)
    block, block_schedule -- positions proposed together; "anneal" lowers the block size
                            linearly to 1 over the sweeps, "fixed" keeps it
    target_temperature   -- tau at sweep 0; ``anneal`` lowers it by that much per sweep, down to
                            ``min_temperature``
    sweeps, chains       -- sweeps over the gap positions (was ``epochs``, which names training's
                            passes over a corpus); chains run as one batch
    sweep_order          -- "left-to-right" or "random" visiting order within a sweep (was
                            ``order``, which names the decoding order of a fill)
    burn_in              -- sweeps not counted in the visit counts
    init                 -- warm start: "greedy", "random", a token tuple, or a list of tuples /
                            hypotheses with ``.tokens`` (cycled over the chains)
    gibbs                -- the degenerate Gibbs baseline: always accept
    """

    RENAMED: ClassVar[dict[str, str]] = {"temperature": "target_temperature",
                                         "order": "sweep_order", "epochs": "sweeps"}
    KIND: ClassVar[str] = "MH"

    energy: str = option("local", str, "local: -pseudo-log-likelihood; raw: -sum of unnormalized "
                         "logits.", choices=ENERGIES)
    proposal_temperature: float = _temperature(1.0, "Temper the masked-conditional proposal.",
                                               "the proposal temperature")
    top_p: float | None = option(None, float, "Nucleus-truncate the proposal (its exact "
                                 "probabilities enter the MH ratio).", low=0, low_open=True,
                                 high=1, optional=True)
    block: int = option(1, int, "Positions proposed together from one pass (block MH).", low=1,
                        what="the block size")
    block_schedule: str = option("anneal", str, "anneal: the block size falls linearly to 1 "
                                 "over the sweeps; fixed: it stays.", choices=BLOCK_SCHEDULES)
    target_temperature: float = _temperature(1.0, "Temperature tau of the target exp(-E/tau) at "
                                             "sweep 0.", "the target temperature")
    anneal: float = option(0.0, float, "Lower the target temperature by this much per sweep "
                           "(e.g. 0.02).", low=0, high=MAX_TEMPERATURE)
    min_temperature: float = _temperature(0.01, "Floor of the annealed target temperature.",
                                          "the minimum target temperature")
    sweeps: int = option(10, int, "Sweeps over the gap positions.", low=1, high=MAX_SWEEPS)
    chains: int = option(4, int, "Chains run in parallel (one batch).", low=1, high=MAX_CHAINS)
    sweep_order: str = option("left-to-right", str, "Order in which a sweep visits the gap "
                              "positions.", choices=SWEEP_ORDERS)
    burn_in: int = option(0, int, "Sweeps not counted in the visit counts.", low=0,
                          what="burn_in")
    init: Any = option("greedy", str, "Warm start of every chain.", choices=INITS,
                       skip=_is_token_states)
    gibbs: bool = option(False, bool, "Degenerate Gibbs baseline: always accept.")
    allow_special: bool = option(False, bool, "Let special tokens be placed in gaps.")
    seed: int = seed_option()
    max_rows: int = option(256, int, "Rows per forward pass when scoring energies.", low=1)

    def check(self) -> None:
        if not self.burn_in < self.sweeps:
            raise ConfigError("'burn_in' must be less than 'sweeps' (the sweeps not counted "
                              "among all)", field=("burn_in", "sweeps"))
        tempered = self.changed(("target_temperature", "anneal", "min_temperature"))
        if self.gibbs and tempered:
            raise ConfigError(f"'{tempered[0]}' tempers the MH acceptance; 'gibbs' accepts "
                              "every proposal", field=(tempered[0], "gibbs"))
        if self.anneal > 0 and self.min_temperature >= self.target_temperature:
            raise ConfigError(f"'anneal' lowers the target temperature "
                              f"({self.target_temperature:g}) down to 'min_temperature' "
                              f"({self.min_temperature:g}), which is not below it: nothing "
                              "to anneal", field=("anneal", "min_temperature"))


@dataclass(frozen=True)
class RescoreRequest(Request):
    """Options of :func:`infill.mcmc.rescore`: which ``energy``, rows per forward pass, and
    whether a text longer than the model reads each token in a context ``window``."""

    RENAMED: ClassVar[dict[str, str]] = {"kind": "energy"}
    KIND: ClassVar[str] = "rescore"

    energy: str = option("local", str, "local: -pseudo-log-likelihood; raw: -sum of unnormalized "
                         "logits.", choices=ENERGIES)
    max_rows: int = option(256, int, "Rows per forward pass when scoring energies.", low=1)
    window: bool = option(True, bool, "Read a text longer than the model in the longest context "
                          "window centred on each scored token (False: the length error).")


# ---- the workbench server -----------------------------------------------------------------------
def _limit(default: int, help: str) -> Any:
    return option(default, int, help, low=1)


@dataclass(frozen=True)
class ServeLimits(Request):
    """What one ``infill serve`` accepts (every count at least 1)."""

    KIND: ClassVar[str] = "server limit"

    max_text: int = _limit(2000, "Characters of a request's text (after Leiden conversion).")
    max_beam: int = _limit(50, "Largest beam size a request may ask for.")
    max_top_k: int = _limit(20, "Most completions a request may ask for.")
    max_gap: int = _limit(32, "Most tokens per gap marker.")
    max_positions: int = _limit(64, "Most positions to fill in one text (all its gaps).")
    max_pending: int = _limit(64, "Requests queued or decoding at once; more are answered 429.")
    max_batch: int = _limit(32, "Requests decoded together in one batch (1: no batching).")
    batch_wait_ms: float = option(5.0, float, "Under load, how long the worker waits for more "
                                  "requests to join a batch (a lone request never waits).",
                                  low=0, high=1000)
    max_wait_s: float = option(120.0, float, "Longest a request waits in the queue for its "
                               "decode to start; past it, it is answered 503.", low=0,
                               low_open=True, high=86_400, what="max_wait_s")

    @property
    def max_body(self) -> int:
        """Bytes of a request body: the text at 4 bytes a character, JSON escapes and options."""
        return 8 * self.max_text + 16_384
