"""Aeneas's checkpoints: the restricted unpickler, telling them from Ithaca's by content, the torch
port's parity with Aeneas's own forward outputs (tests/fixtures/aeneas: random weights, made by
running Aeneas's code), a long input against a plain reference computation, and Aeneas's text
preparation with its errors."""
from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import infill
from infill.data.pickles import read_pickle_file
from infill.errors import InputError, ModelLoadError
from infill.models.aeneas import AeneasMaskedLM, prepare
from infill.models.flax_checkpoint import flatten, weights
from infill_cli.main import main

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "aeneas"
EXPECTED = json.loads((FIX / "expected.json").read_text(encoding="utf-8"))
NPZ = np.load(FIX / "expected.npz")
LANGS = ["latin", "greek"]
MARKER = Path("/tmp/aeneas_fixture_pwned")


def pickle_of(lang: str, variant: str) -> Path:
    return FIX / f"aeneas_tiny_{lang}_{variant}.pkl"


@pytest.fixture(scope="module", params=[(lang, v) for lang in LANGS for v in ("numpy", "jax")],
                ids=lambda p: "-".join(p))
def loaded(request):
    lang, variant = request.param
    return lang, infill.load_model(str(pickle_of(lang, variant)), device="cpu")


def test_loads_as_aeneas_with_its_language(loaded):
    lang, lm = loaded
    assert isinstance(lm, AeneasMaskedLM)
    assert lm.language == {"latin": "Latin", "greek": "Ancient Greek"}[lang]
    table = EXPECTED["languages"][lang]
    assert list(lm.letters.symbols) == table["alphabet_idx2char"]
    assert lm.letters.candidates == table["search_candidate_ids"]
    allowed = lm.allowed_mask().nonzero().squeeze(1).tolist()
    assert allowed == table["search_candidate_ids"]        # the engine's candidates: Aeneas's


def test_every_forward_output_matches_aeneas_at_every_position(loaded):
    lang, lm = loaded
    worst = 0.0
    for i, case in enumerate(EXPECTED["languages"][lang]["cases"]):
        pre = f"{lang}_{i}_"
        L = case["text_len_with_sos"]
        ids = torch.from_numpy(NPZ[pre + "char_ids"].astype(np.int64))[None]
        assert lm.tokenize(case["input"]) == ids[0, :L].tolist()       # Aeneas's preparation
        with torch.inference_mode():
            full, short = lm.model(ids, ids > 0), lm.model(ids[:, :L], ids[:, :L] > 0)
        got = {"mask_logits": full["mask"][0, :L], "unk_logits": full["unk"][0, :L],
               "nsp_logits": full["nsp"][0, :L], "torso": full["torso"][0, :L],
               "date_logits": full["date"][0], "region_logits": full["region"][0],
               "mask_logits_unpadded": short["mask"][0], "unk_logits_unpadded": short["unk"][0]}
        for key, value in got.items():
            want = NPZ[pre + key]
            assert value.shape == want.shape, key
            worst = max(worst, float(np.abs(value.numpy() - want).max()))
    assert worst <= 1e-4, worst


def test_adapter_log_probs_are_the_restoration_softmax(loaded):
    lang, lm = loaded
    case = EXPECTED["languages"][lang]["cases"][0]
    L = case["text_len_with_sos"]
    ids = torch.from_numpy(NPZ[f"{lang}_0_char_ids"][:L].astype(np.int64))[None]
    pos = torch.tensor([case["restore_positions"]])
    lq = lm.log_probs(ids, ids > 0, pos)[0].numpy()
    ref = NPZ[f"{lang}_0_mask_logits_unpadded"][case["restore_positions"]].astype(np.float64)
    ref -= np.log(np.exp(ref).sum(-1, keepdims=True))
    assert np.abs(lq - ref).max() < 1e-4


def _reference_logits(flat: dict, ids: np.ndarray, heads: int) -> np.ndarray:
    """Aeneas's network written out plainly in float64 numpy (module docstring of
    infill/models/aeneas.py): dense attention over every key, no blocks."""
    w = {k: np.asarray(v, dtype=np.float64) for k, v in flat.items()}

    def layer_norm(x, p):
        mu = x.mean(-1, keepdims=True)
        var = (x * x).mean(-1, keepdims=True) - mu * mu
        return (x - mu) / np.sqrt(var + 1e-12) * w[p + "/scale"] + w[p + "/bias"]

    def rms(x, p):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w[p + "/scale"]

    def gelu(x):
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))

    T = len(ids)
    x = layer_norm(w["char_embeddings/embedding"][ids], "text_char_emb_norm")
    layers = len({k.split("/")[0] for k in w if k.startswith("encoderblock_")})
    D = w["encoderblock_0/self_attention/query/kernel"].shape[1] // heads
    freq = (1.0 / 10000.0 ** (2 * np.arange(D // 2) / D)).astype(np.float32)
    ang = np.arange(T, dtype=np.float32)[:, None] * freq           # float32 tables, as Aeneas's
    cos, sin = (np.concatenate([f(ang), f(ang)], 1).astype(np.float64) for f in (np.cos, np.sin))
    for i in range(layers):
        b = f"encoderblock_{i}/"
        h = rms(x, b + "pre_self_attention_layer_norm")
        out = np.zeros((T, heads * D))
        for hd in range(heads):
            cut = slice(hd * D, (hd + 1) * D)
            q, k, v = (h @ w[f"{b}self_attention/{m}/kernel"][:, cut] for m in ("query", "key",
                                                                               "value"))
            q = q * cos + np.concatenate([-q[:, D // 2:], q[:, :D // 2]], 1) * sin
            k = k * cos + np.concatenate([-k[:, D // 2:], k[:, :D // 2]], 1) * sin
            s = q @ k.T
            s = np.exp(s - s.max(1, keepdims=True))
            out[:, cut] = (s / s.sum(1, keepdims=True)) @ v
        x = x + out @ w[b + "self_attention/out/kernel"]
        h = rms(x, b + "pre_mlp_layer_norm")
        x = x + (gelu(h @ w[b + "mlp/wi_0/kernel"]) * (h @ w[b + "mlp/wi_1/kernel"])) \
            @ w[b + "mlp/wo/kernel"]
    t = layer_norm(x, f"encoder_norm_{layers - 1}")
    z = gelu(t @ w["x_mask/Dense_0/kernel"] + w["x_mask/Dense_0/bias"])
    z = layer_norm(z, "x_mask/LayerNorm_0") @ w["x_mask/Dense_1/kernel"] + w["x_mask/Dense_1/bias"]
    emb = w["char_embeddings/embedding"]
    return z @ emb.T / np.sqrt(emb.shape[1])


@pytest.mark.parametrize("lang", LANGS)
def test_a_767_character_input_matches_a_plain_dense_reference(lang):
    """Aeneas's t5 path attends densely (no block-sparse pattern, unlike Ithaca's BigBird): at the
    longest input it takes, every position's logits equal a plain float64 computation."""
    lm = infill.load_model(str(pickle_of(lang, "numpy")), device="cpu")
    rng = np.random.default_rng(7)
    ids = np.r_[1, rng.choice(lm.letters.candidates + [4], size=767)]
    flat = weights(read_pickle_file(pickle_of(lang, "numpy"), "x"))
    want = _reference_logits(flat, ids, EXPECTED["languages"][lang]["model_config"]["num_heads"])
    t = torch.from_numpy(ids)[None]
    with torch.inference_mode():
        got = lm.model(t, t > 0)["mask"][0].double().numpy()
    assert got.shape == (768, lm.vocab_size)
    assert np.abs(got - want).max() <= 1e-4        # measured 7.0e-5 Latin, 4.2e-5 Greek


def test_numpy_and_jax_pickles_hold_the_same_parameters():
    for lang in LANGS:
        a, b = (flatten(read_pickle_file(pickle_of(lang, v), "x")["params"]) for v in ("numpy",
                                                                                      "jax"))
        assert a.keys() == b.keys()
        for key in a:
            if isinstance(a[key], np.ndarray):
                assert type(b[key]) is np.ndarray and np.array_equal(a[key], b[key]), key
            else:                                   # params_axes: names only
                assert a[key].names == b[key].names


def test_the_malicious_checkpoint_is_refused_and_runs_nothing():
    MARKER.unlink(missing_ok=True)
    with pytest.raises(ModelLoadError, match="posix.system|os.system"):
        infill.load_model(str(FIX / "malicious.pkl"))
    r = CliRunner().invoke(main, ["models", "--model", str(FIX / "malicious.pkl")])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    assert r.output.startswith("Error: refused Ithaca/Aeneas checkpoint")
    assert not MARKER.exists()


@pytest.mark.parametrize("tree, message", [
    ({"params": {"params": {"dense": {"kernel": np.zeros((2, 2), np.float32)}}},
      "model_config": {}},
     "neither an Ithaca nor an Aeneas checkpoint: its params lack both "
     "word_embeddings/embedding (Ithaca) and encoderblock_0/self_attention/query/kernel (Aeneas)"),
    ({"params": {}}, "neither an Ithaca nor an Aeneas checkpoint: it lacks model_config"),
    ([1, 2, 3], "neither an Ithaca nor an Aeneas checkpoint: it holds a list"),
])
def test_a_pickle_that_is_neither_is_one_line_naming_what_is_missing(tmp_path, tree, message):
    path = tmp_path / "other.pkl"
    path.write_bytes(pickle.dumps(tree))
    with pytest.raises(ModelLoadError, match=re.escape(message)):
        infill.load_model(str(path), device="cpu")
    r = CliRunner().invoke(main, ["run", "--model", str(path), "abc ?"])
    assert r.exit_code == 2 and r.output.strip().splitlines() == [r.output.strip()]
    assert message in r.output


def test_damaged_aeneas_checkpoint_names_the_parameter(tmp_path):
    ck = read_pickle_file(pickle_of("latin", "numpy"), "x")
    ck["params"]["params"]["encoderblock_1"]["mlp"]["wo"]["kernel"] = np.zeros((3, 3), np.float32)
    path = tmp_path / "bad.pkl"
    path.write_bytes(pickle.dumps({**ck, "params": {"params": ck["params"]["params"]}}))
    with pytest.raises(ModelLoadError, match=r"Aeneas checkpoint .*encoderblock_1/mlp/wo/kernel "
                                             r"has shape \(3, 3\).*\(48, 32\)"):
        infill.load_model(str(path), device="cpu")


@pytest.mark.parametrize("lang", LANGS)
def test_models_says_which_model_language_layers_parameters(lang):
    r = CliRunner().invoke(main, ["models", "--model", str(pickle_of(lang, "jax")), "--json"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.output)
    shapes = EXPECTED["languages"][lang]["param_shapes"]
    assert row["model"] == "Aeneas" and row["family"] == "aeneas"
    assert row["language"] == {"latin": "Latin", "greek": "Ancient Greek"}[lang]
    assert row["layers"] == 2 and row["max_length"] == 768
    assert row["parameters"] == sum(int(np.prod(s)) for s in shapes.values())


@pytest.mark.parametrize("lang", LANGS)
def test_prepared_texts_are_aeneas_own(lang):
    lm = infill.load_model(str(pickle_of(lang, "numpy")), device="cpu")
    for case in EXPECTED["languages"][lang]["cases"]:
        assert prepare(case["input"]) == case["prepared_text"]
        ids, positions, _ = lm.restore_input(case["input"])
        assert positions == case["restore_positions"]
        assert len(ids) == case["text_len_with_sos"]


def test_final_sigma_and_accents_follow_str_lower_and_nfd():
    assert prepare("  ΚΑΛΛΙΑΣ   Ἀθηνᾶι\tτῷ ") == "καλλιας αθηναι τω"


@pytest.mark.parametrize("case", EXPECTED["errors"], ids=lambda c: c["error_arg"][:20])
def test_inputs_aeneas_rejects_are_one_line_errors(case):
    lm = infill.load_model(str(pickle_of(case["language"], "numpy")), device="cpu")
    kwargs = case["restore_kwargs"]
    options = ["--unknown-max-length", str(kwargs["unk_restoration_max_len"])] \
        if "unk_restoration_max_len" in kwargs else []
    r = CliRunner().invoke(main, ["run", "--model", str(pickle_of(case["language"], "numpy")),
                                  *options, "--", case["input"]])
    assert r.exit_code != 0 or "Error" in r.output
    line = [x for x in r.output.strip().splitlines() if "rror" in x]
    assert len(line) == 1, r.output
    arg = case["error_arg"]
    if case["error_type"] == "KeyError":
        assert f"character {arg!r} is not in Aeneas's" in line[0]
        with pytest.raises(InputError, match=re.escape(repr(arg))):
            lm.restore_input(case["input"])
    elif "too short" in arg:
        assert "Aeneas restores texts of 25 to 767 characters" in line[0]
    elif "missing" in arg:
        assert "nothing to restore" in line[0]
    else:
        assert "--unknown-max-length" in line[0] and "1<=x<=20" in line[0]
