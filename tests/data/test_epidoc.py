"""EpiDoc editions <-> gapped text (infill.data.epidoc, epidoc_write, epidoc_corpus, accents):
exact texts of a hand-made edition holding every element the reader knows, round trips through
the real parser and writer, restorations written and read back, and hostile files."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lxml import etree

from infill.data import epidoc
from infill.data.accents import Lexicon, words
from infill.data.epidoc import read_edition
from infill.data.epidoc_corpus import split_files, supplement_tasks, training_text
from infill.data.epidoc_write import Reading, add_header, apply_readings, leiden, serialize
from infill.data.greek import normalize
from infill.errors import InputError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "epidoc"
HAND = FIX / "handmade.xml"
REAL = FIX / "iospe_1.10.xml"
T = "{http://www.tei-c.org/ns/1.0}"

HAND_TEXT = ("ὁ δῆμος ἐτίμησεν Ἀπολλώνιον Ἀρ???ος Αὐρήλιον στρατηγόν καί ???? ἔτους ε ---τὸν "
             "βωμὸν ???ἀνέθηκεν --θεοῖς --- ξένον τοῦ δήμου")


def test_reads_every_element_of_the_edition():
    e = read_edition(HAND)
    assert e.text() == HAND_TEXT
    assert e.lang == "grc"
    assert [(lac.kind, lac.length, lac.lengths, lac.editor) for lac in e.lacunae] == [
        ("supplied", 5, None, "ώνιον"), ("gap", 3, None, None), ("gap", 4, (3, 5), None),
        ("gap", 3, (2, 4), None), ("supplied", 9, None, "τοῦ δήμου")]
    # the element it does not know is reported, not dropped
    assert e.notes == ["<foo> not understood (1x): its text was read as plain text"]


def test_hidden_supplements_are_restored_afresh():
    r = read_edition(HAND).render(hide_supplied=True)
    assert r.text == HAND_TEXT.replace("Ἀπολλώνιον", "Ἀπολλ?????").replace("τοῦ δήμου", "?" * 9)
    assert [k for k, _, _ in r.restore] == [0, 1, 2, 3, 4]
    for k, start, end in r.restore:
        assert set(r.text[start:end]) == {"?"} and all(s == k for s in r.sources[start:end])


def test_every_text_character_maps_back_to_its_node():
    e = read_edition(HAND)
    r = e.render()
    for c, src in zip(r.text, r.sources):
        if isinstance(src, epidoc.Atom):
            assert (getattr(src.node, src.slot) or "")[src.offset] == c


@pytest.mark.parametrize("path", [HAND, REAL])
def test_round_trip_keeps_the_file(path):
    original = path.read_text(encoding="utf-8")
    assert serialize(read_edition(path)) == original


def test_restorations_written_and_read_back(tmp_path):
    e = read_edition(HAND)
    apply_readings(e, {1: [Reading("ολλ", 0.75), Reading("εσσ", 0.25)], 2: [Reading("τους", 1.0)],
                       4: [Reading("του δημου", 0.6), Reading("τοισ δημοισ", 0.4)]})
    add_header(e, "model builtin:greek, decoder beam", "0.2.0")
    out = serialize(e)
    root = etree.fromstring(out.encode())
    infill_supplied = root.findall(f".//{T}supplied[@resp='#infill']")
    assert [s.get("cert") for s in infill_supplied] == ["low", "low"]
    lem, rdg = infill_supplied[0].find(f"{T}app")
    assert (lem.text, lem.get("cert"), rdg.text, rdg.get("cert")) == ("ολλ", "0.7500", "εσσ", "0.2500")
    assert infill_supplied[1].text == "τους" and len(infill_supplied[1]) == 0
    app = root.find(f".//{T}application")
    assert app.get("{http://www.w3.org/XML/1998/namespace}id") == "infill"
    assert root.find(f".//{T}revisionDesc/{T}change").text == "model builtin:greek, decoder beam"
    # read back: the restored gaps are supplements now; the editor's reading is still the text
    again = read_edition(tmp_path / "x.xml", out)
    assert again.text() == HAND_TEXT.replace("Ἀρ???ος", "Ἀρολλος").replace("???? ἔτους",
                                                                          "τους ἔτους")
    assert again.lacunae[-1].editor == "τοῦ δήμου"


_EDITION = ('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" '
            'xml:lang="grc"><ab>τοῦ <gap reason="lost" unit="character" quantity="2"/>ος</ab>'
            '</div></body></text></TEI>')


@pytest.mark.parametrize("before, after", [
    # IAph's and Crete's schema lines, one per line, and a comment after the root
    ('<?xml version="1.0" encoding="UTF-8"?>\n<?xml-model href="a.rng" '
     'schematypens="http://relaxng.org/ns/structure/1.0"?>\n<?xml-model href="b.sch"?>\n'
     '<!-- ok -->\n    ', "\n<!-- after -->\n"),
    ('<!DOCTYPE TEI>\n', ""),
    ("", "  \n")])
def test_text_around_the_root_is_written_as_it_came(tmp_path, before, after):
    original = before + _EDITION + after
    e = read_edition(tmp_path / "x.xml", original)
    assert serialize(e) == original
    apply_readings(e, {0: [Reading("αβ", 1.0)]})
    out = serialize(e)
    assert out.startswith(before.lstrip()) and out.endswith("</TEI>" + after)


def test_text_around_the_root_it_cannot_tell_is_written_by_lxml(tmp_path):
    # a comment after the root that holds the root's end tag: where the root ends is not plain,
    # so lxml writes the root's siblings (the same XML, its spacing lost)
    original = '<?xml version="1.0"?>\n<!-- a -->\n' + _EDITION + "\n<!-- </TEI> -->\n"
    e = read_edition(tmp_path / "x.xml", original)
    assert not e.ends_as_written
    out = serialize(e)
    assert out == '<?xml version="1.0"?>\n<!-- a -->' + _EDITION + "<!-- </TEI> -->\n"


def test_a_gap_inside_a_lost_supplement_is_no_lacuna_of_its_own(tmp_path):
    # IAph 2.301: the supplement ends in a <gap>; it is missing text, and the gap inside it is
    # not a second lacuna (one would be restorable, yet nowhere in the text)
    xml = ('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" '
           'xml:lang="grc"><ab>Ἀθηνα<supplied reason="lost">γόρ<gap reason="lost" '
           'unit="character" quantity="3"/></supplied> τοῦ <gap reason="lost" unit="character" '
           'quantity="2"/>ος</ab></div></body></text></TEI>')
    e = read_edition(tmp_path / "x.xml", xml)
    assert e.text() == "Ἀθηνα--- τοῦ ??ος"
    assert [(lac.index, lac.kind, lac.length) for lac in e.lacunae] == [(0, "gap", 2)]
    apply_readings(e, {0: [Reading("αβ", 1.0)]})
    back = read_edition(tmp_path / "x.xml", serialize(e))
    assert [(lac.kind, lac.editor) for lac in back.lacunae] == [("supplied", "αβ")]


def test_leiden_output():
    e = read_edition(HAND)
    assert leiden(e) == ("ὁ δῆμος ἐτίμησεν\nἈπολλ[ώνιον] Ἀρ[...]ος\nΑὐρ(ήλιον) στρα-\n"
                         "τηγό\u0323ν\nκαί [c.4] ἔτους ε\n[---]τὸν vac. βωμ⟨ὸ⟩ν{ν}\n"
                         "[c.3]ἀνέθηκεν\n..θεοῖς\n[---]\nξένον [τοῦ δήμου]")
    assert leiden(e, {1: [Reading("ολλ", 1.0)], 4: [Reading("του δημου", 1.0)]}).splitlines()[1] \
        == "Ἀπολλ[ώνιον] Ἀρ[ολλ]ος"


def test_training_text_and_supplement_tasks():
    e = read_edition(HAND)
    assert training_text(e) == HAND_TEXT.replace("?", "-")
    tasks = supplement_tasks(e)
    assert [(t.index, t.gold, t.whole_word) for t in tasks] == [
        (0, "ωνιον", False), (4, "του δημου", True)]
    assert tasks[1].text == ("ὁ δῆμος ἐτίμησεν Ἀπολλ----- Ἀρ---ος Αὐρήλιον στρατηγόν καί ---- ἔτους ε "
                             "---τὸν βωμὸν ---ἀνέθηκεν --θεοῖς --- ξένον ?????????")
    assert [t.index for t in supplement_tasks(e, {5})] == [0]


def test_split_by_inscription_is_fixed_and_disjoint(tmp_path):
    files = [tmp_path / f"{k}.xml" for k in range(50)]
    parts = split_files(files)
    assert [len(parts[p]) for p in ("train", "validation", "test")] == [40, 5, 5]
    assert sorted(sum(parts.values(), [])) == sorted(files)
    assert split_files(files) == parts


def test_real_file_reads_as_its_editor_wrote_it():
    e = read_edition(REAL)
    assert e.text() == "--- ---ΝΡΑ--- ---μηνὸς Ἀρτεμισίωνος---"
    assert [(lac.kind, lac.editor, lac.length) for lac in e.lacunae] == [
        ("supplied", "τεμισίωνος", 10)]


# ---- accents ----------------------------------------------------------------------------------
def test_lexicon_most_frequent_form_and_script(tmp_path):
    lex = Lexicon.build(["καὶ καὶ καί Ἀρτεμισίωνος", "πολύτροπον ---ωρισ τοῦ"])
    assert lex.forms["και"] == "καὶ" and "ωρισ" not in lex.forms
    lex.save(tmp_path / "a.tsv.gz")
    assert Lexicon.load(tmp_path / "a.tsv.gz").forms == lex.forms
    assert lex.script("πολυτροπον", 5, 7) == ("ρο", True)
    assert lex.script("Ἀρτεμισιωνοσ", 2, 12) == ("τεμισίωνος", True)
    assert lex.script("αβγοσ", 3, 5) == ("ος", False)          # unknown: plain, final sigma
    assert words("δ᾽ ἄνδρα τ’ ἐμέ") == ["δ", "ἄνδρα", "τ", "ἐμέ"]


def test_apostrophes_are_apostrophes_not_unknown_symbols():
    for apostrophe in "\u1fbd\u2019'\u02bc\u1fbf":
        assert normalize(f"δ{apostrophe} ἄνδρα", unknown=True) == "δ ανδρα"


def test_shipped_lexicon_knows_homer():
    from infill.data.accents import default_lexicon
    lex = default_lexicon()
    assert lex is not None and len(lex) > 50_000
    assert lex.script("πολυτροπον", 5, 7) == ("ρο", True)


# ---- hostile files ----------------------------------------------------------------------------
def _bad(tmp_path, body: str, name: str = "bad.xml") -> Path:
    p = tmp_path / name
    p.write_text(body, encoding="utf-8")
    return p


TEI_HEAD = '<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body>'


@pytest.mark.parametrize("body, message", [
    (TEI_HEAD + '<div type="edition"><ab>α</div></body></text></TEI>', "line 1: not well-formed"),
    ("<html><body>not tei</body></html>", "not a TEI document"),
    (TEI_HEAD + "<div type='translation'><p>x</p></div></body></text></TEI>", "no edition"),
    ('<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>'
     "\n" + TEI_HEAD + "<div type='edition'><ab>&lol2;</ab></div></body></text></TEI>",
     "line 2: entity declarations are refused"),
    ('<!DOCTYPE TEI [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>' + TEI_HEAD +
     "<div type='edition'><ab>&xxe;</ab></div></body></text></TEI>", "entity declarations"),
    (TEI_HEAD + "<div type='edition'><ab>&undefined;</ab></div></body></text></TEI>",
     "not well-formed"),
    ('<!DOCTYPE TEI SYSTEM "http://example.invalid/tei.dtd">\n' + TEI_HEAD +
     "<div type='edition'><ab></ab></div></body></text></TEI>", "holds no text"),
    ("", "not well-formed"),
])
def test_hostile_files_are_one_line_errors_naming_the_file(tmp_path, body, message):
    p = _bad(tmp_path, body)
    with pytest.raises(InputError) as e:
        read_edition(p)
    text = str(e.value)
    assert str(p) in text and message in text and "\n" not in text


def test_huge_file_refused_before_reading(tmp_path, monkeypatch):
    p = _bad(tmp_path, TEI_HEAD + "<div type='edition'><ab>" + "α" * 5000 +
             "</ab></div></body></text></TEI>")
    monkeypatch.setattr(epidoc, "MAX_BYTES", 4000)
    with pytest.raises(InputError, match="longer than the 4,000-byte limit"):
        read_edition(p)
    with pytest.raises(InputError, match="over the 0 MB limit"):
        read_edition(p, p.read_text(encoding="utf-8"))


@pytest.mark.parametrize("depth", [100, 20_000])
def test_deep_nesting_reads_or_is_refused_in_one_line(tmp_path, depth):
    deep = "<hi>" * depth + "α" + "</hi>" * depth
    p = _bad(tmp_path, TEI_HEAD + f"<div type='edition'><ab>{deep}</ab></div></body></text></TEI>")
    if depth < 200:
        assert read_edition(p).text() == "α"
    else:                 # past libxml2's depth limit (huge_tree stays off)
        with pytest.raises(InputError, match=r"bad\.xml: line 1: not well-formed XML"):
            read_edition(p)


def test_fixture_folder_is_unchanged_by_a_copy(tmp_path):
    shutil.copy(HAND, tmp_path / "a.xml")
    assert serialize(read_edition(tmp_path / "a.xml")) == HAND.read_text(encoding="utf-8")


# ---- restored letters in the user's script (every Greek completion) ---------------------------
def test_fills_in_the_users_script_with_the_shipped_lexicon():
    from infill.data.accents import in_users_script

    text = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιληος"
    a = text.index("ηο")
    assert in_users_script(text, [(a, a + 2)]) == (text[:a] + "ῆος", ["ῆο"], [True])
    text = "ἔδοξε τῆι βουλῆι καὶ του δημου"
    a = text.index("του")
    assert in_users_script(text, [(a, len(text))]) == (text[:a] + "τοῦ δήμου", ["τοῦ δήμου"],
                                                       [True])
    text = "ΤΟΥ ΔΗΜΟΥ"                          # in capitals, as the text around: unaccented
    assert in_users_script(text, [(5, 7)]) == (text, ["ΗΜ"], [False])
    text = "ξξαβγοσ καὶ"                      # not a word: plain letters, a final sigma
    assert in_users_script(text, [(5, 7)]) == ("ξξαβγος καὶ", ["ος"], [False])
    text = "ἄνδρα μοι ἔννεπε, μουσα, πολύτροπον"   # punctuation touching the word: still a word
    a = text.index("ουσα")
    assert in_users_script(text, [(a, a + 2)]) == (text[:a] + "οῦσα, πολύτροπον", ["οῦ"], [True])
    text = "ξξαβγοσ, καὶ"                     # a final sigma before punctuation
    assert in_users_script(text, [(5, 7)]) == ("ξξαβγος, καὶ", ["ος"], [False])


def test_api_completions_say_which_fills_are_accented(greek_char_dir):
    import infill

    model = infill.load_model(greek_char_dir)
    for c in infill.fill(model, "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτ??πον καὶ ???", top_k=3)[0]:
        assert len(c.accented) == len(c.fills) == 2
        assert [c.text[a:b] for a, b in c.spans] == list(c.fills)
        assert c.to_json()["accented"] == list(c.accented)
        for fill, tokens in zip(c.fills, (c.tokens[:2], c.tokens[2:])):
            assert [normalize(ch, strip=False) for ch in fill] == \
                [model.id_to_token(t) for t in tokens]


def test_the_editions_own_question_marks_and_hyphens_are_not_gaps(tmp_path):
    p = _bad(tmp_path, TEI_HEAD + "<div type='edition'><ab>αβ? γδ - εζ<gap reason='lost' "
             "quantity='2' unit='character'/></ab></div></body></text></TEI>", "own.xml")
    e = read_edition(p)
    assert e.text() == "αβ γδ εζ??"
    assert sorted(e.notes) == [
        "the edition's own '-' dropped (infill reads it as a missing letter) (1x)",
        "the edition's own '?' dropped (infill reads it as a letter to restore) (1x)"]
