"""``POST /api/readings``: the workbench's candidate readings, through the library's readings job
(the same answer as ``infill run --readings --json``); bad input is a 400 with one line."""
from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

TEXT = "ἔδοξε τῆι βουλῆι καὶ τῶι [....]ι"


def test_readings_answer_is_the_librarys(client, catalog):
    import infill

    r = client.post("/api/readings", json={"text": TEXT, "readings": ["δήμω|δάμω|δήμο"],
                                           "model": "builtin:greek", "id": "x"})
    assert r.status_code == 200, r.text
    out = r.json()
    want = infill.readings(catalog.get("builtin:greek"), TEXT, ["δήμω|δάμω|δήμο"]).to_json()
    assert out["id"] == "x" and out["model"] == "builtin:greek"
    assert [c["readings"] for c in out["combinations"]] == \
        [c["readings"] for c in want["combinations"]]
    for a, b in zip(out["combinations"], want["combinations"]):
        assert a["score"] == pytest.approx(b["score"], abs=1e-5)
        assert a["beam_rank"] == b["beam_rank"]
    # builtin:greek's calibration keeps a share for readings nobody proposed (METHODS §1.10)
    got = [x["prob"] for x in out["lacunae"][0]["readings"]]
    assert got == pytest.approx([x["prob"] for x in want["lacunae"][0]["readings"]], abs=1e-6)
    assert 0.9 < sum(got) < 1


@pytest.mark.parametrize("body, message", [
    ({"text": TEXT, "readings": ["δήμοι"]}, "the lacuna holds 4"),
    ({"text": TEXT, "readings": ["δήμω", "δήμο"]}, "readings for lacuna 2"),
    ({"text": TEXT, "readings": []}, "give a list"),
    ({"text": TEXT, "readings": ["dēmō"]}, "outside the Greek alphabet"),
    ({"text": TEXT, "readings": ["δήμω"], "scorer": "swap"}, "standard or hcb"),
    ({"text": TEXT}, "readings"),
])
def test_bad_readings_are_400_one_line(client, body, message):
    r = client.post("/api/readings", json={"model": "builtin:greek", **body})
    assert r.status_code == 400, r.text
    assert message in r.json()["error"] and "\n" not in r.json()["error"]
