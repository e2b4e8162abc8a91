"""Doubtful readings (``infill check``): how probable each written token is in its context.

For every checked position t of a text -- each preserved letter, word piece or residue -- the
model reads the text with t masked (and the text's own gaps masked too: a lacuna is never
checked and never seen) and gives q_t(. | x_{-t}). A check reports

- ``logq``: log q_t(written), the probability of what is written;
- ``best``: the most probable *other* token (special tokens and, for character models, the word
  space excluded) and its ``best_logq``;
- ``log_ratio`` = logq - best_logq (negative: the alternative is more probable);
- ``flagged``: best_logq - logq >= threshold (nats; :class:`~infill.check_request.CheckRequest`).

With a substitution alphabet (residue models: the 20 amino acids; character models: the
letters), the whole table log q_t(a) - log q_t(written) is kept too: ESM's masked-marginal
score of every single substitution (Meier et al. 2021).

Every position of every text is one masked row; the rows of all texts go through the model
together, :data:`max_rows` per call (the adapter chunks a CPU call further by memory, see
:func:`~infill.models.base.row_chunked`). A text longer than the model's maximum length reads each
position in the longest context window centred on it (:func:`~infill.decoding.windows.truncate`).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from infill.data.files import _env_limit
from infill.data.residues import STANDARD_AA
from infill.decoding.windows import body_bounds, truncate
from infill.errors import InputError
from infill.models.base import MaskedLM, pad_batch
from infill.models.wordpiece import _space_before
from infill.models.continua import divided_note
from infill.models.uv import uv_note

__all__ = ["Reading", "PositionCheck", "TextCheck", "bounded", "read_for_check", "score_rows",
           "substitution_alphabet", "check_readings"]


@dataclass
class Reading:
    """A text as a check reads it: the model's ``ids`` (gaps hold the mask), the ``checked``
    positions, and for display ``shown`` -- the text as the model reads it -- with each
    position's [start, end) ``spans`` in it (None for the leading/trailing specials)."""

    ids: list[int]
    checked: list[int]
    shown: str
    spans: list[tuple[int, int] | None]
    gaps: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def gap_symbols(model: MaskedLM, marker: str) -> list[str]:
    """The strings that mark a gap in a text for ``model``: the marker, its mask token and, for
    character and residue models, ``?``."""
    out = [marker] if marker else []
    try:
        out.append(model.id_to_token(model.mask_id))
    except (IndexError, KeyError):              # a mask with no spelling: never in a text
        pass
    if model.unit in ("characters", "residues"):
        out.append("?")
    return [s for s in out if s]


def read_for_check(model: MaskedLM, text: str, marker: str = "___", gap: int = 1) -> Reading:
    """``text`` as a check reads it: each gap marker ``gap`` masked tokens, a ``?`` one masked
    character or residue (those are not checked); every other ordinary token is checked (for a
    character model, not the word space: word division is the editor's). InputError for an
    empty text, one with nothing to check, or one the model cannot read."""
    if not text or not text.strip():
        raise InputError("empty input: nothing to check")
    if any(s in text for s in gap_symbols(model, marker)):
        enc = model.encode(text, gap, marker)           # its notes: the model's input notes too
        ids, notes = list(enc.input_ids), list(enc.notes)
    else:
        ids, notes = list(model.tokenize(text)), list(model.input_notes(text))
        if hasattr(model, "divide_text"):        # typed off the stone: IVLIVSFELIX, ΗΒΟΥΛΗ
            ids, _, undivided = model.divide_text(text, ids, [])
            ids, written = model.respell_text(text, ids)
            notes += divided_note(ids if undivided else None, model.alphabet) + uv_note(written)
    gaps = [t for t, i in enumerate(ids) if i == model.mask_id and not model.mask_in_text]
    checked = [t for t, i in enumerate(ids) if i < model.vocab_size and i not in model.special_ids
               and t not in gaps and not _is_space(model, i)]
    if not checked:
        raise InputError("nothing to check: the text is only gaps, spaces or special tokens"
                         if gaps else "nothing to check: the text has no ordinary token")
    shown, spans = layout(model, ids, gap_shown="?" if model.unit != "tokens" else marker)
    return bounded(model, Reading(ids, checked, shown, spans, gaps, notes))


MAX_CHECK_POSITIONS = 2_000
"""Checked positions of one input longer than the model (``INFILL_MAX_CHECK_POSITIONS``): each is
one pass of the model over a full window (builtin:greek, 511 characters: 65 ms or more a CPU
core, benchmarks/results/check_long_texts.md), so more is refused at once, not left to run for
many minutes without a word."""


def bounded(model: MaskedLM, reading: Reading) -> Reading:
    """``reading`` unless it is longer than the model and has more than
    :data:`MAX_CHECK_POSITIONS` (or ``INFILL_MAX_CHECK_POSITIONS``) positions to check:
    InputError naming the count, the limit and what to do."""
    limit = _env_limit("INFILL_MAX_CHECK_POSITIONS", MAX_CHECK_POSITIONS)
    n = len(reading.checked)
    if n > limit and len(reading.ids) > model.max_length:
        raise InputError(f"{n:,} positions to check, over the limit of {limit:,} for a text "
                         f"longer than the model ({model.max_length - model.n_added():,} "
                         f"{model.unit}): each is one "
                         "pass of the model over a whole window; check the text in parts, or set "
                         "INFILL_MAX_CHECK_POSITIONS to raise it")
    return reading


def _is_space(model: MaskedLM, token_id: int) -> bool:
    return model.unit == "characters" and model.id_to_token(token_id).isspace()


def layout(model: MaskedLM, ids: Sequence[int], gap_shown: str = "?"
           ) -> tuple[str, list[tuple[int, int] | None]]:
    """The text as the model reads ``ids`` (specials at the ends left out, a gap position as
    ``gap_shown``) and each position's span in it: one character per position for character
    and residue models; word pieces joined with English spacing (``##`` glues) for the others."""
    structural = {i for i in ids if i >= model.vocab_size or i in model.special_ids}
    lo, hi = body_bounds(list(ids), structural - {model.mask_id})
    pieces = [gap_shown if i == model.mask_id else model.id_to_token(i) for i in ids[lo:hi]]
    spans: list[tuple[int, int] | None] = [None] * len(ids)
    out = ""
    for k, piece in enumerate(pieces):
        text, space = _piece(model, pieces, k)
        if out and space:
            out += " "
        spans[lo + k] = (len(out), len(out) + len(text))
        out += text
    return out, spans


def _piece(model: MaskedLM, pieces: list[str], k: int) -> tuple[str, bool]:
    """(the text of piece k, whether a space comes before it)."""
    tok = pieces[k]
    if model.unit != "tokens":
        return tok, False
    if tok.startswith(("Ġ", "▁")):
        return tok[1:], True
    if getattr(model, "_wordpiece", True):
        before = pieces[k - 2] if k >= 2 else None
        nxt = pieces[k + 1] if k + 1 < len(pieces) else None
        space = k > 0 and _space_before(before, pieces[k - 1], tok, nxt)
        return (tok[2:] if tok.startswith("##") else tok), space
    return tok, False


def substitution_alphabet(model: MaskedLM) -> list[int] | None:
    """The ids of a substitution table: a residue model's 20 standard amino acids, a character
    model's letters; None for a model of word pieces (tens of thousands of tokens)."""
    if model.unit == "residues":
        return [model.token_to_id(a) for a in STANDARD_AA]
    if model.unit == "characters":
        return [i for i in range(model.vocab_size) if i not in model.special_ids
                and model.id_to_token(i).isalpha()]
    return None


@dataclass
class Scores:
    """One text's scores, per checked position (in :attr:`Reading.checked` order): log q of the
    written token, the best alternative's id and log q, and the substitution table (log q of
    each of the alphabet's tokens) when asked for."""

    logq: torch.Tensor
    best: torch.Tensor
    best_logq: torch.Tensor
    table: torch.Tensor | None = None
    windowed: bool = False


def _alternatives(model: MaskedLM) -> torch.Tensor:
    """[vocab] bool: the tokens a written token may be told to be instead."""
    allowed = model.allowed_mask()
    if model.unit == "characters":
        for i in range(model.vocab_size):
            if model.id_to_token(i).isspace():
                allowed[i] = False
    return allowed


def _row(model: MaskedLM, ids: list[int], t: int) -> tuple[list[int], int]:
    """The masked row of position t (the longest window centred on t when ``ids`` is longer
    than the model) and t's place in it."""
    row = list(ids)
    row[t] = model.mask_id
    if len(row) <= model.max_length:
        return row, t
    structural = {i for i in row if i >= model.vocab_size or i in model.special_ids}
    lo, hi = body_bounds(row, structural - {model.mask_id})
    return truncate(row, t, 1, lo, hi, model.max_length)


@torch.inference_mode()
def score_rows(model: MaskedLM, seqs: Sequence[Sequence[int]], checked: Sequence[Sequence[int]],
               max_rows: int = 256, table: Sequence[int] | None = None) -> list[Scores]:
    """Each sequence's :class:`Scores` at its ``checked`` positions: one masked row per
    position, the rows of all sequences together, longest first, ``max_rows`` per call."""
    jobs = [(s, t) for s, pos in enumerate(checked) for t in pos]
    rows = [_row(model, list(map(int, seqs[s])), t) for s, t in jobs]
    order = sorted(range(len(jobs)), key=lambda j: -len(rows[j][0]))
    allowed = _alternatives(model).to(model.device)
    n = len(jobs)
    logq, best_logq = torch.empty(n, dtype=torch.float64), torch.empty(n, dtype=torch.float64)
    best = torch.empty(n, dtype=torch.long)
    tab = None if table is None else torch.empty(n, len(table), dtype=torch.float64)
    for start in range(0, n, max_rows):
        part = order[start:start + max_rows]
        ids, attn = pad_batch([rows[j][0] for j in part], model.pad_id)
        at = torch.tensor([[rows[j][1]] for j in part], dtype=torch.long)
        lp = model.log_probs(ids.to(model.device), attn.to(model.device),
                             at.to(model.device))[:, 0, :]
        gold = torch.tensor([int(seqs[jobs[j][0]][jobs[j][1]]) for j in part], device=lp.device)
        idx = torch.tensor(part)
        logq[idx] = lp.gather(1, gold[:, None])[:, 0].to("cpu", torch.float64)
        others = lp.masked_fill(~allowed[None, :lp.shape[1]].to(lp.device), -math.inf)
        others[torch.arange(len(part), device=lp.device), gold] = -math.inf
        top, arg = others.max(1)
        best_logq[idx], best[idx] = top.to("cpu", torch.float64), arg.cpu()
        if tab is not None:
            tab[idx] = lp[:, list(table)].to("cpu", torch.float64)
    if not torch.isfinite(logq).all():
        raise InputError("the model gave a non-finite score to a token of the text")
    return _split(model, seqs, checked, logq, best, best_logq, tab)


def _split(model, seqs, checked, logq, best, best_logq, tab) -> list[Scores]:
    out, k = [], 0
    for s, pos in enumerate(checked):
        sl = slice(k, k + len(pos))
        out.append(Scores(logq[sl], best[sl], best_logq[sl], None if tab is None else tab[sl],
                          len(seqs[s]) > model.max_length))
        k += len(pos)
    return out


@dataclass
class PositionCheck:
    """One checked position: its ``position`` in the model's input, the ``span`` of its text in
    :attr:`TextCheck.shown`, the ``written`` token and its log q, the ``best`` alternative and
    its log q, and whether it is ``flagged``."""

    position: int
    span: tuple[int, int]
    written: str
    logq: float
    best: str
    best_logq: float
    flagged: bool

    @property
    def log_ratio(self) -> float:
        """log q(written) - log q(best alternative): below 0 where the alternative is likelier."""
        return self.logq - self.best_logq

    def to_json(self) -> dict:
        return {"position": self.position, "span": list(self.span), "written": self.written,
                "prob": math.exp(self.logq), "logq": self.logq, "best": self.best,
                "best_prob": math.exp(self.best_logq), "best_logq": self.best_logq,
                "log_ratio": self.log_ratio, "flagged": self.flagged}


@dataclass
class TextCheck:
    """A text checked: how it was read (``reading``), each checked position, and the
    substitution table when asked for (``alphabet`` x positions, log q(a) - log q(written))."""

    reading: Reading
    positions: list[PositionCheck]
    threshold: float
    alphabet: list[str] | None = None
    substitutions: list[list[float]] | None = None
    windowed: bool = False

    @property
    def flagged(self) -> list[PositionCheck]:
        return [p for p in self.positions if p.flagged]

    def to_json(self) -> dict:
        out = {"shown": self.reading.shown, "threshold": self.threshold,
               "checked": len(self.positions), "flagged": [p.position for p in self.flagged],
               "positions": [p.to_json() for p in self.positions],
               "gaps": list(self.reading.gaps), "windowed": self.windowed}
        if self.substitutions is not None:
            out["substitutions"] = {"alphabet": self.alphabet, "scores": self.substitutions}
        return out


def check_readings(model: MaskedLM, readings: Sequence[Reading], threshold: float,
                   max_rows: int = 256, table: bool = False) -> list[TextCheck]:
    """Every reading's :class:`TextCheck` (all positions of all readings scored together;
    ``table``: keep the substitution table, for models that have one)."""
    alphabet = substitution_alphabet(model) if table else None
    scores = score_rows(model, [r.ids for r in readings], [r.checked for r in readings],
                        max_rows, alphabet)
    out = []
    for r, sc in zip(readings, scores):
        positions = [PositionCheck(t, r.spans[t], model.id_to_token(r.ids[t]), lq,
                                   model.id_to_token(b), bl, bl - lq >= threshold)
                     for t, lq, b, bl in zip(r.checked, sc.logq.tolist(), sc.best.tolist(),
                                              sc.best_logq.tolist())]
        check = TextCheck(r, positions, threshold, windowed=sc.windowed)
        if alphabet is not None:
            check.alphabet = [model.id_to_token(a) for a in alphabet]
            check.substitutions = (sc.table - sc.logq[:, None]).tolist()
        out.append(check)
    return out
