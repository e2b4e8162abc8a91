"""``infill run`` on EpiDoc files through click's test runner (a tiny Greek character model made
in the test): JSON readings, EpiDoc and Leiden output read back, folders, and hostile files."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from lxml import etree

from infill.data.epidoc import read_edition
from infill_cli.main import main

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "epidoc"
HAND = FIX / "handmade.xml"
T = "{http://www.tei-c.org/ns/1.0}"


@pytest.fixture
def runner():
    return CliRunner()


def _run(runner, model, *args):
    return runner.invoke(main, ["run", "--model", model, *map(str, args)])


def test_json_gives_readings_per_lacuna(runner, greek_char_dir):
    r = _run(runner, greek_char_dir, "-k", "3", "--json", HAND)
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["file"] == str(HAND) and out["error"] is None
    assert out["input"] == read_edition(HAND).text()
    lac = out["lacunae"]
    assert [(x["lacuna"], x["kind"], x["lb"], x["length"]) for x in lac] == [
        (1, "gap", "2", 3), (2, "gap", "5", 4), (3, "gap", "7", 3)]
    for x in lac:
        probs = [rd["prob"] for rd in x["readings"]]
        assert math.isclose(sum(probs), 1.0, abs_tol=1e-9) and probs == sorted(probs, reverse=True)
        lo, hi = x["lengths"] or (x["length"], x["length"])
        assert all(lo <= len(rd["text"]) <= hi and isinstance(rd["accented"], bool)
                   for rd in x["readings"])
    # the uncertain lacunae were decoded over their whole ranges, ranked together
    assert [x["lengths"] for x in lac] == [None, [3, 5], [2, 4]]
    assert "decoded at every length from 3 to 5" in r.stderr
    # the readings are the completions' fills, merged: the first completion's fills are the
    # first readings
    first = out["completions"][0]
    assert [x["readings"][0]["text"] for x in lac if not x["readings"][0]["accented"]] == \
        [f for f, x in zip(first["fills"], lac) if not x["readings"][0]["accented"]]
    assert "<foo> not understood" in r.stderr


def test_table_gives_each_lacunas_line_and_size(runner, greek_char_dir, tmp_path):
    p = tmp_path / "two.xml"
    p.write_text('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" '
                 'xml:lang="grc"><ab><lb n="1"/>καὶ τῶ<gap reason="lost" quantity="1" '
                 'unit="character"/> δήμωι <lb n="2"/>τὸν <gap reason="lost" quantity="2" '
                 'unit="character"/>μον</ab></div></body></text></TEI>', encoding="utf-8")
    r = _run(runner, greek_char_dir, "-k", "1", p)
    assert r.exit_code == 0, r.output
    heads = [line.split(" (XML line")[0] + line.split(")", 1)[1]
             for line in r.stdout.splitlines() if "(XML line" in line]
    assert heads == ["  line 1, 1 character", "  line 2, 2 characters"]


def test_epidoc_output_read_back(runner, greek_char_dir):
    r = _run(runner, greek_char_dir, "-k", "2", "--output-format", "epidoc", HAND)
    assert r.exit_code == 0, r.output
    root = etree.fromstring(r.stdout.encode())
    ours = root.findall(f".//{T}supplied[@resp='#infill']")
    assert len(ours) == 3 and all(s.get("cert") == "low" and s.get("reason") == "lost" for s in ours)
    change = root.find(f".//{T}revisionDesc/{T}change")
    assert change.get("who") == "#infill" and greek_char_dir in change.text and "beam" in change.text
    again = read_edition("out.xml", r.stdout)
    before = read_edition(HAND)
    # the editor's supplements come out as they went in; the gaps are now model supplements
    assert [lac.editor for lac in again.supplements][:1] == ["ώνιον"]
    assert again.supplements[-1].editor == "τοῦ δήμου"
    assert len(again.lacunae) == len(before.lacunae)
    assert again.text().replace(" ", "") != before.text().replace(" ", "")


def test_hidden_supplements_keep_the_editors_reading(runner, greek_char_dir):
    r = _run(runner, greek_char_dir, "-k", "2", "--hide-supplied", "--output-format", "epidoc",
             HAND)
    assert r.exit_code == 0, r.output
    again = read_edition("out.xml", r.stdout)
    editors = [lac.editor for lac in again.lacunae if lac.kind == "supplied" and lac.editor in
               ("ώνιον", "τοῦ δήμου")]
    assert editors == ["ώνιον", "τοῦ δήμου"]
    root = etree.fromstring(r.stdout.encode())
    rdgs = root.findall(f".//{T}supplied/{T}app/{T}rdg[@resp='#infill']")
    assert len(rdgs) >= 2


def test_leiden_output(runner, greek_char_dir):
    r = _run(runner, greek_char_dir, "-k", "1", "--output-format", "leiden", HAND)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "ὁ δῆμος ἐτίμησεν"
    assert lines[1].startswith("Ἀπολλ[ώνιον] Ἀρ[") and lines[1].endswith("]ος")


def test_folder_needs_out_for_files_and_writes_each(runner, greek_char_dir, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    for name in ("a.xml", "b.xml"):
        shutil.copy(HAND, src / name)
    r = _run(runner, greek_char_dir, "--output-format", "epidoc", src)
    assert r.exit_code == 2 and "needs --out FOLDER" in r.output
    r = _run(runner, greek_char_dir, "--output-format", "epidoc", "--out", tmp_path / "o", src)
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["a.xml", "b.xml"]
    r = _run(runner, greek_char_dir, "--out", src, "--output-format", "epidoc", src / "a.xml")
    assert r.exit_code == 2 and "would overwrite the input" in r.output


def test_epidoc_options_refused_for_plain_text(runner, greek_char_dir):
    r = _run(runner, greek_char_dir, "--output-format", "epidoc", "μῆνιν ἄ??δε")
    assert r.exit_code == 2 and r.output.startswith("Error: ") and "EpiDoc" in r.output


BAD = {
    "malformed.xml": ('<TEI xmlns="http://www.tei-c.org/ns/1.0">\n<text><body>\n'
                      '<div type="edition"><ab>α</div></body></text></TEI>', "line 3: not well-formed"),
    "html.xml": ("<html><body>x</body></html>", "not a TEI document"),
    "latin.xml": ('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" '
                  'xml:lang="la"><ab>Imp<gap reason="lost" quantity="3" unit="character"/>tor'
                  '</ab></div></body></text></TEI>', "the edition is in 'la'"),
    "laughs.xml": ('<!DOCTYPE TEI [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>\n'
                   '<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition">'
                   '<ab>&b;</ab></div></body></text></TEI>', "entity declarations are refused"),
    "external.xml": ('<!DOCTYPE TEI [<!ENTITY x SYSTEM "http://example.invalid/x">]>'
                     '<TEI xmlns="http://www.tei-c.org/ns/1.0"/>', "entity declarations are refused"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_hostile_files_one_line_exit_2(runner, greek_char_dir, tmp_path, name):
    body, message = BAD[name]
    p = tmp_path / name
    p.write_text(body, encoding="utf-8")
    r = _run(runner, greek_char_dir, "--output-format", "epidoc", p)
    assert r.exit_code == 2
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("Error:")]
    assert errors[0].startswith(f"Error: {p}") and message in errors[0]
    assert "Traceback" not in r.output


def test_one_bad_file_among_good_ones(runner, greek_char_dir, tmp_path):
    shutil.copy(HAND, tmp_path / "good.xml")
    (tmp_path / "bad.xml").write_text("<TEI", encoding="utf-8")
    r = _run(runner, greek_char_dir, "--json", tmp_path)
    assert r.exit_code == 2
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(Path(x["file"]).name, x["error"] is None) for x in rows] == [("bad.xml", False),
                                                                         ("good.xml", True)]
    assert len(rows[1]["lacunae"]) == 3


def test_tei_content_detected_without_the_suffix(runner, greek_char_dir, tmp_path):
    p = tmp_path / "edition.txt"
    shutil.copy(HAND, p)
    r = _run(runner, greek_char_dir, "--json", "--input", p)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["input"] == read_edition(HAND).text()


def test_nothing_to_restore_writes_the_file_back_unchanged(runner, greek_char_dir, tmp_path):
    """The CLI round trip: an edition without lacunae to restore comes out byte for byte."""
    p = tmp_path / "whole.xml"
    p.write_text(HAND.read_text(encoding="utf-8").replace(
        '<gap reason="lost" quantity="3" unit="character"/>', "ολλ").replace(
        '<gap reason="lost" quantity="4" unit="character" precision="low"/>', "").replace(
        '<gap reason="lost" atLeast="2" atMost="4" unit="character"/>', ""), encoding="utf-8")
    r = _run(runner, greek_char_dir, "--output-format", "epidoc", p)
    assert r.exit_code == 0, r.output
    assert r.stdout == p.read_text(encoding="utf-8")
    assert "nothing to restore" in r.stderr
    r = _run(runner, greek_char_dir, "--output-format", "epidoc", "--out", tmp_path / "o",
             FIX / "iospe_1.10.xml")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "o" / "iospe_1.10.xml").read_text(encoding="utf-8") == \
        (FIX / "iospe_1.10.xml").read_text(encoding="utf-8")


def test_readings_split_adjacent_lacunae_and_sum_probabilities():
    from types import SimpleNamespace

    from infill.data.epidoc import Rendered
    from infill.epigraphy import readings_for

    # "αβ?????γ": lacuna 0 (2 characters) and lacuna 1 (3) side by side = one model gap
    rendered = Rendered("αβ?????γ", [None] * 8, [(0, 2, 4), (1, 4, 7)])
    comps = [SimpleNamespace(text="αβκλμνξγ", spans=((2, 7),), score=0.0),
             SimpleNamespace(text="αβκλοπργ", spans=((2, 7),), score=0.0),
             SimpleNamespace(text="αβστμνξγ", spans=((2, 7),), score=math.log(2.0))]
    out = readings_for(rendered, comps)
    assert [(r.text, r.prob) for r in out[0]] == [("κλ", 0.5), ("στ", 0.5)]
    assert [(r.text, round(r.prob, 12)) for r in out[1]] == [("μνξ", 0.75), ("οπρ", 0.25)]
