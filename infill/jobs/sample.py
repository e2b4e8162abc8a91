"""The sample job (``infill sample``): Metropolis-Hastings on the model's energy for many inputs,
sharded over the torchrun ranks; each input's distinct samples or its error.

    for s in sample_inputs(model, ["The ___ sat on the mat."], SampleRequest(chains=8)):
        print(s.error or s.result.best.text, s.to_json(top_k=5))
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from infill.data.letters import has_sets, read_sets
from infill.filling.defaults import fixed_gap
from infill.errors import InfillError
from infill.jobs.fill import FillRequest
from infill.jobs.inputs import Input, Outcome, as_inputs, reads_letters
from infill.lazy import LazyModule
from infill.parallel import Shard
from infill.requests import SampleRequest
from infill.jobs.sharding import over_inputs

mcmc = LazyModule("infill.mcmc")                     # the chains (torch), on first use

__all__ = ["InputSample", "sample_inputs"]


@dataclass
class InputSample(Outcome):
    """One input's outcome: the chains' ``result`` (:class:`~infill.mcmc.ChainResult`: distinct
    samples, lowest energy first) or its ``error``; ``notes``: what the model could not read of
    the input."""

    input: Input
    model: str | None
    result: object = None
    error: str | None = None
    error_field: str | tuple[str, ...] | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self, top_k: int | None = None) -> dict:
        """One line of ``infill sample --json`` (the ``top_k`` lowest-energy samples)."""
        base = {"id": self.id, "input": self.input.text, "model": self.model}
        if self.error is not None:
            return {**base, "windows": [], "notes": self.notes, "error": self.error}
        return {**base, **self.result.to_json(top_k), "error": None, "notes": self.notes}


def sample_inputs(model, inputs: Iterable, request: SampleRequest | None = None, *,
                  gap: int | None = None, marker: str = "___", window: bool = True,
                  name: str | None = None, shard: Shard | None = None, progress=None,
                  on_sweep: Callable[[int, int], None] | None = None,
                  **options) -> list[InputSample] | None:
    """Metropolis-Hastings samples of ``gap`` tokens (None: :func:`~infill.filling.defaults.fixed_gap`,
    the model's fixed gap length, else 1) at each ``marker`` of every input (strings,
    or records with ``id`` and ``text``): the job of ``infill sample``. ``request`` and/or
    keyword ``options`` (:class:`SampleRequest`'s fields); ``name``: the model's name in the
    JSON. An input that cannot be sampled gets its error; the others go on. Inputs are sharded
    over the torchrun ranks: rank 0 gets every :class:`InputSample` in input order, the others
    None. ``progress``: a bar advanced once per input sampled here; ``on_sweep``: called as
    ``on_sweep(done, total)`` after each sweep of the input being sampled, so that one long
    input shows it moves (None: nothing; ``on_epoch``, its old name, is read with a
    DeprecationWarning)."""
    if "on_epoch" in options:
        warnings.warn("the option 'on_epoch' is now 'on_sweep'; 'on_epoch' will be removed in "
                      "the next release", DeprecationWarning, stacklevel=2)
        on_sweep = options.pop("on_epoch")

    request = SampleRequest.from_options(request, **options)
    FillRequest.rules("marker").check(marker, "marker")     # the fill job's rule of a marker
    FillRequest.rules("window").check(window, "window")     # and of a window (a bool)
    gap = fixed_gap(gap, model)[0]

    def one(rec: Input) -> InputSample:
        out = InputSample(rec, name, notes=list(model.input_notes(rec.text or "")))
        if rec.error is not None:            # e.g. a FASTA record without sequence
            out.error = rec.error
            return out
        try:
            text, letters = _read_sets(model, rec.text, marker)
            out.result = mcmc.sample(model, text, gap=gap, marker=marker, options=request,
                                     window=window, progress=on_sweep, letters=letters)
        except InfillError as e:
            out.error, out.error_field = e.message(), e.field
        return out

    return over_inputs(as_inputs(inputs), one, shard, progress=progress)


def _read_sets(model, text: str, marker: str) -> tuple[str, list | None]:
    """A sampled text's letter sets ``#[...]`` (models that fill characters or residues, as
    ``infill run`` reads them; :mod:`infill.data.letters`): the text with ``?`` for each, and
    the letters per gap."""
    if not reads_letters(model) or not has_sets(text):
        return text, None
    return read_sets(text, "keep", marker)
