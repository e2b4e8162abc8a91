"""Epigraphic text from EpiDoc for the Greek model, and `infill train greek` with inscriptions,
a word stream and weights carried over from a trained model."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

import infill
from infill.data.greek import GREEK
from infill.data.splits import heldout_texts, split_documents
from infill.errors import InputError
from infill.data.epidoc import read_edition
from infill.data.epidoc_corpus import supplement_tasks
from infill.data.inscriptions import iospe_split, mixed_examples, pack, training_texts
from infill.training.inscriptions import word_list
from infill.models.phrases import PHRASE_BETA
from infill_cli.main import main

TEI = '<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body>{}</body></text></TEI>'
EDITION = """<div type="edition" xml:lang="grc" xml:space="preserve"><ab>
   <lb n="1"/><w>Δεδόχθαι</w> <w>τῷ</w> <w>δή<supplied reason="lost">μῳ</supplied></w>
   <lb n="2"/><gap reason="lost" quantity="2" unit="character"/><w>καὶ</w> <w>ἐπαι
   <lb n="3" break="no"/>νέσαι</w> <choice><sic>ΑΥΤΟΝ</sic><corr>αὐτὸν</corr></choice>
   <expan><abbr>Λ</abbr><ex>ούκιον</ex></expan><note>a note</note>
   <gap reason="lost" extent="unknown" unit="character"/><supplied reason="undefined">ἐν</supplied>
   <supplied reason="lost"><w>τῷ</w> <w>δήμῳ</w></supplied>
</ab></div>
<div type="translation"><p>Resolved by the people</p></div>"""
LINES = ["<w>ἀγαθῇ</w> <w>τύχῃ</w> <w>ὁ</w> <w>δῆμος</w> <w>ἐτίμη<supplied reason=\"lost\">σεν"
         "</supplied></w>", "<w>θεοῖς</w> <gap reason=\"lost\" quantity=\"3\" unit=\"character\"/>"
         " <w>ἀνέθηκεν</w> <w><supplied reason=\"lost\">ὑπὲρ</supplied></w> <w>τῆς</w> <w>πόλεως</w>"]


def edition(body: str) -> str:
    return TEI.format(f'<div type="edition" xml:space="preserve"><ab>{body}</ab></div>')


@pytest.fixture
def epidoc(tmp_path):
    d = tmp_path / "iospe"
    d.mkdir()
    (d / "1.1.xml").write_text(TEI.format(EDITION), encoding="utf-8")
    for k in range(2, 11):
        (d / f"1.{k}.xml").write_text(edition(f"<lb n=\"1\"/>{LINES[k % 2]} <lb/><w>ἔτους</w> "
                                              f"<num>{k}</num>"), encoding="utf-8")
    return d


def test_an_edition_reads_as_text_supplements_and_gaps(epidoc):
    """Supplements as text, lost stretches as '-' (the quantity, else '---'), normalized."""
    assert training_texts([epidoc / "1.1.xml"]) == [
        "δεδοχθαι τω δημω --και επαινεσαι αυτον λουκιον ---εν τω δημω"]


def test_each_supplement_is_hidden_in_turn_the_others_shown_missing(epidoc):
    """The restoration examples are the bench's tasks (infill.data.epidoc_corpus), read from
    the same edition as the training text."""
    tasks = supplement_tasks(read_edition(epidoc / "1.1.xml"))
    assert [(t.text, t.gold, t.whole_word) for t in tasks] == [
        ("Δεδόχθαι τῷ δή?? --καὶ ἐπαινέσαι αὐτὸν Λούκιον ---ἐν -------", "μω", False),
        ("Δεδόχθαι τῷ δή-- --καὶ ἐπαινέσαι αὐτὸν Λούκιον ---ἐν ???????", "τω δημω", True)]
    assert [t.gold for t in supplement_tasks(read_edition(epidoc / "1.1.xml"), {2})] == ["μω"]


def test_the_reader_resolves_no_entities_and_names_a_broken_file(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("σεκρετ")
    f = tmp_path / "ent.xml"
    f.write_text(f'<!DOCTYPE TEI [<!ENTITY x SYSTEM "file://{secret}">]>'
                 + edition("<w>λογος</w> &x; <w>εργον</w>"), encoding="utf-8")
    with pytest.raises(InputError, match=r"ent\.xml: line 1: entity declarations are refused"):
        training_texts([f])
    bad = tmp_path / "bad.xml"
    bad.write_text("<TEI><text>", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.xml: line 1: not well-formed XML"):
        training_texts([bad])


def test_the_split_is_the_committed_by_inscription_split(epidoc):
    parts = iospe_split(epidoc)
    want = split_documents([f"1.{k}" for k in range(1, 11)])
    assert {k: [p.stem for p in v] for k, v in parts.items()} == want


def test_several_folders_are_each_split_on_their_own_and_joined(epidoc, tmp_path):
    import os
    import shutil

    from infill.training.request import ModelOptions

    other = tmp_path / "iaph"
    shutil.copytree(epidoc, other)
    for f in list(other.glob("*.xml"))[:3]:
        f.rename(other / f"b{f.name}")          # another corpus: other names, another order
    both = iospe_split(f"{epidoc}{os.pathsep}{other}")
    one, two = iospe_split(epidoc), iospe_split(other)
    assert both == {k: one[k] + two[k] for k in one}
    assert ModelOptions(inscriptions=[epidoc, other]).inscriptions \
        == f"{epidoc}{os.pathsep}{other}"
    assert ModelOptions(inscriptions=[]).inscriptions is None


def test_packing_keeps_every_text_and_the_window_size():
    texts = ["αβγ δεζ", "ηθι", "κλμ νξο πρσ τυφ χψω", "α"]
    windows = pack(texts, 8, seed=0)
    assert all(len(w) <= 8 for w in windows)
    assert sorted(" ".join(windows).split()) == sorted(" ".join(texts).split())


def test_word_list_counts_words_and_breaks_ties_alphabetically():
    assert word_list(["και δε και", "δε τε-και α"], 3) == ["και", "δε", "α"]


def test_cli_trains_with_inscriptions_and_a_word_stream(tmp_path, epidoc):
    corpus = tmp_path / "lit.txt"
    corpus.write_text("\n".join(["μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην",
                                 "ἀγαθῇ τύχῃ ὁ δῆμος θεοῖς ἀνέθηκεν"] * 30), encoding="utf-8")
    out = tmp_path / "m"
    args = ["train", "greek", str(corpus), "--out", str(out), "--steps", "30", "--eval-every",
            "10", "--batch-size", "8", "--lr", "3e-3", "--warmup", "3", "--no-progress",
            "--layers", "1", "--hidden", "32", "--heads", "2", "--ff", "64", "--max-length",
            "64", "--conv-kernel", "3", "--words", "12", "--inscriptions", str(epidoc),
            "--inscription-copies", "2", "--device", "cpu"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert log[-1]["val_loss"] < log[0]["val_loss"] - 0.3, log
    mix = mixed_examples(corpus, 64, epidoc, 2)
    meta = json.loads((out / "charmodel.json").read_text())
    assert meta["words"] == word_list(mix.texts, 12) and meta["config"]["n_words"] == 12
    split = json.loads((out / "split.json").read_text())
    n_lit = mix.literary
    assert split["n_examples"] == len(mix.examples)
    assert set(range(n_lit, n_lit + mix.train)) <= set(split["train"])
    assert set(split["validation"]) >= set(range(n_lit + mix.train, len(mix.examples)))
    # the validation inscription's text validates, never trains; heldout rebuilds the split
    val_name = iospe_split(epidoc)["validation"][0]
    val_text = training_texts([val_name])[0]
    assert any(val_text in t for t in heldout_texts(out, "validation"))
    assert not any(val_text in GREEK.decode(mix.examples[i]) for i in split["train"])
    lm = infill.load_model(str(out), device="cpu")
    assert lm.model.words is not None and lm.max_length == 64
    assert meta["own_text"] == {"sides": "3:3,8:0,0:8,6:6", "beta": PHRASE_BETA}
    assert lm.own_text.beta == PHRASE_BETA and lm.mixed[-2:] == ("own_words", "own_text")
    assert meta["own_words"] == {"beta": 1.0, "shortest": 4, "bare": 10.0} == \
        lm.own_words.settings()
    assert infill.fill(lm, "ο δημοσ ετιμη??", top_k=2)[0][0].text.startswith("ο δημοσ ετιμη")
    # a run started from these weights begins where this one ended
    again = tmp_path / "again"
    r = CliRunner().invoke(main, [a if a != str(out) else str(again) for a in args]
                           + ["--init-from", str(out), "--steps", "1"])
    assert r.exit_code == 0, r.output
    first = json.loads((again / "train_log.jsonl").read_text().splitlines()[0])
    assert first["step"] == 0 and abs(first["val_loss"] - log[-1]["val_loss"]) < 0.02
    assert json.loads((again / "charmodel.json").read_text())["words"] == meta["words"]
    r = CliRunner().invoke(main, args[:4] + [str(tmp_path / "x"), "--steps", "1",
                                             "--init-from", str(out), "--hidden", "16"])
    assert r.exit_code == 2 and "Error: --init-from" in r.output


def test_several_folders_train_one_memory_each_behind_a_gate(tmp_path, epidoc):
    import shutil

    from infill.models.gate import GATE_FILE
    from infill.models.phrases import PHRASES_FILE

    other = tmp_path / "IAph"
    shutil.copytree(epidoc, other)
    for f in other.glob("1.[2-9].xml"):
        f.write_text(edition("<lb n=\"1\"/><w>ἔδοξε</w> <w>τᾶι</w> <w>βουλᾶι</w> <w>καὶ</w> "
                             "<w>τῶι</w> <w>δάμωι</w>"), encoding="utf-8")
    corpus = tmp_path / "lit.txt"
    corpus.write_text("ἀγαθῇ τύχῃ ὁ δῆμος θεοῖς ἀνέθηκεν\n" * 20, encoding="utf-8")
    out = tmp_path / "m"
    r = CliRunner().invoke(main, [
        "train", "greek", str(corpus), "--out", str(out), "--steps", "2", "--batch-size", "4",
        "--no-progress", "--layers", "1", "--hidden", "16", "--heads", "2", "--max-length", "64",
        "--inscriptions", str(epidoc), "--inscriptions", str(other), "--device", "cpu"])
    assert r.exit_code == 0, r.output
    gate = json.loads((out / GATE_FILE).read_text())
    assert [s["name"] for s in gate["sources"]] == ["iospe", "iaph"]
    assert not (out / PHRASES_FILE).exists()
    model = infill.load_model(str(out), device="cpu")
    memories = {s.name: s.phrases for s in model.gate.sources}
    for name, folder in (("iospe", epidoc), ("iaph", other)):
        texts = training_texts(iospe_split(folder)["train"])
        assert memories[name].counts.sum() > 0
        doric = any("δαμωι" in t for t in texts)
        line = "εδοξε ται βουλαι και τωι δαμωι"
        evidence = model.gate.log_likelihood(
            memories[name], np.array([[GREEK.start_id] + GREEK.encode(line)]))[0]
        unseen = len(line) * np.log(1 / len(model.gate.text_ids))   # no context of it seen
        assert (evidence > unseen) == doric, (name, evidence)
