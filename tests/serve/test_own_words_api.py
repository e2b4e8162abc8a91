"""builtin:greek's lexicon of the input's own whole words reaches every front end through the one
jobs layer: the HTTP API, ``infill run --json`` and the Python API give the same restoration, and
it is the city the treaty names elsewhere."""
from __future__ import annotations

import infill

TEXT = "ὀμόσαι τοὺς κόσμους τοῖς τε Λυττίοις καὶ τοῖς Πριανσιεῦσι· Λυ?????? δὲ ταῦτα"
LOST = "Μηνόφιλος Μηνοφίλου ὁ ἱερεὺς ἀνέθηκεν· ????????? Μηνοφίλου ἱερεύς"


def test_the_own_words_restoration_is_the_same_through_http_cli_and_api(
        catalog, first_of_every_front_end):
    model = catalog.get("builtin:greek")
    assert model.own_words is not None and model.mixed[-2:] == ("own_words", "own_text")
    assert first_of_every_front_end("builtin:greek", TEXT) == "ττιοις"


def test_without_its_own_words_the_model_does_not_find_the_city():
    model = infill.load_model("builtin:greek", device="cpu")
    model.own_words = None
    [bare] = infill.fill(model, [TEXT], gap=1, marker="?", top_k=3)
    assert "ττιοις" not in ["".join(c.fills).lower() for c in bare]


def test_a_lost_word_meets_the_texts_words_from_its_first_letter_in_every_front_end(
        catalog, first_of_every_front_end):
    model = catalog.get("builtin:greek")
    assert model.own_words.bare == 10.0
    assert first_of_every_front_end("builtin:greek", LOST) == "μηνόφιλος"
    with_bare = infill.fill(model, [LOST], gap=1, marker="?", top_k=1)[0][0]
    own = model.own_words
    try:
        model.own_words = type(own)(own.alphabet, own.beta, own.shortest, None)
        without = infill.fill(model, [LOST], gap=1, marker="?", top_k=1)[0][0]
    finally:
        model.own_words = own
    assert with_bare.fills == without.fills          # the same word, now likelier
    assert with_bare.score > without.score + 0.05
