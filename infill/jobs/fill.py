"""The fill job (``infill run``): many inputs read (antibody regions, Leiden sigla), decoded in
batches sharded over the torchrun ranks, each input's ranked completions or its error.

    request = FillRequest(config=DecodeConfig(beam_size=8), top_k=3, gap="1-2")
    for fill in fill_inputs(model, ["To be, or not to ___.", "no gap"], request, name="english"):
        print(fill.id, fill.error or fill.completions[0].text, fill.to_json())
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infill.config import DecodeConfig
from infill.errors import ConfigError
from infill.jobs.inputs import (Input, Outcome, as_inputs, mask_regions, read_leiden,
                                 read_letters, reads_leiden, reads_letters)
from infill.filling.request import (FillRequest, check_gap_text, check_ranking,  # noqa: F401
                                    unknown_span)

from infill.lazy import LazyModule

if TYPE_CHECKING:
    from infill.filling.defaults import Defaults
    from infill.filling.results import FillResult
    from infill.parallel import Shard

_defaults = LazyModule("infill.filling.defaults")    # what a fill runs with loads when it runs,
_results = LazyModule("infill.filling.results")      # not for `infill run --help`
_sharding = LazyModule("infill.jobs.sharding")
_planner = LazyModule("infill.filling.planner")      # torch: when a batch decodes (read
                                                     # uncached, .module: tests count its calls)

__all__ = ["FillRequest", "InputFill", "FillRun", "fill_inputs"]


@dataclass
class InputFill(Outcome):
    """One input's outcome: its ranked completions (``result``, which owns what its ``--json``
    line names: the model, the config that ran, the gap) or its ``error``."""

    input: Input
    result: FillResult

    @property
    def error(self) -> str | None:
        return self.result.error

    @error.setter
    def error(self, message: str | None) -> None:
        """A front end may word the error its own way before printing it."""
        self.result.error = message

    @property
    def error_field(self):
        return getattr(self.result, "error_field", None)

    @property
    def completions(self):
        return self.result.completions

    @property
    def gap(self):
        """The gap length it was filled with."""
        return self.result.gap

    @property
    def model(self) -> str | None:
        """The model's name as the user gave it."""
        return self.result.model

    @property
    def config(self) -> DecodeConfig:
        """The decoding options that ran."""
        return self.result.config

    def to_json(self) -> dict:
        """One line of ``infill run --json``."""
        return self.result.to_json()


class FillRun:
    """A fill job over its inputs, read and ready: iterating decodes them batch by batch
    (rank 0 gets every input's :class:`InputFill` in input order, other torchrun ranks none).

    ``inputs``: as read (regions masked, Leiden converted); ``warnings``: ``(input id,
    message)`` from reading them; ``request``: resolved (every option filled in,
    :func:`~infill.filling.defaults.resolve_fill`), ``defaults``: which options took the model's
    recommendation."""

    def __init__(self, model, inputs: list[Input], request: FillRequest, defaults: Defaults,
                 name: str | None, warnings: list[tuple[str, str]], shard: Shard | None = None):
        self.model, self.inputs, self.request = model, inputs, request
        self.defaults, self.name = defaults, name
        self.warnings, self.shard = warnings, shard

    @property
    def config(self) -> DecodeConfig:
        """The decoding options that run (resolved)."""
        return self.request.config

    @property
    def ranks_lengths(self) -> bool:
        """Whether some input ranks fills of several lengths (the request's gap, or an input's
        own, a Leiden ``[c.5]``)."""
        return _defaults.ranks_lengths(self.request.gap) or any(
            r.gap is not None
            and _defaults.ranks_lengths(list(r.gap) if isinstance(r.gap, tuple) else r.gap)
            for r in self.inputs)

    @property
    def reranks(self) -> bool:
        """Whether completions of one length are reranked (:mod:`infill.filling.reranking`): ``rerank``
        is not ``off`` and the request's gap is one length."""
        return self.request.rerank not in (None, "off") and \
            not _defaults.ranks_lengths(self.request.gap)

    def batches(self) -> list[list[Input]]:
        """The inputs in batches of ``batch_size`` (each decoded in one call), the first input
        alone: its answer streams out within one input's time, however large the batches."""
        n, rest = self.request.batch_size, self.inputs[1:]
        return [self.inputs[:1]] + [rest[i:i + n] for i in range(0, len(rest), n)] \
            if self.inputs else []

    def decoded(self) -> Iterator[list[InputFill]]:
        """Each batch's fills as soon as its round of torchrun ranks is done (rank r decodes
        batches r, r + N, ...), in input order on rank 0."""
        batches = self.batches()
        yield from _sharding.in_rounds(batches, self._decode, self.shard)

    def __iter__(self) -> Iterator[InputFill]:
        for batch in self.decoded():
            yield from batch

    def _decode(self, batch: list[Input]) -> list[InputFill]:
        """One batch: inputs whose gap lengths and letter sets agree are decoded together (one
        call)."""
        groups: dict[str, tuple[Any, Any, list[Input]]] = {}
        for r in batch:
            if r.error is None and r.text is not None:
                g = self.request.gap if r.gap is None else r.gap
                lt = self.request.letters if r.letters is None else r.letters
                groups.setdefault(repr((g, lt)), (g, lt, []))[2].append(r)
        by_id: dict[int, FillResult] = {}
        for g, lt, ok in groups.values():
            results = _planner.module.fill_resolved(self.model, [r.text for r in ok],
                                                    self.request.replace(gap=g, letters=lt),
                                                    self.defaults)
            by_id.update({id(r): res for r, res in zip(ok, results)})
        return [self._outcome(r, by_id.get(id(r))) for r in batch]

    def _outcome(self, r: Input, res: FillResult | None) -> InputFill:
        if res is None:                 # not decoded: how it was read failed
            res = _results.FillResult(r.text, [], r.error, defaults=self.defaults,
                             config=self.config, gap=self.request.gap if r.gap is None else r.gap)
        elif r.notes:                   # how the input was read comes first
            res.notes = [*r.notes, *res.notes]
        res.model, res.id = self.name, r.id
        return InputFill(r, res)


def fill_inputs(model, inputs: Iterable, request: FillRequest | None = None, *,
                name: str | None = None, shard: Shard | None = None, **options) -> FillRun:
    """Fill the gaps of many ``inputs`` (strings, or records with ``id`` and ``text``): the job
    of ``infill run``. ``request`` and/or keyword ``options`` (its fields); ``name``: the
    model's name in each result's JSON.

    Options left out (None) take the model's recommendation, once, here
    (:func:`~infill.filling.defaults.resolve_fill`); an explicit choice always wins. With ``region``,
    each input's IMGT region is masked; a model that fills characters reads Leiden sigla
    (:func:`~infill.jobs.inputs.reads_leiden`). An input that cannot be read or filled gets its
    error (:meth:`InputFill.failure` names it); the others go on. Returns the
    :class:`FillRun`; iterating it decodes."""
    request, defaults = _defaults.resolve_fill(model, FillRequest.of(request, **options))
    read, warnings = prepare(model, as_inputs(inputs), request)
    run = FillRun(model, read, request, defaults, name, warnings, shard)
    check_ranking(defaults.given, run.ranks_lengths, _defaults.ranks_lengths(request.gap))
    return run


def prepare(model, inputs: Sequence[Input], request: FillRequest
            ) -> tuple[list[Input], list[tuple[str, str]]]:
    """The inputs as a fill reads them (``region`` masked; Leiden sigla for character models)
    and the warnings on the way."""
    warnings: list[tuple[str, str]] = []
    inputs = list(inputs)
    if request.unclear == "restore" and not reads_letters(model):
        raise ConfigError("'unclear' restore reads underdotted letters among their look-alikes: "
                          "a model that fills characters or residues does, this one fills "
                          "tokens", field="unclear")
    unknown = unknown_span(request.unknown_lengths)
    if unknown is not None and not reads_leiden(model):
        raise ConfigError("'unknown_lengths' restores the lacunae of unknown length of Leiden "
                          "texts and EpiDoc editions ([---]): a model that fills characters "
                          "reads them, this one does not", field="unknown_lengths")
    if request.region is not None:
        inputs, warnings = mask_regions(model, inputs, request.region)
    if reads_letters(model):          # letter sets first: Leiden's brackets are read after them
        inputs = read_letters(model, inputs, request.marker, request.unclear,
                              reads_leiden(model), request.gap, request.letters, unknown)
    elif reads_leiden(model):
        inputs = read_leiden(inputs, request.marker, request.gap, unknown)
    return inputs, warnings
