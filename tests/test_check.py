"""``infill check``'s computation (:mod:`infill.checking`) and job (:func:`infill.check`): each
position's probability equals a direct single-mask forward pass (the oracle MLM's exact
conditional, a tiny HF model, a tiny character model saved and reloaded, windows for long
inputs, ESM's masked-marginal table), all positions of all inputs in as few calls as
``max_rows`` allows; gaps stay masked; EpiDoc editions: stone letters only, lines, sic."""
from __future__ import annotations

import math

import pytest
import torch

import infill
from infill.check_request import CheckRequest
from infill.checking import read_for_check, check_readings
from infill.errors import ConfigError, InputError
from infill.models.oracle import OracleMLM


@pytest.fixture
def oracle():
    torch.manual_seed(0)
    return OracleMLM(torch.log_softmax(torch.randn(3, 3, 3, 3).flatten() * 2, 0).view(3, 3, 3, 3))


def expected(model, ids: list[int], t: int) -> tuple[float, int, float]:
    """(log q(written), best other id, its log q) from one forward pass with t masked."""
    row = list(ids)
    row[t] = model.mask_id
    lp = model.log_probs(torch.tensor([row]), torch.ones(1, len(row), dtype=torch.bool),
                         torch.tensor([[t]]))[0, 0].double()
    allowed = model.allowed_mask()
    others = [(float(lp[i]), i) for i in range(model.vocab_size) if allowed[i] and i != ids[t]]
    best_lq, best = max(others)
    return float(lp[ids[t]]), best, best_lq


def test_every_position_is_the_exact_conditional_of_the_oracle(oracle):
    [c] = infill.check(oracle, ["abca"], threshold=1.0, marker="?")
    assert [p.position for p in c.result.positions] == [0, 1, 2, 3]
    ids = oracle.tokenize("abca")
    for p in c.result.positions:
        seq = list(ids)
        seq[p.position] = oracle.mask_id
        cond = oracle.conditional(seq, p.position)
        w = ids[p.position]
        others = [(float(cond[i]), i) for i in range(3) if i != w]
        assert p.logq == pytest.approx(float(cond[w]), abs=1e-9)
        assert (p.best_logq, p.best) == (pytest.approx(max(others)[0], abs=1e-9),
                                         oracle.tokens[max(others)[1]])
        assert p.flagged == (max(others)[0] - float(cond[w]) >= 1.0)
        assert p.log_ratio == pytest.approx(p.logq - p.best_logq)


def test_a_gap_stays_masked_in_every_row_and_is_not_checked(oracle):
    [c] = infill.check(oracle, ["ab?a"], marker="?")
    assert [p.position for p in c.result.positions] == [0, 1, 3]
    assert c.result.reading.gaps == [2]
    for p in c.result.positions:
        seq = [0, 1, oracle.mask_id, 0]
        seq[p.position] = oracle.mask_id
        assert p.logq == pytest.approx(float(oracle.conditional(seq, p.position)[
            oracle.tokenize("abca")[p.position]]), abs=1e-9)


def test_all_positions_of_all_inputs_in_as_few_calls_as_max_rows_allows(oracle):
    oracle.calls = 0
    out = infill.check(oracle, ["abca", "ccba", "b?ca"], marker="?")
    assert oracle.calls == 1 and [len(c.result.positions) for c in out] == [4, 4, 3]
    oracle.calls = 0
    infill.check(oracle, ["abca", "ccba", "b?ca"], marker="?", max_rows=4)
    assert oracle.calls == 3                                        # 11 rows, 4 a call


def test_word_pieces_of_a_tiny_bert_match_single_mask_passes(bert):
    [c] = infill.check(bert, ["the cats sat on the mat"], threshold=2.0)
    ids = bert.tokenize("the cats sat on the mat")
    assert c.result.reading.shown == "the cat ##s sat on the mat".replace(" ##", "")
    assert [p.written for p in c.result.positions] == ["the", "cat", "##s", "sat", "on", "the",
                                                       "mat"]
    for p in c.result.positions:
        lq, best, best_lq = expected(bert, ids, p.position)
        assert p.logq == pytest.approx(lq, abs=1e-5)
        assert p.best == bert.id_to_token(best) and p.best_logq == pytest.approx(best_lq, abs=1e-5)
        assert p.flagged == (best_lq - lq >= 2.0)
        assert c.result.reading.shown[slice(*p.span)] == p.written.removeprefix("##")


def test_a_character_model_reloaded_windows_a_long_text(greek_char_dir):
    model = infill.load_model(greek_char_dir, device="cpu")
    assert model.max_length == 48
    text = "ανδρα μοι εννεπε μουσα πολυτροπον οσ μαλα πολλα πλαγχθη επει τροιησ"
    [c] = infill.check(model, [text], table=True)
    ids = model.tokenize(text)
    assert c.result.windowed and len(ids) > model.max_length
    width = model.max_length - 1                          # the start symbol is kept
    assert [p.position for p in c.result.positions] == \
        [t for t in range(1, len(ids)) if text[t - 1] != " "]           # spaces not checked
    for p in c.result.positions:
        left = max(1, min(p.position - width // 2, len(ids) - width))
        window = ids[:1] + ids[left:left + width]
        lq, best, best_lq = expected(model, window, p.position - left + 1)
        assert p.logq == pytest.approx(lq, abs=1e-5)
        assert (p.best, p.best_logq) == (model.id_to_token(best), pytest.approx(best_lq, abs=1e-5))
    letters = [model.id_to_token(i) for i in range(model.vocab_size)
               if model.id_to_token(i).isalpha()]
    assert c.result.alphabet == letters and len(c.result.substitutions[0]) == 24


def test_protein_masked_marginals_follow_esm(esm2_tiny_path):
    model = infill.load_model(esm2_tiny_path, device="cpu")
    seq = "MKTAYIAKQR"
    [c] = infill.check(model, [f">p1 test\n{seq}"[9:]])            # a bare sequence
    ids = model.tokenize(seq)
    assert c.result.alphabet == list("ACDEFGHIKLMNPQRSTVWY")
    for k, p in enumerate(c.result.positions):
        row = list(ids)
        row[k + 1] = model.mask_id
        lp = model.log_probs(torch.tensor([row]), torch.ones(1, len(row), dtype=torch.bool),
                             torch.tensor([[k + 1]]))[0, 0].double()
        wt = model.token_to_id(seq[k])
        want = [float(lp[model.token_to_id(a)] - lp[wt]) for a in "ACDEFGHIKLMNPQRSTVWY"]
        assert c.result.substitutions[k] == pytest.approx(want, abs=1e-5)
        assert c.result.substitutions[k]["ACDEFGHIKLMNPQRSTVWY".index(seq[k])] == 0.0
    assert "substitutions" in c.to_json()


def test_json_line_holds_every_position(oracle):
    [c] = infill.check(oracle, ["abca"], marker="?", name="oracle")
    row = c.to_json()
    assert (row["id"], row["input"], row["model"], row["error"]) == ("1", "abca", "oracle", None)
    assert len(row["positions"]) == 4 and row["threshold"] == CheckRequest().threshold
    p = row["positions"][0]
    assert p["prob"] == pytest.approx(math.exp(p["logq"]))
    assert set(p) == {"position", "span", "written", "prob", "logq", "best", "best_prob",
                      "best_logq", "log_ratio", "flagged"}


@pytest.mark.parametrize("text, message", [
    ("", "empty input"), ("   ", "empty input"), ("???", "only gaps"),
])
def test_an_input_that_cannot_be_checked_gets_one_line(greek_char_dir, text, message):
    model = infill.load_model(greek_char_dir, device="cpu")
    [bad, good] = infill.check(model, [text, "λογοσ"])
    assert message in bad.error and "\n" not in bad.error and bad.result is None
    assert good.error is None and len(good.result.positions) == 5


@pytest.mark.parametrize("value", [-0.1, 50.5, float("nan"), float("inf")])
def test_a_threshold_out_of_range_is_refused(value):
    with pytest.raises(ConfigError, match="threshold"):
        CheckRequest(threshold=value)


def test_no_window_gives_the_length_error(greek_char_dir):
    model = infill.load_model(greek_char_dir, device="cpu")
    [c] = infill.check(model, ["α" * 60], window=False)
    assert "maximum length" in c.error and c.error_field == "window"


def test_read_for_check_refuses_a_text_of_only_specials(bert):
    with pytest.raises(InputError, match="nothing to check"):
        read_for_check(bert, "[MASK]")


EDITION = """<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body>
<div type="edition" xml:lang="grc"><ab>
<lb n="1"/><w>ἀνέθη<supplied reason="lost">κε</supplied>ν</w> <w>τῶι</w>
<lb n="2"/><w>δάμ<choice><sic>Λ</sic><corr>ω</corr></choice>ι</w> <gap reason="lost" quantity="2" unit="character"/>
</ab></div></body></text></TEI>
"""


def test_an_edition_checks_the_stone_letters_by_line(greek_char_dir, tmp_path):
    from infill.check_epidoc import read_edition_for_check
    model = infill.load_model(greek_char_dir, device="cpu")
    f = tmp_path / "e.xml"
    f.write_text(EDITION, encoding="utf-8")
    er = read_edition_for_check(model, str(f))
    r = er.reading
    assert r.shown == "ανεθηκεν τωι δαμωι ??"
    assert [r.shown[t - 1] for t in r.checked] == list("ανεθην") + list("τωι") + list("δαμωι")
    assert [er.lines[t] for t in r.checked] == ["1"] * 9 + ["2"] * 5
    assert len(r.gaps) == 2
    sic = read_edition_for_check(model, str(f), sic=True)
    assert sic.reading.shown == "ανεθηκεν τωι δαμλι ??" and sic.pairs == [("Λ", "ω")]
    assert [sic.reading.shown[t - 1] for t in sic.sic] == ["λ"]


def test_check_editions_notes_flagged_letters_per_line(greek_char_dir, tmp_path):
    from infill.jobs.check import check_editions
    model = infill.load_model(greek_char_dir, device="cpu")
    f = tmp_path / "e.xml"
    f.write_text(EDITION, encoding="utf-8")
    [c] = check_editions(model, [(str(f), None)], threshold=0.0)      # every letter flagged
    lines = c.to_json()["lines"]
    assert [ln["line"] for ln in lines] == ["1", "2"]
    assert lines[0]["note"].startswith("line 1: doubtful α (")
    assert len(lines[0]["positions"]) == 9 and len(lines[1]["positions"]) == 5


def test_check_readings_scores_readings_together(oracle):
    readings = [read_for_check(oracle, t, "?") for t in ("abca", "bbbb")]
    oracle.calls = 0
    out = check_readings(oracle, readings, 2.0)
    assert oracle.calls == 1 and [len(c.positions) for c in out] == [4, 4]


def test_notes_are_written_into_the_edition_and_read_back_as_the_same_text(greek_char_dir,
                                                                           tmp_path):
    from infill.check_epidoc import NOTE_TYPE, read_edition_for_check
    from infill.data.epidoc import TEI, read_edition_text
    from infill.jobs.check import check_editions, edition_with_notes
    model = infill.load_model(greek_char_dir, device="cpu")
    f = tmp_path / "e.xml"
    f.write_text(EDITION, encoding="utf-8")
    [c] = check_editions(model, [(str(f), None)], threshold=0.0, name="tiny")
    xml = edition_with_notes(c)
    ed = read_edition_text(xml)
    notes = ed.tree.getroot().findall(f".//{{{TEI}}}note[@type='{NOTE_TYPE}']")
    assert [n.text for n in notes] == [ln["note"] for ln in c.to_json()["lines"]]
    assert [n.getprevious().get("n") for n in notes] == ["1", "2"]       # right after its <lb/>
    assert "infill check (tiny, threshold 0 nats)" in xml
    again = tmp_path / "again.xml"
    again.write_text(xml, encoding="utf-8")
    assert read_edition_for_check(model, str(again)).reading.shown == c.result.reading.shown
