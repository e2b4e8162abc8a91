"""Adapter for any Hugging Face masked LM (``AutoModelForMaskedLM`` + its tokenizer).

The network's MLM head (and the softmax) is applied only at the positions a step asks for: with a
large vocabulary the head over every position costs more than a small encoder.
"""
from __future__ import annotations

import re
import urllib.request
from collections.abc import Callable
from pathlib import Path

import torch

from infill.data.files import check_memory, read_json
from infill.errors import ConfigError, InputError, ModelLoadError
from infill.lazy import LazyModule
from infill.models.base import Encoding, MaskedLM, Rendered, row_chunked
from infill.models.device import resolve_device, resolve_dtype
from infill.models.memory import MEMORY_FILE, load_memory
from infill.models.wordpiece import join_wordpieces

# On first use (transformers takes seconds to import). The hub's settings are read at each use,
# uncached (``.module``: HF_HUB_OFFLINE may change at run time).
hub = LazyModule("huggingface_hub")
hub_constants = LazyModule("huggingface_hub.constants")
transformers = LazyModule("transformers")
hf_logging = LazyModule("transformers.utils.logging")


_GREEK = re.compile("[\u0370-\u03ff\u1f00-\u1fff]")


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
    """Any ``AutoModelForMaskedLM`` with its tokenizer, and the corpus memory of its training
    lines when its directory has one (:mod:`infill.models.memory`: then q is the network's
    conditional mixed with what the training text holds at that position)."""

    supports_logits = True
    memory = None

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
        self._wordpiece = _is_wordpiece(tokenizer)
        self._n_inputs = int(model.get_input_embeddings().weight.shape[0])

    @property
    def n_input_ids(self) -> int:
        return self._n_inputs

    def heavy_modules(self, whole: bool = False) -> list:
        if whole or self._parts is None:
            return [self.model]
        return [self._parts[0]]                  # the encoder; the head runs on few positions

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
    @row_chunked
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
        logq = torch.log_softmax(self._scores_at(input_ids, attention_mask, positions), dim=-1)
        if self.memory is None:
            return logq
        return self.memory.mix(logq, input_ids, positions, self.special_ids)

    def logits(self, input_ids, attention_mask, positions):
        """The network's scores; with a corpus memory, the mixture's log q (its own logits:
        the memory has no unnormalized form)."""
        if self.memory is not None:
            return self.log_probs(input_ids, attention_mask, positions)
        return self._scores_at(input_ids, attention_mask, positions)

    # -- text ------------------------------------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        return list(self.tokenizer(text)["input_ids"])

    def detokenize(self, ids) -> str:
        if self._wordpiece:
            return self._join([i for i in ids if int(i) not in self.special_ids])
        return self.tokenizer.decode(list(ids), skip_special_tokens=True,
                                     clean_up_tokenization_spaces=True).strip()

    def _join(self, ids) -> str:
        """WordPiece ids -> text with English spacing (:func:`join_wordpieces`)."""
        return join_wordpieces(self.tokenizer.convert_ids_to_tokens([int(i) for i in ids]))

    def token_to_id(self, token: str) -> int:
        tid = self.tokenizer.convert_tokens_to_ids(token)
        if tid is None or (tid == self.tokenizer.unk_token_id and token != self.tokenizer.unk_token):
            raise InputError(f"token {token!r} is not in the vocabulary of {self.name}")
        return int(tid)

    def id_to_token(self, token_id: int) -> str:
        return self.tokenizer.convert_ids_to_tokens(int(token_id))

    def encode(self, text: str, gap: int, marker: str = "___") -> Encoding:
        """Each ``marker`` -> ``gap`` mask tokens; the model's own mask token in the text
        (``[MASK]``, ``<mask>``) is a one-token gap, as in Hugging Face's fill-mask."""
        gap = self.check_gap(gap)
        if not marker:
            raise InputError("the gap marker must not be empty")
        if not text or not text.strip():
            raise InputError("empty input: nothing to fill")
        mask = self.tokenizer.mask_token
        parts = re.split("(" + "|".join(re.escape(m) for m in dict.fromkeys([marker, mask])) + ")",
                         text)
        segments, sizes = parts[0::2], [gap if m == marker else 1 for m in parts[1::2]]
        if not sizes:
            raise InputError(f"no gap marker {marker!r} (or {mask}) in input: {text[:60]!r}")
        masks = ["".join([mask] * k) for k in sizes]       # no space: BPE without lstrip
        joined = segments[0] + "".join(m + seg for m, seg in zip(masks, segments[1:]))
        ids = self.tokenize(joined)
        positions = [i for i, t in enumerate(ids) if t == self.mask_id]
        if len(positions) != sum(sizes):
            raise InputError(f"the tokenizer of {self.name} does not keep {mask!r} as one token "
                             f"per gap position in this input: {text[:60]!r}")
        gaps, k = [], 0
        for size in sizes:
            gaps.append(positions[k:k + size])
            k += size
        return Encoding(ids, gaps, segments, self.input_notes(text))

    def input_notes(self, text: str) -> list[str]:
        """Greek text marked the character models' way ('?', Leiden lacunae): said, because a
        sub-word model reads those marks as text."""
        if ("?" in text or "[" in text) and _GREEK.search(text):
            return ["this model restores word pieces (sub-word tokens), not characters: '?' and "
                    "Leiden sigla ([...], [.3]) are read as text; mark each gap with ___ "
                    "(--gap = word pieces) or the model's mask token"]
        return []

    def fill_string(self, tokens: list[int], before: int | None = None) -> tuple[str, bool]:
        """(text of a gap's tokens, whether it glues onto the preceding word). For WordPiece
        vocabularies ``before`` (the token id left of the gap) decides the gluing the way
        :func:`join_wordpieces` spaces text: ``'ll`` after ``I`` or ``,`` after a word glue."""
        if self._wordpiece:
            pieces = self.tokenizer.convert_ids_to_tokens([int(i) for i in tokens])
            ctx = [] if before is None or int(before) in self.special_ids else \
                [self.tokenizer.convert_ids_to_tokens(int(before))]
            head = join_wordpieces(ctx)
            s = join_wordpieces(ctx + pieces)[len(head):]
            glue = bool(pieces) and (pieces[0].startswith("##") or bool(ctx) and
                                     not s.startswith(" "))
            return s.lstrip(), glue
        s = self.tokenizer.decode(list(tokens), clean_up_tokenization_spaces=False)
        if s.startswith("##"):  # WordPiece continuation of the word before the gap
            return s[2:], True
        return s, False

    def render(self, encoding: Encoding, gap_tokens: list[list[int]]) -> Rendered:
        """The filled text. A fill glues onto the word before the gap when the two make one
        word or one written unit (``I'll``, ``lord,``), except that a word-piece continuation
        (``##s``) glues only where the text asks for it: no space before the gap marker."""
        text = encoding.segments[0]
        fills, spans, offsets = [], [], []
        for gap, toks, seg in zip(encoding.gaps, gap_tokens, encoding.segments[1:]):
            before = encoding.input_ids[gap[0] - 1] if gap and gap[0] > 0 else None
            s, glue = self.fill_string(toks, before)
            continuation = self._wordpiece and bool(toks) and \
                self.tokenizer.convert_ids_to_tokens(int(toks[0])).startswith("##")
            if glue and not (continuation and text[-1:].isspace()):
                text = text.rstrip()
            elif not text or text[-1].isspace():
                s = s.lstrip()
            lead = len(s) - len(s.lstrip())
            start = len(text) + lead
            fills.append(s.strip())
            spans.append((start, start + len(s.strip())))
            offsets.append([start + self._token_start(toks, j) for j in range(len(toks))])
            text += s + seg
        return Rendered(text, fills, spans, offsets)

    def _token_start(self, tokens: list[int], j: int) -> int:
        """Character offset of token j within its rendered (stripped) fill."""
        upto = self.fill_string(tokens[:j + 1])[0].strip()
        piece = self.fill_string(tokens[j:j + 1])[0].strip()
        return max(0, len(upto) - len(piece))


def _is_wordpiece(tokenizer) -> bool:
    """Whether a (fast) tokenizer is WordPiece with ``##`` continuations (BERT-like)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    model = getattr(backend, "model", None)
    return type(model).__name__ == "WordPiece" and \
        getattr(model, "continuing_subword_prefix", "##") == "##"


# ---- sizes a config.json declares ----------------------------------------------------------------
MAX_LAYERS = 1024
"""The most layers a model's ``config.json`` may declare (the largest encoders have ~100)."""
MAX_CONFIG_SIZE = 2 ** 31 - 1
"""The largest width, vocabulary or length a ``config.json`` may declare."""
_WIDTH = ("hidden_size", "dim", "d_model", "embed_dim", "n_embd")
_FF = ("intermediate_size", "hidden_dim", "ffn_dim", "encoder_ffn_dim", "n_inner")
_LAYERS = ("num_hidden_layers", "n_layers", "num_layers", "n_layer", "encoder_layers")
_ROWS = ("vocab_size", "max_position_embeddings", "type_vocab_size", "n_positions")
_OTHER = ("num_attention_heads", "n_heads", "n_head", "encoder_attention_heads",
          "embedding_size", "num_key_value_heads")


def check_config_sizes(config: dict, where: str, itemsize: int = 4) -> None:
    """Every size a model's ``config.json`` declares is a whole number within bounds (at most
    :data:`MAX_LAYERS` layers), and the network it describes fits in memory
    (:func:`~infill.data.files.check_memory`): checked before transformers builds anything."""
    sizes = {k: _config_int(config, k, where) for k in _WIDTH + _FF + _LAYERS + _ROWS + _OTHER
             if config.get(k) is not None}
    layers = max((sizes[k] for k in _LAYERS if k in sizes), default=0)
    if layers > MAX_LAYERS:
        raise ModelLoadError(f"{where}: {layers:,} layers, more than the {MAX_LAYERS:,} a model "
                             "may have")
    width = max((sizes[k] for k in _WIDTH + ("embedding_size",) if k in sizes), default=0)
    ff = max((sizes[k] for k in _FF if k in sizes), default=4 * width)
    rows = sum(sizes.get(k, 0) for k in _ROWS) + sizes.get("vocab_size", 0)   # + output head
    params = layers * (4 * width * width + 2 * width * ff) + rows * width
    check_memory(params * itemsize, f"the model of {where}")


def _config_int(config: dict, key: str, where: str) -> int:
    """``config[key]`` when it is a whole number from 0 to :data:`MAX_CONFIG_SIZE`."""
    v = config[key]
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_CONFIG_SIZE:
        shown = repr(v)[:40] if not isinstance(v, int) or abs(v) < 10 ** 30 else "a huge number"
        raise ModelLoadError(f"{where}: {key!r} must be a whole number from 0 to "
                             f"{MAX_CONFIG_SIZE:,}, got {shown}")
    return v


def check_model_files(name_or_path: str, itemsize: int = 4) -> None:
    """:func:`check_config_sizes` of a model's ``config.json``: a local directory's, or a hub
    id's in the local Hugging Face cache (nothing is fetched; no config found: nothing to do)."""
    folder = Path(str(name_or_path)).expanduser()
    path = folder / "config.json" if folder.is_dir() else _cached_config(str(name_or_path))
    if path is None or not path.is_file():
        return
    config = read_json(path, "model configuration", ModelLoadError)
    if not isinstance(config, dict):
        raise ModelLoadError(f"{path}: not a model configuration (a JSON object)")
    check_config_sizes(config, str(path), itemsize)


def _cached_config(name: str) -> Path | None:
    """The cached ``config.json`` of a hub id, or None."""
    try:
        found = hub.try_to_load_from_cache(name, "config.json")
    except Exception:  # noqa: BLE001 - not a valid repo id: nothing cached
        return None
    return Path(found) if isinstance(found, str) else None


HUB_PROBE_TIMEOUT = 3.0


def hub_reachable(timeout: float = HUB_PROBE_TIMEOUT) -> bool:
    """One quick request to the Hugging Face Hub (False when offline or HF_HUB_OFFLINE is set),
    so that an unreachable hub fails at once instead of after many retries."""
    if hub_constants.module.HF_HUB_OFFLINE:
        return False
    return url_reachable(hub_constants.module.ENDPOINT, timeout)


def url_reachable(url: str, timeout: float = HUB_PROBE_TIMEOUT) -> bool:
    """Whether one quick HEAD request to ``url`` gets any answer (no retries)."""
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout)
        return True
    except Exception:  # noqa: BLE001 - any failure means "not reachable now"
        return False


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:160]


def load_hf(name_or_path: str, device: str | None = None, dtype: str | None = None,
            **options) -> HFMaskedLM:
    """Load an HF masked LM and its tokenizer by hub id or local directory. A hub id is taken
    from the local Hugging Face cache when it is there; otherwise the hub must answer one quick
    request (no long retries when offline)."""
    if options:
        raise ConfigError(f"option(s) {', '.join(sorted(options))} do not apply to {name_or_path!r}")

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    local = Path(str(name_or_path)).expanduser().is_dir()
    check_model_files(str(name_or_path), dt.itemsize)     # before transformers builds anything

    def load(**kw):
        # explicit, whatever a future default: no remote code, no full unpickling of weights
        return (transformers.AutoTokenizer.from_pretrained(name_or_path, trust_remote_code=False,
                                                           **kw),
                transformers.AutoModelForMaskedLM.from_pretrained(
                    name_or_path, dtype=dt, weights_only=True, trust_remote_code=False, **kw))

    try:
        if local:
            tokenizer, model = load()
        else:
            try:
                tokenizer, model = load(local_files_only=True)
            except OSError:
                if not hub_reachable():
                    raise OSError("the Hugging Face Hub is not reachable from here") from None
                tokenizer, model = load()
    except OSError as e:
        if local:
            raise ModelLoadError(f"cannot load model directory {str(name_or_path)!r}: "
                                 f"{_first_line(e)}") from None
        raise ModelLoadError(
            f"cannot load model {name_or_path!r}: not a local model directory, and the Hugging Face "
            f"Hub could not provide it ({_first_line(e)[:120]}). Offline? Download it where you "
            f"have network (e.g. `hf download {name_or_path} --local-dir DIR`) and pass 'model' DIR",
            field="model") from None
    except ValueError as e:
        raise ModelLoadError(f"cannot load {name_or_path!r} as a masked LM: {_first_line(e)}") from None
    except Exception as e:  # noqa: BLE001 - corrupt weights (SafetensorError), bad config, ...
        raise ModelLoadError(f"cannot load model {str(name_or_path)!r} ({type(e).__name__}: "
                             f"{_first_line(e)}); are its files complete?") from None
    wrapped = HFMaskedLM(model.to(dev), tokenizer, name=str(name_or_path))
    memory = Path(str(name_or_path)).expanduser() / MEMORY_FILE
    if local and memory.is_file():
        wrapped.memory = load_memory(memory, wrapped.vocab_size, wrapped.n_input_ids)
    return wrapped


def wrap_hf(model, tokenizer) -> HFMaskedLM:
    """Wrap an already loaded HF masked LM and tokenizer."""
    return HFMaskedLM(model, tokenizer)
