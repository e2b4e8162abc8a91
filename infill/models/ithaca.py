"""Ithaca (Assael et al., Nature 2022) as a :class:`MaskedLM`: a torch port of its restoration path.

Ithaca's published checkpoint (``checkpoint_v1.pkl``) is a pickle of
``{params, model_config, region_map, alphabet}``; it is read with infill's restricted unpickler
(:func:`infill.data.pickles.read_pickle_file`), so no jax or flax is needed and nothing in the file
runs. Only the restoration head is ported (not the region and date heads).

The network, as Ithaca builds it:

- two input streams over 768 positions: characters (34 symbols, :data:`ALPHABET`) and words (each
  character of a ``\\w+`` run that is in the word list carries that word's id, every other
  character the unknown word ``^``). The word stream is recomputed from the characters of every
  row in every forward pass, so a hypothesis's filled characters change its words too;
- character ⊕ word ⊕ learned position embeddings, concatenated (width 3 x ``word_char_emb_dim``);
- pre-LayerNorm blocks of BigBird block-sparse self-attention (blocks of 64; the pattern of which
  key blocks each query block sees is fixed data, ``bigbird_blocks_768.npy``, computed here as a
  dense attention under that block mask) and a tanh-GELU MLP; LayerNorms with eps 1e-12;
- the restoration head: an MLP down to ``word_char_emb_dim`` times the transposed character
  embedding (tied, no bias): logits over all 34 symbols.

Text: :func:`prepare` strips accents, lowercases (Ithaca itself does not lowercase: its model
was trained on lowercase text and would read capitals as unknown), collapses whitespace, maps
digits to ``0``, reads letters and symbols it cannot write as ``^`` and drops other punctuation.
``?`` marks a character to restore and ``-`` a missing one that stays; both reach the network
as ``-`` (Ithaca's "missing" symbol), which is therefore this adapter's mask and its default HCB
pivot. Gaps are filled with space, the 27 letters, ``0`` or ``.`` only (Ithaca's candidates);
scores use the log-softmax over all 34 symbols.

Besides the pickle, a model is saved as a directory with ``ithaca.json`` (format, config, word
list) and ``model.safetensors`` (:func:`save_ithaca` / :func:`load_ithaca`), e.g. one trained by
infill from :meth:`IthacaNet.from_config`.
"""
from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import asdict, dataclass, fields
from importlib import resources
from pathlib import Path

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from torch import nn
from torch.nn import functional as F

from infill.data.files import check_memory, read_json
from infill.errors import ConfigError, InputError, ModelLoadError
from infill.models.base import Encoding, MaskedLM, Rendered, render_chars, row_chunked
from infill.models.device import resolve_device, resolve_dtype
from infill.models.flax_checkpoint import (LayerNorm, checked_params, read_checkpoint, size,
                                           torch_weights)
from infill.models.flax_checkpoint import short as _short

__all__ = ["ALPHABET", "IthacaConfig", "IthacaNet", "IthacaMaskedLM", "prepare", "load_ithaca",
           "load_ithaca_checkpoint", "save_ithaca", "describe_checkpoint"]

FORMAT = "infill-ithaca"
META = "ithaca.json"
WEIGHTS = "model.safetensors"
BLOCKS_FILE = "bigbird_blocks_768.npy"
BLOCK = 64

LETTERS = "αβγδεζηθικλμνξοπρςστυφχψωϙϛ"
ALPHABET = "#<^ -" + LETTERS + "0."
"""Ithaca's 34 symbols in id order: pad, start, unknown, space, missing, 27 letters, numeral,
full stop."""
PAD, SOS, UNK, SPACE, MISSING = range(5)
INDEX = {c: i for i, c in enumerate(ALPHABET)}
WORD_CHARS = LETTERS + "0"          # the symbols Python's \w matches
UNKNOWN_WORD = 2                    # Ithaca's word id for "not a known word"

# letter variants with an obvious place in the alphabet (after NFD + lowercase)
_VARIANTS = {"ϲ": "σ", "ϟ": "ϙ", "ϐ": "β", "ϑ": "θ", "ϕ": "φ", "ϰ": "κ", "ϱ": "ρ", "ϵ": "ε",
             "ϖ": "π"}
_WS = re.compile(r"\s+")
_TEXT_CHARS = set(" " + LETTERS + "0.-?")


def _prepare_char(c: str) -> str:
    """One character after NFD + lowercase -> its symbol, ``^`` (unknown content) or ``""``."""
    if unicodedata.combining(c):
        return ""
    c = _VARIANTS.get(c, c)
    if c.isdigit():
        return "0"
    if c.isspace():
        return " "
    if c in _TEXT_CHARS:
        return c
    return "^" if unicodedata.category(c)[0] in "LNS" else ""


def prepare(text: str, strip: bool = True) -> str:
    """Ithaca's text preparation, plus lowercasing (see the module docstring); ``?`` and ``-``
    are kept."""
    out = "".join(_prepare_char(c) for c in unicodedata.normalize("NFD", text).lower())
    out = _WS.sub(" ", out)
    return out.strip() if strip else out


def unknown_characters(text: str) -> list[str]:
    """Distinct characters of ``text`` read as the unknown symbol ``^``, in order."""
    seen: dict[str, None] = {}
    for ch in text:
        if ch != "^" and prepare(ch, strip=False) == "^":
            seen[ch] = None
    return list(seen)


@dataclass
class IthacaConfig:
    """Ithaca's ``model_config`` (the keys of the restoration path; the rest are kept as-is)."""

    word_char_emb_dim: int = 256
    emb_dim: int = 512
    mlp_dim: int = 2048
    num_layers: int = 8
    num_heads: int = 4
    vocab_char_size: int = len(ALPHABET)
    vocab_word_size: int = 35888
    max_len: int = 768
    qkv_dim: int = 512
    dropout_rate: float = 0.1
    attention_dropout_rate: float = 0.1

    @classmethod
    def from_dict(cls, d: dict) -> "IthacaConfig":
        """Known keys only (Ithaca's region/date settings are ignored); ConfigError on bad
        values."""
        if not isinstance(d, dict):
            raise ConfigError("an Ithaca model_config must be a dict")
        known = {f.name for f in fields(cls)}
        config = cls(**{k: d[k] for k in known if k in d})
        for f in fields(cls):
            if f.type == "int":
                size(f.name, getattr(config, f.name))
        _check_pattern_fits(config)
        if config.vocab_char_size != len(ALPHABET):
            raise ConfigError(f"model_config vocab_char_size is {config.vocab_char_size}; Ithaca's "
                              f"alphabet has {len(ALPHABET)} symbols")
        if config.qkv_dim % config.num_heads:
            raise ConfigError(f"qkv_dim {config.qkv_dim} is not divisible by {config.num_heads} "
                              "heads")
        for f in fields(cls):
            if f.type == "float":
                v = getattr(config, f.name)
                if isinstance(v, bool) or not isinstance(v, (int, float, np.floating)) \
                        or not 0 <= v < 1:
                    raise ConfigError(f"model_config {f.name} must be a rate in [0, 1), got "
                                      f"{_short(v)}")
        return cls(**{f.name: (int if f.type == "int" else float)(getattr(config, f.name))
                      for f in fields(cls)})

    @property
    def width(self) -> int:
        return 3 * self.word_char_emb_dim

    def parameters(self) -> int:
        """How many parameters the network of this config has (embeddings, blocks, head)."""
        d, w = self.word_char_emb_dim, self.width
        block = 4 * w + 4 * w * self.qkv_dim + 2 * w * self.mlp_dim + self.mlp_dim + w
        return ((self.vocab_char_size + self.vocab_word_size + self.max_len) * d
                + self.num_layers * block + 2 * w + w * self.emb_dim + self.emb_dim
                + self.emb_dim * d + d)


def _pattern_shape() -> tuple[int, ...]:
    """(layers, heads, blocks, blocks) of the shipped BigBird pattern, read without loading it."""
    with resources.as_file(resources.files("infill.models") / BLOCKS_FILE) as f:
        return tuple(np.load(f, mmap_mode="r", allow_pickle=False).shape)


def _check_pattern_fits(c: "IthacaConfig") -> None:
    """ConfigError when a config asks for more layers, heads or positions than Ithaca's
    BigBird pattern covers (before anything loops over its layers)."""
    L, H, blocks = _pattern_shape()[:3]
    for name, value, most in (("num_layers", c.num_layers, L), ("num_heads", c.num_heads, H),
                              ("max_len", c.max_len, (blocks - 1) * BLOCK)):
        if value > most:
            raise ConfigError(f"model_config {name} is {_short(value)}; Ithaca's BigBird pattern "
                              f"covers at most {most}")


# ---- the word stream ------------------------------------------------------------------------
class WordLookup(nn.Module):
    """Char ids [R, T] -> word ids [R, T], vectorized: runs of word characters are hashed
    (polynomial hash mod a prime), looked up among the word list's hashes and confirmed
    character by character, so the result is exact."""

    PRIME = 2_147_483_647

    def __init__(self, words: list[str]):
        super().__init__()
        first: dict[str, int] = {}          # a word listed twice keeps its first id
        for i, w in enumerate(words):
            if w and all(c in WORD_CHARS for c in w):
                first.setdefault(w, i)
        table = [(i, w) for w, i in first.items()]
        longest = max((len(w) for _, w in table), default=1)
        cpu = torch.device("cpu")          # also when the network is built on the meta device
        chars = torch.zeros(len(table), longest, dtype=torch.long, device=cpu)
        for r, (_, w) in enumerate(table):
            chars[r, :len(w)] = torch.tensor([INDEX[c] for c in w], device=cpu)
        self.longest = longest
        for base in (37, 41, 43, 47, 53, 59, 61, 67):
            hashes = self._hash_rows(chars, base)
            if len(set(hashes.tolist())) == len(table):
                break
        else:  # pragma: no cover - eight bases all colliding on a real word list
            raise ModelLoadError("cannot index the word list (hash collisions)")
        self.base = base
        order = torch.argsort(hashes)
        self.register_buffer("hashes", hashes[order], persistent=False)
        self.register_buffer("chars", chars[order], persistent=False)
        self.register_buffer("ids", torch.tensor([i for i, _ in table], dtype=torch.long,
                                                 device=cpu)[order],
                             persistent=False)
        is_word = torch.zeros(len(ALPHABET), dtype=torch.bool, device=cpu)
        is_word[[INDEX[c] for c in WORD_CHARS]] = True
        self.register_buffer("is_word", is_word, persistent=False)

    def _powers(self, n: int, base: int, device="cpu") -> torch.Tensor:
        p = [1]
        for _ in range(n - 1):
            p.append(p[-1] * base % self.PRIME)
        return torch.tensor(p, dtype=torch.long, device=device)

    def _hash_rows(self, chars: torch.Tensor, base: int) -> torch.Tensor:
        return (chars * self._powers(chars.shape[1], base, chars.device)).sum(1) % self.PRIME

    def forward(self, char_ids: torch.Tensor) -> torch.Tensor:
        R, T = char_ids.shape
        ids = char_ids.clamp(0, len(ALPHABET) - 1)
        inword = self.is_word[ids]
        prev = F.pad(inword[:, :-1], (1, 0), value=False)
        starts = (inword & ~prev).reshape(-1)
        flat, inflat = ids.reshape(-1), inword.reshape(-1)
        run = torch.cumsum(starts.long(), 0) - 1                     # run index of each char
        n_runs = int(starts.sum())
        out = torch.full((R * T,), UNKNOWN_WORD, dtype=torch.long, device=ids.device)
        if n_runs == 0 or len(self.ids) == 0:
            return out.view(R, T)
        start_pos = starts.nonzero().squeeze(1)
        run_c = run.clamp(min=0)
        offset = torch.arange(R * T, device=ids.device) - start_pos[run_c]
        length = torch.zeros(n_runs, dtype=torch.long, device=ids.device).index_add_(
            0, run_c[inflat], torch.ones_like(run_c[inflat]))
        powers = self._powers(T, self.base, ids.device)
        terms = torch.where(inflat, flat * powers[offset.clamp(0, T - 1)], 0)
        h = torch.zeros(n_runs, dtype=torch.long, device=ids.device).index_add_(
            0, run_c, terms) % self.PRIME
        cand = torch.searchsorted(self.hashes, h).clamp(max=len(self.hashes) - 1)
        k = torch.arange(self.longest, device=ids.device)
        gathered = flat[(start_pos[:, None] + k).clamp(max=R * T - 1)]
        gathered = torch.where(k < length[:, None], gathered, 0)
        found = (self.hashes[cand] == h) & (length <= self.longest) & \
            (gathered == self.chars[cand]).all(1)
        word = torch.where(found, self.ids[cand], UNKNOWN_WORD)
        out[inflat] = word[run[inflat]]
        return out.view(R, T)


# ---- the network ----------------------------------------------------------------------------
def block_pattern(num_layers: int, num_heads: int) -> torch.Tensor:
    """[layers, heads, 13, 13] bool: which 64-blocks of keys each 64-block of queries sees in
    Ithaca's BigBird attention (data shipped with infill: the random blocks are seeded by the
    layer index, so the pattern is the same for every checkpoint)."""
    with resources.as_file(resources.files("infill.models") / BLOCKS_FILE) as f:
        blocks = np.load(f, allow_pickle=False)
    L, H = blocks.shape[:2]
    if num_layers > L or num_heads > H:
        raise ConfigError(f"Ithaca's BigBird pattern covers {L} layers x {H} heads, not "
                          f"{num_layers} x {num_heads}")
    return torch.from_numpy(blocks[:num_layers, :num_heads].copy())


class Block(nn.Module):
    """Pre-LayerNorm encoder block: block-sparse self-attention, then a tanh-GELU MLP."""

    def __init__(self, c: IthacaConfig, pattern: torch.Tensor):
        super().__init__()
        w, self.heads = c.width, c.num_heads
        self.ln0, self.ln1 = LayerNorm(w), LayerNorm(w)
        self.query, self.key, self.value = (nn.Linear(w, c.qkv_dim, bias=False) for _ in range(3))
        self.out = nn.Linear(c.qkv_dim, w, bias=False)
        self.fc1, self.fc2 = nn.Linear(w, c.mlp_dim), nn.Linear(c.mlp_dim, w)
        self.drop = nn.Dropout(c.dropout_rate)
        self.attn_drop = c.attention_dropout_rate
        self.register_buffer("pattern", pattern, persistent=False)     # [H, 13, 13]

    def bias(self, keep: torch.Tensor) -> torch.Tensor:
        """[R, H, T, T] additive attention bias: 0 where the block pattern lets a query see a
        key that is not padding, -10000 elsewhere (Ithaca's value for padding keys)."""
        T = keep.shape[1]
        blk = torch.arange(T, device=keep.device) // BLOCK
        allowed = self.pattern[:, blk][:, :, blk]                         # [H, T, T]
        ok = allowed[None] & keep[:, None, None, :]
        zero = torch.zeros((), dtype=torch.float32, device=keep.device)
        return torch.where(ok, zero, zero - 10000.0)

    def forward(self, x, keep, bias):
        R, T, _ = x.shape
        h = self.ln0(x)
        q, k, v = (m(h).view(R, T, self.heads, -1).transpose(1, 2)
                   for m in (self.query, self.key, self.value))
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype),
                                           dropout_p=self.attn_drop if self.training else 0.0)
        a = a.transpose(1, 2).reshape(R, T, -1) * keep[..., None].to(a.dtype)
        x = x + self.drop(self.out(a))
        return x + self.drop(self.fc2(F.gelu(self.fc1(self.ln1(x)), approximate="tanh")))


class IthacaNet(nn.Module):
    """Ithaca's encoder and restoration head (module docstring); ``words[i]`` is word id i."""

    def __init__(self, config: IthacaConfig, words: list[str]):
        super().__init__()
        c = self.config = config
        if len(words) > c.vocab_word_size:
            raise ConfigError(f"{len(words)} words for vocab_word_size {c.vocab_word_size}")
        pattern = block_pattern(c.num_layers, c.num_heads)
        if c.max_len > (pattern.shape[-1] - 1) * BLOCK:   # the last block is always padding
            raise ConfigError(f"max_len {c.max_len} exceeds Ithaca's "
                              f"{(pattern.shape[-1] - 1) * BLOCK}")
        self.words = list(words)
        d = c.word_char_emb_dim
        self.char_embeddings = nn.Embedding(c.vocab_char_size, d)
        self.word_embeddings = nn.Embedding(c.vocab_word_size, d)
        self.pos_embedding = nn.Parameter(torch.randn(c.max_len, d) * 0.02)
        self.lookup = WordLookup(self.words)
        self.blocks = nn.ModuleList(Block(c, pattern[i]) for i in range(c.num_layers))
        self.encoder_norm = LayerNorm(c.width)
        self.head1, self.head2 = nn.Linear(c.width, c.emb_dim), nn.Linear(c.emb_dim, d)
        self.drop = nn.Dropout(c.dropout_rate)

    @classmethod
    def from_config(cls, config: "IthacaConfig | dict", words: list[str]) -> "IthacaNet":
        """A freshly initialized network (for training): ``config`` as an IthacaConfig or dict."""
        if isinstance(config, dict):
            config = IthacaConfig.from_dict(config)
        return cls(config, words)

    def hidden(self, char_ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """[R, T, width] final hidden states; ``keep`` [R, T] is False at padding."""
        T = char_ids.shape[1]
        words = self.lookup(char_ids)
        pos = self.pos_embedding[:T].unsqueeze(0).expand(char_ids.shape[0], -1, -1)
        x = torch.cat([self.char_embeddings(char_ids), self.word_embeddings(words),
                       pos.to(self.char_embeddings.weight.dtype)], dim=-1)
        x = self.drop(x)
        bias = self.blocks[0].bias(keep) if self.blocks else None
        for i, block in enumerate(self.blocks):
            if i and not torch.equal(block.pattern, self.blocks[i - 1].pattern):
                bias = block.bias(keep)
            x = block(x, keep, bias)
        return self.encoder_norm(x)

    def head(self, h: torch.Tensor) -> torch.Tensor:
        """Restoration logits over the 34 symbols for hidden states ``h``."""
        r = self.head2(F.gelu(self.head1(h), approximate="tanh"))
        return r @ self.char_embeddings.weight.T

    def forward(self, char_ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """[R, T, 34] logits at every position."""
        return self.head(self.hidden(char_ids, keep))


# ---- Ithaca's checkpoint ----------------------------------------------------------------------
def _flax_shapes(c: IthacaConfig) -> dict[str, tuple]:
    """Every parameter the restoration path reads, by its path in Ithaca's params, with shape."""
    d, w, H = c.word_char_emb_dim, c.width, c.num_heads
    shapes = {"char_embeddings/embedding": (c.vocab_char_size, d),
              "word_embeddings/embedding": (c.vocab_word_size, d),
              "posembed_input/pos_embedding": (1, c.max_len, d),
              "encoder_norm/scale": (w,), "encoder_norm/bias": (w,),
              "MlpBlock_0/Dense_0/kernel": (w, c.emb_dim), "MlpBlock_0/Dense_0/bias": (c.emb_dim,),
              "MlpBlock_0/Dense_1/kernel": (c.emb_dim, d), "MlpBlock_0/Dense_1/bias": (d,)}
    for i in range(c.num_layers):
        b = f"encoderblock_{i}/"
        for ln in ("LayerNorm_0", "LayerNorm_1"):
            shapes[b + ln + "/scale"] = shapes[b + ln + "/bias"] = (w,)
        for m in ("query", "key", "value"):
            shapes[f"{b}BigBirdSelfAttention_0/{m}/kernel"] = (w, H, c.qkv_dim // H)
        shapes[f"{b}BigBirdSelfAttention_0/out/kernel"] = (H, c.qkv_dim // H, w)
        shapes[b + "MlpBlock_0/Dense_0/kernel"] = (w, c.mlp_dim)
        shapes[b + "MlpBlock_0/Dense_0/bias"] = (c.mlp_dim,)
        shapes[b + "MlpBlock_0/Dense_1/kernel"] = (c.mlp_dim, w)
        shapes[b + "MlpBlock_0/Dense_1/bias"] = (w,)
    return shapes


def _state_from_flax(flat: dict[str, np.ndarray], c: IthacaConfig) -> dict[str, torch.Tensor]:
    """Ithaca's parameters (checked by :func:`_flax_shapes`) -> an :class:`IthacaNet` state dict."""
    t = torch_weights(flat)
    state = {"char_embeddings.weight": t["char_embeddings/embedding"],
             "word_embeddings.weight": t["word_embeddings/embedding"],
             "pos_embedding": t["posembed_input/pos_embedding"][0],
             "encoder_norm.scale": t["encoder_norm/scale"],
             "encoder_norm.bias": t["encoder_norm/bias"],
             "head1.weight": t["MlpBlock_0/Dense_0/kernel"].T,
             "head1.bias": t["MlpBlock_0/Dense_0/bias"],
             "head2.weight": t["MlpBlock_0/Dense_1/kernel"].T,
             "head2.bias": t["MlpBlock_0/Dense_1/bias"]}
    for i in range(c.num_layers):
        b, s = f"encoderblock_{i}/", f"blocks.{i}."
        for ln, name in (("LayerNorm_0", "ln0"), ("LayerNorm_1", "ln1")):
            state[s + name + ".scale"] = t[b + ln + "/scale"]
            state[s + name + ".bias"] = t[b + ln + "/bias"]
        for m in ("query", "key", "value"):
            kernel = t[f"{b}BigBirdSelfAttention_0/{m}/kernel"]       # [width, heads, head dim]
            state[f"{s}{m}.weight"] = kernel.reshape(c.width, -1).T
        state[s + "out.weight"] = t[b + "BigBirdSelfAttention_0/out/kernel"].reshape(-1, c.width).T
        state[s + "fc1.weight"] = t[b + "MlpBlock_0/Dense_0/kernel"].T
        state[s + "fc1.bias"] = t[b + "MlpBlock_0/Dense_0/bias"]
        state[s + "fc2.weight"] = t[b + "MlpBlock_0/Dense_1/kernel"].T
        state[s + "fc2.bias"] = t[b + "MlpBlock_0/Dense_1/bias"]
    return {k: v.contiguous() for k, v in state.items()}


def _word_list(alphabet, size: int, where: str) -> list[str]:
    """Ithaca's ``alphabet`` entry ({idx2word, word2idx}) -> words by id."""
    if not isinstance(alphabet, dict) or not isinstance(alphabet.get("word2idx"), dict):
        raise ModelLoadError(f"{where}: 'alphabet' has no word2idx table")
    words = [""] * size
    for word, idx in alphabet["word2idx"].items():
        if not isinstance(word, str) or isinstance(idx, bool) or \
                not isinstance(idx, (int, np.integer)) or not 0 <= int(idx) < size:
            raise ModelLoadError(f"{where}: word list entry {word!r} -> {idx!r} does not fit "
                                 f"vocab_word_size {size}")
        words[int(idx)] = str(word)
    return words


def _read_checkpoint(path: str | Path, ckpt: dict | None = None
                     ) -> tuple[IthacaConfig, dict, list[str]]:
    """(config, flat restoration params, words) of an Ithaca pickle (``ckpt``: the file already
    unpickled), every shape checked."""
    where = f"Ithaca checkpoint {str(path)!r}"
    if ckpt is None:
        _, ckpt = read_checkpoint(path)
    if not isinstance(ckpt, dict) or not {"params", "model_config", "alphabet"} <= set(ckpt):
        raise ModelLoadError(f"{where} is not an Ithaca checkpoint (expected a dict with params, "
                             "model_config and alphabet)")
    try:
        config = IthacaConfig.from_dict(ckpt["model_config"])
    except (ConfigError, TypeError) as e:
        raise ModelLoadError(f"{where}: {e}") from None
    check_memory(2 * 4 * config.parameters(), where)     # float32 arrays, then their torch copy
    flat = checked_params(ckpt, _flax_shapes(config), where)
    words = _word_list(ckpt["alphabet"], config.vocab_word_size, where)
    return config, flat, words


def load_ithaca_checkpoint(path: str | Path, device=None, dtype=None, ckpt: dict | None = None,
                           **options) -> "IthacaMaskedLM":
    """Load Ithaca's published pickle (``checkpoint_v1.pkl``) safely (``--model X.pkl``;
    ``ckpt``: the file already unpickled)."""
    if options:
        raise ConfigError(f"option(s) {', '.join(sorted(options))} do not apply to the Ithaca "
                          f"checkpoint {str(path)!r}")
    config, flat, words = _read_checkpoint(path, ckpt)
    try:
        net = IthacaNet(config, words)
    except ConfigError as e:
        raise ModelLoadError(f"Ithaca checkpoint {str(path)!r}: {e}") from None
    net.load_state_dict(_state_from_flax(flat, config))
    return IthacaMaskedLM(net, name=str(path), device=device, dtype=dtype)


def describe_checkpoint(path: str | Path, ckpt: dict | None = None) -> dict:
    """What an Ithaca checkpoint holds (for ``infill models --model X.pkl``)."""
    config, flat, words = _read_checkpoint(path, ckpt)
    used = _flax_shapes(config)
    return {"name": str(path), "family": "ithaca", "model": "Ithaca", "language": "Ancient Greek",
            "layers": config.num_layers,
            "architecture": f"{config.num_layers} layers, {config.num_heads} heads, width "
                            f"{config.width} (3 x {config.word_char_emb_dim}), "
                            f"MLP {config.mlp_dim}",
            "max_length": config.max_len, "alphabet": ALPHABET, "words": len(words),
            "parameters": int(sum(int(np.prod(flat[k].shape)) for k in used)),
            "parameters_in_file": int(sum(int(np.prod(getattr(v, "shape", ())))
                                          for v in flat.values())),
            "config": asdict(config)}


# ---- infill's own directory format --------------------------------------------------------------
def save_ithaca(net: IthacaNet, path: str | Path, dtype: torch.dtype = torch.float32,
                extra: dict | None = None) -> Path:
    """Write ``ithaca.json`` (format, config, words) + ``model.safetensors`` into ``path``."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to("cpu", dtype).contiguous() for k, v in net.state_dict().items()}
    save_file(state, str(path / WEIGHTS))
    meta = {"format": FORMAT, "version": 1, "config": asdict(net.config), "words": net.words,
            "dtype": str(dtype).replace("torch.", ""), **(extra or {})}
    (path / META).write_text(json.dumps(meta, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def _check_shapes(weights: Path, config: IthacaConfig) -> None:
    """The tensors in ``weights`` (read from its header) are exactly those ``config`` implies."""
    with torch.device("meta"):
        want = {k: tuple(v.shape) for k, v in IthacaNet(config, []).state_dict().items()}
    with safe_open(str(weights), "pt") as f:
        found = {k: tuple(f.get_slice(k).get_shape()) for k in f.keys()}
    for key in sorted(set(want) | set(found)):
        if want.get(key) != found.get(key):
            raise ModelLoadError(f"weight {key}: {found.get(key) or 'missing'} in the file, "
                                 f"{want.get(key) or 'none'} in the config")


def load_ithaca(path: str | Path, device=None, dtype=None, **options) -> "IthacaMaskedLM":
    """Load a directory written by :func:`save_ithaca` (what :func:`infill.load_model` calls)."""
    if options:
        raise ConfigError(f"option(s) {', '.join(sorted(options))} do not apply to Ithaca model "
                          f"{str(path)!r}")
    path = Path(path)
    try:
        meta = read_json(path / META, "Ithaca model description", ModelLoadError)
    except ModelLoadError as e:
        raise ModelLoadError(f"cannot read {e}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelLoadError(f"{path / META} is not an infill Ithaca model")
    if not (path / WEIGHTS).exists():
        raise ModelLoadError(f"Ithaca model {str(path)!r} has no {WEIGHTS}")
    words = meta.get("words")
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise ModelLoadError(f"{path / META}: 'words' must be a list of strings")
    try:
        config = IthacaConfig.from_dict(meta.get("config"))
        _check_shapes(path / WEIGHTS, config)      # before allocating what the config asks
        check_memory(4 * config.parameters(), f"Ithaca model {str(path)!r}")
        net = IthacaNet(config, words)
        state = load_file(str(path / WEIGHTS))
        net.load_state_dict({k: v.float() for k, v in state.items()})
    except Exception as e:  # noqa: BLE001 - bad config, wrong shapes, truncated weights
        raise ModelLoadError(f"cannot load Ithaca model {str(path)!r}: "
                             f"{str(e).strip().splitlines()[0][:200]}") from None
    return IthacaMaskedLM(net, name=str(path), device=device, dtype=dtype)


# ---- the adapter ------------------------------------------------------------------------------
class IthacaMaskedLM(MaskedLM):
    """The :class:`MaskedLM` protocol over an :class:`IthacaNet`.

    ``vocab_size`` 34 (Ithaca scores with the softmax over every symbol); ``mask_id`` and
    ``default_pivot`` are ``-``; ``special_ids`` = {``#``, ``<``, ``^``, ``-``}, so the gap
    candidates are exactly Ithaca's: space, the letters, ``0`` and ``.``.
    """

    supports_logits = True
    unit = "characters"
    mask_in_text = True

    def __init__(self, net: IthacaNet, name: str = "ithaca", device=None, dtype=None):
        self.device = resolve_device(device)
        self.model = net.to(self.device, resolve_dtype(dtype, self.device)).eval()
        self.name = name
        self.vocab_size = len(ALPHABET)
        self.mask_id = self.default_pivot = MISSING
        self.pad_id = PAD
        self.max_length = net.config.max_len
        self.special_ids = frozenset({PAD, SOS, UNK, MISSING})

    def heavy_modules(self, whole: bool = False) -> list:
        return [self.model] if whole else list(self.model.blocks)

    @row_chunked
    @torch.inference_mode()
    def logits(self, input_ids, attention_mask, positions):
        ids = torch.as_tensor(input_ids, device=self.device).long()
        keep = torch.as_tensor(attention_mask, device=self.device).bool()
        pos = torch.as_tensor(positions, device=self.device).long()
        h = self.model.hidden(ids, keep)
        h = h.gather(1, pos[..., None].expand(-1, -1, h.shape[-1]))
        return self.model.head(h).float()

    def log_probs(self, input_ids, attention_mask, positions):
        return torch.log_softmax(self.logits(input_ids, attention_mask, positions), dim=-1)

    # ---- text <-> ids -----------------------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        return [SOS] + [INDEX["-" if c == "?" else c] for c in prepare(text)]

    def detokenize(self, ids) -> str:
        return "".join(ALPHABET[int(i)] for i in ids if int(i) not in (PAD, SOS))

    def encode(self, text: str, gap: int = 1, marker: str = "___") -> Encoding:
        """``?`` = one character to restore (a run of them is one gap), ``marker`` = ``gap`` of
        them, ``-`` = missing and not restored; the network sees both as ``-``. ``segments``
        keep the user's own text between gaps, so :meth:`render` returns it verbatim."""
        if not marker:
            raise InputError("the gap marker must not be empty")
        gap = self.check_gap(gap)
        if not text or not text.strip():
            raise InputError("empty input: nothing to fill")
        parts = re.split("(" + re.escape(marker) + r"|\?+)", text)
        raw, seps = parts[0::2], parts[1::2]
        if not seps:
            raise InputError(f"nothing to restore: mark characters with '?' or a gap with "
                             f"{marker!r}: {text[:60]!r}")
        norm = [prepare(p, strip=False) for p in raw]
        norm[0], norm[-1] = norm[0].lstrip(), norm[-1].rstrip()
        ids, gaps = [SOS], []
        for k, piece in enumerate(norm):
            ids += [INDEX[c] for c in piece]
            if k < len(seps):
                n = gap if seps[k] == marker else len(seps[k])
                gaps.append(list(range(len(ids), len(ids) + n)))
                ids += [MISSING] * n
        segments = list(raw)
        segments[0], segments[-1] = segments[0].lstrip(), segments[-1].rstrip()
        return Encoding(ids, gaps, segments, self.input_notes(text))

    def input_notes(self, text: str) -> list[str]:
        unknown = unknown_characters(text)
        return [f"characters outside Ithaca's alphabet read as unknown (^): "
                f"{''.join(unknown)[:40]}"] if unknown else []

    def render(self, encoding: Encoding, gap_tokens) -> Rendered:
        return render_chars(encoding.segments,
                            ["".join(ALPHABET[int(t)] for t in toks) for toks in gap_tokens],
                            cased=True)

    def token_to_id(self, token: str) -> int:
        if token not in INDEX:
            raise InputError(f"unknown character {token!r}; Ithaca's alphabet is {ALPHABET!r}")
        return INDEX[token]

    def id_to_token(self, token_id: int) -> str:
        return ALPHABET[int(token_id)]
