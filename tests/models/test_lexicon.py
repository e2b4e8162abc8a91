"""The lexicon of a character model (infill/models/lexicon.py): word marginals against brute-force
enumeration, the mixture against its definition, the file's round trip and its errors, and a
model trained by `infill train greek` that restores the words of its training text."""
import json
import shutil

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import infill
from infill.data.greek import GREEK, normalize
from infill.errors import ModelLoadError
from infill.models.lexicon import LEXICON_FILE, build_lexicon, load_lexicon, word_weights
from infill_cli.main import main

A = GREEK
V = A.n_outputs
WORDS = {"και": 30.0, "καλοσ": 4.0, "κακοσ": 2.0, "λογοσ": 5.0, "λοχοσ": 1.0, "τον": 9.0,
         "των": 3.0, "θεοσ": 6.0, "θεον": 2.0, "αγαθη": 1.5}


def _ids(text: str) -> list[int]:
    return [A.start_id] + [A.char_to_id(c) if c not in "?" else A.mask_id for c in text]


def _brute(text: str, t: int) -> tuple[np.ndarray, float]:
    """The lexicon's marginal at character t of ``text`` by enumerating every word (module doc)."""
    bound = set(" .,;·0<")
    a = t
    while a > 0 and text[a - 1] not in bound:
        a -= 1
    b = t
    while b < len(text) and text[b] not in bound:
        b += 1
    if (a > 0 and text[a - 1] == "^") or (b < len(text) and text[b] == "^"):
        return np.zeros(V), 0.0
    pattern = text[a:b]
    m, n = np.zeros(V), 0.0
    if not any(c in A.letters for c in pattern):
        return m, 0.0
    for w, c in WORDS.items():
        if len(w) == len(pattern) and all(p in "?-" or p == x for p, x in zip(pattern, w)):
            m[A.char_to_id(w[t - a])] += c
            n += c
    return (m / n if n else m), n


CASES = ["και ?αλοσ θε?σ", "??γοσ τ?ν λογ??", "κα-?σ και", "θε??. αγαθ?", "κ??", "τ?ν^ θ-?ν",
         "?????", "κ?κ?σ"]


@pytest.mark.parametrize("text", CASES)
def test_word_marginals_equal_brute_force_enumeration(text):
    lex = build_lexicon(WORDS, A, beta=1.0)
    ids = np.array([_ids(text)])
    for t, c in enumerate(text):
        if c not in "?-":
            continue
        start, end = lex._words_at(ids, np.array([[t + 1]]))
        want_m, want_n = _brute(text, t)
        if end[0, 0] == start[0, 0]:
            assert want_n == 0
            continue
        m, n = lex.marginal(tuple(ids[0, start[0, 0]:end[0, 0]]), t + 1 - start[0, 0])
        assert n == pytest.approx(want_n)
        np.testing.assert_allclose(m, want_m, atol=1e-12)


def test_the_cases_are_not_vacuous():
    found = [_brute(text, t)[1] > 0 for text in CASES for t, c in enumerate(text) if c == "?"]
    assert sum(found) >= 8 and not all(found)


def test_the_mixture_keeps_unknown_and_missing_sums_to_one_and_follows_its_definition():
    beta = 2.0
    lex = build_lexicon(WORDS, A, beta=beta)
    texts = ["και ?αλοσ θε?σ", "τ?ν^ θεον", "??γοσ κ?"]
    T = max(len(t) for t in texts) + 1
    ids = torch.tensor([_ids(t) + [A.pad_id] * (T - len(t) - 1) for t in texts])
    pos = torch.tensor([[5, 13], [2, 6], [1, 8]])
    logq = torch.log_softmax(torch.randn(3, 2, V, generator=torch.Generator().manual_seed(0)), -1)
    mixed = lex.mix(logq, ids, pos)
    special = torch.zeros(V, dtype=torch.bool)
    special[[A.unk_id, A.missing_id]] = True
    touched = 0
    for r, text in enumerate(texts):
        for j in range(2):
            m, n = _brute(text, int(pos[r, j]) - 1)
            q = logq[r, j].double().exp()
            lam = n / (n + beta)
            want = torch.where(special, q, q[~special].sum() * lam * torch.from_numpy(m)
                               + (1 - lam) * q)
            got = mixed[r, j].double().exp()
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-7)
            assert abs(float(got.sum()) - 1) < 1e-5
            assert torch.equal(mixed[r, j, special], logq[r, j, special])
            touched += n > 0
    assert touched == 4                        # some positions matched words, some did not
    assert torch.equal(mixed[1, 0], logq[1, 0])          # a word touching '^' is no word


def test_word_weights_skip_damaged_words_and_the_file_round_trips(tmp_path):
    w = word_weights(["<και δε -ορκ ου^σ τον, και ?α λογοσ.", "και"], A)
    assert w == {"και": 3, "δε": 1, "τον": 1, "λογοσ": 1}
    lex = build_lexicon(WORDS, A, beta=0.5)
    lex.save(tmp_path / LEXICON_FILE, A)
    lines = (tmp_path / LEXICON_FILE).read_text(encoding="utf-8").splitlines()
    assert lines[1] == "και\t30" and len(lines) == len(WORDS) + 1
    back = load_lexicon(tmp_path / LEXICON_FILE, A)
    assert back.beta == 0.5 and set(back.words) == set(lex.words)
    for n in lex.words:
        got = {A.decode(v): c for v, c in zip(back.words[n], back.weights[n])}
        assert got == {w: c for w, c in WORDS.items() if len(w) == n}


HEAD = '#infill-lexicon {"beta": 1, "letters": "' + A.letters + '"}\n'


@pytest.mark.parametrize("content, where", [
    ("και\t3\n", ":1: not an infill lexicon"),
    ('#infill-lexicon {"beta": 1, "letters": "abc"}\nκαι\t3\n', ":1: not an infill lexicon"),
    (HEAD.replace('"beta": 1', '"beta": -1'), ":1: not an infill"),
    (HEAD + "και\t3\nκαί\t2\n", ":3: expected"),           # an accented word
    (HEAD + "και\tnan\n", ":2: expected"),
    (HEAD + "και 3\n", ":2: expected"),
    (b"\xff\xfe", ": cannot read the lexicon"),
])
def test_a_bad_lexicon_is_one_line_naming_file_and_line(tmp_path, content, where):
    path = tmp_path / LEXICON_FILE
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    with pytest.raises(ModelLoadError, match=LEXICON_FILE + where):
        load_lexicon(tmp_path / LEXICON_FILE, A)


GREEK_WORDS = ["φιλοξενοσ", "ηρακλειδησ", "μητροδωροσ", "διονυσιοσ", "αρτεμιδωροσ", "απολλωνιοσ",
               "καλλιστρατοσ", "θεοδοσιοσ"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory, train_greek):
    """A 1-layer greek model trained 3 steps by the CLI on lines of eight long names."""
    rng = np.random.default_rng(0)
    lines = [" ".join(GREEK_WORDS[j] for j in rng.integers(len(GREEK_WORDS), size=6))
             for _ in range(200)]
    return train_greek(lines, tmp_path_factory.mktemp("lex"), steps=3, batch_size=8)


def test_a_trained_greek_model_restores_the_words_of_its_training_text(trained, tmp_path):
    model = infill.load_model(str(trained), device="cpu")
    assert model.lexicon is not None
    head = (trained / LEXICON_FILE).read_text(encoding="utf-8").splitlines()
    assert {line.split("\t")[0] for line in head[1:]} == set(GREEK_WORDS)
    bare = tmp_path / "bare"
    shutil.copytree(trained, bare)
    for memory in (LEXICON_FILE, "phrases.safetensors", "shapes.safetensors", "pairs.tsv"):
        (bare / memory).unlink()
    network = infill.load_model(str(bare), device="cpu")
    assert network.lexicon is None
    gapped = [(w[3:6], f"{GREEK_WORDS[k - 1]} {w[:3]}???{w[6:]} και")
              for k, w in enumerate(GREEK_WORDS)]
    right = {}
    for name, m in (("lexicon", model), ("network", network)):
        fills = infill.fill(m, [g for _, g in gapped], top_k=1)
        right[name] = sum(normalize(c[0].fills[0]) == gold for (gold, _), c in zip(gapped, fills))
    assert right["lexicon"] == len(GREEK_WORDS)       # each pattern fits exactly one name
    assert right["network"] < len(GREEK_WORDS) // 2   # three steps taught the network little


def test_a_bad_lexicon_beside_a_model_is_one_line_and_exit_2(trained, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(trained, bad)
    lines = (bad / LEXICON_FILE).read_text(encoding="utf-8").splitlines()
    (bad / LEXICON_FILE).write_text("\n".join(lines[:2] + ["λογοσ\t-1"]) + "\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["run", "-m", str(bad), "φιλο??νοσ"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert f"{LEXICON_FILE}:3: expected 'word<TAB>weight'" in r.output
    assert json.loads((bad / "train_info.json").read_text())["family"] == "greek"
