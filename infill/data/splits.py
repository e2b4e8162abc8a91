"""Train / validation / test splits, and the held-out examples of a trained model.

``infill train`` splits a family's examples once by a seeded permutation (:func:`split_indices`)
and records the split (``split.json``) and its options (``train_info.json``) next to the model.
:func:`heldout` rebuilds the examples from the corpus with the model's recorded options and returns
the recorded split, so "test" is exactly the data the model never saw.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from infill.data.files import files_of, path_label
from infill.errors import ConfigError, InputError, ModelLoadError

__all__ = ["PARTS", "SPLITS", "Heldout", "heldout", "heldout_examples", "heldout_texts",
           "model_dir",
           "split_documents", "split_indices", "training_record"]

PARTS = ("train", "validation", "test")
SPLITS = ("all", *PARTS)
"""What a held-out option takes: one part of the split, or all the data (a file's, unsplit)."""
_SPLIT_STREAM = 7_919  # salt of the split permutation's random stream (fixed: splits are records)


def split_indices(n: int, seed: int = 0, val_fraction: float = 0.05,
                  test_fraction: float = 0.05) -> dict[str, list[int]]:
    """Deterministic train/validation/test split of ``n`` examples (seeded permutation)."""
    import numpy as np     # here: the command line's options read PARTS without numpy
    perm = np.random.default_rng([seed, _SPLIT_STREAM]).permutation(n).tolist()
    n_val = max(1, int(round(n * val_fraction)))
    n_test = int(round(n * test_fraction))
    if n - n_val - n_test < 1:
        raise InputError(f"corpus too small: {n} examples cannot be split into train/validation/test")
    return {"validation": sorted(perm[:n_val]), "test": sorted(perm[n_val:n_val + n_test]),
            "train": sorted(perm[n_val + n_test:])}


def split_documents(names: "list[str]", seed: int = 0, val_fraction: float = 0.1,
                    test_fraction: float = 0.1) -> dict[str, list[str]]:
    """Split whole documents (e.g. IOSPE inscriptions, by file name) into train/validation/test:
    :func:`split_indices` over the sorted, de-duplicated names, so a split depends only on the set
    of names and the seed. Every example drawn from one document stays in that document's part.
    IOSPE uses the defaults (seed 0, 80/10/10) for training, tuning and the README's test table."""
    ordered = sorted(set(names))
    parts = split_indices(len(ordered), seed, val_fraction, test_fraction)
    return {part: [ordered[i] for i in idx] for part, idx in parts.items()}


def model_dir(model: str | Path) -> Path | None:
    """The directory of a model name (``builtin:NAME``, a directory, or a checkpoint file's
    folder); None for names that are not on disk (hub ids)."""
    name = str(model)
    if name.startswith("builtin:"):
        from infill.data.builtins import builtin_path
        p = builtin_path(name)
    else:
        p = Path(name).expanduser()
    if p.is_dir():
        return p
    if p.is_file():
        return p.parent
    return None


def _read_json(path: Path) -> dict:
    from infill.data.files import read_json
    data = read_json(path, "training record", ModelLoadError)
    if not isinstance(data, dict):
        raise ModelLoadError(f"{path} is not a JSON object")
    return data


def training_record(model: str | Path) -> dict:
    """``train_info.json`` of a model trained with ``infill train`` (empty when absent), with
    its ``split.json`` under ``"split"`` and the directory under ``"dir"``."""
    d = model_dir(model)
    if d is None:
        return {}
    info = _read_json(d / "train_info.json") if (d / "train_info.json").exists() else {}
    if (d / "split.json").exists():
        info["split"] = _read_json(d / "split.json")
    info["dir"] = str(d)
    return info


@dataclass
class Heldout:
    """A family's examples of a corpus and the split of them."""

    family: str
    corpus: str
    examples: list[list[int]]
    parts: dict[str, list[int]]
    decode: Callable[[list[int]], str]
    recorded: bool = True
    options: dict = field(default_factory=dict)

    def part(self, name: str) -> list[int]:
        if name not in self.parts:
            raise ConfigError(f"unknown split {name!r}; choose from all, {', '.join(self.parts)}")
        return list(self.parts[name])


def recorded_corpus(info: dict) -> str | tuple[str, ...] | None:
    """The corpus a training record names (a path, or a list of paths read one after another),
    when all its files are on this machine."""
    rec = info.get("corpus")
    paths = rec if isinstance(rec, list) else [rec]
    if not paths or not all(isinstance(p, str) and p for p in paths):
        return None
    path = tuple(paths) if isinstance(rec, list) else rec
    return path if all(p.is_file() for p in files_of(path)) else None


def heldout(model: str | Path, corpus: str | None = None, family: str | None = None,
            max_length: int | None = None, data: str | Path | None = None) -> Heldout:
    """The examples of the corpus a model was trained on, and their recorded split.

    ``corpus``: a corpus name or file (default: the one recorded at training, else the family's
    named corpus); ``family``: for models without a training record (then the split is recomputed
    with the training defaults, seed 0); ``max_length``: their examples' length (the model's);
    ``data``: the data root for corpus names (see :mod:`infill.data.corpora`).
    """
    import shutil               # here, and the corpus readers: the options read PARTS alone
    import tempfile

    from infill.data.corpora import CORPORA, resolve_corpus
    from infill.data.examples import build_examples

    info = training_record(model)
    fam = info.get("family") or family or (corpus if corpus in CORPORA else None)
    if not isinstance(fam, str) or fam not in CORPORA:
        raise ConfigError("a held-out split needs the model's training family (english, greek or "
                          "protein): give 'family', or a model trained with `infill train`",
                          field="family")
    options = dict(info.get("model") or {})
    if "max_length" not in options and max_length is not None:
        options["max_length"] = max_length
    if corpus is not None:
        path, _ = resolve_corpus(corpus, data)
    elif recorded_corpus(info) is not None:
        path = recorded_corpus(info)
    else:
        path, _ = resolve_corpus(fam, data)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(info.get("dir", "."))
        vocab = next((v for v in (d / "tokenizer" / "vocab.txt", d / "vocab.txt") if v.exists()), None)
        if vocab is not None:   # the english family reuses the model's WordPiece vocabulary
            (Path(tmp) / "tokenizer").mkdir()
            shutil.copy(vocab, Path(tmp) / "tokenizer" / "vocab.txt")
        built = build_examples(fam, path, options, Path(tmp))
    recorded = info.get("split")
    if recorded:
        if recorded.get("n_examples") != len(built.examples):
            raise ConfigError(f"corpus {path_label(path)} gives {len(built.examples)} examples, "
                              f"the model's split has {recorded.get('n_examples')}: not the "
                              "training corpus")
        parts = {k: list(recorded[k]) for k in PARTS if k in recorded}
    else:
        cfg = info.get("config", {})
        parts = split_indices(len(built.examples), cfg.get("split_seed", 0),
                              cfg.get("val_fraction", 0.05), cfg.get("test_fraction", 0.05))
    return Heldout(fam, path_label(path), built.examples, parts, built.decode, bool(recorded),
                   options)


def heldout_examples(model: str | Path, part: str = "test", corpus: str | None = None
                     ) -> tuple[str, list[list[int]]]:
    """(family name, token-id examples) of one part of a trained model's split."""
    if part not in PARTS:
        raise ConfigError(f"split part must be train, validation or test, not {part!r}")
    h = heldout(model, corpus)
    return h.family, [h.examples[i] for i in h.part(part)]


def heldout_texts(model: str | Path, part: str = "test", corpus: str | None = None) -> list[str]:
    """One part of a trained model's split, as text."""
    if part not in PARTS:
        raise ConfigError(f"split part must be train, validation or test, not {part!r}")
    h = heldout(model, corpus)
    return [h.decode(h.examples[i]) for i in h.part(part)]
