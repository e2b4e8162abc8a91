"""A small character-level transformer MLM (Ithaca-style) and its :class:`MaskedLM` adapter.

The network: character embeddings + learned positional embeddings (-> optionally a residual
1-D convolution over neighbouring characters, ``conv_kernel``) -> pre-norm
``nn.TransformerEncoder`` -> layer norm -> a linear head over the *output* alphabet only (letters,
space, numeral, punctuation, ``-`` and unknown; not the mask, padding or start symbols).

Optionally (``n_words`` > 0) a :class:`WordStream` adds Ithaca's word embedding to the character
embedding: each character of a known word carries that word's embedding, recomputed from the
characters in every forward pass.

On disk a model is a directory with ``charmodel.json`` (format, architecture, alphabet, and the
word list when there is a word stream) and ``model.safetensors`` (weights, stored in fp16 by default).

Input conventions of :meth:`CharMaskedLM.encode`: the text is normalized
(:func:`infill.data.greek.normalize`); every ``?`` is one character to restore (a run of ``?`` is one
gap); every gap marker (``___``) becomes ``gap`` characters to restore; ``-`` is a missing
character that stays in the input as context and is not restored.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from torch import nn

from infill.data.files import check_memory, read_json
from infill.errors import ConfigError, InputError, ModelLoadError
from infill.data.greek import (GREEK, Alphabet, divider_of, lunate_of, normalize,
                               unknown_characters)
from infill.data.latin import letters_by_script, stone_text
from infill.models.base import (Encoding, MaskedLM, Rendered, follow_case, in_capitals,
                                 render_chars, row_chunked)
from infill.models.continua import Divider, divided_note, undivided
from infill.models.device import resolve_device, resolve_dtype
from infill.models.lexicon import LEXICON_FILE, load_lexicon
from infill.models.proper_names import NAMES_FILE, load_names, with_names
from infill.models.gate import GATE_FILE, load_gate
from infill.models.own_text import own_text_from
from infill.models.own_words import own_words_from
from infill.models.phrases import PAIRS_FILE, PHRASES_FILE, load_pairs, load_phrases
from infill.models.shapes import SHAPES_FILE, load_shapes
from infill.models.uv import one_letter, read_uv, uv_note, written_as

__all__ = ["CharConfig", "CharTransformer", "CharMaskedLM", "MIXTURES", "WordStream", "save_char",
           "load_char", "mixing_order", "word_code"]

FORMAT = "infill-charmodel"
VERSION = 1
WEIGHTS = "model.safetensors"
MIXTURES = ("lexicon", "pairs", "names", "shapes", "phrases", "gate", "own_words", "own_text")
"""The parts a character model mixes into the network's conditional, in their default order
(builtin:greek's); a model's ``charmodel.json`` may name another (``"mixtures"``)."""


@dataclass
class CharConfig:
    """Architecture of a :class:`CharTransformer`."""

    n_inputs: int = len(GREEK)        # input symbols (outputs + mask, pad, start)
    n_outputs: int = GREEK.n_outputs  # output classes
    pad_id: int = GREEK.pad_id
    d_model: int = 256
    n_layers: int = 4
    n_heads: int = 4
    d_ff: int = 1024
    max_length: int = 256             # positions, start symbol included
    dropout: float = 0.1
    conv_kernel: int = 0              # >0: a residual 1-D convolution over neighbouring chars
    n_words: int = 0                  # >0: a word stream over this many words (+ unknown)


WORD_MAX = 13   # longest word the word stream knows: 13 base-26 digits fit in an int64
MAX_LAYERS = 1024
"""The most layers a ``charmodel.json`` may declare."""
MAX_SIZE = 2 ** 31 - 1
"""The largest width, length or count a ``charmodel.json`` may declare."""


def check_config(raw, where: str) -> CharConfig:
    """The :class:`CharConfig` a ``charmodel.json`` declares, every number checked (whole,
    bounded, at most :data:`MAX_LAYERS` layers) and the network's size checked against memory
    (:func:`~infill.data.files.check_memory`) before anything is built."""
    if not isinstance(raw, dict) or not set(raw) <= {f.name for f in fields(CharConfig)}:
        raise ModelLoadError(f"{where}: 'config' must be an object of CharConfig's fields")
    config = CharConfig(**raw)
    for f in fields(CharConfig):
        v = getattr(config, f.name)
        rate = f.name == "dropout"
        number = isinstance(v, (int, float) if rate else int) and not isinstance(v, bool)
        if not number or not (0 <= v < 1 if rate else 0 <= v <= MAX_SIZE):
            want = "a rate in [0, 1)" if rate else f"a whole number from 0 to {MAX_SIZE:,}"
            shown = "a huge number" if isinstance(v, int) and abs(v) >= 10 ** 30 else repr(v)[:40]
            raise ModelLoadError(f"{where}: config {f.name!r} must be {want}, got {shown}")
    if config.n_layers > MAX_LAYERS:
        raise ModelLoadError(f"{where}: {config.n_layers:,} layers, more than the {MAX_LAYERS:,} "
                             "a model may have")
    check_memory(4 * _parameters(config), f"the character model of {where}")
    return config


def _parameters(c: CharConfig) -> int:
    """How many parameters a :class:`CharTransformer` of ``c`` has (roughly: weights only)."""
    d = c.d_model
    rows = c.n_inputs + c.max_length + c.n_words + 1 + c.n_outputs
    return rows * d + c.n_layers * (4 * d * d + 2 * d * c.d_ff) + c.conv_kernel * d * d


def word_code(word: str, digits: dict[str, int]) -> int:
    """The integer a word stream keys ``word`` by: its characters' digits (1..25) in base 26,
    first character least significant; -1 for a word the stream cannot hold."""
    if not 1 <= len(word) <= WORD_MAX or any(c not in digits for c in word):
        return -1
    return sum(digits[c] * 26 ** k for k, c in enumerate(word))


class WordStream(nn.Module):
    """Ithaca's word input: every character of a word (a maximal run of letters and numerals,
    Python's ``\\w+`` on normalized text) that is in ``words`` gets that word's embedding, every
    other character -- spaces, punctuation, ``-``, ``?``, a word not in the list -- the unknown
    word's (id 0). A mask or a missing character breaks a word. The ids are computed from the
    input ids inside the forward, with tensor ops, so every hypothesis gets its own."""

    def __init__(self, words: list[str], alphabet: Alphabet, d_model: int):
        super().__init__()
        chars = alphabet.letters + alphabet.numeral
        if len(chars) > 25:
            raise ConfigError("a word stream needs at most 25 word characters")
        digits = {c: k + 1 for k, c in enumerate(chars)}
        digit = torch.zeros(len(alphabet), dtype=torch.long)
        for c, d in digits.items():
            digit[alphabet.index[c]] = d
        codes = [word_code(w, digits) for w in words]
        if min(codes, default=0) < 0 or len(set(codes)) != len(codes):
            raise ConfigError(f"word stream words must be distinct runs of 1-{WORD_MAX} letters")
        codes_t = torch.tensor(codes, dtype=torch.long)
        order = codes_t.argsort()
        self.words = list(words)
        self.register_buffer("digit", digit, persistent=False)
        self.register_buffer("codes", codes_t[order], persistent=False)
        self.register_buffer("code_ids", order + 1, persistent=False)
        self.register_buffer("powers", 26 ** torch.arange(WORD_MAX, dtype=torch.long),
                             persistent=False)
        self.embed = nn.Embedding(len(words) + 1, d_model)
        nn.init.zeros_(self.embed.weight)     # starts as a no-op (a char model's weights carry over)

    def ids(self, input_ids: torch.Tensor) -> torch.Tensor:
        """[B, T] word ids of every character (0 = unknown / not in a word)."""
        d = self.digit[input_ids]                                           # [B, T]
        w = d > 0
        B, T = d.shape
        pos = torch.arange(T, device=d.device).expand(B, T)
        start = w & ~torch.nn.functional.pad(w, (1, 0))[:, :-1]
        first = torch.where(start, pos, 0).cummax(dim=1).values             # run's first position
        run = start.long().cumsum(dim=1)                                    # run index (0: none)
        off = pos - first
        part = torch.where(w & (off < WORD_MAX), d * self.powers[off.clamp(max=WORD_MAX - 1)], 0)
        code = torch.zeros(B, T + 1, dtype=torch.long, device=d.device).scatter_add_(1, run, part)
        length = torch.zeros(B, T + 1, dtype=torch.long, device=d.device).scatter_add_(
            1, run, w.long())
        code, length = code.gather(1, run), length.gather(1, run)
        if not len(self.codes):
            return torch.zeros_like(d)
        k = torch.searchsorted(self.codes, code).clamp(max=len(self.codes) - 1)
        found = w & (length <= WORD_MAX) & (self.codes[k] == code)
        return torch.where(found, self.code_ids[k], 0)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.embed(self.ids(input_ids))


class CharTransformer(nn.Module):
    """Transformer encoder over characters with an output head over the output alphabet."""

    def __init__(self, config: CharConfig, words: list[str] | None = None,
                 alphabet: Alphabet = GREEK):
        super().__init__()
        self.config = config
        c = config
        if c.n_words != len(words or []):
            raise ConfigError(f"the config asks for {c.n_words} words, {len(words or [])} given")
        # the word stream's embedding is added to the character's (same width, zero at start)
        self.words = WordStream(words, alphabet, c.d_model) if c.n_words else None
        self.embed = nn.Embedding(c.n_inputs, c.d_model, padding_idx=c.pad_id)
        self.position = nn.Embedding(c.max_length, c.d_model)
        self.dropout = nn.Dropout(c.dropout)
        # Optional local mixing before attention: gives every position its neighbours at once
        # (an n-gram view), which a small model otherwise needs many steps to learn.
        self.conv = (nn.Conv1d(c.d_model, c.d_model, c.conv_kernel, padding=c.conv_kernel // 2)
                     if c.conv_kernel else None)
        layer = nn.TransformerEncoderLayer(c.d_model, c.n_heads, c.d_ff, c.dropout,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, c.n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.n_outputs)
        nn.init.normal_(self.embed.weight, std=0.02)
        nn.init.normal_(self.position.weight, std=0.02)

    def hidden(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """[B, T, d_model] final hidden states (after the last layer norm)."""
        T = input_ids.shape[1]
        pos = torch.arange(T, device=input_ids.device)
        keep = attention_mask.bool()
        h = self.embed(input_ids) + self.position(pos)[None]
        if self.words is not None:
            h = h + self.words(input_ids)
        if self.conv is not None:
            x = h.masked_fill(~keep[..., None], 0.0).transpose(1, 2)
            h = h + nn.functional.gelu(self.conv(x)).transpose(1, 2)
        h = self.encoder(self.dropout(h), src_key_padding_mask=~keep)
        return self.norm(h)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """[B, T, n_outputs] logits at every position."""
        return self.head(self.hidden(input_ids, attention_mask))


def save_char(model: CharTransformer, path: str | Path, alphabet: Alphabet = GREEK,
              dtype: torch.dtype = torch.float16, extra: dict | None = None) -> Path:
    """Write ``charmodel.json`` + ``model.safetensors`` (weights cast to ``dtype``) into ``path``."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    meta = {"format": FORMAT, "version": VERSION, "config": asdict(model.config),
            "alphabet": alphabet.to_dict(), "dtype": str(dtype).replace("torch.", ""),
            **(extra or {})}
    if model.words is not None:
        meta["words"] = model.words.words
    state = {k: v.detach().to("cpu", dtype).contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(path / WEIGHTS))
    (path / "charmodel.json").write_text(json.dumps(meta, indent=1))
    return path


def load_char(path: str | Path, device=None, dtype=None, **options) -> "CharMaskedLM":
    """Load a character model directory (what :func:`infill.load_model` calls)."""
    if options:
        raise ConfigError(f"option(s) {', '.join(sorted(options))} do not apply to character "
                          f"model {str(path)!r}")
    path = Path(path)
    meta = read_json(path / "charmodel.json", "character model description", ModelLoadError)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelLoadError(f"{path / 'charmodel.json'} is not an infill character model")
    if not (path / WEIGHTS).exists():
        raise ModelLoadError(f"character model {str(path)!r} has no {WEIGHTS}")
    config = check_config(meta.get("config"), str(path / "charmodel.json"))
    try:
        alphabet = Alphabet.from_dict(meta["alphabet"])
        model = CharTransformer(config, meta.get("words"), alphabet)
        state = load_file(str(path / WEIGHTS))
        model.load_state_dict({k: v.float() for k, v in state.items()})
    except Exception as e:  # noqa: BLE001 - wrong shapes, truncated weights (SafetensorError)
        raise ModelLoadError(f"cannot load character model {str(path)!r}: {e}") from None
    wrapped = CharMaskedLM(model, alphabet, name=str(path), device=device, dtype=dtype)
    wrapped.mixed = mixing_order(meta.get("mixtures", MIXTURES), path / "charmodel.json")
    if (path / LEXICON_FILE).is_file():
        wrapped.lexicon = load_lexicon(path / LEXICON_FILE, alphabet)
    if (path / PAIRS_FILE).is_file() and wrapped.lexicon is not None:
        wrapped.pairs = load_pairs(path / PAIRS_FILE, alphabet, wrapped.lexicon)
    if (path / NAMES_FILE).is_file() and wrapped.pairs is not None:
        wrapped.names = load_names(path / NAMES_FILE, alphabet, wrapped.pairs)
        if "names" in wrapped.mixed:
            wrapped.lexicon = with_names(wrapped.lexicon, wrapped.names)
    if (path / SHAPES_FILE).is_file():
        wrapped.shapes = load_shapes(path / SHAPES_FILE, alphabet)
    if (path / PHRASES_FILE).is_file():
        wrapped.phrases = load_phrases(path / PHRASES_FILE, alphabet)
    if (path / GATE_FILE).is_file():
        wrapped.gate = load_gate(path, alphabet)
    if meta.get("pool_mirrors", False) is not False:
        pool_mirrors(wrapped, meta["pool_mirrors"], path / "charmodel.json")
    if "own_text" in meta:
        if "own_text" not in wrapped.mixed:
            raise ModelLoadError(f"{path / 'charmodel.json'}: \"own_text\" is described but "
                                 f"\"mixtures\" does not mix it")
        wrapped.own_text = own_text_from(meta["own_text"], alphabet, path / "charmodel.json")
    if "own_words" in meta:
        if "own_words" not in wrapped.mixed:
            raise ModelLoadError(f"{path / 'charmodel.json'}: \"own_words\" is described but "
                                 f"\"mixtures\" does not mix it")
        wrapped.own_words = own_words_from(meta["own_words"], alphabet, path / "charmodel.json")
    return wrapped


def pool_mirrors(model: "CharMaskedLM", given, where: Path) -> None:
    """``charmodel.json``'s ``"pool_mirrors": true``: the model's phrase memories (its own, each
    gate source's) pool each one-sided level with its mirror
    (:meth:`~infill.models.phrases.PhraseMemory.pooled`); else :class:`ModelLoadError`."""
    if given is not True:
        raise ModelLoadError(f"{where}: \"pool_mirrors\" must be true or false, not {given!r}")
    memories = [model.phrases] + [s.phrases for s in (model.gate.sources if model.gate else [])]
    if not any(m is not None for m in memories):
        raise ModelLoadError(f"{where}: \"pool_mirrors\" is set but the model has no phrase "
                             "memory")
    for memory in memories:
        if memory is not None:
            memory.pool = True


def mixing_order(names, where: str | Path) -> tuple[str, ...]:
    """The parts a model mixes, in order: ``names`` (``charmodel.json``'s ``"mixtures"``), each
    one of :data:`MIXTURES` and at most once; else :class:`ModelLoadError` naming ``where``."""
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ModelLoadError(f"{where}: \"mixtures\" must be a list of names of {list(MIXTURES)}")
    unknown = [n for n in names if n not in MIXTURES]
    if unknown:
        raise ModelLoadError(f"{where}: unknown mixture(s) {', '.join(map(repr, unknown))} "
                             f"(known: {', '.join(MIXTURES)})")
    if len(set(names)) != len(names):
        raise ModelLoadError(f"{where}: a mixture named twice in \"mixtures\": {list(names)}")
    return tuple(names)


class CharMaskedLM(MaskedLM):
    """The :class:`MaskedLM` protocol over a :class:`CharTransformer` and its :class:`Alphabet`.

    ``device`` None -> CUDA when available, else CPU; ``dtype`` None -> float32 (half only on CUDA).

    ``vocab_size`` is the number of output classes; ``mask_id`` (the ``?`` symbol) is an input id
    >= ``vocab_size``; ``default_pivot`` is ``-`` (missing), which is never a training label;
    ``special_ids`` = {unknown, ``-``}: never placed in a gap unless ``allow_special``.

    With a ``lexicon.tsv`` in its directory, q is the network's mixed with the lexicon's word
    marginals (:mod:`infill.models.lexicon`); with a ``pairs.tsv`` beside it, then with the
    words seen beside a word's neighbours, with a ``names.tsv`` (and ``pairs.tsv``) the names
    as a class (:mod:`infill.models.proper_names`; loaded, but mixed only while ``"names"`` is in
    :attr:`mixed`), with a ``shapes.safetensors``, the shape memory (the phrase memory over
    the lengths of the words around, :mod:`infill.models.shapes`), and with a
    ``phrases.safetensors``, with its phrase memory (:mod:`infill.models.phrases`), and with a
    ``gate.json``, with one phrase and shape memory per corpus, each weighed by how like
    that corpus the input is (:mod:`infill.models.gate`); with an ``"own_words"`` in its
    ``charmodel.json``, with the lexicon of each row's own whole words
    (:mod:`infill.models.own_words`: a broken word the same inscription keeps whole), and with an
    ``"own_text"``, last with the memory of each row's own text (:mod:`infill.models.own_text`:
    a lost stretch found where the same inscription keeps it, the most particular evidence,
    so it has the last word). That is the default order,
    :data:`MIXTURES`; a model's ``charmodel.json`` may give its own (``"mixtures"``, in
    :attr:`mixed`: builtin:latin mixes its shape memory first).
    """

    supports_logits = True
    unit = "characters"
    lexicon = None
    pairs = None
    phrases = None
    names = None
    shapes = None
    gate = None
    own_text = None
    own_words = None
    _uv = None                                                          # its u/v reading, once
    _divider = None                                                     # its word division, once
    mixed = MIXTURES                                                    # their order into q

    def __init__(self, model: CharTransformer, alphabet: Alphabet = GREEK, name: str = "char",
                 device=None, dtype=None):
        if model.config.n_outputs != alphabet.n_outputs or model.config.n_inputs != len(alphabet):
            raise ModelLoadError("character model and alphabet sizes disagree")
        self.device = resolve_device(device)
        self.model = model.to(self.device, resolve_dtype(dtype, self.device)).eval()
        self.alphabet = alphabet
        self.name = name
        self.vocab_size = alphabet.n_outputs
        self.mask_id = alphabet.mask_id
        self.pad_id = alphabet.pad_id
        self.max_length = model.config.max_length
        self.special_ids = frozenset({alphabet.unk_id, alphabet.missing_id})
        self.default_pivot = alphabet.missing_id

    @property
    def n_input_ids(self) -> int:
        return len(self.alphabet)

    def heavy_modules(self, whole: bool = False) -> list:
        return [self.model.encoder]

    def _fastpath(self) -> bool:
        """nn.TransformerEncoderLayer's fused inference path reads its linears' weights as
        tensors, which int8-quantized linears do not have: it is off for a quantized model."""
        return self.acceleration.get("quantize") is None and \
            all(isinstance(layer.linear1, nn.Linear) for layer in self.model.encoder.layers)

    # ---- the one model call ---------------------------------------------------------------
    @row_chunked
    @torch.inference_mode()
    def _scores(self, input_ids, attention_mask, positions):
        ids = torch.as_tensor(input_ids, device=self.device)
        attn = torch.as_tensor(attention_mask, device=self.device).bool()
        pos = torch.as_tensor(positions, device=self.device).long()
        if self._fastpath():
            h = self.model.hidden(ids, attn)                               # [R, T, d]
        else:
            before = torch.backends.mha.get_fastpath_enabled()
            torch.backends.mha.set_fastpath_enabled(False)
            try:
                h = self.model.hidden(ids, attn)
            finally:
                torch.backends.mha.set_fastpath_enabled(before)
        h = h.gather(1, pos[..., None].expand(-1, -1, h.shape[-1]))        # [R, P, d]
        return self.model.head(h).float()

    def log_probs(self, input_ids, attention_mask, positions):
        logq = torch.log_softmax(self._scores(input_ids, attention_mask, positions), dim=-1)
        for part in (getattr(self, name) for name in self.mixed):
            if part is not None:
                logq = part.mix(logq, torch.as_tensor(input_ids), torch.as_tensor(positions))
        return logq

    def logits(self, input_ids, attention_mask, positions):
        """The network's scores; with a lexicon, word pairs or a phrase memory, the mixture's
        log q (it has no unnormalized form)."""
        if any(getattr(self, name) is not None for name in self.mixed):
            return self.log_probs(input_ids, attention_mask, positions)
        return self._scores(input_ids, attention_mask, positions)

    # ---- text <-> ids -----------------------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        a = self.alphabet
        return [a.start_id] + a.encode(normalize(stone_text(text, a), unknown=True, alphabet=a))

    def detokenize(self, ids) -> str:
        return self.alphabet.decode(int(i) for i in ids)

    def encode(self, text: str, gap: int = 1, marker: str = "___") -> Encoding:
        """``?`` = one character to restore (a run of them is one gap), ``marker`` = ``gap`` of
        them, ``-`` = missing and not restored. The model reads the normalized text; ``segments``
        keep the user's own text between gaps, so :meth:`render` returns it (accents, case)
        with only the restored characters normalized. Characters the alphabet lacks are read as
        the unknown symbol ``^`` and listed in the encoding's notes.
        """
        if not marker:
            raise InputError("the gap marker must not be empty")
        gap = self.check_gap(gap)
        if not text or not text.strip():
            raise InputError("empty input: nothing to fill")
        a = self.alphabet
        self.check_script(text)
        parts = re.split("(" + re.escape(marker) + "|" + re.escape(a.mask) + "+)", text)
        raw, seps = parts[0::2], parts[1::2]
        if not seps:
            raise InputError(f"nothing to restore: mark characters with '?' or a gap with "
                             f"{marker!r}: {text[:60]!r}")
        # normalize each piece; only the text's outer ends are stripped (spaces next to a gap stay)
        norm = [normalize(stone_text(p, a), symbols=True, strip=False, alphabet=a, unknown=True)
                for p in raw]
        norm[0], norm[-1] = norm[0].lstrip(), norm[-1].rstrip()
        ids, gaps = [a.start_id], []
        for k, piece in enumerate(norm):
            ids += [a.char_to_id(c) for c in piece]
            if k < len(seps):
                n = gap if seps[k] == marker else len(seps[k])
                gaps.append(list(range(len(ids), len(ids) + n)))
                ids += [a.mask_id] * n
        segments = list(raw)
        segments[0], segments[-1] = segments[0].lstrip(), segments[-1].rstrip()
        ids, gaps, undivided = self.divide_text(text, ids, gaps)
        ids, written = self.respell_text(text, ids)
        divider = divider_of(text.strip(), a)
        return Encoding(ids, gaps, segments, self.input_notes(text) +
                        divided_note(ids if undivided else None, a) + uv_note(written),
                        {**written_as(written), **lunate_of(text),
                         **({a.space: divider} if divider else {})},
                        undivided=undivided)

    def check_script(self, text: str) -> None:
        """A Greek model given a text in Latin script (or the reverse) says so instead of
        restoring letters it reads as unknown: fewer than a fifth of the text's letters are in
        the model's script (a bilingual inscription, about half each, is read)."""
        own = self.alphabet.name.lower()
        if own not in ("greek", "latin"):
            return
        count = letters_by_script(text)
        other = "latin" if own == "greek" else "greek"
        if count[other] and count[own] * 4 < count[other]:
            raise InputError(f"the text is in {other.title()} script; {self.name} restores "
                             f"{own.title()} (a {other.title()} model: builtin:{other})")

    def input_notes(self, text: str) -> list[str]:
        unknown = unknown_characters(text, self.alphabet)
        shown = "".join(c if c.isprintable() else f"U+{ord(c):04X} " for c in unknown)
        return [f"characters outside the {self.alphabet.name} alphabet read as unknown ({self.alphabet.unk}): "
                f"{shown.strip()[:40]}"] if unknown else []

    def divide_text(self, text: str, ids: list[int], gaps: list[list[int]]
                    ) -> tuple[list[int], list[list[int]], bool]:
        """A text typed without word division read with its words divided by the lexicon
        (:mod:`infill.models.continua`): (ids, gaps moved with them, True); the same ids, gaps
        and False where the text divides its words or the model has no lexicon."""
        a = self.alphabet
        seen = undivided(a.decode(t for t in ids if t != a.start_id), a)   # as the model reads it
        if self.lexicon is None or seen is False:
            return list(ids), gaps, False
        if self._divider is None:
            self._divider = Divider(self.lexicon, a)
        space = a.char_to_id(a.space)
        kept = [p for p, t in enumerate(ids) if t != space]         # line breaks say nothing
        at = {p: k for k, p in enumerate(kept)}
        flat = [ids[p] for p in kept]
        lost = {at[p] for g in gaps for p in g}
        missing = {k for k, t in enumerate(flat) if t == a.missing_id}
        meet = {k for k in range(1, len(flat))                       # lost text meets a lacuna
                if (k - 1 in missing and k in lost) or (k - 1 in lost and k in missing)}
        cuts = set(self._divider.spaces(flat, closed={k for k in lost if k - 1 in lost},
                                        forced=meet))
        if seen is None and not self._divider.splits(flat, cuts):      # one word, as typed
            return list(ids), gaps, False
        out, new_at = [], {}
        for k, t in enumerate(flat):
            if k in cuts:
                out.append(space)
            new_at[k] = len(out)
            out.append(t)
        return out, [[new_at[at[p]] for p in g] for g in gaps], True

    def respell_text(self, text: str, ids: list[int]) -> tuple[list[int], str | None]:
        """``ids`` of ``text`` respelled where it writes one letter for u and v (a Latin text
        typed off the stone): :meth:`respell_uv` with what the typed text shows."""
        stone = stone_text(text, self.alphabet)
        written = one_letter(stone)
        if written is None:                  # both letters, or neither: nothing to decide
            return list(ids), None
        return self.respell_uv(ids, written, in_capitals(stone))

    def respell_uv(self, ids: list[int], written: str | None = None, capitals: bool = False,
                   always: bool = False) -> tuple[list[int], str | None]:
        """A Latin text that writes one letter for u and v, read as the lexicon spells its
        words (:mod:`infill.models.uv`): (ids, the letter it writes, or None); ``written``:
        the letter the typed text may write for both (:func:`~infill.models.uv.one_letter`),
        ``capitals``: it is in capitals; ``always``: spelled so whatever it writes (a reading
        of such a text, in its place)."""
        if self._uv is None:
            self._uv = read_uv(self.lexicon, self.alphabet) or False
        if not self._uv:
            return list(ids), None
        if always:
            return self._uv.spell(ids), None
        return self._uv.respell(ids, written, capitals)

    def render(self, encoding: Encoding, gap_tokens) -> Rendered:
        fills = ["".join(self.alphabet.symbols[int(t)] for t in toks) for toks in gap_tokens]
        table = str.maketrans(encoding.written)       # after the case: V is a capital's letter
        fills = [f.translate(table) for f in follow_case(encoding.segments, fills)]
        return render_chars(encoding.segments, fills)

    def token_to_id(self, token: str) -> int:
        if token not in self.alphabet.index:
            raise InputError(f"unknown character {token!r}; the alphabet is "
                             f"{''.join(self.alphabet.symbols)!r}")
        return self.alphabet.index[token]

    def id_to_token(self, token_id: int) -> str:
        return self.alphabet.symbols[int(token_id)]
