"""Latin editions (issue 49): the Latin alphabet, EDH's EpiDoc as the Latin model reads it (the
stone's letters: expansions dropped, the conversion's leftovers handled), Leiden expansions, and
an edition in the other alphabet refused in one line."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from infill.data.epidoc import read_edition
from infill.data.epidoc_corpus import supplement_tasks
from infill.data.greek import GREEK, Alphabet, divider_of, normalize
from infill.data.inscriptions import inscription_text
from infill.data.latin import LATIN, alphabet_for, fold_uv, script_of, stone_text
from infill.data.leiden import convert

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "latin"


def edition(name: str):
    return read_edition(FIXTURES / f"{name}.xml")


def test_latin_alphabet_is_aeneas_letters_with_j_read_as_i():
    assert LATIN.letters == "abcdefghiklmnopqrstuvxyz"
    assert normalize("Iulius Jānuarius, VIXIT", alphabet=LATIN) == "iulius ianuarius, vixit"
    assert normalize("Wx 12", alphabet=LATIN, unknown=True) == "^x 00"   # w is no Latin letter
    assert normalize("CÆSARI Œ", alphabet=LATIN, unknown=True) == "caesari oe"   # ligatures
    # Greek is untouched by the Latin variants: j and Latin letters stay unknown there
    assert normalize("jα", unknown=True) == "^α"
    assert Alphabet.from_dict(LATIN.to_dict()).to_dict() == LATIN.to_dict()
    assert "variants" not in GREEK.to_dict() and "name" not in GREEK.to_dict()


def test_an_interpunct_is_the_word_space():
    """EDH divides words with spaces; a transcription's interpuncts are read so."""
    assert normalize("D·M·S Iulia•Felix ⸱ xxv", alphabet=LATIN) == "d m s iulia felix xxv"
    assert normalize("ἔδοξε· τῶι", unknown=True) == "εδοξε· τωι"      # Greek keeps its colon
    assert divider_of("D·M·S·?????", LATIN) == "·" and divider_of("D · M", LATIN) is None
    assert divider_of("D M S", LATIN) is None
    assert normalize("ΕΔΟΞΕ:ΤΕΙ⁝ΒΟΛΕΙ") == "εδοξε τει βολει"          # an archaic divider
    assert divider_of("ΕΔΟΞΕ:ΤΕΙ") == ":" and divider_of("D:M", LATIN) == ":"


def test_restored_spaces_are_written_as_the_texts_interpunct(latin_char_dir):
    import infill

    model = infill.load_model(latin_char_dir, device="cpu")
    assert model.alphabet.decode(model.encode("D·M·???·FELICI").input_ids) == "d m ??? felici"
    comps = infill.fill(model, "D·M·???·FELICI", letters=[[None, [" "], None]], top_k=3)[0]
    assert comps and all(c.text.startswith("D·M·") and c.fills[0][1] == "·" for c in comps)
    spaced = infill.fill(model, "D · M ??? FELICI", letters=[[None, [" "], None]], top_k=1)[0]
    assert spaced[0].fills[0][1] == " "


def test_u_and_v_are_one_letter_when_compared():
    assert fold_uv("vixit") == fold_uv("uixit") == "uixit"


def test_language_then_script_picks_the_alphabet():
    assert alphabet_for("la") is LATIN and alphabet_for("grc", "abc") is GREEK
    assert alphabet_for(None, "Dis Manibus") is LATIN and alphabet_for(None, "θεοῖς") is GREEK
    assert script_of("D M καὶ θεοῖς") == "greek" and script_of("123") is None


def test_stone_text_drops_a_latin_expansion_only():
    assert stone_text("co(n)s(ulibus) d(is) m(anibus)", LATIN) == "cos d m"
    assert stone_text("Felix ((centurio)) leg", LATIN) == "Felix  leg"     # a symbol, whole
    assert stone_text("(ἔτους) α", GREEK) == "(ἔτους) α"


def test_edh_edition_reads_the_stones_letters():
    ed = edition("HD000013")
    assert ed.alphabet is LATIN
    assert ed.text() == ("D M Salbiae Impetratae coniugi piae bene merenti quae vixit an XXXXII "
                         "m --- d XVIII Lollius Herodianus fecit")
    assert [lac.editor for lac in ed.supplements] == ["ae", "enti", "ia"]


def test_expansions_inside_supplements_are_not_counted():
    ed = edition("HD000038")
    # [s(acrum)] is the letter s; [s(it) t(ibi) t(erra) l(evis)] six letters and spaces; the
    # <am> of n<am>n</am> (numerorum) is on the stone
    assert [(lac.editor, lac.length) for lac in ed.supplements] == \
        [("s", 1), ("pia", 3), ("s e s t t l", 11)]
    assert ed.text(hide_supplied=True) == "D M ? Calpurnia --- nn XX ---??? in suis h ???????????"
    assert inscription_text(ed) == "d m s calpurnia --- nn xx ---pia in suis h s e s t t l"
    tasks = supplement_tasks(ed)
    assert [t.gold for t in tasks] == ["s", "pia", "s e s t t l"]


def test_flattened_expansion_and_sign_are_dropped():
    ed = edition("HD000109")
    assert "p CXXXII | cum inauribus" in ed.text()       # |(unciarum duarum semunciae)
    assert "unciarum" not in ed.text()
    assert "cxxxii ^ cum" in inscription_text(ed)         # the sign: unknown, not a letter


def test_lost_line_supplement_with_gap_and_split_expansion():
    ed = edition("HD073586")
    assert ed.text() == "--- ---ne et---cos"              # co(n)s(ulibus) across <certainty>
    assert [lac.editor for lac in ed.supplements] == ["t", "cos"]
    assert "a lost supplement holding a <gap> was read as missing text (1x)" in ed.notes


def test_raw_leiden_dashes_in_a_latin_edition_are_lost_text():
    xml = ('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" '
           'xml:lang="la"><ab>------ Cae]cilia <supplied reason="lost">---? Se</supplied>'
           'cunda min(iensium)</ab></div></body></text></TEI>')
    ed = read_edition("x.xml", xml)
    # the ']' after lost text closes a '[' gone with the dashes: 'Cae' was the editor's, lost;
    # the supplement holding '---' is missing text (no task), and the expansion in parentheses
    # is not read
    assert ed.text() == "--- ---cilia ---cunda min"
    assert ed.supplements == []


def _la(body: str):
    return read_edition("x.xml", '<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div '
                        f'type="edition" xml:lang="la"><ab>{body}</ab></div></body></text></TEI>')


def test_raw_square_brackets_are_lost_text_not_the_stones():
    # EDH's stretches never C-tagged keep Leiden's [ ]: the letters inside are an editor's
    # restoration, read as lost (shown missing, as many characters), never as the stone's
    ed = _la('Imp [Philippo] Aug et Ph[ilippo] Caes <supplied reason="lost">cos</supplied>')
    assert ed.text() == "Imp -------- Aug et Ph------ Caes cos"
    assert ed.text(hide_supplied=True) == "Imp -------- Aug et Ph------ Caes ???"
    assert [lac.editor for lac in ed.supplements] == ["cos"]        # no lacuna of its own
    assert "EDH's raw [ ] (lost text an editor restored) read as missing text (2x)" in ed.notes
    assert inscription_text(ed) == "imp -------- aug et ph------ caes cos"


def test_raw_brackets_open_at_the_end_across_elements_and_erasures():
    # a '[' never closed is lost to the block's end, across elements; one holding a run of '-'
    # is of unknown extent; [[ ]] marks an erasure, whose letters are read
    assert _la("I O Max sacr[um ---</ab><ab>v s l m").text() == "I O Max sacr--- v s l m"
    assert _la("ni[si <lb/>quod]").text() == "ni-------"
    assert _la("cos VII [[Domitiano]] et").text() == "cos VII Domitiano et"
    assert _la("cos VII [[---]] et").text() == "cos VII --- et"


def test_raw_brackets_never_reach_into_a_supplement():
    # a ']' inside a supplement closes nothing outside it; brackets around a lacuna leave the
    # lacuna as read (a task), their marks dropped
    ed = _la('Se[x <supplied reason="lost">Iul]ius</supplied> et')
    assert [lac.editor for lac in ed.supplements] == ["Iulius"]
    assert ed.text(hide_supplied=True) == "Sex ?????? et"
    # inside a lost supplement a raw bracket says nothing more: dropped (EDH HD005769 't[i')
    ed = _la('pi<supplied reason="lost">t[i</supplied>ae [<supplied reason="lost">[iae</supplied>]')
    assert [(lac.editor, lac.length) for lac in ed.supplements] == [("ti", 2), ("iae", 3)]
    ed = _la('[<supplied reason="lost">dis</supplied> m]anibus ] sacrum')
    assert [lac.editor for lac in ed.supplements] == ["dis"]
    assert ed.text() == "dis manibus sacrum"
    assert "a raw ']' without its pair dropped (1x)" in ed.notes


def test_a_gap_inside_a_raw_expansion_is_dropped_with_it():
    # EDH HD018125: f(ili<gap/><gap/>) -- the lost letters of an expansion were never on the
    # stone: no lacuna, no '?' (they used to be two letters to restore after the f)
    xml = ('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" '
           'xml:lang="la"><ab>Vespasiani f(ili<gap reason="lost" quantity="1" unit="character"/>'
           '<gap reason="lost" quantity="1" unit="character"/>) Dom<gap reason="lost" '
           'quantity="3" unit="character"/>ani</ab></div></body></text></TEI>')
    ed = read_edition("x.xml", xml)
    assert ed.text() == "Vespasiani f Dom???ani"
    assert [(lac.index, lac.length) for lac in ed.lacunae] == [(0, 3)]
    assert "a <gap> inside an expansion in parentheses (raw Leiden) dropped, like the " \
        "expansion (2x)" in ed.notes


def test_raw_corrections_and_omissions_read_as_the_editors_letters():
    # EDH HD000144, HD000224: '&lt;h=T&gt;eres' (the stone's T, read h) and 'ann&lt;i&gt;s' (an i
    # the carver left out), escaped once more in the XML; read as <corr> and an omitted
    # supplement are, not as the letters 'lt', 'gt' and a sign
    xml = ('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" '
           'xml:lang="la"><ab>et &amp;lt;h=T&amp;gt;eres vixit ann<unclear>&amp;lt;i&amp;gt;</unclear>'
           's <supplied reason="lost">Aur&lt;e=H&gt;l</supplied> stipedior&amp;lt;um=ON&amp;gt;'
           '</ab></div></body></text></TEI>')
    ed = read_edition("x.xml", xml)
    assert inscription_text(ed) == "et heres vixit annis aurel stipediorum"
    assert [(lac.editor, lac.length) for lac in ed.supplements] == [("Aurel", 5)]
    assert ed.text(hide_supplied=True) == "et heres vixit annis ????? stipediorum"
    assert "EDH's raw <letters=stone> or <letters> read as the editor's letters (4x)" in ed.notes


def test_raw_corrections_split_across_elements():
    # EDH HD004665, HD020723, HD062896: a raw mark an element splits (an empty <certainty>, an
    # <expan>, a supplement's edge), a doubled 'gt;' after one, and a mark without its pair
    cert = '<certainty match="preceding-sibling::node()" locus="value"/>'
    ed = _la(f"si&amp;lt;bi{cert}=TT&amp;gt; fecit in &amp;lt;<expan><abbr>coh</abbr>"
             "<ex>orte</ex></expan>&amp;gt; X pos&amp;lt;v=I&amp;gt;gt;it censor &amp;lt;------")
    assert ed.text() == "sibi fecit in coh X posvit censor ---"
    assert "EDH's raw <letters=stone> or <letters> read as the editor's letters (3x)" in ed.notes
    assert "EDH's raw '<' or '>' without its pair dropped (1x)" in ed.notes
    ed = _la('<supplied reason="lost">Aur&amp;lt;e<lb/>=H&amp;gt;lius</supplied> v')
    assert [(lac.editor, lac.length) for lac in ed.supplements] == [("Aure lius", 9)]


def test_leiden_keeps_a_latin_expansion_for_the_output():
    assert convert("D(is) M(anibus) [....] felici").text == "D(is) M(anibus) ???? felici"
    assert convert("[co(n)s(ulibus)] [---]").text == "co(n)s(ulibus) ---"
    assert convert("ἀγαθῆι (ἔτους) [..]").text == "ἀγαθῆι ἔτους ??"   # Greek as before


@pytest.fixture(scope="module")
def latin_char_dir(tmp_path_factory):
    """A tiny random character model in the Latin alphabet."""
    from infill.models.char import CharConfig, CharTransformer, save_char

    torch.manual_seed(5)
    config = CharConfig(d_model=32, n_layers=1, n_heads=2, d_ff=64, max_length=48,
                        n_inputs=len(LATIN), n_outputs=LATIN.n_outputs, pad_id=LATIN.pad_id)
    model = CharTransformer(config, None, LATIN)
    return str(save_char(model.eval(), tmp_path_factory.mktemp("latin-char") / "m", LATIN,
                         dtype=torch.float32))


def test_latin_model_reads_the_stone_and_shows_the_expansion(latin_char_dir):
    import infill

    model = infill.load_model(latin_char_dir, device="cpu")
    assert model.alphabet.to_dict() == LATIN.to_dict()
    enc = model.encode("D(is) M(anibus) ??? felici")
    assert model.alphabet.decode(enc.input_ids) == "d m ??? felici"
    out = infill.fill(model, "D(is) M(anibus) ??? felici", top_k=1)[0][0]
    assert out.text.startswith("D(is) M(anibus) ") and out.text.endswith(" felici")
    assert all(c in LATIN.letters + " " for c in "".join(out.fills))


def test_edition_in_the_other_alphabet_is_one_line(runner_free_model_pair):
    latin_model, greek_model = runner_free_model_pair
    from infill.epigraphy import _check_language
    from infill.errors import InputError

    with pytest.raises(InputError, match=r"in 'la' \(xml:lang\), so Latin; .* restores Greek"):
        _check_language(edition("HD000013"), greek_model)
    greek = read_edition("g.xml", '<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div '
                         'type="edition" xml:lang="grc"><ab>καὶ</ab></div></body></text></TEI>')
    with pytest.raises(InputError, match=r"in 'grc' \(xml:lang\), so Greek; .* restores Latin"):
        _check_language(greek, latin_model)
    _check_language(edition("HD000013"), latin_model)     # its own: no error


@pytest.fixture
def runner_free_model_pair(latin_char_dir, greek_char_dir):
    import infill

    return (infill.load_model(latin_char_dir, device="cpu"),
            infill.load_model(greek_char_dir, device="cpu"))


@pytest.mark.slow
def test_builtin_latin_restores_the_issues_example_and_an_edh_edition_offline():
    from click.testing import CliRunner

    from infill_cli.main import main as cli

    runner = CliRunner()
    r = runner.invoke(cli, ["run", "--model", "builtin:latin", "-k", "3",
                            "d m ????? felici vixit annis xxv"])
    assert r.exit_code == 0, r.output
    rows = [ln for ln in r.output.splitlines() if ln.strip().startswith(("1 ", "2 ", "3 "))]
    assert len(rows) == 3 and all(ln.endswith(" felici vixit annis xxv") for ln in rows)
    r = runner.invoke(cli, ["run", "--model", "builtin:latin", "--hide-supplied", "-k", "2",
                            str(FIXTURES / "HD000013.xml")])
    assert r.exit_code == 0, r.output
    assert "(editor: enti)" in r.output and "(editor: ia)" in r.output
    assert "not a known word" not in r.output


def test_builtin_latin_hears_both_sides_of_a_name():
    """``c iulius f[....] vixit``: the left context says felix, the right one the u of the
    commoner ``qui vixit``; pooled, not chained, the name comes first (it came ninth), and in
    capitals as the text around it."""
    import infill

    model = infill.load_model("builtin:latin", device="cpu")
    for text, want in [("d m c iulius f???? vixit annis xx", "elix"),
                       ("D M C IULIUS F???? VIXIT ANNIS XX", "ELIX")]:
        [first] = infill.fill(model, text, marker="?", top_k=1, rerank="off")[0]
        assert "".join(first.fills) == want


def test_infill_train_latin_writes_bounded_memories_that_load(tmp_path):
    from click.testing import CliRunner

    import infill
    from infill.training.latin import (LEXICON_SCALE, MIN_COUNT, MIXING_ORDER, PAIRS_MIN,
                                       PHRASE_LEAST, PHRASE_LEVELS)
    from infill_cli.main import main

    lines = ["dis manibus sacrum vixit annis xxv", "hic situs est sit tibi terra levis"] * 40
    (tmp_path / "lat.txt").write_text("\n".join(lines + ["unicum"]) + "\n", encoding="utf-8")
    r = CliRunner().invoke(main, [
        "train", "latin", str(tmp_path / "lat.txt"), "--inscriptions", str(FIXTURES), "--out",
        str(tmp_path / "m"), "--steps", "1", "--batch-size", "4", "--layers", "1", "--hidden",
        "16", "--heads", "2", "--max-length", "64", "--no-progress"])
    assert r.exit_code == 0, r.output
    model = infill.load_model(str(tmp_path / "m"), device="cpu")
    assert model.alphabet.to_dict() == LATIN.to_dict()
    assert model.mixed == MIXING_ORDER and MIXING_ORDER[0] == "shapes"   # builtin:latin's order
    for memory in (model.phrases, model.shapes):
        assert memory is not None and (not len(memory.counts) or memory.counts.min() >= MIN_COUNT)
    assert len(model.shapes.keys) > 0
    assert model.phrases.ends and model.shapes.ends        # whole inscriptions: their ends count
    # the short phrase levels speak only at the first letters of a lacuna of seven or more
    assert model.phrases.sides == PHRASE_LEVELS and model.phrases.least == PHRASE_LEAST
    assert PHRASE_LEVELS[:2] == ((2, 2), (4, 0)) and PHRASE_LEAST[:2] == (6, 6)
    shipped = infill.load_model("builtin:latin", device="cpu").phrases
    assert (shipped.sides, shipped.least) == (PHRASE_LEVELS, PHRASE_LEAST)
    assert model.phrases.pool and shipped.pool      # the mirror levels (8, 0), (0, 8) pooled
    # the word pairs seen twice are kept, as in the shipped pairs.tsv (the fixtures' training
    # split has two)
    pairs = [line.split("\t") for line in
             (tmp_path / "m" / "pairs.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    assert len(pairs) == 2 and all(float(count) >= PAIRS_MIN for *_, count in pairs)
    # the lexicon: an inscription's word (each training inscription once) at LEXICON_SCALE, a
    # word of the literature by its count there, a literary hapax left out
    lexicon = dict(line.split("\t") for line in
                   (tmp_path / "m" / "lexicon.tsv").read_text(encoding="utf-8").splitlines()[1:])
    assert float(lexicon["salbiae"]) == LEXICON_SCALE            # once, in one inscription
    assert float(lexicon["vixit"]) == LEXICON_SCALE + 40         # and 40 times in the literature
    assert float(lexicon["levis"]) == 40 and "unicum" not in lexicon
    fill = infill.fill(model, "d m ????? vixit", marker="?", top_k=1)[0][0]
    assert len("".join(fill.fills)) == 5


def test_an_unclear_latin_letter_is_restored_among_latin_lookalikes(latin_char_dir, tmp_path):
    import infill
    from infill.data.letters import lookalikes
    from infill.epigraphy import restore_files

    path = tmp_path / "unclear.xml"
    path.write_text('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" '
                    'xml:lang="la"><ab>d m f<unclear>e</unclear>lix vixit</ab></div></body>'
                    '</text></TEI>', encoding="utf-8")
    model = infill.load_model(latin_char_dir, device="cpu")
    [r] = restore_files(model, [str(path)], top_k=3, unclear="restore")
    assert r.error is None, r.error
    [lac] = [lac for lac in r.edition.lacunae if lac.kind == "unclear"]
    assert lac.editor == "e" and r.readings[lac.index]
    assert {x.text for x in r.readings[lac.index]} <= set(lookalikes("e"))

