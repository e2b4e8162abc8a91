"""``POST /api/fill``: the request body (validated by pydantic) and the decode it asks for.

Body (JSON object; every field but ``text`` optional, defaults as ``infill run``)::

    {"text": "...", "model": "builtin:english", "gap": 1, "marker": "___", "scorer": "hcb",
     "order": "left-to-right", "beam": 5, "top_k": 5, "pivot": null, "seed": 0, "id": null}

``model`` defaults to the server's default model (its first ``--model``, else builtin:english);
``pivot`` is a token or a list of one token per gap position; ``id`` is echoed in the answer.
Types are strict (``"beam": "5"`` is refused; ``beam_size``, the API's and ``--json``'s
name, is accepted for ``beam``) and unknown fields are errors, so a typo never
passes silently. For Greek models the text's Leiden sigla are converted first
(:mod:`infill.data.leiden`).
"""
from __future__ import annotations

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from infill.api import effective_config
from infill.config import DecodeConfig
from infill.errors import InputError
from infill.serve.catalog import ModelCatalog
from infill.serve.limits import Limits, TooLarge
from infill.serve.worker import Job

__all__ = ["FillRequest", "build_job", "parse_request"]

MAX_MARKER = 32
_D = DecodeConfig()        # the library's defaults, as `infill run` uses them


class FillRequest(BaseModel):
    """The JSON body of ``POST /api/fill``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: str
    model: str | None = None
    gap: int = 1
    marker: str = "___"
    scorer: str | None = None
    order: str = _D.order
    beam: int = Field(_D.beam_size, validation_alias=AliasChoices("beam", "beam_size"))
    top_k: int = 5
    pivot: str | list[str] | None = None
    seed: int = _D.seed
    id: str | None = None


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


def _within(value: int, what: str, high: int) -> int:
    if not 1 <= value <= high:
        raise InputError(f"{what} must be between 1 and {high} on this server, got {value}")
    return value


def build_job(req: FillRequest, catalog: ModelCatalog, limits: Limits,
              default_model: str) -> tuple[Job, list[str]]:
    """The :class:`Job` a request asks for, and notes on how its text was read (Leiden).
    Raises :class:`InputError` / :class:`ConfigError` / :class:`TooLarge` for what this server
    cannot take."""
    model = catalog.check(req.model if req.model is not None else default_model)
    if len(req.text) > limits.max_text:
        raise TooLarge(f"text too long: {len(req.text)} characters (limit {limits.max_text})")
    if not req.text.strip():
        raise InputError("empty text: nothing to fill")
    if not req.marker or len(req.marker) > MAX_MARKER:
        raise InputError(f"the gap marker must have 1 to {MAX_MARKER} characters")
    _within(req.gap, "gap", limits.max_gap)
    _within(req.beam, "beam", limits.max_beam)
    _within(req.top_k, "top_k", limits.max_top_k)
    pivot = tuple(req.pivot) if isinstance(req.pivot, list) else req.pivot
    config = DecodeConfig(scorer=req.scorer, order=req.order, beam_size=req.beam, pivot=pivot,
                          seed=req.seed)
    text, notes = req.text, []
    if catalog.family(model) == "greek":
        from infill.data.leiden import convert
        converted = convert(text, req.marker)
        text, notes = converted.text, list(converted.notes)
        if len(text) > limits.max_text:
            raise TooLarge(f"text too long once its Leiden lacunae are expanded: {len(text)} "
                           f"characters (limit {limits.max_text})")
    return Job(model, effective_config(config, req.top_k), req.gap, req.marker, text,
               req.top_k), notes
