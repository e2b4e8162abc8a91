"""Uploads never stop ``infill serve``: an EpiDoc upload is read off the event loop (so that
``/api/health`` answers meanwhile) and bounded before it is written out as text; an absurd extent
(``<gap quantity="1000000000"/>``) or an unreadable number (``²``) is one 4xx JSON line, on a
live uvicorn server (:func:`live_server`) and through the in-process client."""
from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest

pytest.importorskip("uvicorn", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")

HEALTH_S = 2.0
"""The longest ``/api/health`` may take while an upload is read."""
EDITION = ('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" '
           'xml:lang="grc"><ab>καὶ ἐποίησεν{}τὸν ναόν</ab></div></body></text></TEI>')


def gap(quantity: str, unit: str = "character") -> str:
    return f'<gap reason="lost" quantity="{quantity}" unit="{unit}"/>'


def upload(gaps: str) -> dict:
    return {"xml": EDITION.format(gaps), "model": "builtin:greek"}


def health_s(base: str) -> float:
    """Seconds ``GET /api/health`` took (it must answer ok)."""
    t0 = time.monotonic()
    with urllib.request.urlopen(base + "/api/health", timeout=30) as r:
        assert json.loads(r.read())["status"] == "ok"
    return time.monotonic() - t0


def while_posting(base: str, post_fn, body: dict) -> tuple[tuple[int, dict], list[float]]:
    """(the upload's answer, the times of health checks made while it was read and after)."""
    answer = []
    t = threading.Thread(target=lambda: answer.append(post_fn(base, "/api/epidoc", body, 120)),
                         daemon=True)
    t.start()
    times = []
    while t.is_alive() and len(times) < 200:
        times.append(health_s(base))
        time.sleep(0.05)
    t.join(120)
    times.append(health_s(base))
    return answer[0], times


def one_line_4xx(status: int, body: dict, *words: str) -> None:
    assert 400 <= status < 500, (status, body)
    assert list(body) == ["error"] and "\n" not in body["error"], body
    assert all(w in body["error"] for w in words), body


@pytest.mark.parametrize("gaps", [gap("1000000000"), gap("1000000000", "line"),
                                  gap("²"), gap("9" * 5000), gap("2000") * 5])
def test_an_absurd_upload_is_4xx_and_the_server_answers_meanwhile(live_server, post_fn, gaps):
    base, _ = live_server
    (status, body), times = while_posting(base, post_fn, upload(gaps))
    one_line_4xx(status, body)
    assert max(times) < HEALTH_S, times
    status, body = post_fn(base, "/api/epidoc", upload(gap("3")))      # and it goes on
    assert status == 200 and body["lacunae"], body


def test_a_slow_upload_never_blocks_the_event_loop(live_server, post_fn, monkeypatch):
    """Whatever an upload costs to read, it costs it in the uploads' thread."""
    from infill.serve import epidoc
    base, _ = live_server
    real = epidoc.epidoc_job

    def slow(*args):
        time.sleep(3)
        return real(*args)

    monkeypatch.setattr(epidoc, "epidoc_job", slow)
    (status, body), times = while_posting(base, post_fn, upload(gap("3")))
    assert status == 200 and body["lacunae"], body
    assert len(times) > 5 and max(times) < HEALTH_S, times


def test_lacunae_are_counted_before_the_edition_is_written_out(catalog, post_fn, local_url):
    """With a larger ``max_text``, many lacunae of the largest extent are refused from their
    extents (413), not after writing out millions of characters."""
    from fastapi.testclient import TestClient

    from infill.serve.app import create_app
    from infill.serve.limits import Limits
    limits = Limits(max_text=20_000)
    many = upload(gap("2000") * 2000)
    with TestClient(create_app(catalog, limits), raise_server_exceptions=False,
                    base_url=local_url) as c:
        t0 = time.monotonic()
        r = c.post("/api/epidoc", json=many)
        one_line_4xx(r.status_code, r.json(), "edition too long", "20000")
        assert r.status_code == 413 and time.monotonic() - t0 < 10


@pytest.mark.parametrize("value", ["²", "٣", "9" * 5000, "1-" + "9" * 5000, "²-3"])
def test_unreadable_gap_numbers_of_a_fill_are_400(client, value):
    r = client.post("/api/fill", json={"text": "the ___ sat", "gap": value})
    one_line_4xx(r.status_code, r.json(), "gap")
    assert r.status_code == 400


def test_a_reader_failure_of_an_upload_is_400(client, monkeypatch):
    """A value the EpiDoc reader cannot read that it does not word itself (a bare ValueError)
    is still the client's 400, not a server error."""
    from infill.serve import epidoc

    def fails(*_args):
        raise ValueError("invalid literal for int() with base 10: '²'")

    monkeypatch.setattr(epidoc, "epidoc_job", fails)
    r = client.post("/api/epidoc", json=upload(gap("3")))
    one_line_4xx(r.status_code, r.json(), "unreadable upload")
    assert r.status_code == 400
