"""The model adapter protocol: everything the search engine may ask of a masked LM.

An adapter knows its tokenizer and network and nothing of search. The engine only calls
:meth:`MaskedLM.log_probs` (one batched forward pass) and reads the ids below.
"""
from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import NamedTuple

import torch

from infill.errors import ConfigError, InputError


@dataclass
class Encoding:
    """One input prepared for decoding.

    ``input_ids`` holds ``mask_id`` at every gap position; ``gaps[k]`` lists the positions of
    the k-th gap (in order); ``segments`` are the user's text pieces around the gaps
    (``len(segments) == len(gaps) + 1``), used to render the filled text verbatim; ``notes``
    say what the adapter changed in reading the text (e.g. characters it cannot represent);
    ``written`` maps a restored character, in its case, to the one the text writes for it (a
    Latin text that writes V for u and v: ``{"u": "v", "U": "V"}``, :mod:`infill.models.uv`; a
    text whose words an interpunct divides: ``{" ": "·"}``); ``undivided``: the text divides
    no words (scriptio continua), the model reads it divided (:mod:`infill.models.continua`),
    and no word space is restored in its gaps.
    """

    input_ids: list[int]
    gaps: list[list[int]]
    segments: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    written: dict[str, str] = field(default_factory=dict)
    undivided: bool = False

    @property
    def positions(self) -> list[int]:
        """All gap positions, sorted."""
        return sorted(p for g in self.gaps for p in g)

    def split(self, tokens) -> list[list[int]]:
        """Tokens given in position order (one per gap position, as decoders return them) ->
        one list per gap."""
        tokens = [int(t) for t in tokens]
        if len(tokens) != sum(len(g) for g in self.gaps):
            raise InputError(f"{len(tokens)} tokens for {sum(len(g) for g in self.gaps)} gap positions")
        by_pos = dict(zip(self.positions, tokens))
        return [[by_pos[p] for p in g] for g in self.gaps]


class Rendered(NamedTuple):
    """A filled text: ``text``, the string put in each gap (``fills``), each fill's
    [start, end) character span in ``text`` (``spans``) and, per gap, the character offset in
    ``text`` where each of its tokens starts (``offsets``)."""

    text: str
    fills: list[str]
    spans: list[tuple[int, int]]
    offsets: list[list[int]]


class MaskedLM(ABC):
    """A masked language model seen through the eyes of the decoder.

    Attributes every adapter sets:
      name          -- how the model was loaded (path, hub id, ``builtin:...``)
      vocab_size    -- size of the output distribution (last dim of :meth:`log_probs`)
      mask_id       -- the input id that marks the position being predicted
      pad_id        -- padding input id (attention-masked out)
      max_length    -- the longest input (in ids, specials included) the model accepts
      special_ids   -- output ids never placed in a gap by default (METHODS §1 "Candidates")
      default_pivot -- the HCB pivot when none is given (``mask_id`` for BERT-like models,
                       the missing-character symbol for Ithaca-style models)
      device        -- where :meth:`log_probs` runs
    """

    name: str
    vocab_size: int
    mask_id: int
    pad_id: int
    max_length: int
    special_ids: frozenset[int]
    default_pivot: int
    device: torch.device
    #: whether :meth:`logits` (unnormalized scores, for MRF-L and E_raw) is available
    supports_logits: bool = False
    #: what one position is, for users: "tokens", "characters", "residues"
    unit: str = "tokens"
    #: whether ``mask_id`` is also a symbol texts hold as context (Ithaca's missing-character
    #: ``-``): then a mask in an input is not a gap by itself, gaps are passed explicitly
    mask_in_text: bool = False

    #: speed-ups applied after loading (:func:`infill.models.accel.accelerate`)
    acceleration: dict = {}

    def heavy_modules(self, whole: bool = False) -> list:
        """The network modules that do the work (what ``--compile`` compiles), or with ``whole``
        every top-level network (what ``--quantize`` rewrites). Adapters with an ``nn.Module``
        in ``self.model`` get this for free."""
        model = getattr(self, "model", None)
        if model is None:
            raise ConfigError(f"{self.name!r} exposes no network to accelerate")
        return [model]

    @property
    def n_input_ids(self) -> int:
        """Number of valid input ids (more than ``vocab_size`` when some symbols -- mask, pad,
        start -- are input-only)."""
        return max(self.vocab_size, self.mask_id + 1, self.pad_id + 1)

    # ---- the one model call -------------------------------------------------------------
    @abstractmethod
    def log_probs(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                  positions: torch.Tensor) -> torch.Tensor:
        """log q_t(. | x) for a batch.

        input_ids      -- [R, T] long (on any device)
        attention_mask -- [R, T] bool, False at padding
        positions      -- [R, P] long, the positions t wanted in each row
        returns        -- [R, P, vocab_size] float32 log-probabilities (full softmax), on CPU or
                          ``self.device``; exactly one forward pass of the network.
        """

    def logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
               positions: torch.Tensor) -> torch.Tensor:
        """Unnormalized output scores f_t(. | x) (same shapes as :meth:`log_probs`).

        Optional: needed only by methods defined on raw logits (MRF-L, E_raw).
        """
        raise ConfigError(f"model {self.name!r} does not expose unnormalized logits")

    # ---- text <-> ids ---------------------------------------------------------------------
    def input_notes(self, text: str) -> list[str]:
        """What the model cannot read of ``text`` as given (e.g. characters outside its
        alphabet), one note each; the commands show them and :meth:`encode` records them."""
        return []

    @abstractmethod
    def tokenize(self, text: str) -> list[int]:
        """Input ids for plain text, with the model's special tokens (cls/bos, sep/eos) added."""

    @abstractmethod
    def detokenize(self, ids: list[int]) -> str:
        """Text for ids, special tokens dropped (inverse of :meth:`tokenize` up to normalization)."""

    @abstractmethod
    def encode(self, text: str, gap: int, marker: str = "___") -> Encoding:
        """Turn user text with gap markers into an :class:`Encoding` (each marker -> ``gap`` masks).

        Raises :class:`InputError` if the text has no gap (or is invalid for the model); the
        length is not checked here: :func:`infill.fill` windows long inputs, decoders check it.
        """

    @abstractmethod
    def render(self, encoding: Encoding, gap_tokens: list[list[int]]) -> Rendered:
        """The filled text for the given tokens of each gap (see :class:`Rendered`)."""

    @abstractmethod
    def token_to_id(self, token: str) -> int:
        """Id of a token string (for ``--pivot``); raises :class:`InputError` if unknown."""

    @abstractmethod
    def id_to_token(self, token_id: int) -> str:
        """The token string of an id."""

    # ---- helpers shared by adapters -------------------------------------------------------
    def allowed_mask(self, allow_special: bool = False) -> torch.Tensor:
        """[vocab_size] bool: which output ids may be placed in a gap."""
        allowed = torch.ones(self.vocab_size, dtype=torch.bool)
        if not allow_special:
            allowed[[i for i in self.special_ids if i < self.vocab_size]] = False
        return allowed

    def check_gap(self, gap) -> int:
        """A gap length (tokens per marker) that can fit the model at all, as an int."""
        if isinstance(gap, bool) or not isinstance(gap, int):
            raise InputError(f"gap must be a whole number of tokens, got {gap!r}")
        if gap < 1:
            raise InputError(f"gap must be at least 1 token, got {gap}")
        if gap > self.max_length - self.n_added():
            raise InputError(f"gap of {gap} tokens is longer than the model's maximum length "
                             f"{self.max_length - self.n_added()} {self.unit}")
        return gap

    def n_added(self) -> int:
        """How many ids the model adds around every text (a start symbol, ``[CLS]``/``[SEP]``):
        of :attr:`max_length` ids, a text has the rest -- the length the docs give."""
        try:
            return len(list(self.tokenize("")))
        except Exception:         # a model that cannot tokenize an empty text: count none
            return 0

    def check_length(self, n_ids: int) -> None:
        """:class:`InputError` when ``n_ids`` ids are more than the model reads; its ``field`` is
        ``window``, the option that reads such an input in context windows instead. The message
        counts the text's own tokens, as the docs give a model's length (511 characters for
        builtin:greek, whose 512 ids hold a start symbol)."""
        if n_ids > self.max_length:
            added = self.n_added()
            raise InputError(
                f"input is {n_ids - added} {self.unit} long with its gaps, more than the "
                f"model's maximum length {self.max_length - added} {self.unit}; shorten the text "
                "or the gap", field="window")

    def resolve_pivot(self, pivot: "int | str | None") -> int:
        """A pivot given as id, token string, or None (the model's default) -> id."""
        if pivot is None:
            return self.default_pivot
        if isinstance(pivot, str):
            pid = self.token_to_id(pivot)
            if not 0 <= pid < self.vocab_size:
                raise InputError(f"{pivot!r} is an input-only symbol of {self.name}, not a token "
                                 "the model predicts; a pivot must be an output token")
            return pid
        if isinstance(pivot, bool) or not isinstance(pivot, int) or not 0 <= pivot < self.vocab_size:
            raise InputError(f"pivot id {pivot} is outside the vocabulary (size {self.vocab_size})")
        return int(pivot)


# On a CPU a forward over many rows at once is memory-bound: its activations leave the caches.
# Measured with one thread (benchmarks/speed.py shapes): 320 rows x 130 tokens through AntiBERTy
# take 28 s in one call and 15 s in calls of 16 rows; bert-base, 320 x 60 tokens, 30 s vs 23 s.
# About 2,048 tokens per call was best for every model tried; GPUs take the batch whole.
CPU_TOKENS_PER_CALL = 2048


def row_chunked(call):
    """Decorate an adapter's batched call ``(input_ids, attention_mask, positions) -> [R, ...]``
    so that on a CPU it runs in chunks of rows of at most :data:`CPU_TOKENS_PER_CALL` tokens
    (rows are independent: the result is the same tensor, up to float rounding)."""
    @functools.wraps(call)
    def chunked(self, input_ids, attention_mask, positions):
        ids = torch.as_tensor(input_ids)
        R, T = ids.shape
        if torch.device(self.device).type != "cpu" or R * T <= CPU_TOKENS_PER_CALL:
            return call(self, input_ids, attention_mask, positions)
        attn, pos = torch.as_tensor(attention_mask), torch.as_tensor(positions)
        step = max(1, CPU_TOKENS_PER_CALL // T)
        return torch.cat([call(self, ids[s:s + step], attn[s:s + step], pos[s:s + step])
                          for s in range(0, R, step)])
    return chunked


def pad_batch(seqs: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows of different lengths -> ([N, T] ids padded with ``pad_id``, [N, T] bool attention mask)."""
    T = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), T), pad_id, dtype=torch.long)
    attn = torch.zeros((len(seqs), T), dtype=torch.bool)
    for r, seq in enumerate(seqs):
        ids[r, :len(seq)] = torch.as_tensor(seq, dtype=torch.long)
        attn[r, :len(seq)] = True
    return ids, attn


def render_chars(segments: list[str], fills: list[str], cased: bool = False) -> Rendered:
    """Rendering for models with one character per token: segments and fills alternate;
    ``cased``: each fill in the case of the text around it (:func:`follow_case`)."""
    if cased:
        fills = follow_case(segments, fills)
    text, spans, offsets = segments[0], [], []
    for fill, seg in zip(fills, segments[1:]):
        spans.append((len(text), len(text) + len(fill)))
        offsets.append(list(range(len(text), len(text) + len(fill))))
        text += fill + seg
    return Rendered(text, list(fills), spans, offsets)


def follow_case(segments: list[str], fills: list[str]) -> list[str]:
    """Each fill (a lowercase model's letters) in capitals where the text around it is in
    capitals: its own word's visible letters, two or more and all capitals (``XX?`` -> ``XXX``;
    ``Iul?us``, a capital initial ``F???`` stay lowercase), else the whole text's
    (``D M ????? FELICI``, ``F???`` in a text in capitals)."""
    all_caps = in_capitals("".join(segments))
    out = []
    for k, fill in enumerate(fills):
        left = segments[k].split()[-1] if segments[k][-1:].strip() else ""
        right = segments[k + 1].split()[0] if segments[k + 1][:1].strip() else ""
        word = [c for c in left + right if c.isupper() or c.islower()]
        upper = all(c.isupper() for c in word) if len(word) > 1 else all_caps
        out.append("".join(c.upper() if upper and len(c.upper()) == 1 else c for c in fill))
    return out


def in_capitals(text: str) -> bool:
    """Whether every letter of ``text`` is a capital (and it has some)."""
    letters = [c for c in text if c.isupper() or c.islower()]
    return bool(letters) and all(c.isupper() for c in letters)
