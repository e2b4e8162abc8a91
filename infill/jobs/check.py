"""The check job (``infill check``, :func:`infill.check`, ``POST /api/check``): every preserved
letter, word piece or residue of many inputs scored against the most probable alternative,
the doubtful ones flagged (:mod:`infill.checking`); all positions of all inputs in as few
forward passes as ``max_rows`` allows, sharded over the torchrun ranks.

    for c in check(model, ["To be, or not to be, that is the questoin."], threshold=3.5):
        print(c.error or [(p.written, p.best) for p in c.result.flagged], c.to_json())
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from infill.check_request import CheckRequest
from infill.data.leiden import convert, has_sigla
from infill.data.letters import has_sets
from infill.errors import ConfigError, InfillError
from infill.filling.defaults import fixed_gap
from infill.jobs.inputs import Input, Outcome, as_inputs, read_letters, reads_leiden, reads_letters
from infill.jobs.sharding import over_batches
from infill.lazy import LazyModule
from infill.parallel import Shard

checking = LazyModule("infill.checking")              # the scoring (torch), on first use
check_epidoc = LazyModule("infill.check_epidoc")

__all__ = ["CheckRequest", "InputCheck", "check", "check_editions", "edition_with_notes",
           "line_notes"]

BATCH = 64
"""Inputs per scoring call (their positions' rows are scored together, ``max_rows`` a pass)."""


@dataclass
class InputCheck(Outcome):
    """One input's check (``result``: :class:`~infill.checking.TextCheck`) or its ``error``;
    ``notes``: how it was read; ``edition``: an EpiDoc file's
    :class:`~infill.check_epidoc.EditionReading` (its lines), None for a text."""

    input: Input
    model: str | None
    result: object = None
    error: str | None = None
    error_field: str | tuple[str, ...] | None = None
    notes: list[str] = field(default_factory=list)
    edition: object = None

    @property
    def lines(self) -> dict[int, str | None] | None:
        """An edition's inscription line (the ``n`` of its ``<lb/>``) of each checked position,
        None for a text."""
        return None if self.edition is None else self.edition.lines

    def to_json(self) -> dict:
        """One line of ``infill check --json``."""
        base = {"id": self.id, "input": self.input.text, "model": self.model}
        if self.error is not None or self.result is None:
            return {**base, "error": self.error, "notes": self.notes}
        out = {**base, **self.result.to_json(), "error": None, "notes": self.notes}
        if self.lines is not None:
            out["lines"] = line_notes(self)
        return out


def line_notes(c: InputCheck) -> list[dict]:
    """An edition's flagged letters as one note per inscription line: ``{"line", "note",
    "positions"}`` (each flagged letter: written -> the best alternative, with both
    probabilities)."""
    by_line: dict[int, list] = {}                      # by the line's <lb/> element
    for p in c.result.flagged:
        by_line.setdefault(id(c.edition.lbs.get(p.position)), []).append(p)
    out = []
    for ps in by_line.values():
        line = c.lines.get(ps[0].position)
        words = "; ".join(f"{p.written} ({_pct(p.logq)}) rather {p.best} ({_pct(p.best_logq)})"
                          for p in ps)
        out.append({"line": line, "positions": [p.position for p in ps],
                    "note": f"line {line if line is not None else '?'}: doubtful {words}"})
    return out


def edition_with_notes(c: InputCheck) -> str:
    """An edition checked, as EpiDoc with each line's note (:func:`line_notes`) written in as
    ``<note type="doubtful" resp="#infill">`` after the line's ``<lb/>``
    (:func:`infill.check_epidoc.with_notes`)."""
    notes = {n["positions"][0]: n["note"] for n in line_notes(c)}
    what = (f"doubtful readings flagged by infill check ({c.model}, threshold "
            f"{c.result.threshold:g} nats): {len(notes)} line(s) noted")
    return check_epidoc.with_notes(c.edition, notes, what)


def _pct(logq: float) -> str:
    p = math.exp(logq)
    return f"{p:.0%}" if p >= 0.01 else f"{p:.1e}"


def _prepared(model, rec: Input, marker: str) -> Input:
    """The input with Leiden sigla read for a character model (a lacuna at its stated length),
    and for a model of characters or residues each letter set ``#[...]`` a position to restore:
    a gap, never checked (with a note), as ``run`` reads it."""
    if rec.text is not None and reads_letters(model) and has_sets(rec.text):
        sets = rec.text.count("#[")
        [read] = read_letters(model, [rec], marker, leiden=reads_leiden(model))
        if read.error is None and sets:
            read = replace(read, letters=None, notes=read.notes + (
                f"{sets} letter set(s) #[...]: position(s) to restore, not checked",))
        return read
    if rec.text is None or not reads_leiden(model):
        return rec
    if not has_sigla(rec.text):
        return rec
    converted = convert(rec.text, "")
    return replace(rec, text=converted.text, notes=rec.notes + tuple(converted.notes))


def check(model, inputs: Iterable, request: CheckRequest | None = None, *,
          name: str | None = None, table: bool | None = None, shard: Shard | None = None,
          progress=None, **options) -> list[InputCheck] | None:
    """Check every input (strings, or records with ``id`` and ``text``): the job of ``infill
    check``. ``request`` and/or keyword ``options`` (:class:`CheckRequest`'s fields: threshold,
    marker, window, max_rows); ``table``: keep the substitution table (None: for residue models
    only). An input that cannot be checked gets its error; the others go on. Rank 0 gets every
    :class:`InputCheck` in input order, the other torchrun ranks None."""
    request = CheckRequest.from_options(request, **options)
    gap = fixed_gap(None, model)[0]
    table = model.unit == "residues" if table is None else table
    if table and checking.substitution_alphabet(model) is None:
        raise ConfigError("'table' is the substitution table per position, a letter or "
                          f"residue each; this model reads {model.unit}", field="table")
    records = [_prepared(model, r, request.marker) for r in as_inputs(inputs)]

    def score(mine: list[Input]) -> list[InputCheck]:
        return _check_batch(model, mine, request, gap, table, name)

    return over_batches(records, score, shard, batch_size=BATCH, progress=progress)


def _check_batch(model, records: Sequence[Input], request: CheckRequest, gap: int,
                 table: bool, name: str | None) -> list[InputCheck]:
    """One batch of inputs: each read (or its error), then all scored together."""
    out, readings = [], []
    for rec in records:
        c = InputCheck(rec, name, notes=list(rec.notes))
        out.append(c)
        if rec.error is not None:
            c.error = rec.error
            continue
        try:
            reading = checking.read_for_check(model, rec.text, request.marker, gap)
            if not request.window:
                model.check_length(len(reading.ids))
        except InfillError as e:
            c.error, c.error_field = e.message(), e.field
            continue
        c.notes += reading.notes
        readings.append((c, reading))
    if readings:
        checks = checking.check_readings(model, [r for _, r in readings], request.threshold,
                                         request.max_rows, table)
        for (c, _), result in zip(readings, checks):
            c.result = result
    return out


def check_editions(model, files: Sequence[tuple[str, str | None]],
                   request: CheckRequest | None = None, *, name: str | None = None,
                   table: bool | None = None, **options) -> list[InputCheck]:
    """Check EpiDoc files (``(path, text or None)`` each) with a character model: the letters
    the stone preserves, the editors' supplements as context (:mod:`infill.check_epidoc`);
    each result's ``lines`` gives a note per inscription line (:func:`line_notes`). ``table``:
    keep the substitution table (as :func:`check`); ``window`` False: an edition longer than
    the model is its length error; ``marker`` does not apply (an edition marks its own
    lacunae), a ConfigError."""
    request = CheckRequest.from_options(request, **options)
    if request.changed(["marker"]):
        raise ConfigError("'marker' does not apply to EpiDoc files: an edition marks its "
                          "lacunae itself (<gap>, <supplied>)", field="marker")
    out, readings = [], []
    for path, text in files:
        c = InputCheck(Input(path, None), name)
        out.append(c)
        try:
            er = check_epidoc.read_edition_for_check(model, path, text)
            if not request.window:
                model.check_length(len(er.reading.ids))
        except InfillError as e:
            c.error, c.error_field = str(e).splitlines()[0], e.field
            continue
        c.input = Input(path, er.reading.shown)
        c.notes, c.edition = list(er.reading.notes), er
        readings.append((c, er.reading))
    checks = checking.check_readings(model, [r for _, r in readings], request.threshold,
                                     request.max_rows, bool(table)) if readings else []
    for (c, _), result in zip(readings, checks):
        c.result = result
    return out
