"""Gaps of uncertain length and whole-word gaps: the ranking across lengths against scores
recomputed independently (one forward pass per masked position, written here); and the
reranking of one length's completions by (score + PLL) / 2 (:mod:`infill.filling.reranking`) against
the same."""
from __future__ import annotations

import sys

import pytest
import torch

import infill
import infill.decoding.pll  # noqa: F401 (the module whose PLL_REACH a test sets)
from infill.decoding.lengths import MAX_LENGTHS, MAX_VARIANTS, gap_lengths, shorten
from infill.errors import ConfigError, InputError

TEXT = "the ___ sat on the mat"


def pll(model, ids, positions=None) -> float:
    """Σ_t log q_t(x_t | x with t masked), t over ``positions`` (default: every non-special)."""
    if positions is None:
        positions = [t for t, i in enumerate(ids) if i < model.vocab_size and i not in model.special_ids]
    total = 0.0
    for t in positions:
        x = torch.tensor([ids])
        x[0, t] = model.mask_id
        lq = model.log_probs(x, torch.ones_like(x, dtype=torch.bool), torch.tensor([[t]]))[0, 0]
        total += float(lq[ids[t]])
    return total


def pll_word(model, ids, positions) -> float:
    """Σ_t log q_t(x_t | x with t and the ## pieces right after it masked), t over the gap
    ``positions`` (a continuation piece is hidden only while it is in the gap)."""
    total = 0.0
    for t in positions:
        x = torch.tensor([ids])
        x[0, t] = model.mask_id
        u = t + 1
        while u in positions and model.id_to_token(ids[u]).startswith("##"):
            x[0, u] = model.mask_id
            u += 1
        lq = model.log_probs(x, torch.ones_like(x, dtype=torch.bool), torch.tensor([[t]]))[0, 0]
        total += float(lq[ids[t]])
    return total


def filled_ids(model, text, gap, tokens):
    enc = model.encode(text, gap)
    ids = list(enc.input_ids)
    for p, t in zip(enc.positions, tokens):
        ids[p] = t
    return ids, enc.positions


@pytest.mark.parametrize("kind", ["pll", "pll-gap", "pll-word", "per-char", "per-char-0.7"])
def test_range_ranks_every_length_together_by_the_length_score(bert, kind):
    k, beam = 6, 8
    got = infill.fill(bert, TEXT, gap=(1, 3), top_k=k, beam_size=beam, length_score=kind,
                      length_beam="each")[0]
    # the reference: each length decoded on its own (the fixed-length path), rescored here
    pool = []
    for n in (1, 2, 3):               # every hypothesis of each length's beam competes
        for c in infill.fill(bert, TEXT, gap=n, top_k=beam, beam_size=beam)[0]:
            ids, gap_pos = filled_ids(bert, TEXT, n, c.tokens)
            value = {"pll": lambda: pll(bert, ids),
                     "pll-gap": lambda: pll(bert, ids, gap_pos),
                     "pll-word": lambda: pll_word(bert, ids, gap_pos),
                     "per-char": lambda: c.score / len(c.fills[0]),
                     "per-char-0.7": lambda: c.score / len(c.fills[0]) ** 0.7}[kind]()
            pool.append((value, c.tokens, c.text))
    pool.sort(key=lambda v: -v[0])
    assert [c.tokens for c in got] == [t for _, t, _ in pool[:k]]
    assert [c.text for c in got] == [x for _, _, x in pool[:k]]
    assert [c.rank_score for c in got] == pytest.approx([v for v, _, _ in pool[:k]], abs=1e-4)
    assert len({len(c.tokens) for c in got}) > 1          # lengths really compete
    assert all(c.to_json()["rank_score"] == c.rank_score for c in got)


@pytest.mark.parametrize("gap", [(1, 3), "word"])
def test_the_ranking_across_lengths_does_not_depend_on_top_k(gap):
    """top_k cuts the ranked list; it does not shrink the pool the lengths compete in (as a
    batch of requests run at their largest top_k, in the workbench, must not change them).
    With builtin:english, the third whole word after "wherefore art" ("thy") is beyond the
    first three of its length's beam."""
    m = infill.load_model("builtin:english", device="cpu")
    text = "O Romeo, Romeo! wherefore art ___ Romeo?"
    full = infill.fill(m, text, gap=gap, top_k=5, beam_size=5)[0]
    for k in (1, 3):
        got = infill.fill(m, text, gap=gap, top_k=k, beam_size=5)[0]
        assert [(c.tokens, c.rank_score) for c in got] == \
            [(c.tokens, c.rank_score) for c in full[:k]]


def test_whole_word_gap_is_exactly_the_words_of_one_to_three_pieces(bert):
    """The tiny vocabulary has 6 words and one continuation piece (##s): a whole word is w,
    w ##s or w ##s ##s (18 in all), never a piece glued to 'the'; ranked by the PLL."""
    words = [bert.token_to_id(w) for w in ["the", "cat", "sat", "on", "mat", "dog"]]
    s = bert.token_to_id("##s")
    want = {(w,) for w in words} | {(w, s) for w in words} | {(w, s, s) for w in words}
    got = infill.fill(bert, TEXT, gap="word", top_k=50, beam_size=50)[0]
    assert {c.tokens for c in got} == want and len(got) == len(want)
    ref = sorted(((pll(bert, filled_ids(bert, TEXT, len(c.tokens), c.tokens)[0]), c.tokens)
                  for c in got), key=lambda v: -v[0])
    assert [c.tokens for c in got] == [t for _, t in ref]
    assert [c.rank_score for c in got] == pytest.approx([v for v, _ in ref], abs=1e-4)
    assert all(" " + c.fills[0] + " " in c.text for c in got)   # a word of its own
    by_word = infill.fill(bert, TEXT, gap="word", top_k=50, beam_size=50,
                          length_score="pll-word")[0]
    ref = sorted(((pll_word(bert, *filled_ids(bert, TEXT, len(c.tokens), c.tokens)), c.tokens)
                  for c in by_word), key=lambda v: -v[0])
    assert [c.rank_score for c in by_word] == pytest.approx([v for v, _ in ref], abs=1e-4)
    assert [c.tokens for c in by_word] == [t for _, t in ref]
    gap_only = [pll(bert, *filled_ids(bert, TEXT, len(c.tokens), c.tokens)) for c in by_word]
    assert all((abs(c.rank_score - g) < 1e-4) == (len(c.tokens) == 1)   # pll-gap but for ##s
               for c, g in zip(by_word, gap_only))


def test_a_whole_word_gap_touching_a_word_finishes_it(bert):
    """'cat___' with gap='word' is the rest of the word: one to three ## pieces (the tiny
    vocabulary's only one is ##s), glued to 'cat'; ranked by the PLL as any whole word."""
    s = bert.token_to_id("##s")
    got = infill.fill(bert, "the cat___ sat on the mat", gap="word", top_k=10, beam_size=10)[0]
    assert {c.tokens for c in got} == {(s,), (s, s), (s, s, s)}
    assert {c.text.split()[1] for c in got} == {"cats", "catss", "catsss"}
    spaced = infill.fill(bert, "the cat ___ sat on the mat", gap="word", top_k=50, beam_size=50)[0]
    assert all(c.tokens[0] != s for c in spaced) and len(spaced) == 18


def test_fixed_gaps_keep_their_length_beside_a_range(greek_char_dir):
    m = infill.load_model(greek_char_dir, device="cpu")
    got = infill.fill(m, "αβ??γδε ___ ζηθ", gap=(1, 3), top_k=9, beam_size=9)[0]
    assert all(len(c.fills[0]) == 2 for c in got)           # the '??' run is not a marker
    assert {len(c.fills[1]) for c in got} <= {1, 2, 3}
    text = "αβ ___ γδε ___ ζη"
    got = infill.fill(m, text, gap=[2, (1, 2)], top_k=10, beam_size=10, length_beam="each")[0]
    pool = []
    for second in (1, 2):                       # one variant each: decoded, not ranked
        for c in infill.fill(m, text, gap=[2, second], top_k=10, beam_size=10)[0]:
            assert c.rank_score is None
            enc = m.encode(text.replace("___", "?" * 2, 1).replace("___", "?" * second), 1)
            ids = list(enc.input_ids)
            for p, t in zip(enc.positions, c.tokens):
                ids[p] = t
            pool.append((pll(m, ids), c.text))
    pool.sort(key=lambda v: -v[0])
    assert [c.text for c in got] == [t for _, t in pool[:10]]
    assert [c.rank_score for c in got] == pytest.approx([v for v, _ in pool[:10]], abs=1e-4)
    assert all(len(c.fills[0]) == 2 and len(c.fills[1]) in (1, 2) for c in got)


def test_a_long_texts_windows_alike_in_every_length_are_decoded_once(greek_char_dir,
                                                                     monkeypatch):
    """A long text (decoded in windows) with a lacuna of 1-3 letters far from a fixed one: the
    fixed lacuna's window holds the same ids in every length variant, and is decoded once, not
    three times; the completions are those of every window decoded on its own."""
    from infill.filling import planner

    m = infill.load_model(greek_char_dir, device="cpu")
    text = "και ___ τον δημον " + "των αθηναιων " * 5 + "εδοξε τηι βουλ___"
    rows = []
    run = planner.run_decoder

    def counted(model, inputs, *a, **k):
        rows.extend(map(tuple, inputs))
        return run(model, inputs, *a, **k)

    monkeypatch.setattr(planner, "run_decoder", counted)
    got = infill.fill(m, text, gap=[2, (1, 3)], top_k=8, beam_size=8)[0]
    assert len(rows) == 4 == len(set(rows))       # the first lacuna's window once, the other's 3
    rows.clear()
    monkeypatch.setattr(planner, "_repeated", lambda *a: {})
    each = infill.fill(m, text, gap=[2, (1, 3)], top_k=8, beam_size=8)[0]
    assert len(rows) == 6 and len(set(rows)) == 4
    assert [(c.text, c.tokens) for c in got] == [(c.text, c.tokens) for c in each]
    assert [v for c in got for v in (c.score, c.rank_score)] == \
        pytest.approx([v for c in each for v in (c.score, c.rank_score)], abs=1e-6)
    assert all(c.rank_score is not None and len(c.fills[0]) == 2 for c in got)


@pytest.mark.parametrize("kind", ["pll", "pll-gap"])
def test_a_long_text_is_scored_within_reach_of_its_gaps(greek_char_dir, kind, monkeypatch):
    """Far from the gap the PLL reads only PLL_REACH tokens each side of it (the leading and
    trailing specials kept): the reference cuts the filled text so and scores it here."""
    PLL_REACH = 6                   # noqa: N806 (the library's reach, made small for this model)
    monkeypatch.setattr(sys.modules["infill.decoding.pll"], "PLL_REACH", PLL_REACH)
    m = infill.load_model(greek_char_dir, device="cpu")
    text = "αβγδε ζηθ ικ" + "___" + "λμν ξοπ ρστ"
    got = infill.fill(m, text, gap=(1, 2), top_k=6, beam_size=6, length_score=kind,
                      length_beam="each")[0]
    pool = []
    for n in (1, 2):
        for c in infill.fill(m, text, gap=n, top_k=6, beam_size=6)[0]:
            ids, gap_pos = filled_ids(m, text, n, c.tokens)
            body = [t for t, i in enumerate(ids) if i < m.vocab_size and i not in m.special_ids]
            first, last = min(gap_pos), max(gap_pos)
            assert first - PLL_REACH > body[0] and last + PLL_REACH < body[-1]   # cut both sides
            cut = ids[:body[0]] + ids[first - PLL_REACH:last + PLL_REACH + 1] + ids[body[-1] + 1:]
            at = [p - first + PLL_REACH + body[0] for p in gap_pos]
            pool.append((pll(m, cut, at if kind == "pll-gap" else None), c.text))
    pool.sort(key=lambda v: -v[0])
    assert [c.text for c in got] == [t for _, t in pool[:6]]
    assert [c.rank_score for c in got] == pytest.approx([v for v, _ in pool[:6]], abs=1e-4)


def test_shorten_is_the_encoding_with_shorter_gaps(bert):
    long, short = bert.encode("the ___ sat ___", 3), bert.encode("the ___ sat ___", 1)
    cut = shorten(long, {0: 1, 1: 1})
    assert (cut.input_ids, cut.gaps) == (short.input_ids, short.gaps)


@pytest.mark.parametrize("gap, error, message", [
    ((1, MAX_LENGTHS + 1), InputError, f"at most {MAX_LENGTHS} lengths"),
    ((3, 2), InputError, "1 <= lo <= hi"),
    ("4-x", InputError, "a gap length is"),
    ((1, 2.5), InputError, "two whole numbers"),
    ([1], InputError, "1 gap lengths for 2 gap markers"),
    ([(1, 5), (1, 5), (1, 5)], InputError, f"limit of {MAX_VARIANTS}"),
])
def test_bad_ranges_are_one_line_errors(bert, gap, error, message):
    text = "the ___ sat ___ on" if isinstance(gap, list) and len(gap) < 3 else \
        "the ___ sat ___ on ___" if isinstance(gap, list) else TEXT
    with pytest.raises(error, match=message):
        infill.fill(bert, text, gap=gap)


def test_word_gap_needs_word_pieces_and_scores_are_named(greek_char_dir, bert):
    m = infill.load_model(greek_char_dir, device="cpu")
    with pytest.raises(ConfigError, match="WordPiece"):
        infill.fill(m, "αβ ___ γδ", gap="word")
    with pytest.raises(ConfigError, match="length score"):
        infill.fill(bert, TEXT, gap=(1, 2), length_score="bleu")
    with pytest.raises(ConfigError, match="cannot restrict"):
        infill.fill(bert, "the ___ on", gap="word", decoder="ag")
    assert gap_lengths(bert, "2-4").lo == 2 and gap_lengths(bert, 3) == 3


def test_cli_gap_range_word_and_length_score(bert_dir):
    import json

    from click.testing import CliRunner

    from infill_cli.main import main
    runner = CliRunner()
    r = runner.invoke(main, ["run", "--model", bert_dir, "--gap", "1-3", "--length-score",
                             "pll-gap", "-k", "4", "--json", TEXT])
    assert r.exit_code == 0, r.output
    line = json.loads(r.output.strip().splitlines()[-1])
    import infill
    m = infill.load_model(bert_dir, device="cpu")
    want = infill.fill(m, TEXT, gap=(1, 3), top_k=4, length_score="pll-gap")[0]
    assert [c["tokens"] for c in line["completions"]] == [list(c.tokens) for c in want]
    assert [c["rank_score"] for c in line["completions"]] == \
        pytest.approx([c.rank_score for c in want], abs=1e-6)
    assert line["config"]["length_score"] == "pll-gap" and line["gap"] == "1-3"
    r = runner.invoke(main, ["run", "--model", bert_dir, "--gap", "word", TEXT])
    assert r.exit_code == 0, r.output
    assert "rank score" in r.output
    for bad, msg in (("1-40", f"at most {MAX_LENGTHS} lengths"), ("x", "a gap length is")):
        r = runner.invoke(main, ["run", "--model", bert_dir, "--gap", bad, TEXT])
        assert r.exit_code == 2 and msg in r.output and "Traceback" not in r.output


# ---- rerank: one length's completions by (score + PLL) / 2 -----------------------------------
@pytest.fixture(scope="module")
def english():
    return infill.load_model("builtin:english", device="cpu")


@pytest.mark.parametrize("kind", ["pll", "pll-gap", "pll-word"])
def test_rerank_orders_the_beam_by_score_plus_pll(english, kind):
    """The reranked list is the beam's completions (rerank off) sorted by the mean of their
    decoder score and the PLL computed here, one forward pass per masked position (builtin:english: three
    word pieces, where each kind reorders the beam)."""
    beam, m = 8, english
    plain = infill.fill(m, TEXT, gap=3, top_k=beam, beam_size=beam, rerank="off")[0]
    got = infill.fill(m, TEXT, gap=3, top_k=beam, beam_size=beam, rerank=kind)[0]
    want = []
    for c in plain:
        ids, gap_pos = filled_ids(m, TEXT, 3, c.tokens)
        value = {"pll": lambda: pll(m, ids), "pll-gap": lambda: pll(m, ids, gap_pos),
                 "pll-word": lambda: pll_word(m, ids, gap_pos)}[kind]()
        want.append(((c.score + value) / 2, c.tokens, c.score))
    want.sort(key=lambda v: -v[0])
    assert [c.tokens for c in got] == [t for _, t, _ in want]
    assert [c.score for c in got] == pytest.approx([s for _, _, s in want], abs=1e-6)
    assert [c.rank_score for c in got] == pytest.approx([v for v, _, _ in want], abs=1e-4)
    assert [c.tokens for c in got] != [c.tokens for c in plain]       # it really reorders
    assert all(c.rank_score is None for c in plain)


def test_rerank_does_not_depend_on_top_k_and_takes_windows_and_several_gaps(greek_char_dir):
    """top_k cuts the reranked list of the whole beam; an input longer than the model (48
    characters: decoded in windows) with two gaps far apart is reranked as a short one is."""
    m = infill.load_model(greek_char_dir, device="cpu")
    text = "και ?? τον δημον " + "των αθηναιων " * 5 + "εδοξε τηι βουλ??"
    full = infill.fill(m, text, gap=1, marker="?", top_k=6, beam_size=6, rerank="pll")[0]
    assert len(full) == 6 and all(c.rank_score is not None for c in full)
    assert [c.rank_score for c in full] == sorted((c.rank_score for c in full), reverse=True)
    for k in (1, 3):
        got = infill.fill(m, text, gap=1, marker="?", top_k=k, beam_size=6, rerank="pll")[0]
        assert [(c.tokens, c.rank_score) for c in got] == \
            [(c.tokens, c.rank_score) for c in full[:k]]
    plain = infill.fill(m, text, gap=1, marker="?", top_k=6, beam_size=6, rerank="off")[0]
    assert sorted(c.tokens for c in plain) == sorted(c.tokens for c in full)


def test_rerank_leaves_gaps_of_uncertain_length_to_the_length_score(bert):
    """A range is ranked by length_score: a rerank asked for there would rank nothing and is
    refused (issue 46); 'off' is the range's own ranking; the result records which ran."""
    with pytest.raises(ConfigError, match="rerank") as e:
        infill.fill_each(bert, [TEXT], gap=(1, 2), top_k=4, rerank="pll")
    assert e.value.field == "rerank"
    b = infill.fill_each(bert, [TEXT], gap=(1, 2), top_k=4, rerank="off")[0]
    assert b.rerank is None and "rerank" not in b.to_json()["config"]
    assert b.completions[0].rank_score is not None
    one = infill.fill_each(bert, [TEXT], gap=2, top_k=4, rerank="pll")[0]
    assert one.rerank == "pll" and one.to_json()["config"]["rerank"] == "pll"
    with pytest.raises(ConfigError, match="rerank"):
        infill.fill(bert, TEXT, gap=2, rerank="bleu")
