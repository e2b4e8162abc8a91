"""Greek character-model family: normalized Greek text -> :class:`CharTransformer`.

Examples: :func:`infill.data.examples.greek_examples` (normalized text cut into windows of at
most ``max_length - 1`` characters at spaces, each ``<`` + window). Damage (``-``) and masks are drawn by the
shared loop; ``-`` and specials are never labels.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import torch

from infill.errors import ConfigError
from infill.data.examples import greek_examples
from infill.data.greek import GREEK
from infill.models.char import CharConfig, CharTransformer, save_char
from infill.training.loop import Family, TrainConfig, TrainResult, transformer_parameters
from infill.training.loop import train as train_loop

__all__ = ["GreekFamily", "train"]


class GreekFamily(Family):
    name = "greek"
    default_damage_rate = 0.05          # Ithaca-style '-' damage

    def __init__(self, layers: int = 4, hidden: int = 256, heads: int = 4, ff: int | None = None,
                 max_length: int = 128, dropout: float = 0.1, conv_kernel: int = 0, **unknown):
        if unknown:
            raise ConfigError(f"the greek family does not take option(s): {', '.join(unknown)}")
        if min(layers, hidden, heads) < 1:
            raise ConfigError("--layers, --hidden and --heads must be >= 1")
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
        return greek_examples(corpus, self.config.max_length).examples

    def maskable(self, ids: torch.Tensor) -> torch.Tensor:
        return self._maskable[ids]

    def random_ids(self) -> torch.Tensor:
        return torch.tensor(GREEK.letter_ids + [GREEK.space_id])

    def parameter_estimate(self) -> int:
        c = self.config
        return transformer_parameters(c.n_layers, c.d_model, c.d_ff,
                                      c.n_inputs + c.max_length + c.n_outputs) \
            + c.conv_kernel * c.d_model * c.d_model

    def build_model(self) -> CharTransformer:
        return CharTransformer(self.config)

    def logits(self, model, input_ids, attention_mask, select):
        return model.head(model.hidden(input_ids, attention_mask)[select])

    def save(self, model, out: Path) -> None:
        save_char(model, out, GREEK, dtype=torch.float16)

    def describe(self) -> dict:
        return asdict(self.config)



def train(corpus: str, config: TrainConfig, **model_options) -> TrainResult:
    """Train a Greek character model on ``corpus`` (see :mod:`infill.training.loop`)."""
    return train_loop(GreekFamily(**model_options), corpus, config)
