"""Greek character-model family: normalized Greek text -> :class:`CharTransformer`.

Examples: :func:`infill.data.examples.greek_examples` (normalized text cut into windows of at
most ``max_length - 1`` characters at spaces, each ``<`` + window). Damage (``-``) and masks are drawn by the
shared loop; ``-`` and specials are never labels.

Options for inscriptions (issue 20): ``words`` > 0 adds Ithaca's word stream over the most frequent
words of the training text; ``inscriptions`` (an EpiDoc folder, IOSPE) adds its training split
(:mod:`infill.data.inscriptions`) in ``inscription_copies`` differently packed copies beside the
literary windows, and validates on its validation split too; ``init_from`` starts from a trained
character model's weights where the shapes agree.

Beside the weights a run writes the lexicon of its training split's words (``lexicon.tsv``,
:mod:`infill.models.lexicon`) and the phrase memory of its training inscriptions
(``phrases.safetensors``, :mod:`infill.models.phrases`); with inscriptions, also the names of the
training editions and the literary corpus (``names.tsv``, :mod:`infill.models.proper_names`);
with several folders of inscriptions, one phrase and shape memory per folder behind a memory gate
(``gate.json``, ``sources/<folder>/``, :mod:`infill.models.gate`) instead of one pooled memory.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import torch

from infill.errors import ConfigError
from infill.data.examples import greek_examples
from infill.data.greek import GREEK
from infill.data.builtins import builtin_path
from infill.data.files import read_lines
from infill.data.splits import split_indices
from infill.models.char import CharConfig, CharTransformer, load_char, save_char
from infill.models.lexicon import LEXICON_BETA, LEXICON_FILE, build_lexicon, word_weights
from infill.models.phrases import (PAIRS_FILE, PHRASES_FILE, build_pairs, build_phrases, drop_rare,
                                  pair_counts)
from infill.models.proper_names import NAMES_FILE, literary_names, save_names
from infill.models.shapes import SHAPES_FILE, build_shapes
from infill.data.inscriptions import (inscription_folders, iospe_split, mixed_examples,
                                     training_names, training_texts)
from infill.models.gate import SOURCES_DIR, save_gate, source_names
from infill.models.own_text import OwnText
from infill.models.own_words import OWN_WORDS_BARE, OwnWords
from infill.training.inscriptions import word_list
from infill.training.loop import Family, TrainConfig, TrainResult, transformer_parameters
from infill.training.loop import train as train_loop

__all__ = ["GreekFamily", "MIN_SEEN", "train", "write_gated", "write_lexicon", "write_names",
           "write_phrases"]

MIN_SEEN = 2
"""The phrase and shape memories leave out the contexts seen only once (issue 48: the memories
of IOSPE + IAph went from 84 MB to 30 MB; on 60 validation supplements each, top-1 +3.3 points
on IOSPE and -1.7 on IAph against keeping them; benchmarks/results/greek_field.md)."""

PHRASE_CHARS = 2_000_000
"""Without inscriptions, the phrase memory holds at most this many characters of training
windows (about 40 keys a character)."""


class GreekFamily(Family):
    """A character model of one alphabet: Greek here, Latin in :mod:`infill.training.latin`
    (the same code path with ``name`` and ``alphabet`` its own)."""

    name = "greek"
    alphabet = GREEK
    default_damage_rate = 0.05          # Ithaca-style '-' damage

    def __init__(self, layers: int = 4, hidden: int = 256, heads: int = 4, ff: int | None = None,
                 max_length: int = 128, dropout: float = 0.1, conv_kernel: int = 0,
                 words: int = 0, inscriptions: str | None = None, inscription_copies: int = 4,
                 init_from: str | None = None, **unknown):
        if unknown:
            raise ConfigError(f"the {self.name} family does not take option(s): "
                              f"{', '.join(unknown)}")
        if min(layers, hidden, heads) < 1:
            raise ConfigError("'layers', 'hidden' and 'heads' must be >= 1",
                              field=("layers", "hidden", "heads"))
        if hidden % heads:
            raise ConfigError(f"hidden size {hidden} is not divisible by {heads} heads")
        if conv_kernel < 0 or (conv_kernel and conv_kernel % 2 == 0):
            raise ConfigError(f"'conv_kernel' must be 0 (none) or odd, got {conv_kernel}",
                              field="conv_kernel")
        if max_length < 8:
            raise ConfigError(f"max length must be >= 8, got {max_length}")
        if words < 0 or inscription_copies < 1:
            raise ConfigError("'words' must be >= 0 and 'inscription_copies' >= 1",
                              field=("words", "inscription_copies"))
        a = self.alphabet
        self.config = CharConfig(d_model=hidden, n_layers=layers, n_heads=heads,
                                 d_ff=ff or 4 * hidden, max_length=max_length, dropout=dropout,
                                 conv_kernel=conv_kernel, n_words=words, n_inputs=len(a),
                                 n_outputs=a.n_outputs, pad_id=a.pad_id)
        self.inscriptions, self.copies, self.init_from = inscriptions, inscription_copies, init_from
        self.words: list[str] = []
        self.mix = None
        self.mask_id = a.mask_id
        self.pad_id = a.pad_id
        self.damage_id = a.missing_id
        self._maskable = torch.zeros(len(a), dtype=torch.bool)
        self._maskable[[a.index[c] for c in a.text_chars]] = True

    def load_examples(self, corpus, out: Path) -> list[list[int]]:
        self.corpus = corpus
        if self.inscriptions is None:
            examples = greek_examples(corpus, self.config.max_length, self.alphabet).examples
            texts = [self.alphabet.decode(e) for e in examples]
        else:
            self.mix = mixed_examples(corpus, self.config.max_length, self.inscriptions,
                                      self.copies, self.alphabet)
            examples, texts = self.mix.examples, self.mix.texts
        if self.config.n_words:
            self.words = init_words(self.init_from, self.config.n_words) \
                or word_list(texts, self.config.n_words)
            self.config.n_words = len(self.words)
        return examples

    def split_examples(self, n, seed, val_fraction, test_fraction):
        """With inscriptions: the literary windows split as usual; every training-inscription
        window trains; the validation inscriptions' windows validate (first)."""
        if self.mix is None:
            return super().split_examples(n, seed, val_fraction, test_fraction)
        m = self.mix
        lit = split_indices(m.literary, seed, val_fraction, test_fraction)
        ins = list(range(m.literary, m.literary + m.train))
        val = list(range(m.literary + m.train, n))
        return {"validation": val + lit["validation"], "test": lit["test"],
                "train": lit["train"] + ins}

    def maskable(self, ids: torch.Tensor) -> torch.Tensor:
        return self._maskable[ids]

    def random_ids(self) -> torch.Tensor:
        return torch.tensor(self.alphabet.letter_ids + [self.alphabet.space_id])

    def parameter_estimate(self) -> int:
        c = self.config
        return transformer_parameters(c.n_layers, c.d_model, c.d_ff,
                                      c.n_inputs + c.max_length + c.n_outputs) \
            + c.conv_kernel * c.d_model * c.d_model + c.n_words * c.d_model

    def build_model(self) -> CharTransformer:
        model = CharTransformer(self.config, self.words or None, self.alphabet)
        if self.init_from:
            init_weights(model, self.init_from)
        return model

    def logits(self, model, input_ids, attention_mask, select):
        return model.head(model.hidden(input_ids, attention_mask)[select])

    def save(self, model, out: Path) -> None:
        save_char(model, out, self.alphabet, dtype=torch.float16,
                  extra={"own_text": OwnText(self.alphabet).settings(),
                         "own_words": OwnWords(self.alphabet, bare=OWN_WORDS_BARE).settings()})

    def save_memory(self, out: Path, train: list[list[int]]) -> None:
        """The lexicon of the training split's words (:mod:`infill.models.lexicon`) and the
        phrase memory (:mod:`infill.models.phrases`) of its inscriptions -- each training
        inscription once -- or, without inscriptions, of its first
        :data:`PHRASE_CHARS` characters of training windows."""
        a = self.alphabet
        write_lexicon(Path(out), train, alphabet=a)
        folders = inscription_folders(self.inscriptions) if self.mix is not None else []
        if len(folders) > 1:
            write_gated(Path(out), {f: training_texts(iospe_split(f)["train"]) for f in folders},
                        a)
        else:
            write_phrases(Path(out), self.memory_texts(train), a)
        if self.mix is not None:
            write_names(Path(out), iospe_split(self.inscriptions)["train"], self.corpus, a)

    def memory_texts(self, train: list[list[int]]) -> list[str]:
        """The texts the memories count: the training inscriptions (each once), or without
        them the first :data:`PHRASE_CHARS` characters of the training windows ``train``."""
        if self.mix is not None:
            return self.mix.texts[self.mix.literary:]
        a, texts, size = self.alphabet, [], 0
        for ex in train:
            if size >= PHRASE_CHARS:
                break
            texts.append(a.decode(i for i in ex if i < a.n_outputs))
            size += len(texts[-1])
        return texts

    def describe(self) -> dict:
        extra = {} if self.inscriptions is None else {
            "inscriptions": str(self.inscriptions), "inscription_copies": self.copies}
        return {**asdict(self.config), **extra,
                **({"init_from": str(self.init_from)} if self.init_from else {})}


def write_lexicon(out: Path, train: list[list[int]], beta: float = LEXICON_BETA,
                  alphabet=GREEK) -> Path:
    """``out/lexicon.tsv``: every word of the training examples ``train`` (ids) weighted by how
    often they hold it (an inscription packed in k copies counts k times, as the network saw it)."""
    weights = word_weights((alphabet.decode(ex) for ex in train), alphabet)
    build_lexicon(dict(weights), alphabet, beta).save(out / LEXICON_FILE, alphabet)
    return out / LEXICON_FILE


def write_phrases(out: Path, texts: list[str], alphabet=GREEK, min_seen: int = MIN_SEEN) -> Path:
    """``out/phrases.safetensors``: the phrase memory of ``texts`` (normalized), each counted
    once, at the levels, rest and β chosen on the IOSPE validation split, and its shape memory
    (``out/shapes.safetensors``, :mod:`infill.models.shapes`), both without the contexts seen
    fewer than ``min_seen`` times; and ``out/pairs.tsv``,
    the pairs of neighbouring words of ``texts`` (:class:`~infill.models.phrases.WordPairs`)."""
    a = alphabet
    drop_rare(build_phrases(texts, a), min_seen).save(out / PHRASES_FILE, a)
    drop_rare(build_shapes(texts, a), min_seen).save(out / SHAPES_FILE, a)
    build_pairs(pair_counts(texts, a), a, None).save(out / PAIRS_FILE, a)
    return out / PHRASES_FILE


def write_gated(out: Path, corpora: dict[Path, list[str]], alphabet=GREEK,
                min_seen: int = MIN_SEEN) -> Path:
    """The memories of several corpora (folder -> its training texts, normalized) behind a
    memory gate (:mod:`infill.models.gate`): each folder's phrase and shape memory in
    ``out/sources/<its name>/``, ``out/gate.json`` (equal priors, the chosen sharpness), and
    the word pairs of all their texts in ``out/pairs.tsv``."""
    a, names = alphabet, source_names(list(corpora))
    for name, texts in zip(names, corpora.values()):
        folder = out / SOURCES_DIR / name
        folder.mkdir(parents=True, exist_ok=True)
        drop_rare(build_phrases(texts, a), min_seen).save(folder / PHRASES_FILE, a)
        drop_rare(build_shapes(texts, a), min_seen).save(folder / SHAPES_FILE, a)
    every = [t for texts in corpora.values() for t in texts]
    build_pairs(pair_counts(every, a), a, None).save(out / PAIRS_FILE, a)
    return save_gate(out, names)


def write_names(out: Path, files: list[Path], corpus, alphabet=GREEK) -> Path:
    """``out/names.tsv``: the names the editions ``files`` (the training inscriptions) mark,
    source ``iospe``, and the capitalised words of the literary ``corpus``, source ``literary``
    (:mod:`infill.models.proper_names`), at the weights chosen on the IOSPE validation split."""
    entries = {(w, "iospe"): float(c) for w, c in training_names(files).items()}
    entries.update({(w, "literary"): float(c) for w, c in
                    literary_names(read_lines(corpus, "corpus")).items()})
    return save_names(out / NAMES_FILE, entries, alphabet)


def init_words(source: str | None, n: int) -> list[str] | None:
    """The word stream's words of the model ``init_from`` names, when it has ``n`` of them: a
    run started from its weights keeps its words, so that each word embedding keeps its word
    (a word list counted on a new corpus would give the rows to other words); else None."""
    if not source:
        return None
    path = builtin_path(source) if source.startswith("builtin:") else Path(source)
    meta = json.loads((Path(path) / "charmodel.json").read_text(encoding="utf-8"))
    words = meta.get("words") or []
    return list(words) if len(words) == n else None


def init_weights(model: CharTransformer, source: str) -> None:
    """Copy a trained character model's weights into ``model``, which must have the same
    architecture but for a longer context and a word stream: a longer position table starts as
    the old one repeated, the word stream (absent there) stays zero -- so the new model starts out
    computing exactly what the old one did on the old context length."""
    old = load_char(builtin_path(source) if source.startswith("builtin:") else source,
                    device="cpu").model.state_dict()
    state = model.state_dict()
    for name, src in old.items():
        value = state.get(name)
        if name == "position.weight" and value is not None and src.shape[1:] == value.shape[1:] \
                and src.shape[0] <= value.shape[0]:
            src = src.repeat(-(-value.shape[0] // src.shape[0]), 1)[: value.shape[0]]
        if value is None or src.shape != value.shape:
            raise ConfigError(f"'init_from' {source}: its {name} does not fit this model "
                              f"({tuple(src.shape)}); give the same 'hidden'/'layers'/'heads'/"
                              "'ff'/'conv_kernel' and at least its 'max_length'",
                              field=("init_from", "hidden", "layers", "heads", "ff", "conv_kernel",
                                     "max_length"))
        value.copy_(src)


def train(corpus: str | tuple[str, ...], config: TrainConfig, **model_options) -> TrainResult:
    """Train a Greek character model on ``corpus`` (see :mod:`infill.training.loop`)."""
    return train_loop(GreekFamily(**model_options), corpus, config)
