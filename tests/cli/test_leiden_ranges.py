"""``infill run`` on Leiden text: an approximate lacuna ``[c.n]`` is decoded at every length of
its range (n ± max(1, n/5)) and all completions ranked together, exactly as ``infill.fill`` with
a per-marker gap range does on the converted text."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import infill
from infill_cli.main import main


@pytest.fixture
def runner():
    return CliRunner()


def _lines(r) -> list[dict]:
    return [json.loads(ln) for ln in r.stdout.splitlines() if ln.strip()]


def _same(line: dict, want) -> None:
    """The CLI's completions are the API's: texts, fills, scores and rank scores, exactly."""
    got = line["completions"]
    assert [c["text"] for c in got] == [c.text for c in want]
    assert [c["fills"] for c in got] == [list(c.fills) for c in want]
    assert [c["score"] for c in got] == [c.score for c in want]
    assert [c.get("rank_score") for c in got] == [c.rank_score for c in want]


ILIAD = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχι___ς"


def test_approximate_lacuna_decodes_every_length_of_its_range(runner):
    # builtin:greek (a random tiny model always prefers the shortest fill)
    r = runner.invoke(main, ["run", "-m", "builtin:greek", "-k", "10", "--json",
                             ILIAD.replace("___", "[c.3]"), "αβ[...]γ"])
    assert r.exit_code == 0, r.output
    ranged, exact = _lines(r)
    assert ranged["input"] == ILIAD and ranged["gap"] == [[2, 4]]
    assert ranged["config"]["length_score"] == "per-char-0.7"    # builtin:greek's defaults
    assert ranged["config"]["length_beam"] == "shared"
    assert ranged["config"]["defaults"]["options"] == ["scorer", "order", "length_score",
                                                       "length_beam", "lacuna_edges"]
    assert "approximate lacuna 'c.3' decoded at every length from 2 to 4, all completions " \
           "ranked together" in ranged["notes"]
    assert {len(c["tokens"]) for c in ranged["completions"]} == {2, 3, 4}
    ranks = [c["rank_score"] for c in ranged["completions"]]
    assert ranks == sorted(ranks, reverse=True)
    m = infill.load_model("builtin:greek", device="cpu")
    _same(ranged, infill.fill(m, ILIAD, gap=[(2, 4)], top_k=10, length_score="per-char-0.7",
                              length_beam="shared")[0])
    # an exact lacuna in the same batch is decoded as before: one length, no rank score
    assert exact["input"] == "αβ???γ" and exact["gap"] == 1
    assert "length_score" not in exact["config"]
    assert all("rank_score" not in c for c in exact["completions"])
    _same(exact, infill.fill(m, "αβ???γ", gap=1, top_k=10)[0])


def test_users_markers_keep_the_gap_option(runner, greek_char_dir):
    r = runner.invoke(main, ["run", "-m", greek_char_dir, "-k", "6", "--gap", "2",
                             "--length-score", "pll-gap", "--json", "α[c.3]β ___ γ"])
    assert r.exit_code == 0, r.output
    (line,) = _lines(r)
    assert line["input"] == "α___β ___ γ" and line["gap"] == [[2, 4], 2]
    assert line["config"]["length_score"] == "pll-gap"
    m = infill.load_model(greek_char_dir, device="cpu")
    _same(line, infill.fill(m, "α___β ___ γ", gap=[(2, 4), 2], top_k=6,
                            length_score="pll-gap")[0])


def test_too_many_combinations_decode_the_stated_lengths(runner, greek_char_dir):
    r = runner.invoke(main, ["run", "-m", greek_char_dir, "-k", "3", "--json",
                             "[c.5]α[c.5]β[c.5]γ[c.5]"])
    assert r.exit_code == 0, r.output
    (line,) = _lines(r)
    assert line["input"] == "?????α?????β?????γ?????" and line["gap"] == 1
    assert line["notes"][0] == ("the 81 combinations of this text's approximate lacuna lengths "
                                "exceed 64: each decoded as exactly its stated length")
    assert all("rank_score" not in c for c in line["completions"])


@pytest.mark.parametrize("text, message", [
    ("αβ[c.1000]γ", "a lacuna count must be between 1 and 500"),
    ("αβ[c.40]γ", "ranges over 32-48 characters, more than the limit of 16 lengths"),
])
def test_huge_approximate_lacunae_are_one_line_errors(runner, greek_char_dir, text, message):
    r = runner.invoke(main, ["run", "-m", greek_char_dir, text])
    assert r.exit_code == 2 and "Traceback" not in r.output
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("Error: input 1:")]
    assert len(errors) == 1 and message in errors[0], r.stderr
