"""A character model's mixing order: ``charmodel.json``'s ``"mixtures"`` names the parts mixed
into the network's conditional and their order (builtin:latin mixes its shape memory first)."""
from __future__ import annotations

import json

import pytest
import torch

import infill
from infill.data.greek import GREEK
from infill.models.char import MIXTURES, save_char
from infill.models.lexicon import LEXICON_FILE, build_lexicon
from infill.models.phrases import PHRASES_FILE, build_phrases
from infill.models.shapes import SHAPES_FILE, build_shapes

A = GREEK
LINES = ["εδοξε ται βουλαι και τωι δαμωι", "εδοξε τωι δαμωι, επειδη αγαθοσ",
         "ανηρ αγαθοσ ων περι τον δαμον", "ο δαμοσ ανεθηκε", "τωι δημωι και ται βουλαι"]
TEXT = "εδοξε ται βουλαι και τωι δα?ωι"


@pytest.fixture
def model_dir(tmp_path, tiny_char):
    """A tiny Greek model with a lexicon, a shape and a phrase memory; ``mixtures`` (or none)
    written into its charmodel.json."""
    def make(mixtures=None):
        d = save_char(tiny_char().model, tmp_path / "m", A)
        words = {"δαμωι": 5.0, "δημωι": 3.0, "δαμοσ": 2.0, "βουλαι": 4.0, "ανεθηκε": 1.0}
        build_lexicon(words, A, 1.0).save(d / LEXICON_FILE, A)
        build_shapes(LINES, A, sides=((4, 0), (3, 3)), beta=0.5).save(d / SHAPES_FILE, A)
        build_phrases(LINES, A).save(d / PHRASES_FILE, A)
        if mixtures is not None:
            meta = json.loads((d / "charmodel.json").read_text())
            (d / "charmodel.json").write_text(json.dumps({**meta, "mixtures": mixtures}))
        return d
    return make


def _q(model, text=TEXT):
    """The model's log q at the gap's positions, and the same composed by hand in its order."""
    enc = model.encode(text, 1, "?")
    ids = torch.tensor([enc.input_ids])
    pos = torch.tensor([list(enc.gaps[0])])
    got = model.log_probs(ids, torch.ones_like(ids), pos)
    want = torch.log_softmax(model._scores(ids, torch.ones_like(ids), pos), dim=-1)
    for name in model.mixed:
        if getattr(model, name) is not None:
            want = getattr(model, name).mix(want, ids, pos)
    return got, want


def test_a_model_without_mixtures_mixes_in_the_default_order(model_dir):
    model = infill.load_model(str(model_dir()), device="cpu")
    assert model.mixed == MIXTURES
    got, want = _q(model)
    assert torch.equal(got, want)


def test_the_order_a_model_names_is_the_order_it_mixes_and_it_matters(model_dir):
    order = ["shapes", "lexicon", "phrases"]
    model = infill.load_model(str(model_dir(order)), device="cpu")
    assert model.mixed == tuple(order)
    got, want = _q(model)
    assert torch.equal(got, want)
    default = infill.load_model(str(model_dir()), device="cpu")
    assert not torch.allclose(got, default.log_probs(*_inputs(default)), atol=1e-4)


def _inputs(model, text=TEXT):
    enc = model.encode(text, 1, "?")
    ids = torch.tensor([enc.input_ids])
    return ids, torch.ones_like(ids), torch.tensor([list(enc.gaps[0])])


def test_a_part_left_out_of_the_order_is_not_mixed(model_dir):
    model = infill.load_model(str(model_dir(["lexicon"])), device="cpu")
    assert model.shapes is not None and model.phrases is not None
    bare = infill.load_model(str(model_dir()), device="cpu")
    bare.shapes = bare.phrases = None
    assert torch.equal(model.log_probs(*_inputs(model)), bare.log_probs(*_inputs(bare)))


@pytest.mark.parametrize("mixtures, says", [
    (["shape", "lexicon"], "unknown mixture(s) 'shape'"),
    (["lexicon", "lexicon"], "named twice"),
    ("shapes,lexicon", "must be a list"),
    ([1, 2], "must be a list"),
])
def test_a_bad_mixing_order_is_one_line_exit_2(model_dir, load_error_line, mixtures, says):
    load_error_line(model_dir(mixtures), TEXT, says)


def test_the_builtins_orders():
    from infill.training.latin import MIXING_ORDER

    assert infill.load_model("builtin:latin", device="cpu").mixed == MIXING_ORDER
    assert infill.load_model("builtin:greek", device="cpu").mixed == MIXTURES
