"""``POST /api/check``: the workbench's check view answers one line of ``infill check --json``
(the same library function), and bad requests are one-line JSON errors (4xx)."""
from __future__ import annotations

import pytest

import infill

pytest.importorskip("fastapi", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")

TYPO = "To be, or not to be, that is the questoin."


def test_check_answers_the_library_check(client, catalog):
    r = client.post("/api/check", json={"text": TYPO, "model": "builtin:english", "id": "x"})
    assert r.status_code == 200, r.text
    got = r.json()
    want = infill.check(catalog.get("builtin:english"), [TYPO], name="builtin:english")[0]
    assert got == {**want.to_json(), "id": "x"}
    flagged = [p["written"] for p in got["positions"] if p["flagged"]]
    assert flagged == ["quest", "##o", "##in"] and got["flagged"] == [12, 13, 14]


def test_check_reads_greek_with_its_threshold(client, catalog):
    text = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ??ς"
    r = client.post("/api/check", json={"text": text, "model": "builtin:greek", "threshold": 1})
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["threshold"] == 1 and got["shown"] == "μηνιν αειδε θεα πηληιαδεω αχιλ??σ"
    assert len(got["gaps"]) == 2 and got["checked"] == 27
    want = infill.check(catalog.get("builtin:greek"), [text], threshold=1.0)[0].to_json()
    assert got["positions"] == want["positions"]


@pytest.mark.parametrize("body, status, message", [
    ({"text": ""}, 400, "empty input"),
    ({"text": "[MASK] [MASK]"}, 400, "nothing to check"),
    ({"text": "a b", "threshold": -1}, 400, "threshold"),
    ({"text": "a b", "threshold": 51}, 400, "threshold"),
    ({"text": "a b", "model": "nope"}, 400, "unknown model"),
    ({"text": "a b", "beam": 3}, 400, "beam"),
    ({"txt": "a b"}, 400, "text"),
    ({"text": "a" * 5000}, 413, "text too long"),
])
def test_bad_requests_are_one_json_line(client, body, status, message):
    r = client.post("/api/check", json=body)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert message in err and "\n" not in err and "Traceback" not in err


def test_the_page_offers_the_check_view(client):
    page = client.get("/").text
    assert 'id="check-button"' in page and 'id="check-result"' in page
    script = client.get("/static/app.js").text
    assert 'fetch("/api/check"' in script


def test_check_is_guarded_like_every_post(client):
    body = b'{"text": "the cat sat"}'
    r = client.post("/api/check", content=body, headers={"Content-Type": "application/json",
                                                         "Origin": "http://evil.example"})
    assert r.status_code == 403 and "cross-origin" in r.json()["error"]
    r = client.post("/api/check", content=body, headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
