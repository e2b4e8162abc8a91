"""Protein family for ``infill train protein``: an ESM2 (fair-esm ``ESM2`` class, ESM-1b alphabet)
trained on a FASTA file and saved as a fair-esm checkpoint (``esm2_protein.pt``).

Examples are ``<cls> sequence <eos>`` with the residues in upper case; letters outside the
alphabet's residue codes become ``X``; sequences longer than ``max_length - 2`` residues are
cropped to their first ``max_length - 2``. Only residue positions are masked; a "random token"
replacement draws one of the 20 standard amino acids.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

from infill.data.examples import protein_examples
from infill.errors import ConfigError
from infill.lazy import LazyModule
from infill.data.residues import NONSTANDARD_AA, STANDARD_AA
from infill.models.esm import esm2_hidden, save_fair_esm
from infill.training.loop import Family, TrainConfig, TrainResult, transformer_parameters
from infill.training.loop import train as train_loop

esm = LazyModule("esm")                          # fair-esm, on first use

ARTIFACT = "esm2_protein.pt"
"""File name of the trained model in the output directory (``infill.load_model`` reads it)."""


class ProteinFamily(Family):
    """ESM2 architecture on single protein sequences (see the module docstring)."""

    name = "protein"

    def __init__(self, layers: int = 4, hidden: int = 128, heads: int = 8, ff: int | None = None,
                 max_length: int = 130, token_dropout: bool = True, **unsupported):
        if unsupported:
            raise ConfigError(f"option(s) {', '.join(repr(k) for k in sorted(unsupported))} "
                              "do not apply to the protein family (fair-esm's ESM2 is built "
                              "from its shape alone, with the ESM-1b alphabet)",
                              field=tuple(sorted(unsupported)))
        if ff is not None and ff != 4 * hidden:
            raise ConfigError(f"ESM2's feed-forward size is 4 x hidden ({4 * hidden}); 'ff' {ff} "
                              "is not supported", field="ff")
        if hidden % heads or (hidden // heads) % 2:
            raise ConfigError(f"'hidden' {hidden} must be a multiple of 2 x 'heads' {heads} "
                              "(rotary embeddings need an even head size)",
                              field=("hidden", "heads"))
        if min(layers, hidden, heads) < 1 or max_length < 3:
            raise ConfigError("need 'layers' >= 1 and 'max_length' >= 3",
                              field=("layers", "max_length"))
        self.alphabet = esm.data.Alphabet.from_architecture("ESM-1b")
        self.layers, self.hidden, self.heads = layers, hidden, heads
        self.max_length, self.token_dropout = max_length, token_dropout
        self.mask_id = self.alphabet.mask_idx
        self.pad_id = self.alphabet.padding_idx
        self.damage_id = None
        tok = self.alphabet.tok_to_idx
        self._residue_ids = torch.tensor(sorted(tok[a] for a in STANDARD_AA + NONSTANDARD_AA))
        self._standard_ids = torch.tensor(sorted(tok[a] for a in STANDARD_AA))
        self.n_sequences = self.n_cropped = self.n_replaced = 0

    def load_examples(self, corpus, out: Path) -> list[list[int]]:
        built = protein_examples(corpus, self.max_length)
        self.n_sequences = built.stats["sequences"]
        self.n_cropped, self.n_replaced = built.stats["cropped"], built.stats["replaced"]
        return built.examples

    def maskable(self, ids: torch.Tensor) -> torch.Tensor:
        return torch.isin(ids, self._residue_ids)

    def random_ids(self) -> torch.Tensor:
        return self._standard_ids.clone()

    def parameter_estimate(self) -> int:
        return transformer_parameters(self.layers, self.hidden, 4 * self.hidden, 2 * 33)

    def build_model(self) -> nn.Module:
        return esm.ESM2(num_layers=self.layers, embed_dim=self.hidden, attention_heads=self.heads,
                        alphabet=self.alphabet, token_dropout=self.token_dropout)

    def logits(self, model, input_ids, attention_mask, select) -> torch.Tensor:
        hidden = esm2_hidden(model, input_ids.masked_fill(~attention_mask.bool(), self.pad_id))
        return model.lm_head(hidden[select])

    def save(self, model, out: Path) -> None:
        save_fair_esm(model, self.alphabet, Path(out) / ARTIFACT, half=True,
                      metadata={"max_length": self.max_length, "family": "protein",
                                "options": self.describe()})

    def describe(self) -> dict[str, Any]:
        return {"architecture": "fair-esm ESM2", "alphabet": "ESM-1b", "layers": self.layers,
                "hidden": self.hidden, "heads": self.heads, "ff": 4 * self.hidden,
                "max_length": self.max_length, "token_dropout": self.token_dropout,
                "n_sequences": self.n_sequences, "n_cropped": self.n_cropped,
                "n_replaced_by_X": self.n_replaced, "artifact": ARTIFACT}


def train(corpus: str | tuple[str, ...], config: TrainConfig, **model_options) -> TrainResult:
    """Train an ESM2 on a FASTA ``corpus``; options: layers, hidden, heads, ff (= 4 x hidden),
    max_length. Writes ``<out>/esm2_protein.pt`` (+ its contact-regression file)."""
    return train_loop(ProteinFamily(**model_options), corpus, config)
