"""``lacuna_edges``: a lacuna's first and last characters are letters (never a word space) where
the model recommends it or the user asks; the beam's scores are untouched, only the space is
kept off the edges (compared with the unrestricted fill and with brute force)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import infill
from infill.data.builtins import builtin_path
from infill.decoding.letters import edge_positions
from infill.errors import ConfigError, InputError, ModelLoadError
from infill.filling.defaults import recommendation
from infill_cli.main import main

AENEAS = Path(__file__).resolve().parents[1] / "fixtures" / "aeneas" / "aeneas_tiny_latin_jax.pkl"


@pytest.fixture(scope="module")
def latin():
    return infill.load_model("builtin:latin", device="cpu")


def fills(result) -> list[str]:
    return ["".join(c.fills) for c in result]


def fill(model, text: str, **options) -> list:
    """The completions of one text."""
    return infill.fill(model, [text], **options)[0]


def test_edge_positions_are_the_ends_of_each_run_of_adjacent_gap_positions():
    assert edge_positions([[3], [4], [5], [9], [12], [13]]) == [3, 5, 9, 12, 13]
    assert edge_positions([[7, 8, 9, 10]]) == [7, 10]
    assert edge_positions([[2]]) == [2]
    assert edge_positions([]) == []


def test_one_letter_lacuna_is_the_unrestricted_ranking_without_the_space(latin):
    """One position: the standard score of a fill is log q(w | context) (brute force: every
    output the gap may take); 'letters' gives the same ranking and scores, the space left out."""
    text = "Crys?ae L l"
    n = int(latin.allowed_mask().sum())
    every = fill(latin, text, marker="?", beam_size=n, top_k=n, lacuna_edges="any")
    kept = fill(latin, text, marker="?", beam_size=n, top_k=n, lacuna_edges="letters")
    assert " " in fills(every)
    want = [(f, c.score) for f, c in zip(fills(every), every) if f != " "]
    assert [f for f, _ in want] == fills(kept)
    assert [c.score for c in kept] == pytest.approx([s for _, s in want], abs=1e-6)


def test_longer_lacuna_keeps_spaces_inside_and_off_its_edges(latin):
    """Untyped word spaces around a lacuna: 'any' fills them, 'letters' keeps them inside."""
    text = "d m?????felici vixit annis xxv"
    got = fills(fill(latin, text, marker="?", beam_size=20, top_k=20,
                            lacuna_edges="letters"))
    assert len(got) == 20 and all(f[0] != " " and f[-1] != " " for f in got)
    assert any(" " in f for f in got)              # a word space may fall inside a lacuna
    loose = fills(fill(latin, text, marker="?", beam_size=20, top_k=20, lacuna_edges="any"))
    assert all(f[0] == " " or f[-1] == " " for f in loose[:5])


def test_builtin_latin_recommends_letters_and_says_so(latin):
    assert recommendation("builtin:latin").lacuna_edges == "letters"
    res = infill.fill_each(latin, ["Crys?ae L l"], marker="?", top_k=3)[0]
    assert res.defaults.values["lacuna_edges"] == "letters"
    assert res.to_json()["config"]["lacuna_edges"] == "letters"
    assert " " not in fills(res.completions)
    chosen = infill.fill_each(latin, ["Crys?ae L l"], marker="?", top_k=3, lacuna_edges="any")[0]
    assert "lacuna_edges" not in chosen.defaults.values
    assert chosen.to_json()["config"]["lacuna_edges"] == "any"


def test_cli_flag_and_its_errors():
    ok = CliRunner().invoke(main, ["run", "-m", "builtin:latin", "--json", "-k", "3",
                                   "--lacuna-edges", "any", "Crys?ae L l"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["config"]["lacuna_edges"] == "any"
    bad = CliRunner().invoke(main, ["run", "-m", "builtin:latin", "--lacuna-edges", "spaces",
                                    "Crys?ae L l"])
    assert bad.exit_code == 2 and "lacuna-edges" in bad.output and "Traceback" not in bad.output


def test_readings_are_scored_alike_and_say_which_rule_ran(latin):
    """A typed reading has no space at its ends (readings are stripped): its exact score is the
    same under either rule, and the answer says which ran."""
    text = "Crys?ae L l"
    kept = infill.readings(latin, text, [["i", "c"]])
    loose = infill.readings(latin, text, [["i", "c"]], lacuna_edges="any")
    assert [(c.readings, c.score) for c in kept.combinations] == \
        [(c.readings, pytest.approx(c.score, abs=1e-6)) for c in loose.combinations]
    assert kept.to_json()["config"]["lacuna_edges"] == "letters"
    assert loose.to_json()["config"]["lacuna_edges"] == "any"
    assert " " not in fills(kept.completions) and " " in fills(loose.completions)


def test_letter_sets_and_edges_intersect(latin):
    """Letter sets hold no space: at an edge 'letters' leaves them as they are."""
    got = fill(latin, "d m???felici", marker="?", letters=[["io"], ["ul"], ["li"]], top_k=5,
               lacuna_edges="letters")
    # a Latin set's u allows v: one letter on the stone
    assert fills(got) and all(f[0] in "io" and f[1] in "ulv" and f[2] in "li" for f in fills(got))


def test_word_pieces_hold_the_rule_by_construction(bert):
    """A WordPiece BERT writes no word space: 'letters' changes no completion and is recorded;
    'any' (its default) is not reported."""
    kept = infill.fill_each(bert, ["the ___ sat"], top_k=3, lacuna_edges="letters")[0]
    loose = infill.fill_each(bert, ["the ___ sat"], top_k=3)[0]
    assert fills(kept.completions) == fills(loose.completions)
    assert kept.to_json()["config"]["lacuna_edges"] == "letters"
    assert "lacuna_edges" not in loose.to_json()["config"]


def test_aeneas_own_search_refuses_letters():
    model = infill.load_model(str(AENEAS), device="cpu")
    with pytest.raises(ConfigError, match="lacuna_edges"):
        fill(model, "vixit annis ??", lacuna_edges="letters", beam_size=2)


def test_a_malformed_recommendation_names_the_file(tmp_path):
    d = tmp_path / "latin"
    shutil.copytree(builtin_path("builtin:latin"), d)
    rec = json.loads((d / "defaults.json").read_text(encoding="utf-8"))
    (d / "defaults.json").write_text(json.dumps({**rec, "lacuna_edges": "never"}))
    with pytest.raises(ModelLoadError, match="lacuna_edges"):
        recommendation(str(d))
