"""The corpus memory (infill/models/memory.py): counts against brute force, the mixture against
its definition, and a model trained by `infill train english` that recites its training lines."""
import json
import shutil

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import infill
from infill.errors import ModelLoadError
from infill.models.memory import (MEMORY_FILE, build_memory, load_memory, outside_class,
                                  token_classes)
from infill_cli.main import main

PAD, CLS, SEP, MASK = 0, 1, 2, 3
SPECIAL = frozenset({PAD, CLS, SEP, MASK})
TOKENS = ["[PAD]", "[CLS]", "[SEP]", "[MASK]", "a", "A", "b", "c", "d", ",", ".", "e"]
V = len(TOKENS)


def _examples(rng, n=60):
    return [[CLS] + list(rng.integers(4, V, size=int(rng.integers(1, 8)))) + [SEP]
            for _ in range(n)]


def _brute_counts(examples, classes, row, p, k):
    """Counts of the token at every training position whose class context equals row's at p."""
    out_cls = outside_class(len(classes))

    def ctx(seq, t):
        return tuple(classes[seq[j]] if 0 <= j < len(seq) else out_cls
                     for j in [*range(t - k, t), *range(t + 1, t + k + 1)])

    want = ctx(row, p)
    counts = np.zeros(V)
    for ex in examples:
        for t, tok in enumerate(ex):
            if tok not in SPECIAL and ctx(ex, t) == want:
                counts[tok] += 1
    return counts


def test_counts_equal_brute_force_on_every_position_and_level():
    rng = np.random.default_rng(0)
    classes = token_classes(TOKENS, SPECIAL, V, PAD)
    assert classes[TOKENS.index("A")] == TOKENS.index("a")                 # case folded
    assert classes[TOKENS.index(",")] == classes[TOKENS.index(".")] == V   # punctuation
    examples = _examples(rng)
    memory = build_memory(examples, classes, SPECIAL, V, levels=(1, 2, 3))
    queries = examples[:10] + _examples(rng, 10)           # seen lines and unseen ones
    T = max(map(len, queries)) + 2
    ids = np.array([q + [PAD] * (T - len(q)) for q in queries])
    pos = np.array([[1, min(2, len(q) - 2)] for q in queries])
    seen = 0
    for k in (1, 2, 3):
        got = memory._counts(*memory._lookup(ids, pos, k))
        want = np.array([_brute_counts(examples, classes, list(ids[r]), pos[r, j], k)
                         for r in range(len(queries)) for j in range(2)])
        np.testing.assert_array_equal(got, want)
        seen += int(want.sum() > 0)
    assert seen == 3                  # every level matched something: the test is not vacuous


def _mix_by_hand(logq, counts_by_level, beta, special):
    q = logq.double().exp()
    s = q[[i for i in range(V) if i not in special]].sum()
    mixture, keep = torch.zeros(V, dtype=torch.float64), 1.0
    for c in counts_by_level:
        n = c.sum()
        lam = n / (n + beta)
        mixture = lam * (c / n if n else c) + (1 - lam) * mixture
        keep *= 1 - lam
    out = s * mixture + keep * q
    out[list(special)] = q[list(special)]
    return out


def test_the_mixture_keeps_specials_sums_to_one_and_follows_its_definition():
    rng = np.random.default_rng(1)
    classes = token_classes(TOKENS, SPECIAL, V, PAD)
    examples = _examples(rng, 200)
    memory = build_memory(examples, classes, SPECIAL, V, levels=(1, 2), beta=3.0)
    rows = [examples[0], examples[1], [CLS, MASK, MASK, SEP]]
    T = max(map(len, rows))
    ids = torch.tensor([r + [PAD] * (T - len(r)) for r in rows])
    pos = torch.tensor([[1], [len(rows[1]) - 2], [1]])
    logq = torch.log_softmax(torch.randn(3, 1, V, generator=torch.Generator().manual_seed(0)), -1)
    mixed = memory.mix(logq, ids, pos, SPECIAL)
    for r in range(3):
        by_level = [torch.from_numpy(_brute_counts(examples, classes, ids[r].tolist(),
                                                   int(pos[r, 0]), k)) for k in (1, 2)]
        want = _mix_by_hand(logq[r, 0], by_level, 3.0, SPECIAL)
        torch.testing.assert_close(mixed[r, 0].double().exp(), want, rtol=1e-5, atol=1e-7)
        assert torch.equal(mixed[r, 0, sorted(SPECIAL)], logq[r, 0, sorted(SPECIAL)])
        assert abs(float(mixed[r, 0].double().exp().sum()) - 1) < 1e-5
    assert not torch.equal(mixed[0], logq[0])               # a training line is remembered
    assert torch.equal(mixed[2], logq[2])                   # a context of masks never matches


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A 1-layer english model trained 3 steps by the CLI on lines with one rare word each."""
    tmp = tmp_path_factory.mktemp("mem")
    words = ["the", "and", "my", "lord", "thou", "love", "good", "king", "sweet", "night"]
    rng = np.random.default_rng(0)
    lines = [" ".join(words[j] for j in rng.integers(len(words), size=7)).capitalize() + "."
             for _ in range(300)]
    (tmp / "c.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp / "model"
    r = CliRunner().invoke(main, ["train", "english", str(tmp / "c.txt"), "--out", str(out),
                                  "--steps", "3", "--batch-size", "8", "--layers", "1",
                                  "--hidden", "16", "--heads", "2", "--max-length", "32",
                                  "--vocab-size", "120", "--no-progress"])
    assert r.exit_code == 0, r.output
    split = json.loads((out / "split.json").read_text())
    return out, lines, split


def test_a_trained_english_model_recites_its_training_lines(trained, tmp_path):
    out, lines, split = trained
    assert (out / MEMORY_FILE).is_file()
    model = infill.load_model(str(out))
    assert model.memory is not None and model.memory.levels == (2, 4)
    bare = tmp_path / "bare"
    shutil.copytree(out, bare)
    (bare / MEMORY_FILE).unlink()
    network = infill.load_model(str(bare))
    assert network.memory is None
    right = {"memory": 0, "network": 0}
    train = [lines[i] for i in split["train"][:40]]
    gapped = [(line.split()[3], " ".join(w if j != 3 else "___" for j, w in
                                          enumerate(line.split()))) for line in train]
    for name, m in (("memory", model), ("network", network)):
        fills = infill.fill(m, [g for _, g in gapped], gap=1, top_k=1)
        right[name] = sum(c[0].fills[0] == w for (w, _), c in zip(gapped, fills))
    assert right["memory"] == len(train)          # a 4-word context each side is unambiguous here
    assert right["network"] < len(train) // 2     # three steps taught the network little


def test_a_memory_that_does_not_fit_is_one_line_naming_the_file(trained, tmp_path):
    out, _, _ = trained
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    (bad / MEMORY_FILE).write_bytes(b"not safetensors")
    with pytest.raises(ModelLoadError, match="memory.safetensors: not a corpus memory"):
        infill.load_model(str(bad))
    r = CliRunner().invoke(main, ["run", "-m", str(bad), "The ___ king."])
    assert r.exit_code == 2 and "memory.safetensors" in r.output and "Traceback" not in r.output
    model = infill.load_model(str(out))
    with pytest.raises(ModelLoadError, match="does not fit this model"):
        load_memory(out / MEMORY_FILE, model.vocab_size + 1, model.n_input_ids)
