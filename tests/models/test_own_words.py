"""The lexicon of an input's own whole words (:mod:`infill.models.own_words`): a damaged word
restored from where the same text keeps it whole."""
from __future__ import annotations

import json
import random
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


def _brute(text: str, t: int, logq: torch.Tensor, beta: float, shortest: int,
           bare: float | None = None) -> torch.Tensor:
    """q' at character t of ``text`` (0-based, no start symbol), from the module's formula
    written over strings: the whole words are the maximal letter runs not touching ?, - or ^;
    t's word is the run of letters, ? and - around it, none where it touches ^ (the lexicon's)."""
    letters = set(A.letters)
    runs = [(m.start(), m.end()) for m in re.finditer(f"[{re.escape(A.letters)}]+", text)]
    whole = [text[a:b] for a, b in runs
             if (a == 0 or text[a - 1] not in "?-^") and (b == len(text) or text[b] not in "?-^")]
    if text[t] not in letters and text[t] not in "?-":
        return logq
    a = t
    while a > 0 and (text[a - 1] in letters or text[a - 1] in "?-"):
        a -= 1
    b = t
    while b < len(text) and (text[b] in letters or text[b] in "?-"):
        b += 1
    word = text[a:b]
    if (a > 0 and text[a - 1] == "^") or (b < len(text) and text[b] == "^"):
        return logq
    agree = [w for w in whole if len(w) == len(word)
             and all(p in "?-" or p == c for p, c in zip(word, w))]
    lost = all(p in "?-" for p in word)
    if not agree or (lost and bare is None) or len(word) < shortest:
        return logq
    n = len(agree)
    lam = n / (n + (bare if lost else beta) * len(set(agree)))
    q = logq.double().exp()
    special = torch.zeros(A.n_outputs, dtype=torch.bool)
    special[[A.unk_id, A.missing_id]] = True
    m = torch.zeros(A.n_outputs, dtype=torch.float64)
    for w in agree:
        m[A.char_to_id(w[t - a])] += 1 / n
    s = q[~special].sum()
    out = torch.where(special, q, s * lam * m + (1 - lam) * q)
    return out.log().float()


@pytest.mark.parametrize("beta, shortest, bare", [(1.0, 4, None), (0.25, 1, None),
                                                  (4.0, 2, None), (1.0, 8, None),
                                                  (1.0, 4, 10.0), (0.5, 2, 3.0)])
def test_each_row_is_mixed_with_its_own_whole_words_alone(beta, shortest, bare):
    texts = [TREATY,
             "ε? πολυρηνι και τα πολυρηνιων εμ π?????νι -ολυρηνι εμ πολ",
             "κλαυδιοσ κλαυδιου υιοσ κλαυδ?οσ κλ??διου ???σ και ο δημοσ ο δημ?σ"]
    ids = _rows(texts)
    hidden = [[k for k, c in enumerate(t) if c == "?"] for t in texts]
    n = min(map(len, hidden))
    pos = torch.tensor([[k + 1 for k in h[:n]] for h in hidden])     # + the start symbol
    logq = _logq(tuple(pos.shape))
    got = OwnWords(A, beta, shortest, bare).mix(logq, ids, pos)
    for r, text in enumerate(texts):
        for j in range(n):
            want = _brute(text, int(pos[r, j]) - 1, logq[r, j], beta, shortest, bare)
            assert torch.allclose(got[r, j], want, atol=1e-5), (r, j)
    assert torch.allclose(got.exp().sum(-1), torch.ones(pos.shape), atol=1e-5)
    first = A.char_to_id("τ")                 # λυ?????? meets λυττιοισ, counted once
    assert got[0, 0, first].exp() > 0.9 / (1 + beta)       # S λ, S a little under 1
    assert not torch.equal(got[1], logq[1]) and not torch.equal(got[2], logq[2])



@pytest.mark.parametrize("bare", [None, 10.0])
def test_many_rows_and_word_lengths_at_once_equal_the_formula_row_by_row(bare):
    """Damaged texts drawn at random, four positions each (letters, lost letters, spaces):
    every row and position mixed at once equals the formula written for one of them."""
    rng = random.Random(7)
    vocabulary = ["λυττιοισ", "πολυρηνι", "και", "δημοσ", "δημου", "κλαυδιοσ", "ανεθηκεν",
                  "τοισ", "ιερευσ", "μηνοφιλου"]
    texts = []
    for _ in range(16):
        chars = list(" ".join(rng.choice(vocabulary) for _ in range(rng.randint(4, 12))))
        for _ in range(rng.randint(1, 4)):                    # lacunae, a lost word among them
            a = rng.randrange(len(chars))
            chars[a:a + rng.randint(1, 9)] = "?" * len(chars[a:a + rng.randint(1, 9)])
        if rng.random() < 0.3:
            chars[rng.randrange(len(chars))] = rng.choice("-^·")
        texts.append("".join(chars))
    ids = _rows(texts)
    pos = torch.tensor([sorted(rng.sample(range(1, len(t) + 1), 4)) for t in texts])
    logq = _logq(tuple(pos.shape), seed=3)
    got = OwnWords(A, 0.5, 3, bare).mix(logq, ids, pos)
    for r, text in enumerate(texts):
        for j in range(pos.shape[1]):
            want = _brute(text, int(pos[r, j]) - 1, logq[r, j], 0.5, 3, bare)
            assert torch.allclose(got[r, j], want, atol=1e-5), (text, int(pos[r, j]))
    assert int((got != logq).any(-1).sum()) >= 20            # of 64: the formula was met

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


def test_a_pattern_without_a_known_letter_is_left_alone_unless_bare_is_given():
    text = "λυττιοισ και ???????? και λυττιοισ και πολυρηνι"
    ids = _rows([text])
    pos = torch.nonzero(ids[0] == A.mask_id)[:, 0][None]
    logq = _logq(tuple(pos.shape))
    assert torch.equal(OwnWords(A).mix(logq, ids, pos), logq)
    got = OwnWords(A, bare=10.0).mix(logq, ids, pos)
    for j in range(pos.shape[1]):
        assert torch.allclose(got[0, j], _brute(text, int(pos[0, j]) - 1, logq[0, j], 1.0, 4,
                                                10.0), atol=1e-5)
    lam = 3 / (3 + 10.0 * 2)          # n 3: λυττιοισ twice, πολυρηνι once; u 2
    assert got[0, 0, A.char_to_id("λ")].exp() > 0.9 * lam * 2 / 3
    assert got[0, 0, A.char_to_id("π")].exp() > 0.9 * lam * 1 / 3


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


def test_a_model_given_bare_restores_a_lost_word_from_its_own_text(words_model):
    model = infill.load_model(str(words_model({"beta": 0.25, "shortest": 5, "bare": 0.25})),
                              device="cpu")
    assert model.own_words.settings() == {"beta": 0.25, "shortest": 5, "bare": 0.25}
    lost = "τοισ τε λυττιοισ και ???????? δε"
    [best] = infill.fill(model, [lost], gap=1, marker="?", beam_size=1, top_k=1)   # greedy
    assert "".join(best[0].fills) == "λυττιοις"
    model.own_words.bare = None
    [without] = infill.fill(model, [lost], gap=1, marker="?", beam_size=1, top_k=1)
    assert "".join(without[0].fills) != "λυττιοις"


@pytest.mark.parametrize("own_words, says", [
    ({"beta": 0}, "beta must be a number"),
    ({"beta": "1"}, "beta must be a number"),
    ({"beta": True}, "beta must be a number"),
    ({"beta": float("inf")}, "beta must be a number"),
    ({"beta": 1, "shortest": 0}, "shortest must be a whole number"),
    ({"beta": 1, "shortest": 4.0}, "shortest must be a whole number"),
    ({"beta": 1, "shortest": True}, "shortest must be a whole number"),
    ({"beta": 1, "sides": "3:3"}, "must be an object"),
    ({"beta": 1, "bare": 0}, "bare must be a number"),
    ({"beta": 1, "bare": "10"}, "bare must be a number"),
    (1.0, "must be an object"),
])
def test_a_bad_own_words_is_one_line_exit_2(words_model, load_error_line, own_words, says):
    load_error_line(words_model(own_words), TREATY, says)


def test_own_words_the_mixing_order_leaves_out_is_an_error(words_model):
    d = words_model({"beta": 1}, mixtures=["lexicon", "phrases"])
    with pytest.raises(ModelLoadError, match="does not mix it"):
        infill.load_model(str(d), device="cpu")


def test_the_settings_round_trip():
    own = OwnWords(A, 0.5, 6, 12.0)
    back = own_words_from(json.loads(json.dumps(own.settings())), A, "x")
    assert (back.beta, back.shortest, back.bare) == (0.5, 6, 12.0)
    assert own_words_from({}, A, "x").settings() == {"beta": 1.0, "shortest": 4}


def test_a_word_shorter_than_shortest_is_left_alone():
    ids = _rows(["τοισ και τοισ τοισ το?σ"])
    pos = torch.nonzero(ids[0] == A.mask_id)[:, 0][None]
    logq = _logq(tuple(pos.shape))
    assert torch.equal(OwnWords(A, 1.0, 5).mix(logq, ids, pos), logq)
    got = OwnWords(A, 1.0, 4).mix(logq, ids, pos)
    assert got[0, 0, A.char_to_id("ι")].exp() > 0.9 * 3 / 4          # n 3, u 1, β 1
