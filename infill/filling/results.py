"""What a fill returns: ranked :class:`Completion` s of one input (each filled
:class:`Position` with its confidence), an input's :class:`FillResult` (or its error), and
:func:`complete`, which renders a decoder hypothesis as a completion."""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from infill.config import DecodeConfig
from infill.data.accents import in_users_script
from infill.filling.defaults import Defaults, config_json

if TYPE_CHECKING:
    from infill.decoding.engine import Hypothesis
    from infill.models.base import Encoding, MaskedLM, Rendered

__all__ = ["Completion", "FillResult", "Position", "complete"]


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
    lacuna_edges: str | None = field(default=None, compare=False)
    """What its lacunae's first and last characters could be (``letters``: no word space;
    ``any``), for a model that writes word spaces; None for others."""

    def to_json(self) -> dict:
        """One line of ``infill run --json`` (also the answer of ``POST /api/fill``); ``config``
        carries ``defaults`` ({options, source, why}) when options took the model's defaults."""
        config = config_json(self.config, self.defaults, self.length_score, self.length_beam,
                             self.rerank, self.lacuna_edges)
        gap = list(self.gap) if isinstance(self.gap, tuple) else self.gap
        out = {"id": self.id, "input": self.input, "model": self.model, "config": config,
               "gap": gap, "windows": self.windows, "notes": self.notes, "error": self.error,
               "completions": [c.to_json(r) for r, c in enumerate(self.completions, 1)]}
        if self.letters is not None:
            out["letters"] = self.letters
        return out



def shown(model: MaskedLM, r: Rendered) -> tuple[str, list[str], list[bool]]:
    """A rendered fill ``r`` as the user reads it: (text, fills, accented) -- a character
    model's restored letters in the user's script (accents of known words, final sigma), every
    other model's as rendered."""
    if getattr(model, "alphabet", None) is None:
        return r.text, list(r.fills), []
    return in_users_script(r.text, r.spans)


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
    text, fills, accented = shown(model, r)
    return Completion(text=text, fills=tuple(fills), tokens=tuple(hyp.tokens), score=hyp.score,
                      positions=tuple(positions), spans=tuple(tuple(s) for s in r.spans),
                      accented=tuple(accented))

