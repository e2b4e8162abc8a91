"""``POST /api/epidoc`` (the workbench's EpiDoc upload) through an in-process client: the
answer equals ``infill run --json`` on the same file, both outputs read back, bad uploads 400."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")

from infill.data.epidoc import read_edition  # noqa: E402

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "epidoc"
HAND = FIX / "handmade.xml"


def test_upload_answers_as_infill_run(client):
    from click.testing import CliRunner

    from infill_cli.main import main
    real = FIX / "iospe_1.10.xml"
    got = client.post("/api/epidoc", json={"xml": real.read_text(encoding="utf-8"),
                                           "model": "builtin:greek", "top_k": 3,
                                           "hide_supplied": True})
    assert got.status_code == 200, got.text
    body = got.json()
    r = CliRunner().invoke(main, ["run", "-m", "builtin:greek", "-k", "3", "--hide-supplied",
                                  "--json", str(real)])
    cli = json.loads(r.stdout)
    assert body["input"] == cli["input"] == read_edition(real).text(hide_supplied=True)
    assert [c["text"] for c in body["completions"]] == [c["text"] for c in cli["completions"]]
    assert body["lacunae"] == cli["lacunae"]
    again = read_edition("out.xml", body["epidoc"])
    assert [lac.editor for lac in again.lacunae] == ["τεμισίωνος"]     # the editor's, kept


def test_upload_of_lacunae_of_uncertain_length(client):
    xml = HAND.read_text(encoding="utf-8")
    got = client.post("/api/epidoc", json={"xml": xml, "model": "builtin:greek", "top_k": 3})
    assert got.status_code == 200, got.text
    body = got.json()
    assert len(body["lacunae"]) == 3                  # as infill run: every length of a range
    assert sum("decoded at every length" in n for n in body["notes"]) == 2
    again = read_edition("out.xml", body["epidoc"])
    assert len(again.lacunae) == len(read_edition(HAND).lacunae)
    assert body["leiden"].splitlines()[0] == "ὁ δῆμος ἐτίμησεν"


def test_upload_with_nothing_to_restore_comes_back_unchanged(client):
    xml = (FIX / "iospe_1.10.xml").read_text(encoding="utf-8")
    got = client.post("/api/epidoc", json={"xml": xml, "model": "builtin:greek"})
    assert got.status_code == 200, got.text
    assert got.json()["epidoc"] == xml and got.json()["lacunae"] == []


@pytest.mark.parametrize("xml, message", [
    ("<TEI", "upload.xml: line 1: not well-formed XML"),
    ("<html/>", "not a TEI document"),
    ('<!DOCTYPE x [<!ENTITY a "b">]><TEI xmlns="http://www.tei-c.org/ns/1.0"/>',
     "entity declarations are refused"),
])
def test_bad_uploads_are_400_one_line(client, xml, message):
    got = client.post("/api/epidoc", json={"xml": xml, "model": "builtin:greek"})
    assert got.status_code == 400
    assert message in got.json()["error"] and "\n" not in got.json()["error"]
