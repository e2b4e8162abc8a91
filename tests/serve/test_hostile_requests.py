"""Hostile cases of the newest features over HTTP (issue 46): each a 4xx with one line of JSON,
as the CLI's one ``Error:`` line, or the same answer as the CLI."""
from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

GREEK = "ἔδοξε τῆι βουλῆι καὶ τῶι [....]ι"


def one_line(r, status: int, *fragments: str) -> str:
    assert r.status_code == status, r.text
    assert list(r.json()) == ["error"], r.text
    err = r.json()["error"]
    assert "\n" not in err and "Traceback" not in err
    for f in fragments:
        assert f in err, (f, err)
    return err


@pytest.mark.parametrize("method", ["DELETE", "PUT", "PATCH"])
@pytest.mark.parametrize("headers", [{}, {"Content-Type": "application/json"},
                                     {"Content-Type": "text/plain"}])
def test_a_method_no_route_serves_is_405(client, method, headers):
    r = client.request(method, "/api/fill", content=b'{"text": "a ___"}', headers=headers)
    one_line(r, 405, "Method Not Allowed")


@pytest.mark.parametrize("readings, shown", [("δήμω\\|δάμω", "'\\\\' (U+005C)"),
                                             ("δήμω|\u202eωμαδ", "'\\u202e' (U+202E)")])
def test_readings_a_model_would_drop_are_refused(client, readings, shown):
    r = client.post("/api/readings", json={"text": GREEK, "readings": [readings],
                                           "model": "builtin:greek"})
    err = one_line(r, 400, shown, "which builtin:greek does not read")
    assert "data/models" not in err


def test_check_leaves_a_letter_set_unchecked(client):
    r = client.post("/api/check", json={"text": "καὶ τῶι #[ηι]μωι", "model": "builtin:greek"})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["shown"] == "και τωι ?μωι" and len(out["gaps"]) == 1


@pytest.mark.parametrize("siglum", ["[c.2.5]", "[c.]"])
def test_an_approximate_lacuna_without_a_whole_count_is_400(client, siglum):
    r = client.post("/api/fill", json={"text": f"καὶ {siglum} τῶι", "model": "builtin:greek"})
    one_line(r, 400, "malformed Leiden sigla")


def test_an_extra_character_model_reads_leiden_from_the_first_request(greek_char_dir):
    """An extra model given to the app (not loaded by ``infill serve``'s start-up) is loaded by
    create_app: its first fill reads the Leiden siglum ``[..]`` as ``infill run`` does, not as
    text with a marker missing."""
    from click.testing import CliRunner
    from fastapi.testclient import TestClient

    from infill.serve.app import create_app
    from infill.serve.catalog import ModelCatalog
    from infill_cli.main import main

    catalog = ModelCatalog(extra=(greek_char_dir,), device="cpu")
    app = create_app(catalog, default_model=greek_char_dir)
    assert greek_char_dir in catalog.loaded
    with TestClient(app, base_url="http://127.0.0.1:8000") as c:
        r = c.post("/api/fill", json={"text": "ὁ δῆμος ἐτίμησεν [..]ον", "top_k": 3})
    assert r.status_code == 200, r.text
    cli = CliRunner().invoke(main, ["run", "-m", greek_char_dir, "--json", "-k", "3",
                                    "ὁ δῆμος ἐτίμησεν [..]ον"])
    import json
    want = json.loads(cli.stdout)
    assert [c["fills"] for c in r.json()["completions"]] == \
        [c["fills"] for c in want["completions"]] and len(want["completions"]) == 3


def test_a_text_in_the_other_script_is_the_same_one_line_everywhere(client, catalog):
    """The issue's Latin epitaph given to builtin:greek: CLI exit 2, the API's InputError and a
    400 over HTTP, one message naming both scripts (it once restored Greek words in it)."""
    from click.testing import CliRunner

    import infill
    from infill_cli.main import main

    text = "d m ????? felici vixit annis xxv"
    want = "the text is in Latin script; builtin:greek restores Greek (a Latin model: " \
           "builtin:latin)"
    cli = CliRunner().invoke(main, ["run", "-m", "builtin:greek", text])
    assert cli.exit_code == 2 and want in cli.output and "Traceback" not in cli.output
    api = infill.fill_each(catalog.get("builtin:greek"), [text])[0]
    assert api.error == want and api.completions == []
    assert want in one_line(client.post("/api/fill", json={"text": text,
                                                           "model": "builtin:greek"}), 400)
