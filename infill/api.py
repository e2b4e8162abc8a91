"""The public Python API; it mirrors the ``infill run`` command."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from infill.errors import ConfigError, InputError
from infill.models import load_model as _load_model
from infill.models.base import Encoding, MaskedLM
from infill.sampling import Sampler
from infill.scoring import Scorer, make_scorer
from infill.search import Hypothesis, beam_search


@dataclass(frozen=True)
class Completion:
    """One ranked completion of a text: the filled ``text``, the string put in each gap
    (``fills``), the token ids at the gap positions (``tokens``, position order) and ``score``."""

    text: str
    fills: tuple[str, ...]
    tokens: tuple[int, ...]
    score: float


def load_model(name_or_path: str, device: str | None = None, dtype: str | None = None,
               **options) -> MaskedLM:
    """Load a masked LM: ``builtin:NAME``, a local directory / checkpoint file, or a hub id.

    ``device``: "cpu", "cuda", "cuda:1"... (default: CUDA when available); ``dtype``: "bf16" or
    "fp16" on CUDA. Extra ``options`` go to the family's loader (e.g. ``allow_nonstandard=True``
    for protein models).
    """
    return _load_model(name_or_path, device=device, dtype=dtype, **options)


def wrap_hf(model, tokenizer) -> MaskedLM:
    """Use an already loaded Hugging Face masked LM + tokenizer."""
    from infill.models.hf import wrap_hf as _wrap
    return _wrap(model, tokenizer)


def _is_single(input_ids) -> bool:
    if isinstance(input_ids, torch.Tensor):
        return input_ids.dim() == 1
    return len(input_ids) > 0 and not isinstance(input_ids[0], (Sequence, torch.Tensor))


def _search(model, inputs, gaps, scorer, order, beam_size, dedup, pivot, pivot_context,
            allow_special, sample, temperature, top_p, seed):
    if scorer == "ag":
        if pivot is not None or sample is not None:
            raise ConfigError("the ag decoder takes no pivot and no sampling option")
        from infill.joint import decode_ag
        return decode_ag(model, inputs, beam_size=beam_size, allow_special=allow_special)
    if scorer is None:
        scorer = "standard" if sample else "hcb"
    sc = make_scorer(scorer, pivot=pivot, pivot_context=pivot_context)
    sampler = None
    if sample is not None:
        sampler = Sampler(sample, temperature=temperature, top_p=top_p)
    return beam_search(model, inputs, sc, order=order, beam_size=beam_size, dedup=dedup,
                       allow_special=allow_special, sampler=sampler, seed=seed, gaps=gaps)


def decode(model: MaskedLM, input_ids, scorer: "str | Scorer | None" = None,
           order: str = "left-to-right", beam_size: int = 5, dedup: bool = True, pivot=None,
           pivot_context: str = "inject", allow_special: bool = False, sample: str | None = None,
           temperature: float = 1.0, top_p: float = 0.9, seed: int = 0):
    """Token-level decoding. ``input_ids``: a 1-D sequence (or a list of them) holding
    ``model.mask_id`` at every gap position. Returns ranked :class:`Hypothesis` objects (a list per
    input when given a list): ``.tokens`` at the gap positions in position order, ``.score`` the
    summed update of the scorer ("hcb", "standard", "scramble", "swap", "ag", or a Scorer).
    ``sample``: "pure" | "temperature" | "nucleus" runs the matched-budget sampling baseline.
    """
    single = _is_single(input_ids)
    batch = [input_ids] if single else list(input_ids)
    batch = [x.tolist() if isinstance(x, torch.Tensor) else list(x) for x in batch]
    out = _search(model, batch, None, scorer, order, beam_size, dedup, pivot, pivot_context,
                  allow_special, sample, temperature, top_p, seed)
    return out[0] if single else out


def fill(model: MaskedLM, text: "str | Sequence[str]", gap: int = 1, scorer: "str | Scorer | None" = None,
         order: str = "left-to-right", beam_size: int = 5, top_k: int = 5, pivot=None, seed: int = 0,
         marker: str = "___", dedup: bool = True, pivot_context: str = "inject",
         allow_special: bool = False, sample: str | None = None, temperature: float = 1.0,
         top_p: float = 0.9) -> list[list[Completion]]:
    """Fill every gap marker in ``text`` (a string or a list of strings) with ``gap`` tokens each.

    Returns one list per input of at most ``top_k`` :class:`Completion` objects, best first.
    """
    if top_k < 1:
        raise ConfigError(f"top-k must be at least 1, got {top_k}")
    if top_k > beam_size:
        raise ConfigError(f"top-k ({top_k}) cannot exceed the beam size ({beam_size})")
    texts = [text] if isinstance(text, str) else list(text)
    if not texts:
        raise InputError("empty input: nothing to fill")
    encodings: list[Encoding] = [model.encode(t, gap, marker) for t in texts]
    hyps = _search(model, [e.input_ids for e in encodings], [e.positions for e in encodings],
                   scorer, order, beam_size, dedup, pivot, pivot_context, allow_special, sample,
                   temperature, top_p, seed)
    return [[_complete(model, e, h) for h in hs[:top_k]] for e, hs in zip(encodings, hyps)]


def _complete(model: MaskedLM, enc: Encoding, hyp: Hypothesis) -> Completion:
    by_pos = dict(zip(enc.positions, hyp.tokens))
    gap_tokens = [[by_pos[p] for p in g] for g in enc.gaps]
    text, fills = model.render(enc, gap_tokens)
    return Completion(text=text, fills=tuple(fills), tokens=hyp.tokens, score=hyp.score)
