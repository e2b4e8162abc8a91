"""The device paths: each model family run where ``--device`` says (a pytest option: cpu unless
given, ``python -m pytest --device cuda`` on a GPU machine) and in each precision, against float32
on the CPU. float32 must give the CPU's completions and scores; bf16 and fp16 must keep the
ranking's top and stay close; fp16 off CUDA is one clear error; training runs there and its model
loads back and fills there."""
import json

import pytest
import torch
from click.testing import CliRunner

import infill
from infill.errors import ConfigError
from infill_cli.main import main

TEXTS = {
    "bert": (["the ___ sat on the mat", "a ___ ___ dog"], 1),
    "char": (["μηνιν αει?ε θεα", "ανδρα μοι ε??επε πολυτροπον"], None),
    "esm": (["MKTAYIAKQR___LEEKKGAL", "GSHM___WQEL"], 2),
}
HALF_TOLERANCE = {"bf16": 0.25, "fp16": 0.05}
"""Largest |score difference| per filled position against float32 (nats)."""


@pytest.fixture(scope="module")
def paths(bert_dir, greek_char_dir, esm2_tiny_path):
    return {"bert": bert_dir, "char": greek_char_dir, "esm": esm2_tiny_path}


def _fills(lm, family, scorer="standard"):
    texts, gap = TEXTS[family]
    config = infill.DecodeConfig(beam_size=4, scorer=scorer)
    return infill.fill(lm, texts, gap=gap, top_k=3, config=config)


@pytest.mark.parametrize("scorer", ["standard", "hcb"])
@pytest.mark.parametrize("family", ["bert", "char", "esm"])
def test_float32_on_the_device_gives_the_cpus_completions(paths, device, family, scorer):
    cpu = _fills(infill.load_model(paths[family], device="cpu"), family, scorer)
    there = infill.load_model(paths[family], device=device)
    assert there.device.type == torch.device(device).type
    got = _fills(there, family, scorer)
    assert [[c.tokens for c in cs] for cs in got] == [[c.tokens for c in cs] for cs in cpu]
    # cuDNN runs float32 convolutions (the char model's) in TF32 by torch's default: on an H200 a
    # beam score of 0.779 came out 1.4e-4 from the CPU's. Same beams, scores to 1e-3.
    tol = 1e-5 if device == "cpu" else 1e-3
    for cs_got, cs_cpu in zip(got, cpu):
        for a, b in zip(cs_got, cs_cpu):
            assert a.score == pytest.approx(b.score, abs=tol)
            assert a.text == b.text


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("family", ["bert", "char", "esm"])
def test_half_precision_keeps_the_best_completion(paths, device, family, dtype):
    if dtype == "fp16" and not device.startswith("cuda"):
        with pytest.raises(ConfigError, match="fp16 is only supported on CUDA"):
            infill.load_model(paths[family], device=device, dtype=dtype)
        return
    ref = _fills(infill.load_model(paths[family], device="cpu"), family)
    half = infill.load_model(paths[family], device=device, dtype=dtype)
    got = _fills(half, family)
    assert [cs[0].tokens for cs in got] == [cs[0].tokens for cs in ref]
    for cs_got, cs_ref in zip(got, ref):
        n = len(cs_ref[0].tokens)
        assert all(torch.isfinite(torch.tensor(c.score)) for c in cs_got)
        assert abs(cs_got[0].score - cs_ref[0].score) <= HALF_TOLERANCE[dtype] * n
        for p in cs_got[0].positions:          # confidences are probabilities
            assert 0.0 <= p.prob <= 1.0 and p.logq <= 0.0


def test_the_command_on_the_device_gives_the_apis_result(bert_dir, device):
    dtype = "bf16"
    args = ["run", "--model", bert_dir, "--device", device, "--dtype", dtype, "--beam", "4",
            "-k", "2", "--json", "the ___ sat on the mat"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    line = json.loads(r.output.strip().splitlines()[-1])
    lm = infill.load_model(bert_dir, device=device, dtype=dtype)
    api = infill.fill(lm, "the ___ sat on the mat", top_k=2,
                      config=infill.DecodeConfig(beam_size=4))[0]
    assert [c["text"] for c in line["completions"]] == [c.text for c in api]
    assert [c["score"] for c in line["completions"]] == pytest.approx([c.score for c in api],
                                                                      abs=1e-5)


def test_readings_on_the_device_score_what_the_beam_scored(bert, device):
    """The exact score of a fixed filling (infill.readings) equals the beam's score of the same
    filling, both computed there."""
    r = infill.readings(bert, "the ___ on the mat", ["cat|dog|mat|on|sat|the"], beam_size=12,
                        top_k=12)
    found = [c for c in r.combinations if c.beam_rank is not None]
    assert len(found) == 6 and bert.device.type == torch.device(device).type
    for c in found:
        assert c.score == pytest.approx(c.beam_score, abs=1e-4)


def test_sampling_on_the_device_visits_valid_fills(bert, device):
    from infill.mcmc.chains import sample

    result = sample(bert, "the ___ ___ on the mat", sweeps=3, chains=2, seed=0)
    assert result.samples
    for s in result.samples:
        assert torch.isfinite(torch.tensor(s.energy)) and s.count >= 1
        assert len(s.tokens) == 2 and not set(s.tokens) & set(bert.special_ids)


def test_training_on_the_device_saves_a_model_that_fills_there(tmp_path, device):
    corpus = tmp_path / "greek.txt"
    corpus.write_text("μηνιν αειδε θεα πηληιαδεω αχιληος\nανδρα μοι εννεπε μουσα πολυτροπον\n" * 40,
                      encoding="utf-8")
    out = tmp_path / "g"
    r = CliRunner().invoke(main, ["train", "greek", str(corpus), "--out", str(out), "--steps", "4",
                                  "--batch-size", "8", "--layers", "1", "--hidden", "32",
                                  "--heads", "2", "--ff", "64", "--max-length", "32",
                                  "--eval-every", "2", "--device", device, "--dtype", "bf16",
                                  "--no-progress"])
    assert r.exit_code == 0, r.output
    info = json.loads((out / "train_info.json").read_text())
    assert info["config"]["device"] == device and info["config"]["dtype"] == "bf16"
    lm = infill.load_model(str(out), device=device)
    assert len(infill.fill(lm, "μηνιν α?ειδε", top_k=2)[0]) == 2
