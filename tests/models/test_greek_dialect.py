"""Context decides the form (issue 48): builtin:greek restores a decree's formula in the dialect
its surviving words are written in. The dozen formulae and their table are
benchmarks/greek_formulae.py; these are the ones the card promises."""
from __future__ import annotations

import pytest

import infill
from infill.data.greek import normalize
from infill.filling.calibration import calibrated
from infill.filling.defaults import recommendation


@pytest.fixture(scope="module")
def greek():
    return infill.load_model("builtin:greek", device="cpu")


def _ranked(model, text: str) -> tuple[list[str], list[float]]:
    """The beam's ten restorations of ``text`` as the word holding its lost letters, and their
    probabilities as a reader sees them (the model's calibration)."""
    comps = infill.fill(model, text, beam_size=10, top_k=10)[0]
    lost = [i for i, ch in enumerate(text) if ch == "?"]
    start, end = text.rfind(" ", 0, lost[0]) + 1, text.find(" ", lost[-1])
    words = [normalize(c.text[start:end if end >= 0 else None].strip("·,."), symbols=False)
             for c in comps]
    rec = recommendation(model)
    return words, calibrated([c.score for c in comps], rec.temperature, rec.unlisted)


@pytest.mark.parametrize("text, want", [
    ("ἔδοξε τᾶι βουλᾶι καὶ τῶι δ???ι", "δάμωι"),         # Doric: Chersonesos' decrees
    ("ἡ βουλὴ καὶ ὁ δ???ς ἐτίμησαν", "δῆμος"),          # koine: Aphrodisias' honours
    ("ἀγαθᾶι τ???ι· ἔδοξε τᾶι βουλᾶι", "τύχαι"),
    ("ἀγαθῆι τ???ι· δεδόχθαι τῆι βουλῆι", "τύχηι"),
])
def test_the_formula_is_restored_in_its_dialect_first(greek, text, want):
    words, _ = _ranked(greek, text)
    assert words[0] == normalize(want, symbols=False), words[:3]


def test_the_attic_decree_has_its_demos_second_and_no_longer_certain(greek):
    """The Attic δήμωι: the issue asks for it first; the model ranks it second at about 0.4
    (it was sixth, at 0.000, before the field's retraining) -- the card says so."""
    words, probs = _ranked(greek, "ἔδοξε τῆι βουλῆι καὶ τῶι δ???ι")
    rank = words.index("δημωι")
    assert rank <= 1 and probs[rank] >= 0.3 and probs[0] <= 0.7, (words[:3], probs[:3])
