"""The workbench's request bodies are made from FillRequest's and DecodeConfig's fields: every
option the server takes has the library's name, default and help; the rest are listed with a
reason, in one table (and, per kind of input, the options that do not apply to it)."""
from __future__ import annotations

import pytest

from infill.config import DecodeConfig
from infill.errors import InputError
from infill.fields import described
from infill.filling.request import FillRequest
from infill.serve.epidoc import EPIDOC_NOT_SERVED, EpidocBody
from infill.serve.readings import READINGS_NOT_SERVED, ReadingsBody
from infill.serve.schema import NOT_SERVED, FillBody, decode_config, fill_request, parse_request


@pytest.mark.parametrize("model, skipped, own", [
    (FillBody, NOT_SERVED, {"text", "model", "id", "record"}),
    (EpidocBody, EPIDOC_NOT_SERVED, {"xml", "model", "hide_supplied"}),
    (ReadingsBody, READINGS_NOT_SERVED, {"text", "readings", "model", "id"}),
])
def test_every_option_is_a_field_or_listed(model, skipped, own):
    options = {**dict(described(FillRequest)), **dict(described(DecodeConfig))}
    assert set(skipped) <= set(options) and all(skipped.values())
    served = {n for n in options if n not in skipped}        # JSON names are the API's
    assert set(model.model_fields) == own | served
    assert {"length_score", "length_beam", "rerank", "window"} <= served
    defaults = {**FillRequest.fields(), **DecodeConfig.fields()}
    for name in served:
        field = model.model_fields[name]
        assert field.description == options[name].help
        assert field.default == defaults[name].default


def test_the_body_becomes_the_librarys_request_whole():
    req = parse_request(b'{"text": "a ___", "length_score": "pll-gap", "length_beam": "shared",'
                        b' "gap": "1-2", "window": false, "top_k": 3, "scorer": "standard"}')
    assert fill_request(req) == FillRequest(
        config=DecodeConfig(scorer="standard"), gap="1-2", top_k=3, length_score="pll-gap",
        length_beam="shared", window=False)


def test_the_body_becomes_the_librarys_config():
    req = parse_request(b'{"text": "a ___", "beam_size": 7, "pivot": ["x", "y"], "seed": 3}')
    assert decode_config(req) == DecodeConfig(beam_size=7, pivot=("x", "y"), seed=3)
    old = parse_request(b'{"text": "a ___", "beam": 4}')     # the deprecated spelling: a note
    assert old.beam_size == 4 and old._notes == [
        "'beam' is deprecated: send 'beam_size' (the old spelling is read until 0.3.0)"]
    assert parse_request(b'{"text": "a ___", "beam_size": 4}')._notes == []
    with pytest.raises(InputError, match="^beam_size: Input should be a valid integer"):
        parse_request(b'{"text": "a ___", "beam_size": "4"}')
