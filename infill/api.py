"""The public Python API; it mirrors the ``infill run`` command.

    model = infill.load_model("builtin:english")
    infill.fill(model, "To be, or not to ___, that is the question.", beam_size=5)
    infill.fill(model, texts, config=infill.DecodeConfig(scorer="standard", order="best-to-worst"))

Every decoding option is a field of :class:`~infill.config.DecodeConfig`; ``fill`` and ``decode``
take a config and/or the same options as keywords.
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from infill.config import DecodeConfig
from infill.filling.request import FillRequest
from infill.data.files import check_text
from infill.filling.decoders import DECODERS
from infill.filling.decoders import run_decoder as _run_decoder
from infill.decoding.engine import Hypothesis
from infill.decoding.lengths import LENGTH_SCORES, Variant, gap_lengths
from infill.decoding.letters import apply_letters
from infill.decoding.lengths import variants as length_variants
from infill.decoding.windows import Window, windows_for
from infill.errors import WINDOWED, ConfigError, InfillError, InputError, LongInputWarning
from infill.models import load_model as _load_model
from infill.models.base import Encoding, MaskedLM
from infill.filling.defaults import Defaults, config_json, resolve_fill


@dataclass(frozen=True)
class Position:
    """One filled position of a completion: the ``gap_index`` of its gap (0: the text's first
    gap), the character offset ``index`` of its token in the completion's text, the ``token``
    string (and ``token_id``), the model's ``logq`` of that token at the step it was placed,
    ``prob`` = exp(logq), and that ``step``. (``gap``, its old name, is read with a
    DeprecationWarning, and written beside it in JSON, until 0.3.0.)"""

    gap_index: int
    index: int
    token: str
    token_id: int
    logq: float
    prob: float
    step: int

    @property
    def gap(self) -> int:
        """Deprecated: :attr:`gap_index` (``gap`` names a stretch to fill, not its index)."""
        warnings.warn("Position.gap is now gap_index; 'gap' will be removed in the next release",
                      DeprecationWarning, stacklevel=2)
        return self.gap_index

    def to_json(self) -> dict:
        """The position's JSON (``gap``: the deprecated copy of ``gap_index``, kept until
        0.3.0 so that readers of the old key go on working)."""
        return {"gap_index": self.gap_index, "gap": self.gap_index, "index": self.index,
                "token": self.token, "token_id": self.token_id, "logq": self.logq,
                "prob": self.prob, "step": self.step}


@dataclass(frozen=True)
class Completion:
    """One ranked completion of a text: the filled ``text``, the string put in each gap
    (``fills``) and its [start, end) character span (``spans``), the token ids at the gap
    positions (``tokens``, position order), ``score`` and per-position confidence
    (``positions``). Greek character models write each fill in the user's script:
    ``accented[k]`` says whether fill k took the accents of known words
    (:mod:`infill.data.accents`) or stayed in plain letters; empty for other models.
    ``rank_score``: when the gaps had several possible lengths, the score all lengths were
    ranked by together (``length_score``, :mod:`infill.decoding.lengths`); when completions of
    one length were reranked, (score + their PLL) / 2 (``rerank``, :mod:`infill.filling.reranking`); else
    None."""

    text: str
    fills: tuple[str, ...]
    tokens: tuple[int, ...]
    score: float
    positions: tuple[Position, ...] = ()
    spans: tuple[tuple[int, int], ...] = ()
    accented: tuple[bool, ...] = ()
    rank_score: float | None = None

    def to_json(self, rank: int | None = None) -> dict:
        out = {"rank": rank} if rank is not None else {}
        out.update({"text": self.text, "fills": list(self.fills), "spans": [list(s) for s in self.spans],
                    "tokens": list(self.tokens), "score": self.score,
                    "positions": [p.to_json() for p in self.positions]})
        if self.accented:
            out["accented"] = list(self.accented)
        if self.rank_score is not None:
            out["rank_score"] = self.rank_score
        return out


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
    from infill.models.hf import wrap_hf as _wrap
    return _wrap(model, tokenizer)


def _is_single(input_ids) -> bool:
    if isinstance(input_ids, torch.Tensor):
        return input_ids.dim() == 1
    first = input_ids[0] if len(input_ids) else None
    return first is not None and (isinstance(first, (str, bytes))     # text: refused as one row
                                  or not isinstance(first, (Sequence, torch.Tensor, np.ndarray)))


def _id_rows(model: MaskedLM, batch: list) -> list[list[int]]:
    """The inputs of :func:`decode` as lists of ints; InputError for a row that is not token
    ids of this model (text, floats, ids out of range)."""
    rows = []
    for k, x in enumerate(batch, 1):
        if isinstance(x, (torch.Tensor, np.ndarray)):
            x = x.tolist()
        if isinstance(x, (str, bytes)) or not isinstance(x, Sequence):
            raise InputError(f"decode takes token ids: input {k} is {type(x).__name__}, not a "
                             "sequence of ints (use fill for text)")
        for v in x:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise InputError(f"decode takes token ids: input {k} holds {v!r} "
                                 f"({type(v).__name__}), not an int (use fill for text)")
            if not 0 <= v < model.n_input_ids:
                raise InputError(f"decode: input {k} holds token id {v}, outside the model's "
                                 f"{model.n_input_ids} ids")
        rows.append([int(v) for v in x])
    return rows


def run_decoder(model: MaskedLM, inputs: list[list[int]], gaps: list[list[int]] | None,
                config: DecodeConfig, allowed: list | None = None) -> list[list[Hypothesis]]:
    """The configured decoder (a registered strategy, :mod:`infill.filling.decoders`) on a
    batch of id sequences (see :func:`decode`); ``allowed``: per input None or the [n, V]
    tokens each gap position may take."""
    return _run_decoder(model, inputs, gaps, config, allowed=allowed)


def decode(model: MaskedLM, input_ids, config: DecodeConfig | None = None, positions=None,
           gaps=None, letters=None, **options):
    """Token-level decoding. ``input_ids``: a 1-D sequence (or a list of them) holding
    ``model.mask_id`` at every gap position. Returns ranked :class:`Hypothesis` objects (a list per
    input when given a list): ``.tokens`` at the gap positions in position order, ``.score`` the
    summed update of the scorer, ``.logq`` each token's log q when placed.

    ``positions``: the positions to fill (a list of ints, or one such list per input; the name
    :func:`infill.mcmc.mh` uses too); default: every position holding ``model.mask_id``. Needed
    when the mask is also a text symbol the input holds as context (``model.mask_in_text``:
    Ithaca's missing character ``-``). ``gaps``: its old name (deprecated). ``letters``: the
    tokens allowed at some gap positions, {position: a string of letters or a list of tokens /
    ids} (one such dict per input when decoding several; :mod:`infill.decoding.letters`).

    ``config`` and/or keyword ``options`` (fields of :class:`DecodeConfig`: ``scorer``,
    ``order``, ``beam_size``, ``pivot``, ``sampling``, ``seed``, ...).
    """
    config = DecodeConfig.from_options(config, **options)
    positions = _renamed_positions(positions, gaps)
    if not isinstance(input_ids, (Sequence, torch.Tensor, np.ndarray)) \
            or isinstance(input_ids, (str, bytes)):
        raise InputError("decode takes token ids (a sequence of ints, a list of them, or a "
                         f"tensor); use fill for text, got {type(input_ids).__name__}")
    single = _is_single(input_ids)
    batch = [input_ids] if single else list(input_ids)
    if not batch:
        raise InputError("no input to decode")
    if positions is not None:
        positions = [positions] if single else list(positions)
        if not all(isinstance(g, (Sequence, np.ndarray, torch.Tensor)) and
                   all(not isinstance(p, (bool, np.bool_)) and isinstance(p, (int, np.integer))
                       for p in (g.tolist() if hasattr(g, "tolist") else g)) for g in positions):
            raise InputError("positions must be a list of positions (ints), one per input when "
                             "decoding several", field="positions")
    rows = _id_rows(model, batch)
    allowed = _decode_letters(model, rows, positions, letters, single, config.allow_special)
    out = run_decoder(model, rows, positions, config, allowed=allowed)
    return out[0] if single else out


def _decode_letters(model: MaskedLM, rows: list[list[int]], positions, letters, single: bool,
                    allow_special: bool) -> list | None:
    """Per input the [n, V] masks of ``letters`` at its gap positions (None: no letters)."""
    if letters is None:
        return None
    from infill.decoding.letters import position_masks
    per = [letters] if single else list(letters) if isinstance(letters, Sequence) else None
    if per is None or len(per) != len(rows):
        raise InputError("letters: one {position: letters} dict per input when decoding several",
                         field="letters")
    return [position_masks(model, lt, sorted(positions[i]) if positions is not None else
                           [t for t, w in enumerate(x) if w == model.mask_id], allow_special)
            for i, (x, lt) in enumerate(zip(rows, per))]


def _renamed_positions(positions, gaps):
    """``positions``, or the deprecated ``gaps=`` read as it (with a DeprecationWarning)."""
    if gaps is None:
        return positions
    if positions is not None:
        raise ConfigError("give 'positions' only (not also the deprecated 'gaps')",
                          field="positions")
    warnings.warn("decode(gaps=) is now decode(positions=); 'gaps' will be removed in 0.3.0",
                  DeprecationWarning, stacklevel=3)
    return gaps


@dataclass
class FillResult:
    """The outcome for one input of :func:`fill_each`: its ranked ``completions``, or the
    ``error`` that stopped it; ``windows`` lists the context windows used when the input was
    longer than the model's maximum length ({start, end, gaps}: model-token positions of the
    kept body and the gaps decoded in it), empty otherwise."""

    input: str
    completions: list[Completion]
    error: str | None = None
    windows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error_field: str | tuple[str, ...] | None = field(default=None, compare=False)
    """The request field(s) the ``error`` names (:attr:`InfillError.field`), for front ends."""
    defaults: Defaults | None = field(default=None, compare=False)
    """The model's recommended options this decode used (:mod:`infill.filling.defaults`); how the
    options were chosen, not part of the result, so not compared."""
    length_score: str | None = None
    """How completions of several gap lengths were ranked together (None: one length)."""
    length_beam: str | None = None
    """How their lengths were searched, ``shared`` or ``each`` (None: one length)."""
    rerank: str | None = None
    """How completions of one length were reranked (:mod:`infill.filling.reranking`; None: they were
    not -- ``off``, or lengths were ranked)."""
    config: DecodeConfig | None = field(default=None, compare=False)
    """The decoding options that ran (every option resolved, :func:`resolve_fill`)."""
    gap: Any = field(default=None, compare=False)
    """The gap length it was filled with (N, a range, ``word``, or one per marker)."""
    model: str | None = field(default=None, compare=False)
    """The model's name as the user gave it (the ``model`` of its JSON line)."""
    id: str | None = field(default=None, compare=False)
    """The input's id (a FASTA header's first word, else its number) when a job set it."""
    letters: list | None = field(default=None, compare=False)
    """The letter sets its gaps were restricted to (:mod:`infill.decoding.letters`), if any."""

    def to_json(self) -> dict:
        """One line of ``infill run --json`` (also the answer of ``POST /api/fill``); ``config``
        carries ``defaults`` ({options, source, why}) when options took the model's defaults."""
        config = config_json(self.config, self.defaults, self.length_score, self.length_beam,
                             self.rerank)
        gap = list(self.gap) if isinstance(self.gap, tuple) else self.gap
        out = {"id": self.id, "input": self.input, "model": self.model, "config": config,
               "gap": gap, "windows": self.windows, "notes": self.notes, "error": self.error,
               "completions": [c.to_json(r) for r, c in enumerate(self.completions, 1)]}
        if self.letters is not None:
            out["letters"] = self.letters
        return out


def fill(model: MaskedLM, text: "str | Sequence[str]",
         gap: "int | str | tuple | list | None" = None, top_k: int = 5, marker: str = "___",
         config: DecodeConfig | None = None, window: bool = True, length_score: str | None = None,
         length_beam: str | None = None, letters: list | None = None, rerank: str | None = None,
         **options) -> list[list[Completion]]:
    """Fill every gap marker in ``text`` (a string or a list of strings) with ``gap`` tokens each
    (None: the model's recommended gap, :mod:`infill.filling.defaults` -- builtin:english: one whole
    word -- else 1).

    ``gap`` may also be a range of lengths, ``(lo, hi)`` or ``"lo-hi"`` (a lacuna of uncertain
    length), ``"word"`` (one whole word of 1-3 word pieces, WordPiece models), or a list with one
    of these per marker: every combination of lengths is decoded and all completions are ranked
    together by ``length_score`` ("pll" | "pll-gap" | "per-char", :mod:`infill.decoding.lengths`),
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
    in :func:`decode`. The first bad input raises; :func:`fill_each` reports errors per input.
    """
    texts = [text] if isinstance(text, str) else _text_list(text)
    results = fill_each(model, texts, gap, top_k, marker, config, window, _raise=True,
                        length_score=length_score, length_beam=length_beam, letters=letters,
                        rerank=rerank, **options)
    return [r.completions for r in results]


def _text_list(texts) -> list:
    """A list of the given inputs; InputError for what is not a sequence of them."""
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise InputError("fill takes text (a string or a list of strings); use decode for ids, "
                         f"got {type(texts).__name__}")
    return list(texts)


def fill_each(model: MaskedLM, texts: Sequence[str],
              gap: "int | str | tuple | list | None" = None, top_k: int = 5, marker: str = "___",
              config: DecodeConfig | None = None, window: bool = True, _raise: bool = False,
              length_score: str | None = None, length_beam: str | None = None,
              letters: list | None = None, rerank: str | None = None,
              **options) -> list[FillResult]:
    """:func:`fill` for many inputs, one :class:`FillResult` each: an input that cannot be
    filled (no gap, invalid residue, too long without ``window``, ...) gets its ``error`` and
    the others are decoded together as usual. Options left out (None: the scorer, the order,
    the gap's length, the length score) take the model's recommended defaults
    (``FillResult.defaults``); an explicit choice always wins."""
    decode = DecodeConfig.from_options(config, **options)
    request = FillRequest(decode=decode, top_k=top_k, gap=gap, marker=marker, window=window,
                          length_score=length_score, length_beam=length_beam, letters=letters,
                          rerank=rerank)
    request, defaults = resolve_fill(model, request)
    return fill_resolved(model, texts, request, defaults, _raise=_raise)


def fill_resolved(model: MaskedLM, texts: Sequence[str], request, defaults: Defaults | None = None,
                  _raise: bool = False) -> list[FillResult]:
    """:func:`fill_each` with a request already resolved (:func:`resolve_fill`): what the fill
    job runs, each result carrying the request's config and gap."""
    config, top_k, gap = request.decode, request.top_k, request.gap
    texts = _fill_texts(texts)
    lengths = _fill_lengths(model, gap, config, request.length_score)
    results = [FillResult(t, [], defaults=defaults, config=config, gap=gap,
                          letters=getattr(request, "letters", None)) for t in texts]
    jobs, found = _plan_jobs(model, texts, lengths, request.marker, request.window, config,
                             results, _raise, letters=getattr(request, "letters", None))
    if not jobs:
        return results
    hyps = _decode_jobs(model, jobs, found, config, request.length_beam)
    several = {i for i, v in found if v > 0}                 # inputs whose lengths compete
    rerank = getattr(request, "rerank", None) or "off"
    for i, items in _ranked(jobs, hyps, found, config.beam_size, top_k, rerank != "off").items():
        ranking = request.length_score if i in several else rerank
        results[i].completions = _completions(model, items, ranking, top_k, i in several)
        if i in several:
            results[i].length_score = request.length_score
            results[i].length_beam = request.length_beam
        elif rerank != "off":
            results[i].rerank = rerank
    return results


_Job = tuple[tuple[int, int], Encoding, Window, int, int]
"""One decoder input of :func:`fill_each`: ((input, variant), encoding, window, lo, hi)."""


def _fill_texts(texts) -> list[str]:
    """The inputs of :func:`fill_each`; InputError when there are none or one is not text."""
    texts = _text_list(texts)
    if not texts:
        raise InputError("empty input: nothing to fill")
    if not all(isinstance(t, str) for t in texts):
        raise InputError("fill takes text (a string or a list of strings); use decode for ids")
    return texts


def _fill_lengths(model: MaskedLM, gap, config: DecodeConfig, length_score: str):
    """The gap lengths of a fill (:func:`gap_lengths`), checked against the decoder (only a
    restricting one fills a whole-word gap) and with a known ``length_score``."""
    lengths = gap_lengths(model, gap)
    decoder = DECODERS[config.decoder]
    if (not decoder.restricts or decoder.positions is not None) and any(
            g.word for g in (lengths if isinstance(lengths, list) else [lengths])
            if not isinstance(g, int)):
        raise ConfigError(f"the {config.decoder} decoder cannot restrict a gap to a whole word "
                          "(1-3 word pieces); use the beam decoder")
    if length_score not in LENGTH_SCORES:
        raise ConfigError(f"unknown length score {length_score!r}; choose from "
                          f"{', '.join(LENGTH_SCORES)}")
    return lengths


def _plan_jobs(model: MaskedLM, texts: list[str], lengths, marker: str, window: bool,
               config: DecodeConfig, results: list[FillResult], _raise: bool,
               letters: list | None = None
               ) -> tuple[list[_Job], dict[tuple[int, int], Variant]]:
    """The decoder jobs of every input (one per length variant and context window) and each
    (input, variant)'s :class:`Variant`. An input's error, notes and windows go into its
    result (``_raise``: the first error raises); a :class:`LongInputWarning` counts the inputs
    that needed windows. ``letters``: the letter sets of every input's gaps."""
    jobs: list[_Job] = []
    found: dict[tuple[int, int], Variant] = {}
    windowed = 0
    for i, t in enumerate(texts):
        try:
            planned = _plan_input(model, check_text(t, f"input {i + 1}"), lengths, marker,
                                  window, config, letters)
        except InfillError as e:
            if _raise:
                raise
            results[i].error, results[i].error_field = e.message(), e.field
            continue
        results[i].notes = list(planned[0][0].encoding.notes)
        for v, (var, plan, lo, hi) in enumerate(planned):
            found[i, v] = var
            if len(var.encoding.input_ids) > model.max_length and not results[i].windows:
                windowed += 1
                results[i].windows = [{"start": w.left, "end": w.right, "gaps": list(w.gaps)}
                                      for w in plan]
                results[i].notes.append(f"{WINDOWED} ({model.max_length} tokens): decoded in "
                                        "the longest context window centred on the gaps")
            jobs += [((i, v), var.encoding, w, lo, hi) for w in plan]
    if windowed:
        warnings.warn(f"{windowed} input(s) longer than the model's maximum length "
                      f"({model.max_length} tokens): decoded with the longest context window "
                      "centred on the gaps", LongInputWarning, stacklevel=3)
    return jobs, found


def _job_positions(enc: Encoding, w: Window) -> list[int]:
    """The encoding's gap positions a job decodes, in order."""
    return sorted(p for k in w.gaps for p in enc.gaps[k])


def _decode_jobs(model: MaskedLM, jobs: list[_Job], found: dict[tuple[int, int], Variant],
                 config: DecodeConfig, length_beam: str = "each") -> list[list[Hypothesis]]:
    """Every job's hypotheses, the jobs decoded together in batches of similar length; with
    ``length_beam="shared"`` the length variants of an input share one beam
    (:func:`_beam_groups`)."""
    inputs, gaps, allowed = [], [], []
    for key, enc, w, lo, hi in jobs:
        inputs.append(w.ids(enc.input_ids, lo, hi))
        gaps.append([p - w.left + lo for k in w.gaps for p in enc.gaps[k]])
        allowed.append(_slot_allowed(model, found[key], _job_positions(enc, w)))
    group = _beam_groups(jobs, length_beam == "shared" and config.sampling is None)
    members: dict[int, list[int]] = {}
    for j, g in enumerate(group):
        members.setdefault(g, []).append(j)
    keys = list(members)
    hyps: list = [None] * len(inputs)
    for bucket in length_buckets([max(len(inputs[j]) for j in members[g]) for g in keys]):
        idx = [j for b in bucket for j in members[keys[b]]]
        shared = [group[j] for j in idx] if len(idx) > len(bucket) else None
        for j, h in zip(idx, _run_decoder(model, [inputs[j] for j in idx], [gaps[j] for j in idx],
                                          config, allowed=[allowed[j] for j in idx],
                                          groups=shared)):
            hyps[j] = h
    return hyps


def _beam_groups(jobs: list[_Job], share: bool) -> list[int]:
    """A group id per job: the length variants of one input share a group (one beam) when
    ``share`` and each variant is decoded in one window (a windowed input's windows are
    combined afterwards, which a shared beam cannot rank); else every job its own."""
    per_key = Counter(key for key, *_ in jobs)
    variants = Counter(i for i, _ in per_key)
    windowed = {i for (i, _), n in per_key.items() if n > 1}
    ids: dict = {}
    out = []
    for j, (key, *_) in enumerate(jobs):
        i = key[0]
        together = share and variants[i] > 1 and i not in windowed
        out.append(ids.setdefault(("input", i) if together else ("job", j), len(ids)))
    return out


def _ranked(jobs: list[_Job], hyps: list[list[Hypothesis]], found: dict[tuple[int, int], Variant],
            beam: int, top_k: int, rerank: bool = False
            ) -> dict[int, list[tuple[Variant, Hypothesis]]]:
    """Each input's hypotheses per length variant -- the best ``top_k`` of a fixed-length input;
    every one of the beam when lengths compete or completions are reranked (``rerank``), so
    that the ranking does not depend on ``top_k`` -- its windows' hypotheses combined
    (positions mapped back from the window to the encoding)."""
    per_input: dict[tuple[int, int], list[list[tuple[float, dict]]]] = {}
    for (key, enc, w, lo, hi), hs in zip(jobs, hyps):
        order = _job_positions(enc, w)
        per_input.setdefault(key, []).append(
            [(h.score, {p: (t, lq, st) for p, t, lq, st in zip(order, h.tokens, h.logq, h.steps)})
             for h in hs])
    variants = Counter(i for i, _ in per_input)
    ranked: dict[int, list[tuple[Variant, Hypothesis]]] = {}
    for (i, v), parts in per_input.items():
        combos = _combine(parts, beam) if len(parts) > 1 else \
            [_hypothesis(s, c) for s, c in parts[0]]
        keep = top_k if variants[i] == 1 and not rerank else beam
        ranked.setdefault(i, []).extend((found[i, v], h) for h in combos[:keep])
    return ranked


def _plan_input(model: MaskedLM, text: str, lengths, marker: str, window: bool,
                config: DecodeConfig, letters: list | None = None
                ) -> list[tuple[Variant, list[Window], int, int]]:
    """Each length variant of one input (one, for a fixed gap) with its context windows and
    the tokens ``letters`` allows at its gap positions (:mod:`infill.decoding.letters`)."""
    if isinstance(lengths, int):
        found = [Variant((), model.encode(text, lengths, marker))]
    else:
        found = length_variants(model, text, lengths, marker)
    apply_letters(model, found, letters, config.allow_special)
    out = []
    for var in found:
        enc = var.encoding
        plan, lo, hi = windows_for(model, enc.input_ids, enc.gaps, window)
        _check_decodable(model, enc, config)
        out.append((var, plan, lo, hi))
    return out


def _slot_allowed(model: MaskedLM, var: Variant, positions: list[int]):
    """[n, V] tokens allowed at each of a job's gap positions (None: no restriction)."""
    if not var.allowed:
        return None
    every = torch.ones(model.vocab_size, dtype=torch.bool)
    return torch.stack([var.allowed.get(p, every) for p in positions])


def _completions(model: MaskedLM, items: list[tuple[Variant, Hypothesis]], ranking: str,
                 top_k: int, several: bool) -> list[Completion]:
    """The completions of one input; with ``several`` length variants, ranked together by the
    length score ``ranking`` (each keeps it as ``rank_score``, even when a shared beam kept one
    length only), else reranked by (score + the PLL ``ranking``) / 2 unless it is ``off``
    (:mod:`infill.filling.reranking`), computed only for the completions that can reach the top
    ``top_k`` (:func:`infill.filling.length_ranking.rank`, exact)."""
    if not items or (not several and ranking == "off"):
        return [complete(model, var.encoding, h) for var, h in items[:top_k]]
    from infill.filling.length_ranking import rank
    from infill.filling.reranking import rerank
    filled = [_filled(var, h) for var, h in items]
    gaps = [var.encoding.positions for var, _ in items]
    scores = [h.score for _, h in items]
    if not several:
        best = rerank(model, ranking, filled, gaps, scores, top_k)
    else:
        chars = [0] * len(items)
        if ranking == "per-char":
            chars = [sum(map(len, complete(model, var.encoding, h).fills)) for var, h in items]
        best = rank(model, ranking, filled, gaps, scores, chars, top_k)
    return [dataclasses.replace(complete(model, items[j][0].encoding, items[j][1]), rank_score=v)
            for j, v in best]


def _filled(var: Variant, h: Hypothesis) -> list[int]:
    """The variant's ids with the hypothesis' tokens in its gaps."""
    ids = list(var.encoding.input_ids)
    for p, t in zip(var.encoding.positions, h.tokens):
        ids[p] = t
    return ids


def length_buckets(lengths: list[int], slack: float = 1.25, extra: int = 8) -> list[list[int]]:
    """Indices grouped by similar length (each bucket's longest <= slack x its shortest + extra),
    so that a batch does not spend its forward passes on padding; one bucket when the lengths
    are alike. Results do not depend on it: an input's draws depend only on the input."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    buckets: list[list[int]] = []
    for i in order:
        if buckets and lengths[i] <= slack * lengths[buckets[-1][0]] + extra:
            buckets[-1].append(i)
        else:
            buckets.append([i])
    return [sorted(b) for b in buckets]


def _check_decodable(model: MaskedLM, enc: Encoding, config: DecodeConfig) -> None:
    """Per-input checks that would otherwise fail the whole batch inside the decoder."""
    n = len(enc.positions)
    need = DECODERS[config.decoder].positions
    if need is not None and n != need:
        count = {1: "one", 2: "two", 3: "three"}.get(need, str(need))
        raise InputError(f"the {config.decoder} decoder fills exactly {count} gap tokens; this "
                         f"input has {n}")
    if isinstance(config.pivot, tuple) and len(config.pivot) != n:
        raise InputError(f"a per-position pivot needs one token per gap position: got "
                         f"{len(config.pivot)} for an input with {n} gap positions")


def _hypothesis(score: float, placed: dict) -> Hypothesis:
    pos = sorted(placed)
    return Hypothesis(tuple(placed[p][0] for p in pos), score, tuple(placed[p][1] for p in pos),
                      tuple(placed[p][2] for p in pos))


def _combine(parts: list[list[tuple[float, dict]]], beam: int) -> list[Hypothesis]:
    """Hypotheses of independently decoded windows -> the ``beam`` best combinations (the
    windows' scores add; their placed tokens are disjoint)."""
    combos: list[tuple[float, dict]] = [(0.0, {})]
    for hs in parts:
        merged = [(s + sh, {**c, **ch}) for s, c in combos for sh, ch in hs]
        merged.sort(key=lambda sc: -sc[0])
        combos = merged[:beam]
    return [_hypothesis(s, c) for s, c in combos]


def complete(model: MaskedLM, enc: Encoding, hyp: Hypothesis) -> Completion:
    """A :class:`Completion` (rendered text, spans, per-position confidence) from a hypothesis."""
    per_gap = enc.split(hyp.tokens)
    r = model.render(enc, per_gap)
    rank_of = {p: i for i, p in enumerate(enc.positions)}
    positions = []
    for k, (g, toks) in enumerate(zip(enc.gaps, per_gap)):
        for j, (p, t) in enumerate(zip(g, toks)):
            i = rank_of[p]
            lq = float(hyp.logq[i]) if hyp.logq else float("nan")
            positions.append(Position(gap_index=k, index=int(r.offsets[k][j]),
                                      token=model.id_to_token(t),
                                      token_id=int(t), logq=lq, prob=math.exp(lq),
                                      step=int(hyp.steps[i]) if hyp.steps else -1))
    text, fills, accented = r.text, list(r.fills), []
    if getattr(model, "alphabet", None) is not None:      # Greek characters: the user's script
        from infill.data.accents import in_users_script
        text, fills, accented = in_users_script(r.text, r.spans)
    return Completion(text=text, fills=tuple(fills), tokens=tuple(hyp.tokens), score=hyp.score,
                      positions=tuple(positions), spans=tuple(tuple(s) for s in r.spans),
                      accented=tuple(accented))
