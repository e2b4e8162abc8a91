"""Names as a class for whole lost words (infill/models/proper_names.py): the mixture's exact values on a
hand-made example, the names compiled from an EpiDoc edition and from capitalised literary
words, the file's round trip (a user's line added by hand), corrupt files as one error, and
`infill train greek --inscriptions` writing names.tsv."""
import shutil

import pytest
import torch
from click.testing import CliRunner

import infill
from infill.data.epidoc import read_edition_text
from infill.data.greek import GREEK
from infill.data.inscriptions import edition_names
from infill.errors import ModelLoadError
from infill.models.char import CharConfig, CharTransformer, save_char
from infill.models.lexicon import build_lexicon, word_weights
from infill.models.proper_names import (NAMES_FILE, build_names, literary_names, load_names, read_names,
                                 save_names, with_names)
from infill.models.phrases import PAIRS_FILE, build_pairs, pair_counts
from infill_cli.main import main

A = GREEK
V = A.n_outputs
TEXTS = ["ιερευσ διων", "ιερευσ διων", "ιερευσ ηρωσ", "ιερευσ ζηνων", "ζηνων διων"]
ENTRIES = {("διων", "iospe"): 2.0, ("ζηνων", "iospe"): 1.0, ("θεων", "literary"): 10.0,
           ("δαμων", "literary"): 10.0, ("ιων", "user"): 1.0}
SCALES = {"iospe": 1.0, "literary": 0.1}
TEI = '<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body>{}</body></text></TEI>'
NAMED = ('<lb n="1"/><persName type="attested"><name>Διονύσιος</name> <name>Ἀπολλω<supplied '
         'reason="lost">νίου</supplied></name></persName> <w>ἀνέθηκεν</w> <persName '
         'type="divine"><w>θεῷ</w> <name>Ἀπόλλωνι</name></persName> <w>μηνὸς</w> <rs '
         'type="month"><w>Ληναιῶνος</w></rs> <w>ἐν</w> <placeName>Χερσονήσῳ</placeName> '
         '<name>Ἡρα<gap reason="lost" quantity="3" unit="character"/></name>')


def edition(body: str) -> str:
    return TEI.format(f'<div type="edition" xml:lang="grc" xml:space="preserve"><ab>{body}'
                      '</ab></div>')


def _names(beta=0.5, prior=0.0):
    lexicon = build_lexicon(dict(word_weights(TEXTS, A)), A, beta=1.0)
    pairs = build_pairs(pair_counts(TEXTS, A), A, lexicon)
    return build_names(ENTRIES, A, pairs, beta, SCALES, prior=prior)


def _ids(text: str) -> torch.Tensor:
    return torch.tensor([[A.start_id] + [A.mask_id if c == "?" else A.char_to_id(c)
                                         for c in text]])


def _want(q: torch.Tensor, lam: float, m: dict[str, float]) -> torch.Tensor:
    """q' = S λ m + (1 − λ) q off the unknown symbol and '-', q there (by hand)."""
    special = torch.zeros(V, dtype=torch.bool)
    special[[A.unk_id, A.missing_id]] = True
    mm = torch.zeros(V, dtype=torch.float64)
    for letter, p in m.items():
        mm[A.char_to_id(letter)] = p
    return torch.where(special, q, q[~special].sum() * lam * mm + (1 - lam) * q)


@pytest.mark.parametrize("text, t, lam, m", [
    # after ιερευσ: 4-letter words διων 2 (a NAME), ηρωσ 1: λ = 2 / (3 + 0.5); 4-letter names
    # διων 2 and θεων 10 * 0.1 = 1
    ("ιερευσ ????", 8, 2 / 3.5, {"δ": 2 / 3, "θ": 1 / 3}),
    ("ιερευσ ????", 9, 2 / 3.5, {"ι": 2 / 3, "ε": 1 / 3}),
    ("ιερευσ δ???", 9, 2 / 3.5, {"ι": 1.0}),              # only διων agrees with δ
    # ιων, a user's name never seen as a neighbour: the class NAME's counts (ζηνων διων) 1 / 1
    ("ιων ????", 5, 1 / 1.5, {"δ": 2 / 3, "θ": 1 / 3}),
    # both sides: ιερευσ ζηνων (1 / 1) and ζηνων διων (1 / 1); 5-letter names ζηνων 1, δαμων 1
    ("ιερευσ ????? διων", 8, 2 / 2.5, {"ζ": 0.5, "δ": 0.5}),
])
def test_the_mixture_is_its_definition_by_hand(text, t, lam, m):
    names = _names(beta=0.5)
    logq = torch.log_softmax(torch.randn(1, 1, V, generator=torch.Generator().manual_seed(t)), -1)
    got = names.mix(logq, _ids(text), torch.tensor([[t]]))[0, 0].double().exp()
    torch.testing.assert_close(got, _want(logq[0, 0].double().exp(), lam, m), rtol=1e-6,
                               atol=1e-9)
    assert abs(float(got.sum()) - 1) < 1e-6


@pytest.mark.parametrize("text, t", [("ηρωσ ????", 6),      # not a name, never a neighbour
                                     ("ιερευσ ???", 8),      # no NAME of 3 letters after it
                                     ("ιερευσ ρ???", 9)])    # no name agrees with ρ
def test_where_no_name_can_stand_q_is_left_alone(text, t):
    logq = torch.log_softmax(torch.randn(1, 1, V), -1)
    assert torch.equal(_names().mix(logq, _ids(text), torch.tensor([[t]])), logq)


@pytest.mark.parametrize("text, t, lam, m", [
    # no neighbour says anything: γ P(NAME | 4 letters), over every neighbour: ιερευσ 2 of 3,
    # ζηνων 1 of 1 -> 3 / 4
    ("ηρωσ ????", 6, 0.5 * 3 / 4, {"δ": 2 / 3, "θ": 1 / 3}),
    ("????", 1, 0.5 * 3 / 4, {"δ": 2 / 3, "θ": 1 / 3}),
    ("ιερευσ ????", 8, 2 / 3.5, {"δ": 2 / 3, "θ": 1 / 3}),     # a neighbour's own counts
])
def test_the_prior_where_no_neighbour_says(text, t, lam, m):
    names = _names(beta=0.5, prior=0.5)
    logq = torch.log_softmax(torch.randn(1, 1, V, generator=torch.Generator().manual_seed(t)), -1)
    got = names.mix(logq, _ids(text), torch.tensor([[t]]))[0, 0].double().exp()
    torch.testing.assert_close(got, _want(logq[0, 0].double().exp(), lam, m), rtol=1e-6,
                               atol=1e-9)


def test_names_are_compiled_from_an_edition_and_from_capitalised_literary_words():
    got = edition_names(read_edition_text(edition(NAMED)))
    # the name's words, supplements read; not the title θεῷ, nor a name with a lost letter
    assert got == ["διονυσιοσ", "απολλωνιου", "απολλωνι", "ληναιωνοσ", "χερσονησω"]
    lines = ["ἔφη Ἀχιλλεύς. Ἀχιλλεύς δʼ ἔφη, ὦ Ἀχιλλεύς", "καὶ Ἀθήνη καὶ Ἀθήνη εἶπε.",
             "Καὶ τότε ἔφη καὶ ἔφη", "ἀθήνη ἀθήνη ἀθήνη"]
    # sentence-initial capitals are no evidence; a word more often lower case is no name
    assert literary_names(lines) == {"αχιλλευσ": 2}


def test_the_file_round_trips_and_a_users_line_is_read(tmp_path):
    path = save_names(tmp_path / NAMES_FILE, ENTRIES, A, 0.5, SCALES)
    entries, head = read_names(path, A)
    assert entries == ENTRIES and head["beta"] == 0.5 and head["scales"] == SCALES and \
        head["prior"] == 0.0
    with path.open("a", encoding="utf-8") as f:
        f.write("Φίλων\t3\tuser\n")          # added with a text editor: normalized on reading
    lexicon = build_lexicon(dict(word_weights(TEXTS, A)), A, beta=1.0)
    names = load_names(path, A, build_pairs(pair_counts(TEXTS, A), A, lexicon))
    assert bytes(A.encode("φιλων")) in names.members and \
        bytes(A.encode("θεων")) not in names.members          # literary: not in the class
    table, weights = names.names[5]
    assert sorted(zip(map(A.decode, table), weights)) == [("δαμων", 1.0), ("ζηνων", 1.0),
                                                          ("φιλων", 3.0)]
    # the lexicon learns the names it lacks (a partly preserved name completes)
    pattern = tuple(A.encode("φι")) + (A.mask_id,) * 3
    assert lexicon.marginal(pattern, 2)[1] == 0
    m, n = with_names(lexicon, names).marginal(pattern, 2)
    assert n == 3.0 and m[A.char_to_id("λ")] == 1.0


HEAD = '#infill-names {"beta": 1, "letters": "' + A.letters + '"}\n'


@pytest.mark.parametrize("content, where", [
    ("διων\t2\tiospe\n", ":1: not an infill names file"),
    ('#infill-names {"beta": 1, "letters": "abc"}\n', ":1: not an infill names file"),
    (HEAD.replace('"beta": 1', '"beta": -1'), ":1: not an infill"),
    (HEAD.replace("}", ', "scales": {"iospe": "x"}}'), ":1: not an infill"),
    (HEAD + "διων\t-2\tiospe\n", ":2: expected"),
    (HEAD + "διων\t2\tiospe\nδιων\t2\tIOSPE!\n", ":3: expected"),
    (HEAD + "διων\t2\n", ":2: expected"),
    (HEAD + "Dion\t2\tuser\n", ":2: expected"),
])
def test_a_corrupt_file_is_one_error_naming_the_file_and_line(tmp_path, content, where):
    (tmp_path / NAMES_FILE).write_text(content, encoding="utf-8")
    with pytest.raises(ModelLoadError, match=NAMES_FILE + where):
        read_names(tmp_path / NAMES_FILE, A)
    (tmp_path / NAMES_FILE).write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ModelLoadError, match=NAMES_FILE + ": cannot read the names"):
        read_names(tmp_path / NAMES_FILE, A)


def test_a_model_directory_loads_its_names_and_a_bad_file_is_exit_2(tmp_path):
    torch.manual_seed(0)
    net = CharTransformer(CharConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_length=64))
    d = save_char(net, tmp_path / "m", A)
    lexicon = build_lexicon(dict(word_weights(TEXTS, A)), A, beta=1.0)
    lexicon.save(d / "lexicon.tsv", A)
    build_pairs(pair_counts(TEXTS, A), A, lexicon).save(d / PAIRS_FILE, A)
    save_names(d / NAMES_FILE, ENTRIES, A, 0.5, SCALES)
    model = infill.load_model(str(d), device="cpu")
    assert model.names is not None and model.names.beta == 0.5
    (d / NAMES_FILE).write_text("garbage\n", encoding="utf-8")
    with pytest.raises(ModelLoadError, match=NAMES_FILE + ":1"):
        infill.load_model(str(d), device="cpu")
    r = CliRunner().invoke(main, ["run", "-m", str(d), "ιερευσ ????"])
    assert r.exit_code == 2 and "Traceback" not in r.output and NAMES_FILE in r.output


def test_infill_train_greek_with_inscriptions_writes_the_names(tmp_path):
    d = tmp_path / "iospe"
    d.mkdir()
    for k in range(1, 11):
        (d / f"1.{k}.xml").write_text(edition(NAMED), encoding="utf-8")
    corpus = tmp_path / "lit.txt"
    corpus.write_text("\n".join(["μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην"] * 10),
                      encoding="utf-8")
    out = tmp_path / "m"
    r = CliRunner().invoke(main, ["train", "greek", str(corpus), "--out", str(out), "--steps",
                                  "2", "--batch-size", "4", "--layers", "1", "--hidden", "16",
                                  "--heads", "2", "--max-length", "64", "--no-progress",
                                  "--inscriptions", str(d), "--device", "cpu"])
    assert r.exit_code == 0, r.output
    entries, _ = read_names(out / NAMES_FILE, A)
    n_train = 8                                       # 80% of the 10 editions
    assert entries[("διονυσιοσ", "iospe")] == n_train
    assert entries[("πηληιαδεω", "literary")] == 10 and ("μηνιν", "literary") not in entries
    assert infill.load_model(str(out), device="cpu").names is not None
    bare = tmp_path / "bare"
    shutil.copytree(out, bare)
    (bare / NAMES_FILE).unlink()
    assert infill.load_model(str(bare), device="cpu").names is None
