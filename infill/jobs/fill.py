"""The fill job (``infill run``): many inputs read (antibody regions, Leiden sigla), decoded in
batches sharded over the torchrun ranks, each input's ranked completions or its error.

    request = FillRequest(decode=DecodeConfig(beam_size=8), top_k=3, gap="1-2")
    for fill in fill_inputs(model, ["To be, or not to ___.", "no gap"], request, name="english"):
        print(fill.id, fill.error or fill.completions[0].text, fill.to_json())
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from infill.config import DecodeConfig
from infill.errors import ConfigError
from infill.names import LENGTH_SCORES, REGIONS
from infill.jobs.inputs import (Input, Outcome, as_inputs, mask_regions, read_leiden,
                                 reads_leiden)
from infill.fields import Request, option

if TYPE_CHECKING:      # what a fill runs with loads when it runs, not for `infill run --help`
    from infill.api import FillResult
    from infill.defaults import Defaults
    from infill.parallel import Shard

__all__ = ["FillRequest", "InputFill", "FillRun", "fill_inputs"]


def _gap_checked_later(gap) -> bool:
    """A range ("4-6", (4, 6)), "word" or a per-marker list: read against the model."""
    return isinstance(gap, (str, tuple, list))


@dataclass(frozen=True)
class FillRequest(Request):
    """Every option of a fill job: the decoding options (``decode``, a
    :class:`~infill.config.DecodeConfig`) and what the job adds around them."""

    KIND: ClassVar[str] = "fill"

    decode: DecodeConfig = dataclasses.field(default_factory=DecodeConfig)
    top_k: int = option(5, int, "Completions shown per input (raises --beam if larger).", low=1,
                        what="top-k")
    gap: Any = option(None, int, "Tokens (characters, residues) to fill at each gap marker: N, a "
                      "range LO-HI (every length is decoded and all ranked by --length-score), "
                      "or 'word' (one whole word of 1-3 word pieces). Default: the model's "
                      "(builtin:english: word), else 1.", low=1, optional=True,
                      skip=_gap_checked_later)
    marker: str = option("___", str, "The gap marker in TEXT.")
    length_score: str | None = option(None, str, "How completions of different gap lengths are "
                                      "ranked together: pll (pseudo-log-likelihood of the filled "
                                      "text), pll-gap (of the gap only), pll-word (of the gap, "
                                      "each piece scored with the rest of its word hidden), "
                                      "per-char (the decoder's score per character). Default: the "
                                      "model's (builtin:english: pll-word), else pll.",
                                      choices=LENGTH_SCORES, optional=True)
    region: str | None = option(None, str, "Antibody models: redesign this IMGT region of each "
                                "sequence (cdr1, cdr2, cdr3, fr1..fr4) instead of marking gaps.",
                                choices=REGIONS, optional=True, what="region")
    window: bool = option(True, bool, "Decode an input longer than the model in context windows "
                          "(False: an error).")
    batch_size: int = option(32, int, "Inputs decoded together (one forward pass per step for "
                             "the whole batch).", low=1)

    def check(self) -> None:
        if not isinstance(self.decode, DecodeConfig):
            raise ConfigError(f"decode must be a DecodeConfig, got {type(self.decode).__name__}",
                              field="decode")

    def to_json(self) -> dict:
        return {**super().to_json(), "decode": self.decode.to_json()}


@dataclass
class InputFill(Outcome):
    """One input's outcome: its ranked completions (``result``) or its ``error``, with what its
    ``--json`` line names: the ``model``, the effective ``config`` and the ``gap`` it was
    filled with."""

    input: Input
    result: FillResult
    model: str | None
    config: DecodeConfig
    gap: Any

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

    def to_json(self) -> dict:
        """One line of ``infill run --json``."""
        return self.result.to_json(self.model, self.config, self.gap, self.id)


class FillRun:
    """A fill job over its inputs, read and ready: iterating decodes them batch by batch
    (rank 0 gets every input's :class:`InputFill` in input order, other torchrun ranks none).

    ``inputs``: as read (regions masked, Leiden converted); ``warnings``: ``(input id,
    message)`` from reading them; ``config`` / ``defaults``: the decoding options after the
    model's recommendations (:mod:`infill.defaults`)."""

    def __init__(self, model, inputs: list[Input], request: FillRequest, config: DecodeConfig,
                 defaults: Defaults, name: str | None, warnings: list[tuple[str, str]],
                 shard: Shard | None = None):
        self.model, self.inputs, self.request = model, inputs, request
        self.config, self.defaults, self.name = config, defaults, name
        self.warnings, self.shard = warnings, shard

    def batches(self) -> list[list[Input]]:
        """The inputs in batches of ``batch_size`` (each decoded in one call)."""
        n = self.request.batch_size
        return [self.inputs[i:i + n] for i in range(0, len(self.inputs), n)]

    def decoded(self) -> Iterator[list[InputFill]]:
        """Each batch's fills as soon as its round of torchrun ranks is done (rank r decodes
        batches r, r + N, ...), in input order on rank 0."""
        from infill.runner import in_rounds
        batches = self.batches()
        yield from in_rounds(batches, self._decode, self.shard)

    def __iter__(self) -> Iterator[InputFill]:
        for batch in self.decoded():
            yield from batch

    def _decode(self, batch: list[Input]) -> list[InputFill]:
        """One batch: inputs whose gap lengths agree are decoded together (one ``fill_each``)."""
        from infill.api import fill_each
        req = self.request
        groups: dict[str, tuple[Any, list[Input]]] = {}
        for r in batch:
            if r.text is not None:
                g = req.gap if r.gap is None else r.gap
                groups.setdefault(repr(g), (g, []))[1].append(r)
        by_id: dict[int, FillResult] = {}
        for g, ok in groups.values():
            results = fill_each(self.model, [r.text for r in ok], gap=g, top_k=req.top_k,
                                marker=req.marker, config=self.config, window=req.window,
                                length_score=req.length_score)
            by_id.update({id(r): res for r, res in zip(ok, results)})
        return [self._outcome(r, by_id.get(id(r))) for r in batch]

    def _outcome(self, r: Input, res: FillResult | None) -> InputFill:
        from infill.api import FillResult, effective_config
        if res is None:                 # not decoded: how it was read failed
            res = FillResult(r.text, [], r.error)
        elif r.notes:                   # how the input was read comes first
            res.notes = [*r.notes, *res.notes]
        res.defaults = self.defaults
        return InputFill(r, res, self.name, effective_config(self.config, self.request.top_k),
                         self.request.gap if r.gap is None else r.gap)


def fill_inputs(model, inputs: Iterable, request: FillRequest | None = None, *,
                name: str | None = None, chosen: Iterable[str] | None = None,
                shard: Shard | None = None, **options) -> FillRun:
    """Fill the gaps of many ``inputs`` (strings, or records with ``id`` and ``text``): the job
    of ``infill run``. ``request`` and/or keyword ``options`` (its fields); ``name``: the
    model's name in each result's JSON.

    Decoding options the caller did not choose (``chosen``: option names; default: those that
    differ from :class:`DecodeConfig`'s defaults) take the model's recommendation. With
    ``region``, each input's IMGT region is masked; a model that fills characters reads Leiden
    sigla (:func:`~infill.jobs.inputs.reads_leiden`). An input that cannot be read or filled
    gets its error (:meth:`InputFill.failure` names it); the others go on. Returns the
    :class:`FillRun`; iterating it decodes."""
    from infill.defaults import resolve_defaults, resolve_gap, resolve_length_score
    request = FillRequest.from_options(request, **options)
    if chosen is None:
        default = DecodeConfig()
        chosen = {k for k in DecodeConfig.fields()
                  if getattr(request.decode, k) != getattr(default, k)}
    config, defaults = resolve_defaults(model, request.decode, chosen)
    gap, defaults = resolve_gap(request.gap, defaults)
    length_score, defaults = resolve_length_score(request.length_score, gap, defaults)
    request = request.replace(gap=gap, length_score=length_score)
    read, warnings = prepare(model, as_inputs(inputs), request)
    return FillRun(model, read, request, config, defaults, name, warnings, shard)


def prepare(model, inputs: Sequence[Input], request: FillRequest
            ) -> tuple[list[Input], list[tuple[str, str]]]:
    """The inputs as a fill reads them (``region`` masked; Leiden sigla for character models)
    and the warnings on the way."""
    warnings: list[tuple[str, str]] = []
    inputs = list(inputs)
    if request.region is not None:
        inputs, warnings = mask_regions(model, inputs, request.region)
    if reads_leiden(model):
        inputs = read_leiden(inputs, request.marker, request.gap)
    return inputs, warnings
