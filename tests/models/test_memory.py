"""The corpus memory (infill/models/memory.py): counts against brute force, the mixture against
its definition, and a model trained by `infill train english` that recites its training lines."""
import json
import shutil

import numpy as np
import pytest
from safetensors import safe_open
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


def _brute_counts(examples, classes, row, p, k, context="tokens", right_k=None, counted=None):
    """Counts of the token at every training position whose class context (k neighbours left,
    ``right_k`` -- default k -- right) equals row's at p (with context "words", a position's
    neighbours are the nearest tokens not punctuation; ``counted(ex, t)``: whether position t of
    ex is counted, default all)."""
    out_cls = outside_class(len(classes))
    r_k = k if right_k is None else right_k

    def ctx(seq, t):
        kept = [j for j in range(len(seq))
                if context == "tokens" or j == t or classes[seq[j]] != len(classes)]
        left = [j for j in kept if j < t][::-1][:k][::-1] if k else []
        right = [j for j in kept if j > t][:r_k]
        return tuple([out_cls] * (k - len(left)) + [classes[seq[j]] for j in left]
                     + [classes[seq[j]] for j in right] + [out_cls] * (r_k - len(right)))

    want = ctx(row, p)
    counts = np.zeros(V)
    for ex in examples:
        for t, tok in enumerate(ex):
            if tok not in SPECIAL and (counted is None or counted(ex, t)) and ctx(ex, t) == want:
                counts[tok] += 1
    return counts


@pytest.mark.parametrize("context", ["tokens", "words"])
def test_counts_equal_brute_force_on_every_position_and_level(context):
    rng = np.random.default_rng(0)
    classes = token_classes(TOKENS, SPECIAL, V, PAD)
    assert classes[TOKENS.index("A")] == TOKENS.index("a")                 # case folded
    assert classes[TOKENS.index(",")] == classes[TOKENS.index(".")] == V   # punctuation
    examples = _examples(rng)
    memory = build_memory(examples, classes, SPECIAL, V, levels=(1, 2, 3), context=context)
    queries = examples[:10] + _examples(rng, 10)           # seen lines and unseen ones
    T = max(map(len, queries)) + 2
    ids = np.array([q + [PAD] * (T - len(q)) for q in queries])
    pos = np.array([[1, min(2, len(q) - 2)] for q in queries])
    seen = 0
    for k in (1, 2, 3):
        got = memory._counts(*memory._lookup(ids, pos, k, k))
        want = np.array([_brute_counts(examples, classes, list(ids[r]), pos[r, j], k, context)
                         for r in range(len(queries)) for j in range(2)])
        np.testing.assert_array_equal(got, want)
        seen += int(want.sum() > 0)
    assert seen == 3                  # every level matched something: the test is not vacuous


def test_end_levels_equal_brute_force_and_speak_only_where_the_text_ends(tmp_path):
    rng = np.random.default_rng(3)
    classes = token_classes(TOKENS, SPECIAL, V, PAD)
    examples = _examples(rng, 200)
    continues = np.zeros(V, dtype=bool)
    continues[TOKENS.index("e")] = True                        # "e" continues a word
    memory = build_memory(examples, classes, SPECIAL, V, levels=(2,), context="tokens",
                          end_levels=(1, 2), edges=(CLS, SEP), continues=continues)
    assert memory.sides() == [(1, 0), (2, 0), (2, 2)]
    memory.save(tmp_path / "m")
    assert load_memory(tmp_path / "m", V, V).edges == (CLS, SEP)
    queries = [ex[:-2] + [MASK, SEP] for ex in examples[:30] if len(ex) > 3]  # gap ends the text
    queries += [[CLS] + ex[1:-2] + [MASK, MASK, SEP] for ex in examples[30:40]]  # a gap follows
    T = max(map(len, queries))
    ids = np.array([q + [PAD] * (T - len(q)) for q in queries])
    pos = np.array([[q.index(MASK)] for q in queries])

    def ends_word(ex, t):                             # what an end level may count
        return t + 1 == len(ex) or not continues[ex[t + 1]]

    spoke = 0
    for (left, right), (lo, width, _, _) in zip(memory.sides(), memory._found(ids, pos)):
        got = memory._counts(lo, width)
        for r, q in enumerate(queries):
            if right:
                want = _brute_counts(examples, classes, list(ids[r]), pos[r, 0], left, "tokens")
            elif q[pos[r, 0] + 1] == SEP:
                want = _brute_counts(examples, classes, list(ids[r]), pos[r, 0], left, "tokens", 0,
                                     ends_word)
            else:
                want = np.zeros(V)
            np.testing.assert_array_equal(got[r], want)
            spoke += int(not right and want.sum() > 0)
    assert spoke                                      # the end levels matched: not vacuous


def _brute_rest_counts(examples, classes, continues, query, p, hidden, left, right, rest):
    """Counts of the token at every training position t with ``left`` neighbours left of t and
    ``right`` neighbours right of u equal to the query's left of p and right of the ``hidden``
    [MASK]s after p (words context; brute force over every position). With ``rest`` > 0, t
    has that many pieces of its word after it (punctuation pieces not counted) and u is the
    word's end; with rest 0, u is t, and t ends its word if ``right`` is 0 (an end level)."""
    out_cls = outside_class(len(classes))
    punct = len(classes)

    def side(seq, t, u):                     # neighbours left of t and right of u, not punct
        kept = [j for j in range(len(seq)) if classes[seq[j]] != punct]
        lft = [j for j in kept if j < t][::-1][:left][::-1]
        rgt = [j for j in kept if j > u][:right]
        return tuple([out_cls] * (left - len(lft)) + [classes[seq[j]] for j in lft]
                     + [classes[seq[j]] for j in rgt] + [out_cls] * (right - len(rgt)))

    want = side(query, p, p + hidden)
    counts = np.zeros(V)
    for ex in examples:
        for t, tok in enumerate(ex):
            if tok in SPECIAL:
                continue
            u = t
            while u + 1 < len(ex) and continues[ex[u + 1]]:
                u += 1
            pieces = sum(classes[ex[j]] != punct for j in range(t + 1, u + 1))
            if rest == 0 and (right or u == t) and side(ex, t, t) == want:
                counts[tok] += 1
            elif rest > 0 and pieces == rest and side(ex, t, u) == want:
                counts[tok] += 1
    return counts


def _rest_case():
    """Lines where "e" continues a word, a memory with keys past up to 2 hidden pieces, and
    queries hiding a word of 2-4 pieces (some typed up to the gap): (examples, classes,
    continues, memory, queries as ids [N, T], gap starts, hidden pieces after them)."""
    rng = np.random.default_rng(5)
    classes = token_classes(TOKENS, SPECIAL, V, PAD)
    e = TOKENS.index("e")
    continues = np.zeros(V, dtype=bool)
    continues[e] = True
    examples = [[CLS] + [int(x) for x in rng.choice([4, 5, 6, 7, e, e, 9], size=7)] + [SEP]
                for _ in range(300)]
    memory = build_memory(examples, classes, SPECIAL, V, levels=(1, 2), end_levels=(2,),
                          edges=(CLS, SEP), continues=continues, rest=2, mask_id=MASK)
    queries, pos, rests = [], [], []
    for ex in examples[:80]:
        t = next((j for j in range(1, len(ex) - 2) if ex[j + 1] == e and ex[j] != e), None)
        if t is None:
            continue
        u = t + 1
        while ex[u + 1] == e:
            u += 1
        cut = len(queries) % 3 == 0                              # typed up to the gap
        queries.append(ex[:t] + [MASK] * (u + 1 - t) + ([SEP] if cut else ex[u + 1:]))
        pos.append(t), rests.append(u - t)
    T = max(map(len, queries))
    ids = np.array([q + [PAD] * (T - len(q)) for q in queries])
    return examples, classes, continues, memory, ids, np.array(pos), np.array(rests)


def _brute_level(case, r, left, right, rest):
    """Brute counts of query r at one level under a given rest (zero where the level is
    silent: an end level where the text goes on, a gap hiding more than the memory's rest)."""
    examples, classes, continues, memory, ids, pos, rests = case
    q = list(ids[r])
    ends = q[pos[r] + rests[r] + 1] == SEP
    if rest > memory.rest or rests[r] > memory.rest or (not right and not ends):
        return np.zeros(V)
    return _brute_rest_counts(examples, classes, continues, q, pos[r], rests[r], left, right,
                              rest)


def test_keys_past_the_rest_of_a_word_equal_brute_force():
    case = _rest_case()
    examples, classes, continues, memory, ids, pos, rests = case
    queries = ids.tolist()
    spoke = {}
    found = memory._found(ids, pos[:, None])
    for (left, right), (lo, width, total, types) in zip(memory.sides(), found):
        got = memory._counts(lo, width)
        for r in range(len(queries)):
            want = _brute_level(case, r, left, right, rests[r])
            np.testing.assert_array_equal(got[r], want)
            every = [_brute_level(case, r, left, right, k) for k in range(memory.rest + 1)]
            assert total[r] == sum(c.sum() for c in every)               # n_k: any rest
            assert types[r] == sum((c > 0).sum() for c in every)         # u_k: any rest
            spoke[(left, right)] = spoke.get((left, right), 0) + int(want.sum() > 0)
    assert all(spoke.get(s, 0) > 0 for s in memory.sides())    # every level matched: not vacuous
    plain = build_memory(examples, classes, SPECIAL, V, levels=(1, 2), end_levels=(2,),
                         edges=(CLS, SEP), continues=continues)
    assert np.isin(plain.keys, memory.keys).all()               # rest 0: the keys as before
    assert len(memory.keys) > len(plain.keys)


def test_the_mixture_past_the_rest_of_a_word_follows_its_definition():
    """m_k(w) = n_k,r(w) / n_k with n_k over every rest: the memory's mass at a gap's first
    piece is its share of the words of this length, the rest stays the network's."""
    case = _rest_case()
    examples, classes, continues, memory, ids, pos, rests = case
    noise = torch.randn(len(ids), 1, V, generator=torch.Generator().manual_seed(1))
    logq = torch.log_softmax(noise, -1)
    mixed = memory.mix(logq, torch.from_numpy(ids), torch.from_numpy(pos[:, None]), SPECIAL)
    shared = 0
    for r in range(len(ids)):
        q = logq[r, 0].double().exp()
        s = q[[i for i in range(V) if i not in SPECIAL]].sum()
        mixture = torch.zeros(V, dtype=torch.float64)
        for left, right in memory.sides():
            every = [_brute_level(case, r, left, right, k) for k in range(memory.rest + 1)]
            n, u = sum(c.sum() for c in every), sum((c > 0).sum() for c in every)
            lam = n / (n + memory.beta * u) if n else 0.0
            here = torch.from_numpy(every[rests[r]] if rests[r] <= memory.rest else np.zeros(V))
            mixture = lam * (here / n if n else here) + (1 - lam) * mixture
            shared += int(0 < here.sum() < n)            # other lengths share the context
        want = s * mixture + (1 - mixture.sum()) * q
        want[sorted(SPECIAL)] = q[sorted(SPECIAL)]
        torch.testing.assert_close(mixed[r, 0].double().exp(), want, rtol=1e-5, atol=1e-7)
        assert abs(float(mixed[r, 0].double().exp().sum()) - 1) < 1e-5
    assert shared                                       # the totals over lengths were exercised


def test_a_memory_with_the_rest_of_a_word_round_trips(tmp_path):
    classes = token_classes(TOKENS, SPECIAL, V, PAD)
    continues = np.array([t == "e" for t in TOKENS])
    memory = build_memory(_examples(np.random.default_rng(6), 50), classes, SPECIAL, V,
                          continues=continues, rest=3, mask_id=MASK)
    memory.save(tmp_path / "m")
    back = load_memory(tmp_path / "m", V, V)
    assert (back.rest, back.mask_id) == (3, MASK) and np.array_equal(back.keys, memory.keys)
    with pytest.raises(ValueError, match="need 'continues' and 'mask_id'"):
        build_memory([[CLS, 4, SEP]], classes, SPECIAL, V, rest=2)


def test_a_words_memory_matches_a_line_typed_without_its_punctuation(tmp_path):
    a, b, c, d, comma, stop = (TOKENS.index(x) for x in "abcd,.")
    classes = token_classes(TOKENS, SPECIAL, V, PAD)
    line = [CLS, a, b, comma, c, d, stop, SEP]                 # "a b, c d."
    typed = np.array([[CLS, a, b, c, MASK, SEP]])             # "a b c ___"
    found = {}
    for context in ("words", "tokens"):
        memory = build_memory([line], classes, SPECIAL, V, levels=(2,), context=context)
        memory.save(tmp_path / context)
        found[context] = memory._counts(*memory._lookup(typed, np.array([[4]]), 2, 2))[0]
        assert load_memory(tmp_path / context, V, V).context == context
    assert found["words"][d] == 1 and found["words"].sum() == 1
    assert found["tokens"].sum() == 0        # its left neighbours would be ", c", not "b c"


def test_a_memory_file_from_before_the_context_choice_reads_as_tokens(tmp_path):
    from safetensors.numpy import load_file, save_file

    classes = token_classes(TOKENS, SPECIAL, V, PAD)
    memory = build_memory(_examples(np.random.default_rng(2)), classes, SPECIAL, V,
                          context="tokens", key_bits=64)
    memory.save(tmp_path / "m")
    save_file(load_file(str(tmp_path / "m")), str(tmp_path / "old"),
              metadata={"levels": "2,4", "beta": "4.0", "vocab_size": str(V)})
    old = load_memory(tmp_path / "old", V, V)
    assert old.context == "tokens" and np.array_equal(old.keys, memory.keys)
    assert old.key_bits == 64


def test_48_bit_keys_take_6_bytes_on_disk_and_find_what_64_bit_keys_find(tmp_path):
    classes = token_classes(TOKENS, SPECIAL, V, PAD)
    examples = _examples(np.random.default_rng(4), 200)
    short, full = (build_memory(examples, classes, SPECIAL, V, key_bits=b) for b in (48, 64))
    short.save(tmp_path / "m")
    back = load_memory(tmp_path / "m", V, V)
    assert back.key_bits == 48 and np.array_equal(back.keys, short.keys)
    assert np.array_equal(back.keys, full.keys >> np.uint64(16))
    with safe_open(str(tmp_path / "m"), framework="np") as f:
        assert sorted(f.keys()) == ["classes", "counts", "keys_hi", "keys_lo", "tokens"]
    ids = np.array([ex + [PAD] * (9 - len(ex)) for ex in examples[:30]])
    pos = np.array([[1, len(ex) - 2] for ex in examples[:30]])
    for k in (2, 4):
        np.testing.assert_array_equal(back._counts(*back._lookup(ids, pos, k, k)),
                                      full._counts(*full._lookup(ids, pos, k, k)))


def _mix_by_hand(logq, counts_by_level, beta, special):
    q = logq.double().exp()
    s = q[[i for i in range(V) if i not in special]].sum()
    mixture, keep = torch.zeros(V, dtype=torch.float64), 1.0
    for c in counts_by_level:
        n = c.sum()
        lam = n / (n + beta * (c > 0).sum()) if n else 0.0
        mixture = lam * (c / n if n else c) + (1 - lam) * mixture
        keep *= 1 - lam
    out = s * mixture + keep * q
    out[list(special)] = q[list(special)]
    return out


def test_the_mixture_keeps_specials_sums_to_one_and_follows_its_definition():
    rng = np.random.default_rng(1)
    classes = token_classes(TOKENS, SPECIAL, V, PAD)
    examples = _examples(rng, 200)
    memory = build_memory(examples, classes, SPECIAL, V, levels=(1, 2), beta=3.0, context="tokens")
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
    out, split = _train(tmp, lines, 120)
    return out, lines, split


def _train(tmp, lines, vocab_size):
    """A 1-layer english model trained 3 steps by the CLI on ``lines``: (folder, split)."""
    (tmp / "c.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp / "model"
    r = CliRunner().invoke(main, ["train", "english", str(tmp / "c.txt"), "--out", str(out),
                                  "--steps", "3", "--batch-size", "8", "--layers", "1",
                                  "--hidden", "16", "--heads", "2", "--max-length", "32",
                                  "--vocab-size", str(vocab_size), "--no-progress"])
    assert r.exit_code == 0, r.output
    return out, json.loads((out / "split.json").read_text())


def test_a_trained_english_model_recites_its_training_lines(trained, tmp_path):
    out, lines, split = trained
    assert (out / MEMORY_FILE).is_file()
    model = infill.load_model(str(out))
    assert model.memory is not None and model.memory.sides() == [(3, 0), (2, 2), (4, 4)]
    assert model.memory.context == "words" and model.memory.rest == 3
    bare = tmp_path / "bare"
    shutil.copytree(out, bare)
    (bare / MEMORY_FILE).unlink()
    network = infill.load_model(str(bare))
    assert network.memory is None
    right = {"memory": 0, "network": 0}
    train = [lines[i] for i in split["train"][:40]]
    gapped = [(line.split()[3], " ".join(w if j != 3 else "___" for j, w in
                                          enumerate(line.split()))) for line in train]
    unpunctuated = [(w, g.rstrip(".")) for w, g in gapped]       # typed without the full stop
    for name, m, inputs in (("memory", model, gapped), ("network", network, gapped),
                            ("typed", model, unpunctuated)):
        fills = infill.fill(m, [g for _, g in inputs], gap=1, top_k=1)
        right[name] = sum(c[0].fills[0] == w for (w, _), c in zip(inputs, fills))
    assert right["memory"] == len(train)          # a 4-word context each side is unambiguous here
    assert right["typed"] == len(train)           # punctuation is no neighbour in the memory
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


def test_a_trained_model_recites_a_hidden_word_of_several_pieces(tmp_path):
    """Rare words are split into pieces; hidden as one whole word (``gap="word"``), the memory
    fills each piece -- the first one too, whose right neighbours are the word's own hidden
    pieces -- where a memory without keys past the rest of a word is silent."""
    words = ["the", "and", "my", "lord", "thou", "love", "good", "king", "sweet", "night"]
    syllables = ["zor", "quen", "plim", "grob", "vex"]
    rare = [a + b + c for a in syllables for b in syllables for c in ("", "ax", "ib") if a != b]
    rng = np.random.default_rng(1)
    lines = []
    for _ in range(300):
        w = [words[j] for j in rng.integers(len(words), size=6)]
        w.insert(3, rare[int(rng.integers(len(rare)))])
        lines.append(" ".join(w).capitalize() + ".")
    out, split = _train(tmp_path, lines, 100)
    model = infill.load_model(str(out))
    pieces = {w: len(model.tokenizer.tokenize(w)) for w in rare}
    train = [lines[i] for i in split["train"] if 2 <= pieces[lines[i].split()[3]] <= 3][:30]
    assert len(train) == 30                                  # hidden words of 2-3 pieces
    gapped = [(line.split()[3], " ".join(w if j != 3 else "___" for j, w in
                                          enumerate(line.split()))) for line in train]
    right = {}
    for name, m in (("rest", model), ("no rest", _without_rest(str(out)))):
        fills = infill.fill(m, [g for _, g in gapped], gap="word", top_k=1, length_score="pll-word")
        right[name] = sum(c[0].fills[0] == w for (w, _), c in zip(gapped, fills))
    assert right["rest"] == len(train)
    assert right["no rest"] < len(train) // 2         # three steps taught the network little


def _without_rest(path):
    """The model at ``path`` with its memory's keys past the rest of a word unused (the
    memory as it was before them)."""
    bare = infill.load_model(path)
    bare.memory.rest = 0
    return bare

