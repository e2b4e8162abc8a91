"""Decoders as registered strategies: a name (``decoder=``, ``--decoder``) -> the function that
decodes a batch of token sequences, ``run(model, inputs, config, gaps=...) -> hypotheses``.

Entries name their function by import path, so that :mod:`infill.config` can list the names
without importing torch. A new decoder is one entry here.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Decoder:
    """One strategy: ``run`` is ``"module:function"``; ``positions`` the exact number of gap
    positions it fills (None: any); ``restricts``: whether it takes ``allowed=`` (per-position
    token masks); ``help`` one line for front ends."""

    run: str
    positions: int | None = None
    restricts: bool = False
    help: str = ""

    def load(self):
        module, _, attr = self.run.partition(":")
        return getattr(importlib.import_module(module), attr)


DECODERS: dict[str, Decoder] = {
    "beam": Decoder("infill.decoding.decoders:beam", restricts=True,
                    help="beam search (any scorer and order, or a sampling baseline)"),
    "ag": Decoder("infill.joint.decoder:decode_ag", positions=2,
                  help="the Arnold-Gokhale pairwise joint (gaps of exactly two tokens)"),
}
"""Decoder names -> strategies; the first is the default."""


def beam(model, inputs, config, gaps=None, allowed=None):
    """The beam decoder: the engine (:func:`~infill.decoding.engine.beam_search`) with the
    parts the decoding options make (``config.search()``)."""
    from infill.decoding.engine import beam_search
    return beam_search(model, inputs, config.search(), gaps=gaps, allowed=allowed)


def run_decoder(model, inputs, gaps, config, allowed=None):
    """The configured decoder (``config.decoder``) on a batch of id sequences; ``allowed``:
    per input None or a [n_gaps, V] mask of the tokens each gap position may take (only the
    decoders that take ``allowed=``: beam)."""
    decoder = DECODERS[config.decoder]
    run = decoder.load()
    if allowed is None or all(a is None for a in allowed):
        return run(model, inputs, config, gaps=gaps)
    if not decoder.restricts:
        from infill.errors import ConfigError
        raise ConfigError(f"the {config.decoder} decoder cannot restrict the tokens of a gap "
                          "position (e.g. a whole-word gap); use a decoder that can (beam)")
    return run(model, inputs, config, gaps=gaps, allowed=allowed)
