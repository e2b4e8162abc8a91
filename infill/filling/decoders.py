"""Decoders as registered strategies: a name (``decoder=``, ``--decoder``) -> the function that
decodes a batch of token sequences, ``run(model, inputs, config, positions=...) ->
hypotheses``.

This sits above both kinds it registers -- the beam decoder of :mod:`infill.decoding` and the
Arnold-Gokhale decoder of :mod:`infill.joint` -- so each entry holds its function itself. The
options and help read the names alone (:data:`infill.names.DECODERS`, held equal to the keys
here). A new decoder is one entry here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from infill.decoding.engine import beam_search
from infill.errors import ConfigError
from infill.joint.decoder import decode_ag

__all__ = ["DECODERS", "Decoder", "beam", "run_decoder"]


def beam(model, inputs, config, positions=None, allowed=None, groups=None):
    """The beam decoder: the engine (:func:`~infill.decoding.engine.beam_search`) with the
    parts the decoding options make (``config.search()``); ``groups``: inputs that share one
    beam (the length variants of a text)."""
    return beam_search(model, inputs, config.search(), positions=positions, allowed=allowed,
                       groups=groups)


@dataclass(frozen=True)
class Decoder:
    """One strategy: ``run`` decodes a batch; ``positions`` the exact number of gap positions
    it fills (None: any); ``restricts``: whether it takes ``allowed=`` (per-position token
    masks); ``shares``: whether it takes ``groups=`` (inputs sharing one beam); ``help`` one
    line for front ends."""

    run: Callable
    positions: int | None = None
    restricts: bool = False
    shares: bool = False
    help: str = ""


DECODERS: dict[str, Decoder] = {
    "beam": Decoder(beam, restricts=True, shares=True,
                    help="beam search (any scorer and order, or a sampling baseline)"),
    "ag": Decoder(decode_ag, positions=2, restricts=True,
                  help="the Arnold-Gokhale pairwise joint (gaps of exactly two tokens)"),
}
"""Decoder names -> strategies; the first is the default."""


def run_decoder(model, inputs, positions, config, allowed=None, groups=None):
    """The configured decoder (``config.decoder``) on a batch of id sequences; ``allowed``:
    per input None or a [n_gaps, V] mask of the tokens each gap position may take (only the
    decoders that take ``allowed=``: beam); ``groups``: per input a group id, the inputs of a
    group sharing one beam (only a decoder that ``shares``; others ignore it)."""
    decoder = DECODERS[config.decoder]
    extra = {"groups": groups} if groups is not None and decoder.shares else {}
    if allowed is None or all(a is None for a in allowed):
        return decoder.run(model, inputs, config, positions=positions, **extra)
    if not decoder.restricts:
        raise ConfigError(f"the {config.decoder} decoder cannot restrict the tokens of a gap "
                          "position (e.g. a whole-word gap); use a decoder that can (beam)")
    return decoder.run(model, inputs, config, positions=positions, allowed=allowed, **extra)
