"""``POST /api/epidoc``: restore an uploaded EpiDoc file in the workbench.

Body (JSON object; every field but ``xml`` optional, defaults as ``infill run``)::

    {"xml": "<TEI ...>...</TEI>", "model": "builtin:greek", "hide_supplied": false,
     "scorer": "hcb", "order": "left-to-right", "beam": 5, "top_k": 5, "seed": 0}

The file is read as ``infill run FILE.xml`` reads it (:mod:`infill.data.epidoc`: no DTD, no
entities, no network); its gapped text is decoded by the server's batching worker like any
``/api/fill`` text, and the answer holds ``input`` (the gapped text), ``lacunae`` (readings per
lacuna, as ``infill run --json``), ``completions``, ``notes``, and the two outputs ``epidoc`` (the
file with the restorations written in) and ``leiden``. A file with nothing to restore comes back
unchanged. An unreadable file is a 400 with one line naming the upload and the line.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from infill.api import effective_config
from infill.config import DecodeConfig
from infill.data.epidoc import read_edition
from infill.epigraphy import EditionResult, _check_language, epidoc_output, leiden_output, \
    readings_for
from infill.errors import InputError
from infill.serve.catalog import ModelCatalog
from infill.serve.limits import Limits, TooLarge
from infill.serve.schema import NOT_SERVED, _within, decode_config, decoding_fields
from infill.serve.worker import Job

__all__ = ["EpidocRequest", "epidoc_answer", "epidoc_job", "parse_epidoc"]

UPLOAD = "upload.xml"
MARKER = "\x00"            # never in a rendered edition: its gaps are '?' runs
EPIDOC_NOT_SERVED = {**NOT_SERVED, "pivot": "an edition's lacunae take the model's pivot"}
"""The decoding options an upload does not take; the others are fields of the request."""


class _Upload(BaseModel):
    """What an upload holds besides the decoding options (:data:`EpidocRequest`)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    xml: str
    model: str | None = None
    hide_supplied: bool = False
    top_k: int = 5


EpidocRequest = create_model("EpidocRequest", __base__=_Upload, __module__=__name__,
                             __doc__="The JSON body of ``POST /api/epidoc``.",
                             **decoding_fields(EPIDOC_NOT_SERVED))


def parse_epidoc(body: bytes) -> EpidocRequest:
    """The body as an :class:`EpidocRequest`; :class:`InputError` (one line) when it is not."""
    try:
        return EpidocRequest.model_validate_json(body)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        where = ".".join(str(part) for part in err["loc"]) or "request body"
        raise InputError(f"{where}: {err['msg']}") from None


def epidoc_job(req: EpidocRequest, catalog: ModelCatalog, limits: Limits,
               default_model: str) -> tuple[Job | None, EditionResult]:
    """The decode an upload asks for (None when it has nothing to restore) and its edition."""
    model = catalog.check(req.model if req.model is not None else default_model)
    _within(req.beam, "beam", limits.max_beam)
    _within(req.top_k, "top_k", limits.max_top_k)
    edition = read_edition(UPLOAD, req.xml)
    res = EditionResult(UPLOAD, edition, notes=list(edition.notes),
                        hide_supplied=req.hide_supplied)
    if catalog.family(model) == "greek":
        _check_language(edition, catalog.get(model))
    res.rendered = edition.render(hide_supplied=req.hide_supplied)
    res.text = res.rendered.text
    res.notes += [f"XML line {lac.line}: a lacuna of about {lac.length} characters decoded as "
                  f"exactly {lac.length} (infill run decodes every length of its range)"
                  for lac in edition.lacunae if lac.lengths is not None
                  and any(k == lac.index for k, _, _ in res.rendered.restore)]
    if not res.rendered.restore:
        res.notes.append("nothing to restore")
        return None, res
    if len(res.text) > limits.max_text:
        raise TooLarge(f"edition too long: {len(res.text)} characters (limit {limits.max_text})")
    config = decode_config(req, EPIDOC_NOT_SERVED)
    return Job(model, effective_config(config, req.top_k), 1, MARKER, res.text, req.top_k), res


def epidoc_answer(res: EditionResult, fill, job: Job | None, model: str) -> dict:
    """The JSON answer: readings per lacuna and both outputs."""
    from infill.data.accents import default_lexicon

    if fill is not None:
        res.completions = fill.completions
        res.notes += [n for n in fill.notes if n not in res.notes]
        res.readings = readings_for(res.rendered, fill.completions, default_lexicon())
    config = job.config if job is not None else DecodeConfig()
    top_k = job.top_k if job is not None else 0
    return {"input": res.text, "model": model, "notes": res.notes,
            "lacunae": res.lacunae_json(),
            "completions": [c.to_json(k) for k, c in enumerate(res.completions, 1)],
            "leiden": leiden_output(res),
            "epidoc": epidoc_output(res, model, config, top_k)}
