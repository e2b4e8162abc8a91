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


def test_the_unlisted_mass_may_depend_on_how_many_are_listed(tmp_path):
    """A list u_k: the k-th for k alternatives listed, its last for more."""
    us = (-1.0, -2.0, -3.0)
    for values in ([-0.5], [-0.5, -2.0], [-0.5, -2.0, -7.25], [-0.5, -2.0, -7.25, -9.0]):
        z = sum(math.exp(v / 0.8) for v in values) + math.exp(us[min(len(values), 3) - 1])
        assert calibrated(values, 0.8, us) == pytest.approx(
            [math.exp(v / 0.8) / z for v in values], rel=1e-12)
    (tmp_path / "defaults.json").write_text(json.dumps({**REC, "unlisted": [-2.1, -3, -3.5]}))
    assert recommendation(str(tmp_path)).unlisted == (-2.1, -3.0, -3.5)


def test_builtin_greek_states_less_the_fewer_restorations_it_lists():
    """Its u_k rise as k falls: one restoration listed alone claims less than among ten."""
    us = recommendation("builtin:greek").unlisted
    assert len(us) == 10 and list(us) == sorted(us, reverse=True)
    alone, among = calibrated([-1.0], 0.8, us)[0], calibrated([-1.0] + [-30.0] * 9, 0.8, us)[0]
    assert alone < among


@pytest.mark.parametrize("bad", [float("nan"), 1e9, "-4", True, [], [-2.0, float("nan")],
                                 [-2.0, 1e9], [True], [-1.0] * 101, {"1": -2.0}])
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


def test_readings_of_several_lacunae_are_each_calibrated_on_their_own(greek_char_dir, tmp_path):
    """With an unlisted mass, a lacuna's readings no longer share the other lacunae's doubt:
    left to right, a later lacuna's readings get what they get with the earlier one's reading
    written in, and an earlier lacuna's probability is the same whatever is proposed for a later
    one (as marginals of the joint beside one unlisted mass, both moved with the other lacuna)."""
    d = tmp_path / "u"
    shutil.copytree(greek_char_dir, d)
    (d / "defaults.json").write_text(json.dumps({**REC, "temperature": 0.8,
                                                 "unlisted": [-2.1, -2.6, -2.9]}))
    model = infill.load_model(str(d), device="cpu")
    kw = {"scorer": "standard", "order": "left-to-right"}
    both = infill.readings(model, "και ___ δημοσ ___ και", ["τον", "και|τον|τησ"], **kw)
    alone = infill.readings(model, "και τον δημοσ ___ και", ["και|τον|τησ"], **kw)
    assert [x.prob for x in both.lacunae[1]] == pytest.approx(
        [x.prob for x in alone.lacunae[0]], rel=1e-6)
    other = infill.readings(model, "και ___ δημοσ ___ και", ["τον", "σον"], **kw)
    assert both.lacunae[0][0].prob == pytest.approx(other.lacunae[0][0].prob, rel=1e-6)
    first = [c for c in both.combinations if c.readings[1] == "και"][0].completion
    own = sum(p.logq for p in first.positions if p.gap_index == 0)
    assert both.lacunae[0][0].prob == pytest.approx(calibrated([own], 0.8, [-2.1])[0], rel=1e-9)
    # a lacuna whose readings have two lengths keeps its marginal over the combinations
    mixed = infill.readings(model, "και ___ δημοσ ___ και", ["τον|τα", "και|τον"], **kw)
    for x in mixed.lacunae[0]:
        assert x.prob == pytest.approx(sum(c.prob for c in mixed.combinations
                                           if c.readings[0] == x.text), rel=1e-9)


EDITION = """<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title>t</title>
</titleStmt></fileDesc></teiHeader><text><body><div type="edition" xml:lang="grc"><ab>
<lb n="1"/>ὁ δῆ<supplied reason="lost">μο</supplied>ς ἐτί<supplied reason="lost">μη</supplied>σεν
<lb n="2"/>Ἀπο<supplied reason="lost">λλ</supplied>ώνιον <supplied reason="lost">Ἀρ</supplied>τέμωνος
<lb n="3"/>τὸν <supplied reason="lost">ἱε</supplied>ρέα καὶ <supplied reason="lost">εὐ</supplied>εργέτην
</ab></div></body></text></TEI>
"""


def test_an_editions_lacunae_are_each_calibrated_on_their_own(greek_char_dir, tmp_path):
    """Six lacunae decoded together: each lacuna's readings get the calibrated probability of
    their own letters' log-scores (the unlisted mass is one lacuna's), not of the joint score
    of all six, which left every reading of an edition a probability of about 0."""
    from infill.epigraphy import restore_files
    from infill.filling.calibration import calibrated as cal

    d = tmp_path / "u"
    shutil.copytree(greek_char_dir, d)
    (d / "defaults.json").write_text(json.dumps({**REC, "temperature": 0.8, "unlisted": -4.2}))
    path = tmp_path / "e.xml"
    path.write_text(EDITION, encoding="utf-8")
    [r] = restore_files(infill.load_model(str(d), device="cpu"), [str(path)],
                        hide_supplied=True, top_k=5)
    assert r.error is None and len(r.readings) == 6 and len(r.completions[0].spans) == 6
    for g in range(6):
        first = {}
        for c in r.completions:
            first.setdefault(c.text[slice(*c.spans[g])], c)
        own = [sum(p.logq for p in c.positions if p.gap_index == g) for c in first.values()]
        want = sorted(cal(own, 0.8, -4.2), reverse=True)
        assert [x.prob for x in r.readings[g]] == pytest.approx(want, rel=1e-9)
    joint = cal([c.score for c in r.completions], 0.8, -4.2)
    assert sum(joint) < 1e-6 < min(x.prob for rs in r.readings.values() for x in rs)


def test_an_editions_lacuna_of_uncertain_length_keeps_the_shares_of_the_rank_scores(
        greek_char_dir, tmp_path):
    """Beside a lacuna of 2-3 letters the completions are ranked by rank scores, the only values
    that compare lengths: that lacuna's readings keep their shares (softmax at T, no unlisted
    mass), and each lacuna of one length is still calibrated on its own letters."""
    from infill.epigraphy import restore_files
    from infill.filling.calibration import calibrated as cal

    d = tmp_path / "u"
    shutil.copytree(greek_char_dir, d)
    (d / "defaults.json").write_text(json.dumps({**REC, "temperature": 0.8, "unlisted": -4.2}))
    path = tmp_path / "e.xml"
    path.write_text(EDITION.replace('<lb n="3"/>τὸν', '<lb n="3"/><gap reason="lost" '
                                    'atLeast="2" atMost="3" unit="character"/> τὸν'),
                    encoding="utf-8")
    [r] = restore_files(infill.load_model(str(d), device="cpu"), [str(path)],
                        hide_supplied=True, top_k=5)
    [(ranged, _)] = r.rendered.ranges
    assert r.error is None and all(c.rank_score is not None for c in r.completions)
    shares = cal([c.rank_score for c in r.completions], 0.8)
    for g, (index, _, _) in enumerate(r.rendered.restore):
        by_fill, first = {}, {}
        for c, w in zip(r.completions, shares):
            fill = c.text[slice(*c.spans[g])]
            by_fill[fill] = by_fill.get(fill, 0.0) + w
            first.setdefault(fill, c)
        if index == ranged:
            want = sorted(by_fill.values(), reverse=True)
        else:
            own = [sum(p.logq for p in c.positions if p.gap_index == g) for c in first.values()]
            want = sorted(cal(own, 0.8, -4.2), reverse=True)
        assert [x.prob for x in r.readings[index]] == pytest.approx(want, rel=1e-9), index
