"""Training small masked LMs: the shared loop (:mod:`.common`) and one module per family.

Each family module (``english``, ``greek``, ``protein``) exposes
``train(corpus, config: TrainConfig, **model_options) -> TrainResult``.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from infill.errors import ConfigError
from infill.training.common import Family, TrainConfig, TrainResult, split_indices, train

__all__ = ["DEFAULT_CORPORA", "FAMILIES", "default_corpus", "heldout_examples", "heldout_texts", "Family", "TrainConfig", "TrainResult", "run_training", "split_indices",
           "train"]

FAMILIES = ("english", "greek", "protein")

#: Default corpus of each family, relative to the repository root (the project's shared data).
DEFAULT_CORPORA = {
    "english": "../shared/data/english/tinyshakespeare.txt",
    "greek": "../shared/data/greek/perseus_grc.txt",
    "protein": "../shared/data/protein/hypf.fa",
}


def default_corpus(family: str) -> Path | None:
    """The family's default corpus path when it exists, else None."""
    rel = DEFAULT_CORPORA.get(family)
    if rel is None:
        return None
    path = (Path(__file__).resolve().parents[2] / rel).resolve()
    return path if path.is_file() else None


def run_training(family: str, corpus: str, config: TrainConfig, **model_options) -> TrainResult:
    """Dispatch to ``infill.training.<family>.train``; options left at None are dropped."""
    if family not in FAMILIES:
        raise ConfigError(f"unknown family {family!r}; choose one of {', '.join(FAMILIES)}")
    module = importlib.import_module(f"infill.training.{family}")
    opts = {k: v for k, v in model_options.items() if v is not None}
    return module.train(corpus, config, **opts)


def _family_from_info(info: dict):
    name = info["family"]
    module = importlib.import_module(f"infill.training.{name}")
    cls = next((v for v in vars(module).values() if isinstance(v, type)
                and issubclass(v, Family) and v is not Family and v.__module__ == module.__name__),
               None)
    if cls is None:
        raise ConfigError(f"infill.training.{name} defines no Family class")
    return cls.from_description(info.get("model", {}))


def heldout_examples(model_dir: str | Path, part: str = "test", corpus: str | Path | None = None
                     ) -> tuple[Family, list[list[int]]]:
    """(family, token-id examples) of a split part ("train" / "validation" / "test") of a model
    trained with :func:`train`: rebuilt from the corpus with the model's recorded options and split.

    ``corpus`` defaults to the one recorded in ``train_info.json``, else the family's default.
    """
    import json

    model_dir = Path(model_dir)
    try:
        info = json.loads((model_dir / "train_info.json").read_text())
        split = json.loads((model_dir / "split.json").read_text())
    except OSError as e:
        raise ConfigError(f"{model_dir} has no training record (train_info.json/split.json): {e}") \
            from None
    if part not in ("train", "validation", "test"):
        raise ConfigError(f"split part must be train, validation or test, not {part!r}")
    family = _family_from_info(info)
    path = Path(corpus) if corpus else Path(info["corpus"])
    if not path.is_file():
        path = default_corpus(info["family"]) or path
    examples = family.load_examples(path, model_dir)
    if len(examples) != split["n_examples"]:
        raise ConfigError(f"corpus {path} gives {len(examples)} examples, the model's split has "
                          f"{split['n_examples']}: not the training corpus")
    return family, [examples[i] for i in split[part]]


def heldout_texts(model_dir: str | Path, part: str = "test", corpus: str | Path | None = None
                  ) -> list[str]:
    """The split part of a trained model's corpus as text (see :func:`heldout_examples`)."""
    family, examples = heldout_examples(model_dir, part, corpus)
    return [family.decode(x) for x in examples]
