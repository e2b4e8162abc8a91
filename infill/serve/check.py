"""``POST /api/check``: the workbench's check view -- a text's doubtful readings flagged by the
library's check job (:func:`infill.jobs.check.check`, as ``infill check``).

Body (JSON object; every field but ``text`` optional, defaults as ``infill check``)::

    {"text": "To be, or not to be, that is the questoin.", "model": "builtin:english",
     "threshold": 3.5, "marker": "___", "id": "1"}

The answer is one line of ``infill check --json``: ``shown`` (the text as the model reads it),
``positions`` (each checked token: its ``span`` in ``shown``, ``written``, ``prob``, ``best``,
``best_prob``, ``log_ratio``, ``flagged``), ``flagged``, ``notes`` and, for protein models,
``substitutions``. A text that cannot be checked is a 400 with one line.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, ValidationError

from infill.check_request import DEFAULT_THRESHOLD, CheckRequest
from infill.errors import InputError
from infill.jobs.check import check
from infill.serve.catalog import ModelCatalog
from infill.serve.limits import Limits, TooLarge

__all__ = ["CheckBody", "check_answer", "parse_check"]


class CheckBody(BaseModel):
    """The JSON body of ``POST /api/check``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: str
    model: str | None = None
    threshold: float = DEFAULT_THRESHOLD
    marker: str = "___"
    id: str | None = None


def parse_check(body: bytes) -> CheckBody:
    """The body as a :class:`CheckBody`; :class:`InputError` (one line) when it is not."""
    try:
        return CheckBody.model_validate_json(body)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        where = ".".join(str(part) for part in err["loc"]) or "request body"
        raise InputError(f"{where}: {err['msg']}") from None


def check_answer(req: CheckBody, catalog: ModelCatalog, limits: Limits,
                 default_model: str) -> dict:
    """The check of the request's text (run in the uploads' thread, off the event loop):
    one ``infill check --json`` line, or :class:`InputError` / :class:`TooLarge`."""
    if len(req.text) > limits.max_text:
        raise TooLarge(f"text too long: {len(req.text)} characters (limit {limits.max_text})")
    request = CheckRequest(threshold=req.threshold, marker=req.marker)
    name = catalog.check(req.model if req.model is not None else default_model)
    model = catalog.get(name)
    result = check(model, [req.text], request, name=name)[0]
    if result.error is not None:
        raise InputError(result.error, field=result.error_field)
    out = result.to_json()
    out["id"] = req.id if req.id is not None else out["id"]
    return out
