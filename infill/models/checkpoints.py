"""DeepMind's ``.pkl`` checkpoints (``--model X.pkl``): Ithaca's or Aeneas's, told apart by what
the file holds (:func:`infill.models.flax_checkpoint.kind_of`), read once with the restricted
unpickler, then loaded or described by its family's module."""
from __future__ import annotations

from pathlib import Path

from infill.lazy import LazyModule

aeneas = LazyModule("infill.models.aeneas")            # the networks (torch), on first use
ithaca = LazyModule("infill.models.ithaca")
flax_checkpoint = LazyModule("infill.models.flax_checkpoint")

__all__ = ["load_pickle", "describe_pickle"]


def _family(kind: str):
    if kind == "aeneas":
        return aeneas.load_aeneas_checkpoint, aeneas.describe_checkpoint
    return ithaca.load_ithaca_checkpoint, ithaca.describe_checkpoint


def load_pickle(path: str | Path, **options):
    """The :class:`~infill.models.base.MaskedLM` of an Ithaca or Aeneas pickle (``options``:
    device, dtype)."""
    kind, ckpt = flax_checkpoint.read_checkpoint(path)
    return _family(kind)[0](str(path), ckpt=ckpt, **options)


def describe_pickle(path: str | Path) -> dict:
    """What an Ithaca or Aeneas pickle holds (model, language, layers, parameters...), read
    without building its network."""
    kind, ckpt = flax_checkpoint.read_checkpoint(path)
    return _family(kind)[1](path, ckpt=ckpt)
