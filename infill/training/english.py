"""English family: a WordPiece tokenizer + a small ``BertForMaskedLM`` trained on plain text.

Examples and tokenizer: :func:`infill.data.examples.english_examples` (a cased WordPiece
vocabulary trained on the corpus and saved as ``tokenizer/vocab.txt`` in the output directory,
reused on ``--resume``; one ``[CLS] line [SEP]`` example per distinct line, or, for models
recorded with ``unit="blocks"``, lines packed into blocks). Word-piece continuations (``##...``)
tell the loop's whole-word masking (``--whole-word``) which pieces make up one word. The final artifact is a Hugging Face directory (``save_pretrained`` of the
model in fp16 and a ``BertTokenizerFast``), which :func:`infill.load_model` reads.
"""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import torch

from infill.data.builtins import builtin_path
from infill.data.examples import english_examples
from infill.errors import ConfigError, ModelLoadError
from infill.lazy import LazyModule
from infill.models.hf import load_hf
from infill.models.memory import MEMORY_FILE, build_memory, token_classes
from infill.training.loop import Family, TrainConfig, TrainResult, transformer_parameters
from infill.training.loop import train as train_loop

transformers = LazyModule("transformers")                 # seconds to import: when it trains
hf_logging = LazyModule("transformers.utils.logging")

__all__ = ["EnglishFamily", "train"]

class EnglishFamily(Family):
    name = "english"

    def __init__(self, layers: int = 4, hidden: int = 192, heads: int = 4, ff: int | None = None,
                 max_length: int = 128, vocab_size: int = 3000, unit: str = "lines",
                 dropout: float = 0.1, init_from: str | None = None, **unknown):
        if unknown:
            raise ConfigError(f"the english family does not take option(s): {', '.join(unknown)}")
        if min(layers, hidden, heads) < 1:
            raise ConfigError("'layers', 'hidden' and 'heads' must be >= 1",
                              field=("layers", "hidden", "heads"))
        if hidden % heads:
            raise ConfigError(f"hidden size {hidden} is not divisible by {heads} heads")
        if max_length < 8:
            raise ConfigError(f"max length must be >= 8, got {max_length}")
        if vocab_size < 100:
            raise ConfigError(f"vocab size must be >= 100, got {vocab_size}")
        if not 0 <= dropout < 1:
            raise ConfigError(f"'dropout' must be in [0, 1), got {dropout}", field="dropout")
        if unit not in ("lines", "blocks"):
            raise ConfigError(f"english examples are 'lines' or 'blocks', not {unit!r}")
        self.options = {"layers": layers, "hidden": hidden, "heads": heads,
                        "ff": ff or 4 * hidden, "max_length": max_length,
                        "vocab_size": vocab_size, "unit": unit, "dropout": dropout}
        self.init_from = init_from
        self.tokenizer = None

    # -- data --------------------------------------------------------------------------------
    def load_examples(self, corpus, out: Path) -> list[list[int]]:
        if self.init_from:
            self._start = load_source(self.init_from)
            adopt_vocabulary(self._start.tokenizer, self.init_from, Path(out) / "tokenizer")
        built = english_examples(corpus, self.options["max_length"], self.options["vocab_size"],
                                 Path(out) / "tokenizer", self.options["unit"])
        t = self.tokenizer = built.tokenizer
        self.mask_id, self.pad_id = t.mask_token_id, t.pad_token_id
        self._special = torch.tensor(sorted(set(t.all_special_ids)))
        self._vocab = len(t)
        self._continuation = torch.zeros(self._vocab, dtype=torch.bool)
        for tok, i in t.get_vocab().items():
            self._continuation[i] = tok.startswith("##")
        return built.examples

    def maskable(self, ids: torch.Tensor) -> torch.Tensor:
        return ~torch.isin(ids, self._special)

    def continues_word(self, ids: torch.Tensor) -> torch.Tensor:
        return self._continuation[ids]

    def random_ids(self) -> torch.Tensor:
        keep = torch.ones(self._vocab, dtype=torch.bool)
        keep[self._special] = False
        return keep.nonzero().squeeze(1)

    # -- model -------------------------------------------------------------------------------
    def parameter_estimate(self) -> int:
        o = self.options
        return transformer_parameters(o["layers"], o["hidden"], o["ff"],
                                      2 * o["vocab_size"] + o["max_length"])

    def build_model(self):
        o = self.options
        config = transformers.BertConfig(
            vocab_size=self._vocab, hidden_size=o["hidden"], num_hidden_layers=o["layers"],
            num_attention_heads=o["heads"], intermediate_size=o["ff"],
            max_position_embeddings=o["max_length"], type_vocab_size=2, pad_token_id=self.pad_id,
            hidden_dropout_prob=o["dropout"], attention_probs_dropout_prob=o["dropout"])
        model = transformers.BertForMaskedLM(config)
        if self.init_from:
            init_weights(model, self._start.model.state_dict(), self.init_from)
            self._start = None
        return model

    def logits(self, model, input_ids, attention_mask, select):
        hidden = model.bert(input_ids=input_ids, attention_mask=attention_mask.long())[0]
        return model.cls(hidden[select])

    def save(self, model, out: Path) -> None:
        half = copy.deepcopy(model).to(torch.float16)
        hf_logging.disable_progress_bar()      # infill's own --no-progress decides about bars
        half.save_pretrained(str(out))
        self.tokenizer.model_max_length = self.options["max_length"]
        self.tokenizer.save_pretrained(str(out))

    def save_memory(self, out: Path, train: list[list[int]]) -> None:
        """The corpus memory of the training split's lines (:mod:`infill.models.memory`)."""
        write_memory(Path(out), self.tokenizer, train)

    def describe(self) -> dict:
        return {**self.options, **({"init_from": str(self.init_from)} if self.init_from else {})}


def load_source(source: str):
    """The model to start from (``init_from``): a local BERT directory or ``builtin:english``,
    read by infill's own loader (safetensors or weights-only, no remote code)."""
    path = Path(builtin_path(source) if source.startswith("builtin:") else source).expanduser()
    if not path.is_dir():
        raise ConfigError(f"'init_from' {source}: not a model directory", field="init_from")
    try:
        return load_hf(str(path), device="cpu")
    except ModelLoadError as e:
        raise ConfigError(f"'init_from' {source}: {e}", field="init_from") from None


def adopt_vocabulary(tokenizer, source: str, tokenizer_dir: Path) -> None:
    """Write the WordPiece vocabulary of ``tokenizer`` (the ``init_from`` model's) to
    ``tokenizer_dir``/vocab.txt, which the run then reuses; a vocabulary already there must be
    the same (weights are copied id for id)."""
    vocab = tokenizer.get_vocab()
    words = sorted(vocab, key=vocab.get)
    path = Path(tokenizer_dir) / "vocab.txt"
    if path.exists():
        if path.read_text(encoding="utf-8", errors="replace").splitlines() != words:
            raise ConfigError(f"'init_from' {source}: its vocabulary differs from {path}; start "
                              "in a new 'out' folder", field=("init_from", "out"))
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(words) + "\n", encoding="utf-8")


def init_weights(model, old: dict[str, torch.Tensor], source: str) -> None:
    """Copy the weights ``old`` of the ``init_from`` model into ``model``, which must have the
    same architecture (a longer position table starts with the old one's rows)."""
    state = model.state_dict()
    for name, value in state.items():
        src = old.get(name)
        if name.endswith("position_embeddings.weight") and src is not None \
                and src.shape[1:] == value.shape[1:] and src.shape[0] <= value.shape[0]:
            value[: src.shape[0]].copy_(src)
            continue
        if src is None or src.shape != value.shape:
            raise ConfigError(f"'init_from' {source}: its {name} does not fit this model "
                              f"({None if src is None else tuple(src.shape)}); give the same "
                              "'hidden'/'layers'/'heads'/'ff' and at least its 'max_length'",
                              field=("init_from", "hidden", "layers", "heads", "ff", "max_length"))
        value.copy_(src)


MEMORY_REST = 3
"""The corpus memory's keys skip up to this many hidden pieces of a word (words of up to 4
pieces; :mod:`infill.models.memory`)."""


def write_memory(out: Path, tokenizer, train: list[list[int]]) -> Path:
    """``out/memory.safetensors`` for a WordPiece model with ``tokenizer`` trained on ``train``."""
    special = frozenset(int(i) for i in tokenizer.all_special_ids)
    tokens = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    classes = token_classes(tokens, special, len(tokenizer), int(tokenizer.pad_token_id))
    memory = build_memory(train, classes, special, len(tokenizer), end_levels=(3,),
                          edges=(tokenizer.cls_token_id, tokenizer.sep_token_id),
                          continues=np.array([t.startswith("##") for t in tokens]),
                          rest=MEMORY_REST, mask_id=int(tokenizer.mask_token_id))
    memory.save(out / MEMORY_FILE)
    return out / MEMORY_FILE



def train(corpus: str | tuple[str, ...], config: TrainConfig, **model_options) -> TrainResult:
    """Train a WordPiece BERT on ``corpus`` (see :mod:`infill.training.loop`)."""
    return train_loop(EnglishFamily(**model_options), corpus, config)
