"""Shared fixtures: tiny HF masked LMs with random weights, saved and re-loaded through infill."""
from __future__ import annotations

import pytest
import torch

WORDS = ["the", "cat", "sat", "on", "mat", "dog"]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def pytest_addoption(parser):
    parser.addoption("--device", default="cpu",
                     help="where the shared tiny models and the device-path tests "
                          "(tests/models/test_device.py) run: cpu (default), cuda or cuda:N")


def pytest_configure(config):
    device = config.getoption("--device")
    if device != "cpu" and not (device.startswith("cuda") and torch.cuda.is_available()):
        raise pytest.UsageError(f"--device {device}: CUDA is not available here")


@pytest.fixture(scope="session")
def device(request) -> str:
    """The ``--device`` the suite was asked to run its device paths on."""
    return request.config.getoption("--device")


def _tokenizer():
    from transformers import BertTokenizerFast
    vocab = {t: i for i, t in enumerate(SPECIALS + WORDS + ["##s"])}
    return BertTokenizerFast(vocab=vocab, do_lower_case=True)


def _save(model, tok, path):
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def bert_dir(tmp_path_factory):
    from transformers import BertConfig, BertForMaskedLM
    torch.manual_seed(0)
    tok = _tokenizer()
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=24)
    model = BertForMaskedLM(cfg)
    # Sharpen the random head so distributions are far from uniform (ties would hide bugs).
    with torch.no_grad():
        model.cls.predictions.decoder.weight.mul_(8.0)
    return _save(model, tok, tmp_path_factory.mktemp("bert"))


@pytest.fixture(scope="session")
def distilbert_dir(tmp_path_factory):
    from transformers import DistilBertConfig, DistilBertForMaskedLM
    torch.manual_seed(1)
    tok = _tokenizer()
    cfg = DistilBertConfig(vocab_size=len(tok), dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                           max_position_embeddings=24)
    model = DistilBertForMaskedLM(cfg)
    with torch.no_grad():
        model.vocab_projector.weight.mul_(8.0)
    return _save(model, tok, tmp_path_factory.mktemp("distilbert"))


@pytest.fixture(scope="session")
def bert(bert_dir, device):
    import infill
    return infill.load_model(bert_dir, device=device)


@pytest.fixture(params=["bert", "distilbert"], scope="session")
def tiny_model(request, bert_dir, distilbert_dir, device):
    import infill
    return infill.load_model(bert_dir if request.param == "bert" else distilbert_dir, device=device)


@pytest.fixture
def offline_hub(monkeypatch):
    """Make hub look-ups fail at once (as they would after retries without a network)."""
    import huggingface_hub.constants as c
    monkeypatch.setattr(c, "HF_HUB_OFFLINE", True)


@pytest.fixture(scope="session")
def greek_char_dir(tmp_path_factory):
    """A tiny random character (Greek alphabet) model directory (charmodel.json + safetensors)."""
    from infill.models.char import CharConfig, CharTransformer, save_char
    torch.manual_seed(2)
    model = CharTransformer(CharConfig(d_model=32, n_layers=1, n_heads=2, d_ff=64, max_length=48,
                                       conv_kernel=3))
    return str(save_char(model.eval(), tmp_path_factory.mktemp("greek-char") / "m",
                         dtype=torch.float32))


@pytest.fixture(scope="session")
def esm2_tiny_path(tmp_path_factory):
    """A tiny random fair-esm ESM2 checkpoint (``esm2_*.pt``, written by save_fair_esm)."""
    import esm

    from infill.models.esm import save_fair_esm
    torch.manual_seed(3)
    alphabet = esm.data.Alphabet.from_architecture("ESM-1b")
    model = esm.ESM2(num_layers=1, embed_dim=32, attention_heads=4, alphabet=alphabet)
    with torch.no_grad():  # spread the output distribution (ties would hide bugs)
        model.lm_head.bias.normal_(0, 1.0)
    return str(save_fair_esm(model.eval(), alphabet,
                             tmp_path_factory.mktemp("esm2") / "esm2_tiny.pt"))


@pytest.fixture(autouse=True)
def legend_marker(tmp_path, monkeypatch):
    """The table legend's shown-once marker in this test's own folder, never the user's cache."""
    marker = tmp_path / "legend-shown"
    monkeypatch.setattr("infill_cli.io.legend_marker", lambda: marker)
    return marker
