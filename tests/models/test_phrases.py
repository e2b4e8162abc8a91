"""The phrase memory of a character model (infill/models/phrases.py): the mixture against its
definition computed by brute force over the training text, a damaged formula restored from its
parallels, the file's round trip (with a user's phrases.txt), corrupt files as one error, and
`infill train greek` writing the memory beside every model."""
import json
import shutil

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import infill
from infill.data.greek import GREEK, normalize
from infill.errors import ModelLoadError
from infill.models.char import save_char
from infill.models.phrases import (PHRASES_FILE, USER_PHRASES, build_phrases, drop_rare,
                                  load_phrases)
from infill_cli.main import main

A = GREEK
V = A.n_outputs
LINES = ["εδοξε τηι βουληι και τωι δημωι", "εδοξε τωι δημωι, επειδη αγαθοσ",
         "ανηρ αγαθοσ ων περι τον δημον", "ευνοιασ ενεκα και φιλιασ", "ο δημοσ ανεθηκεν",
         "αγαθηι τυχηι εδοξε τηι βουληι", "τω-ι δημωι ^ ανεθηκεν"]
SIDES = ((2, 0), (0, 2), (1, 1), (3, 3))       # a right context never reaches past the end
OUT = "@"                  # the outside of a text, in the brute force


def _ids(text: str) -> list[int]:
    return [A.start_id] + [A.mask_id if c == "?" else A.char_to_id(c) for c in text]


def _neighbours(text: str, t: int, left: int, right: int, rest: int):
    """Brute force: the ``left`` characters left of t and the ``right`` ones right of its hidden
    rest (the ``?`` right after t), punctuation skipped, ``@`` outside; None when the rest is
    longer than ``rest``."""
    kept = [c for c in text if c not in A.punctuation]
    k = sum(c not in A.punctuation for c in text[:t])
    h = 0
    while k + 1 + h < len(kept) and kept[k + 1 + h] == "?":
        h += 1
    if h > rest:
        return None
    pad = [OUT] * 64
    seq = pad + kept + pad
    k += 64
    return "".join(seq[k - left:k]), "".join(seq[k + 1 + h:k + 1 + h + right]), h


def _level_counts(query, left: int, right: int, h: int, ends: bool = False,
                  lines=LINES) -> np.ndarray:
    """Brute force: how often each character of LINES sits between the query's contexts (a
    right context past a line's end only with ``ends``)."""
    counts = np.zeros(V)
    bad = set("-^?")
    for line in lines:
        kept = [c for c in line if c not in A.punctuation]
        seq = [OUT] * 64 + kept + [OUT] * 64
        for i in range(64, 64 + len(kept)):
            hidden = seq[i + 1:i + 1 + h] if right else []
            ctx = seq[i - left:i] + seq[i + 1 + len(hidden):i + 1 + len(hidden) + right]
            past_end = OUT in seq[i + 1:i + 1 + len(hidden) + right] if right else False
            past_end = past_end and (not ends or OUT in hidden or (    # only the end itself
                not left and seq[i + 1 + len(hidden)] == OUT))
            if seq[i] in bad or bad & set(ctx) or bad & set(hidden) or past_end:
                continue
            if "".join(seq[i - left:i]) == query[0] and (
                    not right or "".join(seq[i + 1 + h:i + 1 + h + right]) == query[1]):
                counts[A.char_to_id(seq[i])] += 1
    return counts


def _brute_mixture(text: str, t: int, beta: float, rest: int, ends: bool = False,
                   least=(0,) * len(SIDES), pool: bool = False) -> np.ndarray:
    """M of the module doc at character t of ``text`` (levels chained in SIDES order; level k
    silent where fewer than ``least[k]`` characters are hidden right of t; with ``pool``, a
    one-sided level after its mirror, both seen: the normalized product of their add-½ shares
    off ``^`` and ``-``, at the larger λ)."""
    mixture = np.zeros(V)
    hidden = _neighbours(text, t, 0, 0, 64)[2]
    ok = np.ones(V)
    ok[[A.unk_id, A.missing_id]] = 0
    said = {}                                       # one-sided level -> (counts, λ)
    for (left, right), m in zip(SIDES, least):
        if hidden < m:
            continue
        found = _neighbours(text, t, left, right, rest)
        if found is None and right:
            continue
        found = found or _neighbours(text, t, left, 0, 64)
        counts = _level_counts((found[0], found[1]), left, right, found[2], ends)
        n, u = counts.sum(), (counts > 0).sum()
        if not n:
            continue
        lam, share = n / (n + beta * u), counts / n
        if pool and (right, left) in said:
            other, other_lam = said[(right, left)]
            product = (counts + ok / 2) / (n + ok.sum() / 2) * (other + ok / 2) / (
                other.sum() + ok.sum() / 2)
            lam, share = max(lam, other_lam), product / product.sum()
        if not left or not right:
            said[(left, right)] = (counts, lam)
        mixture = lam * share + (1 - lam) * mixture
    return mixture


CASES = [("εδοξε τηι βουληι και τωι ?????", [25, 26, 29]), ("ανηρ αγαθοσ ?ν περι", [12]),
         ("ευνοιασ ?νεκα, και", [8]), ("ο δημοσ ανεθη?εν", [13]), ("?????? τυχηι", [0, 3]),
         ("τωι δη?ωι", [6]), ("ζζζ ???", [4]), ("ψψ?ψψ", [2])]


@pytest.mark.parametrize("pool", [False, True])
@pytest.mark.parametrize("text, where", CASES)
def test_the_mixture_is_its_definition_and_sums_to_one(text, where, pool, mixture_is):
    beta, rest = 0.7, 4
    memory = build_phrases(LINES, A, sides=SIDES, rest=rest, beta=beta)
    memory.pool = pool
    mixture_is(memory, text, where, lambda t: _brute_mixture(text, t, beta, rest, pool=pool),
               seed=1)


def test_the_cases_are_not_vacuous():
    seen = [_brute_mixture(text, t, 1.0, 4).sum() > 0 for text, where in CASES for t in where]
    assert sum(seen) >= 6 and not all(seen)
    both = [all(_said(text, t, side).sum() for side in ((2, 0), (0, 2)))
            for text, where in CASES for t in where]
    assert 2 <= sum(both) < len(both)           # the mirror levels pooled at some, not all


def _said(text: str, t: int, side: tuple[int, int], lines=LINES) -> np.ndarray:
    """Brute force: one level's counts at character t of ``text`` (zeros where its rest is
    too long)."""
    found = _neighbours(text, t, *side, 4)
    return np.zeros(V) if found is None else _level_counts(found[:2], *side, found[2],
                                                           lines=lines)


def test_the_mirror_levels_are_pooled_not_chained():
    """``ο δημοσ ανεθη?εν``: the left-only level has seen only ``κ`` after ``θη``
    (ανεθηκεν), the right-only one more ``θ`` than ``κ`` before ``εν`` (ηθεν): chained, the
    right would overrule the left; pooled, the letter both allow leads."""
    lines = LINES + ["ηθεν ηθεν ηθεν ηθεν"]
    memory = build_phrases(lines, A, sides=((2, 0), (0, 2)), rest=4, beta=0.7)
    memory.pool = True
    ids = np.array([[A.start_id] + [A.mask_id if c == "?" else A.char_to_id(c)
                                    for c in "ο δημοσ ανεθη?εν"]])
    seen, mixture, _ = memory.mixture(ids, np.array([[14]]))
    assert len(seen) == 1 and A.symbols[int(mixture[0].argmax())] == "κ"
    chained = np.zeros(V)                           # what the back-off chain said
    for side in ((2, 0), (0, 2)):
        counts = _said("ο δημοσ ανεθη?εν", 13, side, lines)
        lam = counts.sum() / (counts.sum() + 0.7 * (counts > 0).sum())
        chained = lam * counts / counts.sum() + (1 - lam) * chained
    assert A.symbols[int(chained.argmax())] == "θ"
    memory.pool = False                             # the memory's own chain says so too
    assert A.symbols[int(memory.mixture(ids, np.array([[14]]))[1][0].argmax())] == "θ"


END_CASES = [("εδοξε τηι βουληι και τωι δη?ωι", [27]), ("ο δημοσ ανεθηκ??", [14, 15]),
             ("ευνοιασ ενεκα και φιλι??", [22])]


@pytest.mark.parametrize("text, where", CASES + END_CASES)
def test_with_ends_a_right_context_reaches_past_a_texts_end(text, where, mixture_is):
    beta, rest = 0.7, 4
    memory = build_phrases(LINES, A, sides=SIDES, rest=rest, beta=beta, ends=True)
    assert memory.ends
    mixture_is(memory, text, where, lambda t: _brute_mixture(text, t, beta, rest, True), seed=1)


def test_the_end_cases_are_where_ends_change_the_mixture():
    for text, where in END_CASES:
        for t in where[:1]:
            without, with_ends = _brute_mixture(text, t, 1.0, 4), _brute_mixture(text, t, 1.0, 4,
                                                                                 True)
            assert with_ends.sum() > without.sum(), (text, t)
    # the text's last letter after a lost one: only a right-only level could speak, and its
    # context would be the end alone (how every line ends), which is not stored
    assert _brute_mixture("ο δημοσ ανεθηκ??", 15, 1.0, 4, True).sum() == 0


LEAST = (2, 0, 3, 0)       # per level of SIDES: the fewest hidden characters right of t


@pytest.mark.parametrize("text, where", CASES + END_CASES)
def test_a_level_with_a_least_rest_speaks_only_before_that_many_hidden(text, where,
                                                                      mixture_is):
    beta, rest = 0.7, 4
    memory = build_phrases(LINES, A, sides=SIDES, rest=rest, beta=beta, ends=True, least=LEAST)
    assert memory.least == LEAST
    mixture_is(memory, text, where,
               lambda t: _brute_mixture(text, t, beta, rest, True, LEAST), seed=1)


def test_the_least_rest_changes_the_mixture_only_where_less_is_hidden():
    changed = same = 0
    for text, where in CASES + END_CASES:
        for t in where:
            a = _brute_mixture(text, t, 1.0, 4, True)
            b = _brute_mixture(text, t, 1.0, 4, True, LEAST)
            changed += not np.allclose(a, b)
            same += a.sum() > 0 and np.allclose(a, b)
    assert changed >= 3 and same >= 3
    full = build_phrases(LINES, A, sides=SIDES, rest=4, ends=True)
    gated = build_phrases(LINES, A, sides=SIDES, rest=4, ends=True, least=LEAST)
    assert len(gated.keys) < len(full.keys)       # keys never asked for are not stored
    assert build_phrases(LINES, A, sides=SIDES, rest=4, least=(0,) * 4).least == ()
    for bad in [(1, 2), (6, 0, 0, 0), (-1, 0, 0, 0)]:
        with pytest.raises(ValueError, match="least"):
            build_phrases(LINES, A, sides=SIDES, rest=4, least=bad)


@pytest.mark.parametrize("text, gold", [
    ("εδοξε τηι βουληι και τωι ?????", "δημωι"),     # the formula's lost end
    ("ανηρ αγ???σ ων", "αθο"),                       # a stretch inside a phrase
    ("- - -ο δημοσ ανεθη?εν", "κ"),
    ("ευνοιασ ?????", "ενεκα"),
])
def test_a_damaged_formula_finds_its_parallel(text, gold, tiny_char):
    lines = LINES[:6] + ["ευνοιασ ενεκα"]
    memory = build_phrases(lines, A, sides=((4, 0), (8, 0), (0, 4), (3, 3), (6, 6)), beta=0.1)
    with_memory = infill.fill(tiny_char(phrases=memory), text, marker="?", top_k=1)[0][0]
    bare = infill.fill(tiny_char(), text, marker="?", top_k=1)[0][0]
    assert normalize("".join(with_memory.fills), strip=False) == gold
    assert "".join(bare.fills) != "".join(with_memory.fills)   # the untrained network alone


def test_the_file_round_trips_and_a_users_phrases_are_counted_in(tmp_path):
    memory = build_phrases(LINES, A, sides=SIDES, rest=4, beta=0.5)
    memory.save(tmp_path / PHRASES_FILE, A)
    back = load_phrases(tmp_path / PHRASES_FILE, A)
    for name in ("keys", "tokens", "counts", "classes"):
        assert np.array_equal(getattr(back, name), getattr(memory, name)), name
    assert (back.sides, back.rest, back.beta, back.ends) == (SIDES, 4, 0.5, False)
    ends = build_phrases(LINES, A, sides=SIDES, rest=4, beta=0.5, ends=True)
    ends.save(tmp_path / "ends.safetensors", A)
    back = load_phrases(tmp_path / "ends.safetensors", A, user=tmp_path / "none.txt")
    assert back.ends and np.array_equal(back.keys, ends.keys) and len(ends.keys) > len(memory.keys)
    assert back.least == ()
    gated = build_phrases(LINES, A, sides=SIDES, rest=4, beta=0.5, least=LEAST)
    gated.save(tmp_path / "least.safetensors", A)
    back = load_phrases(tmp_path / "least.safetensors", A, user=tmp_path / "none.txt")
    assert back.least == LEAST and np.array_equal(back.keys, gated.keys)
    (tmp_path / USER_PHRASES).write_text("Ἡρακλείδης Ἡρακλείδου\t3\n\nμηνὸς Λυκείου\n",
                                         encoding="utf-8")
    more = load_phrases(tmp_path / PHRASES_FILE, A)
    want = build_phrases(LINES + ["ηρακλειδησ ηρακλειδου", "μηνοσ λυκειου"], A,
                         [1] * len(LINES) + [3, 1], SIDES, 4, 0.5)
    for name in ("keys", "tokens", "counts"):
        assert np.array_equal(getattr(more, name), getattr(want, name)), name


@pytest.mark.parametrize("min_count", [2, 3])
def test_dropping_rare_contexts_keeps_exactly_those_seen_often_enough(min_count):
    memory = build_phrases(LINES + LINES[:2], A, sides=SIDES, rest=4, beta=0.5)
    seen: dict[int, int] = {}
    for k, c in zip(memory.keys.tolist(), memory.counts.tolist()):
        seen[k] = seen.get(k, 0) + c
    whole = drop_rare(memory, min_count)
    want = [(k, t, c) for k, t, c in zip(memory.keys.tolist(), memory.tokens.tolist(),
                                          memory.counts.tolist()) if seen[k] >= min_count]
    assert list(zip(whole.keys.tolist(), whole.tokens.tolist(), whole.counts.tolist())) == want
    assert 0 < len(want) < len(memory.keys)
    entries = drop_rare(memory, min_count, whole_contexts=False)
    assert entries.counts.min() >= min_count and len(entries.keys) < len(want)
    assert np.all(np.diff(entries.keys.astype(np.float64)) >= 0)
    assert drop_rare(memory, 1) is memory


def _corrupt(path, **arrays):
    from safetensors.numpy import load_file, save_file
    from safetensors import safe_open

    with safe_open(str(path), framework="np") as f:
        meta = f.metadata()
    data = load_file(str(path))
    meta.update({k: v for k, v in arrays.items() if isinstance(v, str)})
    data.update({k: v for k, v in arrays.items() if not isinstance(v, str)})
    save_file(data, str(path), metadata=meta)


@pytest.mark.parametrize("change", [
    {"format": "infill-memory"}, {"sides": "1:x"}, {"sides": "0:0"}, {"sides": "99:1"},
    {"rest": "99999999999999999999"}, {"beta": "nan"}, {"beta": "-1"}, {"vocab_size": "7"},
    {"tokens": np.full(1, 200, np.uint8)}, {"counts": np.zeros(1, np.uint16)},
    {"counts": np.ones(1, np.int64)},
    {"keys_lo": np.zeros(3, np.uint16)}, {"classes": np.zeros(5, np.int64)},
    {"tokens": np.zeros(1, np.float32)}, {"special": "1"}, {"ends": "yes"},
    {"least": "1,2"}, {"least": "9,0,0,0"}, {"least": "x"}, {"least": ""},
])
def test_a_corrupt_memory_is_one_error_naming_the_file(tmp_path, change):
    path = tmp_path / PHRASES_FILE
    build_phrases(LINES[:2], A, sides=SIDES, rest=2).save(path, A)
    if any(not isinstance(v, str) for v in change.values()):
        size = len(build_phrases(LINES[:2], A, sides=SIDES, rest=2).keys)
        change = {k: (np.resize(v, size) if k in ("tokens", "counts") else v)
                  for k, v in change.items()}
    _corrupt(path, **change)
    with pytest.raises(ModelLoadError, match=PHRASES_FILE):
        load_phrases(path, A)


@pytest.mark.parametrize("content", [b"not safetensors at all", b"", b"\xff" * 9])
def test_garbage_and_a_bad_users_file_are_one_error(tmp_path, content):
    path = tmp_path / PHRASES_FILE
    path.write_bytes(content)
    with pytest.raises(ModelLoadError, match=PHRASES_FILE):
        load_phrases(path, A)
    build_phrases(LINES[:2], A, sides=SIDES, rest=2).save(path, A)
    (tmp_path / USER_PHRASES).write_text("δημωι\tmany\n", encoding="utf-8")
    with pytest.raises(ModelLoadError, match=USER_PHRASES + ":1"):
        load_phrases(path, A)


def test_a_model_directory_loads_its_memory_and_a_bad_one_is_exit_2(tmp_path, tiny_char):
    d = save_char(tiny_char().model, tmp_path / "m", A)
    build_phrases(LINES, A, sides=SIDES, rest=4).save(d / PHRASES_FILE, A)
    assert infill.load_model(str(d), device="cpu").phrases is not None
    (d / PHRASES_FILE).write_bytes(b"\x00" * 20)
    r = CliRunner().invoke(main, ["run", "-m", str(d), "τωι δη?ωι"])
    assert r.exit_code == 2 and "Traceback" not in r.output and PHRASES_FILE in r.output


def test_pool_mirrors_in_charmodel_json_pools_the_memory_and_a_bad_value_is_one_error(
        tmp_path, tiny_char):
    d = save_char(tiny_char().model, tmp_path / "m", A)
    meta = json.loads((d / "charmodel.json").read_text())
    for value, error in [(True, "no phrase memory"), ("yes", "must be true or false")]:
        (d / "charmodel.json").write_text(json.dumps({**meta, "pool_mirrors": value}))
        r = CliRunner().invoke(main, ["run", "-m", str(d), "τωι δη?ωι"])
        assert r.exit_code == 2 and error in r.stderr and "Traceback" not in r.output
    build_phrases(LINES, A, sides=SIDES, rest=4).save(d / PHRASES_FILE, A)
    (d / "charmodel.json").write_text(json.dumps({**meta, "pool_mirrors": True}))
    assert infill.load_model(str(d), device="cpu").phrases.pool
    (d / "charmodel.json").write_text(json.dumps({**meta, "pool_mirrors": False}))
    assert not infill.load_model(str(d), device="cpu").phrases.pool
    (d / "charmodel.json").write_text(json.dumps(meta))
    assert not infill.load_model(str(d), device="cpu").phrases.pool


def test_infill_train_greek_writes_the_memory(tmp_path, train_greek):
    out = train_greek([LINES[k % 6] for k in range(120)], tmp_path)
    model = infill.load_model(str(out), device="cpu")
    assert model.phrases is not None and len(model.phrases.keys) > 0
    fill = infill.fill(model, "εδοξε τηι βουληι και τωι ?????", marker="?", top_k=1)[0][0]
    assert normalize("".join(fill.fills)) == "δημωι"
    assert json.loads((out / "train_info.json").read_text())["family"] == "greek"
    bare = tmp_path / "bare"
    shutil.copytree(out, bare)
    (bare / PHRASES_FILE).unlink()
    assert infill.load_model(str(bare), device="cpu").phrases is None


# ---- whole lost words: the words seen beside their neighbours -------------------------------
def _pairs(beta=0.5):
    from infill.models.lexicon import build_lexicon, word_weights
    from infill.models.phrases import build_pairs, pair_counts

    lexicon = build_lexicon(dict(word_weights(LINES, A)), A, beta=1.0)
    return build_pairs(pair_counts(LINES, A), A, lexicon, beta), lexicon


def test_pairs_mix_the_words_seen_beside_the_neighbours_by_their_formula():
    pairs, _ = _pairs(beta=0.5)
    text = "και τωι ?????"               # τωι δημωι twice; a word of 5 after τωι: δημωι
    ids = torch.tensor([_ids(text)])
    pos = torch.tensor([[9, 10, 2]])     # two letters of the lost word; a letter of "και"
    logq = torch.log_softmax(torch.randn(1, 3, V, generator=torch.Generator().manual_seed(2)), -1)
    mixed = pairs.mix(logq, ids, pos)
    special = torch.zeros(V, dtype=torch.bool)
    special[[A.unk_id, A.missing_id]] = True
    for j, letter in enumerate("δη"):
        m = torch.zeros(V, dtype=torch.float64)
        m[A.char_to_id(letter)] = 1.0
        q = logq[0, j].double().exp()
        lam = 2 / (2 + 0.5)
        want = torch.where(special, q, q[~special].sum() * lam * m + (1 - lam) * q)
        torch.testing.assert_close(mixed[0, j].double().exp(), want, rtol=1e-5, atol=1e-7)
    # "και" has the neighbour τωι on its right, and και τωι was seen: its letter κ is
    # certain to the pairs, all its letters being known
    assert abs(float(mixed[0].double().exp().sum(-1).sub(1).abs().max())) < 1e-5


def test_a_whole_lost_word_is_restored_from_its_neighbour_and_the_file_round_trips(tmp_path,
                                                                                   tiny_char):
    from infill.models.phrases import PAIRS_FILE, load_pairs

    pairs, lexicon = _pairs(beta=0.1)
    model = tiny_char()
    model.lexicon, model.pairs = lexicon, pairs
    got = infill.fill(model, "αγαθηι ????? εδοξε", marker="?", top_k=1)[0][0]
    assert normalize("".join(got.fills)) == "τυχηι"
    pairs.save(tmp_path / PAIRS_FILE, A)
    back = load_pairs(tmp_path / PAIRS_FILE, A, lexicon)
    assert back.beta == 0.1 and set(back.before) == set(pairs.before)
    for k, (table, counts) in pairs.before.items():
        assert sorted(zip(map(bytes, table), counts)) == \
            sorted(zip(map(bytes, back.before[k][0]), back.before[k][1]))
    lines = (tmp_path / PAIRS_FILE).read_text(encoding="utf-8").splitlines()
    (tmp_path / PAIRS_FILE).write_text("\n".join(lines[:2] + ["τωι\tδημωι\t-2"]) + "\n",
                                       encoding="utf-8")
    with pytest.raises(ModelLoadError, match=PAIRS_FILE + ":3: expected"):
        load_pairs(tmp_path / PAIRS_FILE, A, lexicon)
    (tmp_path / PAIRS_FILE).write_text("τωι\tδημωι\t2\n", encoding="utf-8")
    with pytest.raises(ModelLoadError, match=PAIRS_FILE + ":1: not an infill word-pair"):
        load_pairs(tmp_path / PAIRS_FILE, A, lexicon)


def _length_prior(n: int, offset: int) -> torch.Tensor:
    """The words of n letters of LINES' pairs, each weighing how often it stands in a pair,
    as a distribution of the letter at ``offset`` (written out from the pairs themselves)."""
    from infill.models.phrases import pair_counts

    weight: dict[str, float] = {}
    for (a, b), c in pair_counts(LINES, A).items():
        for w in (a, b):
            weight[w] = weight.get(w, 0.0) + c
    m = torch.zeros(V, dtype=torch.float64)
    for w, c in weight.items():
        if len(w) == n:
            m[A.char_to_id(w[offset])] += c
    return m / m.sum()


@pytest.mark.parametrize("prior", [0.0, 0.5, 0.8])
def test_a_lost_word_with_no_neighbour_draws_on_the_words_of_its_length(prior):
    from infill.models.lexicon import build_lexicon, word_weights
    from infill.models.phrases import build_pairs, pair_counts

    lexicon = build_lexicon(dict(word_weights(LINES, A)), A, beta=1.0)
    pairs = build_pairs(pair_counts(LINES, A), A, lexicon, beta=0.5, prior=prior)
    text = "τ- ????? -α δ????"              # no neighbour word survives either lost word
    ids = torch.tensor([_ids(text)])
    pos = torch.tensor([[4, 6, 13, 14]])  # 1st and 3rd letter of ?????; 2 letters of δ????
    logq = torch.log_softmax(torch.randn(1, 4, V, generator=torch.Generator().manual_seed(3)), -1)
    mixed = pairs.mix(logq, ids, pos)
    special = torch.zeros(V, dtype=torch.bool)
    special[[A.unk_id, A.missing_id]] = True
    for j, offset in enumerate((0, 2)):
        m, q = _length_prior(5, offset), logq[0, j].double().exp()
        want = torch.where(special, q, q[~special].sum() * prior * m + (1 - prior) * q)
        torch.testing.assert_close(mixed[0, j].double().exp(), want, rtol=1e-5, atol=1e-7)
    # a word that keeps a letter (δ) is the lexicon's: the prior stays silent there
    torch.testing.assert_close(mixed[0, 2:], logq[0, 2:])
    # a surviving neighbour is the pairs' own: "τωι ?????" draws on δημωι only, prior or not
    ids = torch.tensor([_ids("τωι ?????")])
    got = pairs.mix(logq[:, :1], ids, torch.tensor([[5]])).double().exp()[0, 0]
    q = logq[0, 0].double().exp()
    lam = 2 / (2 + 0.5)
    m = torch.zeros(V, dtype=torch.float64)
    m[A.char_to_id("δ")] = 1.0
    torch.testing.assert_close(got, torch.where(special, q, q[~special].sum() * lam * m
                                                 + (1 - lam) * q), rtol=1e-5, atol=1e-7)


def test_the_length_prior_round_trips_and_a_file_without_it_loads_with_it_off(tmp_path):
    from infill.models.lexicon import build_lexicon, word_weights
    from infill.models.phrases import PAIRS_FILE, build_pairs, load_pairs, pair_counts

    lexicon = build_lexicon(dict(word_weights(LINES, A)), A, beta=1.0)
    path = tmp_path / PAIRS_FILE
    build_pairs(pair_counts(LINES, A), A, lexicon, beta=0.5, prior=0.8).save(path, A)
    back = load_pairs(path, A, lexicon)
    assert back.prior == 0.8 and sorted(back.lengths) == [1, 2, 3, 4, 5, 6, 7, 8]
    table, counts = back.lengths[5]
    got = {A.decode(bytes(v)): c for v, c in zip(table, counts)}
    # εδοξε in four pairs; δημωι in τωι δημωι twice and δημωι επειδη ("," stands between no pair)
    assert got == {"εδοξε": 4.0, "δημωι": 3.0, "δημον": 1.0, "ενεκα": 2.0, "δημοσ": 2.0,
                   "τυχηι": 2.0}
    lines = path.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0].split(" ", 1)[1])
    assert head["prior"] == 0.8
    del head["prior"]                        # a file written before the prior
    path.write_text("\n".join([f"#infill-pairs {json.dumps(head)}"] + lines[1:]) + "\n",
                    encoding="utf-8")
    assert load_pairs(path, A, lexicon).prior == 0.0
    head["prior"] = 2
    path.write_text("\n".join([f"#infill-pairs {json.dumps(head)}"] + lines[1:]) + "\n",
                    encoding="utf-8")
    with pytest.raises(ModelLoadError, match=PAIRS_FILE + ":1: not an infill word-pair"):
        load_pairs(path, A, lexicon)


def test_a_numerals_value_is_no_extent_so_such_an_edition_reads():
    """IOSPE writes a year as <num atLeast="6001">: a value, not a lost stretch's extent (five
    files of the corpus were refused, so `infill train greek --inscriptions` failed)."""
    from infill.data.epidoc import read_edition_text

    tei = ('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" '
           'xml:lang="grc"><ab>ἔτους <num atLeast="6001" atMost="6100">ϛα</num> '
           '<supplied reason="lost">ἔδοξε</supplied></ab></div></body></text></TEI>')
    edition = read_edition_text(tei)
    assert [lac.editor for lac in edition.supplements] == ["ἔδοξε"]
