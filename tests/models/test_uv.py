"""A Latin text that writes one letter for u and v (IVLIVS, uixit), read as the lexicon spells
it (infill.models.uv): the rule against its definition computed by hand, when it applies, and
what a user sees."""
from __future__ import annotations

import random

import pytest

import infill
from infill.data.greek import normalize
from infill.data.latin import LATIN
from infill.models.lexicon import build_lexicon
from infill.models.uv import UVReading, one_letter, uv_note, written_as

WORDS = {"iulius": 10.0, "vixit": 20.0, "augusti": 5.0, "augusto": 3.0, "xxv": 2.0,
         "servus": 4.0, "suae": 6.0, "avus": 2.0, "uva": 1.0, "vua": 3.0}
WILD = "?-"


def reading(words=WORDS) -> UVReading:
    return UVReading(build_lexicon(words, LATIN, 1.0), LATIN)


def ids(text: str) -> list[int]:
    return [LATIN.start_id] + [LATIN.char_to_id(c) for c in text]


def text_of(ids_: list[int]) -> str:
    return "".join(LATIN.symbols[i] for i in ids_[1:])


def by_definition(text: str, words: dict[str, float]) -> str:
    """The module's rule, word by word, from the lexicon as a dict."""
    def agree(w: str, word: str) -> bool:
        return len(w) == len(word) and all(
            c in WILD or (c in "uv" and d in "uv") or (c not in "uv" and c == d)
            for c, d in zip(word, w))

    def fold(c: str) -> str:
        return "u" if c == "v" else c

    def neighbours(left: str, right: str) -> list[float]:
        votes = [0.0, 0.0]
        for w, n in words.items():
            padded = "#" + w + "#"
            for k, c in enumerate(w):
                if c in "uv" and (left in WILD or fold(padded[k]) == left) \
                        and (right in WILD or fold(padded[k + 2]) == right):
                    votes[c == "v"] += n
        return votes

    out = []
    for token in text.split(" "):
        word = list(token)
        matches = [(w, n) for w, n in words.items() if agree(w, token)]
        for k, c in enumerate(token):
            if c not in "uv":
                continue
            if matches:
                votes = [sum(n for w, n in matches if w[k] == x) for x in "uv"]
            else:
                padded = "#" + token + "#"
                votes = neighbours(fold(padded[k]), fold(padded[k + 2]))
            word[k] = "v" if votes[1] > votes[0] else "u"
        out.append("".join(word))
    return " ".join(out)


def test_spelling_equals_its_definition_on_random_texts():
    rng = random.Random(7)
    alphabet = "aeiuvsxtcgl?-"
    r = reading()
    for _ in range(400):
        text = " ".join("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7)))
                        for _ in range(rng.randint(1, 4)))
        assert text_of(r.spell(ids(text))) == by_definition(text, WORDS), text
    # the known words, typed either way, come out as the lexicon spells them
    for text in ("ivlivs vixit avgvsti xxv", "iulius uixit augusti xxu"):
        assert text_of(r.spell(ids(text))) == "iulius vixit augusti xxv"


@pytest.mark.parametrize("text, capitals, want, written", [
    ("ivlivs vixit", False, "iulius vixit", "v"),       # V for both, a whole word shows it
    ("iulius uixit", False, "iulius vixit", "u"),       # an edition with u for both
    ("ivlivs avg????", False, "iulius aug????", "v"),   # a lost word read as its text writes
    ("avg???? vixit", True, "aug???? vixit", "v"),      # in capitals, V alone says it
    ("vixit xxv", True, "vixit xxv", "v"),              # ... restored letters written V
])
def test_a_text_writing_one_letter_is_respelled(text, capitals, want, written):
    out, w = reading().respell(ids(text), one_letter(text), capitals)
    assert (text_of(out), w) == (want, written)


@pytest.mark.parametrize("typed, letter", [
    ("IVLIVS VIXIT", "v"), ("d m vixit", "v"), ("Valeria uixit annis XXV", "u"),
    ("iulius uixit", "u"), ("Iulius vixit", None), ("IVLIUS", None), ("d m s", None),
])
def test_which_letter_a_typed_text_may_write_for_both(typed, letter):
    assert one_letter(typed) == letter


@pytest.mark.parametrize("text", [
    "iulius vixit",          # both letters: the editions' spelling, read as typed
    "vixit xxv",             # v only, but every v a consonant the lexicon agrees with
    "avg???? vixit",         # the only v the lexicon reads as u is in a word with lost letters
    "qvartvs",               # a word the lexicon lacks is no evidence
    "uua",                   # nor one it spells otherwise 3 times in 4 only (uva 1, vua 3)
    "d m felici",            # neither letter
])
def test_a_text_without_evidence_is_read_as_typed(text):
    assert reading().respell(ids(text), one_letter(text)) == (ids(text), None)
    if one_letter(text) != "v":                         # capitals change nothing else
        assert reading().respell(ids(text), one_letter(text), True) == (ids(text), None)


def test_the_restored_letters_are_written_as_the_text_writes_them():
    assert written_as("v") == {"u": "v", "U": "V"} and written_as("u") == {"v": "u", "U": "V"}
    assert written_as(None) == {}
    assert "(V)" in uv_note("v")[0] and "(u)" in uv_note("u")[0] and uv_note(None) == []


@pytest.fixture(scope="module")
def latin_uv_dir(char_with_lexicon) -> str:
    """A tiny random Latin character model with the WORDS lexicon beside it."""
    return char_with_lexicon(LATIN, WORDS, seed=3, max_length=48)


@pytest.fixture(scope="module")
def latin_with_lexicon(latin_uv_dir):
    """That model, loaded back through the real loader."""
    return infill.load_model(latin_uv_dir, device="cpu")


def test_a_capitals_text_is_read_respelled_and_restored_in_capitals(latin_with_lexicon):
    model = latin_with_lexicon
    enc = model.encode("IVLIVS VIXIT AVG????")
    assert model.alphabet.decode(enc.input_ids) == "iulius vixit aug????"
    assert enc.written == {"u": "v", "U": "V"} and any("one letter (V)" in n for n in enc.notes)
    comps = infill.fill(model, "IVLIVS VIXIT AVG????", top_k=5, letters=[[None, "u", "u", None]])[0]
    assert len(comps) == 5
    for comp in comps:
        fill = "".join(comp.fills)
        assert fill[1:3] == "VV" and comp.text.startswith("IVLIVS VIXIT AVG")
    plain = model.encode("iulius vixit aug????")        # the editions' spelling: as typed
    assert plain.written == {} and not any("one letter" in n for n in plain.notes)
    assert model.encode("D(is) M(anibus) VIXIT ?").written["u"] == "v"   # the stone's capitals
    assert model.encode("Vixit ?").written == {}
    assert model.encode("Valeria uixit annis XXV ?").written["v"] == "u"   # u, capital V
    comps = infill.fill(model, "Valeria uixit ann XX? ?", letters=[["v"], ["v"]], top_k=4)[0]
    assert len(comps) == 4
    for comp in comps:
        assert comp.fills[0] == "V" and comp.fills[1] == "u"


def test_builtin_latin_reads_a_text_typed_off_the_stone():
    """Capitals with V for u: ``IVLIVS`` gave FILUI and ``AVG????`` AVGAVIT before."""
    model = infill.load_model("builtin:latin", device="cpu")
    [first] = infill.fill(model, "D M C IVLIVS F???? VIXIT ANNIS XX", marker="?", top_k=1,
                          rerank="off")[0]
    assert "".join(first.fills) == "ELIX"
    comps = infill.fill(model, "PRO SALVTE IMP CAES M AVRELI ANTONINI AVG????", marker="?",
                        top_k=2)[0]
    assert sorted("".join(c.fills) for c in comps) == ["VSTI", "VSTO"]
    scored = infill.readings(model, "PRO SALVTE IMP CAES M AVRELI ANTONINI AVG????",
                             ["VSTI|usti|VSTO"])
    assert [r.readings[0] for r in scored.combinations] == ["VSTO", "VSTI"]
    assert any("'usti'" in n and "scored once" in n for n in scored.notes)
    assert min(r.prob for r in scored.combinations) > 0.2       # not 'vsti' against 'usti'
    assert normalize("".join(first.fills), alphabet=model.alphabet) == "elix"


def test_a_latin_letter_set_holding_u_or_v_holds_both(latin_with_lexicon):
    """A partly visible V on the stone is u or v as the edition spells it."""
    from infill.decoding.letters import entry_ids

    model, a = latin_with_lexicon, LATIN
    u, v = a.index["u"], a.index["v"]
    assert sorted(entry_ids(model, "V")) == sorted(entry_ids(model, "u")) == sorted([u, v])
    assert sorted(entry_ids(model, "iv")) == sorted([a.index["i"], u, v])
    assert entry_ids(model, "l") == [a.index["l"]]
    assert entry_ids(model, [v]) == [v]            # a token id is itself: a fixed reading
    comps = infill.fill(model, "IVLI?S ?", letters=[["V"], None], top_k=6)[0]
    assert {c.fills[0] for c in comps} <= {"U", "V"} and len(comps) == 6


def test_the_same_reading_through_api_cli_and_http(latin_uv_dir, front_ends_agree):
    """One behaviour per entry point: the completions and the note agree."""
    text = "IVLIVS VIXIT AVG??"
    comps = front_ends_agree(latin_uv_dir, text, "one letter (V)")
    assert comps and all(c.text.startswith("IVLIVS VIXIT AVG") and "U" not in c.text
                         for c in comps)


def test_a_check_reads_the_text_as_a_fill_does(latin_with_lexicon):
    """``infill check`` on a text typed off the stone scores Iulius, not an unseen ivlivs."""
    from infill.checking import read_for_check

    model = latin_with_lexicon
    for text in ("IVLIVS VIXIT", "IVLIVS VIXIT ?"):
        read = read_for_check(model, text, marker="?")
        assert model.alphabet.decode(read.ids).startswith("iulius vixit")
        assert any("one letter (V)" in n for n in read.notes)
    plain = read_for_check(model, "Iulius vixit")
    assert not any("one letter" in n for n in plain.notes)
    dotted = read_for_check(model, "iulius·vixit·?", marker="?")    # a divider, not a u/v
    assert dotted.notes == model.encode("iulius·vixit·?", 1, "?").notes
    assert not any("one letter" in n for n in dotted.notes)


def test_a_length_variant_writes_as_the_text_does(latin_with_lexicon):
    """Each length of an unknown-length gap keeps what the text writes (it gave ``E QUI`` and
    ``POSUIT`` in a V-text, ``H S E`` in a text divided by interpuncts)."""
    from infill.decoding.lengths import gap_lengths, variants

    model = latin_with_lexicon
    for text, written in (("IVLIVS VIXIT AVG___", {"u": "v", "U": "V"}),
                          ("IVLIVS·VIXIT·___", {"u": "v", "U": "V", " ": "·"})):
        found = variants(model, text, gap_lengths(model, "2-4"))
        assert [len(v.encoding.gaps[0]) for v in found] == [2, 3, 4]
        assert all(v.encoding.written == written for v in found)
    comps = infill.fill(model, "IVLIVS·VIXIT·___", gap="2-4", top_k=30, beam_size=30)[0]
    assert len(comps) == 30 and not any(c in f for comp in comps for f in comp.fills
                                        for c in " Uu")
