"""The lexicon of an input's own whole words (:mod:`infill.models.own_words`): a damaged word
restored from where the same text keeps it whole."""
from __future__ import annotations

import json
import re

import pytest
import torch

import infill
from infill.data.greek import GREEK
from infill.errors import ModelLoadError
from infill.models.own_words import OwnWords, own_words_from

A = GREEK
TREATY = "ομοσαι τοσ λυττιοσ τοισ τε λυττιοισ και τοισ πριανσιευσι· λυ?????? δε ταδε"


def _rows(texts: list[str]) -> torch.Tensor:
    """The texts as the network reads them: start symbol, ids, padding to one length."""
    ids = [[A.start_id] + [A.char_to_id(c) for c in t] for t in texts]
    width = max(map(len, ids))
    return torch.tensor([x + [A.pad_id] * (width - len(x)) for x in ids])


def _logq(shape: tuple[int, ...], seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.log_softmax(torch.randn(*shape, A.n_outputs, generator=g), -1)


def _brute(text: str, t: int, logq: torch.Tensor, beta: float, shortest: int) -> torch.Tensor:
    """q' at character t of ``text`` (0-based, no start symbol), from the module's formula
    written over strings: the whole words are the maximal letter runs not touching ?, - or ^."""
    letters = set(A.letters)
    runs = [(m.start(), m.end()) for m in re.finditer(f"[{re.escape(A.letters)}]+", text)]
    whole = [text[a:b] for a, b in runs
             if (a == 0 or text[a - 1] not in "?-^") and (b == len(text) or text[b] not in "?-^")]
    a = t
    while a > 0 and (text[a - 1] in letters or text[a - 1] in "?-"):
        a -= 1
    b = t
    while b < len(text) and (text[b] in letters or text[b] in "?-"):
        b += 1
    word = text[a:b]
    agree = [w for w in whole if len(w) == len(word)
             and all(p in "?-" or p == c for p, c in zip(word, w))]
    if not agree or all(p in "?-" for p in word) or len(word) < shortest:
        return logq
    n = len(agree)
    lam = n / (n + beta * len(set(agree)))
    q = logq.double().exp()
    special = torch.zeros(A.n_outputs, dtype=torch.bool)
    special[[A.unk_id, A.missing_id]] = True
    m = torch.zeros(A.n_outputs, dtype=torch.float64)
    for w in agree:
        m[A.char_to_id(w[t - a])] += 1 / n
    s = q[~special].sum()
    out = torch.where(special, q, s * lam * m + (1 - lam) * q)
    return out.log().float()


@pytest.mark.parametrize("beta, shortest", [(1.0, 4), (0.25, 1), (4.0, 2), (1.0, 8)])
def test_each_row_is_mixed_with_its_own_whole_words_alone(beta, shortest):
    texts = [TREATY,
             "ε? πολυρηνι και τα πολυρηνιων εμ π?????νι -ολυρηνι εμ πολ",
             "κλαυδιοσ κλαυδιου υιοσ κλαυδ?οσ κλ??διου ???σ και ο δημοσ ο δημ?σ"]
    ids = _rows(texts)
    hidden = [[k for k, c in enumerate(t) if c == "?"] for t in texts]
    n = min(map(len, hidden))
    pos = torch.tensor([[k + 1 for k in h[:n]] for h in hidden])     # + the start symbol
    logq = _logq(tuple(pos.shape))
    got = OwnWords(A, beta, shortest).mix(logq, ids, pos)
    for r, text in enumerate(texts):
        for j in range(n):
            want = _brute(text, int(pos[r, j]) - 1, logq[r, j], beta, shortest)
            assert torch.allclose(got[r, j], want, atol=1e-5), (r, j)
    assert torch.allclose(got.exp().sum(-1), torch.ones(pos.shape), atol=1e-5)
    first = A.char_to_id("τ")                 # λυ?????? meets λυττιοισ, counted once
    assert got[0, 0, first].exp() > 0.9 / (1 + beta)       # S λ, S a little under 1
    assert not torch.equal(got[1], logq[1]) and not torch.equal(got[2], logq[2])


def test_a_word_the_stone_breaks_is_not_whole_and_a_row_never_meets_another_rows_words():
    ids = _rows(["-υττιοισ λυττιοι? ^λυττιοισ λυ??????",
                 "λυττιοισ και λυττιοισ και λυ??????"])
    pos = torch.tensor([[int(torch.nonzero(r == A.mask_id)[-6, 0])] for r in ids])
    logq = _logq((2, 1))
    own = OwnWords(A)
    assert torch.equal(own.mix(logq[:1], ids[:1], pos[:1]), logq[:1])
    got = own.mix(logq, ids, pos)
    assert torch.equal(got[0], logq[0])
    assert got[1, 0, A.char_to_id("τ")].exp() > 0.9 * 2 / 3        # two whole words, β = 1


def test_a_pattern_without_a_known_letter_is_left_alone():
    ids = _rows(["λυττιοισ και ???????? και λυττιοισ"])
    pos = torch.nonzero(ids[0] == A.mask_id)[:, 0][None]
    logq = _logq(tuple(pos.shape))
    assert torch.equal(OwnWords(A).mix(logq, ids, pos), logq)


@pytest.fixture
def words_model(char_described):
    """A tiny Greek model whose charmodel.json holds ``own_words`` (and ``mixtures``)."""
    return lambda own_words, mixtures=None: char_described("own_words", own_words, mixtures)


def test_a_model_restores_a_city_from_its_own_treaty(words_model):
    model = infill.load_model(str(words_model({"beta": 0.25, "shortest": 5})), device="cpu")
    assert model.own_words.settings() == {"beta": 0.25, "shortest": 5}
    assert model.mixed[-2:] == ("own_words", "own_text")
    short = "τοισ τε λυττιοισ και λυ?????? δε"
    assert len(short) + 1 < model.max_length              # the word is in the window
    [best] = infill.fill(model, [short], gap=1, marker="?", beam_size=5, top_k=1)
    assert "".join(best[0].fills) == "ττιοις"
    model.own_words = None
    [bare] = infill.fill(model, [short], gap=1, marker="?", beam_size=5, top_k=1)
    assert "".join(bare[0].fills) != "ττιοις"


@pytest.mark.parametrize("own_words, says", [
    ({"beta": 0}, "beta must be a number"),
    ({"beta": "1"}, "beta must be a number"),
    ({"beta": True}, "beta must be a number"),
    ({"beta": float("inf")}, "beta must be a number"),
    ({"beta": 1, "shortest": 0}, "shortest must be a whole number"),
    ({"beta": 1, "shortest": 4.0}, "shortest must be a whole number"),
    ({"beta": 1, "shortest": True}, "shortest must be a whole number"),
    ({"beta": 1, "sides": "3:3"}, "must be an object"),
    (1.0, "must be an object"),
])
def test_a_bad_own_words_is_one_line_exit_2(words_model, load_error_line, own_words, says):
    load_error_line(words_model(own_words), TREATY, says)


def test_own_words_the_mixing_order_leaves_out_is_an_error(words_model):
    d = words_model({"beta": 1}, mixtures=["lexicon", "phrases"])
    with pytest.raises(ModelLoadError, match="does not mix it"):
        infill.load_model(str(d), device="cpu")


def test_the_settings_round_trip():
    own = OwnWords(A, 0.5, 6)
    back = own_words_from(json.loads(json.dumps(own.settings())), A, "x")
    assert (back.beta, back.shortest) == (0.5, 6)
    assert own_words_from({}, A, "x").settings() == {"beta": 1.0, "shortest": 4}


def test_a_word_shorter_than_shortest_is_left_alone():
    ids = _rows(["τοισ και τοισ τοισ το?σ"])
    pos = torch.nonzero(ids[0] == A.mask_id)[:, 0][None]
    logq = _logq(tuple(pos.shape))
    assert torch.equal(OwnWords(A, 1.0, 5).mix(logq, ids, pos), logq)
    got = OwnWords(A, 1.0, 4).mix(logq, ids, pos)
    assert got[0, 0, A.char_to_id("ι")].exp() > 0.9 * 3 / 4          # n 3, u 1, β 1
