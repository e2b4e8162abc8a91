"""Builtin models: name resolution, `infill models`, and the shipped english/greek models."""
import json

import pytest
import torch
from click.testing import CliRunner

import infill
from infill_cli.main import main
from infill.errors import ModelLoadError
from infill.data.greek import normalize
from infill.data.builtins import BUILTINS, Builtin, builtin_path, disk_size, models_dir
from infill.models.char import CharConfig, CharMaskedLM, CharTransformer, save_char

MB = 1_000_000


def test_unknown_builtin_lists_the_available_names():
    with pytest.raises(ModelLoadError) as e:
        infill.load_model("builtin:klingon")
    msg = str(e.value)
    assert "klingon" in msg and all(f"builtin:{n}" in msg for n in BUILTINS)


def test_missing_builtin_says_where_it_should_be(tmp_path, monkeypatch):
    monkeypatch.setenv("INFILL_MODELS_DIR", str(tmp_path))
    assert models_dir() == tmp_path
    with pytest.raises(ModelLoadError, match="builtin model 'greek' is missing"):
        builtin_path("builtin:greek")
    (tmp_path / "greek").mkdir()          # a directory without a model is still missing
    with pytest.raises(ModelLoadError, match="is missing"):
        infill.load_model("builtin:greek")


def test_file_and_glob_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("INFILL_MODELS_DIR", str(tmp_path))
    (tmp_path / "protein").mkdir()
    (tmp_path / "protein" / "esm2_protein.pt").write_bytes(b"x" * 10)
    (tmp_path / "protein" / "esm2_protein-contact-regression.pt").write_bytes(b"y")
    assert builtin_path("protein") == tmp_path / "protein" / "esm2_protein.pt"
    assert disk_size(builtin_path("protein")) == 10
    monkeypatch.setitem(BUILTINS, "glob", Builtin("glob", "protein/esm2*.pt", "protein", "test"))
    with pytest.raises(ModelLoadError, match="ambiguous"):
        builtin_path("builtin:glob")
    (tmp_path / "protein" / "esm2_protein-contact-regression.pt").unlink()
    assert builtin_path("builtin:glob") == tmp_path / "protein" / "esm2_protein.pt"


def test_models_command_lists_builtins(tmp_path, monkeypatch):
    monkeypatch.setenv("INFILL_MODELS_DIR", str(tmp_path))
    torch.manual_seed(0)
    save_char(CharTransformer(CharConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32,
                                         max_length=16)), tmp_path / "greek")
    r = CliRunner().invoke(main, ["models"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].split() == ["name", "family", "size"]      # each description wrapped below
    assert all(len(line) <= 100 for line in lines)
    lines = [line for line in lines if not line.startswith(" ")]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert set(rows) == {"builtin:english", "builtin:greek", "builtin:latin", "builtin:protein",
                         "antiberty", "sapiens-vh", "sapiens-vl"}
    assert rows["builtin:greek"][1] == "greek" and rows["builtin:greek"][3] == "MiB"
    assert rows["builtin:english"][1:3] == ["english", "missing"]
    assert rows["sapiens-vh"][1] == "antibody"
    r = CliRunner().invoke(main, ["models", "--json"])
    listed = [json.loads(line) for line in r.output.splitlines()]
    assert [x["name"] for x in listed] == [line.split()[0] for line in lines[1:]]
    assert {x["name"]: x["status"] for x in listed}["builtin:english"] == "missing"
    assert {x["name"]: x["bytes"] for x in listed}["builtin:greek"] > 0
    # the model it lists is the one that loads
    assert isinstance(infill.load_model("builtin:greek", device="cpu"), CharMaskedLM)


# ---- the shipped models ----------------------------------------------------------------
@pytest.mark.parametrize("name, limit", [("english", 40), ("greek", 50)])   # issues 21 and 20
def test_shipped_model_is_small_and_recorded(name, limit):
    path = builtin_path(f"builtin:{name}")
    assert disk_size(path) <= limit * MB
    info = json.loads((path / "train_info.json").read_text())
    assert info["family"] == name and info["result"]["step"] > 0
    assert (path / "split.json").exists()


def test_builtin_greek_restores_offline():
    lm = infill.load_model("builtin:greek", device="cpu")
    assert isinstance(lm, CharMaskedLM) and lm.default_pivot == lm.token_to_id("-")
    out = infill.fill(lm, "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ?ος", beam_size=5, top_k=5)[0]
    assert len(out) == 5
    assert all(c.text == "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ" + c.fills[0] + "ος" for c in out)
    assert all(c.fills[0] not in ("-", "^") for c in out)
    for scorer in ("hcb", "standard"):
        res = infill.fill(lm, "και ___ θεοσ", gap=3, scorer=scorer, order="best-to-worst")[0]
        assert all(len(c.fills[0]) == 3 for c in res)
        assert [c.score for c in res] == sorted((c.score for c in res), reverse=True)


def test_builtin_greek_through_the_cli():
    r = CliRunner().invoke(main, ["run", "--model", "builtin:greek", "--top-k", "3",
                                  "--json", "Ἄνδρα μοι ἔννεπε, Μοῦσα, πολύτροπ?ν"])
    assert r.exit_code == 0, r.output
    rec = json.loads(r.output.splitlines()[0])
    assert len(rec["completions"]) == 3
    assert all(c["text"] == "Ἄνδρα μοι ἔννεπε, Μοῦσα, πολύτροπ" + c["fills"][0] + "ν"
               for c in rec["completions"])


def test_builtin_english_fills_offline():
    lm = infill.load_model("builtin:english", device="cpu")
    out = infill.fill(lm, "To be, or not to ___, that is the question.", gap=1, top_k=5)[0]
    assert len(out) == 5 and all(c.text.startswith("To be, or not to ") for c in out)
    assert all("[" not in f for c in out for f in c.fills)   # no [MASK]/[UNK]/[CLS] filled
    r = CliRunner().invoke(main, ["run", "--gap", "2", "--json", "O Romeo, ___ art thou Romeo?"])
    assert r.exit_code == 0, r.output   # builtin:english is the default model of `infill run`
    assert len(json.loads(r.output.splitlines()[0])["completions"]) == 5


def test_builtin_english_recites_its_training_lines_with_its_defaults():
    """Regression check of the shipped model and its corpus memory, with its recorded defaults
    (a whole word, pll-word): training lines as users type them -- without the play's
    punctuation, up to the gap, a word of three pieces, the rest of a word begun -- come out
    as the play has them (docs/BENCHMARKS.md, Accuracy; data/README.md, builtin:english)."""
    lm = infill.load_model("builtin:english", device="cpu")
    lines = {"To be, or not to ___, that is the question.": "be",
             "Friends, Romans, countrymen, lend me your ___": "ears",
             "Alas, poor ___! I knew him, Horatio": "Yorick",          # Y ##oric ##k
             "Neither a borrower nor a ___ be": "lender",               # lend ##er
             "Get thee to a nun___": "nery"}                            # nun + ##ner ##y
    out = infill.fill(lm, list(lines), top_k=1)
    assert [o[0].text for o in out] == [t.replace("___", w) for t, w in lines.items()]


def test_builtin_greek_restores_better_than_chance():
    """Regression check of the shipped model: restore each letter of Odyssey 1.1-2 in turn.

    Measured when the model was trained: top-1 0.44, top-5 0.85 over 79 letters (chance: 1/24
    and 5/24; always guessing the most frequent letter: about 0.1).
    """
    lm = infill.load_model("builtin:greek", device="cpu")
    text = normalize("ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ πλάγχθη, ἐπεὶ Τροίης "
                     "ἱερὸν πτολίεθρον ἔπερσεν")
    spots = [i for i, c in enumerate(text) if c.isalpha()]
    inputs = [text[:i] + "?" + text[i + 1:] for i in spots]
    out = infill.fill(lm, inputs, top_k=5)
    # fills come in the user's script (accents of a known word, final ς): compare normalized letters
    top1 = sum(normalize(o[0].fills[0]) == text[i] for o, i in zip(out, spots)) / len(spots)
    top5 = sum(text[i] in [normalize(c.fills[0]) for c in o] for o, i in zip(out, spots)) / len(spots)
    assert len(spots) == 79 and top1 >= 0.40 and top5 >= 0.70, (top1, top5)
