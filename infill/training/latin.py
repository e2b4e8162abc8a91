"""Latin character-model family: the Greek family's code path (:class:`GreekFamily`) in the
Latin alphabet (:data:`infill.data.latin.LATIN`).

``infill train latin`` trains on the Latin literature (``latin`` under the data root, Perseus)
and, with ``--inscriptions DIR`` (EDH unpacked), the training split of the inscriptions, split by
inscription as for Greek (:func:`infill.data.inscriptions.iospe_split`, seed 0, 80/10/10). An
inscription's training text is its edition as the EpiDoc reader reads a Latin edition: editors'
supplements as text, an abbreviation as the stone cut it (the ``<ex>`` expansion dropped), every
other lost stretch as ``-``. It writes the same lexicon, phrase, shape and pair memories.
"""
from __future__ import annotations

from infill.data.latin import LATIN
from infill.training.greek import GreekFamily
from infill.training.loop import TrainConfig, TrainResult
from infill.training.loop import train as train_loop

__all__ = ["LatinFamily", "train"]


class LatinFamily(GreekFamily):
    """A Latin character model (:class:`GreekFamily` with the Latin alphabet)."""

    name = "latin"
    alphabet = LATIN


def train(corpus: str | tuple[str, ...], config: TrainConfig, **model_options) -> TrainResult:
    """Train a Latin character model on ``corpus`` (see :mod:`infill.training.loop`)."""
    return train_loop(LatinFamily(**model_options), corpus, config)
