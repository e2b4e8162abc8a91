"""ESM2 adapters: fair-esm checkpoints and HF EsmForMaskedLM directories, through the real loaders.

Every model here is tiny, random and built by the test; reference values come from the networks'
own forward passes (not from the adapter), and top fills are checked against brute force.
"""
from __future__ import annotations

import argparse
import itertools
import json
import warnings

import esm
import pytest
import torch
from click.testing import CliRunner

import infill
from infill_cli.main import main as cli_main
from infill.errors import ConfigError, InputError, ModelLoadError
from infill.models.esm import (STANDARD_AA, FairESMMaskedLM, HFESMMaskedLM, load_fair_esm,
                               save_fair_esm, wrap_fair_esm)

ALPHABET = esm.data.Alphabet.from_architecture("ESM-1b")
TOK = ALPHABET.tok_to_idx
SEQ = "MKVLAGHWT"


def tiny_esm2(seed: int = 0, token_dropout: bool = True) -> esm.ESM2:
    torch.manual_seed(seed)
    model = esm.ESM2(num_layers=2, embed_dim=32, attention_heads=4, alphabet=ALPHABET,
                     token_dropout=token_dropout)
    with torch.no_grad():  # spread the output distribution so argmaxes are well separated
        model.lm_head.bias.normal_(0, 1.0)
    return model.eval()


@pytest.fixture(scope="module")
def fair(tmp_path_factory):
    """(original fair-esm model, path of the checkpoint written by save_fair_esm)."""
    model = tiny_esm2()
    path = save_fair_esm(model, ALPHABET, tmp_path_factory.mktemp("fair") / "esm2_tiny.pt")
    return model, path


@pytest.fixture(scope="module")
def lm(fair):
    return infill.load_model(str(fair[1]), device="cpu")


def reference_log_probs(model, ids: list[int]) -> torch.Tensor:
    """[T, V] log-softmax of the fair-esm model's own forward."""
    with torch.no_grad():
        return torch.log_softmax(model(torch.tensor([ids]))["logits"][0].float(), -1)


def all_positions(lm, rows: list[list[int]]):
    T = max(len(r) for r in rows)
    ids = torch.full((len(rows), T), lm.pad_id)
    attn = torch.zeros(len(rows), T, dtype=torch.bool)
    for i, r in enumerate(rows):
        ids[i, :len(r)] = torch.tensor(r)
        attn[i, :len(r)] = True
    return lm.log_probs(ids, attn, torch.arange(T).expand(len(rows), T))


# ---- fair-esm checkpoint round trip --------------------------------------------------------------
def test_fair_esm_checkpoint_roundtrip_matches_model_forward(fair, lm):
    model, _ = fair
    assert isinstance(lm, FairESMMaskedLM)
    assert (lm.vocab_size, lm.mask_id, lm.pad_id, lm.default_pivot) == (33, 32, 1, 32)
    short = lm.encode("MK?LA", gap=1).input_ids
    long = lm.encode("MKV___LLGHWTRA", gap=3).input_ids
    got = all_positions(lm, [short, long])  # padded batch: row 0 is padded
    torch.testing.assert_close(got[0, :len(short)], reference_log_probs(model, short),
                               atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got[1], reference_log_probs(model, long), atol=1e-5, rtol=1e-5)


def test_checkpoint_is_read_by_fair_esm_own_local_loader(fair):
    model, path = fair
    assert path.name.startswith("esm2")
    assert path.with_name("esm2_tiny-contact-regression.pt").exists()
    # torch >= 2.6 loads weights_only by default; fair-esm's configs are argparse.Namespace
    # (true of the official checkpoints too), so allow that one class.
    with torch.serialization.safe_globals([argparse.Namespace]):
        loaded, alphabet = esm.pretrained.load_model_and_alphabet_local(str(path))
    assert alphabet.all_toks == ALPHABET.all_toks
    ref, got = model.state_dict(), loaded.state_dict()
    assert ref.keys() == got.keys()
    assert all(torch.equal(ref[k], got[k]) for k in ref)


def test_loads_without_regression_file_and_with_any_file_name(fair, tmp_path):
    model, path = fair
    renamed = tmp_path / "my_protein_model.pt"  # stem without the esm2 prefix
    renamed.write_bytes(path.read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "Regression weights not found" warning either
        lm2 = load_fair_esm(str(renamed), device="cpu")
    ids = lm2.encode("MKV?LL", gap=1).input_ids
    torch.testing.assert_close(all_positions(lm2, [ids])[0], reference_log_probs(model, ids),
                               atol=1e-5, rtol=1e-5)


def test_wrap_fair_esm_and_half_precision_save(fair, tmp_path):
    model, _ = fair
    wrapped = wrap_fair_esm(model, ALPHABET, device="cpu")
    ids = wrapped.encode("MK?LA").input_ids
    torch.testing.assert_close(all_positions(wrapped, [ids])[0], reference_log_probs(model, ids),
                               atol=1e-5, rtol=1e-5)
    half = save_fair_esm(model, {"note": "fp16"}, tmp_path / "esm2_half.pt", half=True)
    lm_half = infill.load_model(str(half), device="cpu")
    assert next(lm_half.model.parameters()).dtype == torch.float32  # stored fp16, run in fp32
    torch.testing.assert_close(all_positions(lm_half, [ids])[0], reference_log_probs(model, ids),
                               atol=0.05, rtol=0)


def test_esm1b_style_model_is_wrapped_too():
    args = argparse.Namespace(arch="roberta_large", layers=1, embed_dim=32, ffn_embed_dim=64,
                              attention_heads=4, max_positions=64, emb_layer_norm_before=True,
                              token_dropout=True, final_bias=True)
    torch.manual_seed(0)
    model = esm.ProteinBertModel(args, ALPHABET).eval()
    lm = wrap_fair_esm(model, ALPHABET, device="cpu")
    ids = lm.encode("MKV??LA").input_ids
    torch.testing.assert_close(all_positions(lm, [ids])[0], reference_log_probs(model, ids),
                               atol=1e-5, rtol=1e-5)


def test_save_fair_esm_rejects_bad_names_and_models(fair, tmp_path):
    model, _ = fair
    with pytest.raises(ConfigError, match="esm2_"):
        save_fair_esm(model, ALPHABET, tmp_path / "tiny.pt")
    with pytest.raises(ConfigError, match="ESM2"):
        save_fair_esm(torch.nn.Linear(2, 2), ALPHABET, tmp_path / "esm2_x.pt")


def test_corrupt_or_missing_checkpoint_is_a_model_load_error(tmp_path):
    bad = tmp_path / "esm2_bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ModelLoadError, match="esm2_bad.pt"):
        infill.load_model(str(bad))
    with pytest.raises(ModelLoadError, match="not found"):
        load_fair_esm(str(tmp_path / "esm2_missing.pt"))


# ---- HF EsmForMaskedLM ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def hf_dir(tmp_path_factory):
    from transformers import EsmConfig, EsmForMaskedLM, EsmTokenizer
    d = tmp_path_factory.mktemp("hf_esm")
    (d / "vocab.txt").write_text("\n".join(ALPHABET.all_toks) + "\n")
    tok = EsmTokenizer(str(d / "vocab.txt"))
    cfg = EsmConfig(vocab_size=33, mask_token_id=32, pad_token_id=1, hidden_size=32,
                    num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                    max_position_embeddings=1026, position_embedding_type="rotary",
                    token_dropout=True, emb_layer_norm_before=False)
    torch.manual_seed(1)
    model = EsmForMaskedLM(cfg).eval()
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return d, model


def test_hf_esm_directory_roundtrip(hf_dir):
    d, model = hf_dir
    lm = infill.load_model(str(d), device="cpu")
    assert isinstance(lm, HFESMMaskedLM)
    assert lm.vocab == ALPHABET.all_toks and lm.mask_id == 32
    ids = lm.encode("MKV___LLG", gap=2).input_ids
    assert ids[0] == TOK["<cls>"] and ids[-1] == TOK["<eos>"]
    with torch.no_grad():
        ref = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0], -1)
    short = lm.encode("MK?L").input_ids
    got = all_positions(lm, [ids, short])
    torch.testing.assert_close(got[0], ref, atol=1e-5, rtol=1e-5)
    with torch.no_grad():
        ref_short = torch.log_softmax(model(input_ids=torch.tensor([short])).logits[0], -1)
    torch.testing.assert_close(got[1, :len(short)], ref_short, atol=1e-5, rtol=1e-5)
    fills = infill.fill(lm, "MKV___LLG", gap=2, beam_size=4, top_k=4)[0]
    assert len(fills) == 4 and all(len(c.fills[0]) == 2 for c in fills)
    assert all(set(c.fills[0]) <= set(STANDARD_AA) for c in fills)


# ---- input conventions -----------------------------------------------------------------------------
def test_question_mark_runs_and_markers(lm):
    enc = lm.encode("MK??LV?A", gap=3)
    assert enc.gaps == [[3, 4], [7]]  # position 0 is <cls>; each ? is one residue
    assert enc.input_ids == [TOK["<cls>"], TOK["M"], TOK["K"], 32, 32, TOK["L"], TOK["V"], 32,
                             TOK["A"], TOK["<eos>"]]
    mixed = lm.encode("mk ___ l?a", gap=2)  # lowercase and whitespace accepted
    assert mixed.gaps == [[3, 4], [6]] and mixed.segments == ["mk ", " l", "a"]
    text, fills, spans, _ = lm.render(mixed, [[TOK["G"], TOK["W"]], [TOK["C"]]])
    assert (text, fills) == ("mk GW lCa", ["GW", "C"])
    assert lm.detokenize(lm.tokenize("MKVLA")) == "MKVLA"
    assert lm.encode("MK?L", marker="?").gaps == [[3]]
    out = infill.fill(lm, "MK??LV?A", beam_size=3, top_k=1)[0][0]
    assert len(out.text) == 8 and out.text[:2] == "MK" and out.text[4:6] == "LV"
    assert [len(f) for f in out.fills] == [2, 1]


@pytest.mark.parametrize("text,char,pos", [("MKVJ___", "J", 4), ("MK1?", "1", 3),
                                           ("MK?L-A", "-", 5), ("M K?L.", ".", 6)])
def test_invalid_residue_is_rejected_with_character_and_position(lm, text, char, pos):
    with pytest.raises(InputError, match=rf"invalid residue '{char}' at position {pos}\b"):
        lm.encode(text, gap=1)


def test_no_gap_and_too_long_are_input_errors(lm):
    with pytest.raises(InputError, match="no gap"):
        lm.encode("MKVLA")
    with pytest.raises(InputError, match="maximum length"):
        infill.fill(lm, "M" * 1100 + "?", window=False)


def test_cli_invalid_residue_and_fill(fair):
    _, path = fair
    runner = CliRunner()
    res = runner.invoke(cli_main, ["run", "--model", str(path), "--device", "cpu", "MKVJ?LL"])
    assert res.exit_code == 2
    assert "invalid residue 'J' at position 4" in res.output
    res = runner.invoke(cli_main, ["run", "--model", str(path), "--device", "cpu", "--json",
                                   "--top-k", "3", "MKV??LL"])
    assert res.exit_code == 0, res.output
    row = json.loads(res.output.strip().splitlines()[0])
    assert row  # one JSON object for the one input
    for c in row["completions"]:
        assert len(c["text"]) == 7 and set(c["fills"][0]) <= set(STANDARD_AA)


# ---- residue restriction and brute force -------------------------------------------------------------
def biased_model(toward: list[str]) -> esm.ESM2:
    """A tiny ESM2 whose head strongly prefers the given tokens (here: non-residues)."""
    model = tiny_esm2(seed=3)
    with torch.no_grad():
        for t in toward:
            model.lm_head.bias[TOK[t]] += 12.0
    return model


def test_fills_restricted_to_standard_amino_acids_unless_allowed(tmp_path):
    model = biased_model(["X", "<cls>", "-", "B"])
    path = save_fair_esm(model, ALPHABET, tmp_path / "esm2_biased.pt")
    lm = infill.load_model(str(path), device="cpu")
    assert lm.special_ids == frozenset(range(33)) - {TOK[a] for a in STANDARD_AA}
    for scorer, order in itertools.product(["hcb", "standard"], ["left-to-right", "best-to-worst"]):
        res = infill.fill(lm, "MK___LV", gap=3, scorer=scorer, order=order, beam_size=25, top_k=25)[0]
        assert len(res) == 25
        assert all(set(c.fills[0]) <= set(STANDARD_AA) for c in res), (scorer, order)
    wide = infill.load_model(str(path), device="cpu", allow_nonstandard=True)
    assert wide.special_ids == lm.special_ids - {TOK[a] for a in "XBUZO"}
    top = infill.fill(wide, "MK___LV", gap=3, beam_size=5)[0][0]
    assert set(top.fills[0]) <= set("XB") and set(top.fills[0]) - set(STANDARD_AA)
    assert lm.with_nonstandard(True).special_ids == wide.special_ids
    special = infill.fill(lm, "MK?LV", allow_special=True, beam_size=3, top_k=1)[0][0]
    assert special.fills[0] == "X"          # the biased model's favourite non-residue token


def brute_force_pair(model, enc, pivot: int | None):
    """Best (w1, w2) over the 20 standard AAs for a 2-residue gap, left-to-right scores from the
    fair-esm model's own forward. pivot None: standard scorer; else HCB with that pivot injected."""
    g1, g2 = enc.gaps[0]
    aa = [TOK[a] for a in STANDARD_AA]
    x1 = list(enc.input_ids)
    if pivot is not None:
        x1[g2] = pivot
    lp1 = reference_log_probs(model, x1)[g1]
    best, best_score = None, -float("inf")
    for w1 in aa:
        x2 = list(enc.input_ids)
        x2[g1] = w1
        lp2 = reference_log_probs(model, x2)[g2]
        for w2 in aa:
            s = float(lp1[w1] + lp2[w2])
            if pivot is not None:
                s -= float(lp1[pivot] + lp2[pivot])
            if s > best_score:
                best, best_score = (w1, w2), s
    return best, best_score


@pytest.mark.parametrize("scorer,pivot", [("standard", None), ("hcb", None), ("hcb", "<cls>")])
def test_top_fill_equals_brute_force_over_20_amino_acids(fair, lm, scorer, pivot):
    model, _ = fair
    enc = lm.encode("MKVL___GHWTR", gap=2)
    pivot_id = None if scorer == "standard" else lm.resolve_pivot(pivot)
    best, best_score = brute_force_pair(model, enc, pivot_id)
    hyps = infill.decode(lm, enc.input_ids, scorer=scorer, pivot=pivot, beam_size=20)
    assert hyps[0].tokens == best
    assert hyps[0].score == pytest.approx(best_score, abs=1e-4)
    via_fill = infill.fill(lm, "MKVL___GHWTR", gap=2, scorer=scorer, pivot=pivot,
                           beam_size=20, top_k=1)[0][0]
    assert via_fill.tokens == best
    assert via_fill.text == "MKVL" + "".join(ALPHABET.all_toks[t] for t in best) + "GHWTR"


def test_cls_pivot_by_string(lm):
    assert lm.resolve_pivot("<cls>") == TOK["<cls>"] == lm.token_to_id("<cls>")
    assert lm.resolve_pivot(None) == lm.mask_id
    assert lm.token_to_id("w") == TOK["W"]
    with pytest.raises(InputError, match="unknown token"):
        lm.token_to_id("<bos>")


# ---- hub names offline ---------------------------------------------------------------------------------
def test_offline_fair_esm_name_gives_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(tmp_path))

    import infill.models.esm as esm_module
    probed = []
    monkeypatch.setattr(esm_module, "url_reachable", lambda url, *a, **k: probed.append(url) and False)
    with pytest.raises(ModelLoadError) as e:
        infill.load_model("esm2_t6_8M_UR50D")
    assert probed == [esm_module.FAIR_ESM_URL.format(name="esm2_t6_8M_UR50D")]  # one quick probe
    msg = str(e.value)
    assert "esm2_t6_8M_UR50D" in msg and "esm2_t6_8M_UR50D.pt" in msg and "'model'" in msg
    assert "\n" not in msg
    with pytest.raises(ModelLoadError, match="unknown fair-esm model name 'esm2_no_such_model'"):
        infill.load_model("esm2_no_such_model")


def test_offline_hf_esm_name_gives_clear_error(monkeypatch):
    import transformers

    def offline(*args, **kwargs):
        raise OSError("We couldn't connect to 'https://huggingface.co' to load the files")

    monkeypatch.setattr(transformers.EsmForMaskedLM, "from_pretrained", offline)
    with pytest.raises(ModelLoadError) as e:
        infill.load_model("facebook/esm2_t6_8M_UR50D")
    msg = str(e.value)
    assert "facebook/esm2_t6_8M_UR50D" in msg and "'model' /path/to/dir" in msg


def test_unknown_loader_option_is_a_config_error(fair):
    with pytest.raises(ConfigError, match="vocab_size"):
        infill.load_model(str(fair[1]), vocab_size=3)


# ---- protein training ------------------------------------------------------------------------------------
def write_fasta(path, n: int = 48) -> None:
    """Each sequence repeats one residue (learnable from context), wrapped over two lines."""
    lines = []
    for i in range(n):
        seq = STANDARD_AA[(7 * i) % 20] * 30
        lines += [f">seq{i} test", seq[:17], seq[17:]]
    path.write_text("\n".join(lines) + "\n")


def test_protein_examples_from_fasta(tmp_path):
    from infill.training.protein import ProteinFamily
    f = tmp_path / "x.fa"
    f.write_text(">a first\nMKV\nla*\n\n>b\nMJ1K\n>empty\n")
    fam = ProteinFamily(layers=1, hidden=32, heads=4, max_length=6)
    ex = fam.load_examples(f, tmp_path)
    assert ex[0] == [TOK["<cls>"]] + [TOK[a] for a in "MKVL"] + [TOK["<eos>"]]  # cropped to 4
    assert ex[1] == [TOK["<cls>"]] + [TOK[a] for a in "MXXK"] + [TOK["<eos>"]]
    assert (fam.n_cropped, fam.n_replaced) == (1, 2)
    ids = torch.tensor(ex[1])
    assert fam.maskable(ids).tolist() == [False, True, True, True, True, False]
    assert sorted(fam.random_ids().tolist()) == sorted(TOK[a] for a in STANDARD_AA)


def test_protein_family_rejects_unsupported_options():
    from infill.training.protein import ProteinFamily
    with pytest.raises(ConfigError, match="'vocab_size'"):
        ProteinFamily(vocab_size=100)
    with pytest.raises(ConfigError, match="4 x hidden"):
        ProteinFamily(hidden=32, heads=4, ff=100)


def test_protein_training_lowers_loss_and_saves_a_loadable_checkpoint(tmp_path):
    from infill.training import TrainConfig, run_training
    from infill.training.protein import ARTIFACT
    corpus = tmp_path / "motifs.fa"
    write_fasta(corpus)
    cfg = TrainConfig(out=str(tmp_path / "run"), steps=60, batch_size=16, lr=1e-2, warmup=10,
                      eval_every=10, checkpoint_every=1000, val_fraction=0.15, test_fraction=0.1,
                      progress=False)
    result = run_training("protein", str(corpus), cfg, layers=1, hidden=32, heads=4, ff=None)
    losses = [h["val_loss"] for h in result.history]
    assert [h["step"] for h in result.history][-6:] == [10, 20, 30, 40, 50, 60], result.history
    assert losses[-1] < losses[0] - 0.5, losses
    assert losses[-1] < 0.5 and result.val_accuracy > 0.9, (losses, result.val_accuracy)
    path = tmp_path / "run" / ARTIFACT
    assert path.exists() and path.with_name("esm2_protein-contact-regression.pt").exists()
    lm = infill.load_model(str(path), device="cpu")
    assert isinstance(lm, FairESMMaskedLM) and lm.max_length == 130
    # the --out folder itself loads as the model (as every family's does)
    from_dir = infill.load_model(str(tmp_path / "run"), device="cpu")
    assert isinstance(from_dir, FairESMMaskedLM) and from_dir.name == str(path)
    with torch.serialization.safe_globals([argparse.Namespace]):
        info = torch.load(str(path), weights_only=True)["infill"]
    assert info["options"]["layers"] == 1 and info["family"] == "protein"
    # the held-out split is rebuilt from the recorded options (from_description + decode)
    from infill.data.splits import heldout_texts
    split = json.loads((tmp_path / "run" / "split.json").read_text())
    assert heldout_texts(tmp_path / "run", "test") == \
        [STANDARD_AA[(7 * i) % 20] * 30 for i in split["test"]]
    # what was learnt is used: a residue masked inside a repeat is restored
    for aa in "WCK":
        top = infill.fill(lm, aa * 8 + "?" + aa * 9, beam_size=3, top_k=1)[0][0]
        assert top.fills == (aa,)


def test_builtin_protein_fills_offline():
    from infill.data.builtins import builtin_path
    path = builtin_path("builtin:protein")
    assert path.name == "esm2_protein.pt" and path.stat().st_size <= 15 * 2**20
    lm = infill.load_model("builtin:protein", device="cpu")
    assert isinstance(lm, FairESMMaskedLM) and lm.max_length == 130
    res = infill.fill(lm, "MAKRVYFLAHGG???GVGFRYFTQKRASEYGL", beam_size=5, top_k=5)[0]
    assert len(res) == 5 and len({c.fills for c in res}) == 5
    for c in res:
        assert c.text[:12] == "MAKRVYFLAHGG" and c.text[15:] == "GVGFRYFTQKRASEYGL"
        assert len(c.fills[0]) == 3 and set(c.fills[0]) <= set(STANDARD_AA)
    info = json.loads(path.with_name("train_info.json").read_text())
    assert info["model"]["artifact"] == path.name and info["result"]["step"] == 900
