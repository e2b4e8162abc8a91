"""Hostile sizes and numbers in the files a model is read from: every size is checked against
what the format and the machine allow before anything is allocated, and every JSON file is read
with the bounded reader -- one ModelLoadError naming the file (CLI: ``Error: ...``, exit 2),
never a hang, a MemoryError, a RecursionError or a silently wrong answer.

Real loaders, small synthetic files made in tmp_path: the Ithaca fixture checkpoint, the tiny
BERT of tests/conftest.py (``bert_dir``), the tiny Greek character model (``greek_char_dir``)."""
from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import infill
from infill.errors import ModelLoadError
from infill_cli.main import main

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "ithaca"
DEEP = "[" * 100_000 + "]" * 100_000


def one_line_cli(*args) -> str:
    """Run the CLI; assert exit 2, no traceback and one ``Error:`` line; return that line."""
    r = CliRunner().invoke(main, list(map(str, args)))
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1 and len(errors[0]) < 400, r.stderr
    return errors[0]


def load_error(path, match: str) -> str:
    """load_model(path) raises one line matching ``match``; the message."""
    with pytest.raises(ModelLoadError, match=match) as e:
        infill.load_model(str(path), device="cpu")
    assert "\n" not in str(e.value)
    return str(e.value)


# ---- Ithaca: the restricted pickle ----------------------------------------------------------------
class _Declared:
    """Pickles as numpy's array recipe, declaring ``shape`` with no data behind it."""

    def __init__(self, shape, dtype="f4"):
        self.shape, self.dtype = shape, np.dtype(dtype)

    def __reduce__(self):
        from numpy._core import multiarray
        return multiarray._reconstruct, (np.ndarray, self.shape, self.dtype)


def _checkpoint() -> dict:
    return pickle.loads((FIX / "ithaca_tiny_numpy.pkl").read_bytes())


def _write(tmp_path, ck) -> Path:
    p = tmp_path / "ck.pkl"
    p.write_bytes(pickle.dumps(ck, protocol=2))
    return p


@pytest.mark.parametrize("shape, dtype", [((10 ** 6, 10 ** 6), "f4"), ((10 ** 5,), ("f8", (10 ** 4,)))])
def test_ithaca_array_of_huge_declared_shape(tmp_path, shape, dtype):
    ck = _checkpoint()
    ck["params"]["params"]["encoder_norm"]["scale"] = _Declared(shape, dtype)
    p = _write(tmp_path, ck)
    msg = "cannot read Ithaca/Aeneas checkpoint .*ck.pkl.*: an array declares shape .* more than the file"
    load_error(p, msg)
    assert "an array declares shape" in one_line_cli("run", "--model", p, "α?β")
    assert "an array declares shape" in one_line_cli("models", "--model", p)


@pytest.mark.parametrize("key, value, message", [
    ("num_layers", 10 ** 9, "num_layers is 1000000000; Ithaca's BigBird pattern covers at most 12"),
    ("num_heads", 10 ** 9, "num_heads is 1000000000; Ithaca's BigBird pattern covers at most 8"),
    ("num_layers", 2 ** 5000, "num_layers must be a whole number from 1 to .* about 2\\^5001"),
    ("mlp_dim", 2 ** 40, "would need .* GiB of memory, more than the"),
])
def test_ithaca_model_config_sizes(tmp_path, key, value, message):
    ck = _checkpoint()
    ck["model_config"][key] = value
    p = _write(tmp_path, ck)
    load_error(p, message)
    assert "Ithaca checkpoint" in one_line_cli("models", "--model", p)


def test_ithaca_directory_description_nested_deeply(tmp_path):
    from infill.models.ithaca import load_ithaca_checkpoint, save_ithaca
    d = save_ithaca(load_ithaca_checkpoint(FIX / "ithaca_tiny_numpy.pkl", device="cpu").model,
                    tmp_path / "m")
    (d / "ithaca.json").write_text(DEEP)
    load_error(d, "ithaca.json'?: JSON nested 100,000 levels deep")


# ---- Hugging Face config.json -------------------------------------------------------------------
def _hf_copy(bert_dir, tmp_path, **sizes) -> Path:
    d = tmp_path / "bert"
    shutil.copytree(bert_dir, d)
    cfg = json.loads((d / "config.json").read_text())
    (d / "config.json").write_text(json.dumps({**cfg, **sizes}))
    return d


@pytest.mark.parametrize("sizes, message", [
    ({"num_hidden_layers": 10 ** 9}, "1,000,000,000 layers, more than the 1,024"),
    ({"hidden_size": 10 ** 9}, "would need .* GiB of memory"),
    ({"intermediate_size": 2 ** 30, "num_hidden_layers": 1000}, "would need .* GiB of memory"),
    ({"vocab_size": 2 ** 31 - 1, "hidden_size": 4096}, "would need .* GiB of memory"),
    ({"vocab_size": 10 ** 40}, "'vocab_size' must be a whole number from 0 to 2,147,483,647, got a huge"),
    ({"max_position_embeddings": -5}, "'max_position_embeddings' must be a whole number"),
    ({"hidden_size": "32"}, "'hidden_size' must be a whole number"),
])
def test_hf_config_huge_sizes(bert_dir, tmp_path, sizes, message):
    d = _hf_copy(bert_dir, tmp_path, **sizes)
    load_error(d, "config.json.*" + message)
    assert "config.json" in one_line_cli("run", "--model", d, "the ___ sat")


def test_hf_config_sizes_against_infill_max_memory(bert_dir, tmp_path, monkeypatch):
    d = _hf_copy(bert_dir, tmp_path)
    monkeypatch.setenv("INFILL_MAX_MEMORY_GB", "0.000001")     # 1 KiB: the tiny BERT is bigger
    load_error(d, r"more than the 0\.0 GiB allowed \(INFILL_MAX_MEMORY_GB")
    monkeypatch.setenv("INFILL_MAX_MEMORY_GB", "1")
    assert infill.load_model(str(d), device="cpu").vocab_size == 12


# ---- model folder: defaults.json ------------------------------------------------------------------
@pytest.mark.parametrize("gap_json, message", [
    ('"²"', "\"gap\" must be a gap length .*got '²'$"),
    ("9" * 5000, "not valid JSON"),
    ('"' + "9" * 5000 + '"', "\"gap\" must be a gap length .*got '9{30,}\\.\\.\\.$"),
    (DEEP, "JSON nested 100,001 levels deep"),
])
def test_defaults_json(bert_dir, tmp_path, gap_json, message):
    d = _hf_copy(bert_dir, tmp_path)
    (d / "defaults.json").write_text('{"scorer": "hcb", "order": "left-to-right", "why": "w", '
                                     f'"gap": {gap_json}}}')
    from infill.filling.defaults import recommendation
    with pytest.raises(ModelLoadError, match="defaults.json.*" + message) as e:
        recommendation(str(d))
    assert "\n" not in str(e.value)
    assert "defaults.json" in one_line_cli("run", "--model", d, "the ___ sat")


# ---- the corpus memory ----------------------------------------------------------------------------
def _memory_dir(bert_dir, tmp_path, change=None, meta=None) -> Path:
    """A copy of the tiny BERT with a memory.safetensors, its arrays (``change``) or metadata
    (``meta``) altered."""
    from safetensors.numpy import load_file, save_file
    from safetensors import safe_open

    from infill.models.memory import MEMORY_FILE, build_memory, token_classes
    d = _hf_copy(bert_dir, tmp_path)
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat",
              "dog", "##s"]
    classes = token_classes(tokens, frozenset(range(5)), 12, 0)
    build_memory([[2, 5, 6, 7, 8, 5, 9, 3]] * 3, classes, frozenset(range(5)), 12,
                 key_bits=64).save(d / MEMORY_FILE)
    arrays = load_file(str(d / MEMORY_FILE))
    with safe_open(str(d / MEMORY_FILE), "np") as f:
        metadata = f.metadata()
    if change:
        arrays.update(change(arrays))
    save_file(arrays, str(d / MEMORY_FILE), metadata={**metadata, **(meta or {})})
    return d


def test_a_valid_memory_loads(bert_dir, tmp_path):
    assert infill.load_model(str(_memory_dir(bert_dir, tmp_path)), device="cpu").memory is not None


@pytest.mark.parametrize("change, meta, message", [
    (lambda a: {"tokens": -a["tokens"].astype(np.int64)}, None, "a token id is negative"),
    (lambda a: {"counts": np.full(len(a["counts"]), np.nan)}, None, "1-D whole numbers"),
    (lambda a: {"counts": -a["counts"].astype(np.int64)}, None, "its counts run from -"),
    (lambda a: {"classes": a["classes"] + 10 ** 9}, None, "its token classes run from"),
    (None, {"levels": "2,1000000000"}, "more than 64 neighbours"),
    (None, {"levels": ",".join(["2"] * 1000)}, "more than 16"),
    (None, {"levels": "²"}, "not a whole number"),
    (None, {"vocab_size": "9" * 5000}, "not a whole number"),
    (None, {"beta": "inf"}, "beta inf is not a finite number"),
])
def test_hostile_memory_is_one_line_naming_the_file(bert_dir, tmp_path, change, meta, message):
    d = _memory_dir(bert_dir, tmp_path, change, meta)
    load_error(d, "memory.safetensors: .*" + message)
    assert "memory.safetensors" in one_line_cli("run", "--model", d, "the ___ sat")


# ---- antibody metadata, in a folder and in INFILL_CACHE -------------------------------------------
def test_antibody_metadata_nested_deeply(tmp_path, monkeypatch):
    from infill.models.antibody import META_FILE, converted_path
    d = tmp_path / "ab"
    d.mkdir()
    (d / META_FILE).write_text(DEEP)
    load_error(d, "neither an antibody model name .* nor a directory converted by infill")
    cache = tmp_path / "cache"
    (cache / "antiberty").mkdir(parents=True)
    (cache / "antiberty" / META_FILE).write_text(DEEP)
    monkeypatch.setenv("INFILL_CACHE", str(cache))
    assert converted_path("antiberty") is None
    r = CliRunner().invoke(main, ["models"])
    assert r.exit_code == 0 and "Traceback" not in r.output


# ---- the Greek character model and its lexicon ----------------------------------------------------
def _char_copy(greek_char_dir, tmp_path, **config) -> Path:
    d = tmp_path / "char"
    shutil.copytree(greek_char_dir, d)
    meta = json.loads((d / "charmodel.json").read_text())
    meta["config"].update(config)
    (d / "charmodel.json").write_text(json.dumps(meta))
    return d


@pytest.mark.parametrize("config, message", [
    ({"n_layers": 10 ** 9}, "1,000,000,000 layers, more than the 1,024"),
    ({"d_model": 10 ** 9}, "would need .* GiB of memory"),
    ({"d_ff": 2 ** 31 - 1, "n_layers": 1000}, "would need .* GiB of memory"),
    ({"max_length": 10 ** 40}, "config 'max_length' must be a whole number .* got a huge number"),
    ({"dropout": float("nan")}, "config 'dropout' must be a rate in"),
    ({"n_heads": "4"}, "config 'n_heads' must be a whole number"),
])
def test_char_model_config_sizes(greek_char_dir, tmp_path, config, message):
    d = _char_copy(greek_char_dir, tmp_path, **config)
    load_error(d, "charmodel.json:? " + message)
    assert "charmodel.json" in one_line_cli("run", "--model", d, "μῆνιν ἄ?ιδε")


@pytest.mark.parametrize("header", [DEEP, '{"beta": 1e999, "letters": "x"}',
                                    '{"beta": ' + "9" * 5000 + "}"])
def test_lexicon_header(greek_char_dir, tmp_path, header):
    d = _char_copy(greek_char_dir, tmp_path)
    (d / "lexicon.tsv").write_text(f"#infill-lexicon {header}\nαβ\t1\n", encoding="utf-8")
    load_error(d, r"lexicon.tsv:1: not an infill lexicon")
    assert "lexicon.tsv:1" in one_line_cli("run", "--model", d, "μῆνιν ἄ?ιδε")


# ---- a user's phrases.txt beside a model: bounded as inputs are, never waited on ----------------
def _phrases_copy(greek_char_dir, tmp_path) -> Path:
    from infill.data.greek import GREEK
    from infill.models.phrases import PHRASES_FILE, build_phrases

    d = _char_copy(greek_char_dir, tmp_path)
    build_phrases(["εδοξε τηι βουληι και τωι δημωι"], GREEK, sides=((1, 1),), rest=2).save(
        d / PHRASES_FILE, GREEK)
    return d


def test_an_empty_phrases_txt_adds_nothing(greek_char_dir, tmp_path):
    d = _phrases_copy(greek_char_dir, tmp_path)
    bare = infill.load_model(str(d), device="cpu").phrases
    (d / "phrases.txt").write_text("\n  \n", encoding="utf-8")
    with_file = infill.load_model(str(d), device="cpu").phrases
    for name in ("keys", "tokens", "counts"):
        assert np.array_equal(getattr(with_file, name), getattr(bare, name)), name


@pytest.mark.parametrize("text, message", [
    ("hello world\n", r"phrases.txt:1: no letter of this model's alphabet in 'hello world'"),
    ("δήμωι\n12345\n", r"phrases.txt:2: no letter"),
    ("α" * 5_000_000, r"phrases.txt:1: more than 200,000 characters of phrases"),
    ("δημωι ανεθηκε\n" * 100_000, r"phrases.txt:15385: more than 200,000 characters"),
])
def test_phrases_txt_without_greek_or_too_long_is_one_line(greek_char_dir, tmp_path, text,
                                                            message):
    d = _phrases_copy(greek_char_dir, tmp_path)
    (d / "phrases.txt").write_text(text, encoding="utf-8")
    load_error(d, message)
    assert "phrases.txt" in one_line_cli("run", "--model", d, "μῆνιν ἄ?ιδε")


def test_phrases_txt_past_the_input_bound(greek_char_dir, tmp_path, monkeypatch):
    d = _phrases_copy(greek_char_dir, tmp_path)
    (d / "phrases.txt").write_text("δημωι\n" * 1000, encoding="utf-8")
    monkeypatch.setenv("INFILL_MAX_INPUT_BYTES", "4096")
    load_error(d, r"phrases.txt: cannot read the phrases: .* longer than the 4 KiB limit")


@pytest.mark.parametrize("kind", ["folder", "fifo", "dev-zero"])
def test_phrases_txt_that_is_no_file_is_refused_at_once(greek_char_dir, tmp_path, kind):
    import os
    d = _phrases_copy(greek_char_dir, tmp_path)
    where = d / "phrases.txt"
    if kind == "folder":
        where.mkdir()
    elif kind == "fifo":
        os.mkfifo(where)                 # nobody writes: reading it would wait for ever
    else:
        where.symlink_to("/dev/zero")
    load_error(d, r"phrases.txt: not a file of phrases \(a folder, a pipe or a device\)")


def test_phrases_txt_is_counted_once_per_version(greek_char_dir, tmp_path, monkeypatch):
    import os
    from infill.models import phrases

    d = _phrases_copy(greek_char_dir, tmp_path)
    (d / "phrases.txt").write_text("μηνοσ λυκειου\n", encoding="utf-8")
    reads = []
    real = phrases.read_user_phrases
    monkeypatch.setattr(phrases, "read_user_phrases", lambda *a: reads.append(a) or real(*a))
    first = infill.load_model(str(d), device="cpu").phrases
    again = infill.load_model(str(d), device="cpu").phrases
    assert len(reads) == 1
    assert np.array_equal(first.keys, again.keys) and np.array_equal(first.counts, again.counts)
    (d / "phrases.txt").write_text("μηνοσ λυκειου\t5\n", encoding="utf-8")
    st = (d / "phrases.txt").stat()
    os.utime(d / "phrases.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 10 ** 9))
    changed = infill.load_model(str(d), device="cpu").phrases
    assert len(reads) == 2 and changed.counts.sum() > first.counts.sum()
