"""A text typed without word division (ΗΒΟΥΛΗΚΑΙΟΔΗΜΟϹ), read with its words divided
(infill.models.continua): the division against the best of all divisions by brute force, the
word score against its definition, when a text is read so, and what a user sees."""
from __future__ import annotations

import itertools
import math
import random

import pytest

import infill
from infill.data.greek import GREEK
from infill.models import continua
from infill.models.continua import Divider, divided_note, undivided
from infill.models.lexicon import build_lexicon

WORDS = {"και": 50.0, "ο": 30.0, "δημοσ": 12.0, "δημου": 4.0, "βουλη": 10.0, "η": 40.0,
         "ετιμησεν": 6.0, "τον": 20.0, "ον": 2.0, "δη": 3.0, "μοσ": 1.0}
WILD = "?-"


def divider(words=WORDS) -> Divider:
    return Divider(build_lexicon(words, GREEK, 1.0), GREEK)


def ids(text: str) -> list[int]:
    return [GREEK.char_to_id(c) for c in text]


def spellings(words: dict) -> dict:
    """The lexicon's words and, where it lacks them, their spellings with the iota beside a
    last α, η or ω (``βουληι``), at continua.ADSCRIPT of the word's weight."""
    return {**{v + "ι": continua.ADSCRIPT * n for v, n in words.items() if v[-1] in "αηω"},
            **words}


def log_p(word: str, words=WORDS) -> float:
    """The module's P(w), from the lexicon as a dict."""
    total = sum(words.values())
    c = sum(n for v, n in spellings(words).items() if len(v) == len(word) and
            all(x in WILD or x == y for x, y in zip(word, v)))
    known = sum(x not in WILD for x in word)
    unseen = continua.OOV * (1 - continua.RHO) * continua.RHO ** (len(word) - 1) \
        * len(GREEK.letters) ** -known
    return math.log((1 - continua.OOV) * c / total + unseen)


def best_by_brute_force(run: str, closed=frozenset()) -> float:
    """The largest Σ log P over every division of ``run`` (no cut at an offset in ``closed``,
    no word longer than continua.LONGEST)."""
    best = -math.inf
    inner = [k for k in range(1, len(run)) if k not in closed]
    for n in range(len(inner) + 1):
        for cuts in itertools.combinations(inner, n):
            edges = [0, *cuts, len(run)]
            words = [run[a:b] for a, b in zip(edges, edges[1:])]
            if max(map(len, words)) <= continua.LONGEST:
                best = max(best, sum(log_p(w) for w in words))
    return best


def score_of(run: str, cuts: list[int]) -> float:
    edges = [0, *cuts, len(run)]
    return sum(log_p(run[a:b]) for a, b in zip(edges, edges[1:]))


def test_a_word_scores_as_its_definition():
    d = divider()
    for word in ("και", "δημοσ", "δημ??", "?????", "ξξξ", "δ-μ?σ", "τ?ν", "ω"):
        assert d.log_p(bytes(ids(word))) == pytest.approx(log_p(word), rel=1e-12), word


def test_the_division_is_the_best_of_all_by_brute_force():
    d, rng = divider(), random.Random(0)
    pieces = list(WORDS) + ["ξυ", "?", "??", "-", "δημ??", "ι", "ηι"]
    for _ in range(40):
        run = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 4)))[:11]
        closed = frozenset(k for k in range(1, len(run)) if run[k - 1] == run[k] == "?")
        cuts = d.divide(ids(run), closed)
        assert not set(cuts) & closed
        assert score_of(run, cuts) == pytest.approx(best_by_brute_force(run, closed), abs=1e-9)
    assert d.divide(ids("ηβουληκαιοδημοσετιμησεν")) == [1, 6, 9, 10, 15]


def test_a_word_written_with_the_iota_beside_its_vowel_is_the_lexicons_word():
    """The stone's ΤΗΙ ΓΛΥΚΥΤΑΤΗΙ: editions print the iota below, which the lexicon drops
    (γλυκυτατη), and a dative with it beside the vowel is that word, not the word and a lone ι."""
    words = {"τη": 30.0, "γλυκυτατη": 2.0, "γυναικι": 3.0, "ι": 0.01, "ιερα": 4.0}
    lexicon = build_lexicon(words, GREEK, 1.0)
    run = ids("τηιγλυκυτατηιγυναικι")
    assert Divider(lexicon, GREEK).divide(run) == [3, 13]
    assert Divider(lexicon, GREEK, adscripts=False).divide(run) == [2, 3, 12, 13]
    assert Divider(lexicon, GREEK).divide(ids("τηιερα")) == [2]      # τη ιερα, not τηι ερα
    assert Divider(lexicon, GREEK).log_p(bytes(ids("γλυκυτατηι"))) == \
        pytest.approx(log_p("γλυκυτατηι", words), rel=1e-12)


def test_spaces_divide_each_stretch_of_letters_and_keep_other_characters():
    d = divider()
    text = "καιοδημοσ.ηβουλη"
    got = d.spaces(ids(text))
    assert [text[:p].count(".") for p in got] == [0, 0, 1]
    assert "".join(" " + c if p in got else c for p, c in enumerate(text)) == \
        "και ο δημοσ.η βουλη"                  # a mark ends a word and stays as typed


@pytest.mark.parametrize("text, want", [
    ("η βουλη και ο δημοσ ετιμησεν", False),           # an edition: six letters a word
    ("ηβουληκαιοδημοσετιμησεν", True),
    ("ηβουληκαιοδημοσ\nετιμησεντον", True),             # typed line by line
    ("ηβουληκαιο", None),                                # one short stretch: its division
    ("ηβουλη", False),
    ("αγαθηι τυχηι", False),
    ("d m ????? felici vixit annis xxv", False),
])
def test_which_texts_divide_no_words(text, want):
    assert undivided(text, GREEK) is want


def test_a_short_text_of_one_stretch_is_divided_where_its_division_splits_words(
        greek_with_lexicon):
    model, a = greek_with_lexicon, GREEK
    assert a.decode(model.encode("ΚΑΙΟΔΗΜΟϹ?", 1, "?").input_ids[1:]) == "και ο δημοσ ?"
    assert a.decode(model.encode("ΔΗΜΟϹ????", 1, "?").input_ids[1:]) == "δημοσ????"
    assert not model.encode("δημοσ????", 1, "?").undivided


@pytest.fixture(scope="module")
def greek_lexicon_dir(char_with_lexicon) -> str:
    """A tiny random Greek character model with the WORDS lexicon beside it."""
    return char_with_lexicon(GREEK, WORDS, seed=5, max_length=64)


@pytest.fixture(scope="module")
def greek_with_lexicon(greek_lexicon_dir):
    return infill.load_model(greek_lexicon_dir, device="cpu")


def test_an_undivided_text_is_read_divided_and_restored_undivided(greek_with_lexicon):
    model, a = greek_with_lexicon, GREEK
    text = "ΗΒΟΥΛΗΚΑΙΟΔΗΜ??ΕΤΙΜΗϹΕΝ"
    enc = model.encode(text, 1, "?")
    assert a.decode(enc.input_ids[1:]) == "η βουλη και ο δημ?? ετιμησεν"
    assert enc.undivided and [a.decode([enc.input_ids[p] for p in g]) for g in enc.gaps] == ["?", "?"]
    assert enc.notes == divided_note(enc.input_ids, a)
    comps = infill.fill(model, text, top_k=20, beam_size=20)[0]
    assert len(comps) == 20
    for comp in comps:                    # two letters, never a space; Σ written Ϲ as typed
        fill = "".join(comp.fills)
        assert len(fill) == 2 and " " not in fill and "Σ" not in fill
        assert comp.text == "ΗΒΟΥΛΗΚΑΙΟΔΗΜ" + fill + "ΕΤΙΜΗϹΕΝ"
    divided = model.encode("η βουλη και ο δημ?? ετιμησεν", 1, "?")
    assert not divided.undivided and divided.input_ids == enc.input_ids


def test_lost_text_and_a_lacuna_meet_at_a_word_space(greek_with_lexicon):
    """Where text lost for good (``-``) meets a lacuna (``?``), a word begins: an editor's
    supplements are words."""
    model, a = greek_with_lexicon, GREEK
    enc = model.encode("ΗΒΟΥΛΗΚΑΙ---??ΕΤΙΜΗϹΕΝ---", 1, "?")
    read = a.decode(enc.input_ids[1:])
    assert "--- ??" in read and read.endswith(" ---") and read.startswith("η βουλη και")


def test_without_division_a_random_network_gives_what_the_lexicon_says(greek_with_lexicon):
    """The lexicon alone decides ``δημ??`` (a random network has nothing to say): ος first,
    as in the divided text, and a lacuna's edge opens a word where the lexicon has one."""
    model = greek_with_lexicon
    for text in ("ΗΒΟΥΛΗΚΑΙΟΔΗΜ??ΕΤΙΜΗϹΕΝ", "η βουλη και ο δημ?? ετιμησεν"):
        [first] = infill.fill(model, text, top_k=1, rerank="off")[0]
        assert "".join(first.fills).lower() in ("οϲ", "οσ", "ος")


def test_an_unknown_length_keeps_what_the_text_writes(greek_with_lexicon):
    """Length variants of an undivided text restore no word space, sigma written lunate."""
    comps = infill.fill(greek_with_lexicon, "ΗΒΟΥΛΗΚΑΙΟΔΗΜ___ΕΤΙΜΗϹΕΝ", gap="1-3", top_k=30,
                        beam_size=30)[0]
    assert len(comps) == 30 and {len(c.fills[0]) for c in comps} == {1, 2, 3}
    assert all(" " not in c.fills[0] and "Σ" not in c.fills[0] for c in comps)
    assert any("Ϲ" in c.fills[0] for c in comps)


def test_readings_and_check_read_the_text_as_a_fill_does(greek_with_lexicon):
    from infill.checking import read_for_check

    model = greek_with_lexicon
    scored = infill.readings(model, "ΗΒΟΥΛΗΚΑΙΟΔΗΜ??ΕΤΙΜΗϹΕΝ", ["ΟϹ|ΟΥ"])
    assert {r.readings[0] for r in scored.combinations} == {"ΟϹ", "ΟΥ"}
    assert any("divides no words" in n for n in scored.notes)
    assert scored.combinations[0].readings[0] == "ΟϹ"
    read = read_for_check(model, "ΗΒΟΥΛΗΚΑΙΟΔΗΜΟϹΕΤΙΜΗϹΕΝ")
    assert model.alphabet.decode(read.ids[1:]) == "η βουλη και ο δημοσ ετιμησεν"
    assert any("divides no words" in n for n in read.notes)


def test_builtin_greek_restores_a_diplomatic_transcript():
    """The commonest formula typed as the stone shows it: gave ΔΗΜΗ with a space before."""
    model = infill.load_model("builtin:greek", device="cpu")
    comps = infill.fill(model, "ΗΒΟΥΛΗΚΑΙΟΔΗΜ??ΕΤΙΜΗϹΕΝ", top_k=2)[0]
    assert comps[0].text == "ΗΒΟΥΛΗΚΑΙΟΔΗΜΟϹΕΤΙΜΗϹΕΝ"
    comps = infill.fill(model, "ΕΔΟΞΕΤΗΙΒΟΥΛΗΙΚΑΙΤΩΙ?????", top_k=2)[0]
    assert [c.text[-5:] for c in comps] == ["ΔΗΜΩΙ", "ΔΑΜΩΙ"]


def test_builtin_latin_restores_a_text_without_interpuncts():
    model = infill.load_model("builtin:latin", device="cpu")
    enc = model.encode("DMCIVLIVSF????VIXITANNISXX", 1, "?")
    assert model.alphabet.decode(enc.input_ids[1:]) == "d m c iulius f???? vixit annis xx"
    [first] = infill.fill(model, "DMCIVLIVSF????VIXITANNISXX", top_k=1)[0]
    assert first.text == "DMCIVLIVSFELIXVIXITANNISXX"


def test_the_same_division_through_api_cli_and_http(greek_lexicon_dir, front_ends_agree):
    """One behaviour per entry point: the completions and the note agree."""
    text = "ΗΒΟΥΛΗΚΑΙΟΔΗΜ??ΕΤΙΜΗϹΕΝ"
    comps = front_ends_agree(greek_lexicon_dir, text, "divides no words")
    assert len(comps) == 3 and all(len(c.text) == len(text) and " " not in c.text
                                   for c in comps)


def test_a_sampler_restores_letters_in_an_undivided_text(greek_with_lexicon):
    """Metropolis–Hastings keeps the beam's rule: every state of every chain is letters."""
    from infill.mcmc.chains import sample

    text = "ΗΒΟΥΛΗΚΑΙΟΔΗΜ???ΤΙΜΗϹΕΝ"
    res = sample(greek_with_lexicon, text, marker="?", chains=8, sweeps=20, init="random",
                 seed=0)
    assert len(res.samples) > 10
    assert all("".join(v.fills).isalpha() for v in res.samples)
    divided = sample(greek_with_lexicon, "η βουλη και ο δημ??? τιμησεν", marker="?", chains=8,
                     sweeps=20, init="random", seed=0)
    assert any(not "".join(v.fills).isalpha() for v in divided.samples)   # there, anything


def test_the_pairwise_joints_of_an_undivided_text_hold_letters(greek_with_lexicon):
    """``infill joint`` reads the two ``?`` as letters of the stone, as the beam does: the
    whole vocabulary but the word space, where the divided text's grid holds the space."""
    from infill.jobs import pair_joints

    model = greek_with_lexicon
    big = model.vocab_size + 1                        # K above |V|: every allowed token
    res = pair_joints(model, "ΗΒΟΥΛΗΚΑΙΟΔΗΜ??ΕΤΙΜΗϹΕΝ", joint_size=big, top_k=big ** 2,
                      ag_iterations=2)
    divided = pair_joints(model, "η βουλη και ο δημ?? ετιμησεν", joint_size=big,
                          top_k=big ** 2, ag_iterations=2)
    assert res.grid == (divided.grid[0] - 1, divided.grid[1] - 1)
    for rows in res.joints.values():
        assert len(rows) == res.grid[0] * res.grid[1]
        assert all(" " not in "".join(r["fills"]) and len(r["text"]) == 23 for r in rows)
    assert any(" " in "".join(r["fills"]) for r in divided.joints["MLM"])


def test_the_pairwise_joints_write_what_a_fill_writes():
    """A joint's pair is written as the fill writes it: accents and final sigma (δῆμος, not
    δῆμοσ)."""
    from infill.jobs import pair_joints

    model = infill.load_model("builtin:greek", device="cpu")
    text = "ἡ βουλὴ καὶ ὁ δῆμ?? ἐτίμησεν"
    [first] = infill.fill(model, text, top_k=1, rerank="off")[0]
    res = pair_joints(model, text, joint_size=10, top_k=1, ag_iterations=2)
    assert first.text == "ἡ βουλὴ καὶ ὁ δῆμος ἐτίμησεν"
    assert res.joints["MLM"][0]["text"] == first.text
    assert res.joints["MLM"][0]["fills"] == list(first.fills)
