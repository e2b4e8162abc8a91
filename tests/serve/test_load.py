"""A bounded load test on loopback: 48 requests, 8 at a time, to a live uvicorn server; every
answer is checked against a direct ``fill_each`` call, and the server must have batched."""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection
from urllib.parse import urlparse

import pytest

pytest.importorskip("uvicorn", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")

REQUESTS = 48
CONCURRENCY = 8

CASES = [
    ({"text": "To be, or not to ___, that is the question."}, {}),
    ({"text": "O Romeo, Romeo! wherefore art ___ Romeo?", "top_k": 3}, {"top_k": 3}),
    ({"text": "All the world's a ___.", "gap": 2}, {"gap": 2}),
    ({"text": "Now is the winter of our ___ made glorious summer.", "order": "best-to-worst",
      "beam_size": 8}, {"order": "best-to-worst", "beam_size": 8}),
    ({"text": "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ?ος", "model": "builtin:greek"},
     {"model": "builtin:greek"}),
    ({"text": "ἄνδρα μοι ἔννεπε, μ[..]σα, πολύτροπον", "model": "builtin:greek", "top_k": 4},
     {"model": "builtin:greek", "text": "ἄνδρα μοι ἔννεπε, μ??σα, πολύτροπον", "top_k": 4}),
    ({"text": "To be, or not to ___, that is the question.", "scorer": "standard", "seed": 3},
     {"scorer": "standard", "seed": 3}),
    ({"text": "no gap at all"}, None),                     # a bad request among the good ones
]


def _want(catalog, expected_fn, body: dict, direct: dict | None):
    if direct is None:
        return None
    direct = dict(direct)
    model = direct.pop("model", "builtin:english")
    text = direct.pop("text", body["text"])
    return expected_fn(catalog, model, text, **direct)


def _post(base: str, bodies: list[dict]) -> list[tuple[int, dict]]:
    """One keep-alive connection posting ``bodies`` one after the other."""
    url = urlparse(base)
    conn = HTTPConnection(url.hostname, url.port, timeout=60)
    out = []
    try:
        for body in bodies:
            conn.request("POST", "/api/fill", json.dumps(body, ensure_ascii=False).encode(),
                         {"Content-Type": "application/json"})
            r = conn.getresponse()
            out.append((r.status, json.loads(r.read())))
    finally:
        conn.close()
    return out


@pytest.mark.slow
def test_concurrent_requests_are_answered_correctly(live_server, catalog, expected_fn,
                                                    same_answer_fn):
    base, app = live_server
    wants = [_want(catalog, expected_fn, body, direct) for body, direct in CASES]
    order = [i % len(CASES) for i in range(REQUESTS)]
    before = app.state.worker.stats()
    per_client = [order[c::CONCURRENCY] for c in range(CONCURRENCY)]
    with ThreadPoolExecutor(CONCURRENCY) as pool:
        answers = list(pool.map(lambda ids: _post(base, [CASES[i][0] for i in ids]), per_client))
    checked = 0
    for ids, got in zip(per_client, answers):
        for i, (status, obj) in zip(ids, got):
            if wants[i] is None:
                assert (status, obj) == (400, {"error": "no gap marker '___' (or [MASK]) in "
                                                        "input: 'no gap at all'"})
            else:
                assert status == 200, obj
                assert same_answer_fn(obj, wants[i]), (CASES[i][0], obj["completions"][0])
            checked += 1
    assert checked == REQUESTS
    after = app.state.worker.stats()
    served = after["served"] - before["served"]
    assert served == REQUESTS                               # bad inputs are answered too
    assert after["batches"] - before["batches"] < served   # some requests shared a decode
    assert after["pending"] == 0 and after["alive"]
