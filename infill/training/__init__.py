"""Training small masked LMs: the shared loop (:mod:`.loop`) and one module per family.

Each family module (``english``, ``greek``, ``protein``) exposes
``train(corpus, config: TrainConfig, **model_options) -> TrainResult``; the examples they train on
come from :mod:`infill.data.examples`, held-out splits from :mod:`infill.data.splits`.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from infill.data.corpora import CORPORA, resolve_corpus
from infill.errors import ConfigError, InfillError
from infill.training.loop import Family, TrainConfig, TrainResult, train

__all__ = ["FAMILIES", "default_corpus", "family_class", "Family", "TrainConfig", "TrainResult", "run_training",
           "train"]

FAMILIES = tuple(CORPORA)
"""The trainable families: one per named corpus."""


def default_corpus(family: str, data: str | Path | None = None) -> Path | None:
    """The family's named corpus under the data root (``--data-dir`` / ``$INFILL_DATA`` /
    ../shared/data), or None when it is not there."""
    if family not in CORPORA:
        return None
    try:
        return Path(resolve_corpus(family, data)[0])
    except InfillError:
        return None


def family_class(family: str) -> type[Family]:
    """The :class:`Family` subclass of a family name."""
    if family not in FAMILIES:
        raise ConfigError(f"unknown family {family!r}; choose one of {', '.join(FAMILIES)}")
    module = importlib.import_module(f"infill.training.{family}")
    return next(v for v in vars(module).values()
                if isinstance(v, type) and issubclass(v, Family) and v is not Family)


def run_training(family: str, corpus: str, config: TrainConfig, **model_options) -> TrainResult:
    """Dispatch to ``infill.training.<family>.train``; options left at None are dropped."""
    if family not in FAMILIES:
        raise ConfigError(f"unknown family {family!r}; choose one of {', '.join(FAMILIES)}")
    module = importlib.import_module(f"infill.training.{family}")
    opts = {k: v for k, v in model_options.items() if v is not None}
    return module.train(corpus, config, **opts)
