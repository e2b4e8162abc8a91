"""Readings: score the candidate fillings scholars propose for the lacunae of a text.

    model = infill.load_model("builtin:greek")
    r = infill.readings(model, "ἔδοξε τῆι βουλῆι καὶ τῶι [....]ι", [["δήμω", "δάμω"]])
    best = r.combinations[0]
    best.readings, best.prob, best.beam_rank     # ('δάμω',), 0.97, 3 (the beam's third)

For a text with lacunae (gaps) and, per lacuna, its candidate readings:

- every **combination** (one reading per lacuna: the product of the lacunae's readings, as an
  edition's readings combine) is placed in the text as one fixed filling and gets its exact
  ``score`` under the chosen scorer and order (:mod:`infill.decoding.fixed`: the sum of the
  updates along the order the beam would fill it in -- no search); combinations of several
  gap lengths also get the length score that ranks ``gap=LO-HI`` (``rank_score``,
  :mod:`infill.decoding.lengths`), exactly as the beam's completions do;
- with one length and ``rerank`` (:mod:`infill.filling.reranking`; no builtin's default), each gets
  (score + its PLL) / 2 as ``rank_score``, the value the beam's completions are reranked by;
- its ``prob`` is the softmax of those values over the combinations (of ``rank_score`` when
  there is one, else of ``score``) at the model's calibration temperature
  (:mod:`infill.filling.calibration`), and each reading's ``prob`` the sum over the combinations
  that hold it (its marginal) -- or, where the model's unlisted mass applies to several
  lacunae, for a lacuna whose readings have one length, its own calibrated probability there
  (:func:`_lacuna_probs`);
- the normal beam search runs too (the same request): each combination's ``beam_rank`` is its
  place in the beam's top-k (None: not there) and ``beam_score`` the beam's score of it (the
  same as ``score``, except that an any-order beam may have lost the fill's best order).

The lacunae are the text's gaps in order (``___`` markers, ``?`` runs, Leiden lacunae). A
marker's length is its readings' (``gap`` left out: the range of their lengths), a fixed gap's
readings must have its length.
"""
from __future__ import annotations

import itertools
import math
import unicodedata
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from infill.data.greek import normalize
from infill.decoding.engine import Hypothesis
from infill.decoding.fixed import fixed_scores
from infill.decoding.lengths import Variant, gap_lengths
from infill.decoding.lengths import variants as length_variants
from infill.decoding.letters import (apply_edges, apply_letters, apply_undivided,
                                     reported_edges)
from infill.decoding.windows import windows_for
from infill.errors import ConfigError, InputError, LongInputWarning
from infill.filling import length_ranking, planner, reranking
from infill.filling.calibration import gap_calibrated, gaps_on_their_own, model_calibrated
from infill.filling.defaults import config_json
from infill.filling.results import complete

__all__ = ["Candidate", "Combination", "MAX_COMBINATIONS", "ReadingsResult", "ScoredReading",
           "as_candidates", "parse_readings", "readings_gap", "score_readings"]

MAX_COMBINATIONS = 512
"""Combinations of readings (the product over the lacunae) scored in one text."""
MAX_ANY_ORDER_ROWS = 2 ** 17
"""any-order: forward rows (2^n per combination of n positions) one text's readings may take."""
SEPARATOR = "|"
"""Between the readings of one lacuna as typed (``--readings 'δήμω|δήμο'``)."""
READING_SCORERS = ("standard", "hcb")


@dataclass(frozen=True)
class Candidate:
    """One proposed reading of a lacuna: its ``text``, who proposed it (``resp``, EpiDoc's
    ``resp``), and whether it is the edition's ``lem`` (EpiDoc ``<lem>``)."""

    text: str
    resp: str | None = None
    lem: bool = False


@dataclass(frozen=True)
class ScoredReading:
    """A reading of one lacuna with its probability among the readings (its marginal over the
    combinations); ``element``: the EpiDoc ``<lem>``/``<rdg>`` it came from (None: typed)."""

    text: str
    prob: float
    resp: str | None = None
    lem: bool = False
    element: Any = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict:
        return {"text": self.text, "prob": self.prob, "resp": self.resp, "lem": self.lem}


@dataclass(frozen=True)
class Combination:
    """One reading per lacuna placed in the text: the ``readings``, the filled ``completion``
    (:class:`~infill.filling.results.Completion`: text, spans, positions), its exact ``score``, the length
    score ``rank_score`` (None: one length), ``prob`` among the combinations, its place in the
    beam's top-k (``beam_rank``, None: not there) and the beam's score of it (``beam_score``);
    ``exact``: False when an any-order score is a lower bound (:mod:`infill.decoding.fixed`)."""

    readings: tuple[str, ...]
    completion: Any
    score: float
    prob: float
    rank_score: float | None = None
    beam_rank: int | None = None
    beam_score: float | None = None
    exact: bool = True

    def to_json(self) -> dict:
        return {"readings": list(self.readings), "text": self.completion.text,
                "score": _finite(self.score), "rank_score": _finite(self.rank_score),
                "prob": self.prob, "beam_rank": self.beam_rank,
                "beam_score": _finite(self.beam_score), "exact": self.exact}


def _finite(v: float | None) -> float | None:
    """JSON has no -inf: a filling the model gives probability 0 is written as null."""
    return None if v is None or not math.isfinite(v) else v


@dataclass
class ReadingsResult:
    """The readings of one text scored: per lacuna its readings (``lacunae``), the
    ``combinations`` best first, the beam's own top-k (``completions``), the options that ran
    (``config``, ``gap``, ``length_score`` and ``length_beam`` when lengths were ranked),
    ``notes``; or its
    ``error``."""

    input: str
    lacunae: list[list[ScoredReading]] = field(default_factory=list)
    combinations: list[Combination] = field(default_factory=list)
    completions: list = field(default_factory=list)
    config: Any = None
    gap: Any = None
    length_score: str | None = None
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    rerank: str | None = None
    length_beam: str | None = None
    lacuna_edges: str | None = None
    defaults: Any = field(default=None, compare=False)
    request: Any = field(default=None, compare=False)
    """The resolved fill request that ran (:class:`~infill.filling.request.FillRequest`)."""
    model: str | None = None
    id: str | None = None

    def to_json(self) -> dict:
        """One line of ``infill run --readings --json`` (the answer of ``POST /api/readings``)."""
        config = config_json(self.config, self.defaults, self.length_score, self.length_beam,
                             self.rerank, self.lacuna_edges)
        return {"id": self.id, "input": self.input, "model": self.model, "config": config,
                "gap": self.gap, "notes": self.notes, "error": self.error,
                "lacunae": [{"lacuna": k, "readings": [r.to_json() for r in rs]}
                            for k, rs in enumerate(self.lacunae)],
                "combinations": [c.to_json() for c in self.combinations],
                "completions": [c.to_json(r) for r, c in enumerate(self.completions, 1)]}


# ---- reading the readings -------------------------------------------------------------------
def parse_readings(value: str) -> list[str]:
    """One lacuna's readings as typed: ``'δήμω|δήμο'`` (separated by ``|``, spaces around each
    kept out)."""
    return [r.strip() for r in value.split(SEPARATOR)]


def as_candidates(readings) -> list[list[Candidate]]:
    """The ``readings`` argument read: per lacuna, a ``'a|b'`` string or a list of strings /
    :class:`Candidate` objects / ``(text, resp)`` pairs. InputError when it is none of these
    or a lacuna has none."""
    if isinstance(readings, str) or not isinstance(readings, Sequence) or not readings:
        raise InputError("readings: give a list with each lacuna's readings (e.g. "
                         "[['δήμω', 'δήμο']] or ['δήμω|δήμο'])", field="readings")
    out = []
    for k, rs in enumerate(readings, 1):
        items = parse_readings(rs) if isinstance(rs, str) else rs
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
            raise InputError(f"readings of lacuna {k}: a list of strings, got "
                             f"{type(items).__name__}", field="readings")
        cands = [_candidate(c, k) for c in items]
        if not cands or any(not c.text for c in cands):
            raise InputError(f"lacuna {k} has an empty reading (no text between '|')"
                             if cands else f"lacuna {k} has no readings", field="readings")
        out.append(cands)
    return out


def _candidate(c, k: int) -> Candidate:
    if isinstance(c, Candidate):
        return c
    if isinstance(c, str):
        return Candidate(c.strip())
    if isinstance(c, (tuple, list)) and len(c) == 2 and all(isinstance(v, (str, type(None)))
                                                            for v in c):
        return Candidate(str(c[0]).strip(), c[1])
    raise InputError(f"a reading of lacuna {k} is text, got {type(c).__name__}",
                     field="readings")


def _marker_gaps(model, text: str, marker: str) -> list[bool]:
    """For each gap of ``text`` in order: whether it is a marker (its length is the gap
    option's) rather than a gap of its own length (a ``?`` run, a mask token)."""
    a, b = model.encode(text, 1, marker), model.encode(text, 2, marker)
    return [len(x) != len(y) for x, y in zip(a.gaps, b.gaps)]


def unread_characters(model, text: str) -> list[str]:
    """The distinct characters of a reading that ``model`` would drop without reading them:
    control and format characters (a bidi override, a zero-width joiner, private use) for every
    model; for a model with an alphabet also each one its normalization drops (brackets, ``\\``,
    ``@``, ``*``, apostrophes), accents excepted (they are read off the letter)."""
    alphabet = getattr(model, "alphabet", None)
    out: dict[str, None] = {}
    for c in text:
        if unicodedata.category(c)[0] == "C":
            out[c] = None
        elif alphabet is not None and not c.isspace() and not unicodedata.combining(c):
            if not normalize(c, strip=False, alphabet=alphabet, unknown=True):
                out[c] = None
    return list(out)


def unread_error(model, text: str, k: int) -> str | None:
    """The one line refusing reading ``text`` of lacuna ``k`` for the characters ``model``
    would drop (:func:`unread_characters`), or None: what is shown is what is scored."""
    bad = unread_characters(model, text)
    if not bad:
        return None
    named = ", ".join(f"{c!r} (U+{ord(c):04X})" for c in bad[:5])
    hint = " (a '\\|' copied from a Markdown table: type '|')" if "\\" in bad else ""
    return (f"reading {text!r} of lacuna {k} holds {named}, which {model.name} does not read "
            f"(it would be dropped, and another text scored than the one shown): remove it{hint}")


def _tokens(model, cand: Candidate, k: int, allow_special: bool) -> list[int]:
    """The model's ids of a reading of lacuna ``k`` (1-based); InputError for text the model
    cannot write there (characters outside its alphabet or vocabulary, or ones it would drop:
    :func:`unread_error`)."""
    unread = unread_error(model, cand.text, k)
    if unread is not None:
        raise InputError(unread, field="readings")
    if model.input_notes(cand.text):
        raise InputError(f"reading {cand.text!r} of lacuna {k}: {model.input_notes(cand.text)[0]}",
                         field="readings")
    try:
        ids, bare = list(model.tokenize(cand.text)), list(model.tokenize(""))
        head = next((i for i, (a, b) in enumerate(zip(ids, bare)) if a != b), len(bare))
        ids = ids[head:len(ids) - (len(bare) - head)]      # the specials tokenize adds
    except InputError as e:
        raise InputError(f"reading {cand.text!r} of lacuna {k}: {e.message()}",
                         field="readings") from None
    ok = model.allowed_mask(allow_special)
    bad = [t for t in ids if not (0 <= t < model.vocab_size and ok[t])]
    if bad or not ids:
        what = f"holds {model.id_to_token(bad[0])!r}" if bad else "is empty to the model"
        raise InputError(f"reading {cand.text!r} of lacuna {k} {what}, which {model.name} "
                         "cannot place in a gap (outside its alphabet or vocabulary)",
                         field="readings")
    return ids


def readings_gap(model, text: str, marker: str, gap, readings: list[list[Candidate]],
                 allow_special: bool = False) -> tuple[Any, list[list[list[int]]], list[str]]:
    """The gap option the readings of ``text`` are scored (and the beam decodes) with, each
    reading's ids, and notes; readings the model reads alike are kept once (in place). Each
    marker takes the ``gap`` given (one for all, or a list per marker), or without one the
    range of its readings' lengths; every reading must fit its lacuna.
    InputError (one line) for readings of a lacuna the text lacks, a lacuna without readings,
    a reading of the wrong length, letters the model cannot write."""
    markers = _marker_gaps(model, text, marker)
    if len(readings) != len(markers):
        more = len(readings) > len(markers)
        raise InputError(
            (f"readings for lacuna {len(markers) + 1}, but the text has {len(markers)} "
             "lacuna(e)" if more else f"the text has {len(markers)} lacunae and readings for "
             f"{len(readings)}: give one list of readings per lacuna, in order"),
            field="readings")
    ids = [[_tokens(model, c, k, allow_special) for c in rs] for k, rs in enumerate(readings, 1)]
    ids = _as_read(model, text, marker, ids)
    notes = _distinct(readings, ids)
    n_markers = sum(markers)
    asked = gap if isinstance(gap, list) else [gap] * n_markers
    if len(asked) != n_markers:
        raise InputError(f"{len(asked)} gap lengths for {n_markers} gap markers {marker!r}",
                         field="gap")
    own = iter(f"{min(map(len, i))}-{max(map(len, i))}" for i, m in zip(ids, markers) if m)
    chosen = [next(own) if g is None else g for g in asked]
    for i, g in enumerate(chosen):
        if isinstance(g, str) and "-" in g and g.split("-")[0] == g.split("-")[1]:
            chosen[i] = int(g.split("-")[0])
    gap = (chosen[0] if len(set(map(repr, chosen))) == 1 else chosen) if chosen else 1
    given = gap_lengths(model, gap)
    specs = iter(given if isinstance(given, list) else [given] * n_markers)
    fixed = iter(len(g) for g, m in zip(model.encode(text, 1, marker).gaps, markers) if not m)
    for k, (rs, m) in enumerate(zip(readings, markers)):
        s = next(specs) if m else next(fixed)
        lo, hi = (s, s) if isinstance(s, int) else (s.lo, s.hi)
        for c, i in zip(rs, ids[k]):
            if not lo <= len(i) <= hi:
                size = f"{lo}" if lo == hi else f"{lo}-{hi}"
                raise InputError(f"reading {c.text!r} of lacuna {k + 1} is {len(i)} "
                                 f"{model.unit} long; the lacuna holds {size}",
                                 field="readings")
    return gap, ids, notes


def _as_read(model, text: str, marker: str, ids: list[list[list[int]]]) -> list[list[list[int]]]:
    """The readings of a text that writes one letter for u and v (``IVLIVS``), spelled as the
    model reads that text (:mod:`infill.models.uv`): each reading's u and v decided in its
    place, between the text around its lacuna."""
    if not hasattr(model, "respell_uv"):
        return ids
    enc = model.encode(text, 1, marker)
    if not enc.written:
        return ids
    out = []
    for gap, rs in zip(enc.gaps, ids):
        left, right = enc.input_ids[:gap[0]], enc.input_ids[gap[-1] + 1:]
        out.append([model.respell_uv(left + r + right, always=True)[0][len(left):len(left) + len(r)]
                    for r in rs])
    return out


def _distinct(readings: list[list[Candidate]], ids: list[list[list[int]]]) -> list[str]:
    """Keep the first of the readings of a lacuna that the model reads as the same tokens
    (``δήμο`` and ``δῆμο``: the model reads no accents), in place; a note for each dropped."""
    notes = []
    for k, (rs, ts) in enumerate(zip(readings, ids), 1):
        seen: dict[tuple, Candidate] = {}
        keep = []
        for c, t in zip(rs, ts):
            if tuple(t) in seen:
                notes.append(f"reading {c.text!r} of lacuna {k} reads as "
                             f"{seen[tuple(t)].text!r} to the model: scored once")
            else:
                seen[tuple(t)] = c
                keep.append((c, t))
        rs[:], ts[:] = [c for c, _ in keep], [t for _, t in keep]
    return notes


def check_config(config) -> None:
    """Readings are scored under the beam search's own rules: the beam decoder (no sampling)
    with the standard or hcb scorer."""
    if config.decoder != "beam" or config.sampling is not None:
        raise ConfigError("readings are scored under beam search's rules: use the beam decoder "
                          "(no sampling)", field="decoder" if config.decoder != "beam"
                          else "sampling")
    if config.scorer_name not in READING_SCORERS:
        raise ConfigError(f"readings are scored with the standard or hcb scorer, not "
                          f"{config.scorer_name!r}", field="scorer")


# ---- scoring ---------------------------------------------------------------------------------
def score_readings(model, text: str, readings: list[list[Candidate]], ids: list[list[list[int]]],
                   request, defaults=None) -> ReadingsResult:
    """Score every combination of ``readings`` (their ``ids`` from :func:`readings_gap`) in
    ``text`` under the resolved fill ``request`` (:func:`~infill.filling.defaults.resolve_fill`), and
    run the beam with it; see the module docstring."""
    config = request.config
    check_config(config)
    combos = list(itertools.product(*(range(len(rs)) for rs in readings)))
    if len(combos) > MAX_COMBINATIONS:
        raise InputError(f"the readings give {len(combos)} combinations, more than the limit "
                         f"of {MAX_COMBINATIONS}; give fewer readings", field="readings")
    variants = _variants(model, text, request)
    scored = _score_combos(model, variants, ids, combos, request,
                           [[c.text for c in rs] for rs in readings])
    with warnings.catch_warnings():       # a long text's windows: the beam's note says so
        warnings.simplefilter("ignore", LongInputWarning)
        [beam] = planner.fill_resolved(model, [text], request, defaults)
    if beam.error is not None:
        raise InputError(beam.error, field=beam.error_field)
    by_key: dict = {}
    for r, c in enumerate(beam.completions, 1):     # without dedup a fill may recur: its best
        by_key.setdefault(_key(c), (r, c.score))
    values = [s["rank_score"] if s["rank_score"] is not None else s["score"] for s in scored]
    probs = model_calibrated(values, defaults, any(s["rank_score"] is not None for s in scored))
    out = []
    for combo, s, p in zip(combos, scored, probs):
        rank, bscore = by_key.get(tuple(tuple(ids[k][j]) for k, j in enumerate(combo)),
                                  (None, None))
        out.append(Combination(tuple(readings[k][j].text for k, j in enumerate(combo)),
                               s["completion"], s["score"], p, s["rank_score"], rank, bscore,
                               s["exact"]))
    ranked = sorted(range(len(out)), key=lambda i: -probs[i])
    lacunae = _lacuna_probs(readings, ids, [out[i] for i in ranked],
                            [probs[i] for i in ranked], defaults)
    lengths = len({id(s["var"]) for s in scored}) > 1
    reranked = not lengths and scored[0]["rank_score"] is not None
    return ReadingsResult(text, lacunae, [out[i] for i in ranked], beam.completions,
                          config=config, gap=request.gap,
                          length_score=request.length_score if lengths else None,
                          length_beam=request.length_beam if lengths else None,
                          notes=list(beam.notes), defaults=defaults, request=request,
                          rerank=request.rerank if reranked else None,
                          lacuna_edges=reported_edges(model, request.lacuna_edges))


def _lacuna_probs(readings: list[list[Candidate]], ids: list[list[list[int]]],
                  ranked: list[Combination], probs: list[float], defaults
                  ) -> list[list[ScoredReading]]:
    """Each lacuna's readings with their probabilities (``ranked``: the combinations, best
    first, and their ``probs``): their marginals over the combinations; where the model's
    unlisted mass applies to several lacunae
    (:func:`~infill.filling.calibration.gaps_on_their_own`), a lacuna whose readings have one
    length is calibrated on its own -- each reading's own log-score there in the best
    combination holding it, among the lacuna's readings -- so that one lacuna's doubt is not
    shared by the others' readings."""
    own = gaps_on_their_own(defaults, len(readings))
    out = []
    for k, rs in enumerate(readings):
        if own and len({len(t) for t in ids[k]}) == 1:
            best = {}
            for c in ranked:
                best.setdefault(c.readings[k], c)
            p = gap_calibrated([best[c.text].completion for c in rs], k, defaults)
        else:
            p = [sum(q for c, q in zip(ranked, probs) if c.readings[k] == r.text) for r in rs]
        out.append([ScoredReading(r.text, pr, r.resp, r.lem) for r, pr in zip(rs, p)])
    return out


def _key(completion) -> tuple:
    """A completion's tokens per gap."""
    per: dict[int, list[int]] = {}
    for p in completion.positions:
        per.setdefault(p.gap_index, []).append(p.token_id)
    return tuple(tuple(per[k]) for k in sorted(per))


def _variants(model, text: str, request) -> dict[tuple[int, ...], Any]:
    """The text's encodings (the beam's own length variants) by the length of each gap, with
    the request's letter sets (``letters``) among the tokens each position allows."""
    lengths = gap_lengths(model, request.gap)
    if isinstance(lengths, int):
        found = [Variant((), model.encode(text, lengths, request.marker))]
    else:
        found = length_variants(model, text, lengths, request.marker)
    apply_letters(model, found, getattr(request, "letters", None), request.config.allow_special)
    apply_undivided(model, found, request.config.allow_special)
    if getattr(request, "lacuna_edges", None) == "letters":
        apply_edges(model, found, request.config.allow_special)
    return {tuple(len(g) for g in v.encoding.gaps): v for v in found}


def _score_combos(model, variants: dict, ids: list[list[list[int]]], combos: list[tuple],
                  request, names: list[list[str]]) -> list[dict]:
    """Each combination's exact score (summed over the context windows of a long text, as the
    fill combines them), its completion and, with several lengths, its length score."""
    config = request.config
    rows, owners, placed, entries = [], [], [], []
    for c, combo in enumerate(combos):
        toks = [ids[k][j] for k, j in enumerate(combo)]
        var = variants.get(tuple(map(len, toks)))
        if var is None:
            raise InputError("the readings do not fit the text's gap lengths", field="readings")
        enc = var.encoding
        at = {p: t for g, ts in zip(enc.gaps, toks) for p, t in zip(g, ts)}
        _check_placeable(var, at, [names[k][j] for k, j in enumerate(combo)])
        plan, lo, hi = windows_for(model, enc.input_ids, enc.gaps, request.window)
        for w in plan:
            pos = sorted(p for k in w.gaps for p in enc.gaps[k])
            rows.append((w.ids(enc.input_ids, lo, hi), [p - w.left + lo for p in pos],
                         [at[p] for p in pos], _allowed(model, var, pos)))
            owners.append(c)
            placed.append(pos)
        entries.append((var, at))
    if config.order_name == "any-order" and sum(2 ** len(r[1]) for r in rows) > MAX_ANY_ORDER_ROWS:
        raise InputError(f"any-order readings of {max(len(r[1]) for r in rows)} positions need "
                         f"2^n forward rows each, more than {MAX_ANY_ORDER_ROWS:,} in all; give "
                         "fewer readings or choose another order", field="readings")
    got = fixed_scores(model, [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                       config.search(), [r[3] for r in rows],
                       keep_lower=config.dedup and config.dedup_keep == "lower")
    out = [{"score": 0.0, "logq": {}, "steps": {}, "exact": True} for _ in entries]
    for c, pos, f in zip(owners, placed, got):
        o = out[c]
        o["score"] += f.score
        o["exact"] &= f.exact
        o["logq"].update(zip(pos, f.logq))
        o["steps"].update(zip(pos, f.steps))
    for (var, at), o in zip(entries, out):
        pos = var.encoding.positions
        hyp = Hypothesis(tuple(at[p] for p in pos), o["score"],
                         tuple(o["logq"][p] for p in pos), tuple(o["steps"][p] for p in pos))
        o["completion"], o["hyp"], o["var"] = complete(model, var.encoding, hyp), hyp, var
        o["rank_score"] = None
    if len({id(o["var"]) for o in out}) > 1:
        _length_scores(model, out, request.length_score)
    elif getattr(request, "rerank", None) not in (None, "off"):
        _rerank_scores(model, out, request.rerank)
    return out


def _allowed(model, var, positions: list[int]) -> torch.Tensor | None:
    """[n, V] tokens the beam may place at each position (a whole-word gap's), or None."""
    if not var.allowed:
        return None
    every = torch.ones(model.vocab_size, dtype=torch.bool)
    return torch.stack([var.allowed.get(p, every) for p in positions])


def _check_placeable(var, at: dict, texts: list[str]) -> None:
    """InputError when a reading holds a token the beam could not place at its position (a
    letter outside the position's set ``#[...]``; a whole-word gap: a ``##`` piece first, a word
    start inside)."""
    for k, g in enumerate(var.encoding.gaps):
        for j, p in enumerate(g):
            mask = var.allowed.get(p)
            if mask is not None and not bool(mask[at[p]]):
                raise InputError(f"reading {texts[k]!r} of lacuna {k + 1} does not fit: its "
                                 f"token {j + 1} may not stand there (outside the position's "
                                 "letter set #[...], a word space at a lacuna's edge where "
                                 "lacuna_edges is letters, or not one whole word of word "
                                 "pieces where the gap is 'word')", field="readings")


def _rerank_scores(model, out: list[dict], kind: str) -> None:
    """Each combination's (score + PLL) / 2 (:mod:`infill.filling.reranking`, all of them: exhaustive), the
    value the beam's completions of one length are reranked by."""
    filled = [planner.filled_ids(o["var"], o["hyp"]) for o in out]
    values = reranking.rerank(model, kind, filled, [o["var"].encoding.positions for o in out],
                              [o["score"] for o in out], len(out), exhaustive=True)
    for j, v in values:
        out[j]["rank_score"] = v


def _length_scores(model, out: list[dict], length_score: str) -> None:
    """The length score of every combination (:func:`infill.filling.length_ranking.rank`, all of them:
    exhaustive), the value the beam's completions of several lengths are ranked by."""
    chars = [sum(map(len, o["completion"].fills)) for o in out]
    filled = [planner.filled_ids(o["var"], o["hyp"]) for o in out]
    values = length_ranking.rank(model, length_score, filled,
                                 [o["var"].encoding.positions for o in out],
                                 [o["score"] for o in out], chars, len(out), exhaustive=True,
                                 progress=False)
    for j, v in values:
        out[j]["rank_score"] = v
