"""The methods grid of ``infill bench``: names -> :class:`~infill.config.DecodeConfig`.

Names (``--methods``, comma separated):
  hcb-l2r, hcb-b2w, standard-l2r, standard-b2w   beam search, scorer x order (METHODS §1)
  hcb-any, standard-any                           beam search in any order (Ithaca's search)
  scramble-l2r, scramble-b2w, swap-l2r, swap-b2w  ablations: context scramble, random token swap (§1.2)
  pure, temp0.25, temp0.5, temp0.75, nucleus0.9   sampling baselines at matched budget (§1.1);
                                                  any temperature ``tempT`` / nucleus ``nucleusP``
Groups: ``beam`` (the four beam searches), ``any-order``, ``sampling``, ``ablations``, ``all``.
Every method runs once per beam size; HCB methods run once per pivot (default: the model's).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from infill.config import SCORERS as SCORER_NAMES
from infill.config import DecodeConfig
from infill import names
from infill.errors import ConfigError

ORDER_CODES = {code: name for name, code in names.ORDER_CODES.items()}
"""Short order codes of method names -> the orders' names (each order class's ``code``)."""
SCORER_CODES = {**{name: name for name in SCORER_NAMES}, "std": "standard"}
"""Scorer spellings of method names -> :data:`infill.config.SCORERS`."""
GROUPS = {
    "beam": ["hcb-l2r", "hcb-b2w", "standard-l2r", "standard-b2w"],
    "sampling": ["pure", "temp0.25", "temp0.5", "temp0.75", "nucleus0.9"],
    "ablations": ["scramble-l2r", "scramble-b2w", "swap-l2r", "swap-b2w"],
    "any-order": ["hcb-any", "standard-any"],
}
GROUPS["all"] = GROUPS["beam"] + GROUPS["sampling"] + GROUPS["ablations"] + GROUPS["any-order"]


CELL_FIELDS = ("scorer", "order", "beam_size", "sampling", "temperature", "top_p", "pivot")
"""The :class:`DecodeConfig` fields a grid cell sets; the run sets the others (dedup, seed, ...)."""


@dataclass(frozen=True)
class Method:
    """One cell of the grid: a method's name and the decoding options it sets (``config``'s
    :data:`CELL_FIELDS`; e.g. ``config.beam_size``), and the label of its pivot for tables."""

    name: str                       # canonical method name (no beam / pivot)
    config: DecodeConfig
    pivot_label: str | None = None  # the pivot's token string, for tables

    @property
    def key(self) -> str:
        key = f"{self.name}/b{self.config.beam_size}"
        if self.config.pivot is not None:
            key += f"/pivot={self.pivot_label}"
        return key

    def decode_config(self, base: DecodeConfig) -> DecodeConfig:
        """``base`` (the run's shared options: dedup, allow_special, seed) with this cell's."""
        return base.replace(**{f: getattr(self.config, f) for f in CELL_FIELDS})


def _parse_one(name: str, beam_size: int) -> Method:
    def method(canonical: str, **options) -> Method:
        return Method(canonical, DecodeConfig(beam_size=beam_size, **options))

    if name == "pure":       # the sampling baselines fill left to right, at beam search's budget
        return method("pure", scorer="standard", sampling="pure", order="left-to-right")
    m = re.fullmatch(r"temp(?:erature)?([0-9.]+)", name)
    if m:
        t = float(m.group(1))
        if t <= 0:
            raise ConfigError(f"temperature must be > 0 in method {name!r}", field="methods")
        return method(f"temp{t:g}", scorer="standard", sampling="temperature", temperature=t,
                      order="left-to-right")
    m = re.fullmatch(r"nucleus([0-9.]*)", name)
    if m:
        p = float(m.group(1) or 0.9)
        if not 0 < p <= 1:
            raise ConfigError(f"nucleus p must be in (0, 1] in method {name!r}", field="methods")
        return method(f"nucleus{p:g}", scorer="standard", sampling="nucleus", top_p=p,
                      order="left-to-right")
    m = re.fullmatch(r"([a-z]+)-(" + "|".join(ORDER_CODES) + ")", name)
    if m and m.group(1) in SCORER_CODES:
        scorer = SCORER_CODES[m.group(1)]
        return method(f"{scorer}-{m.group(2)}", scorer=scorer, order=ORDER_CODES[m.group(2)])
    raise ConfigError(f"unknown method {name!r}; use {method_names()}", field="methods")


def method_names() -> str:
    """The method names and groups, as help and error texts list them."""
    beam = ", ".join(f"{s}-{{{'/'.join(ORDER_CODES)}}}" for s in SCORER_NAMES)
    return f"{beam}, pure, tempT, nucleusP, or a group ({', '.join(GROUPS)})"


def expand_names(spec: str | list[str]) -> list[str]:
    """Comma-separated names and groups -> canonical method names, in order, without repeats."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[str] = []
    for item in (s.strip() for s in items):
        if not item:
            continue
        for name in GROUPS.get(item, [item]):
            name = _parse_one(name, 1).name  # canonical spelling (std-l2r -> standard-l2r)
            if name not in out:
                out.append(name)
    if not out:
        raise ConfigError("no methods given", field="methods")
    return out


def build_grid(names: list[str], beam_sizes: list[int],
               pivots: list[tuple[int, str]] | None = None) -> list[Method]:
    """All (method, beam size, pivot) cells. ``pivots``: (id, label) pairs for the HCB methods."""
    if not beam_sizes or any(b < 1 for b in beam_sizes):
        raise ConfigError(f"beam sizes must be >= 1, got {beam_sizes}", field="beam_size")
    if pivots and not any(_parse_one(n, 1).config.scorer == "hcb" for n in names):
        raise ConfigError("'pivot' sets the pivot of the HCB methods (hcb-l2r, hcb-b2w, "
                          "hcb-any); none of the methods given is one", field="pivot")
    grid: list[Method] = []
    for beam_size in beam_sizes:
        for name in names:
            m = _parse_one(name, beam_size)
            if m.config.scorer == "hcb" and pivots:
                grid += [Method(m.name, m.config.replace(pivot=pid), pivot_label=label)
                         for pid, label in pivots]
            else:
                grid.append(m)
    keys = [m.key for m in grid]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise ConfigError(f"method given twice: {sorted(dup)[0]}", field="methods")
    return grid
