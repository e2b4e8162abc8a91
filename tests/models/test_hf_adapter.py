"""The HF adapter through the real loaders: save_pretrained -> infill.load_model."""
from __future__ import annotations

import pytest
import torch

import infill
from infill.errors import ConfigError, ModelLoadError


def test_head_only_at_requested_positions_equals_full_forward(tiny_model):
    ids = torch.tensor([[2, 5, 4, 4, 7, 3], [2, 4, 6, 3, 0, 0]])
    attn = ids != tiny_model.pad_id
    pos = torch.tensor([[2, 3], [1, 2]])
    got = tiny_model.log_probs(ids, attn, pos)
    with torch.no_grad():
        full = torch.log_softmax(tiny_model.model(input_ids=ids, attention_mask=attn.long()).logits, -1)
    want = full[torch.arange(2)[:, None], pos]
    assert got.shape == (2, 2, tiny_model.vocab_size)
    assert torch.allclose(got, want, atol=1e-5)
    assert torch.allclose(tiny_model.logits(ids, attn, pos).log_softmax(-1), got, atol=1e-5)


def test_round_trip_and_wrap_hf_agree(bert_dir):
    from transformers import AutoModelForMaskedLM, AutoTokenizer
    loaded = infill.load_model(bert_dir, device="cpu")
    wrapped = infill.wrap_hf(AutoModelForMaskedLM.from_pretrained(bert_dir), AutoTokenizer.from_pretrained(bert_dir))
    a = infill.fill(loaded, "the ___ sat", gap=2)[0]
    b = infill.fill(wrapped, "the ___ sat", gap=2)[0]
    assert a == b
    assert loaded.mask_id == loaded.tokenizer.mask_token_id == loaded.default_pivot
    assert loaded.max_length == 24
    assert {loaded.tokenizer.cls_token_id, loaded.tokenizer.pad_token_id} <= loaded.special_ids


def test_encode_render(bert):
    enc = bert.encode("The ___ sat on the ___.", gap=2)
    assert len(enc.gaps) == 2 and all(len(g) == 2 for g in enc.gaps)
    assert all(enc.input_ids[p] == bert.mask_id for p in enc.positions)
    cat, s, dog = (bert.token_to_id(t) for t in ("cat", "##s", "dog"))
    text, fills, spans, _ = bert.render(enc, [[cat, s], [dog, dog]])
    assert text == "The cats sat on the dog dog." and fills == ["cats", "dog dog"]
    # a continuation piece joins the word before the gap only when the marker touches it
    text, fills, spans, _ = bert.render(bert.encode("the cat ___ sat", gap=1), [[s]])
    assert text == "the cat s sat" and fills == ["s"] and text[slice(*spans[0])] == "s"
    text, fills, spans, _ = bert.render(bert.encode("the cat___ sat", gap=1), [[s]])
    assert text == "the cats sat" and fills == ["s"] and text[slice(*spans[0])] == "s"
    assert bert.detokenize(bert.tokenize("the cats sat")) == "the cats sat"
    # the model's own mask token is a one-token gap, next to the marker's gap-token gaps
    enc = bert.encode("the [MASK] ___", gap=2)
    assert [len(g) for g in enc.gaps] == [1, 2]


def test_device_and_dtype_errors(bert_dir):
    with pytest.raises(ConfigError, match="only supported on CUDA"):
        infill.load_model(bert_dir, device="cpu", dtype="fp16")
    with pytest.raises(ConfigError, match="not supported"):
        infill.load_model(bert_dir, device="meta")
    with pytest.raises(ConfigError, match="unknown device"):
        infill.load_model(bert_dir, device="tpu9")
    with pytest.raises(ModelLoadError, match="no such model"):
        infill.load_model("./does/not/exist")


def test_offline_hub_error_names_model(offline_hub):
    with pytest.raises(ModelLoadError) as e:
        infill.load_model("bert-base-cased", device="cpu")
    assert "bert-base-cased" in str(e.value) and "'model' DIR" in str(e.value)
