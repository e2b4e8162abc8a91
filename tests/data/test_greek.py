"""Greek normalization and the Ithaca-style alphabet."""
from pathlib import Path

import pytest

from infill.data.greek import GREEK, LETTERS, Alphabet, normalize

CORPUS = Path(__file__).resolve().parents[1] / "../shared/data/greek/perseus_grc.txt"


@pytest.mark.parametrize("raw, expected", [
    # Iliad 1.1: accents, breathings, diaeresis and capitals removed; final sigma -> σ
    ("Μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος", "μηνιν αειδε θεα πηληιαδεω αχιληοσ"),
    # elision apostrophes are dropped without joining words; comma kept
    ("οὐλομένην, ἣ μυρίʼ Ἀχαιοῖς ἄλγεʼ ἔθηκε,", "ουλομενην, η μυρι αχαιοισ αλγε εθηκε,"),
    ("πολλὰς δʼ ἰφθίμους ψυχὰς Ἄϊδι προΐαψεν", "πολλασ δ ιφθιμουσ ψυχασ αιδι προιαψεν"),
    # final sigma, also from an all-caps word (Python lowercases Σ at word end to ς)
    ("λόγος ΛΌΓΟΣ Σωκράτης", "λογοσ λογοσ σωκρατησ"),
    # iota subscript and adscript are dropped (not written as ι)
    ("τῷ ᾠδῇ ᾼ ᾳ", "τω ωδη α α"),
    # Greek question mark (U+037E) -> ';', ano teleia (U+0387) and middle dot -> '·', '.' kept
    ("τίς\u037e ἀλλά\u0387 ναί· οὔ.", "τισ; αλλα· ναι· ου."),
    # other punctuation, brackets, quotes, dashes dropped
    ("«ἔπος» — (καὶ) [θεός] 〈ὅδε〉 †λ†: ἄνα!", "εποσ και θεοσ οδε λ ανα"),
    # unknown scripts are dropped; digits become the numeral symbol
    ("abc Ἑλλάς 日本 ابج 1821 ΙΙ", "ελλασ 0000 ιι"),
    # letter variants: lunate sigma, curly beta/theta, phi/kappa/rho symbols
    ("ϲοφόϲ ϐ ϑ ϕ ϰ ϱ ϵ ϖ", "σοφοσ β θ φ κ ρ ε π"),
    # whitespace collapsed and trimmed
    ("  α\n\tβ   γ  ", "α β γ"),
    ("", ""),
])
def test_normalize_cases(raw, expected):
    assert normalize(raw) == expected


def test_restoration_symbols_kept_only_when_asked():
    assert normalize("μῆ-ιν ἄ?ειδε") == "μη-ιν α?ειδε"
    assert normalize("μῆ-ιν ἄ?ειδε", symbols=False) == "μηιν αειδε"
    assert normalize("  α ? ", strip=False) == " α ? "


def test_alphabet_layout():
    a = GREEK
    assert len(LETTERS) == 24 and "ς" not in LETTERS
    assert a.n_outputs == 32 and len(a) == 35
    # outputs come first, then the input-only symbols
    assert a.mask_id >= a.n_outputs and a.pad_id >= a.n_outputs and a.start_id >= a.n_outputs
    assert a.missing_id < a.n_outputs and a.unk_id < a.n_outputs and a.space_id < a.n_outputs
    assert [a.symbols[i] for i in a.letter_ids] == list(LETTERS)
    assert a.char_to_id("x") == a.unk_id
    assert Alphabet.from_dict(a.to_dict()).symbols == a.symbols
    with pytest.raises(ValueError):
        Alphabet(numeral="α")


def test_encode_decode_round_trip():
    text = normalize("Ἄνδρα μοι ἔννεπε, Μοῦσα, πολύτροπον, ὃς μάλα πολλὰ 12; τί·")
    ids = GREEK.encode(text)
    assert all(i < GREEK.n_outputs and i != GREEK.unk_id for i in ids)
    assert GREEK.decode([GREEK.start_id] + ids + [GREEK.pad_id]) == text


SAMPLE = ["Ἀτρεΐδης τε ἄναξ ἀνδρῶν καὶ δῖος Ἀχιλλεύς.",
          "Ἡροδότου Ἁλικαρνησσέος ἱστορίης ἀπόδεξις ἥδε, ὡς μήτε τὰ γενόμενα",
          "Θουκυδίδης Ἀθηναῖος ξυνέγραψε τὸν πόλεμον τῶν Πελοποννησίων καὶ Ἀθηναίων,"]


def test_normalized_corpus_only_uses_the_alphabet():
    lines = (CORPUS.read_text(encoding="utf-8").splitlines()[:3000] if CORPUS.exists()
             else SAMPLE)
    allowed = set(GREEK.text_chars)
    for line in lines:
        out = normalize(line, symbols=False)
        assert set(out) <= allowed, (line, set(out) - allowed)
        assert "  " not in out and out == out.strip()
