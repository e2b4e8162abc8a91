"""``POST /api/epidoc``: restore an uploaded EpiDoc file in the workbench.

Body (JSON object; every field but ``xml`` optional, defaults as ``infill run``)::

    {"xml": "<TEI ...>...</TEI>", "model": "builtin:greek", "hide_supplied": false,
     "unclear": "keep", "scorer": "hcb", "order": "left-to-right", "beam_size": 5, "top_k": 5,
     "seed": 0}

The file is read as ``infill run FILE.xml`` reads it (:mod:`infill.data.epidoc`: no DTD, no
entities, no network); its gapped text is decoded by the server's batching worker like any
``/api/fill`` text, and the answer holds ``input`` (the gapped text), ``lacunae`` (readings per
lacuna, as ``infill run --json``), ``completions``, ``notes``, and the two outputs ``epidoc`` (the
file with the restorations written in) and ``leiden``. A file with nothing to restore comes back
unchanged. An unreadable file is a 400 with one line naming the upload and the line.
"""
from __future__ import annotations

from pydantic import ConfigDict, PrivateAttr, ValidationError, create_model

from infill.data.epidoc import read_edition
from infill.epigraphy import EditionResult, check_edition_ranking, epidoc_output, \
    file_request, leiden_output, read_for_restore, restore_request, take_fill
from infill.errors import InputError
from infill.filling.request import NOT_FOR, unknown_span
from infill.serve.catalog import ModelCatalog
from infill.serve.limits import Limits, TooLarge
from infill.serve.schema import (NOT_SERVED, OldNames, _within, fill_fields, fill_request,
                                 validate_body)
from infill.serve.worker import Job

__all__ = ["EpidocBody", "epidoc_answer", "epidoc_job", "parse_epidoc"]

UPLOAD = "upload.xml"
EPIDOC_NOT_SERVED = {**NOT_SERVED, **NOT_FOR["EpiDoc files"],
                     "pivot": "an edition's lacunae take the model's pivot"}
"""The options an upload does not take (the server's, those that do not apply to editions, the
pivot); the others are fields of the request."""


class _Upload(OldNames):
    """What an upload holds besides the fill options (:data:`EpidocBody`)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    xml: str
    model: str | None = None
    hide_supplied: bool = False
    _notes: list[str] = PrivateAttr(default_factory=list)


EpidocBody = create_model("EpidocBody", __base__=_Upload, __module__=__name__,
                          __doc__="The JSON body of ``POST /api/epidoc``.",
                          **fill_fields(EPIDOC_NOT_SERVED))


def parse_epidoc(body: bytes) -> EpidocBody:
    """The body as an :class:`EpidocBody`; :class:`InputError` (one line) when it is not."""
    try:
        req, notes = validate_body(EpidocBody, body)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        where = ".".join(str(part) for part in err["loc"]) or "request body"
        raise InputError(f"{where}: {err['msg']}") from None
    req._notes = notes
    return req


def check_extent(edition, limits: Limits) -> None:
    """:class:`TooLarge` before an upload's edition is written out as text (the page's and the
    decoder's) when its characters, lost ones included (many ``<gap quantity="2000"/>``), are
    more than ``max_text``."""
    n = 0
    for atom in edition.atoms:
        n += _characters(atom, edition)
        if n > limits.max_text:
            raise TooLarge(f"edition too long: its text and lacunae come to more than "
                           f"{limits.max_text} characters (the limit)")


def _characters(atom, edition) -> int:
    """The characters one atom of an edition is written out as (at least)."""
    if atom.kind == "char":
        return 1
    if atom.kind == "missing":
        return atom.count
    if atom.kind == "lost":
        return edition.lacunae[atom.lacuna].length
    return 0


def epidoc_job(req: EpidocBody, catalog: ModelCatalog, limits: Limits,
               default_model: str) -> tuple[Job | None, EditionResult]:
    """The decode an upload asks for (None when it has nothing to restore) and its edition, read
    and asked for as ``infill run FILE.xml`` does (:func:`infill.epigraphy.read_for_restore`,
    :func:`~infill.epigraphy.restore_request` -- resolved once -- and
    :func:`~infill.epigraphy.file_request`); the worker decodes it like any text."""
    model = catalog.check(req.model if req.model is not None else default_model)
    _within(req.beam_size, "beam_size", limits.max_beam)
    _within(req.top_k, "top_k", limits.max_top_k)
    request, defaults = restore_request(model, fill_request(req, EPIDOC_NOT_SERVED))
    edition = read_edition(UPLOAD, req.xml, unclear=request.unclear,     # read once; bad: one line
                           unknown=unknown_span(request.unknown_lengths))
    check_extent(edition, limits)
    greek = catalog.family(model) == "greek"
    res = read_for_restore(UPLOAD, req.xml, catalog.get(model) if greek else None,
                           req.hide_supplied, edition=edition)
    if res.error is not None:
        raise InputError(res.error)
    res.notes = req._notes + res.notes
    res.request, res.defaults = file_request(res, request), defaults
    if not res.rendered.restore:
        return None, res
    check_edition_ranking([res.request.gap], defaults)       # as restore_files checks it
    if len(res.rendered.text) > limits.max_text:
        raise TooLarge(f"edition too long: {len(res.rendered.text)} characters (limit "
                       f"{limits.max_text})")
    return Job(model, res.request, res.rendered.text, defaults), res


def epidoc_answer(res: EditionResult, fill, model: str) -> dict:
    """The JSON answer: readings per lacuna (:func:`~infill.epigraphy.take_fill`, as
    ``infill run`` reads them), the config that ran and both outputs."""
    if fill is not None:
        take_fill(res, fill)
    return {"input": res.text, "model": model, "config": res.config_json(), "notes": res.notes,
            "lacunae": res.lacunae_json(),
            "completions": [c.to_json(k) for k, c in enumerate(res.completions, 1)],
            "leiden": leiden_output(res),
            "epidoc": epidoc_output(res, model)}
