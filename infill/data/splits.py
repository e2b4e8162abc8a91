"""The held-out examples of a trained model.

``infill train`` splits a family's examples once by a seeded permutation
(:func:`infill.data.parts.split_indices`) and records the split (``split.json``) and its options
(``train_info.json``) next to the model. :func:`heldout` rebuilds the examples from the corpus with
the model's recorded options (:func:`build_examples`) and returns the recorded split, so "test" is
exactly the data the model never saw. The parts and how a collection is split into them live in
:mod:`infill.data.parts` (imported from here too, as before).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from infill.data.examples import ExampleSet, english_examples, greek_examples, protein_examples
from infill.data.files import files_of, path_label, read_json
from infill.data.parts import PARTS, SPLITS, split_documents, split_indices
from infill.errors import ConfigError, InputError, ModelLoadError
from infill.lazy import LazyModule

# On first use: the options read SPLITS and PARTS off this module, without the alphabets, the
# EpiDoc reader or the file utilities (start-up).
builtin_models = LazyModule("infill.data.builtins")
corpora = LazyModule("infill.data.corpora")
greek = LazyModule("infill.data.greek")
latin = LazyModule("infill.data.latin")
inscriptions = LazyModule("infill.data.inscriptions")
shutil = LazyModule("shutil")
tempfile = LazyModule("tempfile")

__all__ = ["PARTS", "SPLITS", "Heldout", "build_examples", "heldout", "heldout_examples",
           "heldout_texts", "model_dir", "split_documents", "split_indices", "training_record"]


def model_dir(model: str | Path) -> Path | None:
    """The directory of a model name (``builtin:NAME``, a directory, or a checkpoint file's
    folder); None for names that are not on disk (hub ids)."""
    name = str(model)
    if name.startswith("builtin:"):
        p = builtin_models.builtin_path(name)
    else:
        p = Path(name).expanduser()
    if p.is_dir():
        return p
    if p.is_file():
        return p.parent
    return None


def _read_json(path: Path) -> dict:
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


def build_examples(family: str, corpus: str | Path, options: dict, workdir: Path) -> ExampleSet:
    """The examples of ``family`` (english, greek, protein) with its recorded model ``options``
    (``max_length``, and ``vocab_size`` for english); ``workdir`` holds (or receives) the English
    tokenizer under ``tokenizer/``."""
    missing = next((p for p in files_of(corpus) if not p.is_file()), None)
    if missing is not None:
        raise InputError(f"corpus file not found: {missing}")
    if family in ("greek", "latin"):
        alphabet = latin.LATIN if family == "latin" else greek.GREEK
        if options.get("inscriptions"):   # literary windows + packed inscriptions (issue 20)
            mix = inscriptions.mixed_examples(corpus, int(options["max_length"]),
                                              options["inscriptions"],
                                              int(options.get("inscription_copies", 4)), alphabet)
            return ExampleSet(mix.examples, alphabet.decode)
        return greek_examples(corpus, int(options.get("max_length", 128)), alphabet)
    if family == "english":
        return english_examples(corpus, int(options.get("max_length", 128)),
                                int(options.get("vocab_size", 3000)), Path(workdir) / "tokenizer",
                                str(options.get("unit", "blocks")))  # recorded since "lines"
    if family == "protein":
        return protein_examples(corpus, int(options.get("max_length", 130)))
    raise ConfigError(f"unknown family {family!r}; choose english, greek, latin or protein")


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
    info = training_record(model)
    fam = info.get("family") or family or (corpus if corpus in corpora.CORPORA else None)
    if not isinstance(fam, str) or fam not in corpora.CORPORA:
        raise ConfigError("a held-out split needs the model's training family (english, greek or "
                          "protein): give 'family', or a model trained with `infill train`",
                          field="family")
    options = dict(info.get("model") or {})
    if "max_length" not in options and max_length is not None:
        options["max_length"] = max_length
    if corpus is not None:
        path, _ = corpora.resolve_corpus(corpus, data)
    elif recorded_corpus(info) is not None:
        path = recorded_corpus(info)
    else:
        path, _ = corpora.resolve_corpus(fam, data)
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
