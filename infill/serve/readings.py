"""``POST /api/readings``: the workbench's candidate readings -- the readings proposed for each
lacuna of a text scored by the library's readings job (:func:`infill.jobs.readings.readings`,
as ``infill run --readings``).

Body (JSON object; every field but ``text`` and ``readings`` optional, defaults as ``infill
run``; the decoding options are ``POST /api/fill``'s)::

    {"text": "ἔδοξε τῆι βουλῆι καὶ τῶι [....]ι", "readings": ["δήμω|δάμω"],
     "model": "builtin:greek", "scorer": "hcb", "order": "left-to-right", "top_k": 5}

``readings``: per lacuna of the text, in order, ``"a|b"`` or a list of strings. The answer is
one line of ``infill run --readings --json``: ``lacunae[].readings`` (``text``, ``prob``,
``resp``, ``lem``), ``combinations`` (``readings``, ``text``, ``score``, ``rank_score``,
``prob``, ``beam_rank``, ``beam_score``, ``exact``), the beam's ``completions``. Bad input is
a 400 with one line.
"""
from __future__ import annotations

from pydantic import ConfigDict, ValidationError, create_model

from infill.errors import InputError
from infill.filling.request import NOT_FOR, FillRequest
from infill.jobs.readings import readings
from infill.serve.catalog import ModelCatalog
from infill.serve.limits import Limits, TooLarge
from infill.serve.schema import NOT_SERVED, OldNames, _gap, fill_fields, fill_request

__all__ = ["READINGS_NOT_SERVED", "ReadingsBody", "parse_readings_body", "readings_answer"]

READINGS_NOT_SERVED = {**NOT_SERVED, **{k: why for k, why in NOT_FOR["readings"].items()
                                        if k in FillRequest.fields()}}
"""The options a readings request does not take (the server's and the fill options that do not
apply to readings); the others are fields of the request. A decoding option that does not apply
(``seed``, which the page always sends) is a field, refused when it is not its default
(:func:`~infill.filling.request.check_applies`)."""


class _Body(OldNames):
    """What a readings request holds besides the fill options."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: str
    readings: list[str | list[str]]
    model: str | None = None
    id: str | None = None


ReadingsBody = create_model("ReadingsBody", __base__=_Body, __module__=__name__,
                            __doc__="The JSON body of ``POST /api/readings``.",
                            **fill_fields(READINGS_NOT_SERVED))


def parse_readings_body(body: bytes):
    """The body as a :class:`ReadingsBody`; :class:`InputError` (one line) when it is not."""
    try:
        return ReadingsBody.model_validate_json(body)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        if err["type"] == "json_invalid":
            raise InputError(f"malformed JSON: {err['msg'].removeprefix('Invalid JSON: ')}") \
                from None
        where = ".".join(str(part) for part in err["loc"]) or "request body"
        raise InputError(f"{where}: {err['msg']}") from None


def _readings_within(model, proposed: list, limits: Limits) -> None:
    """The readings within this server's limits, as a fill's gaps are: each reading at most
    ``max_gap`` tokens, the longest of each lacuna together at most ``max_positions``
    (InputError / :class:`TooLarge`, before any work)."""
    lacunae = [r.split("|") if isinstance(r, str) else r for r in proposed]
    longest = [max((len(model.tokenize(a)) for a in alts if isinstance(a, str)), default=0)
               for alts in lacunae]
    if max(longest, default=0) > limits.max_gap:
        raise InputError(f"a reading of {max(longest)} tokens: readings are at most "
                         f"{limits.max_gap} on this server", field="readings")
    if sum(longest) > limits.max_positions:
        raise TooLarge(f"too many positions to fill: {sum(longest)} (limit "
                       f"{limits.max_positions})")


def readings_answer(req, catalog: ModelCatalog, limits: Limits, default_model: str) -> dict:
    """The readings of the request's text scored (run in the uploads' thread, off the event
    loop): one ``infill run --readings --json`` line, or InputError / ConfigError /
    :class:`TooLarge`."""
    if len(req.text) > limits.max_text:
        raise TooLarge(f"text too long: {len(req.text)} characters (limit {limits.max_text})")
    for value, what, high in ((req.beam_size, "beam_size", limits.max_beam),
                              (req.top_k, "top_k", limits.max_top_k)):
        if not 1 <= value <= high:
            raise InputError(f"{what} must be between 1 and {high} on this server, got {value}",
                             field=what)
    name = catalog.check(req.model if req.model is not None else default_model)
    model = catalog.get(name)
    _gap(req, limits)
    _readings_within(model, req.readings, limits)
    result = readings(model, req.text, req.readings,
                      request=fill_request(req, READINGS_NOT_SERVED), name=name)
    result.id = req.id
    return result.to_json()
