"""The fill planner: a resolved :class:`~infill.filling.request.FillRequest` over many texts
becomes decoder jobs -- one per gap-length variant (:mod:`infill.decoding.lengths`) and context
window (:mod:`infill.decoding.windows`), letter sets applied (:mod:`infill.decoding.letters`) --
decoded together in batches of similar length by the configured decoder
(:mod:`infill.filling.decoders`), windows combined, and ranked: by their score, by a length score
when lengths compete (:mod:`infill.filling.length_ranking`) or reranked by a PLL
(:mod:`infill.filling.reranking`).
"""
from __future__ import annotations

import dataclasses
import warnings
from collections import Counter
from collections.abc import Sequence

import torch

from infill.config import DecodeConfig
from infill.data.files import check_text
from infill.decoding.engine import Hypothesis
from infill.decoding.lengths import LENGTH_SCORES, PER_CHAR, Variant, gap_lengths
from infill.decoding.lengths import variants as length_variants
from infill.decoding.letters import (apply_edges, apply_letters, apply_undivided,
                                     reported_edges)
from infill.decoding.windows import Window, windows_for
from infill.errors import WINDOWED, ConfigError, InfillError, InputError, LongInputWarning
from infill.filling.decoders import DECODERS, run_decoder
from infill.filling import own_search
from infill.filling.defaults import Defaults
from infill.filling.length_ranking import rank
from infill.filling.request import FillRequest
from infill.filling.reranking import rerank
from infill.filling.results import Completion, FillResult, complete
from infill.models.base import Encoding, MaskedLM

__all__ = ["fill_resolved", "filled_ids", "length_buckets", "text_list"]


def text_list(texts) -> list:
    """A list of the given inputs; InputError for what is not a sequence of them."""
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise InputError("fill takes text (a string or a list of strings); use decode for ids, "
                         f"got {type(texts).__name__}")
    return list(texts)


def fill_resolved(model: MaskedLM, texts: Sequence[str], request: FillRequest,
                  defaults: Defaults | None = None, _raise: bool = False) -> list[FillResult]:
    """:func:`fill_each` with a request already resolved (:func:`resolve_fill`): what the fill
    job runs, each result carrying the request's config and gap."""
    config, top_k, gap = request.config, request.top_k, request.gap
    texts = _fill_texts(texts)
    lengths = _fill_lengths(model, gap, config, request.length_score)
    edges = getattr(request, "lacuna_edges", None)
    results = [FillResult(t, [], defaults=defaults, config=config, gap=gap,
                          letters=getattr(request, "letters", None),
                          lacuna_edges=reported_edges(model, edges))
               for t in texts]
    if own_search.applies(model, config):          # Aeneas: its search, '#' lacunae too
        _check_own_edges(edges)
        return own_search.fill_own(model, texts, request, results, _raise)
    _check_own_options(config)
    jobs, found = _plan_jobs(model, texts, lengths, request.marker, request.window, config,
                             results, _raise, letters=getattr(request, "letters", None),
                             edges=edges == "letters")
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
            if rerank != "off":
                results[i].notes.append(f"rerank {rerank}: not applied: this input's gaps have "
                                        "several lengths, ranked together by length_score "
                                        f"{request.length_score}")
        elif rerank != "off":
            results[i].rerank = rerank
    return results


OWN_SEARCH_OPTIONS = ("unknown_max_length", "length_penalty")
"""The decoding options of a model's own search only (:mod:`infill.filling.own_search`)."""


def _check_own_edges(edges: str | None) -> None:
    """ConfigError for ``lacuna_edges="letters"`` given to Aeneas's own search, which places
    its characters itself (honoured or refused, never dropped)."""
    if edges == "letters":
        raise ConfigError("'lacuna_edges' letters is a rule of infill's decoders; Aeneas's own "
                          "search (an Aeneas model, order any-order, scorer standard) places "
                          "its characters itself: give lacuna_edges any, or another order or "
                          "scorer", field="lacuna_edges")


def _check_own_options(config: DecodeConfig) -> None:
    """ConfigError for an option of a model's own search given to a fill that does not run it
    (honoured or refused, never dropped)."""
    if config.temperature is not None and config.sampling != "temperature":
        raise ConfigError("'temperature' tempers sampling \"temperature\" and Aeneas's own search "
                          "(an Aeneas model, order any-order, scorer standard); this fill "
                          f"runs infill's {config.decoder} decoder without sampling",
                          field="temperature")
    own = config.changed(OWN_SEARCH_OPTIONS)
    if own:
        raise ConfigError(f"'{own[0]}' is an option of Aeneas's own search (an Aeneas model, "
                          "order any-order, scorer standard); this fill runs infill's "
                          f"{config.decoder} decoder", field=own[0])


_Job = tuple[tuple[int, int], Encoding, Window, int, int]
"""One decoder input of :func:`fill_each`: ((input, variant), encoding, window, lo, hi)."""


def _fill_texts(texts) -> list[str]:
    """The inputs of :func:`fill_each`; InputError when there are none or one is not text."""
    texts = text_list(texts)
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
               letters: list | None = None, edges: bool = False
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
                                  window, config, letters, edges)
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
    same = _repeated(inputs, gaps, allowed) if config.sampling is None else {}
    group = _beam_groups(jobs, length_beam == "shared" and config.sampling is None, same)
    members: dict[int, list[int]] = {}
    for j, g in enumerate(group):
        if j not in same:
            members.setdefault(g, []).append(j)
    keys = list(members)
    hyps: list = [None] * len(inputs)
    for bucket in length_buckets([max(len(inputs[j]) for j in members[g]) for g in keys]):
        idx = [j for b in bucket for j in members[keys[b]]]
        shared = [group[j] for j in idx] if len(idx) > len(bucket) else None
        for j, h in zip(idx, run_decoder(model, [inputs[j] for j in idx], [gaps[j] for j in idx],
                                          config, allowed=[allowed[j] for j in idx],
                                          groups=shared)):
            hyps[j] = h
    for j, first in same.items():
        hyps[j] = hyps[first]
    return hyps


def _repeated(inputs: list, gaps: list, allowed: list) -> dict[int, int]:
    """{job: the earlier job it repeats}: the same window ids, gap positions and allowed tokens.
    A long input's lacuna of uncertain length is decoded at every length, and its context
    windows that do not hold that lacuna are alike in every length variant (the same ids,
    shifted): they are decoded once (a deterministic search gives them the same hypotheses)."""
    seen: dict = {}
    out = {}
    for j, (ids, at, a) in enumerate(zip(inputs, gaps, allowed)):
        key = (tuple(ids), tuple(at),
               None if a is None else (tuple(a.shape), a.cpu().numpy().tobytes()))
        if seen.setdefault(key, j) != j:
            out[j] = seen[key]
    return out


def _beam_groups(jobs: list[_Job], share: bool, same: dict[int, int]) -> list[int]:
    """A group id per job: with ``share``, the length variants' jobs of one input that decode
    the same gaps share one beam -- the whole text of a short input; in a long one, the context
    windows holding the same gaps, so that a window holding a lacuna of uncertain length
    decodes its lengths together, and the windows are combined afterwards as before -- else
    every job its own. A job that repeats an earlier one (``same``) joins no group."""
    ids: dict = {}
    out = []
    for j, (key, enc, w, lo, hi) in enumerate(jobs):
        together = share and j not in same
        out.append(ids.setdefault(("input", key[0], tuple(w.gaps)) if together else ("job", j),
                                  len(ids)))
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
                config: DecodeConfig, letters: list | None = None, edges: bool = False
                ) -> list[tuple[Variant, list[Window], int, int]]:
    """Each length variant of one input (one, for a fixed gap) with its context windows and
    the tokens ``letters`` allows at its gap positions, with ``edges`` no word space at a
    lacuna's first or last (:mod:`infill.decoding.letters`)."""
    if isinstance(lengths, int):
        found = [Variant((), model.encode(text, lengths, marker))]
    else:
        found = length_variants(model, text, lengths, marker)
    apply_letters(model, found, letters, config.allow_special)
    apply_undivided(model, found, config.allow_special)
    if edges:
        apply_edges(model, found, config.allow_special)
    out = []
    for var in found:
        enc = var.encoding
        try:
            plan, lo, hi = windows_for(model, enc.input_ids, enc.gaps, window)
        except InputError as e:
            if not getattr(enc, "undivided", False):
                raise
            raise InputError(f"{e.message()} (counted as the model reads it, with the word spaces "
                             "of its division)", field=e.field) from None
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
    filled = [filled_ids(var, h) for var, h in items]
    gaps = [var.encoding.positions for var, _ in items]
    scores = [h.score for _, h in items]
    shown = {}                         # completions already written (the per-char scores')
    if not several:
        best = rerank(model, ranking, filled, gaps, scores, top_k)
    else:
        chars = [0] * len(items)
        if ranking in PER_CHAR:
            shown = {j: complete(model, var.encoding, h) for j, (var, h) in enumerate(items)}
            chars = [sum(map(len, shown[j].fills)) for j in range(len(items))]
        best = rank(model, ranking, filled, gaps, scores, chars, top_k)
    return [dataclasses.replace(shown[j] if j in shown else
                                complete(model, items[j][0].encoding, items[j][1]), rank_score=v)
            for j, v in best]


def filled_ids(var: Variant, h: Hypothesis) -> list[int]:
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

