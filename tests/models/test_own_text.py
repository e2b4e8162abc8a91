"""The memory of an input's own text (:mod:`infill.models.own_text`): a lost stretch restored
from where the same inscription keeps it."""
from __future__ import annotations

import json

import pytest
import torch

import infill
from infill.data.greek import GREEK
from infill.errors import ModelLoadError
from infill.models.own_text import OWN_TEXT_SIDES, OwnText, own_text_from
from infill.models.phrases import build_phrases

A = GREEK
PARALLEL = "αρτεμων αδραστου του διονυσιου δινομαχου τουσ εξ κειονασ εκ των ιδιων ανεθηκε"
TEXT = PARALLEL + " και αρτεμων αδραστου του διονυσιου ????????? τουσ εξ κειονασ"


def _rows(texts: list[str]) -> torch.Tensor:
    """The texts as the network reads them: start symbol, ids, padding to one length."""
    ids = [[A.start_id] + [A.char_to_id(c) for c in t] for t in texts]
    width = max(map(len, ids))
    return torch.tensor([x + [A.pad_id] * (width - len(x)) for x in ids])


def _positions(ids: torch.Tensor) -> torch.Tensor:
    """Every ``?`` of each row (the rows here hide as many)."""
    return torch.stack([torch.nonzero(r == A.mask_id)[:, 0] for r in ids])


def _logq(ids: torch.Tensor, pos: torch.Tensor, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.log_softmax(torch.randn(*pos.shape, A.n_outputs, generator=g), -1)


@pytest.mark.parametrize("sides, beta", [(OWN_TEXT_SIDES, 1.0), (((2, 1), (0, 3), (5, 0)), 0.25),
                                         (((4, 4),), 4.0)])
def test_each_row_is_mixed_with_the_phrase_memory_of_its_own_text_alone(sides, beta):
    texts = [TEXT,
             "εκ των ιδιων ανεθηκε, εκ των -διων ???????, και εκ των ιδιων ανεθ?κε",
             "κλαυδιοσ κλαυδιου υιοσ κλαυδ?οσ κλ??διου ???σ και ο δημοσ ο δημ?σ ?? δη??σ"]
    ids = _rows(texts)
    # every row hides the same number of letters, so one [R, P] of positions holds them all
    n = min(int((r == A.mask_id).sum()) for r in ids)
    pos = torch.stack([torch.nonzero(r == A.mask_id)[:n, 0] for r in ids])
    logq = _logq(ids, pos)
    own = OwnText(A, sides, beta)
    got = own.mix(logq, ids, pos)
    for r, text in enumerate(texts):
        alone = build_phrases([text], A, sides=sides, beta=beta)
        want = alone.mix(logq[r:r + 1], ids[r:r + 1], pos[r:r + 1])
        assert torch.allclose(got[r:r + 1], want, atol=1e-6), r
    assert torch.allclose(got.exp().sum(-1), torch.ones(pos.shape), atol=1e-5)
    assert not torch.allclose(got, logq, atol=1e-3)          # the rows' parallels were found


def test_a_row_never_meets_another_rows_text():
    ids = _rows([TEXT, TEXT.replace(PARALLEL, "α" * len(PARALLEL))])
    pos = _positions(ids)
    logq = _logq(ids, pos)
    got = OwnText(A, beta=0.25).mix(logq, ids, pos)
    assert torch.equal(got[1], logq[1])                       # its own text has no parallel
    first = A.char_to_id("δ")
    assert got[0, 0, first].exp() > 0.9 > logq[0, 0, first].exp()


def test_the_hidden_rest_and_missing_letters_are_never_stored():
    # the lacuna's own letters (``?``) and a lost ``-`` stretch keep every context holding them
    # out of the memory: a text whose only "parallel" is the lacuna itself is left as it is
    ids = _rows(["του διονυσιου ????????? τουσ -------- του διονυσιου"])
    pos = _positions(ids)
    logq = _logq(ids, pos)
    memory = OwnText(A).memory(ids.numpy())
    assert len(memory.keys)
    assert torch.equal(OwnText(A).mix(logq, ids, pos), logq)


@pytest.fixture
def own_model(char_described):
    """A tiny Greek model whose charmodel.json holds ``own_text`` (and ``mixtures``)."""
    return lambda own_text, mixtures=None: char_described("own_text", own_text, mixtures)


def test_a_model_restores_a_name_from_its_own_inscription(own_model):
    model = infill.load_model(str(own_model({"sides": "3:3,8:0,0:8,6:6", "beta": 0.25})),
                              device="cpu")
    assert model.own_text.settings() == {"sides": "3:3,8:0,0:8,6:6", "beta": 0.25}
    assert model.own_text.sides == OWN_TEXT_SIDES
    assert model.mixed[-2:] == ("own_words", "own_text")
    short = "διονυσιου δινομαχου τουσ εξ και διονυσιου ????????? τουσ"
    assert len(short) + 1 < model.max_length              # the parallel is in the window
    [best] = infill.fill(model, [short], gap=1, marker="?", beam_size=5, top_k=1)
    assert "".join(best[0].fills) == "δινομαχου"
    model.own_text = None
    [bare] = infill.fill(model, [short], gap=1, marker="?", beam_size=5, top_k=1)
    assert "".join(bare[0].fills) != "δινομαχου"


@pytest.mark.parametrize("own_text, says", [
    ({"sides": "3:3", "beta": 0}, "beta must be a number"),
    ({"sides": "3:3", "beta": "1"}, "beta must be a number"),
    ({"sides": "3:3", "beta": True}, "beta must be a number"),
    ({"sides": "3:x", "beta": 1}, "sides"),
    ({"sides": [[3, 3]], "beta": 1}, "sides"),
    ({"sides": "0:0", "beta": 1}, "sides"),
    ({"sides": "3:3", "beta": 1, "rest": 2}, "must be an object"),
    ("3:3", "must be an object"),
])
def test_a_bad_own_text_is_one_line_exit_2(own_model, load_error_line, own_text, says):
    load_error_line(own_model(own_text), TEXT, says)


def test_an_own_text_the_mixing_order_leaves_out_is_an_error(own_model):
    d = own_model({"sides": "3:3", "beta": 1}, mixtures=["lexicon", "phrases"])
    with pytest.raises(ModelLoadError, match="does not mix it"):
        infill.load_model(str(d), device="cpu")


def test_the_settings_round_trip():
    own = OwnText(A, ((2, 2), (5, 0)), 0.5)
    back = own_text_from(own.settings(), A, "x")
    assert (back.sides, back.beta, back.rest) == (own.sides, own.beta, own.rest)
    assert json.loads(json.dumps(own.settings())) == {"sides": "2:2,5:0", "beta": 0.5}


def test_a_row_of_nothing_but_lacunae_is_left_alone():
    ids = _rows(["???? ----"])
    pos = _positions(ids)
    logq = _logq(ids, pos)
    assert len(OwnText(A).memory(ids.numpy()).keys) == 0
    assert torch.equal(OwnText(A).mix(logq, ids, pos), logq)
