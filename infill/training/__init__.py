"""Training small masked LMs: the shared loop (:mod:`.loop`) and one module per family.

A run is asked for with a :class:`TrainRequest` (the loop's options) and :class:`ModelOptions`
(the family's model; :mod:`.request`). Each family module (``english``, ``greek``, ``protein``)
exposes ``train(corpus, config: TrainRequest, **model_options) -> TrainResult``; the examples they
train on come from :mod:`infill.data.examples`, held-out splits from :mod:`infill.data.splits`.
The loop (and torch) is imported on first use: the requests are read without it.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from infill.errors import ConfigError, InfillError
from infill.lazy import LazyModule
from infill.names import FAMILIES
from infill.training.request import ModelOptions, TrainConfig, TrainRequest

# On first use: `infill train --help` reads the request types only (names unlike the
# submodules', which the import system binds on this package).
_corpora = LazyModule("infill.data.corpora")
_training_loop = LazyModule("infill.training.loop")

__all__ = ["FAMILIES", "default_corpus", "family_class", "Family", "ModelOptions", "TrainConfig",
           "TrainRequest", "TrainResult", "run_training", "train", "train_request"]

_LOOP = ("Family", "TrainResult", "train")


def __getattr__(name: str):
    if name in _LOOP:
        return getattr(_training_loop, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def default_corpus(family: str, data: str | Path | None = None) -> str | tuple[str, ...] | None:
    """The family's named corpus under the data root (``--data-dir`` / ``$INFILL_DATA`` /
    ../shared/data): its path, or a tuple of paths read one after another; None when it is
    not there."""
    if family not in FAMILIES:
        return None
    try:
        return _corpora.resolve_corpus(family, data)[0]
    except InfillError:
        return None


def _module(family: str):
    if family not in FAMILIES:
        raise ConfigError(f"unknown family {family!r}; choose one of {', '.join(FAMILIES)}")
    return importlib.import_module(f"infill.training.{family}")


def family_class(family: str) -> type:
    """The :class:`Family` subclass of a family name."""
    return next(v for v in vars(_module(family)).values()
                if isinstance(v, type) and issubclass(v, _training_loop.Family)
                and v is not _training_loop.Family)


def train_request(family: str, **options) -> TrainRequest:
    """The :class:`TrainRequest` of a run of ``family``: ``lr`` and ``damage_rate`` given as
    None take the family's defaults (greek: 5% damage), every other option its field's."""
    defaults = family_class(family)
    if options.get("lr") is None:
        options["lr"] = defaults.default_lr
    if options.get("damage_rate") is None:
        options["damage_rate"] = defaults.default_damage_rate
    return TrainRequest(**options)


def run_training(family: str, corpus: str | tuple[str, ...], config: TrainRequest,
                 model: ModelOptions | None = None, **model_options):
    """Dispatch to ``infill.training.<family>.train`` with the options of ``model`` (a
    :class:`ModelOptions`) and ``model_options`` (its fields, checked by it, or options of the
    family's own); options left at None are dropped."""
    module = _module(family)
    shared = {k: model_options.pop(k) for k in list(model_options) if k in ModelOptions.fields()}
    opts = (model or ModelOptions()).replace(**shared).given()
    opts.update({k: v for k, v in model_options.items() if v is not None})
    return module.train(corpus, config, **opts)
