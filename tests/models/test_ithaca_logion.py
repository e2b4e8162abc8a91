"""Logion-style Greek BERTs (a WordPiece BERT trained on Greek, loaded with ``from_pretrained``),
beside Ithaca: a tiny one is made here (tokenizers' WordPiece trainer on Greek lines +
BertForMaskedLM with random weights), saved, and loaded through :func:`infill.load_model`.

What docs/MODELS.md says of such models is checked: a gap is counted in word pieces (``___`` =
``--gap`` word pieces, or the tokenizer's own ``[MASK]``); ``?`` and Leiden sigla are ordinary
text to them (the CLI converts Leiden sigla for character models only) and a note says so."""
from __future__ import annotations

import pytest
import torch
from click.testing import CliRunner

import infill
from infill_cli.main import main

LINES = ["ἔδοξεν τῇ βουλῇ καὶ τῷ δήμῳ", "ἐπειδὴ ἀνὴρ ἀγαθός ἐστιν περὶ τὸν δῆμον",
         "ὁ δῆμος ὁ Ἀθηναίων", "θεοί. ἔδοξεν τῇ βουλῇ", "ψήφισμα τοῦ δήμου τῶν Ἀθηναίων",
         "καὶ λέγει καὶ πράττει ὅ τι δύναται ἀγαθόν", "ἀνέθηκεν τῇ Ἀθηναίᾳ δεκάτην",
         "τί; ποῦ? [ἔδοξεν] τῇ βουλῇ."] * 4
TEXT = "ἐπειδὴ ἀνὴρ ___ ἐστιν περὶ τὸν δῆμον"


@pytest.fixture(scope="module")
def greek_bert(tmp_path_factory) -> str:
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("greek_bert")
    trainer = BertWordPieceTokenizer(lowercase=True, strip_accents=True)
    trainer.train_from_iterator(LINES, vocab_size=120, min_frequency=1)
    trainer.save_model(str(folder))
    vocab = (folder / "vocab.txt").read_text(encoding="utf-8").split()
    tok = BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True,
                            strip_accents=True)
    config = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
    model = BertForMaskedLM(config)
    with torch.no_grad():
        model.cls.predictions.decoder.weight.mul_(8.0)        # far from uniform
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def lm(greek_bert):
    threads = torch.get_num_threads()   # one thread here; the rest of the suite keeps its own
    torch.set_num_threads(1)
    yield infill.load_model(greek_bert, device="cpu")
    torch.set_num_threads(threads)


def by_hand(greek_bert, ids: list[int], positions: list[int]) -> torch.Tensor:
    """log q straight from transformers."""
    from transformers import BertForMaskedLM
    net = BertForMaskedLM.from_pretrained(greek_bert).eval()
    with torch.no_grad():
        return torch.log_softmax(net(input_ids=torch.tensor([ids])).logits[0, positions], -1)


def test_a_gap_is_counted_in_word_pieces(lm, greek_bert):
    assert lm.unit == "tokens" and lm.tokenizer.mask_token == "[MASK]"
    enc = lm.encode(TEXT, gap=2)
    assert [len(g) for g in enc.gaps] == [2]                 # two word pieces, not characters
    pieces = lm.tokenizer.convert_ids_to_tokens(enc.input_ids)
    assert pieces[0] == "[CLS]" and pieces[-1] == "[SEP]" and pieces.count("[MASK]") == 2
    assert lm.detokenize(enc.input_ids) == "επειδη ανηρ εστιν περι τον δημον"   # no accents
    best = infill.fill(lm, TEXT, gap=1, top_k=3, config=infill.DecodeConfig(scorer="standard"))[0]
    q = by_hand(greek_bert, lm.encode(TEXT, gap=1).input_ids, lm.encode(TEXT, gap=1).positions)[0]
    allowed = lm.allowed_mask()
    top = torch.where(allowed, q, -torch.inf).topk(3)
    assert [c.tokens[0] for c in best] == top.indices.tolist()
    for c, v in zip(best, top.values.tolist()):
        assert c.score == pytest.approx(v, abs=1e-5)
        assert c.text.startswith("ἐπειδὴ ἀνὴρ") and c.text.endswith(" ἐστιν περὶ τὸν δῆμον")


def test_the_tokenizers_own_mask_is_a_one_piece_gap(lm):
    enc = lm.encode("ὁ δῆμος ὁ [MASK]", gap=3)
    assert [len(g) for g in enc.gaps] == [1]


def test_question_marks_and_leiden_sigla_are_text_to_a_word_piece_model(lm):
    """'?' is one character to restore only for character models: here it is a piece of text
    (and the input needs ___ or [MASK]); the CLI leaves Leiden sigla as typed and says so."""
    enc = lm.encode("ἀνὴρ ?? ___ ἐστιν", gap=1)
    assert [len(g) for g in enc.gaps] == [1]
    assert lm.tokenizer.convert_ids_to_tokens(enc.input_ids).count("?") == 2
    assert any("word pieces" in n for n in enc.notes)
    with pytest.raises(infill.InputError, match="no gap marker"):
        lm.encode("ἀνὴρ ?? ἐστιν", gap=1)
    r = CliRunner().invoke(main, ["run", "-m", lm.name, "--json", "ἀνὴρ [...] ___ ἐστιν"])
    assert r.exit_code == 0, r.output
    import json
    out = json.loads(r.output.splitlines()[-1])
    assert out["completions"][0]["text"].startswith("ἀνὴρ [...] ")
    assert any("Leiden" in n and "___" in n for n in out["notes"])


def test_an_english_question_mark_gets_no_note(lm):
    assert lm.encode("to be or ___ to be?", gap=1).notes == []
