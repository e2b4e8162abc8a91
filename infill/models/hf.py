"""Adapter for any Hugging Face masked LM (``AutoModelForMaskedLM`` + its tokenizer).

The network's MLM head (and the softmax) is applied only at the positions a step asks for: with a
large vocabulary the head over every position costs more than a small encoder.
"""
from __future__ import annotations

from collections.abc import Callable

import torch

from infill.errors import ConfigError, InputError, ModelLoadError
from infill.models.base import Encoding, MaskedLM, split_on_marker

_DTYPES = {"float32": torch.float32, "fp32": torch.float32, "bf16": torch.bfloat16,
           "bfloat16": torch.bfloat16, "fp16": torch.float16, "float16": torch.float16}


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None`` -> CUDA when available, else CPU."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise ConfigError(f"unknown device {device!r}") from e
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {device!r} asked for, but CUDA is not available here")
    return dev


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """``None`` -> float32. Half precision (bf16/fp16) only on CUDA."""
    if dtype is None:
        return torch.float32
    if isinstance(dtype, str):
        if dtype not in _DTYPES:
            raise ConfigError(f"unknown dtype {dtype!r}; choose from {', '.join(sorted(_DTYPES))}")
        dtype = _DTYPES[dtype]
    if dtype != torch.float32 and device.type != "cuda":
        raise ConfigError(f"dtype {dtype} is only supported on CUDA; use float32 on {device.type}")
    return dtype


def split_encoder_head(model: torch.nn.Module) -> tuple[torch.nn.Module, Callable] | None:
    """(encoder, head) of a masked LM whose head maps hidden states to logits, or None.

    Known layouts: BERT-like (``cls``), RoBERTa/XLM-R/ESM/... (``lm_head``), DistilBERT.
    """
    prefix = getattr(model, "base_model_prefix", "")
    encoder = getattr(model, prefix, None) if prefix else None
    if encoder is None:
        return None
    for head_name in ("cls", "lm_head", "predictions"):
        head = getattr(model, head_name, None)
        if isinstance(head, torch.nn.Module):
            return encoder, head
    if all(hasattr(model, a) for a in ("vocab_transform", "activation", "vocab_layer_norm",
                                       "vocab_projector")):  # DistilBERT
        def head(h):
            return model.vocab_projector(model.vocab_layer_norm(model.activation(model.vocab_transform(h))))
        return encoder, head
    return None


class HFMaskedLM(MaskedLM):
    """Any ``AutoModelForMaskedLM`` with its tokenizer."""

    def __init__(self, model, tokenizer, name: str | None = None):
        if tokenizer.mask_token_id is None:
            raise ModelLoadError(f"tokenizer of {name or type(model).__name__} has no mask token")
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = name or getattr(model.config, "_name_or_path", "") or type(model).__name__
        self.device = next(model.parameters()).device
        self.vocab_size = int(model.get_output_embeddings().weight.shape[0])
        self.mask_id = int(tokenizer.mask_token_id)
        self.pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0)
        self.default_pivot = self.mask_id
        specials = set(int(i) for i in tokenizer.all_special_ids)
        specials.update(range(len(tokenizer), self.vocab_size))  # output rows with no token
        self.special_ids = frozenset(i for i in specials if i < self.vocab_size)
        self.max_length = self._max_length()
        self._parts = split_encoder_head(model)

    def _max_length(self) -> int:
        cfg = self.model.config
        n = getattr(cfg, "max_position_embeddings", None) or 512
        if getattr(cfg, "position_embedding_type", "absolute") == "absolute" and \
                cfg.model_type in ("roberta", "xlm-roberta", "camembert", "longformer", "esm"):
            n -= (cfg.pad_token_id or 0) + 1  # positions are offset past the padding index
        tok_max = getattr(self.tokenizer, "model_max_length", None)
        if tok_max and tok_max < 1_000_000:
            n = min(n, int(tok_max))
        return int(n)

    # -- the model call ------------------------------------------------------------------------
    def _scores_at(self, input_ids, attention_mask, positions) -> torch.Tensor:
        ids = input_ids.to(self.device)
        attn = attention_mask.to(self.device).long()
        pos = positions.to(self.device)
        rows = torch.arange(ids.shape[0], device=self.device)[:, None]
        with torch.inference_mode():
            if self._parts is None:
                logits = self.model(input_ids=ids, attention_mask=attn).logits
                return logits[rows, pos].float()
            encoder, head = self._parts
            hidden = encoder(input_ids=ids, attention_mask=attn).last_hidden_state
            return head(hidden[rows, pos]).float()

    def log_probs(self, input_ids, attention_mask, positions):
        return torch.log_softmax(self._scores_at(input_ids, attention_mask, positions), dim=-1)

    def logits(self, input_ids, attention_mask, positions):
        return self._scores_at(input_ids, attention_mask, positions)

    # -- text ------------------------------------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        return list(self.tokenizer(text)["input_ids"])

    def detokenize(self, ids) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True,
                                     clean_up_tokenization_spaces=True).strip()

    def token_to_id(self, token: str) -> int:
        tid = self.tokenizer.convert_tokens_to_ids(token)
        if tid is None or (tid == self.tokenizer.unk_token_id and token != self.tokenizer.unk_token):
            raise InputError(f"token {token!r} is not in the vocabulary of {self.name}")
        return int(tid)

    def id_to_token(self, token_id: int) -> str:
        return self.tokenizer.convert_ids_to_tokens(int(token_id))

    def encode(self, text: str, gap: int, marker: str = "___") -> Encoding:
        if gap < 1:
            raise InputError(f"gap must be at least 1 token, got {gap}")
        segments = split_on_marker(text, marker)
        masks = "".join([self.tokenizer.mask_token] * gap)  # no space: BPE without lstrip
        ids = self.tokenize(masks.join(segments))
        positions = [i for i, t in enumerate(ids) if t == self.mask_id]
        n_gaps = len(segments) - 1
        if len(positions) != gap * n_gaps:
            raise InputError(f"input contains the mask token {self.tokenizer.mask_token!r} itself; "
                             f"mark gaps with {marker!r} only")
        self.check_length(len(ids))
        gaps = [positions[k * gap:(k + 1) * gap] for k in range(n_gaps)]
        return Encoding(ids, gaps, segments)

    def fill_string(self, tokens: list[int]) -> tuple[str, bool]:
        """(text of a gap's tokens, whether it glues onto the preceding word)."""
        s = self.tokenizer.decode(list(tokens), clean_up_tokenization_spaces=False)
        if s.startswith("##"):  # WordPiece continuation of the word before the gap
            return s[2:], True
        return s, False

    def render(self, encoding: Encoding, gap_tokens: list[list[int]]) -> tuple[str, list[str]]:
        text = encoding.segments[0]
        fills = []
        for toks, seg in zip(gap_tokens, encoding.segments[1:]):
            s, glue = self.fill_string(toks)
            if glue:
                text = text.rstrip()
            elif not text or text[-1].isspace():
                s = s.lstrip()
            fills.append(s.strip())
            text += s + seg
        return text, fills


def load_hf(name_or_path: str, device: str | None = None, dtype: str | None = None,
            **options) -> HFMaskedLM:
    """Load an HF masked LM and its tokenizer by hub id or local directory."""
    if options:
        raise ConfigError(f"option(s) {', '.join(sorted(options))} do not apply to {name_or_path!r}")
    from transformers import AutoModelForMaskedLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    try:
        tokenizer = AutoTokenizer.from_pretrained(name_or_path)
        model = AutoModelForMaskedLM.from_pretrained(name_or_path, dtype=dt)
    except OSError as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ModelLoadError(
            f"cannot load model {name_or_path!r}: not a local model directory, and the Hugging Face "
            f"Hub could not provide it ({reason[:120]}). Offline? Download it where you have "
            f"network (e.g. `hf download {name_or_path} --local-dir DIR`) and pass --model DIR"
        ) from None
    except ValueError as e:
        raise ModelLoadError(f"cannot load {name_or_path!r} as a masked LM: {str(e).splitlines()[0]}") from None
    return HFMaskedLM(model.to(dev), tokenizer, name=str(name_or_path))


def wrap_hf(model, tokenizer) -> HFMaskedLM:
    """Wrap an already loaded HF masked LM and tokenizer."""
    return HFMaskedLM(model, tokenizer)
