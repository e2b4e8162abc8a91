"""The JSON API through an in-process client: answers equal direct ``fill_each`` calls (and
``infill run --json``), bad requests get a one-line 4xx error and leave the server healthy."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import infill

pytest.importorskip("fastapi", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")

ENGLISH = "To be, or not to ___, that is the question."
ILIAD = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ?ος"


def test_defaults_are_infill_runs(client, catalog):
    """A body with only text: the same object as one line of ``infill run --json``."""
    from click.testing import CliRunner
    from infill_cli.main import main
    got = client.post("/api/fill", json={"text": ILIAD, "model": "builtin:greek", "id": "1"})
    assert got.status_code == 200
    out = CliRunner().invoke(main, ["run", "--model", "builtin:greek", "--device", "cpu", "--json",
                                    ILIAD])
    assert out.exit_code == 0, out.output
    assert got.json() == json.loads(out.output.splitlines()[0])


def test_options_reach_the_decoder(client, catalog, expected_fn):
    body = {"text": "All the world's a ___, and all the men merely players.", "gap": 2,
            "scorer": "standard", "order": "best-to-worst", "beam_size": 6, "top_k": 3, "seed": 7}
    got = client.post("/api/fill", json={**body, "model": "builtin:english"})
    assert got.status_code == 200
    assert got.json() == expected_fn(catalog, "builtin:english", body["text"], gap=2, top_k=3,
                                     scorer="standard", order="best-to-worst", beam_size=6,
                                     seed=7)
    assert len(got.json()["completions"]) == 3


def test_default_model_and_top_k_above_beam(client, catalog, expected_fn):
    got = client.post("/api/fill", json={"text": ENGLISH, "top_k": 7, "beam_size": 2}).json()
    assert got["model"] == "builtin:english" and got["config"]["beam_size"] == 7
    assert got == expected_fn(catalog, "builtin:english", ENGLISH, top_k=7, beam_size=2)


@pytest.mark.parametrize("gap", [None, "word", "1-2", 1])
def test_gap_lengths_as_infill_run_reads_them(client, catalog, expected_fn, gap):
    """No gap: the model's recommended one (builtin:english: a whole word), said in the answer."""
    body = {"text": ENGLISH} if gap is None else {"text": ENGLISH, "gap": gap}
    got = client.post("/api/fill", json=body)
    assert got.status_code == 200, got.text[:300]
    assert got.json() == expected_fn(catalog, "builtin:english", ENGLISH, gap=gap)
    assert got.json()["gap"] == ("word" if gap is None else gap)
    assert ("gap" in got.json()["config"]["defaults"]["options"]) == (gap is None)


def test_pivot_and_marker(client, catalog, expected_fn):
    text = "To be, or not to <gap>, that is the <gap>."
    got = client.post("/api/fill", json={"text": text, "marker": "<gap>", "pivot": ["the", "a"],
                                         "gap": 1})
    assert got.status_code == 200, got.text[:300]
    assert got.json() == expected_fn(catalog, "builtin:english", text, gap=1, marker="<gap>",
                                     pivot=("the", "a"))


def test_greek_leiden_is_converted(client, catalog, expected_fn):
    got = client.post("/api/fill", json={"text": "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ[c.1]ος (?)",
                                         "model": "builtin:greek", "top_k": 3})
    assert got.status_code == 200, got.text[:300]
    # [c.1]: every length from 1 to 2, ranked together (as infill run and infill.fill)
    want = expected_fn(catalog, "builtin:greek", "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ___ος ",
                       gap=[(1, 2)], top_k=3)
    assert got.json()["input"] == "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ___ος "
    assert got.json()["gap"] == [[1, 2]] and got.json()["config"]["length_score"] == "per-char-0.7"
    assert got.json()["config"]["length_beam"] == "shared"         # builtin:greek's defaults
    assert got.json()["config"]["defaults"]["options"] == ["scorer", "order", "length_score",
                                                           "length_beam", "lacuna_edges"]
    assert all("rank_score" in c for c in got.json()["completions"])
    assert got.json()["notes"][:2] == ["the editor's doubt marks '(?)' were dropped",
                                       "approximate lacuna 'c.1' decoded at every length from 1 "
                                       "to 2, all completions ranked together"]
    assert {**got.json(), "notes": []} == {**want, "notes": []}


def test_leiden_is_greek_only(client, catalog, expected_fn):
    """English text keeps its brackets (they are text there)."""
    text = "To be [or not] to ___."
    got = client.post("/api/fill", json={"text": text})
    assert got.json() == expected_fn(catalog, "builtin:english", text)


BAD = [
    (b"{", 400, "malformed JSON"),
    (b"[1, 2]", 400, "request body: Input should be an object"),
    (b"", 400, "malformed JSON"),
    (b'{"text": 3}', 400, "text: Input should be a valid string"),
    (b'{"model": "builtin:english"}', 400, "text: Field required"),
    (b'{"text": "no gap here"}', 400, "no gap marker"),
    (b'{"text": "   "}', 400, "empty text"),
    (b'{"text": "a ___", "model": "nope"}', 400, "unknown model 'nope'; this server has: "),
    (b'{"text": "a ___", "model": "/etc"}', 400, "unknown model '/etc'"),
    (b'{"text": "a ___", "beam_size": 51}', 400,
     "beam_size must be between 1 and 50 on this server"),
    (b'{"text": "a ___", "beam_size": 0}', 400, "beam_size must be between 1 and 50"),
    (b'{"text": "a ___", "beam_size": "5"}', 400, "beam_size: Input should be a valid integer"),
    (b'{"text": "a ___", "beam_size": 5.5}', 400, "beam_size: Input should be a valid integer"),
    (b'{"text": "a ___", "beam": 51}', 400, "beam_size must be between 1 and 50"),   # old name
    (b'{"text": "a ___", "beam": 4, "beam_size": 4}', 400, "give 'beam_size' only"),
    (b'{"text": "a ___", "top_k": 21}', 400, "top_k must be between 1 and 20"),
    (b'{"text": "a ___", "gap": 33}', 400, "gap must be between 1 and 32"),
    (b'{"text": "a ___", "gap": "30-40"}', 400, "gap must be between 1 and 32"),
    (b'{"text": "a ___", "gap": "2-40"}', 400, "a gap range may span at most 16 lengths"),
    (b'{"text": "a ___", "gap": "zz"}', 400, "a gap length is a number, a range lo-hi"),
    (b'{"text": "a ___", "gap": 2.5}', 400, "gap"),
    (b'{"text": "a ___", "pivot": "qqqzzzxx"}', 400,
     "token 'qqqzzzxx' is not in the vocabulary of builtin:english"),   # no server path
    (b'{"text": "a ___", "scorer": "best"}', 400, "unknown scorer 'best'"),
    (b'{"text": "a ___", "order": "random"}', 400, "unknown order 'random'"),
    (b'{"text": "a ___", "seed": -1}', 400, "seed must be an integer"),
    (b'{"text": "a ___", "colour": "red"}', 400, "colour: Extra inputs are not permitted"),
    (b'{"text": "a ___", "pivot": 3}', 400, "pivot"),
    (b'{"text": "a ___", "marker": ""}', 400, "gap marker must have 1 to 32"),
    (b'{"text": "a ___", "scorer": "standard", "pivot": "the"}', 400, "a pivot only applies"),
    ('{"text": "ἄνδρα [.3"}'.encode(), 400, "no gap marker"),   # English: no Leiden
    ('{"text": "ἄνδρα [.3", "model": "builtin:greek"}'.encode(), 400,
     "malformed Leiden sigla at column 7: '[' (lacuna) is never closed"),
    ('{"text": "α[.65]", "model": "builtin:greek"}'.encode(), 413,
     "too many positions to fill: 65 (limit 64)"),
    (json.dumps({"text": "a ___ " + "b" * 2000}).encode(), 413, "text too long: 2006 characters"),
    (json.dumps({"text": "a ___", "pad": "x" * 40_000}).encode(), 413, "request body too large"),
]


@pytest.mark.parametrize("body, status, message", BAD, ids=range(len(BAD)))
def test_bad_requests_get_one_line_errors(client, body, status, message):
    got = client.post("/api/fill", content=body, headers={"content-type": "application/json"})
    assert got.status_code == status, got.text[:300]
    assert list(got.json()) == ["error"]
    error = got.json()["error"]
    assert message in error and "\n" not in error and "Traceback" not in error


def test_server_stays_healthy_after_bad_requests(client, catalog, expected_fn):
    for body, _, _ in BAD:
        client.post("/api/fill", content=body, headers={"content-type": "application/json"})
    health = client.get("/api/health")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert health.json()["pending"] == 0
    assert client.post("/api/fill", json={"text": ENGLISH}).json() == \
        expected_fn(catalog, "builtin:english", ENGLISH)


def test_other_routes_answer_json_errors(client):
    assert client.get("/nowhere").status_code == 404
    assert client.get("/nowhere").json() == {"error": "Not Found"}
    assert client.get("/api/fill").status_code == 405
    assert list(client.get("/api/fill").json()) == ["error"]
    assert client.get("/docs").status_code == 404        # FastAPI's docs page needs a CDN: off


def test_models_lists_the_picker(client, catalog):
    rows = client.get("/api/models").json()
    names = [r["name"] for r in rows]
    assert names[:4] == ["builtin:english", "builtin:greek", "builtin:latin", "builtin:protein"]
    assert all({"name", "family", "status", "description"} <= set(r) for r in rows)
    by_name = {r["name"]: r for r in rows}
    assert by_name["builtin:english"]["status"] == "loaded"
    assert by_name["builtin:greek"]["family"] == "greek"
    assert names == catalog.names()


def test_options_and_health(client):
    from infill.config import ORDERS, SCORERS
    opts = client.get("/api/options").json()
    assert opts["scorers"] == list(SCORERS) and opts["orders"] == list(ORDERS)
    assert opts["defaults"] == {"model": "builtin:english", "gap": None, "marker": "___",
                                "scorer": None, "order": None, "beam_size": 5, "top_k": 5,
                                "pivot": None, "seed": 0, "region": None, "record": 1,
                                "letters": None, "unclear": "keep", "lacuna_edges": None,
                                "rerank": None, "length_score": None, "length_beam": None, "window": True,
                                "unknown_max_length": 20, "length_penalty": 1.0,
                                "unknown_lengths": None}
    assert opts["reranks"] == ["off", "pll", "pll-gap", "pll-word"]
    assert opts["lacuna_edges"] == ["any", "letters"]
    assert opts["regions"] == ["fr1", "cdr1", "fr2", "cdr2", "fr3", "cdr3", "fr4"]
    assert opts["limits"]["max_beam"] == 50
    health = client.get("/api/health").json()
    assert health["status"] == "ok" and set(health["models_loaded"]) >= {"builtin:english"}


def test_page_and_assets_are_local(client):
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert 'id="fill-form"' in page.text
    from infill.serve.app import STATIC
    for name in ("index.html", "app.js", "style.css"):
        got = client.get(f"/static/{name}")
        assert got.status_code == 200
        assert got.text == (STATIC / name).read_text(encoding="utf-8")
        # nothing is fetched from elsewhere: no absolute URLs, no protocol-relative ones
        assert "http://" not in got.text and "https://" not in got.text and 'src="//' not in got.text


def test_extra_model_directory(bert_dir, expected_fn, local_url):
    """A model directory given to ``--model`` is in the picker and can be used."""
    from fastapi.testclient import TestClient

    from infill.serve.app import create_app
    from infill.serve.catalog import ModelCatalog
    cat = ModelCatalog(extra=[bert_dir], device="cpu")
    cat.preload([bert_dir])
    with TestClient(create_app(cat, default_model=bert_dir), base_url=local_url) as c:
        row = next(r for r in c.get("/api/models").json() if r["name"] == bert_dir)
        assert row["family"] == "text" and row["status"] == "loaded"
        assert row["bytes"] == sum(p.stat().st_size for p in Path(bert_dir).rglob("*")
                                   if p.is_file())
        got = c.post("/api/fill", json={"text": "the cat sat on the ___", "top_k": 2})
        assert got.status_code == 200, got.text[:300]
        assert got.json() == expected_fn(cat, bert_dir, "the cat sat on the ___", top_k=2)
        assert c.get("/api/options").json()["default_model"] == bert_dir


def test_non_finite_floats_become_null():
    """JSON has no -Infinity (a log-probability of an impossible token): null instead."""
    from infill.serve.app import json_response
    body = json_response({"logq": float("-inf"), "ok": [1.5, float("nan")]}).body
    assert json.loads(body) == {"logq": None, "ok": [1.5, None]}


def test_errors_do_not_reveal_server_paths(client, catalog):
    from infill.data.builtins import models_dir
    got = client.post("/api/fill", json={"text": "a ___", "pivot": "qqqzzzxx"})
    assert got.status_code == 400 and str(models_dir()) not in got.text


def test_long_input_is_windowed_with_a_note(client, catalog, expected_fn):
    text = "the cat sat on the mat and " * 12 + "the ___ sat"      # > 64 WordPieces
    got = client.post("/api/fill", json={"text": text}).json()
    want = expected_fn(catalog, "builtin:english", text)
    assert got["completions"] == want["completions"] and got["windows"] == want["windows"]
    limit = infill.load_model("builtin:english").max_length
    assert got["windows"] and any(f"maximum length ({limit} tokens)" in n for n in got["notes"])


def test_the_docs_endpoint_table_lists_every_route(client):
    """docs/WORKBENCH.md's table of the HTTP API names each route the app serves, and no other."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "WORKBENCH.md").read_text("utf-8")
    table = doc.split("## HTTP API", 1)[1].split("\n\n", 2)[1]
    listed = set(re.findall(r"^\| `(GET|POST) (/[^`]*)`", table, re.M))
    served = {(m, r.path) for r in client.app.routes for m in getattr(r, "methods", ()) or ()
              if m in ("GET", "POST") and (r.path == "/" or r.path.startswith("/api/"))}
    assert listed == served


@pytest.mark.parametrize("path, body, status, says", [
    # readings had no gap or position limit: 200 after a minute of work, the thread held
    ("/api/readings", {"text": "ἔδοξε τῆι ___ καὶ", "readings": ["α" * 200 + "|" + "β" * 200],
                       "model": "builtin:greek"}, 400, "readings are at most 32"),
    ("/api/readings", {"text": "ἔδοξε τῆι ___ καὶ", "readings": ["αβ|γδ"], "gap": 33,
                       "model": "builtin:greek"}, 400, "gap must be between 1 and 32"),
    # an empty model name took the server's default
    ("/api/readings", {"text": "ἔδοξε τῆι ___ καὶ", "readings": ["αβ|γδ"], "model": ""}, 400,
     "unknown model ''"),
    ("/api/check", {"text": "To be, or not to be, that is the questoin.", "model": ""}, 400,
     "unknown model ''"),
    # a record of text that is not FASTA was ignored
    ("/api/fill", {"text": "To be or ___ to be", "record": 2}, 400, "the text is not FASTA"),
])
def test_a_body_the_server_would_have_misread_is_a_4xx(client, path, body, status, says):
    r = client.post(path, json=body)
    assert r.status_code == status and says in r.json()["error"], r.text
    assert "\n" not in r.json()["error"]
