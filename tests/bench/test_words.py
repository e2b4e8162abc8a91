"""One-word gaps (infill.bench.words): which words, which lines, and the scoring."""
import torch
from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

import infill
from infill.bench.words import candidate_words, score_word_gaps, word_gaps, word_pieces

LINES = ["To be, or not to be, that is the question:", "I'll go -- step-dame!", "O'er",
         "Whether 'tis nobler in the mind to suffer", "", "And by opposing end them."]


def test_candidate_words_are_letters_only_with_edge_punctuation_removed():
    assert candidate_words(LINES[0]) == [(0, "To"), (3, "be"), (7, "or"), (10, "not"),
                                         (14, "to"), (17, "be"), (21, "that"), (26, "is"),
                                         (29, "the"), (33, "question")]
    assert candidate_words(LINES[1]) == [(5, "go")]       # I'll, --, step-dame! are not words
    assert candidate_words(LINES[2]) == [] and candidate_words("") == []
    assert candidate_words("'tis (sweet) ROMEO.") == [(1, "tis"), (6, "sweet"), (13, "ROMEO")]


def test_word_gaps_are_seeded_and_a_lines_word_does_not_depend_on_the_others():
    every = word_gaps(LINES, None, seed=0)
    assert [g.line for g in every] == [0, 1, 3, 5]
    for g in every:
        at = g.text.index("___")
        assert g.text[:at] + g.word + g.text[at + 3:] == LINES[g.line]
    assert word_gaps(LINES, None, seed=0) == every and word_gaps(LINES, None, seed=1) != every
    two = word_gaps(LINES, 2, seed=0)
    assert len(two) == 2 and all(g in every for g in two)


def _tiny(tmp_path):
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "To", "be", ",", "or", "not", "to",
             "that", "is", "the", "question", ":", "go", "And", "by", "opp", "##os", "##ing",
             "end", "them", ".", "mind", "suffer", "in", "Whether", "'", "tis", "no", "##bler"]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    torch.manual_seed(0)
    BertForMaskedLM(BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1,
                               num_attention_heads=2, intermediate_size=32,
                               max_position_embeddings=64)).save_pretrained(str(tmp_path))
    BertTokenizerFast(vocab=str(tmp_path / "vocab.txt"), do_lower_case=False).save_pretrained(
        str(tmp_path))
    return infill.load_model(str(tmp_path), device="cpu")


def test_score_word_gaps_fills_each_word_with_its_own_number_of_pieces(tmp_path):
    lm = _tiny(tmp_path)
    assert word_pieces(lm, "opposing") == 3 and word_pieces(lm, "question") == 1
    gaps = word_gaps(LINES, None, seed=3)
    res = score_word_gaps(lm, gaps, "standard", beam=5)
    assert res["n"] == len(gaps) == len(res["rows"])
    hit1 = hit5 = 0
    for g, row in zip(gaps, res["rows"]):
        k = word_pieces(lm, g.word)
        ref = [c.fills[0] for c in infill.fill(lm, g.text, gap=k, top_k=5, scorer="standard",
                                               order="left-to-right", beam_size=5)[0]]
        assert row == {"line": g.line, "word": g.word, "pieces": k, "fills": ref}
        hit1 += ref[:1] == [g.word]
        hit5 += g.word in ref
    assert res["top1"] == 100 * hit1 / len(gaps) and res["top5"] == 100 * hit5 / len(gaps)
    assert res["one_piece"] == 100 * sum(r["pieces"] == 1 for r in res["rows"]) / len(gaps)
