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

from typing import Literal

from pydantic import ConfigDict, PrivateAttr, ValidationError, create_model

from infill.data.epidoc import read_edition
from infill.filling.defaults import resolve_fill
from infill.epigraphy import MARKER, EditionResult, edition_letters, epidoc_output, \
    leiden_output, read_for_restore, readings_for
from infill.errors import InputError
from infill.names import RERANKS
from infill.serve.catalog import ModelCatalog
from infill.serve.limits import Limits, TooLarge
from infill.serve.schema import (NOT_SERVED, OldNames, _within, decode_config, decoding_fields,
                                 fill_request, frozen_letters, validate_body)
from infill.serve.worker import Job

__all__ = ["EpidocRequest", "epidoc_answer", "epidoc_job", "parse_epidoc"]

UPLOAD = "upload.xml"
EPIDOC_NOT_SERVED = {**NOT_SERVED, "pivot": "an edition's lacunae take the model's pivot"}
"""The decoding options an upload does not take; the others are fields of the request."""


class _Upload(OldNames):
    """What an upload holds besides the decoding options (:data:`EpidocRequest`)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    xml: str
    model: str | None = None
    hide_supplied: bool = False
    unclear: Literal["keep", "restore"] = "keep"
    top_k: int = 5
    rerank: Literal[RERANKS] | None = None
    _notes: list[str] = PrivateAttr(default_factory=list)


EpidocRequest = create_model("EpidocRequest", __base__=_Upload, __module__=__name__,
                             __doc__="The JSON body of ``POST /api/epidoc``.",
                             **decoding_fields(EPIDOC_NOT_SERVED))


def parse_epidoc(body: bytes) -> EpidocRequest:
    """The body as an :class:`EpidocRequest`; :class:`InputError` (one line) when it is not."""
    try:
        req, notes = validate_body(EpidocRequest, body)
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


def epidoc_job(req: EpidocRequest, catalog: ModelCatalog, limits: Limits,
               default_model: str) -> tuple[Job | None, EditionResult]:
    """The decode an upload asks for (None when it has nothing to restore) and its edition,
    read as ``infill run FILE.xml`` reads one (:func:`infill.epigraphy.read_for_restore`: a
    lacuna of uncertain length is decoded over its whole range) with the options resolved as
    every fill's (:func:`~infill.filling.defaults.resolve_fill`)."""
    model = catalog.check(req.model if req.model is not None else default_model)
    _within(req.beam_size, "beam_size", limits.max_beam)
    _within(req.top_k, "top_k", limits.max_top_k)
    edition = read_edition(UPLOAD, req.xml, unclear=req.unclear)   # read once; bad: one line
    check_extent(edition, limits)
    greek = catalog.family(model) == "greek"
    res = read_for_restore(UPLOAD, req.xml, catalog.get(model) if greek else None,
                           req.hide_supplied, edition=edition)
    if res.error is not None:
        raise InputError(res.error)
    res.notes = req._notes + res.notes
    request, res.defaults = resolve_fill(model, fill_request(
        req, decode_config(req, EPIDOC_NOT_SERVED), gap=1, marker=MARKER, region=None))
    spans = [span for _, span in res.rendered.ranges]
    res.request = request.replace(gap=spans or 1)
    if not res.rendered.restore:
        return None, res
    if len(res.rendered.text) > limits.max_text:
        raise TooLarge(f"edition too long: {len(res.rendered.text)} characters (limit "
                       f"{limits.max_text})")
    return Job(model, request.config, tuple(spans) or 1, MARKER, res.rendered.text,
               request.top_k, frozen_letters(edition_letters(res)), request.rerank), res


def epidoc_answer(res: EditionResult, fill, model: str) -> dict:
    """The JSON answer: readings per lacuna, the config that ran and both outputs."""
    from infill.data.accents import default_lexicon

    if fill is not None:
        res.completions, res.rerank = fill.completions, fill.rerank
        res.notes += [n for n in fill.notes if n not in res.notes]
        res.readings = readings_for(res.rendered, fill.completions, default_lexicon())
    return {"input": res.text, "model": model, "config": res.config_json(), "notes": res.notes,
            "lacunae": res.lacunae_json(),
            "completions": [c.to_json(k) for k, c in enumerate(res.completions, 1)],
            "leiden": leiden_output(res),
            "epidoc": epidoc_output(res, model)}
