"""Ithaca's checkpoint: the restricted unpickler, the torch port's parity with Ithaca's own logits
(tests/fixtures/ithaca: random weights, made by running Ithaca's code), the word stream, text
preparation, the safetensors directory format, and hostile checkpoints."""
from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import numpy as np
import pytest
import torch

import infill
from infill.data.pickles import read_pickle_file
from infill.errors import LongInputWarning, ModelLoadError
from infill.models import ithaca
from infill.models.flax_checkpoint import flatten
from infill.models.ithaca import (ALPHABET, IthacaConfig, IthacaMaskedLM, IthacaNet,
                                  load_ithaca_checkpoint, prepare, save_ithaca)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "ithaca"
PICKLES = ["ithaca_tiny_numpy.pkl", "ithaca_tiny_jax.pkl"]
EXPECTED = json.loads((FIX / "expected.json").read_text(encoding="utf-8"))
ARRAYS = np.load(FIX / "expected.npz")
CASES = list(range(len(EXPECTED["cases"])))
MARKER = Path("/tmp/ithaca_fixture_pwned")


@pytest.fixture(scope="module", params=PICKLES)
def lm(request) -> IthacaMaskedLM:
    threads = torch.get_num_threads()   # one thread here; the rest of the suite keeps its own
    torch.set_num_threads(1)
    yield infill.load_model(str(FIX / request.param), device="cpu")
    torch.set_num_threads(threads)


def _case(i: int):
    n = int(EXPECTED["cases"][i]["text_len_with_sos"])
    ids = torch.from_numpy(ARRAYS[f"char_ids_{i}"][:n].astype(np.int64))
    return EXPECTED["cases"][i], n, ids


def _all_logits(lm, ids: torch.Tensor) -> np.ndarray:
    n = ids.shape[-1]
    keep = torch.ones(1, n, dtype=torch.bool)
    return lm.logits(ids[None], keep, torch.arange(n)[None])[0].numpy()


# ---- the restricted unpickler -------------------------------------------------------------------
def test_malicious_checkpoint_is_refused_and_runs_nothing():
    MARKER.unlink(missing_ok=True)
    with pytest.raises(ModelLoadError, match=r"posix\.system") as err:
        infill.load_model(str(FIX / "malicious.pkl"))
    assert "\n" not in str(err.value)
    assert not MARKER.exists()
    with pytest.raises(ModelLoadError, match=r"refused .*posix\.system"):
        read_pickle_file(FIX / "malicious.pkl", "checkpoint")
    assert not MARKER.exists()


class _Call:
    """Pickles as a call of ``fn(*args)`` (what a hostile file would do)."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


@pytest.mark.parametrize("payload, refused", [
    (_Call(print, "hello"), "builtins.print"),
    (_Call(eval, "1 + 1"), "builtins.eval"),
    ({"a": _Call(getattr, 1, "real")}, "builtins.getattr"),
    (np.ma.masked_array([1.0, 2.0]), "numpy.ma.core._mareconstruct"),
])
def test_unpickler_refuses_globals_outside_the_allow_list(tmp_path, payload, refused):
    path = tmp_path / "x.pkl"
    path.write_bytes(pickle.dumps(payload, protocol=4))
    with pytest.raises(ModelLoadError, match=re.escape(refused)):
        read_pickle_file(path, "checkpoint")


@pytest.mark.parametrize("payload", [
    np.array([1, "two", None], dtype=object),
    {"deep": [np.array([{}], dtype=object)]},
])
def test_unpickler_refuses_object_arrays(tmp_path, payload):
    path = tmp_path / "x.pkl"
    path.write_bytes(pickle.dumps(payload))
    with pytest.raises(ModelLoadError, match="array of Python objects"):
        read_pickle_file(path, "checkpoint")


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_unpickler_reads_numpy_containers_at_every_protocol(tmp_path, protocol):
    tree = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": [np.int64(3), "x", 1.5, None],
            "c": (True, b"raw"), "d": {np.str_("w"): np.float64(2.0)}, "e": {1, 2}}
    path = tmp_path / "x.pkl"
    path.write_bytes(pickle.dumps(tree, protocol=protocol))
    back = read_pickle_file(path, "checkpoint")
    assert np.array_equal(back["a"], tree["a"]) and back["a"].dtype == np.float32
    assert back["b"] == tree["b"] and back["c"] == tree["c"] and back["e"] == {1, 2}
    assert back["d"] == {"w": 2.0}


def test_jax_and_numpy_pickles_hold_the_same_parameters():
    a = flatten(read_pickle_file(FIX / PICKLES[0], "x")["params"])
    b = flatten(read_pickle_file(FIX / PICKLES[1], "x")["params"])
    assert a.keys() == b.keys() and len(a) == 45
    for key in a:
        assert type(b[key]) is np.ndarray and np.array_equal(a[key], b[key]), key


# ---- parity with Ithaca's own logits ------------------------------------------------------------
@pytest.mark.parametrize("i", CASES)
def test_logits_match_ithaca_at_every_text_position(lm, i):
    case, n, ids = _case(i)
    assert lm.encode(case["input"]).input_ids == ids.tolist()
    got = _all_logits(lm, ids)
    assert got.shape == (n, 34)
    assert np.abs(got - ARRAYS[f"logits_{i}"]).max() <= 1e-4


@pytest.mark.parametrize("i", CASES)
def test_word_stream_matches_ithaca(lm, i):
    _, n, ids = _case(i)
    words = lm.model.lookup(ids[None])[0].numpy()
    assert np.array_equal(words, ARRAYS[f"word_ids_{i}"][:n])


def test_log_probs_and_masked_conditionals_through_the_protocol(lm):
    """A padded batch of all four inputs: log q at each input's restore positions (held by the
    mask '-') equals the log-softmax of Ithaca's logits there; padding changes nothing."""
    encs = [lm.encode(EXPECTED["cases"][i]["input"]) for i in CASES]
    ids, keep = ithaca_pad([e.input_ids for e in encs])
    P = max(len(e.positions) for e in encs)
    pos = torch.tensor([e.positions + [e.positions[0]] * (P - len(e.positions)) for e in encs])
    logq = lm.log_probs(ids, keep, pos)
    for i, e in enumerate(encs):
        assert e.positions == EXPECTED["cases"][i]["restore_positions"]
        want = torch.log_softmax(torch.from_numpy(ARRAYS[f"logits_{i}"][e.positions]), -1)
        assert (logq[i, :len(e.positions)] - want).abs().max() <= 1e-4
        assert torch.allclose(logq[i].exp().sum(-1), torch.ones(P), atol=1e-5)


def ithaca_pad(seqs):
    from infill.models.base import pad_batch
    return pad_batch(seqs, ithaca.PAD)


def test_full_width_padding_gives_the_same_logits(lm):
    """Ithaca pads every input to 768 ids: doing so here changes no logit."""
    case, n, _ = _case(0)
    full = torch.from_numpy(ARRAYS["char_ids_0"].astype(np.int64))[None]
    keep = full != ithaca.PAD
    got = lm.logits(full, keep, torch.arange(n)[None])[0].numpy()
    assert np.abs(got - ARRAYS["logits_0"]).max() <= 1e-4


def test_candidates_are_ithacas():
    lm = load_ithaca_checkpoint(FIX / PICKLES[0], device="cpu")
    allowed = "".join(ALPHABET[i] for i in lm.allowed_mask().nonzero().flatten().tolist())
    assert allowed == " αβγδεζηθικλμνξοπρςστυφχψωϙϛ0."
    assert lm.vocab_size == 34 and ALPHABET[lm.mask_id] == ALPHABET[lm.default_pivot] == "-"
    assert lm.max_length == 768 and lm.unit == "characters"


# ---- BigBird block-sparse attention -------------------------------------------------------------
def _block_sparse_reference(block, x, pattern):
    """One encoder block, attention computed block by block: each 64-block of queries attends
    only to the key blocks its pattern row lists (gathered, not masked)."""
    R, T, w = x.shape
    ln = lambda m, v: torch.nn.functional.layer_norm(v, (w,), m.scale, m.bias, 1e-12)  # noqa: E731
    h = ln(block.ln0, x)
    q, k, v = (m(h).view(R, T, block.heads, -1) for m in (block.query, block.key, block.value))
    out = torch.zeros_like(q)
    for head in range(block.heads):
        for qb in range(-(-T // 64)):
            qs = slice(qb * 64, min(T, qb * 64 + 64))
            keys = torch.cat([torch.arange(kb * 64, min(T, kb * 64 + 64))
                              for kb in range(-(-T // 64)) if pattern[head, qb, kb]])
            s = q[:, qs, head] @ k[:, keys, head].transpose(1, 2) / q.shape[-1] ** 0.5
            out[:, qs, head] = torch.softmax(s, -1) @ v[:, keys, head]
    x = x + block.out(out.reshape(R, T, -1))
    mlp = block.fc2(torch.nn.functional.gelu(block.fc1(ln(block.ln1, x)), approximate="tanh"))
    return x + mlp


def test_block_sparse_attention_on_long_inputs():
    torch.manual_seed(0)
    config = IthacaConfig(word_char_emb_dim=8, emb_dim=8, mlp_dim=16, num_layers=2, num_heads=4,
                          qkv_dim=32, vocab_word_size=4)
    net = IthacaNet(config, ["#", "<", "^", "και"])
    net.eval()
    pattern = np.load(Path(ithaca.__file__).with_name(ithaca.BLOCKS_FILE), allow_pickle=False)
    for layer, block in enumerate(net.blocks):
        x = torch.randn(2, 700, 24)
        keep = torch.ones(2, 700, dtype=torch.bool)
        with torch.no_grad():
            got = block(x, keep, block.bias(keep))
            want = _block_sparse_reference(block, x, pattern[layer])
        assert (got - want).abs().max() < 1e-4
        assert not pattern[layer, :4, 1:12, 1:12].all()     # the pattern is really sparse


def test_block_pattern_ships_with_the_package():
    shipped = ithaca.block_pattern(8, 4)                  # the real checkpoint's 8 layers x 4 heads
    assert shipped.shape == (8, 4, 13, 13) and shipped.dtype == torch.bool
    assert shipped[:, :, 0].all() and shipped[:, :, 12].all()
    assert (shipped.sum(-1)[:, :, 2:11] == 3 + 2 + 3).all()   # window, first/last, 3 random


# ---- the word stream ----------------------------------------------------------------------------
def test_vectorized_word_lookup_equals_a_regex_over_the_text():
    words = ["#", "<", "^", "και", "τηι", "δημωι", "ο", "0", "ϙοππα"]
    lookup = ithaca.WordLookup(words)
    rng = np.random.default_rng(0)
    pieces = words[3:] + ["κα", "καικαι", "ξ", "-", ".", " ", "^", "ς"]
    rows = ["".join(rng.choice(pieces, size=40)) for _ in range(6)]
    ids = torch.tensor([[ithaca.SOS] + [ithaca.INDEX[c] for c in r[:80].ljust(80, "#")]
                        for r in rows])
    got = lookup(ids)
    for r, row in enumerate(ids.tolist()):
        text = "".join(ALPHABET[c] for c in row)
        want = [2] * len(text)
        for m in re.finditer(r"\w+", text):
            if m.group() in words[3:]:
                want[m.start():m.end()] = [words.index(m.group())] * len(m.group())
        assert got[r].tolist() == want, text
    twice = ithaca.WordLookup(["#", "<", "^", "και", "ο", "και"])     # the first id counts
    assert twice(torch.tensor([[ithaca.SOS] + [ithaca.INDEX[c] for c in "και"]]))[0].tolist() == \
        [2, 3, 3, 3]


# ---- text preparation and encoding --------------------------------------------------------------
def test_prepare_strips_accents_lowercases_and_keeps_ithacas_letters():
    # the iota subscript is a combining mark: dropped, as every accent (τῇ -> τη, not τηι)
    assert prepare("  Ἔδοξεν   τῇ\tΒΟΥΛῌ  ") == "εδοξεν τη βουλη"
    assert prepare("ΔΗΜΟΣ, Ϙ ϛ 1972 ab·") == "δημος ϙ ϛ 0000 ^^"
    assert prepare("λόγος ϲ ?-.") == "λογος σ ?-."


def test_encode_and_render_keep_the_users_text():
    lm = load_ithaca_checkpoint(FIX / PICKLES[0], device="cpu")
    enc = lm.encode("Ἔδοξεν τῇ ?? καὶ ___ -ος", gap=3)
    assert [len(g) for g in enc.gaps] == [2, 3]
    assert lm.detokenize(enc.input_ids) == "εδοξεν τη -- και --- -ος"
    out = lm.render(enc, [[lm.token_to_id("α")] * 2, [lm.token_to_id("ς")] * 3])
    assert out.text == "Ἔδοξεν τῇ αα καὶ ςςς -ος"
    assert lm.encode("abc ?").notes and "a" in lm.encode("abc ?").notes[0]


# ---- infill's directory format ------------------------------------------------------------------
def test_checkpoint_saved_as_safetensors_round_trips(tmp_path, lm):
    save_ithaca(lm.model, tmp_path / "m")
    assert (tmp_path / "m" / "ithaca.json").exists()
    back = infill.load_model(str(tmp_path / "m"), device="cpu")
    assert isinstance(back, IthacaMaskedLM)
    for i in CASES:
        _, _, ids = _case(i)
        assert np.abs(_all_logits(back, ids) - ARRAYS[f"logits_{i}"]).max() <= 1e-4


def test_from_config_builds_trains_and_reloads(tmp_path):
    torch.manual_seed(0)
    config = {"word_char_emb_dim": 8, "emb_dim": 16, "mlp_dim": 16, "num_layers": 1,
              "num_heads": 2, "qkv_dim": 16, "vocab_word_size": 5, "max_len": 128}
    net = IthacaNet.from_config(config, ["#", "<", "^", "και", "ο"])
    ids = torch.tensor([[ithaca.SOS] + [ithaca.INDEX[c] for c in "και ο δημος"]])
    keep = torch.ones_like(ids, dtype=torch.bool)
    loss = torch.nn.functional.cross_entropy(net(ids, keep)[0], ids[0])
    loss.backward()
    assert all(p.grad is not None for p in net.parameters())
    save_ithaca(net, tmp_path / "m")
    back = infill.load_model(str(tmp_path / "m"), device="cpu")
    assert back.max_length == 128
    net.eval()
    with torch.no_grad():
        want = torch.log_softmax(net(ids, keep), -1)
    got = back.log_probs(ids, keep, torch.arange(ids.shape[1])[None])
    assert torch.allclose(got, want, atol=1e-6)


# ---- hostile checkpoints ------------------------------------------------------------------------
def _checkpoint() -> dict:
    return read_pickle_file(FIX / PICKLES[0], "x")


def _params(ck):
    return ck["params"]["params"]


def _drop_key(ck):
    del _params(ck)["encoderblock_1"]["LayerNorm_0"]


def _wrong_shape(ck):
    _params(ck)["char_embeddings"]["embedding"] = np.zeros((34, 15), np.float32)


def _more_layers(ck):
    ck["model_config"]["num_layers"] = 3


def _wider(ck):
    ck["model_config"]["word_char_emb_dim"] = 32


def _nan(ck):
    _params(ck)["encoder_norm"]["scale"][3] = np.nan


def _int_params(ck):
    _params(ck)["encoder_norm"]["scale"] = np.ones(48, np.int32)


@pytest.mark.parametrize("damage, message", [
    (_drop_key, "lacks the parameter encoderblock_1/LayerNorm_0/scale"),
    (_wrong_shape, r"char_embeddings/embedding has shape \(34, 15\)"),
    (_more_layers, "lacks the parameter encoderblock_2"),
    (_wider, "shape"),
    (_nan, "NaN"),
    (_int_params, "not a float array"),
    (lambda ck: ck["model_config"].update(vocab_char_size=35), "34 symbols"),
    (lambda ck: ck["model_config"].update(num_heads="two"), "num_heads"),
    (lambda ck: ck["model_config"].update(num_heads=3), "divisible"),
    (lambda ck: ck["model_config"].update(dropout_rate=7), "dropout_rate"),
    (lambda ck: ck.update(model_config=[1, 2]), "model_config must be a dict"),
    (lambda ck: ck.pop("alphabet"), "not an Ithaca checkpoint"),
    (lambda ck: ck.update(params=[1]), "params"),
    (lambda ck: ck["alphabet"]["word2idx"].update({"λογος": 17}), "vocab_word_size 17"),
    (lambda ck: ck["alphabet"].pop("word2idx"), "word2idx"),
    (lambda ck: ck["model_config"].update(vocab_word_size=18),
     r"word_embeddings/embedding has shape \(17, 16\)"),
])
def test_damaged_checkpoints_are_one_line_load_errors(tmp_path, damage, message):
    ck = _checkpoint()
    damage(ck)
    path = tmp_path / "bad.pkl"
    path.write_bytes(pickle.dumps(ck))
    with pytest.raises(ModelLoadError, match=message) as err:
        infill.load_model(str(path), device="cpu")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("content", [b"", b"\x80\x04not a pickle", None, "list"])
def test_files_that_are_not_checkpoints(tmp_path, content):
    path = tmp_path / "bad.pkl"
    if content is None:
        path.write_bytes((FIX / PICKLES[0]).read_bytes()[:5000])     # truncated
    elif content == "list":
        path.write_bytes(pickle.dumps([1, 2, 3]))
    else:
        path.write_bytes(content)
    with pytest.raises(ModelLoadError) as err:
        infill.load_model(str(path), device="cpu")
    assert "\n" not in str(err.value) and "bad.pkl" in str(err.value)


@pytest.mark.parametrize("damage, message", [
    (lambda d: (d / "ithaca.json").write_text("{"), "cannot read"),
    (lambda d: (d / "ithaca.json").write_text('{"format": "other"}'), "not an infill Ithaca"),
    (lambda d: (d / "model.safetensors").unlink(), "no model.safetensors"),
    (lambda d: (d / "model.safetensors").write_bytes(b"\x00" * 10), "cannot load"),
    (lambda d: _edit_meta(d, words=[1, 2]), "list of strings"),
    (lambda d: _edit_meta(d, config={**_meta(d)["config"], "num_layers": 3}),
     r"weight blocks\.2\.fc1\.bias: missing in the file, \(48,\) in the config"),
    (lambda d: _edit_meta(d, config={**_meta(d)["config"], "vocab_word_size": 10 ** 12}),
     r"weight word_embeddings\.weight: \(17, 16\) in the file, \(1000000000000, 16\)"),
])
def test_damaged_model_directories(tmp_path, damage, message):
    lm = load_ithaca_checkpoint(FIX / PICKLES[0], device="cpu")
    d = save_ithaca(lm.model, tmp_path / "m")
    damage(d)
    with pytest.raises(ModelLoadError, match=message) as err:
        infill.load_model(str(d), device="cpu")
    assert "\n" not in str(err.value)


def _meta(d):
    return json.loads((d / "ithaca.json").read_text(encoding="utf-8"))


def _edit_meta(d, **changes):
    (d / "ithaca.json").write_text(json.dumps({**_meta(d), **changes}), encoding="utf-8")


def test_long_inputs_are_restored_in_768_character_windows():
    import warnings

    lm = load_ithaca_checkpoint(FIX / PICKLES[0], device="cpu")
    words = "εδοξεν τηι βουληι και τωι δημωι επειδη ανηρ αγαθος".split()
    body = " ".join(words[i % len(words)] for i in range(200))
    text = body[:700] + " ??? " + body[700:1300]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LongInputWarning)
        got = infill.fill_each(lm, [text], top_k=3)[0]
    (window,) = got.windows
    assert window["end"] - window["start"] == 767            # + the start symbol = 768
    alone = infill.fill_each(lm, [text[window["start"] - 1:window["end"] - 1]], top_k=3)[0]
    assert alone.windows == []
    assert [c.fills for c in got.completions] == [c.fills for c in alone.completions]
    assert [c.score for c in got.completions] == pytest.approx([c.score for c in alone.completions])


def test_a_device_posing_as_a_checkpoint_is_read_within_a_bound(tmp_path, monkeypatch):
    monkeypatch.setenv("INFILL_MAX_INPUT_BYTES", "4096")
    (tmp_path / "zero.pkl").symlink_to("/dev/zero")
    with pytest.raises(ModelLoadError, match="zero.pkl") as err:
        read_pickle_file(tmp_path / "zero.pkl", "Ithaca checkpoint")
    assert "\n" not in str(err.value)


def test_decode_takes_the_gaps_when_the_mask_is_also_a_text_symbol():
    """'-' is Ithaca's mask and a missing character of the text: ``decode`` fills exactly the
    positions given in ``gaps`` (as ``fill`` does), and without them every '-'."""
    lm = load_ithaca_checkpoint(FIX / PICKLES[0], device="cpu")
    case = EXPECTED["cases"][3]                         # '?σ?ιν': restore 20 and 22
    enc = lm.encode("ειπε- " + case["input"])
    assert lm.mask_in_text and len([t for t in enc.input_ids if t == lm.mask_id]) == 3
    config = infill.DecodeConfig(scorer="standard", beam_size=5)
    hyps = infill.decode(lm, enc.input_ids, config, positions=enc.positions)
    with pytest.warns(DeprecationWarning, match="positions"):       # the old name still reads
        assert infill.decode(lm, enc.input_ids, config, gaps=enc.positions) == hyps
    filled = infill.fill(lm, "ειπε- " + case["input"], top_k=5, config=config)[0]
    assert [list(h.tokens) for h in hyps] == [list(c.tokens) for c in filled]
    assert [h.score for h in hyps] == pytest.approx([c.score for c in filled])
    assert len(infill.decode(lm, enc.input_ids, config)[0].tokens) == 3
    with pytest.raises(infill.InputError, match="positions must be"):
        infill.decode(lm, enc.input_ids, config, positions=[["x"]])
