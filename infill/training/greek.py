"""Greek character-model family: normalized Greek text -> :class:`CharTransformer`.

Examples: the corpus is normalized line by line (:func:`infill.greek.normalize` without the
restoration symbols), joined with spaces, and cut into consecutive windows of at most
``max_length - 1`` characters, each cut at the last space that fits (a word longer than a window
is cut mid-word); each example is ``<`` + window. Damage (``-``) and masks are drawn by the
shared loop; ``-`` and specials are never labels.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import torch

from infill.errors import ConfigError, InputError
from infill.greek import GREEK, normalize
from infill.models.char import CharConfig, CharTransformer, save_char
from infill.training.common import Family, TrainConfig, TrainResult
from infill.training.common import train as train_loop

__all__ = ["GreekFamily", "train", "windows"]


def windows(text: str, size: int) -> list[str]:
    """Cut ``text`` into consecutive pieces of <= ``size`` chars, at spaces where possible."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text[i] == " ":
            i += 1
            continue
        j = min(i + size, n)
        if j < n and text[j] != " ":
            cut = text.rfind(" ", i, j)
            if cut > i:
                j = cut
        out.append(text[i:j].strip())
        i = j
    return [w for w in out if w]


class GreekFamily(Family):
    name = "greek"

    def __init__(self, layers: int = 4, hidden: int = 256, heads: int = 4, ff: int | None = None,
                 max_length: int = 128, dropout: float = 0.1, conv_kernel: int = 0, **unknown):
        if unknown:
            raise ConfigError(f"the greek family does not take option(s): {', '.join(unknown)}")
        if hidden % heads:
            raise ConfigError(f"hidden size {hidden} is not divisible by {heads} heads")
        if conv_kernel < 0 or (conv_kernel and conv_kernel % 2 == 0):
            raise ConfigError(f"--conv-kernel must be 0 (none) or odd, got {conv_kernel}")
        if max_length < 8:
            raise ConfigError(f"max length must be >= 8, got {max_length}")
        self.alphabet = GREEK
        self.config = CharConfig(d_model=hidden, n_layers=layers, n_heads=heads,
                                 d_ff=ff or 4 * hidden, max_length=max_length, dropout=dropout,
                                 conv_kernel=conv_kernel)
        self.mask_id = GREEK.mask_id
        self.pad_id = GREEK.pad_id
        self.damage_id = GREEK.missing_id
        self._maskable = torch.zeros(len(GREEK), dtype=torch.bool)
        self._maskable[[GREEK.index[c] for c in GREEK.text_chars]] = True

    def load_examples(self, corpus, out: Path) -> list[list[int]]:
        with open(corpus, encoding="utf-8") as f:
            text = " ".join(normalize(line, symbols=False) for line in f)
        pieces = windows(text, self.config.max_length - 1)
        if not pieces:
            raise InputError(f"no Greek text in corpus {corpus}")
        start = GREEK.start_id
        return [[start] + GREEK.encode(w) for w in pieces]

    def maskable(self, ids: torch.Tensor) -> torch.Tensor:
        return self._maskable[ids]

    def random_ids(self) -> torch.Tensor:
        return torch.tensor(GREEK.letter_ids + [GREEK.space_id])

    def build_model(self) -> CharTransformer:
        return CharTransformer(self.config)

    def logits(self, model, input_ids, attention_mask, select):
        return model.head(model.hidden(input_ids, attention_mask)[select])

    def save(self, model, out: Path) -> None:
        save_char(model, out, GREEK, dtype=torch.float16)

    def describe(self) -> dict:
        return asdict(self.config)

    @classmethod
    def from_description(cls, d: dict) -> "GreekFamily":
        return cls(layers=d["n_layers"], hidden=d["d_model"], heads=d["n_heads"], ff=d["d_ff"],
                   max_length=d["max_length"], dropout=d["dropout"],
                   conv_kernel=d.get("conv_kernel", 0))

    def decode(self, ids: list[int]) -> str:
        return GREEK.decode(ids)


def train(corpus: str, config: TrainConfig, **model_options) -> TrainResult:
    """Train a Greek character model on ``corpus`` (see :mod:`infill.training.common`)."""
    return train_loop(GreekFamily(**model_options), corpus, config)
