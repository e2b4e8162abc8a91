"""The shape memory of a character model (infill/models/shapes.py): the mixture against its
definition computed by brute force over word shapes, a formula whose every letter is lost
restored from its layout, the file's round trip (keyed, and refused as the other memory), and
`infill train greek` writing it beside the phrase memory."""
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

import infill
from infill.data.greek import GREEK, normalize
from infill.errors import ModelLoadError
from infill.models.char import save_char
from infill.models.phrases import PHRASES_FILE, USER_PHRASES, build_phrases, load_phrases
from infill.models.shapes import SHAPE_SIDES, SHAPES_FILE, build_shapes, load_shapes
from infill_cli.main import main

A = GREEK
V = A.n_outputs
LINES = ["εδοξε ται βουλαι και τωι δαμωι", "εδοξε τωι δαμωι, επειδη αγαθοσ",
         "ανηρ αγαθοσ ων περι τον δαμον", "ευνοιασ ενεκα και φιλιασ",
         "ο δαμοσ ανεθηκε", "θεοι· εδοξε ται βουλαι και τωι δαμωι", "τω-ι δαμωι ^ ανεθηκεν"]
SIDES = ((2, 0), (0, 3), (4, 4))
OUT = "@"


def _shape(c: str) -> str:
    """Brute force: a character as a shape context reads it."""
    return c if c in " ?" else "x"


def _query(text: str, t: int, left: int, right: int):
    """The shape contexts of character t of ``text``: the ``left`` left of it and the ``right``
    right of its hidden rest, with that rest's length; None past PHRASE_REST."""
    kept = [c for c in text if c not in A.punctuation]
    k = sum(c not in A.punctuation for c in text[:t])
    h = 0
    while k + 1 + h < len(kept) and kept[k + 1 + h] == "?":
        h += 1
    seq = [OUT] * 64 + [_shape(c) for c in kept] + [OUT] * 64
    k += 64
    return "".join(seq[k - left:k]), "".join(seq[k + 1 + h:k + 1 + h + right]), h


def _level_counts(query, left: int, right: int) -> np.ndarray:
    """Brute force: how often each character of LINES sits between contexts of that shape."""
    counts = np.zeros(V)
    want_l, want_r, h = query
    for line in LINES:
        kept = [c for c in line if c not in A.punctuation]
        shapes = [OUT] * 64 + [_shape(c) for c in kept] + [OUT] * 64
        for i, c in enumerate(kept):
            j = i + 64
            if c in "-^":
                continue
            after = shapes[j + 1:j + 1 + h + right] if right else []
            if OUT in after:                  # the rest and the right context stay inside
                continue
            if "".join(shapes[j - left:j]) == want_l and \
                    (not right or "".join(shapes[j + 1 + h:j + 1 + h + right]) == want_r):
                counts[A.char_to_id(c)] += 1
    return counts


def _brute_mixture(text: str, t: int, beta: float) -> np.ndarray:
    mixture = np.zeros(V)
    for left, right in SIDES:
        query = _query(text, t, left, right)
        counts = _level_counts(query if right else (query[0], "", 0), left, right)
        n, u = counts.sum(), (counts > 0).sum()
        if n:
            lam = n / (n + beta * u)
            mixture = lam * counts / n + (1 - lam) * mixture
    return mixture


CASES = [("----- --- ------ --- --- ?????", [25, 27]), ("εδοξε ?ωι δαμωι", [6]),
         ("---- ------ ?? ----", [12, 13]), ("-- ?----", [3]), ("ζζ ζζζζζζζζ ?", [12])]


@pytest.mark.parametrize("text, where", CASES)
def test_the_mixture_is_its_definition_over_word_shapes(text, where, mixture_is):
    memory = build_shapes(LINES, A, sides=SIDES, beta=0.6)
    mixture_is(memory, text, where, lambda t: _brute_mixture(text, t, 0.6), seed=3)


def _near_counts(text: str, t: int, level, near) -> np.ndarray:
    """Brute force: the counts of a level that also reads ``near`` = (a, b) characters beside
    the position and its hidden rest as letters: those must be letters of the training text
    (never ``-``, ``^``, ``?``), equal to the query's, besides the shapes agreeing."""
    (left, right), (a, b) = level, near
    kept = [c for c in text if c not in A.punctuation]
    k = sum(c not in A.punctuation for c in text[:t])
    q_shape = _query(text, t, left, right)
    h = q_shape[2]
    seq = [OUT] * 64 + kept + [OUT] * 64
    q_left = seq[k + 64 - a:k + 64]
    q_right = seq[k + 65 + h:k + 65 + h + b]
    if set("-^?") & set(q_left + q_right):
        return np.zeros(V)
    counts = np.zeros(V)
    for line in LINES:
        raw = [OUT] * 64 + [c for c in line if c not in A.punctuation] + [OUT] * 64
        for i in range(64, len(raw) - 64):
            if raw[i - a:i] == q_left and raw[i + 1 + h:i + 1 + h + b] == q_right and \
                    _level_counts_at(raw, i, q_shape, left, right):
                counts[A.char_to_id(raw[i])] += 1
    return counts


def _level_counts_at(raw, i: int, query, left: int, right: int) -> bool:
    """Whether training character i (of ``raw``, padded) counts at a shape level."""
    if raw[i] in "-^":
        return False
    shapes = [c if c == OUT else _shape(c) for c in raw]
    want_l, want_r, h = query
    if right and OUT in shapes[i + 1:i + 1 + h + right]:
        return False
    return "".join(shapes[i - left:i]) == want_l and \
        (not right or "".join(shapes[i + 1 + h:i + 1 + h + right]) == want_r)


NEAR_SIDES, NEAR = ((4, 4), (4, 4), (6, 6)), ((2, 0), (0, 2), (0, 0))


NEAR_CASES = [("ται βουλαι και τωι ????? επειδη", [19, 21]), ("--- ?????? και", [4, 7]),
              ("τ?ι ------ ---", [1]), ("εδοξε τ?ι ------ ---", [7]),
              ("και τωι ????? -----", [8])]


def _near_mixture(text: str, t: int, beta: float) -> np.ndarray:
    """M at character t of ``text`` over the levels NEAR_SIDES with NEAR, by brute force."""
    m = np.zeros(V)
    for level, near in zip(NEAR_SIDES, NEAR):
        counts = _near_counts(text, t, level, near)
        n, u = counts.sum(), (counts > 0).sum()
        if n:
            lam = n / (n + beta * u)
            m = lam * counts / n + (1 - lam) * m
    return m


@pytest.mark.parametrize("text, where", NEAR_CASES)
def test_levels_that_read_near_letters_are_their_definition(text, where, mixture_is):
    memory = build_shapes(LINES, A, sides=NEAR_SIDES, beta=0.8, near=NEAR)
    mixture_is(memory, text, where, lambda t: _near_mixture(text, t, 0.8), seed=4)


def test_the_near_cases_are_not_vacuous():
    seen = [_near_counts(text, t, level, near).sum() > 0 for text, where in NEAR_CASES
            for t in where for level, near in zip(NEAR_SIDES, NEAR) if any(near)]
    assert sum(seen) >= 2 and not all(seen)


def test_near_letters_need_a_shape_memory_and_a_level_each():
    with pytest.raises(ValueError, match="near letters"):
        build_shapes(LINES, A, sides=((4, 4),), near=((1, 0), (0, 1)))
    with pytest.raises(ValueError, match="near letters"):
        build_shapes(LINES, A, sides=((4, 0),), near=((0, 1),))


def test_the_cases_are_not_vacuous():
    seen = [_brute_mixture(text, t, 1.0).sum() > 0 for text, where in CASES for t in where]
    assert sum(seen) >= 4 and not all(seen)


def test_a_formula_with_every_letter_lost_is_restored_from_its_layout(tiny_char):
    text = "θεοι· ----- --- ------ --- --- ?????"
    shapes = build_shapes(LINES, A, sides=((24, 0), (8, 8)), beta=0.1)
    letters = build_phrases(LINES, A, beta=0.1)
    fill = infill.fill(tiny_char(shapes=shapes, phrases=letters), text, marker="?", top_k=1)
    assert normalize("".join(fill[0][0].fills)) == "δαμωι"
    alone = infill.fill(tiny_char(phrases=letters), text, marker="?", top_k=1)[0][0]
    assert normalize("".join(alone.fills)) != "δαμωι"   # no letter around: the phrases are mute


def test_the_file_round_trips_keyed_and_each_memory_refuses_the_other(tmp_path):
    memory = build_shapes(LINES, A, sides=SIDES, beta=0.5)
    assert memory.keyed == "shapes"
    memory.save(tmp_path / SHAPES_FILE, A)
    back = load_shapes(tmp_path / SHAPES_FILE, A)
    for name in ("keys", "tokens", "counts", "classes"):
        assert np.array_equal(getattr(back, name), getattr(memory, name)), name
    assert (back.sides, back.beta, back.keyed) == (SIDES, 0.5, "shapes")
    with pytest.raises(ModelLoadError, match=f"{SHAPES_FILE}.*keyed by 'shapes', not letters"):
        load_phrases(tmp_path / SHAPES_FILE, A)
    build_phrases(LINES, A).save(tmp_path / PHRASES_FILE, A)
    with pytest.raises(ModelLoadError, match=f"{PHRASES_FILE}.*keyed by 'letters', not shapes"):
        load_shapes(tmp_path / PHRASES_FILE, A)
    (tmp_path / USER_PHRASES).write_text("ηρακλειδησ ηρακλειδου\t3\n", encoding="utf-8")
    more = load_shapes(tmp_path / SHAPES_FILE, A)
    want = build_shapes(LINES + ["ηρακλειδησ ηρακλειδου"], A, [1] * len(LINES) + [3], SIDES,
                        beta=0.5)
    for name in ("keys", "tokens", "counts"):
        assert np.array_equal(getattr(more, name), getattr(want, name)), name


def test_letters_memories_read_as_before():
    memory = build_phrases(LINES, A)
    assert memory.keyed == "letters"
    assert not np.isin(memory.tokens, [A.missing_id, A.unk_id]).any()


def test_a_model_directory_loads_its_shapes_and_a_bad_file_is_exit_2(tmp_path, tiny_char):
    d = save_char(tiny_char().model, tmp_path / "m", A)
    build_shapes(LINES, A).save(d / SHAPES_FILE, A)
    model = infill.load_model(str(d), device="cpu")
    assert model.shapes is not None and model.mixed.index("shapes") < model.mixed.index("phrases")
    build_phrases(LINES, A).save(d / SHAPES_FILE, A)       # a phrase memory under the name
    r = CliRunner().invoke(main, ["run", "-m", str(d), "τωι δα?ωι"])
    assert r.exit_code == 2 and "Traceback" not in r.output and SHAPES_FILE in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_infill_train_greek_writes_the_shape_memory(tmp_path, train_greek):
    out = train_greek([LINES[k % 6] for k in range(120)], tmp_path)
    model = infill.load_model(str(out), device="cpu")
    assert model.shapes is not None and model.shapes.keyed == "shapes"
    assert len(model.shapes.keys) > 0 and model.shapes.sides == SHAPE_SIDES
    bare = tmp_path / "bare"
    shutil.copytree(out, bare)
    (bare / SHAPES_FILE).unlink()
    assert infill.load_model(str(bare), device="cpu").shapes is None


def test_near_letters_round_trip_and_a_bad_near_header_is_one_error(tmp_path):
    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file

    memory = build_shapes(LINES, A, sides=NEAR_SIDES, near=NEAR)
    path = tmp_path / SHAPES_FILE
    memory.save(path, A)
    back = load_shapes(path, A)
    assert back.near == NEAR and np.array_equal(back.keys, memory.keys)
    with safe_open(str(path), framework="np") as f:
        meta = f.metadata()
    for bad in ("1:0", "1:0,0:1,x:1", "0:65,0:0,0:0"):     # a level short; not a number; too far
        save_file(load_file(str(path)), str(path), metadata={**meta, "near": bad})
        with pytest.raises(ModelLoadError, match=SHAPES_FILE):
            load_shapes(path, A)
    build_phrases(LINES, A).save(path, A)
    with safe_open(str(path), framework="np") as f:
        meta = f.metadata()
    save_file(load_file(str(path)), str(path), metadata={**meta, "near": "1:1,1:1,1:1,1:1"})
    with pytest.raises(ModelLoadError, match="near letters need a shape memory"):
        load_phrases(path, A)
