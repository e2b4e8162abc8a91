"""The public Python API; it mirrors the ``infill run`` command.

    model = infill.load_model("builtin:english")
    infill.fill(model, "To be, or not to ___, that is the question.", beam_size=5)
    infill.fill(model, texts, config=infill.DecodeConfig(scorer="standard", order="best-to-worst"))
    infill.fill(model, texts, request=infill.FillRequest(gap="1-3", top_k=3))

A fill's options are the fields of one :class:`~infill.filling.request.FillRequest` (its decoding
options a :class:`~infill.config.DecodeConfig`, ``config``); ``fill`` and ``fill_each`` take one
and/or the same options as keywords. The pipeline itself lives in :mod:`infill.filling`; this
module is its face.
"""
from __future__ import annotations

from collections.abc import Sequence

from infill.config import DecodeConfig
from infill.errors import LongInputWarning
from infill.filling.decoders import run_decoder
from infill.filling.defaults import ranks_lengths, resolve_fill
from infill.filling.planner import fill_resolved, length_buckets, text_list
from infill.filling.request import UNSET, FillRequest, check_applies, check_ranking
from infill.filling.results import Completion, FillResult, Position, complete
from infill.filling.tokens import decode
from infill.models import load_model as _load_model
from infill.models.base import MaskedLM
from infill.models.hf import wrap_hf as _wrap_hf

__all__ = ["Completion", "DecodeConfig", "FillRequest", "FillResult", "LongInputWarning",
           "Position", "complete", "decode", "fill", "fill_each", "fill_resolved",
           "length_buckets", "load_model", "run_decoder", "wrap_hf"]


def load_model(name_or_path: str, device: str | None = None, dtype: str | None = None,
               quantize: str | None = None, compile: bool = False, **options) -> MaskedLM:
    """Load a masked LM: ``builtin:NAME``, ``antiberty`` / ``sapiens-vh`` / ``sapiens-vl``, a
    local directory / checkpoint file, or a hub id.

    ``device``: "cpu", "cuda", "cuda:1"... (default: CUDA when available); ``dtype``: "bf16"
    (CUDA, or CPU) or "fp16" (CUDA); ``quantize="int8"`` (CPU) and ``compile=True``: opt-in
    speed-ups (:mod:`infill.models.accel`). Extra ``options`` go to the family's loader (e.g.
    ``allow_nonstandard=True`` for protein models).
    """
    return _load_model(name_or_path, device=device, dtype=dtype, quantize=quantize,
                       compile=compile, **options)


def wrap_hf(model, tokenizer) -> MaskedLM:
    """Use an already loaded Hugging Face masked LM + tokenizer."""
    return _wrap_hf(model, tokenizer)


def _request(request: FillRequest | None, gap, top_k, options: dict) -> FillRequest:
    """The request of a call: ``request`` with ``gap``, ``top_k`` (when given) and the keyword
    ``options`` applied (:meth:`FillRequest.of`)."""
    return FillRequest.of(request, gap=gap, top_k=top_k, **options)


def fill(model: MaskedLM, text: "str | Sequence[str]",
         gap: "int | str | tuple | list | None" = UNSET, top_k: int = UNSET,
         request: FillRequest | None = None, **options) -> list[list[Completion]]:
    """Fill every gap marker in ``text`` (a string or a list of strings) with ``gap`` tokens each
    (None: the model's recommended gap, :mod:`infill.filling.defaults` -- builtin:english: one whole
    word -- else 1).

    ``gap`` may also be a range of lengths, ``(lo, hi)`` or ``"lo-hi"`` (a lacuna of uncertain
    length), ``"word"`` (one whole word of 1-3 word pieces, WordPiece models), or a list with one
    of these per marker: every combination of lengths is decoded and all completions are ranked
    together by ``length_score`` ("pll" | "pll-gap" | "per-char" | "per-char-0.7",
    :mod:`infill.decoding.lengths`),
    whose value each completion carries as ``rank_score``. ``length_beam``: "shared" (the
    combinations share one beam: the B best hypotheses of any lengths live on at each step),
    "each" (a beam per combination: combinations x the work) or None (the model's choice, else
    "each"). ``letters``: the tokens allowed
    at some gap positions, one entry per gap (None, or per position None / a string of letters /
    a list of tokens; :mod:`infill.decoding.letters`), the same for every input. ``rerank``:
    "off", or rank the beam's completions of gaps of one length by (score + "pll" / "pll-gap" /
    "pll-word") / 2 (:mod:`infill.filling.reranking`; each carries it as ``rank_score``); None: the
    model's recorded choice, else "off".

    Returns one list per input of at most ``top_k`` :class:`Completion` objects, best first. A
    ``top_k`` above the beam size raises the beam size to ``top_k``. An input longer than the
    model's maximum length is decoded in context windows centred on its gaps (a
    :class:`LongInputWarning` says so); ``window=False`` makes that an error. Decoding options as
    in :func:`decode`; ``request``: a whole
    :class:`FillRequest` (keywords change it). The first bad input raises; :func:`fill_each` reports errors per input.
    """
    texts = [text] if isinstance(text, str) else text_list(text)
    results = fill_each(model, texts, request=_request(request, gap, top_k, options),
                        _raise=True)
    return [r.completions for r in results]


def fill_each(model: MaskedLM, texts: Sequence[str],
              gap: "int | str | tuple | list | None" = UNSET, top_k: int = UNSET,
              request: FillRequest | None = None, _raise: bool = False,
              **options) -> list[FillResult]:
    """:func:`fill` for many inputs, one :class:`FillResult` each: an input that cannot be
    filled (no gap, invalid residue, too long without ``window``, ...) gets its ``error`` and
    the others are decoded together as usual. Options left out (None: the scorer, the order,
    the gap's length, the length score) take the model's recommended defaults, resolved once
    here (:func:`~infill.filling.defaults.resolve_fill`; ``FillResult.defaults``); an explicit
    choice always wins. ``batch_size`` inputs are decoded together (one forward pass per step
    for all their hypotheses). ``region``, ``unclear`` and ``unknown_lengths`` are read with
    the Leiden sigla of :func:`~infill.jobs.fill.fill_inputs`: here they are a ConfigError."""
    request, defaults = resolve_fill(model, _request(request, gap, top_k, options))
    check_applies(request, "fill's texts")      # what only a Leiden reading honours
    several = ranks_lengths(request.gap)           # fill reads no Leiden: the gap decides
    check_ranking(defaults.given, several, several)
    texts, n = text_list(texts), request.batch_size
    if len(texts) <= n:                # one call (an empty list: its error, as before)
        return fill_resolved(model, texts, request, defaults, _raise=_raise)
    return [r for i in range(0, len(texts), n)
            for r in fill_resolved(model, texts[i:i + n], request, defaults, _raise=_raise)]
