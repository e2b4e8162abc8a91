"""Aeneas (Assael, Sommerschield et al., Nature 2025) as a :class:`MaskedLM`: a torch port of its
restoration network, for its Latin and Ancient Greek checkpoints.

Aeneas's published checkpoints (``aeneas_117149994_2.pkl``, Latin; ``ithaca_153143996_2.pkl``,
Ancient Greek; google-deepmind/predictingthepast) are pickles of ``{params, model_config,
region_map, alphabet}`` like Ithaca's, read with infill's restricted unpickler
(:mod:`infill.models.flax_checkpoint`): no jax or flax at run time, nothing in the file runs. The
two are told apart by their parameters, not their names.

The network (``model_type`` ``t5``), as Aeneas builds it:

- character embeddings (no word or position table), normalized by Flax's LayerNorm;
- pre-RMSNorm blocks: dense multi-head self-attention with rotary position embeddings over each
  head's whole width (tiled, not interleaved, base 10000), logits q.k *without* 1/sqrt(d) and
  -1e10 at padding keys; then a gated tanh-GELU MLP (``gelu(h W0) * (h W1) W2``), no biases;
- a final LayerNorm (the torso), then heads, each Dense -> GELU -> LayerNorm -> Dense:
  restoration (``x_mask``, then the transposed character embedding / sqrt(E): logits over every
  symbol), the unknown-length head (``logits_unk``: at a ``_``, index 1 = more than one character
  is missing there, 0 = exactly one), a next-sentence head (untrained in the published models),
  and the date (160 decades) and region heads on the first (start) position.

Every attention is dense (the ``t5`` path has no block-sparse pattern, unlike Ithaca's BigBird),
so any length up to 768 characters is one computation.

Text (:func:`prepare`, Aeneas's own preparation): strip the ends, lower-case, one space for each
whitespace run, drop every combining mark after NFD. Nothing else is mapped: a character outside
the alphabet (Latin ``j``, ``w``, digits 1-9, punctuation but ``.``; Greek ``·``, lunate sigma,
Latin letters) is an error, as in Aeneas. ``?`` is one character to restore (the network sees
``-``), ``#`` a lacuna of unknown length (``_``), restored only by Aeneas's own search
(:mod:`infill.decoding.aeneas`); a typed ``-`` is missing and stays. Gaps are filled with space,
the letters or ``0`` (Aeneas's candidates: never ``.``), scored with the softmax over every symbol.
"""
from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from infill.data.files import check_memory
from infill.errors import ConfigError, InputError, ModelLoadError
from infill.models.base import Encoding, MaskedLM, Rendered, render_chars, row_chunked
from infill.models.device import resolve_device, resolve_dtype
from infill.models.flax_checkpoint import (LayerNorm, checked_params, read_checkpoint, short,
                                           size, torch_weights)

__all__ = ["ALPHABETS", "Alphabet", "AeneasConfig", "AeneasNet", "AeneasMaskedLM", "prepare",
           "load_aeneas_checkpoint", "describe_checkpoint"]

PAD, SOS, UNK, SPACE, MISSING, UNKNOWN_LENGTH = range(6)
SPECIALS = "#<^ -_"
MIN_TEXT = 25                 # the shortest text Aeneas restores
RESTORE = "?"                 # one character to restore
LACUNA = "#"                  # a lacuna of unknown length


@dataclass(frozen=True)
class Alphabet:
    """One of Aeneas's two symbol tables: ``symbols[i]`` is id i."""

    language: str
    letters: str

    @property
    def symbols(self) -> str:
        return SPECIALS + self.letters + "0."

    @property
    def index(self) -> dict[str, int]:
        return {c: i for i, c in enumerate(self.symbols)}

    @property
    def candidates(self) -> list[int]:
        """The ids Aeneas's search places: space, the letters and ``0`` (never ``.``)."""
        return [SPACE] + list(range(len(SPECIALS), len(SPECIALS) + len(self.letters) + 1))


ALPHABETS = {"latin": Alphabet("Latin", "abcdefghiklmnopqrstuvxyz"),
             "greek": Alphabet("Ancient Greek", "αβγδεζηθικλμνξοπρςστυφχψωϙϛ")}
"""Aeneas's alphabets by the size of their table (32 Latin, 35 Greek: how a checkpoint says its
language)."""
_WS = re.compile(r"\s+")


def alphabet_for(vocab_size: int) -> Alphabet:
    """The alphabet of a checkpoint with ``vocab_size`` symbols."""
    for a in ALPHABETS.values():
        if len(a.symbols) == vocab_size:
            return a
    raise ConfigError(f"model_config vocab_char_size is {short(vocab_size)}; Aeneas's alphabets "
                      f"have {len(ALPHABETS['latin'].symbols)} (Latin) or "
                      f"{len(ALPHABETS['greek'].symbols)} (Ancient Greek) symbols")


def prepare(text: str, strip: bool = True) -> str:
    """Aeneas's text preparation: strip, lower-case, collapse whitespace, drop combining marks
    (after NFD); ``?``, ``#`` and every other character kept as they are."""
    out = text.strip() if strip else text
    out = _WS.sub(" ", out.lower())
    return "".join(c for c in unicodedata.normalize("NFD", out) if not unicodedata.combining(c))


def check_alphabet(prepared: str, alphabet: Alphabet) -> None:
    """InputError naming the first character of ``prepared`` outside ``alphabet`` (Aeneas
    reads none: its own code raises KeyError)."""
    index = alphabet.index
    for c in prepared:
        if c not in index and c not in (RESTORE, LACUNA):
            raise InputError(f"character {c!r} is not in Aeneas's {alphabet.language} alphabet "
                             f"(space, {alphabet.letters}, 0 . - _ after lower-casing and "
                             "dropping accents)")


# ---- the network ----------------------------------------------------------------------------
@dataclass
class AeneasConfig:
    """Aeneas's ``model_config`` (the keys of the network; the rest are checked or ignored)."""

    emb_dim: int = 384
    qkv_dim: int = 32
    mlp_dim: int = 1536
    num_layers: int = 16
    num_heads: int = 8
    vocab_char_size: int = 32
    output_regions: int = 62
    output_date: int = 160
    max_len: int = 768
    vision: bool = False

    REQUIRED = {"model_type": "t5", "emb_decoder_type": "tied", "activation_fn": "gelu",
                "emb_norm": True, "use_output_mlp": True, "emb_word_disable": True}

    @classmethod
    def from_dict(cls, d) -> "AeneasConfig":
        """Known keys only; ConfigError for sizes out of range or a variant this port lacks."""
        if not isinstance(d, dict):
            raise ConfigError("an Aeneas model_config must be a dict")
        for key, want in cls.REQUIRED.items():
            if key in d and d[key] != want:
                raise ConfigError(f"model_config {key} is {short(d[key])}; this port reads "
                                  f"Aeneas's {want!r} network only")
        out = {}
        for f in fields(cls):
            if f.name not in d:
                continue
            v = d[f.name]
            out[f.name] = bool(v) if f.type == "bool" else size(f.name, v)
        config = cls(**out)
        alphabet_for(config.vocab_char_size)
        if config.qkv_dim % 2:
            raise ConfigError(f"qkv_dim {config.qkv_dim} is odd; rotary embeddings need pairs")
        return config

    @property
    def alphabet(self) -> Alphabet:
        return alphabet_for(self.vocab_char_size)

    def parameters(self) -> int:
        """How many parameters the ported network has (embedding, blocks, norms, heads)."""
        E, HD, M = self.emb_dim, self.num_heads * self.qkv_dim, self.mlp_dim
        block = 2 * E + 4 * E * HD + 3 * E * M
        head = E * E + 3 * E
        outs = E + 2 + 2 + self.output_date + (0 if self.vision else self.output_regions)
        return (self.vocab_char_size * E + 2 * E + self.num_layers * block + 2 * E
                + 5 * head + E * outs + outs)


class RMSNorm(nn.Module):
    """T5's RMSNorm: x / sqrt(mean(x^2) + 1e-6) * scale, no bias."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + self.eps) * self.scale


def rotary_tables(T: int, dim: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """[T, dim] (cos, sin) of position t times 10000^(-2j/dim), angles computed in float32 and
    tiled [angles, angles]."""
    j = torch.arange(dim // 2, dtype=torch.float32, device=device)
    freq = 1.0 / (10000.0 ** (2 * j / dim))
    angles = torch.arange(T, dtype=torch.float32, device=device)[:, None] * freq
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos(), angles.sin()


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x cos + rotate_half(x) sin over the last dim (rotate_half([a, b]) = [-b, a])."""
    a, b = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-b, a], dim=-1) * sin


class Block(nn.Module):
    """RMSNorm -> rotary self-attention -> residual; RMSNorm -> gated GELU MLP -> residual."""

    def __init__(self, c: AeneasConfig):
        super().__init__()
        E, HD = c.emb_dim, c.num_heads * c.qkv_dim
        self.heads = c.num_heads
        self.norm0, self.norm1 = RMSNorm(E), RMSNorm(E)
        self.query, self.key, self.value = (nn.Linear(E, HD, bias=False) for _ in range(3))
        self.out = nn.Linear(HD, E, bias=False)
        self.wi_0, self.wi_1 = nn.Linear(E, c.mlp_dim, bias=False), nn.Linear(E, c.mlp_dim,
                                                                              bias=False)
        self.wo = nn.Linear(c.mlp_dim, E, bias=False)

    def forward(self, x, bias, cos, sin):
        R, T, _ = x.shape
        h = self.norm0(x)
        q, k, v = (m(h).view(R, T, self.heads, -1).transpose(1, 2)
                   for m in (self.query, self.key, self.value))
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype), scale=1.0)
        x = x + self.out(a.transpose(1, 2).reshape(R, T, -1))
        h = self.norm1(x)
        return x + self.wo(F.gelu(self.wi_0(h), approximate="tanh") * self.wi_1(h))


class Head(nn.Module):
    """Aeneas's output MLP: Dense -> GELU -> LayerNorm -> Dense."""

    def __init__(self, dim: int, out: int, inner: int | None = None):
        super().__init__()
        self.dense0 = nn.Linear(inner or dim, dim)
        self.norm = LayerNorm(dim)
        self.dense1 = nn.Linear(dim, out)

    def forward(self, x):
        return self.dense1(self.norm(F.gelu(self.dense0(x), approximate="tanh")))


class AeneasNet(nn.Module):
    """Aeneas's encoder and heads (module docstring)."""

    def __init__(self, config: AeneasConfig):
        super().__init__()
        c = self.config = config
        E = c.emb_dim
        self.char_embeddings = nn.Embedding(c.vocab_char_size, E)
        self.emb_norm = LayerNorm(E)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.num_layers))
        self.encoder_norm = LayerNorm(E)
        self.x_mask, self.unk, self.nsp = Head(E, E), Head(E, 2), Head(E, 2)
        self.date = Head(E, c.output_date)
        self.region = None if c.vision else Head(E, c.output_regions)

    def torso(self, ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """[R, T, E] the final LayerNorm's output; ``keep`` [R, T] is False at padding."""
        T = ids.shape[1]
        x = self.emb_norm(self.char_embeddings(ids))
        cos, sin = (t.to(x.dtype) for t in rotary_tables(T, self.config.qkv_dim, ids.device))
        zero = torch.zeros((), dtype=torch.float32, device=ids.device)
        bias = torch.where(keep[:, None, None, :], zero, zero - 1e10)      # [R, 1, 1, T]
        for block in self.blocks:
            x = block(x, bias, cos, sin)
        return self.encoder_norm(x)

    def mask_logits(self, torso: torch.Tensor) -> torch.Tensor:
        """Restoration logits over every symbol (the tied embedding / sqrt(E))."""
        w = self.char_embeddings.weight
        return self.x_mask(torso) @ w.T / math.sqrt(w.shape[1])

    def forward(self, ids: torch.Tensor, keep: torch.Tensor) -> dict[str, torch.Tensor]:
        """Every output Aeneas's ``Model`` returns: ``mask`` [R, T, V], ``unk`` and ``nsp``
        [R, T, 2], ``date`` [R, 160], ``region`` [R, regions] (None for a vision model) and
        the ``torso`` [R, T, E]."""
        t = self.torso(ids, keep)
        first = t[:, 0]
        return {"mask": self.mask_logits(t), "unk": self.unk(t), "nsp": self.nsp(t),
                "date": self.date(first),
                "region": None if self.region is None else self.region(first), "torso": t}


# ---- Aeneas's checkpoint ----------------------------------------------------------------------
HEADS = {"x_mask": "x_mask", "logits_unk": "unk", "logits_nsp": "nsp", "logits_date": "date",
         "logits_region": "region"}


def _flax_shapes(c: AeneasConfig) -> dict[str, tuple]:
    """Every parameter the port reads, by its path in Aeneas's params, with its shape."""
    E, HD, M = c.emb_dim, c.num_heads * c.qkv_dim, c.mlp_dim
    shapes = {"char_embeddings/embedding": (c.vocab_char_size, E),
              "text_char_emb_norm/scale": (E,), "text_char_emb_norm/bias": (E,),
              f"encoder_norm_{c.num_layers - 1}/scale": (E,),
              f"encoder_norm_{c.num_layers - 1}/bias": (E,)}
    for i in range(c.num_layers):
        b = f"encoderblock_{i}/"
        shapes[b + "pre_self_attention_layer_norm/scale"] = (E,)
        shapes[b + "pre_mlp_layer_norm/scale"] = (E,)
        for m in ("query", "key", "value"):
            shapes[f"{b}self_attention/{m}/kernel"] = (E, HD)
        shapes[b + "self_attention/out/kernel"] = (HD, E)
        shapes[b + "mlp/wi_0/kernel"] = shapes[b + "mlp/wi_1/kernel"] = (E, M)
        shapes[b + "mlp/wo/kernel"] = (M, E)
    outs = {"x_mask": E, "logits_unk": 2, "logits_nsp": 2, "logits_date": c.output_date,
            "logits_region": c.output_regions}
    for head, out in outs.items():
        if head == "logits_region" and c.vision:
            continue
        shapes.update({f"{head}/Dense_0/kernel": (E, E), f"{head}/Dense_0/bias": (E,),
                       f"{head}/LayerNorm_0/scale": (E,), f"{head}/LayerNorm_0/bias": (E,),
                       f"{head}/Dense_1/kernel": (E, out), f"{head}/Dense_1/bias": (out,)})
    return shapes


def _state_from_flax(flat: dict[str, np.ndarray], c: AeneasConfig) -> dict[str, torch.Tensor]:
    """Aeneas's parameters (checked by :func:`_flax_shapes`) -> an :class:`AeneasNet` state."""
    t = torch_weights({k: flat[k] for k in _flax_shapes(c)})
    last = f"encoder_norm_{c.num_layers - 1}/"
    state = {"char_embeddings.weight": t["char_embeddings/embedding"],
             "emb_norm.scale": t["text_char_emb_norm/scale"],
             "emb_norm.bias": t["text_char_emb_norm/bias"],
             "encoder_norm.scale": t[last + "scale"], "encoder_norm.bias": t[last + "bias"]}
    for i in range(c.num_layers):
        b, s = f"encoderblock_{i}/", f"blocks.{i}."
        state[s + "norm0.scale"] = t[b + "pre_self_attention_layer_norm/scale"]
        state[s + "norm1.scale"] = t[b + "pre_mlp_layer_norm/scale"]
        for m in ("query", "key", "value", "out"):
            state[f"{s}{m}.weight"] = t[f"{b}self_attention/{m}/kernel"].T
        for m in ("wi_0", "wi_1", "wo"):
            state[f"{s}{m}.weight"] = t[f"{b}mlp/{m}/kernel"].T
    for head, name in HEADS.items():
        if head == "logits_region" and c.vision:
            continue
        for src, dst in (("Dense_0", "dense0"), ("Dense_1", "dense1")):
            state[f"{name}.{dst}.weight"] = t[f"{head}/{src}/kernel"].T
            state[f"{name}.{dst}.bias"] = t[f"{head}/{src}/bias"]
        state[f"{name}.norm.scale"] = t[f"{head}/LayerNorm_0/scale"]
        state[f"{name}.norm.bias"] = t[f"{head}/LayerNorm_0/bias"]
    return {k: v.contiguous() for k, v in state.items()}


def _read_checkpoint(path: str | Path, ckpt: dict | None = None
                     ) -> tuple[AeneasConfig, dict, dict]:
    """(config, flat params, region_map) of an Aeneas pickle (``ckpt``: already unpickled),
    every shape checked."""
    where = f"Aeneas checkpoint {str(path)!r}"
    if ckpt is None:
        _, ckpt = read_checkpoint(path)
    try:
        config = AeneasConfig.from_dict(ckpt["model_config"])
    except (ConfigError, TypeError) as e:
        raise ModelLoadError(f"{where}: {e}") from None
    check_memory(2 * 4 * config.parameters(), where)     # float32 arrays, then their torch copy
    flat = checked_params(ckpt, _flax_shapes(config), where)
    regions = ckpt.get("region_map")
    return config, flat, regions if isinstance(regions, dict) else {}


def load_aeneas_checkpoint(path: str | Path, device=None, dtype=None, ckpt: dict | None = None,
                           **options) -> "AeneasMaskedLM":
    """Load an Aeneas pickle safely (``--model X.pkl``; ``ckpt``: the file already unpickled)."""
    if options:
        raise ConfigError(f"option(s) {', '.join(sorted(options))} do not apply to the Aeneas "
                          f"checkpoint {str(path)!r}")
    config, flat, _ = _read_checkpoint(path, ckpt)
    net = AeneasNet(config)
    net.load_state_dict(_state_from_flax(flat, config))
    return AeneasMaskedLM(net, name=str(path), device=device, dtype=dtype)


def describe_checkpoint(path: str | Path, ckpt: dict | None = None) -> dict:
    """What an Aeneas checkpoint holds (for ``infill models --model X.pkl``)."""
    config, flat, regions = _read_checkpoint(path, ckpt)
    used = _flax_shapes(config)
    names = regions.get("names")
    return {"name": str(path), "family": "aeneas", "model": "Aeneas",
            "language": config.alphabet.language, "layers": config.num_layers,
            "architecture": f"{config.num_layers} layers, {config.num_heads} heads of "
                            f"{config.qkv_dim}, width {config.emb_dim}, gated MLP "
                            f"{config.mlp_dim}, rotary positions, dense attention",
            "max_length": config.max_len, "alphabet": config.alphabet.symbols,
            "regions": len(names) if isinstance(names, (list, tuple)) else config.output_regions,
            "parameters": int(sum(int(np.prod(flat[k].shape)) for k in used)),
            "parameters_in_file": int(sum(int(np.prod(getattr(v, "shape", ())))
                                          for v in flat.values())),
            "config": asdict(config)}


# ---- the adapter ------------------------------------------------------------------------------
class AeneasMaskedLM(MaskedLM):
    """The :class:`MaskedLM` protocol over an :class:`AeneasNet`.

    ``vocab_size`` = the alphabet's size (Aeneas scores with the softmax over every symbol);
    ``mask_id`` and ``default_pivot`` are ``-``; every symbol but space, the letters and ``0`` is
    special, so the gap candidates are exactly Aeneas's. :meth:`restoration_log_probs` gives
    its own search the unknown-length head too.
    """

    supports_logits = True
    unit = "characters"
    mask_in_text = True
    #: the defaults a fill takes when not chosen (:func:`infill.filling.defaults.recommendation`)
    recommends = {"scorer": "standard", "order": "any-order",
                  "why": "Aeneas's own search, which also restores lacunae of unknown length (#)"}

    def __init__(self, net: AeneasNet, name: str = "aeneas", device=None, dtype=None):
        self.device = resolve_device(device)
        self.model = net.to(self.device, resolve_dtype(dtype, self.device)).eval()
        self.name = name
        self.letters = net.config.alphabet
        self.vocab_size = len(self.letters.symbols)
        self.mask_id = self.default_pivot = MISSING
        self.pad_id = PAD
        self.max_length = net.config.max_len
        self.special_ids = frozenset(set(range(self.vocab_size)) - set(self.letters.candidates))

    @property
    def language(self) -> str:
        return self.letters.language

    def heavy_modules(self, whole: bool = False) -> list:
        return [self.model] if whole else list(self.model.blocks)

    def _torso_at(self, input_ids, attention_mask, positions) -> torch.Tensor:
        ids = torch.as_tensor(input_ids, device=self.device).long()
        keep = torch.as_tensor(attention_mask, device=self.device).bool()
        pos = torch.as_tensor(positions, device=self.device).long()
        t = self.model.torso(ids, keep)
        return t.gather(1, pos[..., None].expand(-1, -1, t.shape[-1]))

    @row_chunked
    @torch.inference_mode()
    def logits(self, input_ids, attention_mask, positions):
        return self.model.mask_logits(self._torso_at(input_ids, attention_mask, positions)).float()

    def log_probs(self, input_ids, attention_mask, positions):
        return torch.log_softmax(self.logits(input_ids, attention_mask, positions), dim=-1)

    @row_chunked
    @torch.inference_mode()
    def _mask_and_unk(self, input_ids, attention_mask, positions):
        t = self._torso_at(input_ids, attention_mask, positions)
        return torch.cat([self.model.mask_logits(t).float(), self.model.unk(t).float()], -1)

    def restoration_log_probs(self, input_ids, attention_mask, positions,
                              temperature: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
        """([R, P, V] log-softmax of the restoration logits / ``temperature``, [R, P, 2]
        log-softmax of the unknown-length logits) at ``positions``: one forward pass (in chunks
        of rows on a CPU), float32."""
        both = self._mask_and_unk(input_ids, attention_mask, positions)
        V = self.vocab_size
        return (torch.log_softmax(both[..., :V] / temperature, dim=-1),
                torch.log_softmax(both[..., V:], dim=-1))

    # ---- text <-> ids -----------------------------------------------------------------------
    def prepared(self, text: str, strip: bool = True) -> str:
        """``text`` as Aeneas prepares it, checked against the alphabet."""
        out = prepare(text, strip)
        check_alphabet(out, self.letters)
        return out

    def tokenize(self, text: str) -> list[int]:
        index = self.letters.index
        return [SOS] + [index[{"?": "-", "#": "_"}.get(c, c)] for c in self.prepared(text)]

    def detokenize(self, ids) -> str:
        return "".join(self.letters.symbols[int(i)] for i in ids if int(i) not in (PAD, SOS))

    def encode(self, text: str, gap: int = 1, marker: str = "___") -> Encoding:
        """``?`` = one character to restore (a run of them is one gap), ``marker`` = ``gap`` of
        them, ``-`` = missing and not restored. ``segments`` are the prepared text between the
        gaps (Aeneas writes its restorations in it). A ``#`` (a lacuna of unknown length) is
        restored only by Aeneas's own search, not here."""
        if not marker:
            raise InputError("the gap marker must not be empty")
        gap = self.check_gap(gap)
        if not text or not text.strip():
            raise InputError("empty input: nothing to fill")
        if LACUNA in text:
            raise InputError("'#' marks a lacuna of unknown length, which only Aeneas's own "
                             "search restores (order any-order, scorer standard, no sampling)",
                             field="order")
        parts = re.split("(" + re.escape(marker) + r"|\?+)", text)
        raw, seps = parts[0::2], parts[1::2]
        if not seps:
            raise InputError(f"nothing to restore: mark characters with '?' or a gap with "
                             f"{marker!r}: {text[:60]!r}")
        norm = [self.prepared(p, strip=False) for p in raw]
        norm[0], norm[-1] = norm[0].lstrip(), norm[-1].rstrip()
        index, ids, gaps = self.letters.index, [SOS], []
        for k, piece in enumerate(norm):
            ids += [index[c] for c in piece]
            if k < len(seps):
                n = gap if seps[k] == marker else len(seps[k])
                gaps.append(list(range(len(ids), len(ids) + n)))
                ids += [MISSING] * n
        return Encoding(ids, gaps, norm, [])

    def restore_input(self, text: str, gap: int = 1, marker: str = "___"
                      ) -> tuple[list[int], list[int], list[int]]:
        """What Aeneas's own search restores in ``text``: (ids, start symbol first; the restore
        positions; the gap each belongs to). ``?`` is one character (a run of them one gap),
        ``marker`` ``gap`` of them, ``#`` a lacuna of unknown length (a gap of its own). As in
        Aeneas, the prepared text must be 25 to 767 characters long."""
        if not marker:
            raise InputError("the gap marker must not be empty")
        text = text.replace(marker, RESTORE * self.check_gap(gap))
        prepared = self.prepared(text)
        if not MIN_TEXT <= len(prepared) < self.max_length:
            raise InputError(f"Aeneas restores texts of {MIN_TEXT} to {self.max_length - 1} "
                             f"characters (after its text preparation); this one has "
                             f"{len(prepared)}", field="window")
        index, ids, positions, gaps = self.letters.index, [SOS], [], []
        for i, c in enumerate(prepared, 1):
            if c in (RESTORE, LACUNA):
                joins = c == RESTORE and prepared[i - 2:i - 1] == RESTORE and i > 1
                gaps.append(gaps[-1] if joins else len(set(gaps)))
                positions.append(i)
            ids.append(index["-" if c == RESTORE else "_" if c == LACUNA else c])
        if not positions:
            raise InputError("nothing to restore: mark characters with '?', a lacuna of unknown "
                             f"length with '#' or a gap with {marker!r}: {text[:60]!r}")
        return ids, positions, gaps

    def render(self, encoding: Encoding, gap_tokens) -> Rendered:
        return render_chars(encoding.segments, ["".join(self.letters.symbols[int(t)] for t in toks)
                                                for toks in gap_tokens], cased=True)

    def token_to_id(self, token: str) -> int:
        index = self.letters.index
        if token not in index:
            raise InputError(f"unknown character {token!r}; Aeneas's {self.language} alphabet is "
                             f"{self.letters.symbols!r}")
        return index[token]

    def id_to_token(self, token_id: int) -> str:
        return self.letters.symbols[int(token_id)]
