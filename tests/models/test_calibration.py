"""Calibrated probabilities (infill.filling.calibration): the softmax at a model's temperature,
read from its defaults.json, in the readings' probabilities and an edition's readings."""
from __future__ import annotations

import json
import math
import shutil

import pytest

import infill
from infill.errors import ModelLoadError
from infill.filling.calibration import calibrated
from infill.filling.defaults import recommendation

REC = {"scorer": "standard", "order": "left-to-right", "why": "tests"}


def test_calibrated_is_the_softmax_at_the_temperature():
    values = [-0.5, -2.0, -7.25, float("-inf")]
    for t in (None, 1.0, 0.5, 2.5):
        want = [math.exp(v / (t or 1.0)) for v in values]
        assert calibrated(values, t) == pytest.approx([w / sum(want) for w in want], rel=1e-12)
    assert calibrated([float("-inf")] * 4, 3.0) == [0.25] * 4
    # a higher temperature claims less for the first, never reorders
    assert calibrated(values, 3.0)[0] < calibrated(values, 1.0)[0] < calibrated(values, 0.5)[0]


@pytest.fixture
def calibrated_dir(greek_char_dir, tmp_path):
    d = tmp_path / "m"
    shutil.copytree(greek_char_dir, d)
    (d / "defaults.json").write_text(json.dumps({**REC, "temperature": 2.5}))
    return d


def test_the_temperature_is_read_from_defaults_json(calibrated_dir, greek_char_dir):
    assert recommendation(str(calibrated_dir)).temperature == 2.5
    assert recommendation(greek_char_dir).temperature is None


@pytest.mark.parametrize("bad", [0, -1, "2", True, 1000, None])
def test_a_bad_temperature_names_the_file(tmp_path, bad):
    (tmp_path / "defaults.json").write_text(json.dumps({**REC, "temperature": bad}))
    if bad is None:                      # null: none recorded
        assert recommendation(str(tmp_path)).temperature is None
        return
    with pytest.raises(ModelLoadError, match="defaults.json.*temperature"):
        recommendation(str(tmp_path))


def test_readings_report_probabilities_at_the_models_temperature(calibrated_dir, greek_char_dir):
    text = "και ___ δημοσ"
    plain = infill.readings(infill.load_model(greek_char_dir, device="cpu"), text,
                            ["τον|τησ|και"], scorer="standard", order="left-to-right")
    hot = infill.readings(infill.load_model(str(calibrated_dir), device="cpu"), text,
                          ["τον|τησ|και"], scorer="standard", order="left-to-right")
    scores = {c.readings: c.score for c in plain.combinations}
    assert {c.readings: c.score for c in hot.combinations} == pytest.approx(scores, abs=1e-9)
    for result, t in ((plain, 1.0), (hot, 2.5)):
        z = sum(math.exp(s / t) for s in scores.values())
        for c in result.combinations:
            assert c.prob == pytest.approx(math.exp(c.score / t) / z, rel=1e-9)
