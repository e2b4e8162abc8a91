"""Issue 22.1: a file planted in any cache a loader consults (torch hub, the Hugging Face cache,
infill's own cache) or handed over as a model must never run code: every loader reads through the
safe reader, and a refused file is one ModelLoadError.

Each test plants a checkpoint whose unpickling would create a marker file, loads, and asserts the
load is refused *and* the marker does not exist. The fair-esm case also checks that a legitimate
file in the same cache loads offline (so the cache is really consulted, not skipped)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import esm
import pytest
import torch

import infill
import infill.models.esm as esm_module
from infill.errors import ModelLoadError
from infill.models.esm import save_fair_esm


class _Payload:
    """Unpickling this runs ``touch MARKER``: what a poisoned checkpoint does."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def plant(path: Path, marker: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": _Payload(marker)}, str(path))
    return path


@pytest.fixture
def marker(tmp_path) -> Path:
    m = tmp_path / "MARKER"
    assert not m.exists()
    return m


def test_poisoned_torch_hub_cache_is_refused_for_fair_esm_names(monkeypatch, tmp_path, marker):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    plant(tmp_path / "torch" / "hub" / "checkpoints" / "esm2_t6_8M_UR50D.pt", marker)
    monkeypatch.setattr(esm_module, "url_reachable", lambda *a, **k: pytest.fail("no download: the file is cached"))
    with pytest.raises(ModelLoadError, match="esm2_t6_8M_UR50D.pt.*safe load refused") as e:
        infill.load_model("esm2_t6_8M_UR50D")
    assert "\n" not in str(e.value)
    assert not marker.exists()


def test_legitimate_torch_hub_cache_file_loads_offline(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    alphabet = esm.data.Alphabet.from_architecture("ESM-1b")
    torch.manual_seed(0)
    model = esm.ESM2(num_layers=1, embed_dim=32, attention_heads=4, alphabet=alphabet).eval()
    save_fair_esm(model, alphabet, tmp_path / "torch" / "hub" / "checkpoints" / "esm2_t6_8M_UR50D.pt")
    monkeypatch.setattr(esm_module, "url_reachable", lambda *a, **k: pytest.fail("no download: the file is cached"))
    lm = infill.load_model("esm2_t6_8M_UR50D")
    # the loaded network is the cached one: its conditional at a masked position equals the original's
    t = torch.tensor([[alphabet.cls_idx] + [alphabet.get_idx(c) for c in "MK"] + [alphabet.mask_idx]
                      + [alphabet.get_idx(c) for c in "WA"] + [alphabet.eos_idx]])
    with torch.inference_mode():
        want = torch.log_softmax(model(t)["logits"][0, 3].float(), -1)
        have = lm.log_probs(t, torch.ones_like(t, dtype=torch.bool), torch.tensor([[3]]))[0, 0]
    assert torch.allclose(have, want, atol=1e-5)


def test_poisoned_hf_model_directory_is_refused(tmp_path, marker):
    from transformers import BertConfig, BertForMaskedLM
    folder = tmp_path / "bert"
    cfg = BertConfig(vocab_size=30, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=32)
    BertForMaskedLM(cfg).save_pretrained(folder)
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                                                 + [chr(97 + i) for i in range(25)]) + "\n")
    (folder / "model.safetensors").unlink()
    plant(folder / "pytorch_model.bin", marker)
    with pytest.raises(ModelLoadError):
        infill.load_model(str(folder))
    assert not marker.exists()


def test_poisoned_infill_cache_directory_is_refused(tmp_path, marker):
    """A directory in infill's model cache (as `convert` writes it), its weights replaced."""
    from infill.models.antibody import META_FILE, META_FORMAT
    from transformers import BertConfig, BertForMaskedLM
    folder = tmp_path / "cache" / "my-antibody"
    BertForMaskedLM(BertConfig(vocab_size=30, hidden_size=16, num_hidden_layers=1,
                               num_attention_heads=2, intermediate_size=32)).save_pretrained(folder)
    (folder / "model.safetensors").unlink()
    (folder / META_FILE).write_text(json.dumps({"format": META_FORMAT, "name": "antiberty"}))
    plant(folder / "pytorch_model.bin", marker)
    with pytest.raises(ModelLoadError):
        infill.load_model(str(folder))
    assert not marker.exists()


def test_poisoned_hugging_face_hub_cache_is_refused(tmp_path, marker):
    """A hub id resolved from the local Hugging Face cache (HF_HOME), offline, in a fresh process
    (the hub's cache location is fixed when huggingface_hub is imported)."""
    snap = tmp_path / "hf" / "hub" / "models--someone--poisoned" / "snapshots" / ("0" * 40)
    snap.mkdir(parents=True)
    (snap.parents[1] / "refs").mkdir()
    (snap.parents[1] / "refs" / "main").write_text("0" * 40)
    (snap / "config.json").write_text(json.dumps({
        "model_type": "bert", "architectures": ["BertForMaskedLM"], "vocab_size": 30,
        "hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
        "intermediate_size": 32}))
    (snap / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                                              + [chr(97 + i) for i in range(25)]) + "\n")
    plant(snap / "pytorch_model.bin", marker)
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "infill", "run", "--model", "someone/poisoned",
                           "a ___ b"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:") and "someone/poisoned" in lines[0]
    assert not marker.exists()
