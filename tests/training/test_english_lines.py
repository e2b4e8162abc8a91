"""The english family's data: distinct lines split by line, a word-level WordPiece vocabulary,
whole-word masking and length-bucketed batches (issue 21)."""
import json
import re
import shutil
from collections import Counter

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from infill.data.examples import distinct_lines, english_examples, line_key
from infill.data.splits import split_indices
from infill.errors import ConfigError
from infill.training.english import EnglishFamily
from infill.training.loop import TrainConfig, Trainer, draw_corruption, train
from infill_cli.main import main

COMMON = ["the", "and", "my", "lord", "thou", "love", "good", "king", "sweet", "night"]
RARE = ["unkennel", "bespice", "chapless", "fustilarian", "impeticos", "mumbudget",
        "ratsbane", "smilet", "tortive", "unwappered", "vastidity", "wappened"]


def _corpus_lines(n=400, seed=0):
    """Lines of common words (each hundreds of times) with one rare word (a few times each)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        words = [COMMON[j] for j in rng.integers(len(COMMON), size=6)]
        words.insert(int(rng.integers(7)), RARE[i % len(RARE)])
        out.append(" ".join(words).capitalize() + rng.choice([".", ",", "!", "?"]))
    return out


@pytest.fixture
def corpus(tmp_path):
    p = tmp_path / "c.txt"
    lines = _corpus_lines()
    # speaker headings, a repeat differing in case and punctuation, a blank line
    extra = ["First Citizen:", "KING RICHARD", "", lines[0].upper().rstrip(".,!?") + ";"]
    p.write_text("\n".join(lines + extra) + "\n", encoding="utf-8")
    return p


def test_distinct_lines_drop_headings_and_repeats_in_corpus_order():
    lines = ["First Citizen:", "Before we proceed any further, hear me speak.", "All:",
             "Speak, speak.", "ROMEO", "  Speak; speak!  ", "before we proceed any further hear me speak",
             "Go on:", "Speak, speak, speak."]
    assert distinct_lines(lines) == ["Before we proceed any further, hear me speak.",
                                     "Speak, speak.", "Go on:", "Speak, speak, speak."]
    assert line_key("O'er the hills, ROMEO!") == "o er the hills romeo"


def test_one_example_per_distinct_line_and_a_disjoint_deterministic_split(corpus, tmp_path):
    built = english_examples(corpus, 32, 200, tmp_path / "tok")
    lines = distinct_lines(corpus.read_text().splitlines())
    assert len(lines) == 400 and len(built.examples) == 400    # the 4 extra lines are dropped
    t = built.tokenizer
    for ex, line in zip(built.examples, lines):
        assert ex[0] == t.cls_token_id and ex[-1] == t.sep_token_id
        assert ex[1:-1] == t(line, add_special_tokens=False)["input_ids"][:30]
    a, b = split_indices(400, 0), split_indices(400, 0)
    assert a == b and split_indices(400, 1) != a
    parts = [set(a[k]) for k in ("train", "validation", "test")]
    assert sum(map(len, parts)) == 400 and set.union(*parts) == set(range(400))
    keys = {k: {line_key(lines[i]) for i in a[k]} for k in a}
    assert not keys["test"] & keys["train"] and not keys["validation"] & keys["train"]


def test_common_words_are_one_piece_rare_words_several(corpus, tmp_path):
    t = english_examples(corpus, 32, 120, tmp_path / "tok").tokenizer
    counts = Counter(w.lower() for line in distinct_lines(corpus.read_text().splitlines())
                     for w in re.findall(r"[A-Za-z]+", line))
    assert all(counts[w] > 200 for w in COMMON) and all(counts[w] < 40 for w in RARE)
    assert all(len(t.tokenize(w)) == 1 for w in COMMON)
    assert sum(len(t.tokenize(w)) > 1 for w in RARE) >= len(RARE) // 2
    assert t.tokenize("Lord") != ["[UNK]"] and t.tokenize("lord") == ["lord"]   # cased


def _family(corpus, tmp_path, vocab=120):
    fam = EnglishFamily(layers=1, hidden=16, heads=2, ff=32, max_length=32, vocab_size=vocab)
    return fam, fam.load_examples(corpus, tmp_path)


def _words(fam, ids):
    """Word index of every maskable position (pieces of one word share it)."""
    x = torch.tensor(ids)
    can, cont = fam.maskable(x).tolist(), fam.continues_word(x).tolist()
    word, out = -1, []
    for c, k in zip(can, cont):
        if c and not (k and out and out[-1] is not None):
            word += 1
        out.append(word if c else None)
    return out


def test_whole_word_masking_labels_every_piece_of_a_chosen_word(corpus, tmp_path):
    fam, examples = _family(corpus, tmp_path)
    multi = sum(any(fam.continues_word(torch.tensor(x)).tolist()) for x in examples)
    assert multi > 100                     # plenty of words are several pieces
    c = TrainConfig(out=str(tmp_path), steps=1, whole_word=True, mask_rate=0.3)
    chosen = total = 0
    for i, ids in enumerate(examples):
        inp, lab = draw_corruption(ids, fam, c, 0, i)
        assert (inp, lab) == draw_corruption(ids, fam, c, 0, i)
        words = _words(fam, ids)
        by_word = {}
        for p, w in enumerate(words):
            if w is not None:
                by_word.setdefault(w, []).append(p)
        picked = [w for w, ps in by_word.items() if lab[ps[0]] != -100]
        assert picked, "at least one word per example"
        for w, ps in by_word.items():
            labeled = [lab[p] != -100 for p in ps]
            assert all(labeled) or not any(labeled)            # a word is all in or all out
            if all(labeled):
                assert [lab[p] for p in ps] == [ids[p] for p in ps]
                kinds = {"mask" if inp[p] == fam.mask_id else "kept" if inp[p] == ids[p]
                         else "random" for p in ps}
                assert len(kinds) == 1 or kinds == {"random", "kept"}  # one decision per word
        assert all(lab[p] == -100 for p, w in enumerate(words) if w is None)
        chosen += len(picked)
        total += len(by_word)
    assert 0.27 < chosen / total < 0.36      # the rate is per word (+ the at-least-one rule)


def test_whole_word_masking_is_for_families_with_words(tmp_path):
    from infill.training.greek import GreekFamily
    fam = GreekFamily(layers=1, hidden=16, heads=2, ff=32, max_length=32, conv_kernel=0)
    with pytest.raises(ConfigError, match="no words"):
        draw_corruption([fam.start_id if hasattr(fam, "start_id") else 2, 5, 6, 7], fam,
                        TrainConfig(out=str(tmp_path), steps=1, whole_word=True), 0, 0)
    with pytest.raises(ConfigError, match="choose one"):
        TrainConfig(out=str(tmp_path), steps=1, whole_word=True, span=3).validate()


def test_bucketed_epochs_cover_the_training_set_once_in_similar_lengths(corpus, tmp_path):
    fam = EnglishFamily(layers=1, hidden=16, heads=2, ff=32, max_length=32, vocab_size=120)
    c = TrainConfig(out=str(tmp_path / "o"), steps=100, batch_size=4, bucket=True,
                    whole_word=True, progress=False)
    tr = Trainer(fam, corpus, c)
    order = np.random.default_rng([0, 104_729, 0]).permutation(tr.train_idx)
    batches = tr._bucketed(0, order, np.random.default_rng([0, 104_729, 0]))
    assert len(batches) == tr.per_epoch
    flat = sorted(i for b in batches for i in b)
    assert flat == sorted(tr.train_idx)
    spread = np.mean([max(len(tr.examples[i]) for i in b) - min(len(tr.examples[i]) for i in b)
                      for b in batches])
    plain = [order[k:k + 4] for k in range(0, len(order), 4)]
    spread_plain = np.mean([max(len(tr.examples[i]) for i in b) - min(len(tr.examples[i])
                                                                        for i in b) for b in plain])
    assert spread < spread_plain / 2


def test_whole_word_bucketed_run_resumes_exactly(corpus, tmp_path):
    opts = dict(steps=8, batch_size=8, lr=3e-3, warmup=2, eval_every=4, checkpoint_every=4,
                progress=False, max_val_examples=16, whole_word=True, bucket=True,
                mask_rate=0.25)
    small = dict(layers=1, hidden=16, heads=2, ff=32, max_length=32, vocab_size=120)
    train(EnglishFamily(**small), corpus, TrainConfig(out=str(tmp_path / "full"), **opts))
    # the same vocabulary (the WordPiece trainer breaks ties between equal merges in hash
    # order, so two trainings may differ; a run reuses the one in its folder)
    (tmp_path / "part" / "tokenizer").mkdir(parents=True)
    shutil.copy(tmp_path / "full" / "tokenizer" / "vocab.txt", tmp_path / "part" / "tokenizer")
    train(EnglishFamily(**small), corpus, TrainConfig(out=str(tmp_path / "part"), stop_after=4,
                                                      **opts))
    train(EnglishFamily(**small), corpus, TrainConfig(out=str(tmp_path / "part"), resume=True,
                                                      **opts))
    a = torch.load(tmp_path / "full" / "checkpoint.pt", weights_only=True)["model"]
    b = torch.load(tmp_path / "part" / "checkpoint.pt", weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_cli_trains_english_with_whole_words_and_buckets(corpus, tmp_path):
    out = tmp_path / "m"
    r = CliRunner().invoke(main, ["train", "english", str(corpus), "--out", str(out),
                                  "--steps", "3", "--batch-size", "8", "--layers", "1",
                                  "--hidden", "16", "--heads", "2", "--max-length", "32",
                                  "--vocab-size", "120", "--whole-word", "--bucket",
                                  "--mask-rate", "0.25", "--no-progress", "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads((out / "train_info.json").read_text())
    assert info["config"]["whole_word"] and info["config"]["bucket"]
    assert info["model"]["unit"] == "lines" and info["model"]["vocab_size"] == 120
    assert json.loads((out / "split.json").read_text())["n_examples"] == 400


def test_the_named_english_corpus_is_the_plays_then_tiny_shakespeare(corpus, tmp_path):
    """`english` names two files read one after another (what builtin:english was trained on):
    a run on it without a CORPUS records both, and its held-out split is found again from the
    name, from the record, and equals a run's on the two files concatenated."""
    from infill.data.splits import heldout

    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    root = tmp_path / "data"
    (root / "english").mkdir(parents=True)
    (root / "english" / "shakespeare_plays.txt").write_text("".join(lines[:250]), encoding="utf-8")
    (root / "english" / "tinyshakespeare.txt").write_text("".join(lines[250:]), encoding="utf-8")
    out = tmp_path / "m"
    r = CliRunner().invoke(main, ["train", "english", "--data-dir", str(root), "--out", str(out),
                                  "--steps", "2", "--batch-size", "8", "--layers", "1",
                                  "--hidden", "16", "--heads", "2", "--max-length", "32",
                                  "--vocab-size", "120", "--no-progress"])
    assert r.exit_code == 0, r.output
    info = json.loads((out / "train_info.json").read_text())
    assert info["corpus"] == [str(root / "english" / "shakespeare_plays.txt"),
                              str(root / "english" / "tinyshakespeare.txt")]
    by_name = heldout(out, corpus="english", data=root)
    by_record = heldout(out)
    whole = english_examples(corpus, 32, 120, out / "tokenizer")
    assert by_name.examples == by_record.examples == whole.examples
    assert by_name.parts["test"] == json.loads((out / "split.json").read_text())["test"]
    bench = ["bench", "english", "--data-dir", str(root), "--model", str(out), "--split", "test",
             "--examples", "2", "--gap-lengths", "1", "--methods", "hcb-l2r", "--no-progress"]
    r = CliRunner().invoke(main, bench + ["--out", str(tmp_path / "b1")])
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in (tmp_path / "b1" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and {row["example_id"] for row in rows} <= set(by_name.parts["test"])
    (root / "english" / "tinyshakespeare.txt").unlink()
    r = CliRunner().invoke(main, bench + ["--out", str(tmp_path / "b2")])
    assert r.exit_code == 2 and "tinyshakespeare.txt" in r.output, r.output
