"""WordPiece tokens render as words (issue 21): no "I ' ll", no "say'tis", and a continuation
piece glues onto the word before a gap only where the text asks for it."""
import pytest
import torch
from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

import infill
from infill.models.wordpiece import join_wordpieces

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "I", "'", "ll", "go", ".", "The", "cat",
         "##s", "sat", "lazy", "dog", "say", "tis", "so", ",", "and", "don", "t", "you", "lord",
         ";", "step", "-", "dame", "o", "er", "the", "lovers", "heads", "Tis", "gainst", "(",
         ")", "mighty", "wind", "?", "!", "know", "st", "thou", "my", "i", "night", "clock",
         "at", "two", "where", "##fore", "art", "Romeo"]


@pytest.mark.parametrize("tokens, text", [
    (["I", "'", "ll", "go", "."], "I'll go."),
    (["don", "'", "t", "you", "say", "'", "tis", "so", "?"], "don't you say 'tis so?"),
    (["'", "Tis", "so", ";", "'", "gainst", "the", "wind", "!"], "'Tis so; 'gainst the wind!"),
    (["a", "step", "-", "dame", "o", "'", "er", "the", "lovers", "'", "heads"],
     "a step-dame o'er the lovers' heads"),
    (["i", "'", "the", "night", ",", "know", "'", "st", "thou"], "i' the night, know'st thou"),
    (["(", "mighty", ")", "wind", "at", "two", "o", "'", "clock"], "(mighty) wind at two o'clock"),
    (["where", "##fore", "art", "thou", "Romeo", "?"], "wherefore art thou Romeo?"),
    (["##s", "cat"], "s cat"),
    ([], ""),
])
def test_join_wordpieces(tokens, text):
    assert join_wordpieces(tokens) == text


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    d = tmp_path_factory.mktemp("wp")
    (d / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    tok = BertTokenizerFast(vocab=str(d / "vocab.txt"), do_lower_case=False)
    torch.manual_seed(0)
    model = BertForMaskedLM(BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1,
                                       num_attention_heads=2, intermediate_size=32,
                                       max_position_embeddings=64))
    model.save_pretrained(str(d))
    tok.save_pretrained(str(d))
    return infill.load_model(str(d), device="cpu")       # through the real loader


@pytest.mark.parametrize("text", ["I'll go.", "don't you say 'tis so?", "'Tis so; 'gainst the wind!",
                                  "the lovers' heads", "know'st thou, my lord?",
                                  "wherefore art thou Romeo?", "the step-dame (mighty) wind."])
def test_detokenize_round_trips_english_text(lm, text):
    assert lm._wordpiece
    assert lm.detokenize(lm.tokenize(text)) == text


def _render(lm, text, gap, pieces):
    enc = lm.encode(text, gap)
    out = lm.render(enc, [[lm.token_to_id(p) for p in pieces]])
    (s, e), = out.spans
    assert out.text[s:e] == out.fills[0]
    return out.text, out.fills[0]


def test_fills_render_as_words(lm):
    assert _render(lm, "I ___ go.", 2, ["'", "ll"]) == ("I'll go.", "'ll")
    assert _render(lm, "I ___ go.", 2, ["don", "t"]) == ("I don t go.", "don t")
    assert _render(lm, "my ___ go.", 1, ["lord"]) == ("my lord go.", "lord")
    assert _render(lm, "my ___ lord", 1, [","]) == ("my, lord", ",")
    assert _render(lm, "say ___ so", 2, ["'", "tis"]) == ("say 'tis so", "'tis")
    # a continuation piece after a space stays a separate word; after a glued marker it joins
    assert _render(lm, "The ___ sat.", 1, ["##s"]) == ("The s sat.", "s")
    assert _render(lm, "The cat___ sat.", 1, ["##s"]) == ("The cats sat.", "s")
    assert _render(lm, "where___ art thou", 1, ["##fore"]) == ("wherefore art thou", "fore")


def test_fill_through_the_api_renders_every_completion_as_words(lm):
    out = infill.fill(lm, "I ___ go, my lord.", gap=2, top_k=5, beam_size=5)[0]
    for c in out:
        assert " ' " not in c.text and c.text.startswith("I") and c.text.endswith("go, my lord.")
        s, e = c.spans[0]
        assert c.text[s:e] == c.fills[0]
