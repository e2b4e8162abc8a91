"""The workbench's request bodies are made from DecodeConfig's fields: every decoding option the
server takes has the library's name (or its JSON name), default and help; the rest are listed
with a reason."""
from __future__ import annotations

import pytest

from infill.config import DecodeConfig
from infill.errors import InputError
from infill.fields import described
from infill.serve.epidoc import EPIDOC_NOT_SERVED, EpidocRequest
from infill.serve.schema import NOT_SERVED, FillRequest, decode_config, parse_request


@pytest.mark.parametrize("model, skipped, own", [
    (FillRequest, NOT_SERVED, {"text", "model", "gap", "marker", "top_k", "id", "region", "record",
                               "letters", "unclear", "rerank"}),
    (EpidocRequest, EPIDOC_NOT_SERVED, {"xml", "model", "hide_supplied", "unclear", "top_k",
                                                "rerank"}),
])
def test_every_decoding_option_is_a_field_or_listed(model, skipped, own):
    options = {name: spec for name, spec in described(DecodeConfig)}
    assert set(skipped) <= set(options) and all(skipped.values())
    served = {n: n for n in options if n not in skipped}     # JSON names are the API's
    assert set(model.model_fields) == own | set(served)
    defaults = DecodeConfig()
    for json_name, name in served.items():
        field = model.model_fields[json_name]
        assert field.description == options[name].help
        assert field.default == getattr(defaults, name)


def test_the_body_becomes_the_librarys_config():
    req = parse_request(b'{"text": "a ___", "beam_size": 7, "pivot": ["x", "y"], "seed": 3}')
    assert decode_config(req) == DecodeConfig(beam_size=7, pivot=("x", "y"), seed=3)
    old = parse_request(b'{"text": "a ___", "beam": 4}')     # the deprecated spelling: a note
    assert old.beam_size == 4 and old._notes == [
        "'beam' is deprecated: send 'beam_size' (the old spelling is read until 0.3.0)"]
    assert parse_request(b'{"text": "a ___", "beam_size": 4}')._notes == []
    with pytest.raises(InputError, match="^beam_size: Input should be a valid integer"):
        parse_request(b'{"text": "a ___", "beam_size": "4"}')
