"""Reading partly visible letters: the letter-set syntax ``#[...]``, Leiden underdots and EpiDoc
``<unclear>`` (kept, or restored among their look-alikes), the look-alike table, and the
workbench's fill and upload through the same functions."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from infill.data.greek import LETTERS, normalize
from infill.data.letters import (PLACE, lookalike_table, lookalikes, mark_sets, place_sets,
                                 read_sets)
from infill.errors import InputError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "epidoc"
DOT = "\u0323"


def test_a_set_is_one_position_of_the_run_it_touches():
    text, letters = read_sets("μῆ#[ηιν]ιν ??#[ΗΙ]? ___ ab")
    assert text == "μῆ?ιν ???? ___ ab"
    assert letters == [["ηιν"], [None, None, "ΗΙ", None], None]
    assert read_sets("no sets ?") == ("no sets ?", None)
    assert read_sets("AC#[ILV]D?K", marker="___") == ("AC?D?K", [["ILV"], None])
    assert read_sets("A<mask>#[LV]", mask_tokens=("<mask>",)) == ("A<mask>?", [None, ["LV"]])


@pytest.mark.parametrize("text, message", [
    ("αβ#[]γ", "an empty letter set"), ("αβ#[ ]γ", "an empty letter set"),
    ("αβ#[γδ", "never closed"), ("α#[β#[γ]]", "inside a letter set"),
    (f"α{PLACE}β#[γ]", r"U\+E000"),
])
def test_malformed_sets_are_one_line(text, message):
    with pytest.raises(InputError, match=message) as e:
        read_sets(text)
    assert "\n" not in str(e.value)


def test_underdots_kept_or_restored_among_lookalikes():
    text = f"ἐ{DOT}πὶ ἄρ#[χκ]οντος ?"
    assert read_sets(text, "keep") == (f"ἐ{DOT}πὶ ἄρ?οντος ?", [["χκ"], None])
    restored, letters = read_sets(text, "restore")
    assert restored == "?πὶ ἄρ?οντος ?"
    assert letters == [[lookalikes("ε")], ["χκ"], None]          # sets in text order
    assert read_sets(f"α{DOT}β{DOT}?", "restore")[1] == [[lookalikes("α"), lookalikes("β"), None]]
    with pytest.raises(InputError, match="no look-alikes known"):
        read_sets(f"ж{DOT}?", "restore")                          # neither Greek nor Latin
    with pytest.raises(InputError, match="unknown unclear"):
        mark_sets("α", "maybe")


def test_lookalike_table_is_compiled_as_the_model_reads_letters():
    table = lookalike_table()
    assert "shapes of the Greek epigraphic capitals" in table["source"]
    groups = table["letters"]
    assert sorted(groups) == sorted(LETTERS)
    for letter, near in groups.items():
        assert letter in near and normalize(near, symbols=False) == near   # lowercase, σ
        assert len(set(near)) == len(near) and set(near) <= set(LETTERS)
        for other in near:                                     # a look-alike both ways
            assert letter in groups[other]
    assert lookalikes("Ἠ") == groups["η"] and lookalikes("ς") == groups["σ"]
    assert {"ι", "η", "ν"} <= set(lookalikes("ι"))
    assert all(set(v) <= set(LETTERS) for v in table["traces"].values())


def test_latin_lookalike_table_is_compiled_as_builtin_latin_reads_letters():
    from infill.data.latin import LATIN
    table = lookalike_table("latin")
    assert "shapes of the Latin epigraphic capitals" in table["source"]
    groups = table["letters"]
    assert sorted(groups) == sorted(LATIN.letters)
    for letter, near in groups.items():
        assert letter in near and normalize(near, symbols=False, alphabet=LATIN) == near
        assert len(set(near)) == len(near) and set(near) <= set(LATIN.letters)
        for other in near:                                     # a look-alike both ways
            assert letter in groups[other]
    assert groups["u"] == groups["v"]                          # one letter on the stone
    assert lookalikes("E") == lookalikes("e") == groups["e"] and lookalikes("J") == groups["i"]
    assert {"e", "f", "l", "i"} <= set(lookalikes("E")) and "o" not in lookalikes("E")
    assert lookalikes("ε") == lookalike_table()["letters"]["ε"]      # Greek keeps its own
    assert all(set(v) <= set(LATIN.letters) for v in table["traces"].values())


@pytest.mark.parametrize("dotted", ["FẸLIX", f"FE{DOT}LIX"])         # composed, or not
def test_a_latin_underdot_is_restored_among_its_lookalikes(dotted):
    assert read_sets(f"{dotted} ?", "restore") == ("F?LIX ?", [[lookalikes("e")], None])
    assert read_sets(f"{dotted} ?", "keep")[0] == f"{dotted} ?"


def test_sets_read_before_leiden_sigla():
    from infill.jobs.inputs import Input, read_letters
    [r] = read_letters("characters", [Input("1", "α[.2]#[βγ][δε]ζ{η}#[θ]")], "___",
                       leiden=True)
    assert r.error is None
    assert r.text == "α???δεζ?"                       # [.2] + the set: one run; {η} dropped
    assert r.letters == [[None, None, "βγ"], ["θ"]]
    [bad] = read_letters("characters", [Input("1", "α#[β")], "___", leiden=True)
    assert bad.text is None and "never closed" in bad.error
    [both] = read_letters("characters", [Input("1", "α#[β]")], "___", job_letters=[["γ"]])
    assert "not both" in both.error


# ---- EpiDoc <unclear> ------------------------------------------------------------------------
def test_epidoc_unclear_kept_by_default_and_restored_on_request():
    from infill.data.epidoc import read_edition
    from infill.epigraphy import edition_letters, read_for_restore
    real = FIX / "iospe_1.10.xml"
    kept = read_edition(real)
    assert all(lac.kind != "unclear" for lac in kept.lacunae)
    res = read_for_restore(str(real), None, None, hide_supplied=True, unclear="restore")
    unclear = [lac for lac in res.edition.lacunae if lac.kind == "unclear"]
    assert [lac.editor for lac in unclear] == ["ΝΡΑ", "μ", "ρ"]
    assert res.text.count("?") == kept.text(hide_supplied=True).count("?") + 5
    letters = edition_letters(res)
    flat = [e for g in letters if g for e in g if e is not None]
    assert flat == [lookalikes(c) for c in "νραμρ"]


def test_epidoc_unclear_restored_through_restore_files(greek_char_dir):
    import infill
    from infill.epigraphy import epidoc_output, leiden_output, restore_files
    model = infill.load_model(greek_char_dir)
    [r] = restore_files(model, [FIX / "handmade.xml"], top_k=3, unclear="restore")
    assert r.error is None, r.error
    [lac] = [lac for lac in r.edition.lacunae if lac.kind == "unclear"]
    assert lac.editor == "ό"
    assert {normalize(x.text, symbols=False) for x in r.readings[lac.index]} <= \
        set(lookalikes("ο"))                                  # in the user's script: accented
    item = next(i for i in r.lacunae_json() if i["kind"] == "unclear")
    assert item["editor"] == "ό" and item["readings"]
    out = epidoc_output(r, "tiny")
    assert "<unclear><app type=\"alternative\"><lem>ό</lem><rdg" in out
    assert DOT in leiden_output(r)


def test_cli_epidoc_unclear(greek_char_dir):
    from click.testing import CliRunner

    from infill_cli.main import main
    args = ["run", "-m", greek_char_dir, "--json", "-k", "3", str(FIX / "handmade.xml")]
    kept = json.loads(CliRunner().invoke(main, args).stdout)
    assert all(x["kind"] != "unclear" for x in kept["lacunae"])
    r = CliRunner().invoke(main, args[:3] + ["--unclear", "restore"] + args[3:])
    assert r.exit_code == 0, r.output
    [item] = [x for x in json.loads(r.stdout)["lacunae"] if x["kind"] == "unclear"]
    assert item["editor"] == "ό" and item["length"] == 1


# ---- the workbench: same functions, 4xx for bad sets -----------------------------------------
pytest.importorskip("fastapi", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")


@pytest.fixture(scope="module")
def client():
    from fastapi.testclient import TestClient

    from infill.serve.app import create_app
    from infill.serve.catalog import ModelCatalog
    cat = ModelCatalog(device="cpu")
    with TestClient(create_app(cat), raise_server_exceptions=False,
                    base_url="http://127.0.0.1:8000") as c:
        yield c


def test_http_fill_with_sets_equals_the_library(client):
    import infill
    body = {"text": "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ?#[ηι]ς", "model": "builtin:greek",
            "top_k": 3, "beam_size": 4}
    got = client.post("/api/fill", json=body)
    assert got.status_code == 200, got.text
    texts = [c["text"] for c in got.json()["completions"]]
    lib = infill.fill(infill.load_model("builtin:greek"), "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ??ς",
                      letters=[[None, "ηι"]], top_k=3, beam_size=4)[0]
    assert texts == [c.text for c in lib]
    assert got.json()["letters"] == [[None, "ηι"]]
    same = client.post("/api/fill", json={**body, "text": body["text"].replace("#[ηι]", "?"),
                                          "letters": [[None, "ηι"]]})
    assert [c["text"] for c in same.json()["completions"]] == texts


@pytest.mark.parametrize("text, letters, message", [
    ("Ἀχιλ#[]ς", None, "empty letter set"),
    ("Ἀχιλ#[ηz]ς", None, "'z' is not a letter"),
    ("Ἀχιλ??ς", [["η"]], "gap 1 has 2 positions"),
    ("Ἀχιλ??ς", [None, None], "2 entries"),
])
def test_http_bad_sets_are_4xx_one_line(client, text, letters, message):
    body = {"text": text, "model": "builtin:greek", **({"letters": letters} if letters else {})}
    got = client.post("/api/fill", json=body)
    assert 400 <= got.status_code < 500, got.text
    assert message in got.json()["error"] and "\n" not in got.json()["error"]


def test_http_upload_restores_unclear_letters(client):
    xml = (FIX / "handmade.xml").read_text(encoding="utf-8")
    got = client.post("/api/epidoc", json={"xml": xml, "model": "builtin:greek", "top_k": 3,
                                           "unclear": "restore"})
    assert got.status_code == 200, got.text
    lac = [x for x in got.json()["lacunae"] if x["kind"] == "unclear"]
    assert lac and lac[0]["editor"] == "ό"
    assert {normalize(r["text"], symbols=False) for r in lac[0]["readings"]} <= \
        set(lookalikes("ο"))
    kept = client.post("/api/epidoc", json={"xml": xml, "model": "builtin:greek", "top_k": 3})
    assert all(x["kind"] != "unclear" for x in kept.json()["lacunae"])
    bad = client.post("/api/epidoc", json={"xml": xml, "unclear": "maybe"})
    assert bad.status_code == 400 and "\n" not in bad.json()["error"]
