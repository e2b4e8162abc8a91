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


def test_the_unlisted_mass_is_one_more_alternative_that_is_never_shown():
    values = [-0.5, -2.0, -7.25, float("-inf")]
    for t, u in ((1.0, -3.0), (0.8, -4.3), (2.0, 1.5)):
        want = [math.exp(v / t) for v in values]
        z = sum(want) + math.exp(u)
        assert calibrated(values, t, u) == pytest.approx([w / z for w in want], rel=1e-12)
    # the listed claim less when all are improbable, and almost all when one is nearly sure
    low, high = calibrated([-9.0, -10.0], 0.8, -4.3), calibrated([-0.001, -8.0], 0.8, -4.3)
    assert sum(low) < 0.01 and sum(high) > 0.98 and low[0] > low[1]
    assert calibrated([-1e6, -2e6], 1.0, 0.0) == [0.0, 0.0]      # no overflow, no NaN


@pytest.fixture
def calibrated_dir(greek_char_dir, tmp_path):
    d = tmp_path / "m"
    shutil.copytree(greek_char_dir, d)
    (d / "defaults.json").write_text(json.dumps({**REC, "temperature": 2.5}))
    return d


def test_the_temperature_is_read_from_defaults_json(calibrated_dir, greek_char_dir):
    assert recommendation(str(calibrated_dir)).temperature == 2.5
    assert recommendation(greek_char_dir).temperature is None
    assert recommendation(greek_char_dir).unlisted is None


@pytest.mark.parametrize("bad", [float("nan"), 1e9, "-4", True])
def test_a_bad_unlisted_names_the_file(tmp_path, bad):
    (tmp_path / "defaults.json").write_text(json.dumps({**REC, "unlisted": bad}))
    with pytest.raises(ModelLoadError, match="defaults.json.*unlisted"):
        recommendation(str(tmp_path))


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


def test_readings_leave_the_unlisted_mass_out(greek_char_dir, tmp_path):
    d = tmp_path / "u"
    shutil.copytree(greek_char_dir, d)
    (d / "defaults.json").write_text(json.dumps({**REC, "temperature": 0.8, "unlisted": -4.3}))
    text = "και ___ δημοσ"
    result = infill.readings(infill.load_model(str(d), device="cpu"), text, ["τον|τησ|και"],
                             scorer="standard", order="left-to-right")
    z = sum(math.exp(c.score / 0.8) for c in result.combinations) + math.exp(-4.3)
    for c in result.combinations:
        assert c.prob == pytest.approx(math.exp(c.score / 0.8) / z, rel=1e-9)
    assert sum(c.prob for c in result.combinations) < 1
