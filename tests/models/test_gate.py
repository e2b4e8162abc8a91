"""The memory gate (infill/models/gate.py): its weights and mixture against their definitions,
a dialect's context reading its own corpus's memory where pooled memories cannot tell, the
files' round trip through load_model (a user's phrases counted into every source), and a bad
gate.json as one error."""
import json
import math

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import infill
from infill.data.greek import GREEK, normalize
from infill.errors import ModelLoadError
from infill.models.char import save_char
from infill.models.gate import GATE_FILE, MemoryGate, Source, load_gate, save_gate
from infill.models.phrases import PHRASES_FILE, USER_PHRASES, build_phrases
from infill.models.shapes import SHAPES_FILE, build_shapes
from infill_cli.main import main

A = GREEK
DORIC = ["εδοξε ται βουλαι και τωι δαμωι", "ο δαμοσ ανεθηκε ται αθαναι", "ται πολει και τωι δαμωι"]
ATTIC = ["εδοξε τηι βουληι και τωι δημωι", "ο δημοσ ανεθηκε τηι αθηναι", "τηι πολει και τωι δημωι"]
SIDES = ((3, 3), (8, 0), (0, 8), (6, 6))
TEXT = [A.space_id, *A.letter_ids, A.index[A.numeral]]


def _ids(text: str) -> torch.Tensor:
    return torch.tensor([[A.start_id] + [A.mask_id if c == "?" else A.char_to_id(c)
                                         for c in text]])


def _source(name: str, lines: list[str], prior: float = 1.0) -> Source:
    return Source(name, prior, build_phrases(lines, A, sides=SIDES, beta=0.5),
                  build_shapes(lines, A))


def _gate(sharpness: float = 0.5, priors=(1.0, 1.0)) -> MemoryGate:
    return MemoryGate([_source("doric", DORIC, priors[0]), _source("attic", ATTIC, priors[1])],
                      sharpness, np.array(TEXT))


def _brute_evidence(memory, ids: torch.Tensor) -> float:
    """ℓ by its definition: at each text character t, the memory mixed into a q uniform over
    the text characters gives M(x_t) + keep / V; their logs summed."""
    uniform = torch.full((1, 1, A.n_outputs), -math.inf)
    uniform[..., TEXT] = -math.log(len(TEXT))
    total = 0.0
    for t, token in enumerate(ids[0].tolist()):
        if token in TEXT:
            total += memory.mix(uniform.double(), ids, torch.tensor([[t]]))[0, 0, token].item()
    return total


@pytest.mark.parametrize("text", ["εδοξε ται βουλαι και τωι δ?μωι", "ο δημοσ ανεθηκε τ?ι"])
@pytest.mark.parametrize("sharpness, priors", [(0.5, (1.0, 1.0)), (0.0, (3.0, 1.0)),
                                               (2.0, (1.0, 4.0))])
def test_the_gate_is_its_definition_and_sums_to_one(text, sharpness, priors):
    gate, ids = _gate(sharpness, priors), _ids(text)
    pos = torch.tensor([[text.index("?") + 1]])
    evidence = np.array([_brute_evidence(s.phrases, ids) for s in gate.sources])
    logits = np.log(priors) + sharpness * evidence
    want_g = np.exp(logits - np.logaddexp.reduce(logits))
    assert np.allclose(gate.weights(ids.numpy()), want_g[None], atol=1e-12)
    logq = torch.log_softmax(torch.randn(1, 1, A.n_outputs, dtype=torch.float64), -1)
    got = gate.mix(logq, ids, pos).exp()[0, 0]
    each = [s.phrases.mix(s.shapes.mix(logq, ids, pos), ids, pos).exp()[0, 0]
            for s in gate.sources]
    assert torch.allclose(got, sum(g * q for g, q in zip(want_g, each)), atol=1e-12)
    assert got.sum().item() == pytest.approx(1.0, abs=1e-12)
    if sharpness:
        assert evidence[0] != evidence[1]        # the two corpora do tell these texts apart


def test_one_source_is_exactly_its_own_memories():
    source = _source("doric", DORIC)
    gate = MemoryGate([source], 0.5, np.array(TEXT))
    ids, pos = _ids("ο δαμοσ ανεθη?ε"), torch.tensor([[14]])
    logq = torch.log_softmax(torch.randn(1, 1, A.n_outputs, dtype=torch.float64), -1)
    assert torch.allclose(gate.mix(logq, ids, pos), source.mix(logq, ids, pos), atol=1e-12)


@pytest.mark.parametrize("text, gold", [("εδοξε ται βουλαι και τωι δ?μωι", "α"),
                                        ("εδοξε τηι βουληι και τωι δ?μωι", "η")])
def test_the_context_reads_its_own_corpus_where_pooled_memories_cannot_tell(text, gold, tiny_char):
    gated = infill.fill(tiny_char(gate=_gate(0.5)), text, marker="?", top_k=1)[0][0]
    assert normalize("".join(gated.fills)) == gold
    pooled = tiny_char()
    pooled.phrases = build_phrases(DORIC + ATTIC, A, sides=SIDES, beta=0.5)
    pooled.shapes = build_shapes(DORIC + ATTIC, A)
    both = [normalize("".join(infill.fill(pooled, t, marker="?", top_k=1)[0][0].fills))
            for t in ("εδοξε ται βουλαι και τωι δ?μωι", "εδοξε τηι βουληι και τωι δ?μωι")]
    assert both[0] == both[1]                 # pooled: the same letter in either dialect


def _saved(tmp_path, tiny_char, sharpness=0.5):
    d = save_char(tiny_char().model, tmp_path / "m", A)
    for name, lines in (("doric", DORIC), ("attic", ATTIC)):
        (d / "sources" / name).mkdir(parents=True)
        build_phrases(lines, A, sides=SIDES, beta=0.5).save(d / "sources" / name / PHRASES_FILE, A)
        build_shapes(lines, A).save(d / "sources" / name / SHAPES_FILE, A)
    save_gate(d, ["doric", "attic"], [2.0, 1.0], sharpness)
    return d


def test_the_files_round_trip_and_a_users_phrases_go_into_every_source(tmp_path, tiny_char):
    d = _saved(tmp_path, tiny_char)
    model = infill.load_model(str(d), device="cpu")
    want = _gate(0.5, (2.0, 1.0))
    ids = _ids("εδοξε τηι βουληι και τωι δ?μωι").numpy()
    assert np.allclose(model.gate.weights(ids), want.weights(ids), atol=1e-12)
    assert [s.name for s in model.gate.sources] == ["doric", "attic"]
    text = "ηρακλειδησ ηρακλειδο?"
    before = infill.fill(model, text, marker="?", top_k=1)[0][0]
    assert normalize("".join(before.fills)) != "υ"
    (d / USER_PHRASES).write_text("Ἡρακλείδης Ἡρακλείδου\t3\n", encoding="utf-8")
    again = load_gate(d, A)
    for before, after in zip(model.gate.sources, again.sources):
        for part in ("phrases", "shapes"):
            grew = len(getattr(after, part).keys) - len(getattr(before, part).keys)
            assert grew > 0, (before.name, part)
    filled = infill.fill(infill.load_model(str(d), device="cpu"), text, marker="?", top_k=1)
    assert normalize("".join(filled[0][0].fills)) == "υ"


@pytest.mark.parametrize("change, says", [
    (lambda g: g.update(format="x"), "not an infill memory gate"),
    (lambda g: g.update(sharpness=-1), "sharpness"),
    (lambda g: g.update(sharpness="0.5"), "sharpness"),
    (lambda g: g.update(sharpness=True), "sharpness"),
    (lambda g: g.update(sources=[]), "sources"),
    (lambda g: g["sources"].append(dict(g["sources"][0])), "listed twice"),
    (lambda g: g["sources"][0].update(name="../attic"), "source name"),
    (lambda g: g["sources"][0].update(prior=0), "prior"),
    (lambda g: g["sources"][0].update(prior=float("nan")), "prior"),
    (lambda g: g["sources"][0].update(name="ionic"), "has no sources/ionic/phrases"),
    (lambda g: g["sources"][0].update(extra=1), "each source is"),
])
def test_a_bad_gate_is_one_error_and_exit_2(tmp_path, change, says, tiny_char):
    d = _saved(tmp_path, tiny_char)
    gate = json.loads((d / GATE_FILE).read_text())
    change(gate)
    (d / GATE_FILE).write_text(json.dumps(gate))
    with pytest.raises(ModelLoadError, match=says):
        load_gate(d, A)
    r = CliRunner().invoke(main, ["run", "-m", str(d), "τωι δη?ωι"])
    assert r.exit_code == 2 and "Traceback" not in r.output and GATE_FILE in r.output, r.output
