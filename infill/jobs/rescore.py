"""The rescore job (``infill rescore``): complete texts ranked by energy, lowest first, sharded
over the torchrun ranks; a text that cannot be scored keeps its error and is left out of the
ranking.

    ranking = rescore_inputs(model, ["the cat sat.", "the dog sat."], energy="local")
    for row in ranking.to_json(top_k=5):
        print(row["rank"], row["energy"], row["text"])
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from infill.jobs.inputs import Input, Outcome, as_inputs
from infill.lazy import LazyModule
from infill.parallel import Shard
from infill.requests import RescoreRequest
from infill.jobs.sharding import over_batches

mcmc = LazyModule("infill.mcmc")                     # the energies (torch), on first use

__all__ = ["ScoredText", "Ranking", "rescore_inputs"]

BATCH = 32
"""Texts per scoring call: a progress bar moves, and each call still fills its forward passes."""


@dataclass
class ScoredText(Outcome):
    """One text's energy (``scored``: :class:`~infill.mcmc.energy.Scored`, with ``error`` when
    it could not be scored); ``index``: its place in the input; ``notes``: what the model
    could not read of it."""

    input: Input
    index: int
    scored: object
    model: str | None
    energy_kind: str
    notes: list[str] = field(default_factory=list)

    @property
    def error(self) -> str | None:
        return self.scored.error

    @property
    def error_field(self) -> str | tuple[str, ...] | None:
        return self.scored.error_field

    def to_json(self, rank: int | None) -> dict:
        """One line of ``infill rescore --json`` (``rank`` None for a text not scored)."""
        s = self.scored
        base = {"rank": rank, "id": self.id, "text": self.input.text}
        tail = {"notes": self.notes, "model": self.model, "kind": self.energy_kind}
        if s.error is not None:
            return {**base, "error": s.error, "windows": [], **tail}
        return {**base, "energy": s.energy, "tokens": s.tokens,
                "energy_per_token": s.energy / s.tokens, "input_index": self.index,
                "windows": s.windows, **tail}


@dataclass
class Ranking:
    """Every text's :class:`ScoredText` in input order; :attr:`ranked` the scored ones, lowest
    energy first (ties: input order), :attr:`failed` the others."""

    texts: list[ScoredText]

    @property
    def ranked(self) -> list[ScoredText]:
        ok = [t for t in self.texts if t.error is None]
        return sorted(ok, key=lambda t: (t.scored.energy, t.index))

    @property
    def failed(self) -> list[ScoredText]:
        return [t for t in self.texts if t.error is not None]

    @property
    def windowed(self) -> bool:
        """Some text was longer than the model and read in context windows."""
        return any(t.scored.windows for t in self.texts)

    def top(self, top_k: int | None = None) -> list[dict]:
        """The JSON lines of the ``top_k`` lowest-energy texts (all with None), ranked."""
        return [t.to_json(r) for r, t in enumerate(self.ranked[:top_k], 1)]

    def to_json(self, top_k: int | None = None) -> list[dict]:
        """:meth:`top`, then a line per text not scored (what ``infill rescore --json`` prints)."""
        return self.top(top_k) + [t.to_json(None) for t in self.failed]


def rescore_inputs(model, inputs: Iterable, request: RescoreRequest | None = None, *,
                   name: str | None = None, shard: Shard | None = None, progress=None,
                   **options) -> Ranking | None:
    """Every input (strings, or records with ``id`` and ``text``) scored by ``request``'s energy
    (and/or keyword ``options``, :class:`RescoreRequest`'s fields): the job of ``infill
    rescore``. Inputs are sharded over the torchrun ranks, :data:`BATCH` per scoring call; rank
    0 gets the :class:`Ranking`, the others None. ``progress``: a bar advanced per text."""
    request = RescoreRequest.from_options(request, **options)
    records = as_inputs(inputs)

    def score(mine: list[Input]) -> list:
        out = mcmc.rescore_each(model, [rec.text or "" for rec in mine], energy=request.energy,
                                max_rows=request.max_rows, window=request.window)
        for rec, res in zip(mine, out):
            if rec.error is not None:      # e.g. a FASTA record without sequence
                res.error = rec.error
        return out

    results = over_batches(records, score, shard, batch_size=BATCH, progress=progress)
    if results is None:
        return None
    return Ranking([ScoredText(rec, i, res, name, request.energy,
                               list(model.input_notes(rec.text or "")))
                    for i, (rec, res) in enumerate(zip(records, results))])
