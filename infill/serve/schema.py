"""``POST /api/fill``: the request body (validated by pydantic) and the decode it asks for.

Body (JSON object; every field but ``text`` optional, defaults as ``infill run``)::

    {"text": "...", "model": "builtin:english", "gap": 1, "marker": "___", "scorer": "hcb",
     "order": "left-to-right", "beam": 5, "top_k": 5, "pivot": null, "seed": 0, "id": null,
     "region": null, "record": 1}

``text`` may be FASTA: ``record`` (1-based) picks the record to fill, the first by default;
``"record": "all"`` fills every record and answers ``{"id", "records": [...]}``, one line of
``infill run --json`` per record (:mod:`infill.serve.records`).
``region`` (antibody models: ``cdr3``, ``fr1``, ...) masks that IMGT region, as ``--region``.
A scorer or order left out is the model's recommended default (the answer's ``config.defaults``).

``model`` defaults to the server's default model (its first ``--model``, else builtin:english);
``pivot`` is a token or a list of one token per gap position; ``id`` is echoed in the answer.
Types are strict (``"beam": "5"`` is refused; ``beam_size``, the API's and ``--json``'s
name, is accepted for ``beam``) and unknown fields are errors, so a typo never
passes silently. For models that fill characters (Greek editions) the text's Leiden sigla are
converted first, as ``infill run`` does
(:mod:`infill.data.leiden`).

The decoding options are made from :class:`~infill.config.DecodeConfig`'s fields (type, default,
help), every field but those :data:`NOT_SERVED` lists, so an option added to the library is a
field here; their ranges and choices are checked by DecodeConfig's own rules.
"""
from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import (AliasChoices, BaseModel, ConfigDict, Field, ValidationError, create_model,
                      field_validator)
from pydantic_core import PydanticCustomError

from infill.api import effective_config
from infill.config import DecodeConfig
from infill.defaults import resolve_defaults, resolve_gap, resolve_length_score
from infill.fields import described
from infill.errors import InputError
from infill.jobs.inputs import Input, read_leiden, reads_leiden
from infill.serve.catalog import ModelCatalog
from infill.serve.limits import Limits, TooLarge
from infill.serve.worker import Job

__all__ = ["FillRequest", "NOT_SERVED", "JSON_NAMES", "build_job", "check_request",
           "decode_config", "decoding_fields", "parse_request", "text_job"]

MAX_MARKER = 32
NOT_SERVED = {"decoder": "AG's K x K tables and iterations have no server limit yet",
              "dedup": "the workbench keeps infill run's default",
              "dedup_keep": "a parity option for Ithaca's published code",
              "pivot_context": "a parity option for the paper's published code",
              "allow_special": "special tokens in a fill are for experiments, not the workbench",
              "sampling": "sampling baselines are for benchmarks",
              "temperature": "sampling baselines are for benchmarks",
              "top_p": "sampling baselines are for benchmarks",
              "joint_size": "AG only (see decoder)", "ag_iterations": "AG only (see decoder)"}
"""The decoding options (:class:`DecodeConfig`'s fields) the server does not take, each with why.
Every other field of DecodeConfig is a field of the request, by construction."""
JSON_NAMES = {"beam_size": "beam"}
"""A decoding option whose JSON field has another name (its API name is accepted too)."""
JSON_TYPES: dict[str, Any] = {"pivot": str | list[str] | None}
"""A JSON type wider than the option's rules say (a pivot per gap position: a list)."""


def decoding_fields(not_served=NOT_SERVED) -> dict[str, tuple[Any, Any]]:
    """The fields of :class:`DecodeConfig` but ``not_served`` as pydantic fields: the option's
    type, its default and its help. Ranges and choices are not restated: the request is checked
    by DecodeConfig's own rules when the decode is built (one mechanism, the library's
    messages)."""
    defaults = DecodeConfig.fields()
    out = {}
    for name, spec in described(DecodeConfig):
        if name in not_served:
            continue
        kind = JSON_TYPES.get(name, spec.kind | None if spec.optional else spec.kind)
        json_name = JSON_NAMES.get(name, name)
        alias = {} if json_name == name else \
            {"validation_alias": AliasChoices(json_name, name)}
        out[json_name] = (kind, Field(defaults[name].default, description=spec.help, **alias))
    return out


class _Body(BaseModel):
    """What a request holds besides the decoding options (:data:`FillRequest`)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: str
    model: str | None = None
    gap: int | str | None = None
    marker: str = "___"
    top_k: int = 5
    id: str | None = None
    region: str | None = None
    record: int | Literal["all"] = 1

    @field_validator("record", mode="before")
    @classmethod
    def _record_kind(cls, value):
        if not (value == "all" or (isinstance(value, int) and not isinstance(value, bool))):
            raise PydanticCustomError("record", 'a record number (1, 2, ...) or "all", got '
                                      "{value}", {"value": json.dumps(value)})
        return value


FillRequest = create_model("FillRequest", __base__=_Body, __module__=__name__,
                           __doc__="The JSON body of ``POST /api/fill``.", **decoding_fields())


def decode_config(req: BaseModel, not_served=NOT_SERVED) -> DecodeConfig:
    """The request's decoding options (checked by DecodeConfig's rules)."""
    return DecodeConfig(**{name: getattr(req, JSON_NAMES.get(name, name))
                           for name, _ in described(DecodeConfig) if name not in not_served})


def parse_request(body: bytes) -> FillRequest:
    """The body as a :class:`FillRequest`; :class:`InputError` (one line) when it is not."""
    try:
        return FillRequest.model_validate_json(body)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        if err["type"] == "json_invalid":
            raise InputError(f"malformed JSON: {err['msg'].removeprefix('Invalid JSON: ')}") \
                from None
        where = ".".join(str(part) for part in err["loc"]) or "request body"
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise InputError(f"{where}: {err['msg']}{more}") from None


def request_defaults(req: FillRequest, model: str, config: DecodeConfig | None = None):
    """``(config, Defaults)``: the model's recommended scorer, order, gap length (and how its
    lengths are ranked) for what the request left out, as ``infill run`` resolves them (:mod:`infill.defaults`)."""
    if config is None:
        config = DecodeConfig(scorer=req.scorer, order=req.order)
    chosen = {k for k in ("scorer", "order") if k in req.model_fields_set
              and getattr(req, k) is not None}        # "scorer": null asks for the default
    config, defaults = resolve_defaults(model, config, chosen)
    gap, defaults = resolve_gap(req.gap, defaults)
    return config, resolve_length_score(None, gap, defaults)[1]


def _gap(req: FillRequest, limits: Limits) -> None:
    """The request's gap length, read as ``infill run`` reads one (N, ``LO-HI``, ``word``; None:
    the model's default), within this server's limit."""
    if req.gap is None:
        return
    from infill.decoding.lengths import one_length
    length = one_length(req.gap)
    longest = length if isinstance(length, int) else None if length.word else length.hi
    if longest is not None:
        _within(longest, "gap", limits.max_gap)


def _record(text: str, record: int) -> tuple[str, list[str]]:
    """The text to fill: ``text`` itself, or the ``record``-th record of FASTA text (with a note
    naming it)."""
    from infill.data.fasta import is_fasta, parse_fasta
    if not is_fasta(text):
        return text, []
    records = parse_fasta(text, "the FASTA text", keep_empty=True)   # numbered as the picker
    if not 1 <= record <= len(records):
        raise InputError(f"record {record} asked for, but the FASTA text has {len(records)} "
                         "record(s)")
    rec = records[record - 1]
    if not rec.sequence:
        raise InputError(f"FASTA record {record} ({rec.header}) has no sequence")
    return rec.sequence, [f"FASTA: filled record {record} of {len(records)} ({rec.header})"]


def _region(text: str, region: str) -> str:
    """``text`` with the IMGT ``region`` masked (antibody models: :func:`check_request`)."""
    from infill.data.regions import mask_region
    return mask_region(text, region)


def _within(value: int, what: str, high: int) -> int:
    if not 1 <= value <= high:
        raise InputError(f"{what} must be between 1 and {high} on this server, got {value}")
    return value


def check_request(req: FillRequest, catalog: ModelCatalog, limits: Limits,
                  default_model: str) -> tuple[str, DecodeConfig]:
    """The model and decoding options a request asks for, checked against this server's limits
    (what holds for every text of the request). Raises :class:`InputError` /
    :class:`ConfigError` / :class:`TooLarge`."""
    model = catalog.check(req.model if req.model is not None else default_model)
    if len(req.text) > limits.max_text:
        raise TooLarge(f"text too long: {len(req.text)} characters (limit {limits.max_text})")
    if not req.text.strip():
        raise InputError("empty text: nothing to fill")
    if not req.marker or len(req.marker) > MAX_MARKER:
        raise InputError(f"the gap marker must have 1 to {MAX_MARKER} characters")
    _gap(req, limits)
    _within(req.beam, "beam", limits.max_beam)
    _within(req.top_k, "top_k", limits.max_top_k)
    if req.region is not None and catalog.family(model) != "antibody":
        raise InputError(f"region is for antibody models (this model's family: "
                         f"{catalog.family(model)})")
    config, _ = request_defaults(req, model, decode_config(req))
    return model, config


def text_job(req: FillRequest, text: str, model: str, config: DecodeConfig,
             catalog: ModelCatalog, limits: Limits) -> tuple[Job, list[str]]:
    """The :class:`Job` filling ``text`` (the request's text or one FASTA record of it) and notes
    on how it was read: the ``region`` masked, Leiden sigla converted (models that fill
    characters, :func:`infill.jobs.inputs.reads_leiden`, as ``infill run`` does)."""
    notes: list[str] = []
    if req.region is not None:
        text = _region(text, req.region)
    gap = resolve_gap(req.gap, request_defaults(req, model, config)[1])[0]
    if reads_leiden(catalog.unit(model)):      # the same reading as ``infill run``'s
        read, = read_leiden([Input("1", text)], req.marker, gap)
        if read.error is not None:
            raise InputError(read.error)
        text, notes = read.text, list(read.notes)
        if read.gap is not None:  # [c.3]: every length of its range, one entry per marker
            gap = tuple(read.gap)
        if len(text) > limits.max_text:
            raise TooLarge(f"text too long once its Leiden lacunae are expanded: {len(text)} "
                           f"characters (limit {limits.max_text})")
    return Job(model, effective_config(config, req.top_k), gap, req.marker, text,
               req.top_k), notes


def build_job(req: FillRequest, catalog: ModelCatalog, limits: Limits,
              default_model: str) -> tuple[Job, list[str]]:
    """The :class:`Job` a request asks for, and notes on how its text was read (the FASTA
    record, Leiden). Raises :class:`InputError` / :class:`ConfigError` / :class:`TooLarge` for
    what this server cannot take."""
    model, config = check_request(req, catalog, limits, default_model)
    if req.record == "all":
        raise InputError("record 'all' is answered per record (fill_records), not as one job")
    text, notes = _record(req.text, req.record)
    job, read = text_job(req, text, model, config, catalog, limits)
    return job, notes + read
