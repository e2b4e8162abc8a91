"""One frozen request type per job; their field names are infill's vocabulary.

A request is a frozen dataclass whose fields carry their own rules (:func:`option`: type, range,
choices, help). :class:`Request` checks every field against them at construction -- one
mechanism for every job -- and each type adds only the checks that relate several fields.
Old spellings of a field (``sample=`` for ``sampling=``) are read by :meth:`Request.from_options`
through one map per type (``RENAMED``), with a DeprecationWarning.

The decoding options (:class:`infill.config.DecodeConfig`, what ``fill`` / ``infill run`` take)
are a request of this kind too; they live beside the registries of scorers, orders and decoders.
Front ends build requests from their own input: the CLI's options are checked against the
fields (``infill_cli.options``). This module imports neither torch nor transformers.

    SampleRequest(energy="raw", chains=8, target_temperature=0.5)
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from infill.errors import ConfigError

__all__ = ["Spec", "option", "Request", "SampleRequest", "RescoreRequest", "ServeLimits",
           "ENERGIES", "SWEEP_ORDERS", "BLOCK_SCHEDULES", "INITS", "MAX_SEED", "MAX_TEMPERATURE",
           "AG_MAX_ITERATIONS", "check_seed", "seed_option"]

ENERGIES = ("local", "raw")
"""E_local (-pseudo-log-likelihood) and E_raw (-sum of unnormalized logits), SPEC §3."""
SWEEP_ORDERS = ("left-to-right", "random")
"""Orders in which a Metropolis-Hastings sweep visits the gap positions."""
BLOCK_SCHEDULES = ("anneal", "fixed")
"""anneal: the block size falls linearly from ``block`` to 1 over the epochs; fixed: constant."""
INITS = ("greedy", "random")
"""Named warm starts of the chains (token tuples are accepted too)."""
MAX_SEED = 2 ** 63 - 1
MAX_TEMPERATURE = 1e6
"""The largest temperature accepted (a tempered distribution is uniform long before)."""
AG_MAX_ITERATIONS = 20_000
"""Cap on the iterations of AG (Arnold-Gokhale) run "to convergence" (AG*), and the bound of
``ag_iterations``."""
MAX_LENGTHS = 16
"""The most lengths one gap may range over (hi - lo + 1; :mod:`infill.decoding.lengths`)."""
MAX_VARIANTS = 64
"""The most combinations of gap lengths one input may have (each is decoded)."""


# ---- the one validation mechanism ---------------------------------------------------------------
@dataclass(frozen=True)
class Spec:
    """The rules of one field. ``kind``: int, float, bool or str; ``low``/``high`` bound numbers
    (``low_open``/``high_open``: excluded); ``choices``: the allowed strings (or a function
    returning them); ``optional``: None is allowed; ``skip``: values of another type checked
    elsewhere (a Scorer instance, token tuples); ``what``: the name messages use; ``help``: the
    one-line help every front end shows; ``many``: the value is a tuple of values that each
    follow the rules, non-empty unless ``optional`` (a grid axis of ``infill bench``)."""

    kind: type
    help: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: Iterable[str] | Callable[[], Iterable[str]] | None = None
    optional: bool = False
    skip: Callable[[Any], bool] | None = None
    what: str | None = None
    many: bool = False

    def names(self) -> tuple[str, ...] | None:
        """The allowed strings (a registry given as a function is read now)."""
        names = self.choices() if callable(self.choices) else self.choices
        return None if names is None else tuple(names)

    def check(self, value, name: str) -> None:
        """ConfigError (naming the field in ``.field``) unless ``value`` follows the rules."""
        if (value is None and self.optional) or (self.skip is not None and self.skip(value)):
            return
        what = self.what or name.replace("_", " ")
        if self.many:
            if not isinstance(value, tuple) or not (value or self.optional):
                raise ConfigError(f"{name} must be a non-empty list of {what}s, got {value!r}",
                                  field=name)
            one = dataclasses.replace(self, many=False, optional=False)
            for v in value:
                one.check(v, name)
            return
        if self.kind is bool:
            if not isinstance(value, bool):
                raise ConfigError(f"{name} must be True or False, got {value!r}", field=name)
        elif self.kind in (int, float):
            self._check_number(value, name, what)
        elif self.choices is not None:
            names = self.names()
            if not isinstance(value, str) or value not in names:
                raise ConfigError(f"unknown {what} {value!r}; choose from {', '.join(names)}",
                                  field=name)
        elif not isinstance(value, self.kind):
            raise ConfigError(f"{what} must be a {self.kind.__name__}, got {value!r}", field=name)

    def _check_number(self, value, name: str, what: str) -> None:
        integer = self.kind is int
        if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)) \
                or (not integer and not math.isfinite(value)):
            noun = "an integer" if integer else "a finite number"
            raise ConfigError(f"{what} must be {noun}{self.bounds()}, got {value!r}", field=name)
        below = self.low is not None and (value <= self.low if self.low_open else value < self.low)
        above = self.high is not None and (value >= self.high if self.high_open
                                           else value > self.high)
        if below or above:
            noun = "an integer" if integer else "a number"
            raise ConfigError(f"{what} must be {noun}{self.bounds()}, got {value!r}", field=name)

    def bounds(self) -> str:
        """`` of at least 1``, `` in (0, 1]``, `` > 0``, ... (empty when unbounded)."""
        if self.low is not None and self.high is not None:
            return (f" in {'(' if self.low_open else '['}{_num(self.low)}, {_num(self.high)}"
                    f"{')' if self.high_open else ']'}")
        if self.low is not None:
            return f" > {_num(self.low)}" if self.low_open else f" of at least {_num(self.low)}"
        if self.high is not None:
            return f" < {_num(self.high)}" if self.high_open else f" of at most {_num(self.high)}"
        return ""


def _num(x: float) -> str:
    if x == MAX_SEED:
        return "2**63 - 1"
    return f"{x:g}" if isinstance(x, float) else str(x)


def option(default, kind: type, help: str = "", **rules) -> Any:
    """A request field: its ``default`` and its :class:`Spec` (``kind``, ``help``, ``rules``)."""
    return dataclasses.field(default=default, metadata={"spec": Spec(kind, help, **rules)})


def spec_of(field: dataclasses.Field) -> Spec | None:
    return field.metadata.get("spec")


class Request:
    """Base of every request type (a frozen dataclass): field rules checked at construction,
    ``check()`` for rules across fields, ``from_options`` with the old spellings, ``to_json``."""

    RENAMED: ClassVar[dict[str, str]] = {}
    """Old keyword -> its field: still read, with a DeprecationWarning."""
    KIND: ClassVar[str] = "request"

    def __post_init__(self):
        self.normalize()
        for f in dataclasses.fields(self):
            spec = spec_of(f)
            if spec is not None:
                spec.check(getattr(self, f.name), f.name)
        self.check()

    def normalize(self) -> None:
        """Bring equivalent spellings of a value to one form before the checks (override)."""

    def check(self) -> None:
        """Rules that relate several fields (override)."""

    @classmethod
    def fields(cls) -> dict[str, dataclasses.Field]:
        return {f.name: f for f in dataclasses.fields(cls)}

    @classmethod
    def rules(cls, name: str) -> Spec:
        """The rules of field ``name``."""
        return spec_of(cls.fields()[name])

    @classmethod
    def from_options(cls, base=None, **options):
        """``base`` (default: the defaults) with keyword ``options`` applied; an old spelling
        (``RENAMED``) is read as its field with a DeprecationWarning; unknown keywords raise."""
        for old, new in cls.RENAMED.items():
            if old not in options:
                continue
            warnings.warn(f"the option '{old}' is now '{new}'; '{old}' will be removed in the "
                          "next release", DeprecationWarning, stacklevel=3)
            value = options.pop(old)
            if new in options and options[new] not in (value, cls.fields()[new].default):
                raise ConfigError(f"give '{new}' only (not also the deprecated '{old}')",
                                  field=new)
            options[new] = value
        unknown = sorted(set(options) - set(cls.fields()))
        if unknown:
            raise ConfigError(f"unknown {cls.KIND} option(s) {', '.join(unknown)}; known: "
                              f"{', '.join(sorted(cls.fields()))}", field=unknown[0])
        if base is not None and not isinstance(base, cls):
            raise ConfigError(f"config must be a {cls.__name__}, got {type(base).__name__}")
        if base is None:                # the defaults, or (required fields) the options
            return cls(**options)
        return dataclasses.replace(base, **options) if options else base

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict:
        """The fields as JSON-able values (tuples become lists)."""
        return {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _jsonable(value):
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value


def check_seed(seed) -> int:
    """Seeds are integers in [0, 2**63 - 1] (what torch's generators take)."""
    SEED.check(seed, "seed")
    return seed


SEED = Spec(int, "Seed of every random draw (results are deterministic under it).", low=0,
            high=MAX_SEED)


def seed_option(help: str = SEED.help) -> Any:
    """The ``seed`` field every seeded request has."""
    return option(0, int, help, low=0, high=MAX_SEED)


# ---- Metropolis-Hastings (sample) and rescoring -------------------------------------------------
def _temperature(default: float, help: str, what: str) -> Any:
    return option(default, float, help, low=0, low_open=True, what=what)


def _is_token_states(value) -> bool:
    return not isinstance(value, str)


@dataclass(frozen=True)
class SampleRequest(Request):
    """Every option of Metropolis-Hastings (:func:`infill.mcmc.mh`), validated at construction.

    energy               -- "local" (E_local) or "raw" (E_raw, needs the model's logits)
    proposal_temperature -- temper the masked-conditional proposal (its exact r enters the ratio)
    top_p                -- nucleus-truncate the proposal (None: no truncation)
    block, block_schedule -- positions proposed together; "anneal" lowers the block size
                            linearly to 1 over the epochs, "fixed" keeps it
    target_temperature   -- tau at epoch 0; ``anneal`` lowers it by that much per epoch, down to
                            ``min_temperature``
    epochs, chains       -- sweeps over the gap positions; chains run as one batch
    sweep_order          -- "left-to-right" or "random" visiting order within a sweep (was
                            ``order``, which names the decoding order of a fill)
    burn_in              -- epochs not counted in the visit counts
    init                 -- warm start: "greedy", "random", a token tuple, or a list of tuples /
                            hypotheses with ``.tokens`` (cycled over the chains)
    gibbs                -- the degenerate Gibbs baseline: always accept
    """

    RENAMED: ClassVar[dict[str, str]] = {"temperature": "target_temperature",
                                         "order": "sweep_order"}
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
                                 "over the epochs; fixed: it stays.", choices=BLOCK_SCHEDULES)
    target_temperature: float = _temperature(1.0, "Temperature tau of the target exp(-E/tau) at "
                                             "epoch 0.", "the target temperature")
    anneal: float = option(0.0, float, "Lower the target temperature by this much per epoch "
                           "(e.g. 0.02).", low=0)
    min_temperature: float = _temperature(0.01, "Floor of the annealed target temperature.",
                                          "the minimum target temperature")
    epochs: int = option(10, int, "Sweeps over the gap positions.", low=1)
    chains: int = option(4, int, "Chains run in parallel (one batch).", low=1)
    sweep_order: str = option("left-to-right", str, "Order in which a sweep visits the gap "
                              "positions.", choices=SWEEP_ORDERS)
    burn_in: int = option(0, int, "Epochs not counted in the visit counts.", low=0,
                          what="burn_in")
    init: Any = option("greedy", str, "Warm start of every chain.", choices=INITS,
                       skip=_is_token_states)
    gibbs: bool = option(False, bool, "Degenerate Gibbs baseline: always accept.")
    allow_special: bool = option(False, bool, "Let special tokens be placed in gaps.")
    seed: int = seed_option()
    max_rows: int = option(256, int, "Rows per forward pass when scoring energies.", low=1)

    def check(self) -> None:
        if not self.burn_in < self.epochs:
            raise ConfigError("burn_in must be in [0, epochs)", field="burn_in")


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


def described(cls) -> Iterable[tuple[str, Spec]]:
    """(field, rules) of every described field of a request type (what the CLI is checked
    against)."""
    for f in dataclasses.fields(cls):
        if spec_of(f) is not None:
            yield f.name, spec_of(f)
