"""English family: a WordPiece tokenizer + a small ``BertForMaskedLM`` trained on plain text.

The tokenizer (cased WordPiece, BERT pre-tokenization, ``[PAD] [UNK] [CLS] [SEP] [MASK]``) is
trained with the ``tokenizers`` library on the whole corpus and saved as ``vocab.txt`` in the
output directory (reused on ``--resume``). Examples: non-empty lines, tokenized, packed greedily
into blocks of at most ``max_length - 2`` tokens (a line longer than a block is cut), each
``[CLS] block [SEP]``. The final artifact is a Hugging Face directory (``save_pretrained`` of the
model in fp16 and a ``BertTokenizerFast``), which :func:`infill.load_model` reads.
"""
from __future__ import annotations

from pathlib import Path

import torch

from infill.errors import ConfigError, InputError
from infill.training.common import Family, TrainConfig, TrainResult
from infill.training.common import train as train_loop

__all__ = ["EnglishFamily", "train", "train_tokenizer"]

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_tokenizer(lines: list[str], vocab_size: int, path: Path):
    """Train a cased WordPiece vocabulary on ``lines``, write ``path``/vocab.txt, return a
    ``BertTokenizerFast`` over it."""
    from tokenizers import BertWordPieceTokenizer

    wp = BertWordPieceTokenizer(lowercase=False, strip_accents=False, clean_text=True)
    wp.train_from_iterator(lines, vocab_size=vocab_size, min_frequency=2,
                           special_tokens=SPECIALS, show_progress=False)
    path.mkdir(parents=True, exist_ok=True)
    vocab = wp.get_vocab()
    ordered = sorted(vocab, key=vocab.get)
    (path / "vocab.txt").write_text("\n".join(ordered) + "\n", encoding="utf-8")
    return load_tokenizer(path)


def load_tokenizer(path: Path):
    from transformers import BertTokenizerFast

    return BertTokenizerFast(vocab=str(path / "vocab.txt"), do_lower_case=False,
                             strip_accents=False, tokenize_chinese_chars=True)


class EnglishFamily(Family):
    name = "english"

    def __init__(self, layers: int = 4, hidden: int = 192, heads: int = 4, ff: int | None = None,
                 max_length: int = 128, vocab_size: int = 3000, **unknown):
        if unknown:
            raise ConfigError(f"the english family does not take option(s): {', '.join(unknown)}")
        if hidden % heads:
            raise ConfigError(f"hidden size {hidden} is not divisible by {heads} heads")
        if max_length < 8:
            raise ConfigError(f"max length must be >= 8, got {max_length}")
        if vocab_size < 100:
            raise ConfigError(f"vocab size must be >= 100, got {vocab_size}")
        self.options = {"layers": layers, "hidden": hidden, "heads": heads,
                        "ff": ff or 4 * hidden, "max_length": max_length,
                        "vocab_size": vocab_size}
        self.tokenizer = None

    # -- data --------------------------------------------------------------------------------
    def load_examples(self, corpus, out: Path) -> list[list[int]]:
        with open(corpus, encoding="utf-8") as f:
            lines = [line.strip() for line in f if line.strip()]
        if not lines:
            raise InputError(f"corpus {corpus} has no text")
        tok_dir = Path(out) / "tokenizer"
        if (tok_dir / "vocab.txt").exists():
            self.tokenizer = load_tokenizer(tok_dir)
        else:
            self.tokenizer = train_tokenizer(lines, self.options["vocab_size"], tok_dir)
        t = self.tokenizer
        self.mask_id, self.pad_id = t.mask_token_id, t.pad_token_id
        self._special = torch.tensor(sorted(set(t.all_special_ids)))
        self._vocab = len(t)
        block = self.options["max_length"] - 2
        encoded = t(lines, add_special_tokens=False)["input_ids"]
        examples, current = [], []
        for ids in encoded:
            while len(ids) > block:               # a line longer than a block is cut
                if current:
                    examples.append(current)
                    current = []
                examples.append(ids[:block])
                ids = ids[block:]
            if len(current) + len(ids) > block:
                examples.append(current)
                current = []
            current = current + ids
        if current:
            examples.append(current)
        return [[t.cls_token_id] + ids + [t.sep_token_id] for ids in examples if ids]

    def maskable(self, ids: torch.Tensor) -> torch.Tensor:
        return ~torch.isin(ids, self._special)

    def random_ids(self) -> torch.Tensor:
        keep = torch.ones(self._vocab, dtype=torch.bool)
        keep[self._special] = False
        return keep.nonzero().squeeze(1)

    # -- model -------------------------------------------------------------------------------
    def build_model(self):
        from transformers import BertConfig, BertForMaskedLM

        o = self.options
        config = BertConfig(vocab_size=self._vocab, hidden_size=o["hidden"],
                            num_hidden_layers=o["layers"], num_attention_heads=o["heads"],
                            intermediate_size=o["ff"], max_position_embeddings=o["max_length"],
                            type_vocab_size=2, pad_token_id=self.pad_id)
        return BertForMaskedLM(config)

    def logits(self, model, input_ids, attention_mask, select):
        hidden = model.bert(input_ids=input_ids, attention_mask=attention_mask.long())[0]
        return model.cls(hidden[select])

    def save(self, model, out: Path) -> None:
        import copy

        half = copy.deepcopy(model).to(torch.float16)
        half.save_pretrained(str(out))
        self.tokenizer.model_max_length = self.options["max_length"]
        self.tokenizer.save_pretrained(str(out))

    def describe(self) -> dict:
        return dict(self.options)

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)


def train(corpus: str, config: TrainConfig, **model_options) -> TrainResult:
    """Train a WordPiece BERT on ``corpus`` (see :mod:`infill.training.common`)."""
    return train_loop(EnglishFamily(**model_options), corpus, config)
