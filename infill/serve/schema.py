"""``POST /api/fill``: the request body (validated by pydantic) and the decode it asks for.

Body (JSON object; every field but ``text`` optional, defaults as ``infill run``)::

    {"text": "...", "model": "builtin:english", "gap": 1, "marker": "___", "scorer": "hcb",
     "order": "left-to-right", "beam_size": 5, "top_k": 5, "pivot": null, "seed": 0, "id": null,
     "region": null, "record": 1}

``text`` may be FASTA: ``record`` (1-based) picks the record to fill, the first by default;
``"record": "all"`` fills every record and answers ``{"id", "records": [...]}``, one line of
``infill run --json`` per record (:mod:`infill.serve.records`).
``region`` (antibody models: ``cdr3``, ``fr1``, ...) masks that IMGT region, as ``--region``.
A scorer or order left out is the model's recommended default (the answer's ``config.defaults``).

``model`` defaults to the server's default model (its first ``--model``, else builtin:english);
``pivot`` is a token or a list of one token per gap position; ``id`` is echoed in the answer.
Types are strict (``"beam_size": "5"`` is refused; the old spelling ``beam`` is read with a
note in the answer, until 0.3.0) and unknown fields are errors, so a typo never
passes silently. For models that fill characters (Greek editions) the text's Leiden sigla are
converted first, as ``infill run`` does
(:mod:`infill.data.leiden`).

The options are made from the fields of :class:`~infill.filling.request.FillRequest` and of its
:class:`~infill.config.DecodeConfig` (type, default, help), every field but those
:data:`NOT_SERVED` lists, so an option added to the library is a field here; their ranges and
choices are checked by the library's own rules when the request is built (:func:`fill_request`).
"""
from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any, Literal

from pydantic import (AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr, ValidationError,
                      create_model, field_validator, model_validator)
from pydantic_core import PydanticCustomError

from infill.config import DecodeConfig
from infill.decoding.lengths import one_length
from infill.decoding.letters import letter_masks
from infill.filling.defaults import Defaults, ranks_lengths, resolve_fill
from infill.fields import described
from infill.errors import InputError
from infill.filling.request import FillRequest, check_ranking
from infill.jobs.fill import prepare
from infill.jobs.inputs import Input, text_inputs
from infill.serve.catalog import ModelCatalog
from infill.serve.limits import Limits, TooLarge
from infill.serve.worker import Job

__all__ = ["FillBody", "NOT_SERVED", "DEPRECATED_NAMES", "OldNames", "validate_body",
           "build_job", "check_request", "decode_config", "decoding_fields", "fill_request",
           "parse_request", "request_fields", "text_job"]

MAX_MARKER = 32
NOT_SERVED = {"decoder": "AG's K x K tables and iterations have no server limit yet",
              "dedup": "the workbench keeps infill run's default",
              "dedup_keep": "a parity option for Ithaca's published code",
              "pivot_context": "a parity option for the paper's published code",
              "allow_special": "special tokens in a fill are for experiments, not the workbench",
              "sampling": "sampling baselines are for benchmarks",
              "temperature": "sampling baselines are for benchmarks",
              "top_p": "sampling baselines are for benchmarks",
              "joint_size": "AG only (see decoder)", "ag_iterations": "AG only (see decoder)",
              "batch_size": "the server batches the requests it holds itself (max_batch)"}
"""The options (fields of :class:`FillRequest` and of its :class:`DecodeConfig`) the server does
not take, each with why. Every other field is a field of the request bodies, by construction."""
DEPRECATED_NAMES = {"beam": "beam_size"}
"""An old JSON spelling -> its field (the API's name): still read, with a note in the answer
(until 0.3.0, CHANGELOG.md)."""
_OLD_NAMES: ContextVar[list[str] | None] = ContextVar("old_names", default=None)
JSON_TYPES: dict[str, Any] = {
    "pivot": str | list[str] | None, "gap": int | str | None,
    "letters": list[list[str | list[str] | None] | None] | None}
"""A JSON type wider than the option's rules say (a pivot per gap position: a list; a gap
length as text, ``"4-6"``; letter sets per gap and position)."""


def decoding_fields(not_served=NOT_SERVED) -> dict[str, tuple[Any, Any]]:
    """The fields of :class:`DecodeConfig` but ``not_served`` as pydantic fields."""
    return request_fields(DecodeConfig, not_served)


def fill_fields(not_served=NOT_SERVED) -> dict[str, tuple[Any, Any]]:
    """The fields of :class:`FillRequest` and of its DecodeConfig but ``not_served`` as pydantic
    fields (a request body's options)."""
    return {**request_fields(FillRequest, not_served), **decoding_fields(not_served)}


def request_fields(kind, not_served=NOT_SERVED) -> dict[str, tuple[Any, Any]]:
    """The fields of the request type ``kind`` but ``not_served`` as pydantic fields: the
    option's type, its default and its help. Ranges and choices are not restated: the request is
    checked by the library's own rules when it is built (one mechanism, the library's
    messages)."""
    defaults = kind.fields()
    out = {}
    for name, spec in described(kind):
        if name in not_served:
            continue
        kind = JSON_TYPES.get(name, spec.kind | None if spec.optional else spec.kind)
        old = [o for o, new in DEPRECATED_NAMES.items() if new == name]
        alias = {"validation_alias": AliasChoices(name, *old)} if old else {}
        out[name] = (kind, Field(defaults[name].default, description=spec.help, **alias))
    return out


class OldNames(BaseModel):
    """A request body that still reads the old spellings (:data:`DEPRECATED_NAMES`), noting
    each one used (:func:`deprecation_notes`)."""

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data):
        if isinstance(data, dict):
            for old, new in DEPRECATED_NAMES.items():
                if old in data and new in data:
                    raise PydanticCustomError("spelling", f"give '{new}' only ('{old}' is its "
                                              "deprecated spelling)")
                if old in data and _OLD_NAMES.get() is not None:
                    _OLD_NAMES.get().append(old)
        return data


def validate_body(model: type[BaseModel], body: bytes) -> tuple[BaseModel, list[str]]:
    """``body`` validated as ``model`` and a note per deprecated spelling it used."""
    token = _OLD_NAMES.set([])
    try:
        req = model.model_validate_json(body)
        used = _OLD_NAMES.get()
    finally:
        _OLD_NAMES.reset(token)
    return req, [f"'{old}' is deprecated: send '{DEPRECATED_NAMES[old]}' (the old spelling is "
                 "read until 0.3.0)" for old in used]


class _Body(OldNames):
    """What a request holds besides the fill options (:data:`FillBody`)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: str
    model: str | None = None
    id: str | None = None
    record: int | Literal["all"] = 1
    _notes: list[str] = PrivateAttr(default_factory=list)

    @field_validator("record", mode="before")
    @classmethod
    def _record_kind(cls, value):
        if not (value == "all" or (isinstance(value, int) and not isinstance(value, bool))):
            raise PydanticCustomError("record", 'a record number (1, 2, ...) or "all", got '
                                      "{value}", {"value": json.dumps(value)})
        return value


FillBody = create_model("FillBody", __base__=_Body, __module__=__name__,
                        __doc__="The JSON body of ``POST /api/fill``.", **fill_fields())


def decode_config(req: BaseModel, not_served=NOT_SERVED) -> DecodeConfig:
    """The request's decoding options (checked by DecodeConfig's rules)."""
    return DecodeConfig(**{name: getattr(req, name)
                           for name, _ in described(DecodeConfig) if name not in not_served})


def fill_request(req: BaseModel, not_served=NOT_SERVED) -> FillRequest:
    """A body as the library's fill request, whole (what ``infill run`` builds from its flags):
    every served field of :class:`FillRequest` and of its config, checked by their rules;
    options left out stay None, for :func:`~infill.filling.defaults.resolve_fill`."""
    fields = {name: getattr(req, name) for name, _ in described(FillRequest)
              if name not in not_served}
    return FillRequest(config=decode_config(req, not_served), **fields)


def parse_request(body: bytes) -> FillBody:
    """The body as a :class:`FillBody`; :class:`InputError` (one line) when it is not."""
    try:
        req, notes = validate_body(FillBody, body)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        if err["type"] == "json_invalid":
            raise InputError(f"malformed JSON: {err['msg'].removeprefix('Invalid JSON: ')}") \
                from None
        where = ".".join(str(part) for part in err["loc"]) or "request body"
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise InputError(f"{where}: {err['msg']}{more}") from None
    req._notes = notes
    return req


def _gap(req: FillBody, limits: Limits) -> None:
    """The request's gap length, read as ``infill run`` reads one (N, ``LO-HI``, ``word``; None:
    the model's default), within this server's limit."""
    if req.gap is None:
        return
    length = one_length(req.gap)
    longest = length if isinstance(length, int) else None if length.word else length.hi
    if longest is not None:
        _within(longest, "gap", limits.max_gap)


def _record(text: str, record: int) -> tuple[str, list[str]]:
    """The text to fill: ``text`` itself, or the ``record``-th record of FASTA text (with a note
    naming it), read as ``infill run`` reads its inputs (:func:`text_inputs`)."""
    inputs = text_inputs(text, "the FASTA text")
    if inputs[0].header is None:            # not FASTA: the text itself
        if record != 1:
            raise InputError(f"record {record} asked for, but the text is not FASTA (a "
                             "'>header' line before each sequence)", field="record")
        return text, []
    if not 1 <= record <= len(inputs):
        raise InputError(f"record {record} asked for, but the FASTA text has {len(inputs)} "
                         "record(s)")
    rec = inputs[record - 1]
    if rec.text is None:
        raise InputError(f"FASTA record {record} ({rec.header}) has no sequence")
    return rec.text, [f"FASTA: filled record {record} of {len(inputs)} ({rec.header})"]


def _within(value: int, what: str, high: int) -> int:
    if not 1 <= value <= high:
        raise InputError(f"{what} must be between 1 and {high} on this server, got {value}")
    return value


def check_request(req: FillBody, catalog: ModelCatalog, limits: Limits,
                  default_model: str) -> tuple[str, FillRequest, Defaults]:
    """The model and the request's fill request resolved -- once, here, as every fill's
    (:func:`~infill.filling.defaults.resolve_fill`: the model's recommendations for what it left
    out, the beam raised to ``top_k``) -- with the defaults it took, checked against this
    server's limits (what holds for every text of the request). Raises :class:`InputError` /
    :class:`ConfigError` / :class:`TooLarge`."""
    model = catalog.check(req.model if req.model is not None else default_model)
    if len(req.text) > limits.max_text:
        raise TooLarge(f"text too long: {len(req.text)} characters (limit {limits.max_text})")
    if not req.text.strip():
        raise InputError("empty text: nothing to fill")
    if not req.marker or len(req.marker) > MAX_MARKER:
        raise InputError(f"the gap marker must have 1 to {MAX_MARKER} characters")
    _gap(req, limits)
    _within(req.beam_size, "beam_size", limits.max_beam)
    _within(req.top_k, "top_k", limits.max_top_k)
    request, defaults = resolve_fill(model, fill_request(req))
    return model, request, defaults


def text_job(text: str, model: str, request: FillRequest, defaults: Defaults,
             catalog: ModelCatalog, limits: Limits) -> tuple[Job, list[str]]:
    """The :class:`Job` filling ``text`` (the request's text or one FASTA record of it) with the
    resolved ``request`` and notes on how it was read -- by the jobs layer, as ``infill run``
    reads it (:func:`~infill.jobs.fill.prepare`: the ``region`` masked, Leiden sigla
    converted; the text's own gap lengths and letter sets go into the job's request)."""
    (read,), _ = prepare(catalog.unit(model), [Input("1", text)], request)
    if read.letters is not None or request.letters is not None:    # checked against the model
        _check_letters(catalog.get(model), read, request)
    if read.error is not None:
        raise InputError(read.error)
    if len(read.text) > limits.max_text:
        raise TooLarge(f"text too long once its Leiden lacunae are expanded: {len(read.text)} "
                       f"characters (limit {limits.max_text})")
    gap = request.gap if read.gap is None else list(read.gap)    # [c.3]: its whole range
    check_ranking(defaults.given, ranks_lengths(gap), ranks_lengths(gap))
    letters = request.letters if read.letters is None else read.letters     # #[ηιν] in the text
    return Job(model, request.replace(gap=gap, letters=letters), read.text, defaults), \
        list(read.notes)


def _check_letters(model, read: Input, request: FillRequest) -> None:
    """The text's (or the request's) letter sets against the model's alphabet and the text's
    gaps, so that a bad set is the request's 4xx, not an error inside a batch."""
    letters = request.letters if read.letters is None else read.letters
    try:
        gaps = model.encode(read.text, request.gap if isinstance(request.gap, int) else 1,
                            request.marker).gaps
    except InputError:
        return                               # the text's own error comes from the decode
    letter_masks(model, letters, gaps, request.config.allow_special)


def build_job(req: FillBody, catalog: ModelCatalog, limits: Limits,
              default_model: str) -> tuple[Job, list[str]]:
    """The :class:`Job` a request asks for (its resolved request and the defaults it took) and
    notes on how its text was read (the FASTA record, Leiden). Raises :class:`InputError` /
    :class:`ConfigError` / :class:`TooLarge` for what this server cannot take."""
    model, request, defaults = check_request(req, catalog, limits, default_model)
    if req.record == "all":
        raise InputError("record 'all' is answered per record (fill_records), not as one job")
    text, notes = _record(req.text, req.record)
    job, read = text_job(text, model, request, defaults, catalog, limits)
    return job, req._notes + notes + read
