"""The one validation mechanism of infill's request types: fields that carry their own rules.

A request is a frozen dataclass whose fields carry their rules (:func:`option`: type, range,
choices, help). :class:`Request` checks every field against them at construction -- one
mechanism for every job -- and each type adds only the checks that relate several fields.
Old spellings of a field (``sample=`` for ``sampling=``) are read by :meth:`Request.from_options`
through one map per type (``RENAMED``), with a DeprecationWarning. Front ends build requests
from their own input: the CLI's options are made from the fields (``infill_cli.options``).

The request types live with what they ask for: :class:`infill.config.DecodeConfig` (decoding),
``infill.jobs.fill.FillRequest``, ``infill.jobs.joint.JointRequest``,
``infill.requests`` (sampling, rescoring, the server's limits), ``infill.bench.request`` and
``infill.training.request``. The mechanism is kept apart from them so that a command's options
import it and their own request only. This module imports neither torch nor transformers.
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from infill.errors import ConfigError, InputError
from infill.lazy import LazyModule

infill_text = LazyModule("infill.text")     # a value's check, not for --help

__all__ = ["Spec", "option", "spec_of", "described", "Request", "check_seed", "seed_option",
           "MAX_SEED", "MAX_TEMPERATURE", "MIN_TEMPERATURE", "MAX_BATCH_SIZE", "AG_MAX_ITERATIONS",
           "MAX_LENGTHS", "MAX_VARIANTS", "temperature_option"]

MAX_SEED = 2 ** 63 - 1
MAX_TEMPERATURE = 1e6
"""The largest temperature accepted (a tempered distribution is uniform long before)."""
MIN_TEMPERATURE = 1e-6
"""The smallest temperature accepted: log q / T must stay finite in float64 for every log q a
model gives (a smaller T overflows to -inf everywhere, and the draw is NaN; 1e-6 is greedy
already)."""
MAX_BATCH_SIZE = 65_536
"""The most inputs (or rows) one batch may hold."""
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
        if isinstance(value, str):
            _check_unicode(value, name)

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


def _check_unicode(value: str, name: str) -> None:
    """ConfigError naming the field when ``value`` holds bytes that were not UTF-8 (surrogate
    escapes of a command-line argument) or an unpaired surrogate."""
    try:
        infill_text.check_text(value, f"'{name}'")
    except InputError as e:
        raise ConfigError(str(e), field=name) from None


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

    def changed(self, names) -> list[str]:
        """Those of ``names`` whose value differs from its field's default, in that order: the
        options a caller set, for the rules that refuse an option where it would do nothing."""
        fields = self.fields()
        return [n for n in names if getattr(self, n) != fields[n].default]

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


def temperature_option(default: float | None, help: str, what: str) -> Any:
    """A temperature field: a number in [MIN_TEMPERATURE, MAX_TEMPERATURE] (a default of None:
    not chosen)."""
    return option(default, float, help, low=MIN_TEMPERATURE, high=MAX_TEMPERATURE, what=what,
                  optional=default is None)


def described(cls) -> Iterable[tuple[str, Spec]]:
    """(field, rules) of every described field of a request type (what the CLI is checked
    against)."""
    for f in dataclasses.fields(cls):
        if spec_of(f) is not None:
            yield f.name, spec_of(f)
