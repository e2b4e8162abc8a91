"""What a gap marker stands for when the user gives no length: the model's recommended ``gap``
(defaults.json; builtin:english: one whole word), else 1 token -- resolved by the library,
recorded in the results and said by every front end."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import infill
from infill.filling.defaults import fixed_gap, recommendation
from infill.errors import ModelLoadError
from infill_cli.main import main

TEXT = "And here's ___"
WHY = "whole words measured best"


@pytest.fixture(scope="module")
def word_dir(recommending):
    """builtin:english copied, recommending a whole-word gap."""
    return recommending("english", {"scorer": "hcb", "order": "left-to-right", "gap": "word",
                                    "why": WHY})


@pytest.fixture(scope="module")
def token_dir(recommending):
    """The same model recommending no gap: infill's one token."""
    return recommending("english", {"scorer": "hcb", "order": "left-to-right", "why": WHY})


def test_the_builtin_english_model_recommends_a_whole_word():
    assert recommendation("builtin:english").gap == "word"
    assert recommendation("builtin:greek").gap is None


@pytest.mark.parametrize("gap, read", [("word", "word"), ("2-3", "2-3"), (2, 2), (" Word ", "word")])
def test_a_recommended_gap_is_read_as_a_typed_one(tmp_path, gap, read):
    (tmp_path / "defaults.json").write_text(json.dumps(
        {"scorer": "hcb", "order": "left-to-right", "gap": gap, "why": WHY}))
    assert recommendation(str(tmp_path)).gap == read


@pytest.mark.parametrize("gap", ["x", 0, -1, True, [1], "3-1", 1.5])
def test_a_malformed_recommended_gap_names_the_file(tmp_path, gap):
    (tmp_path / "defaults.json").write_text(json.dumps(
        {"scorer": "hcb", "order": "left-to-right", "gap": gap, "why": WHY}))
    with pytest.raises(ModelLoadError, match=r"defaults\.json: \"gap\""):
        recommendation(str(tmp_path))


def test_fill_without_a_gap_fills_the_recommended_whole_word(word_dir, token_dir):
    word = infill.load_model(str(word_dir), device="cpu")
    token = infill.load_model(str(token_dir), device="cpu")
    auto = infill.fill_each(word, [TEXT], top_k=5)[0]
    given = infill.fill_each(word, [TEXT], gap="word", top_k=5)[0]
    assert [(c.text, c.score, c.rank_score) for c in auto.completions] == \
        [(c.text, c.score, c.rank_score) for c in given.completions]
    assert auto.defaults.values == {"gap": "word", "scorer": "hcb", "order": "left-to-right"}
    assert given.defaults.values == {"scorer": "hcb", "order": "left-to-right"}
    assert all(c.fills[0][:1].isalpha() for c in auto.completions)      # words, no '.'
    one = infill.fill_each(token, [TEXT], top_k=5)[0]
    assert [c.text for c in one.completions] == \
        [c.text for c in infill.fill_each(word, [TEXT], gap=1, top_k=5)[0].completions]
    assert "gap" not in one.defaults.values and all(c.rank_score is None for c in one.completions)


def test_run_says_and_records_the_gap_it_used(word_dir, monkeypatch):
    r = CliRunner().invoke(main, ["run", "--json", "--model", str(word_dir), TEXT])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["gap"] == "word" and out["config"]["defaults"]["options"] == \
        ["gap", "scorer", "order"]
    r = CliRunner().invoke(main, ["run", "--json", "--model", str(word_dir), "--gap", "1", TEXT])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["gap"] == 1 and out["config"]["defaults"]["options"] == ["scorer", "order"]
    monkeypatch.setattr("infill_cli.status.interactive", lambda: True)
    r = CliRunner().invoke(main, ["run", "--model", str(word_dir), TEXT])
    assert r.exit_code == 0, r.output
    assert r.stderr.splitlines()[0].startswith("defaults: gap word, scorer hcb, order "
                                               "left-to-right")   # the why: --json, models -m


def test_sample_fills_the_models_fixed_gap_and_says_why_it_cannot_fill_a_word(
        word_dir, recommending, monkeypatch):
    """Sampling fills a fixed number of tokens: a model's recorded length is used, a whole-word
    (or range) recommendation falls back to 1 token with a note, a given --gap wins."""
    two = recommending("english", {"scorer": "hcb", "order": "left-to-right", "gap": 2,
                                   "why": WHY})
    assert fixed_gap(None, str(two)) == (2, None)
    assert fixed_gap(3, str(word_dir)) == (3, None)
    gap, note = fixed_gap(None, str(word_dir))
    assert gap == 1 and "one whole word" in note and "--gap N" in note
    args = ["sample", "--json", "--sweeps", "2", "--chains", "2", TEXT]
    out = json.loads(CliRunner().invoke(main, args[:1] + ["--model", str(two)] + args[1:]).stdout)
    assert out["gap"] == 2 and all(len(s["tokens"]) == 2 for s in out["samples"])
    monkeypatch.setattr("infill_cli.status.interactive", lambda: True)
    r = CliRunner().invoke(main, args[:1] + ["--model", str(word_dir)] + args[1:])
    assert r.exit_code == 0, r.output
    assert " ".join(x.strip() for x in r.stderr.splitlines()).startswith(note)  # wrapped
    assert json.loads(r.stdout)["gap"] == 1


def test_a_recommended_length_score_ranks_the_lengths_unless_one_is_chosen(recommending,
                                                                           monkeypatch):
    """defaults.json's "length_score" ranks a whole-word (or range) gap's lengths when the user
    chooses none; it is recorded and said only where lengths are ranked; a bad one names the file."""
    assert recommendation("builtin:english").length_score == "pll-word"
    assert recommendation("builtin:greek").length_score == "per-char-0.7"
    d = recommending("english", {"scorer": "hcb", "order": "left-to-right", "gap": "word",
                                 "length_score": "pll-gap", "why": WHY})
    m = infill.load_model(str(d), device="cpu")
    auto = infill.fill_each(m, [TEXT], top_k=5)[0]
    for kind in ("pll-gap", "pll"):
        given = infill.fill_each(m, [TEXT], top_k=5, length_score=kind)[0]
        same = [(c.text, c.rank_score) for c in auto.completions] == \
            [(c.text, c.rank_score) for c in given.completions]
        assert same == (kind == "pll-gap")         # the two scores differ on this line
    assert auto.length_score == "pll-gap" and auto.defaults.values["length_score"] == "pll-gap"
    fixed = infill.fill_each(m, [TEXT], gap=1, top_k=5)[0]
    assert "length_score" not in fixed.to_json()["config"]["defaults"]["options"]  # nothing ranked
    monkeypatch.setattr("infill_cli.status.interactive", lambda: True)
    r = CliRunner().invoke(main, ["run", "--json", "--model", str(d), TEXT])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["config"]["length_score"] == "pll-gap"
    assert r.stderr.splitlines()[0].startswith("defaults: gap word, scorer hcb, order "
                                               "left-to-right, length-score pll-gap")
    r = CliRunner().invoke(main, ["run", "--json", "--model", str(d), "--length-score", "pll",
                                  TEXT])
    assert json.loads(r.stdout)["config"]["length_score"] == "pll"
    (d / "defaults.json").write_text(json.dumps({"scorer": "hcb", "order": "left-to-right",
                                                 "length_score": "bleu", "why": WHY}))
    with pytest.raises(ModelLoadError, match=r"defaults\.json: \"length_score\""):
        recommendation(str(d))


def test_a_recommended_rerank_reorders_one_length_unless_one_is_chosen(recommending,
                                                                       monkeypatch):
    """defaults.json's "rerank" reranks the completions of a gap of one length when the user
    chooses none; it is recorded and said only where it reranked, a given
    one wins, a sampling baseline is not reranked, and a bad one names the file."""
    assert recommendation("builtin:greek").rerank is None        # measured: not worth it
    assert recommendation("builtin:english").rerank is None
    d = recommending("english", {"scorer": "hcb", "order": "left-to-right", "rerank": "pll",
                                 "why": WHY})
    m = infill.load_model(str(d), device="cpu")
    text, opts = "the ___ sat on the mat", dict(gap=3, top_k=5, beam_size=8)
    auto = infill.fill_each(m, [text], **opts)[0]
    given = infill.fill_each(m, [text], rerank="pll", **opts)[0]
    off = infill.fill_each(m, [text], rerank="off", **opts)[0]
    assert [(c.tokens, c.rank_score) for c in auto.completions] == \
        [(c.tokens, c.rank_score) for c in given.completions]
    assert [c.tokens for c in auto.completions] != [c.tokens for c in off.completions]
    cfg = auto.to_json()["config"]
    assert cfg["rerank"] == "pll" and cfg["defaults"]["options"] == ["scorer", "order", "rerank"]
    assert "rerank" not in given.defaults.values and given.to_json()["config"]["rerank"] == "pll"
    assert off.rerank is None and "rerank" not in off.to_json()["config"]
    assert all(c.rank_score is None for c in off.completions)
    sampled = infill.fill_each(m, [text], sampling="pure", **opts)[0]
    assert sampled.rerank is None and "rerank" not in sampled.defaults.values
    ranged = infill.fill_each(m, [text], gap="1-2", top_k=3)[0].to_json()["config"]
    assert "rerank" not in ranged and "rerank" not in ranged["defaults"]["options"]
    monkeypatch.setattr("infill_cli.status.interactive", lambda: True)
    r = CliRunner().invoke(main, ["run", "--json", "--model", str(d), "--gap", "3", text])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["config"]["rerank"] == "pll"
    assert r.stderr.splitlines()[0].startswith("defaults: scorer hcb, order left-to-right, "
                                               "rerank pll")
    r = CliRunner().invoke(main, ["run", "--json", "--model", str(d), "--rerank", "off", text])
    assert r.exit_code == 0 and "rerank" not in json.loads(r.stdout)["config"]
    (d / "defaults.json").write_text(json.dumps({"scorer": "hcb", "order": "left-to-right",
                                                 "rerank": "bleu", "why": WHY}))
    with pytest.raises(ModelLoadError, match=r"defaults\.json: \"rerank\""):
        recommendation(str(d))
