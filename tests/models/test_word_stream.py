"""The character model's word stream (Ithaca's word input), its save/load, and weight transfer."""
import json
import random
import re

import pytest
import torch

import infill
from infill.data.greek import GREEK
from infill.errors import ConfigError
from infill.models.char import (WORD_MAX, CharConfig, CharTransformer, load_char, save_char,
                                word_code)
from infill.training.greek import init_weights

WORDS = ["και", "δε", "τον", "α", "αβγδεζηθικλμν", "0", "00", "μηνοσ"]
TINY = dict(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_length=40, conv_kernel=3)


def brute_force_ids(text: str, words: list[str]) -> list[int]:
    """The rule, written directly: each character of a \\w+ run that is a listed word gets
    that word's id (1-based), every other character 0."""
    out = [0] * len(text)
    for m in re.finditer(r"\w+", text):
        if m.group() in words:
            out[m.start():m.end()] = [words.index(m.group()) + 1] * len(m.group())
    return out


def tiny(words=None, seed=0, **kw):
    torch.manual_seed(seed)
    model = CharTransformer(CharConfig(**{**TINY, **kw}, n_words=len(words or [])), words)
    return model.eval()


def test_word_ids_follow_the_rule_on_random_strings():
    model = tiny(WORDS)
    rng = random.Random(0)
    chars = "καιδετονμησ -?^0.,αβγ"
    texts = ["<", "και δε τον", "και?δε -τον", "αβγδεζηθικλμν αβγδεζηθικλμνξ καιι ακαι",
             "0 00 000 0και", "μηνοσ·τον,και.δε;α", "?και? -και- ^και^"]
    texts += ["".join(rng.choice(chars) for _ in range(rng.randint(1, 38))) for _ in range(400)]
    for t in texts:
        body = t.lstrip("<")
        ids = torch.tensor([[GREEK.start_id] + GREEK.encode(body)])
        assert model.words.ids(ids)[0, 1:].tolist() == brute_force_ids(body, WORDS), t


def test_word_ids_of_a_padded_batch_match_each_row_alone():
    model = tiny(WORDS)
    rows = ["και δε τον", "τον", "α και μηνοσ δε"]
    T = max(len(r) for r in rows)
    batch = torch.full((len(rows), T), GREEK.pad_id)
    for i, r in enumerate(rows):
        batch[i, :len(r)] = torch.tensor(GREEK.encode(r))
    got = model.words.ids(batch)
    for i, r in enumerate(rows):
        assert got[i, :len(r)].tolist() == brute_force_ids(r, WORDS)
        assert got[i, len(r):].eq(0).all()


def test_word_codes_are_distinct_and_bounded():
    digits = {c: k + 1 for k, c in enumerate(GREEK.letters + GREEK.numeral)}
    assert word_code("α", digits) == 1 and word_code("β", digits) == 2
    assert word_code("αβ", digits) == 1 + 2 * 26
    assert word_code("α" * (WORD_MAX + 1), digits) == -1 and word_code("a", digits) == -1
    assert word_code("ω" * WORD_MAX, digits) < 2 ** 63
    with pytest.raises(ConfigError):
        tiny(["και", "και"])
    with pytest.raises(ConfigError):
        tiny(["α" * (WORD_MAX + 1)])


def test_the_word_embedding_changes_exactly_the_characters_of_known_words():
    model = tiny(WORDS)
    with torch.no_grad():
        model.words.embed.weight.normal_()
    text = "και ξυν τον"
    ids = torch.tensor([[GREEK.start_id] + GREEK.encode(text)])
    attn = torch.ones_like(ids, dtype=torch.bool)
    emb = model.words(ids)[0]
    known = [i + 1 for i, c in enumerate(text) if brute_force_ids(text, WORDS)[i]]
    assert torch.equal(emb[known], model.words.embed.weight[[WORDS.index(w) + 1 for w in
                                                              ("και",) * 3 + ("τον",) * 3]])
    others = [p for p in range(len(text) + 1) if p not in known]
    assert torch.equal(emb[others], model.words.embed.weight[[0] * len(others)])
    # the forward uses it: a model without the stream but the same weights differs
    plain = tiny()
    plain.load_state_dict({k: v for k, v in model.state_dict().items() if not k.startswith("words")})
    assert not torch.allclose(model(ids, attn), plain(ids, attn))


def test_save_load_round_trip_through_the_real_loader(tmp_path):
    model = tiny(WORDS)
    with torch.no_grad():
        model.words.embed.weight.normal_()
    save_char(model, tmp_path / "m", dtype=torch.float32)
    meta = json.loads((tmp_path / "m" / "charmodel.json").read_text())
    assert meta["words"] == WORDS and meta["config"]["n_words"] == len(WORDS)
    lm = infill.load_model(str(tmp_path / "m"), device="cpu")
    text = "και δε ??ν μηνοσ"
    enc = lm.encode(text)
    ids = torch.tensor([enc.input_ids])
    pos = torch.tensor([enc.gaps[0]])
    want = model.head(model.hidden(ids, torch.ones_like(ids, dtype=torch.bool)))[0, enc.gaps[0]]
    got = lm.logits(ids, torch.ones_like(ids), pos)[0]
    assert torch.allclose(got, want, atol=1e-5)
    assert lm.model.words.words == WORDS


def test_a_model_without_words_saves_no_word_list_and_loads_as_before(tmp_path):
    model = tiny()
    save_char(model, tmp_path / "old")
    meta = json.loads((tmp_path / "old" / "charmodel.json").read_text())
    assert "words" not in meta and meta["config"]["n_words"] == 0
    del meta["config"]["n_words"]                 # a charmodel.json written before word streams
    (tmp_path / "old" / "charmodel.json").write_text(json.dumps(meta))
    lm = load_char(tmp_path / "old", device="cpu")
    assert lm.model.words is None
    assert not any(k.startswith("words") for k in lm.model.state_dict())


def test_init_from_a_char_model_computes_what_it_computed(tmp_path):
    """Weights copied from a model without a word stream and a shorter context: the new model
    (zero word embedding, positions repeated) gives the old model's logits on the old length."""
    old = tiny(seed=1, max_length=20)
    save_char(old, tmp_path / "old", dtype=torch.float32)
    new = tiny(WORDS, seed=2, max_length=40)
    init_weights(new, str(tmp_path / "old"))
    assert torch.equal(new.position.weight[20:40], old.position.weight[:20])
    ids = torch.tensor([[GREEK.start_id] + GREEK.encode("και δε τον α?ειδε")])
    attn = torch.ones_like(ids, dtype=torch.bool)
    assert torch.allclose(new(ids, attn), old(ids, attn), atol=1e-6)
    with pytest.raises(ConfigError):
        init_weights(tiny(WORDS, d_model=8, n_heads=2, d_ff=16), str(tmp_path / "old"))
