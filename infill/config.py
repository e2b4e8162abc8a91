"""One decoding configuration, validated once, that flows CLI -> API -> engine -> bench; and the
names of the registries it chooses from (spelled in :mod:`infill.names`).

    cfg = DecodeConfig(scorer="hcb", order="best-to-worst", beam_size=20)
    infill.fill(model, text, config=cfg)          # or infill.fill(model, text, beam_size=20, ...)

:class:`DecodeConfig` is a request (:mod:`infill.fields`): each field carries its rules and
help, checked by the one mechanism every request type shares.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from infill.errors import ConfigError
from infill.lazy import LazyModule
from infill.fields import (AG_MAX_ITERATIONS, MAX_SEED, Request, check_seed, option, seed_option,
                           temperature_option)
from infill.names import DECODERS, DEDUP_KEEPS, ORDERS, PIVOT_CONTEXTS, SAMPLERS, SCORERS

if TYPE_CHECKING:
    from infill.decoding.scorers import Scorer
    from infill.decoding.selectors import Selector

# The decoding machinery, on first use: the options (and the command line's help) need none of it
# (tests/cli/test_startup.py).
engine = LazyModule("infill.decoding.engine")
orders = LazyModule("infill.decoding.orders")
proposals = LazyModule("infill.decoding.proposals")
scorers = LazyModule("infill.decoding.scorers")
selectors = LazyModule("infill.decoding.selectors")

__all__ = ["DecodeConfig", "DECODERS", "ORDERS", "SAMPLERS", "SCORERS", "PIVOT_CONTEXTS",
           "MAX_SEED", "check_seed"]

MAX_BEAM = 100_000
AG_ONLY = ("joint_size", "ag_iterations")
"""The options of the ag decoder alone (refused by beam search)."""
BEAM_ONLY = ("order", "dedup", "dedup_keep", "pivot_context")
"""The options of beam search alone that the ag decoder would not read (besides the scorer, its
pivot and sampling, refused with one message)."""


def _is_scorer(value) -> bool:
    return isinstance(value, scorers.Scorer)


def _draws(sampling: str | None) -> str:
    """How a decode with ``sampling`` chooses its tokens, for an error."""
    return "searches a beam (no sampling)" if sampling is None else f'samples "{sampling}"'


def _pivot_parts(pivot) -> tuple:
    return pivot if isinstance(pivot, tuple) else (pivot,)


@dataclass(frozen=True)
class DecodeConfig(Request):
    """Every option of a decode. Invalid combinations raise :class:`ConfigError` at construction.

    decoder       -- "beam" (the engine) or "ag" (Arnold-Gokhale, two-token gaps)
    scorer        -- a name of :data:`SCORERS` or a :class:`Scorer` instance; None: not chosen
                     (a fill takes the model's recommendation; else "hcb", or "standard" for a
                     sampling baseline, METHODS §1.1: Score = Σ log q)
    order         -- "left-to-right" | "best-to-worst" | "any-order"; None: not chosen (the
                     model's recommendation, else "left-to-right")
    beam_size     -- hypotheses kept per step (rows, for sampling)
    dedup         -- best-to-worst, any-order: merge equal fills reached in different orders
    dedup_keep    -- which score a merged fill keeps: "higher" (METHODS §1) | "lower" (Ithaca's
                     published code, for parity)
    pivot         -- HCB pivot: None (the model's default), a token (string or id), or one per
                     gap position
    pivot_context -- "inject" (METHODS §1: pivots are context) | "mask" (the paper's published code)
    allow_special -- let special tokens be placed in a gap
    sampling      -- None (beam search) or a sampling baseline: "pure" | "temperature" | "nucleus"
    temperature   -- sampling temperature (``sampling="temperature"``) or of Aeneas's own search;
                     None: not chosen (1)
    top_p         -- nucleus mass (``sampling="nucleus"``); None: not chosen (0.9)
    seed          -- seeds every draw; an input's draws depend only on (seed, the input)
    unknown_max_length, length_penalty -- Aeneas's own search (any-order, standard, on an Aeneas
                     model): the characters all ``#`` lacunae restore at most, and the exponent
                     of its ranking key log-prob / (1 + decisions) ** length_penalty
    joint_size, ag_iterations -- the AG decoder's candidate grid K and iterations
    """

    RENAMED: ClassVar[dict[str, str]] = {"sample": "sampling"}
    KIND: ClassVar[str] = "decoding"

    decoder: str = option("beam", str, "beam: beam search (or a sampling baseline); ag: the "
                          "Arnold-Gokhale pairwise joint (gaps of exactly two tokens).",
                          choices=lambda: DECODERS)
    scorer: Any = option(None, str, "Update rule [default: the model's recommendation, else "
                         "hcb; standard with sampling].",
                         choices=lambda: SCORERS, optional=True, skip=_is_scorer)
    order: str | None = option(None, str, "Which gap position a hypothesis fills next "
                               "[default: the model's recommendation, else left-to-right].",
                               choices=lambda: ORDERS, optional=True)
    beam_size: int = option(5, int, "Beam size (rows when sampling); raised to top-k if "
                            "smaller.", low=1, high=MAX_BEAM, what="beam size")
    dedup: bool = option(True, bool, "best-to-worst, any-order: merge equal fills reached in "
                         "different orders.")
    dedup_keep: str = option("higher", str, "Which score a fill reached by several orders keeps: "
                             "higher (METHODS §1) or lower (Ithaca's published code, for parity).",
                             choices=lambda: DEDUP_KEEPS, what="dedup_keep")
    pivot: Any = option(None, str, "HCB pivot token (default: the model's mask / missing "
                        "symbol); one per gap position for a per-position pivot.",
                        optional=True, skip=lambda p: not isinstance(p, str))
    pivot_context: str = option("inject", str, "Pivots as context (METHODS §1) or [MASK] context (the "
                                "paper's published code).", choices=lambda: PIVOT_CONTEXTS,
                                what="pivot_context")
    allow_special: bool = option(False, bool, "Let special tokens be placed in gaps.")
    sampling: str | None = option(None, str, "A sampling baseline at the same budget instead of "
                                  "beam search.", choices=lambda: SAMPLERS, optional=True,
                                  what="sampling method")
    temperature: float | None = temperature_option(
        None, "Sampling temperature (sampling='temperature'; default 1); in Aeneas's own search, "
        "the temperature of its character distribution (default 1).", "sampling temperature")
    top_p: float | None = option(None, float, "Nucleus mass (sampling='nucleus'; default 0.9).",
                                 low=0, low_open=True, high=1, what="top-p", optional=True)
    unknown_max_length: int = option(20, int, "Aeneas's own search: the most characters all "
                                     "lacunae of unknown length (#) of a text restore together "
                                     "(Aeneas's unk_restoration_max_len).", low=1, high=20,
                                     what="unknown-length maximum")
    length_penalty: float = option(1.0, float, "Aeneas's own search: hypotheses are ranked by "
                                   "log-probability / (1 + decisions) ** this (Aeneas's "
                                   "a_penalty).", low=0, high=10, what="length penalty")
    seed: int = seed_option()
    joint_size: int = option(50, int, "AG: candidate tokens per position (K).", low=1,
                             what="joint size")
    ag_iterations: int = option(50, int, "AG: iterations.", low=1, high=AG_MAX_ITERATIONS,
                                what="AG iterations")

    def normalize(self) -> None:
        if self.scorer == "ag":
            raise ConfigError(f"unknown scorer 'ag'; choose from {', '.join(SCORERS)} (AG is a "
                              "decoder: decoder='ag')", field="scorer")
        pivot = self.pivot
        if isinstance(pivot, (list, tuple)):
            pivot = tuple(pivot)
            if not pivot:
                raise ConfigError("a per-position pivot needs at least one token", field="pivot")
            object.__setattr__(self, "pivot", pivot[0] if len(pivot) == 1 else pivot)

    def check(self) -> None:
        for p in _pivot_parts(self.pivot):
            if p is not None and (isinstance(p, bool) or not isinstance(p, (int, str))):
                raise ConfigError(f"a pivot is a token string or id, got {p!r}", field="pivot")
        if self.decoder == "ag":
            if self.pivot is not None or self.sampling is not None or self.scorer is not None:
                raise ConfigError("the ag decoder takes no scorer, pivot or sampling option",
                                  field="decoder")
        elif not _is_scorer(self.scorer):
            self.make_scorer()          # the scorer's own check of the options it takes
        self._check_decoder_options()
        if self.top_p is not None and self.sampling != "nucleus":
            raise ConfigError("'top_p' is the nucleus mass of sampling \"nucleus\"; this decode "
                              f"{_draws(self.sampling)}", field="top_p")
        if self.temperature is not None and self.sampling in ("pure", "nucleus"):
            raise ConfigError("'temperature' tempers sampling \"temperature\" (and Aeneas's own "
                              f"search); this decode {_draws(self.sampling)}",
                              field="temperature")

    def _check_decoder_options(self) -> None:
        """ConfigError for an option of the other decoder (honoured or refused, never dropped):
        :data:`BEAM_ONLY` given to the ag decoder, :data:`AG_ONLY` to beam search."""
        ag = self.decoder == "ag"
        owner, running = ("beam search", "the ag decoder") if ag else \
            ("the ag decoder (decoder='ag')", "beam search")
        other = self.changed(BEAM_ONLY if ag else AG_ONLY)
        if other:
            raise ConfigError(f"'{other[0]}' is an option of {owner}; this decode runs "
                              f"{running}", field=other[0])

    # ---- derived ------------------------------------------------------------------------------
    @property
    def scorer_name(self) -> str:
        """The scorer's name (None resolved: hcb, or standard when sampling; "ag" for AG)."""
        if self.decoder == "ag":
            return "ag"
        if _is_scorer(self.scorer):
            return self.scorer.name
        return self.scorer or ("standard" if self.sampling else "hcb")

    @property
    def order_name(self) -> str:
        """The order's name (None resolved: left-to-right)."""
        return self.order or "left-to-right"

    def make_scorer(self) -> Scorer:
        """A fresh scorer (the given instance when one was passed)."""
        if self.decoder == "ag":
            raise ConfigError("the ag decoder has no scorer (it builds a pairwise joint)",
                              field="decoder")
        return scorers.make_scorer(self.scorer if _is_scorer(self.scorer) else self.scorer_name,
                           pivot=self.pivot, pivot_context=self.pivot_context)

    def search(self):
        """The engine's parts for these options (:class:`~infill.decoding.engine.Search`): a
        fresh scorer (or the given instance), the order and the selector."""
        return engine.Search(self.make_scorer(), orders.ORDERS[self.order_name],
                             self.make_selector(), self.beam_size, self.seed, self.allow_special)

    def make_selector(self) -> Selector:
        if self.sampling is not None:
            given = {k: v for k, v in (("temperature", self.temperature), ("top_p", self.top_p))
                     if v is not None}
            return selectors.GumbelSample(proposals.Proposal(self.sampling, **given))
        return selectors.TopB(dedup=self.dedup and orders.ORDERS[self.order_name].dedup,
                              keep=self.dedup_keep)

    def to_json(self) -> dict:
        """The options as JSON-able values (what ``--json`` output and bench records store);
        ``DecodeConfig(**c.to_json()) == c`` (a :class:`Scorer` instance is written by name).
        None is "not chosen": a resolved config (:func:`infill.filling.defaults.resolve_defaults`)
        names what ran."""
        out = super().to_json()
        if _is_scorer(self.scorer):
            out["scorer"] = self.scorer.name
        return out

    @classmethod
    def from_options(cls, config: "DecodeConfig | None" = None, **options) -> "DecodeConfig":
        """``config`` with keyword ``options`` applied; an old spelling (:attr:`RENAMED`:
        ``sample=`` for ``sampling=``) is read with a DeprecationWarning."""
        if options.get("scorer") == "ag":      # AG was a scorer name before it became a decoder
            options = {**options, "scorer": None, "decoder": "ag"}
        return super().from_options(config, **options)
