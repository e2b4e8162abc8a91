"""RoBERTa (byte-level BPE, ``<mask>``) and DistilBERT (WordPiece) through the generic HF adapter.

Tiny tokenizers and models are built offline here, saved with ``save_pretrained`` and loaded back
through :func:`infill.load_model`. Reference scores come from the HF model's own forward pass.
"""
from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner

import infill
from infill_cli.main import main as cli_main
from infill.models.hf import HFMaskedLM

SENTENCES = [
    "The cat sat on the mat.", "The dog sat on the log.", "A big cat sat on a big mat.",
    "An unbelievable story: unstoppable, unable, unbelievable!", "The bird flew over the house.",
    "Birds and cats are able to sit.", "Naïve café owners say hello.",
]


# ---- fixtures ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def roberta(tmp_path_factory):
    """(adapter loaded from disk, HF model, tokenizer) of a tiny random RoBERTa."""
    from tokenizers import AddedToken, ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaForMaskedLM, RobertaTokenizerFast

    d = tmp_path_factory.mktemp("roberta")
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(SENTENCES, vocab_size=320, min_frequency=1,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.save_model(str(d))
    # As in roberta-base, <mask> swallows the space before it (lstrip): "The <mask> sat" has
    # one token for " cat".
    tok = RobertaTokenizerFast(vocab=str(d / "vocab.json"), merges=str(d / "merges.txt"),
                               mask_token=AddedToken("<mask>", lstrip=True, rstrip=False))
    cfg = RobertaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64, max_position_embeddings=64,
                        pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                        eos_token_id=tok.eos_token_id, type_vocab_size=1)
    torch.manual_seed(0)
    model = RobertaForMaskedLM(cfg)
    with torch.no_grad():
        model.lm_head.bias.normal_(0, 2.0)  # a spread-out output distribution
    model.eval()
    out = d / "model"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return infill.load_model(str(out), device="cpu"), model, tok, out


WORDPIECE = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "dog", "sat", "on", "mat",
             "a", "big", "un", "##believ", "##able", "able", "##stop", "##p", ".", ",", "!",
             "bird", "flew", "over", "house", "story"]


@pytest.fixture(scope="module")
def distilbert(tmp_path_factory):
    from transformers import DistilBertConfig, DistilBertForMaskedLM, DistilBertTokenizerFast

    d = tmp_path_factory.mktemp("distilbert")
    tok = DistilBertTokenizerFast(vocab={t: i for i, t in enumerate(WORDPIECE)})
    cfg = DistilBertConfig(vocab_size=len(WORDPIECE), dim=32, n_layers=2, n_heads=4,
                           hidden_dim=64, max_position_embeddings=64, pad_token_id=0)
    torch.manual_seed(0)
    model = DistilBertForMaskedLM(cfg)
    with torch.no_grad():
        model.vocab_projector.bias.normal_(0, 2.0)
    model.eval()
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return infill.load_model(str(d), device="cpu"), model, tok, d


def ids_of(tok, text: str) -> list[int]:
    return tok(text, add_special_tokens=False)["input_ids"]


def hf_log_probs(model, ids: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0], -1)


# ---- loading ---------------------------------------------------------------------------------------
def test_roberta_loads_through_load_model(roberta):
    lm, model, tok, _ = roberta
    assert isinstance(lm, HFMaskedLM)
    assert lm.mask_id == tok.mask_token_id and lm.id_to_token(lm.mask_id) == "<mask>"
    assert lm.vocab_size == model.config.vocab_size
    assert lm.special_ids == frozenset(tok.all_special_ids)
    assert lm.max_length == 64 - (tok.pad_token_id + 1)  # RoBERTa positions start past pad
    assert lm.token_to_id("<mask>") == lm.mask_id and lm.token_to_id("Ġcat") == tok.convert_tokens_to_ids("Ġcat")


def test_distilbert_loads_through_load_model(distilbert):
    lm, model, tok, _ = distilbert
    assert isinstance(lm, HFMaskedLM)
    assert lm.mask_id == WORDPIECE.index("[MASK]") and lm.vocab_size == len(WORDPIECE)
    assert lm.special_ids == frozenset(range(5))


# ---- tokenization, gaps, rendering -------------------------------------------------------------------
@pytest.mark.parametrize("text", ["The cat sat on the mat.", "Unseen wörds: naïve café — 東京!",
                                  "tabs\tand  double  spaces", "unbelievable, unstoppable"])
def test_roberta_detokenize_roundtrip(roberta, text):
    lm = roberta[0]
    assert lm.detokenize(lm.tokenize(text)) == text


def test_distilbert_detokenize_roundtrip(distilbert):
    lm = distilbert[0]
    assert lm.detokenize(lm.tokenize("The big cat sat on the mat.")) == "the big cat sat on the mat."
    assert lm.detokenize(lm.tokenize("unbelievable")) == "unbelievable"


def test_roberta_gap_is_counted_in_model_tokens(roberta):
    lm, _, tok, _ = roberta
    enc = lm.encode("The ___ sat on the mat.", gap=3)
    expect = [tok.bos_token_id] + ids_of(tok, "The") + [lm.mask_id] * 3 + \
        ids_of(tok, " sat on the mat.") + [tok.eos_token_id]
    assert enc.input_ids == expect
    assert enc.gaps == [[2, 3, 4]]
    inner = lm.encode("un___able", gap=2)
    assert inner.input_ids == [tok.bos_token_id] + ids_of(tok, "un") + [lm.mask_id] * 2 + \
        ids_of(tok, "able") + [tok.eos_token_id]


@pytest.mark.parametrize("text,fill,expected", [
    ("The ___ sat on the mat.", " cat", "The cat sat on the mat."),        # word-initial gap
    ("The ___ sat on the mat.", " big cat", "The big cat sat on the mat."),  # several words
    ("un___able", "believ", "unbelievable"),                               # inside a word
    ("un___", "stoppable", "unstoppable"),                                 # word end, text end
    ("___ cat sat.", "The", "The cat sat."),                               # text start
    ("The cat ___", " sat", "The cat sat"),
])
def test_roberta_fills_render_into_text(roberta, text, fill, expected):
    lm, _, tok, _ = roberta
    fill_ids = ids_of(tok, fill)
    enc = lm.encode(text, gap=len(fill_ids))
    rendered, fills, spans, _ = lm.render(enc, [fill_ids])
    assert rendered == expected
    assert fills == [fill.strip()]
    assert [rendered[a:b] for a, b in spans] == fills      # the span marks the fill itself
    filled = list(enc.input_ids)
    for p, t in zip(enc.gaps[0], fill_ids):
        filled[p] = t
    assert tok.decode(filled, skip_special_tokens=True) == expected  # = the model's own reading


@pytest.mark.parametrize("text,fill,expected", [
    ("The ___ sat on the mat.", ["cat"], "The cat sat on the mat."),
    ("un___able", ["##believ"], "unbelievable"),
    ("the big ___ ___ on the mat.", ["cat"], None),
])
def test_distilbert_fills_render_into_text(distilbert, text, fill, expected):
    lm = distilbert[0]
    if expected is None:  # two gaps, one token each
        enc = lm.encode(text, gap=1)
        out, fills, spans, _ = lm.render(enc, [[WORDPIECE.index("cat")], [WORDPIECE.index("sat")]])
        assert (out, fills) == ("the big cat sat on the mat.", ["cat", "sat"])
        return
    enc = lm.encode(text, gap=len(fill))
    out, fills, spans, _ = lm.render(enc, [[WORDPIECE.index(t) for t in fill]])
    assert out == expected


# ---- the engine's top result vs brute force -------------------------------------------------------------
def brute_force_pair(model, ids: list[int], gap: list[int], allowed: list[int], mask_id: int,
                     hcb: bool):
    """argmax over allowed (w1, w2) of the left-to-right score, from the HF model's forward."""
    g1, g2 = gap
    lp1 = hf_log_probs(model, ids)[g1]
    rows = torch.tensor([ids] * len(allowed))
    rows[:, g1] = torch.tensor(allowed)
    with torch.no_grad():
        lp2 = torch.log_softmax(model(input_ids=rows).logits[:, g2], -1)  # [len(allowed), V]
    a = torch.tensor(allowed)
    scores = lp1[a][:, None] + lp2[:, a]
    if hcb:
        scores = scores - lp1[mask_id] - lp2[:, mask_id][:, None]
    flat = int(scores.argmax())
    i, j = divmod(flat, len(allowed))
    return (allowed[i], allowed[j]), float(scores[i, j])


@pytest.mark.parametrize("family", ["roberta", "distilbert"])
@pytest.mark.parametrize("scorer", ["hcb", "standard"])
def test_top_completion_equals_brute_force(family, scorer, request):
    lm, model, tok, _ = request.getfixturevalue(family)
    text = "The ___ sat on the mat." if family == "roberta" else "the ___ on the mat."
    enc = lm.encode(text, gap=2)
    allowed = [i for i in range(lm.vocab_size) if i not in lm.special_ids]
    best, best_score = brute_force_pair(model, enc.input_ids, enc.gaps[0], allowed, lm.mask_id,
                                        hcb=scorer == "hcb")
    hyps = infill.decode(lm, enc.input_ids, scorer=scorer, beam_size=len(allowed))
    assert hyps[0].tokens == best
    assert hyps[0].score == pytest.approx(best_score, abs=1e-4)
    top = infill.fill(lm, text, gap=2, scorer=scorer, beam_size=len(allowed), top_k=1)[0][0]
    assert top.tokens == best
    assert top.text == lm.render(enc, [list(best)])[0]


@pytest.mark.parametrize("family", ["roberta", "distilbert"])
def test_single_token_gap_is_the_argmax(family, request):
    lm, model, tok, _ = request.getfixturevalue(family)
    text = "A big ___ sat." if family == "roberta" else "a big ___ sat."
    enc = lm.encode(text, gap=1)
    lp = hf_log_probs(model, enc.input_ids)[enc.gaps[0][0]]
    lp[list(lm.special_ids)] = -float("inf")
    for scorer in ("hcb", "standard"):
        for order in ("left-to-right", "best-to-worst"):
            top = infill.fill(lm, text, scorer=scorer, order=order, beam_size=3, top_k=3)[0]
            assert [c.tokens[0] for c in top] == lp.topk(3).indices.tolist()


def test_cli_run_on_roberta_directory(roberta):
    lm, _, tok, path = roberta
    res = CliRunner().invoke(cli_main, ["run", "--model", str(path), "--device", "cpu", "--json",
                                        "--gap", "2", "--top-k", "3", "un___able and The ___ sat."])
    assert res.exit_code == 0, res.output
    row = json.loads(res.output.strip().splitlines()[0])
    assert len(row["completions"]) == 3
    for c in row["completions"]:
        a, b = c["fills"]
        assert c["text"].startswith("un") and c["text"].endswith(" sat.")
        assert len(c["tokens"]) == 4
        enc = lm.encode("un___able and The ___ sat.", gap=2)
        filled = list(enc.input_ids)
        for p, t in zip(enc.positions, c["tokens"]):
            filled[p] = t
        # the rendered text is what the model read, up to the spaces the user typed
        assert c["text"].replace(" ", "") == tok.decode(filled, skip_special_tokens=True).replace(" ", "")


def test_bpe_mask_without_lstrip_keeps_multi_token_gaps_contiguous(roberta, tmp_path):
    """A byte-level BPE tokenizer whose <mask> does not swallow spaces (transformers 5 builds
    RobertaTokenizerFast that way unless told otherwise): no stray "Ġ" token inside a gap."""
    from transformers import RobertaTokenizerFast
    _, model, tok, path = roberta
    plain = RobertaTokenizerFast(vocab=str(path.parent / "vocab.json"),
                                 merges=str(path.parent / "merges.txt"))
    assert not plain.added_tokens_decoder[plain.mask_token_id].lstrip
    out = tmp_path / "plain"
    model.save_pretrained(out)
    plain.save_pretrained(out)
    lm = infill.load_model(str(out), device="cpu")
    enc = lm.encode("un___able", gap=3)
    assert enc.input_ids == [tok.bos_token_id] + ids_of(tok, "un") + [lm.mask_id] * 3 + \
        ids_of(tok, "able") + [tok.eos_token_id]
    fill_ids = ids_of(tok, "believ")
    enc = lm.encode("un___able", gap=len(fill_ids))
    assert lm.render(enc, [fill_ids])[:3] == ("unbelievable", ["believ"], [(2, 8)])
