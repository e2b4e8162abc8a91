"""Readings (``infill run --readings``, ``infill.readings``): each proposed filling's exact score
against brute-force enumeration of its filling order on tiny models, the beam's own score for
a filling it found, probabilities, several lacunae, lengths, EpiDoc ``<app>`` in and ``cert``
out, the command line and bad input."""
from __future__ import annotations

import itertools
import json
import math

import pytest
import torch
from click.testing import CliRunner

import infill
from infill.config import DecodeConfig
from infill.decoding.fixed import fixed_scores
from infill.models.oracle import OracleMLM
from infill_cli.main import main

ORDERS = ["left-to-right", "best-to-worst", "any-order"]
SETTINGS = [("standard", None), ("hcb", None), ("hcb", 1)]


@pytest.fixture(scope="module")
def oracle():
    torch.manual_seed(0)
    lj = torch.randn([3] * 5) * 2
    return OracleMLM(lj - torch.logsumexp(lj.flatten(), 0))


def _pass(model, ids, positions):
    x = torch.tensor([ids])
    return model.log_probs(x, torch.ones_like(x, dtype=torch.bool),
                           torch.tensor([positions]))[0].double()


def _update(model, x, remaining, g, w, scorer, pivot, lq_g=None):
    """One step's update at position g (METHODS §1), recomputed with its own passes."""
    if lq_g is None or (scorer == "hcb" and pivot != model.mask_id):
        ctx = [pivot if (scorer == "hcb" and t in remaining and t != g) else v
               for t, v in enumerate(x)]
        lq_g = _pass(model, ctx, [g])[0]
    return float(lq_g[w]) - (float(lq_g[pivot]) if scorer == "hcb" else 0.0)


def reference(model, ids, gap_pos, fill, scorer, order, pivot=None):
    """The score of one fixed fill by enumeration: left-to-right / best-to-worst follow the one
    path a hypothesis takes; any-order is the best over every permutation of the positions."""
    pivot = model.resolve_pivot(pivot)
    allowed = model.allowed_mask()
    at = dict(zip(gap_pos, fill))
    if order == "any-order":
        return max(_chain(model, ids, perm, at, scorer, pivot)
                   for perm in itertools.permutations(gap_pos))
    x, remaining, total = list(ids), list(gap_pos), 0.0
    while remaining:
        lq = _pass(model, x, remaining)
        k = 0 if order == "left-to-right" else \
            int(lq.masked_fill(~allowed, float("-inf")).amax(-1).argmax())
        g = remaining[k]
        total += _update(model, x, remaining, g, at[g], scorer, pivot, lq[k])
        x[g] = at[g]
        remaining.remove(g)
    return total


def _chain(model, ids, perm, at, scorer, pivot):
    x, remaining, total = list(ids), list(perm), 0.0
    for g in perm:
        total += _update(model, x, remaining, g, at[g], scorer, pivot)
        x[g] = at[g]
        remaining.remove(g)
    return total


# ---- exact scores ---------------------------------------------------------------------------
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("scorer, pivot", SETTINGS)
def test_fixed_scores_equal_enumeration(oracle, scorer, pivot, order):
    ids = [0, oracle.mask_id, oracle.mask_id, 1, oracle.mask_id]
    pos = [1, 2, 4]
    fills = list(itertools.product(range(3), repeat=3))
    cfg = DecodeConfig(scorer=scorer, order=order, pivot=pivot)
    got = fixed_scores(oracle, [ids] * len(fills), [pos] * len(fills), fills, cfg.search())
    for f, s in zip(fills, got):
        assert s.exact
        assert s.score == pytest.approx(reference(oracle, ids, pos, f, scorer, order, pivot),
                                        abs=1e-9)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("scorer, pivot", SETTINGS)
def test_every_fill_the_beam_found_gets_the_beams_score(oracle, scorer, pivot, order):
    """A full beam keeps every fill: each one's readings score is the beam's, exactly."""
    r = infill.readings(oracle, "a??b?", ["a|b|c"] * 3, marker="?", scorer=scorer, order=order,
                        pivot=pivot, beam_size=27, top_k=27)
    assert len(r.combinations) == 27
    for c in r.combinations:
        assert c.beam_rank is not None
        assert c.score == pytest.approx(c.beam_score, abs=1e-12)
    ranks = [c.beam_rank for c in sorted(r.combinations, key=lambda c: -c.score)]
    assert ranks == list(range(1, 28))


@pytest.mark.parametrize("order", ORDERS)
def test_a_small_beam(oracle, order):
    """With beam 2 the fills the beam found keep its score (any-order: at most the exact one,
    the best over orders); the others are not in the top-k."""
    r = infill.readings(oracle, "a??b?", ["a|b|c", "a|c", "b|c"], marker="?", scorer="hcb",
                        order=order, beam_size=2, top_k=2)
    found = [c for c in r.combinations if c.beam_rank is not None]
    assert {c.beam_rank for c in found} <= {1, 2}
    for c in found:
        if order == "any-order":
            assert c.beam_score <= c.score + 1e-12
        else:
            assert c.score == pytest.approx(c.beam_score, abs=1e-12)
    beam = {tuple(comp.fills) for comp in r.completions}
    for c in r.combinations:
        assert (tuple(c.readings) in beam) == (c.beam_rank is not None)


def test_a_fill_the_beam_holds_twice_gets_its_first_rank(oracle):
    """Without dedup, any-order's beam may hold one fill reached in several orders: a reading
    takes the rank and score of its best (first) occurrence, not of its last."""
    r = infill.readings(oracle, "a??b?", ["a|b|c"] * 3, marker="?", scorer="hcb",
                        order="any-order", dedup=False, beam_size=27, top_k=27)
    fills = [tuple(comp.fills) for comp in r.completions]
    assert len(set(fills)) < len(fills)                 # a fill recurs: the case in question
    for c in r.combinations:
        if c.beam_rank is not None:
            first = fills.index(tuple(c.readings))
            assert c.beam_rank == first + 1
            assert c.beam_score == r.completions[first].score


def test_probabilities_and_marginals(oracle):
    r = infill.readings(oracle, "a??b?", ["a|b|c", "a|c", "b|c"], marker="?",
                        scorer="standard", order="left-to-right")
    assert len(r.combinations) == 3 * 2 * 2
    probs = [c.prob for c in r.combinations]
    assert sum(probs) == pytest.approx(1.0, abs=1e-12)
    assert probs == sorted(probs, reverse=True)
    top = max(c.score for c in r.combinations)
    z = sum(math.exp(c.score - top) for c in r.combinations)
    for c in r.combinations:
        assert c.prob == pytest.approx(math.exp(c.score - top) / z, rel=1e-12)
    for k, rs in enumerate(r.lacunae):
        assert sum(x.prob for x in rs) == pytest.approx(1.0, abs=1e-12)
        for x in rs:
            assert x.prob == pytest.approx(sum(c.prob for c in r.combinations
                                               if c.readings[k] == x.text), abs=1e-12)
    # the standard left-to-right score of a fill is the enumeration's
    ids = [0, oracle.mask_id, oracle.mask_id, 1, oracle.mask_id]
    for c in r.combinations:
        fill = [oracle.token_to_id(t) for t in c.readings]
        assert c.score == pytest.approx(reference(oracle, ids, [1, 2, 4], fill, "standard",
                                                  "left-to-right"), abs=1e-9)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("scorer", ["standard", "hcb"])
def test_word_piece_gap_equals_enumeration(bert, scorer, order):
    """A gap of three word pieces: each reading's score is the enumeration's."""
    r = infill.readings(bert, "the ___ mat", ["cat sat on|dog sat on|the cat sat"],
                        scorer=scorer, order=order)
    enc = bert.encode("the ___ mat", 3)
    for c in r.combinations:
        fill = [bert.token_to_id(t) for t in c.readings[0].split()]
        assert c.score == pytest.approx(reference(bert, enc.input_ids, enc.positions, fill,
                                                  scorer, order), abs=1e-4)
    assert r.gap == 3


def test_lengths_are_ranked_by_the_length_score(bert):
    """Readings of one and two words: ranked by the length score, the value the beam's
    completions of those lengths carry."""
    r = infill.readings(bert, "the ___ mat", ["cat|cat sat|dog on"], beam_size=40, top_k=40)
    assert r.gap == "1-2" and r.length_score is not None
    assert all(c.rank_score is not None for c in r.combinations)
    top = max(c.rank_score for c in r.combinations)
    z = sum(math.exp(c.rank_score - top) for c in r.combinations)
    for c in r.combinations:
        assert c.prob == pytest.approx(math.exp(c.rank_score - top) / z, rel=1e-9)
    beam = {tuple(comp.fills): comp for comp in r.completions}
    for c in r.combinations:
        if c.beam_rank is not None:
            comp = beam[tuple(c.readings)]
            assert c.rank_score == pytest.approx(comp.rank_score, abs=1e-4)
            assert c.score == pytest.approx(comp.score, abs=1e-4)
    assert any(c.beam_rank is not None for c in r.combinations)


def test_one_length_is_ranked_as_the_fill_reranks():
    """With rerank, readings of one length get (score + PLL) / 2 as ``rank_score`` (the value the
    beam's reranked completions carry), their prob its softmax; off, they have none
    (builtin:english, whose PLL tells these words apart)."""
    bert = infill.load_model("builtin:english", device="cpu")
    text, cands = "To be, or not to ___, that is the question.", ["be|see|go|die|live|do"]
    r = infill.readings(bert, text, cands, gap=1, beam_size=20, top_k=20, rerank="pll")
    assert r.rerank == "pll" and r.to_json()["config"]["rerank"] == "pll"
    top = max(c.rank_score for c in r.combinations)
    z = sum(math.exp(c.rank_score - top) for c in r.combinations)
    for c in r.combinations:
        assert c.prob == pytest.approx(math.exp(c.rank_score - top) / z, rel=1e-9)
    beam = {tuple(comp.fills): comp for comp in r.completions}
    found = [c for c in r.combinations if c.beam_rank is not None]
    assert found and all(c.rank_score == pytest.approx(beam[tuple(c.readings)].rank_score,
                                                       abs=1e-4) for c in found)
    off = infill.readings(bert, text, cands, gap=1, beam_size=20, top_k=20, rerank="off")
    assert off.rerank is None and all(c.rank_score is None for c in off.combinations)
    assert [c.score for c in off.combinations] == \
        sorted((c.score for c in off.combinations), reverse=True)
    assert {c.readings: c.score for c in off.combinations} == \
        pytest.approx({c.readings: c.score for c in r.combinations}, abs=1e-6)
    was = {c.readings: c.prob for c in off.combinations}
    assert max(abs(c.prob - was[c.readings]) for c in r.combinations) > 0.01


def test_a_long_text_is_scored_in_the_fills_windows(bert):
    """A text longer than the model: readings are scored in the context windows the fill
    decodes in, and a fill the beam found gets its score."""
    text = "the cat sat on the mat " * 4 + "the ___ mat"
    r = infill.readings(bert, text, ["cat|dog|mat|on|sat|the"], beam_size=6, top_k=6)
    found = [c for c in r.combinations if c.beam_rank is not None]
    assert len(found) == 6
    for c in found:
        assert c.score == pytest.approx(c.beam_score, abs=1e-5)


def test_a_whole_word_gap(bert):
    r = infill.readings(bert, "the ___ mat", ["cat|cats|dogs"], gap="word", beam_size=20,
                        top_k=20)
    assert r.gap == "word" and len(r.combinations) == 3
    for c in r.combinations:
        if c.beam_rank is not None:
            assert c.score == pytest.approx(c.beam_score, abs=1e-5)
    with pytest.raises(infill.InputError, match="'cat sat' of lacuna 1 does not fit.*whole word"):
        infill.readings(bert, "the ___ mat", ["cat sat|cat"], gap="word")


def test_json(oracle):
    r = infill.readings(oracle, "a??b?", [["a", ("c", "#smith")], "a|c", "b"], marker="?")
    out = json.loads(json.dumps(r.to_json(), allow_nan=False))
    assert [x["resp"] for x in out["lacunae"][0]["readings"]] == [None, "#smith"]
    assert set(out["combinations"][0]) == {"readings", "text", "score", "rank_score", "prob",
                                           "beam_rank", "beam_score", "exact"}
    assert out["completions"] and out["config"]["beam_size"] >= 5


# ---- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize("readings, message", [
    (["cat sat"], "is 2 tokens long; the lacuna holds 3"),
    (["cat sat on", "dog"], "readings for lacuna 2, but the text has 1 lacuna"),
    ([], "give a list with each lacuna's readings"),
    (["cat sat on|"], "lacuna 1 has an empty reading"),
    ([[]], "lacuna 1 has no readings"),
    (["cat sat zebra"], "cannot place in a gap"),
])
def test_bad_readings(bert, readings, message):
    with pytest.raises(infill.InputError, match=message):
        infill.readings(bert, "the ___ mat", readings, gap=3)


def test_readings_of_a_text_without_lacunae(bert):
    with pytest.raises(infill.InputError):
        infill.readings(bert, "the cat sat", ["dog"])


@pytest.mark.parametrize("options", [dict(scorer="swap"), dict(sampling="pure"),
                                     dict(decoder="ag")])
def test_readings_need_the_beams_rules(bert, options):
    with pytest.raises(infill.ConfigError):
        infill.readings(bert, "the ___ mat", ["cat|dog"], **options)


def test_duplicates_are_scored_once(greek_char_dir):
    model = infill.load_model(greek_char_dir, device="cpu")
    r = infill.readings(model, "καὶ τῶι [....]ι", ["δήμω|δῆμω|δάμω"])
    assert [x.text for x in r.lacunae[0]] == ["δήμω", "δάμω"]
    assert any("scored once" in n for n in r.notes)



def test_a_texts_letter_sets_bind_the_readings_and_the_beam(greek_char_dir):
    """``#[ηι]`` in the text limits the beam beside the readings, and a reading with another
    letter there is one error; a reading inside the set gets the score of the same text with
    the set given as ``letters``."""
    model = infill.load_model(greek_char_dir, device="cpu")
    limited = infill.fill(model, "καὶ τῶι δ??ωι", gap=1, letters=[["ηι", None]], beam_size=8,
                          top_k=8, marker="___")[0]
    given = [c.fills[0] for c in limited[:2]]                   # two fills the beam found
    r = infill.readings(model, "καὶ τῶι δ#[ηι]?ωι", ["|".join(given)], beam_size=8, top_k=8)
    assert all(c.fills[0][0] in "ηι" for c in r.completions)
    assert [c.fills for c in r.completions] == [c.fills for c in limited]
    by_fill = {c.fills[0]: c.score for c in limited}
    assert sorted(combo.readings[0] for combo in r.combinations) == sorted(given)
    for combo in r.combinations:      # float32 forward passes batched differently: 1e-6
        assert combo.score == pytest.approx(by_fill[combo.readings[0]], abs=1e-6)
        assert combo.beam_rank is not None
    assert abs(r.combinations[0].score - r.combinations[1].score) > 1e-3  # the two differ
    with pytest.raises(infill.InputError, match="'αμ' of lacuna 1 does not fit.*#"):
        infill.readings(model, "καὶ τῶι δ#[ηι]?ωι", ["ημ|αμ"])

# ---- the command line --------------------------------------------------------------------------
def _run(*args):
    return CliRunner().invoke(main, ["run", *args])


def test_cli_json_equals_the_library(bert_dir, bert):
    res = _run("--model", bert_dir, "the ___ mat", "--readings", "cat sat on|dog sat on",
               "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output.strip().splitlines()[-1])
    want = infill.readings(bert, "the ___ mat", ["cat sat on|dog sat on"]).to_json()
    assert [c["readings"] for c in out["combinations"]] == \
        [c["readings"] for c in want["combinations"]]
    for a, b in zip(out["combinations"], want["combinations"]):
        assert a["score"] == pytest.approx(b["score"], abs=1e-5)
        assert a["prob"] == pytest.approx(b["prob"], abs=1e-5)


def test_cli_table(bert_dir):
    res = _run("--model", bert_dir, "the ___ mat", "--readings", "cat sat on|dog sat on")
    assert res.exit_code == 0, res.output
    assert "readings scored with" in res.output and "cat sat on" in res.output
    assert "beam's top-5" in res.output


@pytest.mark.parametrize("args, message", [
    (["the ___ mat", "--readings", "cat|dog", "--gap", "2"], "the lacuna holds 2"),
    (["the ___ mat", "--readings", "cat", "--readings", "dog"], "readings for lacuna 2"),
    (["the ___ mat", "the ___ cat", "--readings", "cat"], "one text"),
    (["the ___ mat", "--app-readings"], "--app-readings reads EpiDoc files"),
    (["the ___ mat", "--readings", "cat", "--scorer", "swap"], "standard or hcb"),
])
def test_cli_bad_input_is_one_line(bert_dir, args, message):
    res = _run("--model", bert_dir, *args)
    assert res.exit_code == 2, res.output
    assert message in res.output
    assert "Traceback" not in res.output
    assert len([ln for ln in res.output.splitlines() if ln.startswith("Error")]) == 1


# ---- EpiDoc -------------------------------------------------------------------------------------
EDITION = """<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0">
   <teiHeader><fileDesc><titleStmt><title>t</title></titleStmt>
   <publicationStmt><p>p</p></publicationStmt><sourceDesc><p>s</p></sourceDesc></fileDesc>
   </teiHeader>
   <text><body><div type="edition" xml:lang="grc" xml:space="preserve"><ab>
      <lb n="1"/><w>καὶ</w> <w>τῶι</w> <w><supplied reason="lost"><app type="alternative">"""\
    """<lem resp="#latyshev">δήμω</lem><rdg resp="#boeckh">δάμω</rdg><rdg>πλήθε</rdg></app>"""\
    """</supplied>ι</w>
      <lb n="2"/><w>ἐπειδὴ</w> <gap reason="lost" quantity="3" unit="character"/> """\
    """<w>Ἀπολλ<supplied reason="lost">ώνιος</supplied></w>
   </ab></div></body></text>
</TEI>
"""


@pytest.fixture
def edition(tmp_path):
    path = tmp_path / "app.xml"
    path.write_text(EDITION, encoding="utf-8")
    return str(path)


def test_app_readings_read_and_cert_written(greek_char_dir, edition):
    from infill.data.epidoc import TEI, read_edition
    from infill.jobs.readings import app_readings, epidoc_readings, epidoc_readings_output

    model = infill.load_model(greek_char_dir, device="cpu")
    [res] = epidoc_readings(model, [edition])
    assert res.error is None
    rs = res.result.lacunae[0]
    assert [(x.text, x.resp, x.lem) for x in rs] == [
        ("δήμω", "#latyshev", True), ("δάμω", "#boeckh", False), ("πλήθε", None, False)]
    assert sum(x.prob for x in rs) == pytest.approx(1.0, abs=1e-12)
    assert res.result.gap == "4-5" and res.result.length_score is not None
    # the same as typing them in the edition's text
    typed = infill.readings(model, "καὶ τῶι ___ι ἐπειδὴ --- Ἀπολλώνιος",
                            ["δήμω|δάμω|πλήθε"])
    assert [c.score for c in typed.combinations] == \
        pytest.approx([c.score for c in res.result.combinations], abs=1e-6)
    # written: cert = the probability, resp kept; read back by the real reader
    out = edition.replace(".xml", "-out.xml")
    with open(out, "w", encoding="utf-8") as f:
        f.write(epidoc_readings_output(res, "tiny"))
    back = read_edition(out)
    [(k, found)] = app_readings(back).items()
    assert [(c.text, c.resp, c.lem) for c, _ in found] == [(x.text, x.resp, x.lem) for x in rs]
    assert [float(el.get("cert")) for _, el in found] == \
        pytest.approx([x.prob for x in rs], abs=1e-4)
    assert back.tree.getroot().find(f".//{{{TEI}}}application") is not None


def test_cli_app_readings(greek_char_dir, edition, tmp_path):
    res = _run("--model", greek_char_dir, edition, "--app-readings", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output.strip().splitlines()[-1])
    assert out["file"] == edition and out["lacunae"][0]["editor"] == "δήμω"
    res = _run("--model", greek_char_dir, edition, "--app-readings", "--output-format",
               "epidoc", "--out", str(tmp_path / "o"))
    assert res.exit_code == 0, res.output
    assert 'cert="' in (tmp_path / "o" / "app.xml").read_text(encoding="utf-8")
    res = _run("--model", greek_char_dir, edition, "--readings", "δήμω")
    assert res.exit_code == 2 and "--app-readings" in res.output


def test_an_edition_without_app(greek_char_dir, tmp_path):
    from infill.jobs.readings import epidoc_readings
    path = tmp_path / "plain.xml"
    path.write_text(EDITION.replace('<app type="alternative"><lem resp="#latyshev">δήμω</lem>'
                                    '<rdg resp="#boeckh">δάμω</rdg><rdg>πλήθε</rdg></app>',
                                    "δήμω"), encoding="utf-8")
    [res] = epidoc_readings(infill.load_model(greek_char_dir, device="cpu"), [str(path)])
    assert "no <app>" in res.error
