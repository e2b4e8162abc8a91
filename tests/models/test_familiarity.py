"""builtin:protein says when an input lies far outside its training family (HypF/AcyP): the
per-residue log-likelihood of the input against the threshold recorded from its validation
split (infill.models.familiarity, data/models/protein/familiarity.json)."""
import json
import shutil

import pytest
from click.testing import CliRunner

import infill
from infill.data.builtins import builtin_path, models_dir
from infill.models import familiarity as F
from infill_cli.main import main

UBIQUITIN = "MQIFVKTLTGKTITLEVEPSDTIENVKAKIQDKEGIPPDQQRLIF___KQLEDGRTLSDYNIQKESTLHLVLRLRGG"
INSULIN = ("MALWMRLLPLLALLALWGPDPAAAFVNQHLCGSHLVEALYLVCGERGFF___PKTRREAEDLQVGQVELGGGPGAGSLQPLALEG"
           "SLQKRGIVEQCCTSICSLYQLENYCN")


@pytest.fixture(scope="module")
def protein():
    return infill.load_model("builtin:protein")


def demo_acyp() -> list[str]:
    return (models_dir().parent / "demo" / "protein.txt").read_text().split()


def test_threshold_is_recorded_for_the_checkpoint():
    fam = F.load(builtin_path("protein"))
    assert fam is not None and fam.model == "builtin:protein" and fam.percentile == 1.0
    assert -4 < fam.threshold < -1
    assert F.load(builtin_path("protein").parent / "nothing.pt") is None


def test_score_each_known_residue_once(protein):
    enc = protein.encode(UBIQUITIN, 1)
    value, n = F.score(protein, enc.input_ids)
    assert n == len(UBIQUITIN.replace("___", ""))            # the gap is not scored
    assert F.score(protein, enc.input_ids) == (value, n)      # deterministic
    # longer than the model's window: scored window by window, every residue once
    long = protein.tokenize("MKV" * 100)
    assert F.score(protein, long)[1] == 300


def test_far_inputs_get_one_note_family_members_none(protein):
    for text in (UBIQUITIN, INSULIN):
        notes = protein.encode(text, 1).notes
        assert len(notes) == 1 and "far outside builtin:protein's training family" in notes[0]
        assert "(HypF/AcyP (acylphosphatase)): per-residue log-likelihood -3." in notes[0]
        assert "below the -2.52 that 99% of its validation sequences reach" in notes[0]
        assert notes[0].endswith("its fills are guesses")
    for text in demo_acyp():                                  # HypF/AcyP sequences
        assert protein.encode(text, 1).notes == []
    assert protein.encode("MKV___", 1).notes == []            # too little to judge


def test_note_in_json_and_once_on_stderr(protein):
    from infill.api import fill_each
    res, = fill_each(protein, [UBIQUITIN], 1, 1, beam_size=2)
    assert sum("far outside" in n for n in res.notes) == 1
    assert any("far outside" in n for n in res.to_json()["notes"])
    r = CliRunner().invoke(main, ["run", "--model", "builtin:protein", "--beam", "2", "--top-k",
                                  "1", "--json", UBIQUITIN])
    assert r.exit_code == 0, r.output
    assert r.stderr.count("far outside builtin:protein") == 1
    line = json.loads(r.stdout.strip().splitlines()[-1])
    assert any("far outside" in n for n in line["notes"])


def test_only_a_checkpoint_with_a_threshold(tmp_path):
    src = builtin_path("protein")
    copy = tmp_path / "mine.pt"
    shutil.copy(src, copy)
    assert infill.load_model(str(copy)).encode(UBIQUITIN, 1).notes == []
    (tmp_path / F.FILE).write_text((src.parent / F.FILE).read_text())   # names esm2_protein.pt
    assert F.load(copy) is None


@pytest.mark.parametrize("content", ['{"model": "m", "knows": "k", "checkpoint": "c.pt", '
                                     '"threshold": NaN, "percentile": 1}', "[1, 2]",
                                     '{"threshold": -2}', "{" * 200])
def test_a_malformed_record_is_one_line_not_a_silent_skip(tmp_path, content):
    (tmp_path / "c.pt").write_bytes(b"x")
    (tmp_path / F.FILE).write_text(content)
    with pytest.raises(infill.ModelLoadError, match="familiarity"):
        F.load(tmp_path / "c.pt")
