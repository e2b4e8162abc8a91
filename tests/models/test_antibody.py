"""Pretrained antibody models (AntiBERTy, Sapiens) and IMGT regions, on real weights and data.

Needs the ``antibody`` extra (antiberty==0.1.3 ships AntiBERTy's weights, anarcism numbers
sequences); the Sapiens tests fetch the sapiens==1.0.5 wheel from PyPI once (``pip download
--no-deps``, 7 MB) into the session's cache (``$INFILL_CACHE`` when set, else a temporary folder).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import infill
from infill.data import regions
from infill.errors import ConfigError, InputError, ModelLoadError
from infill.models import antibody
from infill.models.base import pad_batch

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("antiberty") is None or importlib.util.find_spec("anarcism") is None,
    reason='antibody tests need antiberty==0.1.3 and anarcism: pip install "infill-mlm[antibody]"')

DATA = Path(__file__).resolve().parents[2] / "data" / "antibody"
STANDARD = set("ACDEFGHIKLMNPQRSTVWY")
VH3_23 = ("EVQLVESGGGLVQPGGSLRLSCAASGFTFSSYAMSWVRQAPGKGLEWVSAISGSGGSTYYADSVKGRFTISRDNSKNTLYLQ"
          "MNSLRAEDTAVYYCAKDRGYSSGWYFDYWGQGTLVTVSS")
GERMLINES = ["IGHV1-2*02", "IGHV1-69*01", "IGHV3-23*01", "IGHV4-34*01", "IGHV5-51*01", "IGHV7-4-1*01"]


def read_fa(name: str) -> dict[str, str]:
    lines = (DATA / name).read_text().split()
    return dict(zip((h[1:] for h in lines[0::2]), lines[1::2]))


@pytest.fixture(scope="session")
def cache(tmp_path_factory) -> Path:
    if os.environ.get("INFILL_CACHE"):
        return Path(os.environ["INFILL_CACHE"])
    return tmp_path_factory.mktemp("infill-cache")


@pytest.fixture(scope="session")
def antiberty(cache):
    return antibody.load_antibody("antiberty", device="cpu", cache=cache)


@pytest.fixture(scope="session")
def sapiens_vh(cache):
    return antibody.load_antibody("sapiens-vh", device="cpu", cache=cache)


def antiberty_reference():
    """BertForMaskedLM built straight from the files antiberty ships (not through infill)."""
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast
    root = Path(importlib.util.find_spec("antiberty").submodule_search_locations[0]) / "trained_models"
    model = BertForMaskedLM(BertConfig.from_json_file(root / "AntiBERTy_md_smooth" / "config.json"))
    state = torch.load(root / "AntiBERTy_md_smooth" / "pytorch_model.bin", map_location="cpu",
                       weights_only=True)
    result = model.load_state_dict(state, strict=False)
    assert not result.missing_keys
    return model.eval(), BertTokenizerFast(vocab=str(root / "vocab.txt"), do_lower_case=False)


def fairseq_roberta_logits(sd: dict, tokens: torch.Tensor, pad: int = 1, heads: int = 8,
                           eps: float = 1e-5) -> torch.Tensor:
    """fairseq 0.10's RoBERTa forward written out from its state dict: learned positions from
    padding_idx + 1, embedding LayerNorm, post-norm layers, RobertaLMHead with the tied output."""
    p = "decoder.sentence_encoder."
    mask = tokens.ne(pad)
    positions = torch.cumsum(mask.long(), dim=1) * mask.long() + pad  # fairseq make_positions
    x = F.embedding(tokens, sd[p + "embed_tokens.weight"]) + F.embedding(positions, sd[p + "embed_positions.weight"])
    x = F.layer_norm(x, x.shape[-1:], sd[p + "emb_layer_norm.weight"], sd[p + "emb_layer_norm.bias"], eps)
    x = x * mask.unsqueeze(-1).to(x)
    B, T, E = x.shape
    hd = E // heads
    i = 0
    while f"{p}layers.{i}.fc1.weight" in sd:
        L = f"{p}layers.{i}."

        def lin(name, h, L=L):
            return F.linear(h, sd[L + name + ".weight"], sd[L + name + ".bias"])
        q = lin("self_attn.q_proj", x) * hd ** -0.5
        k, v = lin("self_attn.k_proj", x), lin("self_attn.v_proj", x)
        q, k, v = (t.view(B, T, heads, hd).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-1, -2)).masked_fill(~mask[:, None, None, :], float("-inf"))
        a = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, E)
        x = F.layer_norm(x + lin("self_attn.out_proj", a), (E,), sd[L + "self_attn_layer_norm.weight"],
                         sd[L + "self_attn_layer_norm.bias"], eps)
        h = lin("fc2", F.gelu(lin("fc1", x)))
        x = F.layer_norm(x + h, (E,), sd[L + "final_layer_norm.weight"], sd[L + "final_layer_norm.bias"], eps)
        i += 1
    h = F.gelu(F.linear(x, sd["decoder.lm_head.dense.weight"], sd["decoder.lm_head.dense.bias"]))
    h = F.layer_norm(h, (E,), sd["decoder.lm_head.layer_norm.weight"], sd["decoder.lm_head.layer_norm.bias"], eps)
    return F.linear(h, sd["decoder.lm_head.weight"]) + sd["decoder.lm_head.bias"]


def masked_top1(model, seqs: list[str], k: int = 8) -> float:
    """Top-1 accuracy (over the 20 standard residues) with every residue masked once: k rows per
    sequence, row r masks residues r, r + k, r + 2k, ..."""
    rows, targets = [], []
    for s in seqs:
        ids = model.tokenize(s)
        for r in range(k):
            pos = [1 + i for i in range(r, len(s), k)]
            x = list(ids)
            for q in pos:
                x[q] = model.mask_id
            rows.append((x, pos))
            targets.append([ids[q] for q in pos])
    allowed = model.allowed_mask()
    correct = total = 0
    for b in range(0, len(rows), 16):
        chunk, tgt = rows[b:b + 16], targets[b:b + 16]
        X, A = pad_batch([c[0] for c in chunk], model.pad_id)
        width = max(len(c[1]) for c in chunk)
        P = torch.tensor([c[1] + [c[1][-1]] * (width - len(c[1])) for c in chunk])
        pred = model.log_probs(X, A, P).masked_fill(~allowed, float("-inf")).argmax(-1)
        for j, t in enumerate(tgt):
            correct += sum(int(pred[j, m]) == t[m] for m in range(len(t)))
            total += len(t)
    return correct / total


# ---- registry, cache, conversion ----------------------------------------------------------------
def test_registry_and_names():
    assert set(antibody.ANTIBODY_MODELS) == {"antiberty", "sapiens-vh", "sapiens-vl"}
    for spec in antibody.ANTIBODY_MODELS.values():
        assert re.fullmatch(r"[0-9a-f]{64}", spec.sha256) and spec.license and spec.description
    assert antibody.is_antibody_name("AntiBERTy") and not antibody.is_antibody_name("esm2_t6_8M_UR50D")
    with pytest.raises(ModelLoadError, match="unknown antibody model"):
        antibody.download("antiberta")


def test_cache_dir_precedence(monkeypatch, tmp_path):
    monkeypatch.delenv("INFILL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert antibody.cache_dir() == tmp_path / "xdg" / "infill"
    monkeypatch.setenv("INFILL_CACHE", str(tmp_path / "mine"))
    assert antibody.cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("INFILL_CACHE")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert antibody.cache_dir() == Path.home() / ".cache" / "infill"


def test_converted_directory_is_a_plain_hf_model(antiberty, cache):
    from transformers import AutoModelForMaskedLM, AutoTokenizer
    folder = antibody.convert("antiberty", cache)
    assert {"config.json", "model.safetensors", "tokenizer.json", antibody.META_FILE} <= \
        {p.name for p in folder.iterdir()}
    meta = json.loads((folder / antibody.META_FILE).read_text())
    assert meta["source_sha256"] == antibody.ANTIBODY_MODELS["antiberty"].sha256
    assert meta["source"] == "antiberty==0.1.3"
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    assert antibody.convert("antiberty", cache) == folder  # cached: not converted again
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp
    assert not [p for p in cache.iterdir() if p.name.startswith(".antiberty")]  # no temp leftovers
    tok = AutoTokenizer.from_pretrained(folder)
    assert type(AutoModelForMaskedLM.from_pretrained(folder)).__name__ == "BertForMaskedLM"
    # the converted tokenizer reads unspaced residues, one token each, like the adapter
    assert tok("EVQL[MASK]ESG")["input_ids"] == antiberty.encode("EVQL?ESG").input_ids
    assert tok.decode(tok("EVQLVESG")["input_ids"], skip_special_tokens=True) == "EVQLVESG"
    assert antiberty.max_length == 512 and antiberty.vocab_size == 25
    assert antibody.load_antibody(str(folder), device="cpu").name == str(folder)


def test_missing_package_and_offline_download_messages(monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "antiberty" else real(n, *a))
    with pytest.raises(ModelLoadError, match=re.escape('pip install "infill-mlm[antibody]"')):
        antibody.download("antiberty")
    monkeypatch.undo()

    def offline(cmd, **kw):
        assert cmd[1:5] == ["-m", "pip", "download", "sapiens==1.0.5"] and "--no-deps" in cmd
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: Could not find a version that "
                                           "satisfies the requirement sapiens==1.0.5\n")
    monkeypatch.setattr(antibody.subprocess, "run", offline)
    with pytest.raises(ModelLoadError) as err:
        antibody.download("sapiens-vh", cache=tmp_path)
    msg = str(err.value)
    assert "\n" not in msg and "cannot download sapiens==1.0.5" in msg
    assert "pip download sapiens==1.0.5 --no-deps" in msg


def test_load_options_are_checked():
    with pytest.raises(ConfigError):
        antibody.load_antibody("antiberty", beam=3)
    with pytest.raises(ModelLoadError, match="neither an antibody model name"):
        antibody.load_antibody("/nonexistent/dir")


# ---- (a) AntiBERTy equals a direct BertForMaskedLM forward -----------------------------------
def test_antiberty_log_probs_match_direct_bert(antiberty):
    ref, tok = antiberty_reference()
    texts = [VH3_23[:30] + "????" + VH3_23[34:], "QVQLVQSGAEVKKPGASVKVSCKAS???TFTGYYMHWVRQAPGQGLEWMGW"]
    encs = [antiberty.encode(t) for t in texts]
    for t, e in zip(texts, encs):  # same ids as antiberty's own (space-separated) vocabulary
        assert e.input_ids == tok(" ".join(t.replace("?", "@")).replace("@", "[MASK]"))["input_ids"]
    X, A = pad_batch([e.input_ids for e in encs], antiberty.pad_id)
    width = max(len(e.positions) for e in encs)
    P = torch.tensor([e.positions + [e.positions[-1]] * (width - len(e.positions)) for e in encs])
    with torch.inference_mode():
        full = ref(input_ids=X, attention_mask=A.long()).logits
    rows = torch.arange(len(encs))[:, None]
    ours_lp, ours_logits = antiberty.log_probs(X, A, P), antiberty.logits(X, A, P)
    assert ours_lp.shape == (2, width, 25)
    # float32 reduction order differs between thread counts / attention kernels: ~1e-6 relative
    # on log-probs of magnitude up to ~40; a wrong weight or position would be off by > 0.1
    ref_lp = torch.log_softmax(full, -1)[rows, P]
    assert (ours_lp - ref_lp).abs().max().item() < 1e-4
    assert (ours_logits - full[rows, P]).abs().max().item() < 1e-4


# ---- (b) masked-residue accuracy on human germline V genes ------------------------------------
def test_germline_top1_accuracy(antiberty, sapiens_vh):
    germ = read_fa("human_ighv_germline.fa")
    seqs = [germ[n] for n in GERMLINES]
    # measured on these six (every residue masked once, 1/8 of a sequence at a time):
    # AntiBERTy 0.998, Sapiens-VH 0.903; chance 0.05, randomly initialized AntiBERTy ~0.1
    assert masked_top1(antiberty, seqs) > 0.90
    assert masked_top1(sapiens_vh, seqs) > 0.75


# ---- (c) Sapiens conversion keeps the fairseq computation -------------------------------------
@pytest.mark.parametrize("name", ["sapiens-vh", "sapiens-vl"])
def test_sapiens_matches_fairseq_forward(name, cache):
    from transformers import AutoModelForMaskedLM
    path = antibody.download(name, cache)
    with pytest.raises(Exception, match="argparse.Namespace"):  # fairseq args: why the allow-list
        torch.load(path, map_location="cpu", weights_only=True)
    with torch.serialization.safe_globals([argparse.Namespace]):
        ck = torch.load(path, map_location="cpu", weights_only=True)
    model = antibody.load_antibody(name, device="cpu", cache=cache)
    assert model.max_length == ck["model"]["decoder.sentence_encoder.embed_positions.weight"].shape[0] - 2
    seqs = [VH3_23, VH3_23[:56] + "?????" + VH3_23[61:100], VH3_23[12:80]]
    ids = [model.encode(s).input_ids if "?" in s else model.tokenize(s) for s in seqs]
    X, A = pad_batch(ids, model.pad_id)
    P = torch.arange(X.shape[1]).expand(len(ids), -1)
    # float64: the converted RobertaForMaskedLM against the hand-written fairseq forward
    hf = AutoModelForMaskedLM.from_pretrained(antibody.convert(name, cache)).double().eval()
    with torch.inference_mode():
        got = hf(input_ids=X, attention_mask=A.long()).logits
    want = fairseq_roberta_logits({k: v.double() for k, v in ck["model"].items()}, X)
    assert (got - want).abs()[A].max().item() < 1e-9  # measured 2e-14
    # float32 through the adapter
    ours = model.logits(X, A, P)
    assert (ours - want.float()).abs()[A].max().item() < 1e-4  # measured 2e-5


# ---- (d) IMGT regions of known antibodies -----------------------------------------------------
def motif_spans(seq: str) -> dict[str, tuple[int, int]]:
    """Region boundaries from IMGT's conserved residues, without any numbering tool: Cys 23 (the
    first Cys; CDR1 starts 4 residues later), Trp 41 (3rd residue of FR2, in W-[IVF]-R),
    Cys 104 (last residue of FR3, in Y-[YF]-C) and Trp 118 (first of FR4, in W-G-x-G)."""
    c23 = seq.index("C")
    w41 = re.search(r"W[IVF]R", seq).start()
    c104 = re.search(r"Y[YF]C", seq).end() - 1
    w118 = c104 + re.search(r"WG.G", seq[c104:]).start()
    return {"fr1": (0, c23 + 4), "cdr1": (c23 + 4, w41 - 2), "cdr3": (c104 + 1, w118),
            "fr4": (w118, len(seq))}


def test_bnab_regions_match_imgt_anchors():
    bnabs = read_fa("hiv_bnab_heavy.fa")
    doms = regions.number_many([bnabs["VRC01"], bnabs["PGT121"]])
    for dom in doms:
        assert dom.chain == "H" and dom.missing_anchors == []
        assert (dom.start, dom.end) == (0, len(dom.sequence))
        for name, span in motif_spans(dom.sequence).items():
            assert dom.spans[name] == span, name
        assert [dom.spans[r] for r in regions.REGIONS] == sorted(dom.spans.values())
    vrc01, pgt121 = doms
    # VRC01 (IGHV1-2*02-derived; same FR/CDR lengths as the germline's IMGT 25/8/17/8/38)
    assert [vrc01.region(r) for r in ("cdr1", "cdr2", "cdr3")] == ["GYEFIDCT", "LKPRGGAV", "TRGKNCDYNWDFEH"]
    assert len(pgt121.region("cdr3")) == 26  # PGT121's 24-residue (Kabat) CDR-H3 + IMGT 105-106
    assert regions.mask_region(bnabs["VRC01"], "cdr3") == \
        bnabs["VRC01"].replace("TRGKNCDYNWDFEH", "?" * 14)


def test_region_spans_agree_with_anarcism_labels():
    import anarcism
    seqs = list(read_fa("hiv_bnab_heavy.fa").values())[:60]
    doms = regions.number_many(seqs)
    results = anarcism.number_sequences([(str(i), s) for i, s in enumerate(seqs)], workers=1)
    for dom, res in zip(doms, results):
        labels = {n.sequence_index: n.region.lower() for n in res.domains[0].numbering}
        mine = {i: name for name, (a, b) in dom.spans.items() for i in range(a, b)}
        assert mine == labels


def test_regions_of_light_chain_scfv_and_spaced_input():
    vl = "DIQMTQSPSSLSASVGDRVTITCRASQSISSYLNWYQQKPGKAPKLLIYAASSLQSGVPSRFSGSGSGTDFTLTISSLQPEDFATYYCQQSYSTPLTFGQGTKVEIK"
    chain, spans = regions.region_spans(vl)
    assert chain == "K" and vl[slice(*spans["cdr3"])] == "QQSYSTPLT"
    scfv = VH3_23 + "GGGGSGGGGSGGGGS" + vl
    assert regions.number(scfv).chain == "H"
    light = regions.number(scfv, chains="light")
    assert light.chain == "K" and light.region("cdr3") == "QQSYSTPLT"
    spaced = VH3_23[:40] + " \n" + VH3_23[40:]
    masked = regions.mask_region(spaced, ["cdr1", "CDR2"])
    assert masked.count("?") == 16 and " \n" in masked
    # a read without FR1's start: the region is absent, not invented
    with pytest.raises(InputError, match="fr1 is absent"):
        regions.mask_region(VH3_23[30:], "fr1")


# ---- (e) clear errors --------------------------------------------------------------------------
def test_invalid_residues_and_non_antibody(antiberty):
    with pytest.raises(InputError, match="invalid residue '1' at position 5"):
        antiberty.encode("EVQL1ESGG???")
    with pytest.raises(InputError, match="invalid residue 'X'"):  # AntiBERTy has no X token
        antiberty.encode("EVQLXESGG???")
    with pytest.raises(InputError, match="not an antibody variable domain"):
        regions.number("ACDEFGHIKLMNPQRSTVWY" * 5)
    with pytest.raises(InputError, match="invalid residue '1'"):
        regions.number(VH3_23[:20] + "1" + VH3_23[20:])
    with pytest.raises(InputError, match="unknown antibody region"):
        regions.mask_region(VH3_23, "cdr4")
    assert regions.number_many([VH3_23, "MKT" * 40], strict=False)[1] is None


# ---- (f) filling end to end --------------------------------------------------------------------
def test_fill_end_to_end(antiberty, sapiens_vh):
    text = VH3_23[:30] + "????" + VH3_23[34:]
    out = infill.fill(antiberty, text, beam_size=4, top_k=3)[0]
    assert len(out) == 3
    for c in out:
        (fill,) = c.fills
        assert len(fill) == 4 and set(fill) <= STANDARD
        assert c.text == VH3_23[:30] + fill + VH3_23[34:]
    # a CDR masked by region, filled by the heavy-chain Sapiens model, and a ___ gap
    vrc01 = read_fa("hiv_bnab_heavy.fa")["VRC01"]
    gapped = regions.mask_region(vrc01, "cdr2")
    (best,) = infill.fill(sapiens_vh, gapped, beam_size=3, top_k=1)[0]
    assert len(best.fills[0]) == 8 and set(best.fills[0]) <= STANDARD
    (best,) = infill.fill(sapiens_vh, VH3_23[:26] + "___" + VH3_23[29:], gap=3, beam_size=3, top_k=1)[0]
    assert len(best.fills[0]) == 3 and set(best.fills[0]) <= STANDARD


def test_models_command_downloads_and_lists_sapiens(cache, monkeypatch):
    """`infill models download sapiens-vh` fetches + converts into the cache; `infill models`
    then lists it as ready, and `infill run --region` redesigns a CDR-H3 with it."""
    import json

    from click.testing import CliRunner

    from infill_cli.main import main

    monkeypatch.setenv("INFILL_CACHE", str(cache))
    r = CliRunner().invoke(main, ["models", "download", "sapiens-vh"])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("sapiens-vh: ready in ")
    rows = {x["name"]: x for x in map(json.loads, CliRunner().invoke(main, ["models", "--json"])
                                      .output.splitlines())}
    assert rows["sapiens-vh"]["status"] == "ready" and rows["sapiens-vh"]["bytes"] > 0
    vrc01 = next(s for h, s in read_fa("hiv_bnab_heavy.fa").items() if h.startswith("VRC01"))
    r = CliRunner().invoke(main, ["run", "-m", "sapiens-vh", "--region", "cdr3", "--json", "-k", "2",
                                  vrc01])
    assert r.exit_code == 0, r.output
    (row,) = [json.loads(x) for x in r.output.splitlines()]
    c = row["completions"][0]
    (a, b), = c["spans"]
    assert c["text"][:a] == vrc01[:a] and c["text"][b:] == vrc01[b:]     # only CDR-H3 changed
    assert b - a == len(c["fills"][0]) and set(c["fills"][0]) <= set("ACDEFGHIKLMNPQRSTVWY")
    assert "Warning" not in r.stderr
    # a light chain given to the heavy-chain model is redesigned, with a warning that says so
    vl = "DIQMTQSPSSLSASVGDRVTITCRASQSISSYLNWYQQKPGKAPKLLIYAASSLQSGVPSRFSGSGSGTDFTLTISSLQPEDFATYYCQQSYSTPLTFGQGTKVEIK"
    r = CliRunner().invoke(main, ["run", "-m", "sapiens-vh", "--region", "cdr3", "-k", "1", vl])
    assert r.exit_code == 0, r.output
    assert r.stderr.splitlines() == ["Warning: input 1: a kappa light chain, but the model is for "
                                     "heavy chains (use sapiens-vl, or antiberty for both)"]
