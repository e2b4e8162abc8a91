"""The character transformer, its save/load format and the CharMaskedLM adapter."""
import json

import pytest
import torch

import infill
from infill.errors import ConfigError, InputError, ModelLoadError
from infill.data.greek import GREEK, normalize
from infill.models.char import CharConfig, CharMaskedLM, CharTransformer, load_char, save_char

A = GREEK


def tiny_model(seed=0, max_length=48, conv_kernel=3):
    torch.manual_seed(seed)
    m = CharTransformer(CharConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64,
                                   max_length=max_length, dropout=0.1, conv_kernel=conv_kernel))
    # make the weights exactly representable in fp16 so a fp16 save round-trips bit for bit
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(p.half().float())
    return m.eval()


def batch():
    rows = [[A.start_id] + A.encode("μηνιν αειδε θεα"), [A.start_id] + A.encode("αχιληοσ")]
    rows[0][3] = A.mask_id
    rows[1][2] = A.missing_id
    rows[1][4] = A.mask_id
    T = max(map(len, rows))
    ids = torch.full((2, T), A.pad_id)
    attn = torch.zeros((2, T), dtype=torch.bool)
    for r, row in enumerate(rows):
        ids[r, :len(row)] = torch.tensor(row)
        attn[r, :len(row)] = True
    return ids, attn


@pytest.mark.parametrize("conv_kernel", [0, 3])
def test_log_probs_equal_full_forward_log_softmax(conv_kernel):
    m = tiny_model(conv_kernel=conv_kernel)
    lm = CharMaskedLM(m, device="cpu")
    ids, attn = batch()
    pos = torch.tensor([[3, 1, 5], [4, 2, 7]])
    got = lm.log_probs(ids, attn, pos)
    with torch.no_grad():
        full = torch.log_softmax(m(ids, attn).float(), -1)
    want = torch.stack([full[r, pos[r]] for r in range(2)])
    assert got.shape == (2, 3, A.n_outputs) and got.dtype == torch.float32
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(got.exp().sum(-1), torch.ones(2, 3))
    with torch.no_grad():                       # raw logits (MRF-L, E_raw) are the head's output
        torch.testing.assert_close(lm.logits(ids, attn, pos),
                                   torch.stack([m(ids, attn).float()[r, pos[r]] for r in range(2)]),
                                   rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("conv_kernel", [0, 5])
def test_padding_does_not_change_log_probs(conv_kernel):
    lm = CharMaskedLM(tiny_model(conv_kernel=conv_kernel), device="cpu")
    ids, attn = batch()
    n = int(attn[1].sum())
    alone = lm.log_probs(ids[1:, :n], attn[1:, :n], torch.tensor([[4]]))
    padded = lm.log_probs(ids, attn, torch.tensor([[4], [4]]))[1:]
    torch.testing.assert_close(alone, padded, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_save_load_round_trip_through_load_model(tmp_path, dtype):
    m = tiny_model()
    save_char(m, tmp_path / "char", dtype=dtype)
    meta = json.loads((tmp_path / "char" / "charmodel.json").read_text())
    assert meta["format"] == "infill-charmodel" and meta["alphabet"]["missing"] == "-"
    loaded = infill.load_model(str(tmp_path / "char"), device="cpu")
    assert isinstance(loaded, CharMaskedLM)
    ids, attn = batch()
    pos = torch.tensor([[3, 4], [4, 5]])
    assert torch.equal(loaded.log_probs(ids, attn, pos),
                       CharMaskedLM(m, device="cpu").log_probs(ids, attn, pos))


def test_adapter_ids():
    lm = CharMaskedLM(tiny_model(), device="cpu")
    assert lm.vocab_size == A.n_outputs
    assert lm.mask_id == A.mask_id >= lm.vocab_size
    assert lm.default_pivot == A.missing_id == lm.token_to_id("-") < lm.vocab_size
    assert lm.special_ids == {A.unk_id, A.missing_id}
    allowed = lm.allowed_mask()
    assert not allowed[A.missing_id] and not allowed[A.unk_id] and allowed[A.space_id]
    assert int(allowed.sum()) == lm.vocab_size - 2
    assert lm.id_to_token(lm.token_to_id("λ")) == "λ"
    with pytest.raises(InputError, match="unknown character"):
        lm.token_to_id("x")


def test_encode_render_conventions():
    lm = CharMaskedLM(tiny_model(), device="cpu")
    text = "Μῆνιν ἄ?ειδε ___ θεὰ -ηλ??αδεω"
    enc = lm.encode(text, gap=3)

    assert enc.input_ids[0] == A.start_id
    # '?' -> one position, the marker -> 3 positions, '??' -> one gap of 2 positions
    assert [len(g) for g in enc.gaps] == [1, 3, 2]
    assert all(enc.input_ids[p] == A.mask_id for p in enc.positions)
    assert enc.input_ids.count(A.mask_id) == 6
    # '-' stays in the input as the missing symbol, not a gap
    assert enc.input_ids.count(A.missing_id) == 1 and A.missing_id not in [
        enc.input_ids[p] for p in enc.positions]
    assert len(enc.input_ids) == 1 + len(normalize(text.replace("___", "???")))
    fills = [[A.index["γ"]], [A.index[c] for c in "δεζ"], [A.index["η"], A.index["ι"]]]
    restored, parts, spans, _ = lm.render(enc, fills)
    assert parts == ["γ", "δεζ", "ηι"]
    # the user's own text (case, accents) outside the gaps; the restored characters normalized
    assert restored == "Μῆνιν ἄγειδε δεζ θεὰ -ηληιαδεω"
    assert [restored[a:b] for a, b in spans] == parts
    # every non-gap character of the restored text is the input's
    full = [A.start_id] + A.encode(normalize(restored))
    assert [full[i] for i in range(len(full)) if i not in enc.positions] == [
        enc.input_ids[i] for i in range(len(full)) if i not in enc.positions]


@pytest.mark.parametrize("text, want", [
    ("ΜΗΝΙΝ ΑΕΙΔΕ ΘΕ? ΠΗΛΗΙΑΔΕΩ", "ΜΗΝΙΝ ΑΕΙΔΕ ΘΕΑ ΠΗΛΗΙΑΔΕΩ"),    # a word in capitals
    ("ΜΗΝΙΝ ??? ΘΕΑ", "ΜΗΝΙΝ ΑΑΑ ΘΕΑ"),                          # whole words: the text's case
    ("Μῆνιν ??? θεὰ", "Μῆνιν ααα θεὰ"),                          # the text has lowercase
    ("Μῆνιν Ἀ?ιλ", "Μῆνιν Ἀαιλ"),                                # its word: lowercase beside it
    ("ΜΗΝΙΝ θε?", "ΜΗΝΙΝ θεα"),                                  # its own word decides
    ("ΘΕ? θεα", "ΘΕΑ θεα"),
    ("Μῆνιν Ἀ??", "Μῆνιν Ἀαα"),                                  # a capital initial: the text's
    ("ΜΗΝΙΝ Ἀ??", "ΜΗΝΙΝ ἈΑΑ"),
])
def test_a_fill_follows_the_case_of_the_text_around_it(text, want):
    lm = CharMaskedLM(tiny_model(), device="cpu")
    enc = lm.encode(text, gap=1)
    restored, parts, spans, _ = lm.render(enc, [[A.index["α"]] * len(g) for g in enc.gaps])
    assert restored == want and [restored[a:b] for a, b in spans] == parts


def test_encode_keeps_spaces_next_to_a_gap_and_round_trips_plain_text():
    lm = CharMaskedLM(tiny_model(), device="cpu")
    enc = lm.encode("  λόγος ___ ἐστί  ", gap=2)
    assert enc.segments == ["λόγος ", " ἐστί"]
    assert lm.render(enc, [[A.index["κ"], A.index["α"]]])[0] == "λόγος κα ἐστί"
    assert [A.symbols[i] for i in enc.input_ids[1:]] == list("λογοσ ?? εστι")
    text = "Ἄνδρα μοι ἔννεπε, Μοῦσα"
    assert lm.detokenize(lm.tokenize(text)) == normalize(text)


def test_unknown_characters_are_read_as_unknown_and_reported():
    lm = CharMaskedLM(tiny_model(max_length=64), device="cpu")
    enc = lm.encode("he wor?d λόγος ἐστί", gap=1)
    assert "".join(A.symbols[i] for i in enc.input_ids[1:]) == "^^ ^^^?^ λογοσ εστι"
    assert enc.notes == ["characters outside the Greek alphabet read as unknown (^): heword"]
    assert lm.encode("λόγ?ς", gap=1).notes == []          # accents, final sigma: not unknown
    (c, *_), = infill.fill(lm, "he wor?d λόγος ἐστί", top_k=1)
    assert c.text[:6] == "he wor" and c.text[7:] == "d λόγος ἐστί"   # the user's text, one restored


def test_a_text_in_the_other_script_is_one_error_naming_both():
    """Fewer than a fifth of the letters Greek: a Greek model restores nothing it would read as
    unknown; a bilingual text (about half of each) is read, its Latin letters as unknown."""
    lm = CharMaskedLM(tiny_model(max_length=64), name="builtin:greek", device="cpu")
    with pytest.raises(InputError, match=r"^the text is in Latin script; builtin:greek restores "
                       r"Greek \(a Latin model: builtin:latin\)$"):
        lm.encode("hello wor?d ὁ", gap=1)               # 9 Latin letters, 1 Greek
    assert lm.encode("hello wor?d λόγος", gap=1).notes   # 9 and 5: read, with a note
    with pytest.raises(InputError, match="Latin script"):
        infill.fill(lm, "d m ????? felici vixit annis xxv")
    assert lm.encode("imp caesar αὐτοκράτωρ καῖσ?ρ", gap=1).notes == [
        "characters outside the Greek alphabet read as unknown (^): impcaesr"]


def test_encode_errors():
    lm = CharMaskedLM(tiny_model(max_length=16), device="cpu")
    with pytest.raises(InputError, match="nothing to restore"):
        lm.encode("λογοσ εστι", gap=1)
    with pytest.raises(InputError, match="empty"):
        lm.encode("   ", gap=1)
    long = "λογοσ εστι και ___"      # 19 characters + start: over the 16-character model
    with pytest.raises(InputError, match="maximum length"):
        infill.fill(lm, long, gap=4, window=False)
    (c, *_), = infill.fill(lm, long, gap=4, top_k=1)  # decoded in a window centred on the gap
    assert c.text.startswith("λογοσ εστι και ") and len(c.fills[0]) == 4
    with pytest.raises(InputError, match="longer than the model's maximum length"):
        lm.encode("λογοσ ___", gap=17)


def test_fill_restores_argmax_and_never_places_missing_symbol():
    lm = CharMaskedLM(tiny_model(), device="cpu")
    text = "μηνιν α?ειδε"
    out = infill.fill(lm, text, beam_size=5, top_k=5)[0]
    enc = lm.encode(text, 1)
    lp = lm.log_probs(torch.tensor([enc.input_ids]), torch.ones(1, len(enc.input_ids), dtype=bool),
                      torch.tensor([enc.positions]))[0, 0].clone()
    lp[list(lm.special_ids)] = -float("inf")
    best = [A.symbols[i] for i in lp.topk(5).indices.tolist()]
    assert [c.fills[0] for c in out] == best
    assert all(c.text == "μηνιν α" + c.fills[0] + "ειδε" for c in out)
    for c in infill.fill(lm, "μη??ν α???δε", beam_size=8, top_k=8)[0]:
        assert "-" not in "".join(c.fills) and "^" not in "".join(c.fills)


def test_load_errors(tmp_path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "charmodel.json").write_text('{"format": "other"}')
    with pytest.raises(ModelLoadError, match="not an infill character model"):
        infill.load_model(str(tmp_path / "bad"))
    save_char(tiny_model(), tmp_path / "ok")
    (tmp_path / "ok" / "model.safetensors").unlink()
    with pytest.raises(ModelLoadError, match="model.safetensors"):
        load_char(tmp_path / "ok")
    save_char(tiny_model(), tmp_path / "ok2")
    with pytest.raises(ConfigError, match="do not apply"):
        load_char(tmp_path / "ok2", allow_nonstandard=True)


@pytest.mark.parametrize("pivot", ["?", "#", "<"])
def test_input_only_symbols_are_refused_as_pivots(pivot):
    lm = CharMaskedLM(tiny_model(), device="cpu")
    with pytest.raises(InputError, match="input-only symbol"):
        infill.fill(lm, "λογ?σ", pivot=pivot)
