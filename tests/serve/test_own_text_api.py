"""builtin:greek's memory of the input's own text reaches every front end through the one jobs
layer: the HTTP API, ``infill run --json`` and the Python API give the same restoration, and it
is the name the inscription gives elsewhere -- though the text's own words of that length give
Διονυσίου twice (the own words are mixed first, so the repeated clause has the last word)."""
from __future__ import annotations

TEXT = ("Ἀρτέμων Ἀδράστου τοῦ Διονυσίου Δινομάχου τοὺς ἓξ κείονας ἐκ τῶν ἰδίων ἀνέθηκε· "
        "Ἀρτέμων Ἀδράστου τοῦ Διονυσίου ????????? τοὺς ἓξ κείονας")


def test_the_own_text_restoration_is_the_same_through_http_cli_and_api(catalog,
                                                                      first_of_every_front_end):
    model = catalog.get("builtin:greek")
    assert model.own_text is not None and model.own_words is not None
    assert first_of_every_front_end("builtin:greek", TEXT) == "δινομαχου"


def test_mixed_after_the_own_text_the_own_words_would_outweigh_the_repeated_clause():
    import infill
    model = infill.load_model("builtin:greek", device="cpu")
    model.mixed = tuple(m for m in model.mixed if m != "own_words") + ("own_words",)
    [best] = infill.fill(model, TEXT, top_k=1)
    assert "".join(best[0].fills).lower() == "διονυσίου"
