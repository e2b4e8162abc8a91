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
    ("ἔδοξε τῆι βουλῆι καὶ τῶι δ???ι", "δήμωι"),         # Attic-Ionic: the first case
    ("ἔδοξε τᾶι βουλᾶι καὶ τῶι δ???ι", "δάμωι"),         # Doric: Chersonesos' decrees
    ("ἡ βουλὴ καὶ ὁ δ???ς ἐτίμησαν", "δῆμος"),          # koine: Aphrodisias' honours
    ("ἀγαθᾶι τ???ι· ἔδοξε τᾶι βουλᾶι", "τύχαι"),
    ("ἀγαθῆι τ???ι· δεδόχθαι τῆι βουλῆι", "τύχηι"),
])
def test_the_formula_is_restored_in_its_dialect_first(greek, text, want):
    words, _ = _ranked(greek, text)
    assert words[0] == normalize(want, symbols=False), words[:3]


def test_the_two_decrees_differ_only_by_their_dialect_and_so_do_their_readings(greek):
    """The same formula with τῆι βουλῆι or τᾶι βουλᾶι: the memory gate reads the line's dialect
    (infill/models/gate.py), so the demos changes place and neither is called certain."""
    attic, p_attic = _ranked(greek, "ἔδοξε τῆι βουλῆι καὶ τῶι δ???ι")
    doric, p_doric = _ranked(greek, "ἔδοξε τᾶι βουλᾶι καὶ τῶι δ???ι")
    assert attic[:2] == ["δημωι", "δαμωι"] and doric[:2] == ["δαμωι", "δημωι"]
    assert 0.5 < p_attic[0] < 0.9 and 0.5 < p_doric[0] < 0.99, (p_attic[:2], p_doric[:2])
