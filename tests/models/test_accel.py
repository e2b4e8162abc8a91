"""Opt-in forward speed-ups (infill.models.accel): int8 dynamic quantization, torch.compile and
bf16, on the real loaders of a tiny BERT and a tiny character model. Each changes the arithmetic
only slightly: the log-probabilities stay close to float32's and the ranking of a beam search
does not change on these inputs."""
import pytest
import torch

import infill
from infill.errors import ConfigError
from infill.models.char import CharConfig, CharTransformer, save_char

TEXTS_EN = ["the ___ sat on the mat", "a ___ ___ dog"]
TEXTS_GR = ["μηνιν αει?ε θεα", "ανδρα μοι ε??επε"]


@pytest.fixture(scope="module")
def char_dir(tmp_path_factory):
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("char") / "m"
    save_char(CharTransformer(CharConfig(d_model=32, n_layers=2, n_heads=2, d_ff=64,
                                         max_length=32, conv_kernel=3)), path,
              dtype=torch.float32)
    return str(path)


def _log_probs(lm, text):
    enc = lm.encode(text, gap=1)
    ids = torch.tensor([enc.input_ids])
    return lm.log_probs(ids, torch.ones_like(ids, dtype=torch.bool),
                        torch.tensor([enc.positions]))


@pytest.mark.parametrize("which", ["bert", "char"])
def test_int8_quantization_is_close_to_float32(which, bert_dir, char_dir):
    path, texts = (bert_dir, TEXTS_EN) if which == "bert" else (char_dir, TEXTS_GR)
    ref = infill.load_model(path, device="cpu")
    q = infill.load_model(path, device="cpu", quantize="int8")
    assert q.acceleration == {"quantize": "int8", "compile": False}
    quantized = [m for layer in q.heavy_modules(whole=True) for m in layer.modules()
                 if type(m).__module__.startswith("torch.ao.nn.quantized")]
    assert quantized, "no linear layer was quantized"
    for text in texts:
        a, b = _log_probs(ref, text), _log_probs(q, text)
        assert torch.isfinite(b).all()
        assert (a - b).abs().max() < 0.05, (a - b).abs().max()
    cfg = infill.DecodeConfig(beam_size=4)
    assert [[c.tokens for c in cs] for cs in infill.fill(q, texts, top_k=1, config=cfg)] == \
        [[c.tokens for c in cs] for cs in infill.fill(ref, texts, top_k=1, config=cfg)]


def test_bf16_weights_on_cpu(char_dir):
    ref = infill.load_model(char_dir, device="cpu")
    half = infill.load_model(char_dir, device="cpu", dtype="bf16")
    a, b = _log_probs(ref, TEXTS_GR[0]), _log_probs(half, TEXTS_GR[0])
    assert b.dtype == torch.float32 and (a - b).abs().max() < 0.1


def test_speed_options_are_checked(bert_dir):
    with pytest.raises(ConfigError, match="needs float32 weights"):
        infill.load_model(bert_dir, device="cpu", dtype="bf16", quantize="int8")
    with pytest.raises(ConfigError, match="unknown quantization"):
        infill.load_model(bert_dir, device="cpu", quantize="int4")


@pytest.mark.parametrize("kind", ["hf", "char"])
def test_cpu_calls_run_in_row_chunks_with_the_same_result(kind, bert_dir, char_dir, monkeypatch):
    """A many-row call on the CPU is cut into chunks of at most CPU_TOKENS_PER_CALL tokens (it is
    faster: benchmarks/speed.py); every row's log-probabilities equal a one-row call's."""
    import infill.models.base as base
    from infill.models.base import pad_batch
    lm = infill.load_model(bert_dir if kind == "hf" else char_dir, device="cpu")
    texts = TEXTS_EN if kind == "hf" else TEXTS_GR
    encs = [lm.encode(t, gap=1) for t in texts] * 5                         # 10 rows
    ids, attn = pad_batch([e.input_ids for e in encs], lm.pad_id)
    pos = torch.tensor([e.positions[:1] for e in encs])
    calls = []
    monkeypatch.setattr(base, "CPU_TOKENS_PER_CALL", 3 * ids.shape[1])     # 3 rows per call
    network = "_scores_at" if kind == "hf" else "_scores"      # the network's own call
    inner = type(lm).__dict__[network].__wrapped__
    monkeypatch.setattr(type(lm), network,
                        base.row_chunked(lambda self, *a: calls.append(a[0].shape[0])
                                         or inner(self, *a)))
    chunked = lm.log_probs(ids, attn, pos)
    assert calls == [3, 3, 3, 1]
    for r in range(ids.shape[0]):
        one = lm.log_probs(ids[r:r + 1], attn[r:r + 1], pos[r:r + 1])
        assert (chunked[r] - one[0]).abs().max().item() < 1e-5
