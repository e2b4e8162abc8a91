"""One decoding configuration, validated once, that flows CLI -> API -> engine -> bench; and the
registries of names every front end takes its choices from.

    cfg = DecodeConfig(scorer="hcb", order="best-to-worst", beam_size=20)
    infill.fill(model, text, config=cfg)          # or infill.fill(model, text, beam_size=20, ...)
"""
from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from infill.decoding.decoders import DECODERS as DECODER_REGISTRY
from infill.decoding.orders import ORDERS as ORDER_REGISTRY
from infill.decoding.proposals import SAMPLERS, Proposal, check_temperature, check_top_p
from infill.decoding.scorers import SCORERS, Scorer, make_scorer
from infill.decoding.selectors import KEEPS, GumbelSample, Selector, TopB
from infill.errors import ConfigError

__all__ = ["DecodeConfig", "DECODERS", "ORDERS", "SAMPLERS", "SCORERS", "PIVOT_CONTEXTS",
           "MAX_SEED", "check_seed"]

ORDERS = tuple(ORDER_REGISTRY)
"""Which gap position(s) a hypothesis fills next (SPEC §1 "Order"; :mod:`infill.decoding.orders`)."""
DECODERS = tuple(DECODER_REGISTRY)
"""beam: the beam-search engine (any scorer, or a sampling baseline); ag: Arnold-Gokhale pairwise
joint, for gaps of exactly two tokens (SPEC §2); :mod:`infill.decoding.decoders`."""
DEDUP_KEEPS = KEEPS
PIVOT_CONTEXTS = ("inject", "mask")
MAX_SEED = 2 ** 63 - 1
MAX_BEAM = 100_000


def check_seed(seed) -> int:
    """Seeds are integers in [0, 2**63 - 1] (what torch's generators take)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ConfigError(f"seed must be an integer in [0, 2**63 - 1], got {seed!r}")
    return seed


def _check_int(value, what: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{what} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ConfigError(f"{what} must be {bound}, got {value}")
    return value


@dataclass(frozen=True)
class DecodeConfig:
    """Every option of a decode. Invalid combinations raise :class:`ConfigError` at construction.

    decoder       -- "beam" (the engine) or "ag" (Arnold-Gokhale, two-token gaps)
    scorer        -- a name of :data:`SCORERS` or a :class:`Scorer` instance; None: "hcb", or
                     "standard" for a sampling baseline (SPEC §1.1: Score = Σ log q)
    order         -- "left-to-right" | "best-to-worst" | "any-order"
    beam_size     -- hypotheses kept per step (rows, for sampling)
    dedup         -- best-to-worst, any-order: merge equal fills reached in different orders
    dedup_keep    -- which score a merged fill keeps: "higher" (SPEC) | "lower" (Ithaca's
                     published code, for parity)
    pivot         -- HCB pivot: None (the model's default), a token (string or id), or one per
                     gap position
    pivot_context -- "inject" (SPEC: pivots are context) | "mask" (the paper's published code)
    allow_special -- let special tokens be placed in a gap
    sampling      -- None (beam search) or a sampling baseline: "pure" | "temperature" | "nucleus"
    temperature   -- sampling temperature (``sampling="temperature"``)
    top_p         -- nucleus mass (``sampling="nucleus"``)
    seed          -- seeds every draw; an input's draws depend only on (seed, the input)
    joint_size, ag_iterations -- the AG decoder's candidate grid K and iterations
    """

    decoder: str = "beam"
    scorer: str | Scorer | None = None
    order: str = "left-to-right"
    beam_size: int = 5
    dedup: bool = True
    dedup_keep: str = "higher"
    pivot: int | str | tuple[int | str, ...] | None = None
    pivot_context: str = "inject"
    allow_special: bool = False
    sampling: str | None = None
    temperature: float = 1.0
    top_p: float = 0.9
    seed: int = 0
    joint_size: int = 50
    ag_iterations: int = 50

    def __post_init__(self):
        if self.decoder not in DECODERS:
            raise ConfigError(f"unknown decoder {self.decoder!r}; choose from {', '.join(DECODERS)}")
        if self.order not in ORDERS:
            raise ConfigError(f"unknown order {self.order!r}; choose from {', '.join(ORDERS)}")
        if self.dedup_keep not in DEDUP_KEEPS:
            raise ConfigError(f"dedup_keep must be one of {', '.join(DEDUP_KEEPS)}, not "
                              f"{self.dedup_keep!r}")
        if self.pivot_context not in PIVOT_CONTEXTS:
            raise ConfigError(f"pivot_context must be 'inject' or 'mask', not {self.pivot_context!r}")
        _check_int(self.beam_size, "beam size", 1, MAX_BEAM)
        for name in ("dedup", "allow_special"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be True or False, got {getattr(self, name)!r}")
        _check_int(self.joint_size, "joint size", 1)
        _check_int(self.ag_iterations, "AG iterations", 1)
        check_seed(self.seed)
        if not isinstance(self.scorer, Scorer) and self.scorer is not None \
                and self.scorer not in SCORERS:
            hint = " (AG is a decoder: decoder='ag', --decoder ag)" if self.scorer == "ag" else ""
            raise ConfigError(f"unknown scorer {self.scorer!r}; choose from "
                              f"{', '.join(SCORERS)}{hint}")
        if self.sampling is not None and self.sampling not in SAMPLERS:
            raise ConfigError(f"unknown sampling method {self.sampling!r}; choose from "
                              f"{', '.join(SAMPLERS)}")
        check_temperature(self.temperature, "sampling temperature")
        check_top_p(self.top_p)
        pivot = self.pivot
        if isinstance(pivot, Sequence) and not isinstance(pivot, str):
            pivot = tuple(pivot)
            if not pivot:
                raise ConfigError("a per-position pivot needs at least one token")
            object.__setattr__(self, "pivot", pivot[0] if len(pivot) == 1 else pivot)
        for p in (self.pivot if isinstance(self.pivot, tuple) else (self.pivot,)):
            if p is not None and (isinstance(p, bool) or not isinstance(p, (int, str))):
                raise ConfigError(f"a pivot is a token string or id, got {p!r}")
        if self.decoder == "ag":
            if self.pivot is not None or self.sampling is not None or self.scorer is not None:
                raise ConfigError("the ag decoder takes no scorer, pivot or sampling option")
        elif not isinstance(self.scorer, Scorer):
            self.make_scorer()          # the scorer's own check of the options it takes

    # ---- derived ------------------------------------------------------------------------------
    @property
    def scorer_name(self) -> str:
        """The scorer's name (None resolved: hcb, or standard when sampling; "ag" for AG)."""
        if self.decoder == "ag":
            return "ag"
        if isinstance(self.scorer, Scorer):
            return self.scorer.name
        return self.scorer or ("standard" if self.sampling else "hcb")

    def make_scorer(self) -> Scorer:
        """A fresh scorer (the given instance when one was passed)."""
        if self.decoder == "ag":
            raise ConfigError("the ag decoder has no scorer (it builds a pairwise joint)")
        return make_scorer(self.scorer if isinstance(self.scorer, Scorer) else self.scorer_name,
                           pivot=self.pivot, pivot_context=self.pivot_context)

    def make_selector(self) -> Selector:
        if self.sampling is not None:
            return GumbelSample(Proposal(self.sampling, self.temperature, self.top_p))
        return TopB(dedup=self.dedup and ORDER_REGISTRY[self.order].dedup, keep=self.dedup_keep)

    def replace(self, **changes) -> "DecodeConfig":
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict:
        """The options as JSON-able values (what ``--json`` output and bench records store)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["scorer"] = self.scorer_name
        if isinstance(out["pivot"], tuple):
            out["pivot"] = list(out["pivot"])
        return out

    @classmethod
    def from_options(cls, config: "DecodeConfig | None" = None, **options) -> "DecodeConfig":
        """``config`` with keyword ``options`` applied; the deprecated spelling ``sample=`` is read
        as ``sampling=`` (with a DeprecationWarning)."""
        if "sample" in options:
            warnings.warn("the option 'sample' is now 'sampling' (--sampling); 'sample' will be "
                          "removed in the next release", DeprecationWarning, stacklevel=3)
            value = options.pop("sample")
            if "sampling" in options and options["sampling"] != value:
                raise ConfigError("give 'sampling' only (not also the deprecated 'sample')")
            options["sampling"] = value
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(options) - names)
        if unknown:
            raise ConfigError(f"unknown decoding option(s) {', '.join(unknown)}; known: "
                              f"{', '.join(sorted(names))}")
        if options.get("scorer") == "ag":      # AG was a scorer name before it became a decoder
            options = {**options, "scorer": None, "decoder": "ag"}
        if config is not None and not isinstance(config, cls):
            raise ConfigError(f"config must be a DecodeConfig, got {type(config).__name__}")
        base = config if config is not None else cls()
        return dataclasses.replace(base, **options) if options else base
