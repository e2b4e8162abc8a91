"""Every command driven with hostile input (hypothesis): random bytes and Unicode (surrogate
escapes of invalid UTF-8 included), option values at the extremes, corrupt files, junk devices,
unwritable outputs, offline hub ids, and injected crashes of the resumable commands. Whatever
comes in, a command ends with exit code 0 or 2, never a Python traceback; on exit 2 stderr holds
nothing but ``Error:`` / ``Warning:`` / ``note:`` lines and ends with an ``Error:`` line; no JSON
line it prints holds a NaN/inf; and a resumed ``bench`` / ``train`` loses and duplicates nothing.

Three tiny random models are driven: a BERT (tests/conftest.py ``bert_dir``), a character model
over the Greek alphabet (``greek_char_dir``) and a fair-esm ESM2 protein model
(``esm2_tiny_path``). Every property is derandomized, so CI runs the same cases each time.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from infill_cli.main import main


def budget(n: int):
    """Hypothesis settings: ``n`` generated cases, derandomized (CI is reproducible)."""
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


SETTINGS = budget(25)        # cheap commands (one model load, a tiny decode)
LIGHT = budget(10)           # cheap commands run once per model / command (parametrized)
HEAVY = budget(10)           # commands that train, bench or sample
CRASH = budget(15)           # injected crashes (two or three runs each)

HUGE = [str(10 ** 9), "2147483648", str(2 ** 63), str(2 ** 64), str(10 ** 30)]
"""Integers that no size option may accept (a run asking for them must be refused at once)."""
EXTREME_INTS = st.sampled_from(["0", "-1", "-5", "1", "3", *HUGE, str(-2 ** 63), str(-2 ** 64),
                                "1e9", "abc", "", " 1", "0x10", "nan"])
EXTREME_FLOATS = st.sampled_from(["nan", "inf", "-inf", "NaN", "Infinity", "-0", "0", "-1",
                                  "1e-300", "1e308", "1e309", "0.5", "1", "2", "x", ""])

# ---- text strategies ----------------------------------------------------------------------------
CHARS = st.characters(exclude_characters="\x00")
"""Characters of a command-line argument: argv holds C strings, so never a NUL."""
BYTES_TEXT = st.binary(max_size=40).map(lambda b: os.fsdecode(b.replace(b"\x00", b"")))
"""What argv holds for arbitrary bytes: invalid UTF-8 arrives as surrogate escapes (U+DC80..)."""
SURROGATE_TEXT = st.text(alphabet=st.one_of(CHARS, st.characters(categories=["Cs"])),
                         max_size=12)
"""Unicode with unpaired surrogates (st.text() alone never draws them): what Windows argv (UTF-16)
or a Python caller of ``main`` can pass."""
ENGLISH_TEXTS = st.one_of(
    st.text(CHARS, max_size=60),
    st.text(alphabet=st.sampled_from(list("the cat sat ___?[MASK]<>#-^ \t")), max_size=40),
    st.sampled_from(["", " ", "___", "the ___ sat", "[MASK]", "\x01", "\ud800x", "[CLS] [SEP]",
                     "a" * 5000 + " ___", "___ " * 40, "?" * 30, "x.txt", "the ___ sat.fa"]))
GREEK_TEXTS = st.one_of(
    st.text(alphabet=st.sampled_from(list("μηνιν αειδε θεὰ Πηληϊάδεω Ἀχιλῆος?-[].#<>_3hé😀中\u0301")),
            max_size=40),
    st.sampled_from(["?", "α?", "μῆνιν ἄει?ε", "[...]", "[.3]", "[αβ]", "μῆνιν [", "? " * 30,
                     "α" * 300 + "?", "hello wor?d", "<", "#", "-", "___", "[MASK]", "😀?中"]))
PROTEIN_TEXTS = st.one_of(
    st.text(alphabet=st.sampled_from(list("ACDEFGHIKLMNPQRSTVWYXBZUO?_<>mask-*acgt ")),
            max_size=40),
    st.sampled_from(["?", "M?", "<mask>", "MK" * 700 + "?", ">x\nMK?L", "___", "M ? K", "<cls>",
                     "<eos><pad>", "X?X", "?" * 50]))
MODEL_TEXTS = {"bert": ENGLISH_TEXTS, "greek": GREEK_TEXTS, "protein": PROTEIN_TEXTS}
KINDS = list(MODEL_TEXTS)


def any_text(kind: str):
    """Text for ``kind``'s model, or any Unicode, or invalid UTF-8 / lone surrogates."""
    return st.one_of(MODEL_TEXTS[kind], BYTES_TEXT, SURROGATE_TEXT)


def not_utf8(text: str) -> bool:
    """Whether a command-line argument could not have come from valid UTF-8."""
    return any("\ud800" <= c <= "\udfff" for c in text)


SEEDS = {"bert": "the ___ sat on the mat ä", "greek": "μῆνιν ἄει?ε θεὰ Πηληϊάδεω",
         "protein": "MKV?LAGHWT", "fasta": ">s1 x\nMKV?LAG\n>s2\nMK", "jsonl": '{"text": "the cat"}'}
ENCODINGS = ["latin-1", "cp1253", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig",
             "utf-8"]


@st.composite
def hostile_file(draw) -> bytes:
    """A text file gone wrong: another encoding, random bytes, a BOM then garbage, NULs, JSON that
    is not a row, or nothing at all."""
    how = draw(st.sampled_from(["encoded", "encoded+bytes", "bytes", "json", "empty", "bom+bytes"]))
    if how == "bytes":
        return draw(st.binary(max_size=300))
    if how == "empty":
        return draw(st.sampled_from([b"", b"\n", b"\n\n  \n", b"\x00" * 8, b"\r\n\r\n"]))
    if how == "json":
        return draw(st.sampled_from([b"{}\n", b"[1]\n", b"NaN\n", b"null\n", b'{"text": 5}\n',
                                     b'{"text": NaN}\n', b'{"text": "\\ud800"}\n', b'"x"\n',
                                     b'{"text": "the cat sat"}\n{"text"\n']))
    if how == "bom+bytes":
        bom = draw(st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\xff\xfe\x00\x00"]))
        return bom + draw(st.binary(max_size=60))
    text = "\n".join(draw(st.lists(st.sampled_from(list(SEEDS.values())), min_size=1,
                                   max_size=4))) + "\n"
    data = text.encode(draw(st.sampled_from(ENCODINGS)), errors="replace")
    if how == "encoded+bytes":
        cut = draw(st.integers(0, len(data)))
        data = data[:cut] + draw(st.binary(min_size=1, max_size=20)) + data[cut:]
    return data


# ---- the checks ---------------------------------------------------------------------------------
def _refuse_constant(name: str):
    raise ValueError(f"non-finite number {name} in JSON output")


def strict_json(line: str):
    """``json.loads`` that refuses NaN/Infinity (plain json.loads ACCEPTS them, as Python's
    json.dumps writes them unless allow_nan=False)."""
    return json.loads(line, parse_constant=_refuse_constant)


def finite_scores(obj) -> bool:
    """No NaN/inf anywhere a number is reported (scores, energies, log q)."""
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, dict):
        return all(finite_scores(v) for v in obj.values())
    if isinstance(obj, list):
        return all(finite_scores(v) for v in obj)
    return True


STDERR_PREFIXES = ("Error:", "Warning:", "note:")


def check(r, json_out: bool | str = False) -> None:
    """Exit 0 or 2, no traceback; on 2, stderr is only Error/Warning/note lines and ends with an
    Error line; every JSON line on stdout is strict JSON with finite numbers.

    ``json_out``: True -- every non-blank stdout line is JSON; "lines" -- the lines that start
    with ``{`` are (``train --json`` also prints progress lines)."""
    assert r.exit_code in (0, 2), (r.exit_code, r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output and "Traceback" not in r.stderr, r.output
    if r.exit_code == 2:
        lines = r.stderr.rstrip("\n").split("\n")
        assert lines[-1].startswith("Error:"), r.stderr
        stray = [ln for ln in lines if not ln.startswith(STDERR_PREFIXES)]
        assert not stray, (stray, r.stderr)
    if json_out:
        for line in r.stdout.split("\n"):
            if not line.strip() or (json_out == "lines" and not line.startswith("{")):
                continue
            obj = strict_json(line)
            assert finite_scores(obj), line


@pytest.fixture(scope="module")
def runner():
    return CliRunner()


@pytest.fixture(scope="module")
def models(bert_dir, greek_char_dir, esm2_tiny_path):
    return {"bert": bert_dir, "greek": greek_char_dir, "protein": esm2_tiny_path}


@pytest.fixture
def no_server(monkeypatch):
    """``infill serve`` builds its app but never listens (uvicorn.run does nothing)."""
    import uvicorn
    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: calls.append(a))
    return calls


def mkfile(factory, name: str, data: bytes) -> Path:
    f = factory.mktemp("in") / name
    f.write_bytes(data)
    return f


GREEK_CORPUS = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος\n" * 30
TRAIN_TINY = ["--hidden", "16", "--layers", "1", "--heads", "2", "--max-length", "32",
              "--batch-size", "4", "--eval-every", "1", "--checkpoint-every", "1"]


# ---- random text: every command, every model ----------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@LIGHT
@given(data=st.data())
def test_run_with_any_text(runner, models, kind, data):
    text = data.draw(any_text(kind))
    r = runner.invoke(main, ["run", "-m", models[kind], "--json", "-k", "2", "--", text])
    check(r, json_out=True)
    if not_utf8(text):
        assert r.exit_code == 2


TEXT_COMMANDS = {
    "sample": ["sample", "--json", "--sweeps", "2", "--chains", "2"],
    "rescore": ["rescore", "--json"],
    "joint": ["joint", "--json", "--joint-size", "4", "--ag-iterations", "3"],
    "check": ["check", "--json"],
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", list(TEXT_COMMANDS))
@LIGHT
@given(data=st.data())
def test_text_commands_with_any_text(runner, models, command, kind, data):
    texts = data.draw(st.lists(any_text(kind), min_size=1, max_size=1 if command == "joint" else 3))
    # "--": a text may start with "-" ("-h" would rightly be a request for help)
    r = runner.invoke(main, [*TEXT_COMMANDS[command], "-m", models[kind], "--", *texts])
    check(r, json_out=True)
    if any(not_utf8(t) for t in texts):
        assert r.exit_code == 2, r.output


@pytest.mark.parametrize("command", ["run", "sample", "rescore"])
@SETTINGS
@given(data=st.binary(max_size=200))
def test_any_bytes_on_stdin(runner, bert_dir, command, data):
    args = {"run": ["run", "--json", "-k", "1"], "sample": TEXT_COMMANDS["sample"],
            "rescore": ["rescore", "--json"]}[command]
    check(runner.invoke(main, [*args, "-m", bert_dir], input=data), json_out=True)


# ---- hostile files: --input, --data, DATA, CORPUS -----------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", ["run", "sample", "rescore"])
@LIGHT
@given(data=hostile_file(), suffix=st.sampled_from([".txt", ".fa", "", ".tsv"]))
def test_input_files_in_any_encoding(runner, models, tmp_path_factory, command, kind, data,
                                     suffix):
    f = mkfile(tmp_path_factory, f"in{suffix}", data)
    args = {"run": ["run", "--json", "-k", "1"], "sample": TEXT_COMMANDS["sample"],
            "rescore": ["rescore", "--json"]}[command]
    check(runner.invoke(main, [*args, "-m", models[kind], "--input", str(f)]), json_out=True)
    if command != "run":   # a lone argument naming an existing .txt/.fa file is that file
        check(runner.invoke(main, [*args, "-m", models[kind], str(f)]), json_out=True)


@LIGHT
@given(data=hostile_file(), suffix=st.sampled_from([".txt", ".jsonl", ".fasta"]))
def test_joint_data_file_in_any_encoding(runner, bert_dir, tmp_path_factory, data, suffix):
    f = mkfile(tmp_path_factory, f"data{suffix}", data)
    check(runner.invoke(main, ["joint", "-m", bert_dir, "--data", str(f), "--no-progress",
                               "--json", "--examples", "2", "--joint-size", "4",
                               "--ag-iterations", "3"]), json_out=True)


@HEAVY
@given(data=hostile_file(), suffix=st.sampled_from([".txt", ".jsonl", ".fa"]))
def test_bench_data_file_in_any_encoding(runner, bert_dir, tmp_path_factory, data, suffix):
    f = mkfile(tmp_path_factory, f"data{suffix}", data)
    r = runner.invoke(main, ["bench", str(f), "-m", bert_dir, "--out", str(f.parent / "out"),
                             "--no-progress", "--json", "--methods", "hcb-l2r", "--gap-lengths", "1",
                             "--examples", "3"])
    check(r, json_out=True)


@HEAVY
@given(data=hostile_file(), family=st.sampled_from(["greek", "protein"]))
def test_train_corpus_in_any_encoding(runner, tmp_path_factory, data, family):
    f = mkfile(tmp_path_factory, "corpus.txt", data)
    r = runner.invoke(main, ["train", family, str(f), "--out", str(f.parent / "o"),
                             "--no-progress", "--json", *TRAIN_TINY, "--steps", "1"])
    check(r, json_out="lines")


@SETTINGS
@given(name=st.one_of(BYTES_TEXT, SURROGATE_TEXT, st.text(CHARS, max_size=20)),
       command=st.sampled_from(["bench", "train", "joint"]))
def test_file_arguments_with_any_name(runner, bert_dir, tmp_path_factory, name, command):
    """DATA / CORPUS / --data naming no file, or with invalid UTF-8 in the name."""
    out = str(tmp_path_factory.mktemp("o") / "out")
    args = {"bench": ["bench", name, "-m", bert_dir, "--out", out, "--no-progress", "--methods",
                      "hcb-l2r", "--gap-lengths", "1", "--examples", "2"],
            "train": ["train", "greek", name, "--out", out, "--no-progress", *TRAIN_TINY,
                      "--steps", "1"],
            "joint": ["joint", "-m", bert_dir, "--data", name, "--no-progress", "--examples", "2",
                      "--joint-size", "4", "--ag-iterations", "3"]}[command]
    check(runner.invoke(main, args))


# ---- pivots -------------------------------------------------------------------------------------
PIVOTS = st.one_of(st.text(CHARS, max_size=6), BYTES_TEXT, SURROGATE_TEXT,
                   st.sampled_from(["?", "#", "<", "-", "[MASK]", "<mask>", "α", "", " ", "all",
                                    "[PAD]", "[CLS]", "<cls>", "X"]))


@pytest.mark.parametrize("kind", KINDS)
@LIGHT
@given(pivots=st.lists(PIVOTS, min_size=1, max_size=2),
       scorer=st.sampled_from(["hcb", "standard", "scramble", "swap"]),
       order=st.sampled_from(["left-to-right", "best-to-worst"]))
def test_run_with_any_pivot(runner, models, kind, pivots, scorer, order):
    text = {"bert": "the ___ sat", "greek": "μῆνιν ἄει?ε", "protein": "MKV?LA"}[kind]
    args = ["run", "-m", models[kind], "--json", "--scorer", scorer, "--order", order, text]
    for p in pivots:
        args += ["--pivot", p]
    r = runner.invoke(main, args)
    check(r, json_out=True)
    if any(not_utf8(p) for p in pivots):
        assert r.exit_code == 2


@HEAVY
@given(pivot=PIVOTS)
def test_bench_with_any_pivot(runner, bert_dir, tmp_path_factory, pivot):
    d = tmp_path_factory.mktemp("bench")
    data = d / "data.txt"
    data.write_text("the cat sat on the mat\nthe dog sat\n")
    r = runner.invoke(main, ["bench", str(data), "-m", bert_dir, "--out", str(d / "out"),
                             "--no-progress", "--json", "--methods", "hcb-l2r", "--gap-lengths", "1",
                             "--pivot", pivot])
    check(r, json_out=True)
    if not_utf8(pivot):
        assert r.exit_code == 2


# ---- option values at the extremes --------------------------------------------------------------
@SETTINGS
@given(opt=st.sampled_from(["--gap", "--beam", "--top-k", "--seed", "--batch-size"]),
       value=EXTREME_INTS)
def test_run_with_extreme_integers(runner, bert_dir, opt, value):
    t0 = time.monotonic()
    r = runner.invoke(main, ["run", "-m", bert_dir, "--json", opt, value, "the ___ sat"])
    check(r, json_out=True)
    if opt in ("--gap", "--beam") and value in HUGE:
        assert r.exit_code == 2 and time.monotonic() - t0 < 30, "huge sizes are refused at once"


@SETTINGS
@given(opt=st.sampled_from(["--temperature", "--top-p"]), value=EXTREME_FLOATS,
       sampling=st.sampled_from(["pure", "temperature", "nucleus"]))
def test_run_sampling_with_extreme_floats(runner, bert_dir, opt, value, sampling):
    r = runner.invoke(main, ["run", "-m", bert_dir, "--json", "--sampling", sampling, opt, value,
                             "--gap", "2", "the ___ sat"])
    check(r, json_out=True)
    if r.exit_code == 0:
        assert strict_json(r.stdout)["completions"], "a run that succeeds returns completions"
    if value.lstrip("-").lower() in ("nan", "inf", "infinity", "1e309"):
        assert r.exit_code == 2


SAMPLE_INTS = st.sampled_from(["0", "-1", "-5", "1", "2", *HUGE, str(-2 ** 63), "1e9", "abc", ""])
"""No value that the CLI would accept as a big job: accepted values are small, big ones must be
refused."""


@HEAVY
@given(opt=st.sampled_from(["--sweeps", "--chains", "--block", "--burn-in", "--seed", "--gap",
                            "--top-k"]),
       value=SAMPLE_INTS, fopt=st.sampled_from(["--proposal-temperature", "--top-p", "--anneal",
                                                 "--target-temperature", "--min-temperature"]),
       fvalue=EXTREME_FLOATS)
def test_sample_with_extreme_options(runner, bert_dir, opt, value, fopt, fvalue):
    args = ["sample", "-m", bert_dir, "--json", "--sweeps", "2", "--chains", "2"]
    t0 = time.monotonic()
    r = runner.invoke(main, args + [opt, value, fopt, fvalue, "the ___ sat"])
    check(r, json_out=True)
    if opt in ("--sweeps", "--chains", "--gap", "--burn-in") and value in HUGE:
        assert r.exit_code == 2 and time.monotonic() - t0 < 30, "huge sizes are refused at once"


@pytest.mark.parametrize("opt", ["--sweeps", "--epochs", "--chains"])
@pytest.mark.parametrize("value", HUGE)
def test_sample_refuses_huge_jobs_at_once(runner, bert_dir, opt, value):
    t0 = time.monotonic()
    r = runner.invoke(main, ["sample", "-m", bert_dir, "--json", opt, value, "the ___ sat"])
    check(r)
    assert r.exit_code == 2 and time.monotonic() - t0 < 30


@HEAVY
@given(opt=st.sampled_from(["--examples", "--batch-size", "--seed"]), value=EXTREME_INTS,
       lists=st.sampled_from([("--gap-lengths", "0"), ("--gap-lengths", "-3"), ("--gap-lengths", "x"), ("--beams", "0"),
                              ("--top-k", "0"), ("--top-k", ""), ("--gap-lengths", "99"),
                              ("--gap-lengths", str(10 ** 9)), ("--beams", str(2 ** 63)),
                              ("--top-k", str(2 ** 64)), ("--beams", "-1"),
                              ("--methods", "nope"), ("--gap-lengths", "1"), ("--gap-lengths", ",,"),
                              ("--bertscore-layers", "0")]))
def test_bench_with_extreme_options(runner, bert_dir, tmp_path_factory, opt, value, lists):
    d = tmp_path_factory.mktemp("bench")
    data = d / "data.txt"
    data.write_text("the cat sat on the mat\nthe dog sat\n")
    check(runner.invoke(main, ["bench", str(data), "-m", bert_dir, "--out", str(d / "out"),
                               "--no-progress", "--json", "--methods", "hcb-l2r", opt, value,
                               *lists]), json_out=True)


@HEAVY
@given(opt=st.sampled_from(["--examples", "--joint-size", "--ag-iterations", "--pairs-per-text",
                            "--min-tokens", "--top-k", "--batch-size", "--gap"]),
       value=EXTREME_INTS, tol=EXTREME_FLOATS, text_mode=st.booleans())
def test_joint_with_extreme_options(runner, bert_dir, tmp_path_factory, opt, value, tol,
                                    text_mode):
    data = tmp_path_factory.mktemp("joint") / "data.txt"
    data.write_text("the cat sat on the mat\nthe dog sat on the cat\n")
    source = ["the ___ ___ on the mat"] if text_mode else \
        ["--data", str(data), "--examples", "2", "--converged-tol", tol]    # a corpus's options
    r = runner.invoke(main, ["joint", "-m", bert_dir, *source, "--no-progress", "--json",
                             "--ag-iterations", "3", opt, value])
    check(r, json_out=True)
    if not text_mode and tol.lstrip("-").lower() in ("nan", "inf", "infinity", "1e309", "0",
                                                       "-1"):
        assert r.exit_code == 2


TRAIN_STEPS_CAP = 10 ** 9
"""train's largest plan (infill.training.loop.MAX_STEPS): above it a plan is refused."""


@HEAVY
@given(opt=st.sampled_from(["--steps", "--batch-size", "--hidden", "--layers", "--heads",
                            "--max-length", "--warmup", "--seed", "--span", "--ff"]),
       value=EXTREME_INTS,
       fopt=st.sampled_from(["--lr", "--mask-rate", "--damage-rate", "--epochs", "--time-budget",
                             "--span-p"]),
       fvalue=EXTREME_FLOATS)
def test_train_with_extreme_options(runner, tmp_path_factory, opt, value, fopt, fvalue):
    d = tmp_path_factory.mktemp("train")
    corpus = d / "c.txt"
    corpus.write_text(GREEK_CORPUS, encoding="utf-8")
    args = ["train", "greek", str(corpus), "--out", str(d / "o"), "--no-progress", "--json",
            *TRAIN_TINY]
    if fopt != "--epochs":
        args += ["--steps", "2"]       # with --epochs, the plan comes from the epochs
    huge_plan = False
    if opt == "--steps":
        try:
            huge_plan = int(value) > TRAIN_STEPS_CAP
        except ValueError:
            pass
        if not huge_plan and value.strip().lstrip("-").isdigit() and int(value) > 2:
            value = "2"                # an accepted plan must stay small
    t0 = time.monotonic()
    r = runner.invoke(main, args + [opt, value, fopt, fvalue])
    check(r, json_out="lines")
    if huge_plan or (fopt in ("--lr", "--epochs", "--time-budget")
                     and fvalue.lstrip("-").lower() in ("nan", "inf", "infinity", "1e309")):
        assert r.exit_code == 2 and time.monotonic() - t0 < 30


@SETTINGS
@given(opt=st.sampled_from(["--port", "--max-text", "--max-beam", "--max-top-k", "--max-gap",
                            "--max-positions", "--max-pending", "--max-batch"]),
       value=EXTREME_INTS, wait=EXTREME_FLOATS, host=st.one_of(st.sampled_from(
           ["127.0.0.1", "localhost", "", "::1"]), BYTES_TEXT))
def test_serve_with_extreme_options(runner, bert_dir, no_server, opt, value, wait, host):
    r = runner.invoke(main, ["serve", "-m", bert_dir, "--host", host, opt, value,
                             "--batch-wait-ms", wait])
    check(r)


@SETTINGS
@given(names=st.lists(st.one_of(BYTES_TEXT, SURROGATE_TEXT, st.text(CHARS, max_size=12),
                                st.sampled_from(["builtin:", "builtin:nope", "builtin:../..",
                                                 "../../etc/passwd", "sapiens", "builtin:\udcff"])),
                      min_size=1, max_size=2))
def test_models_download_with_any_name(runner, names):
    check(runner.invoke(main, ["models", "download", *names]))


def test_models_list_json_is_finite(runner):
    check(runner.invoke(main, ["models", "--json"]), json_out=True)


# ---- environment: devices, unwritable outputs, offline hub ids ----------------------------------
DEVICES = st.one_of(
    st.sampled_from(["mps", "meta", "cuda:99", "cuda:-1", "cuda", "", " ", "xyz", "-1", "0",
                     "cpu:0", "CPU", "cpu,cuda", "vulkan", "xla", "ipu", "hpu", "lazy",
                     "cuda:1e9", "cuda:99999999999999999999", "cpu:99", "\udcff", "cpu\x01"]),
    BYTES_TEXT)


def command_args(command: str, model: str, tmp: Path) -> list[str]:
    """A small, valid invocation of ``command`` (its --device / --out / -m options appended)."""
    data = tmp / "data.txt"
    if not data.exists():
        data.write_text("the cat sat on the mat\nthe dog sat on the cat\n")
        (tmp / "c.txt").write_text(GREEK_CORPUS, encoding="utf-8")
    return {
        "run": ["run", "-m", model, "--json", "the ___ sat"],
        "sample": ["sample", "-m", model, "--json", "--sweeps", "2", "--chains", "2",
                   "the ___ sat"],
        "rescore": ["rescore", "-m", model, "--json", "the cat sat"],
        "bench": ["bench", str(data), "-m", model, "--out", str(tmp / "bench"), "--no-progress",
                  "--json", "--methods", "hcb-l2r", "--gap-lengths", "1"],
        "joint-text": ["joint", "-m", model, "--json", "--ag-iterations", "3", "the ___ ___ sat"],
        "joint-data": ["joint", "-m", model, "--data", str(data), "--json", "--no-progress",
                       "--examples", "2", "--ag-iterations", "3", "--out", str(tmp / "joint")],
        "train": ["train", "greek", str(tmp / "c.txt"), "--out", str(tmp / "train"),
                  "--no-progress", "--json", *TRAIN_TINY, "--steps", "1"],
        "serve": ["serve", "-m", model],
    }[command]


def usable_device(device: str) -> bool:
    """Whether torch names a device by ``device`` that this machine has (CPU, or CUDA here)."""
    import torch
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        return False
    if dev.type == "cuda":
        return torch.cuda.is_available() and (dev.index or 0) < torch.cuda.device_count()
    return dev.type == "cpu"


ALL_COMMANDS = ["run", "sample", "rescore", "bench", "joint-text", "joint-data", "train", "serve"]


@pytest.mark.parametrize("command", ALL_COMMANDS)
@LIGHT
@given(device=DEVICES)
def test_any_device(runner, bert_dir, tmp_path_factory, no_server, command, device):
    r = runner.invoke(main, command_args(command, bert_dir, tmp_path_factory.mktemp("dev"))
                      + ["--device", device])
    check(r, json_out=False if command == "serve" else "lines")
    if not usable_device(device):
        assert r.exit_code == 2, r.output


def _unwritable(tmp: Path) -> list[str]:
    afile = tmp / "a-file"
    afile.write_text("x")
    return ["/proc/infill-nope/out", "/proc/version/out", "/dev/null/out", str(afile),
            str(afile / "below"), "/proc/" + os.fsdecode(b"\xff\xfe/out")]


@pytest.mark.parametrize("command", ["bench", "joint-data", "train"])
def test_unwritable_out(runner, bert_dir, tmp_path, command):
    for out in _unwritable(tmp_path):
        args = command_args(command, bert_dir, tmp_path)
        r = runner.invoke(main, args + ["--out", out])
        check(r, json_out="lines")
        assert r.exit_code == 2, (out, r.output)


@pytest.mark.parametrize("command", ["run", "sample", "rescore", "bench", "joint-text",
                                     "joint-data", "serve"])
@pytest.mark.parametrize("hub_id", ["no-such-org/no-such-model-xyz", "bert-base-nope",
                                    "facebook/esm2_t6_8M_UR50D"])
def test_offline_hub_id(runner, offline_hub, no_server, tmp_path, command, hub_id):
    t0 = time.monotonic()
    r = runner.invoke(main, command_args(command, hub_id, tmp_path))
    check(r, json_out="lines")
    assert r.exit_code == 2 and time.monotonic() - t0 < 20, "offline is detected at once"
    assert len(r.stderr.strip().split("\n")) <= 2, "no retry chatter"


def test_offline_bertscore_model_and_hf_data(runner, bert_dir, offline_hub, tmp_path):
    args = command_args("bench", bert_dir, tmp_path)
    r = runner.invoke(main, args + ["--bertscore-model", "no-such-org/no-such-scorer"])
    check(r, json_out=True)
    r = runner.invoke(main, ["bench", "hf:no-such-org/no-such-dataset", "-m", bert_dir, "--out",
                             str(tmp_path / "hf"), "--no-progress", "--methods", "hcb-l2r",
                             "--gap-lengths", "1"])
    check(r)
    assert r.exit_code == 2


# ---- corrupt files ------------------------------------------------------------------------------
CORRUPTIONS = ["truncate", "list", "garbage", "empty"]


def corrupt(path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif how == "list":
        path.write_text("[1, 2, 3]")
    elif how == "garbage":
        path.write_bytes(bytes(range(256)) * 4)
    else:
        path.write_bytes(b"")


@pytest.mark.parametrize("how", CORRUPTIONS)
@pytest.mark.parametrize("name", ["config.json", "model.safetensors", "tokenizer.json",
                                  "tokenizer_config.json"])
def test_corrupt_model_files(runner, bert_dir, tmp_path, name, how):
    d = tmp_path / "m"
    shutil.copytree(bert_dir, d)
    if not (d / name).exists():
        pytest.skip(f"{name} is not written by this tokenizer")
    corrupt(d / name, how)
    r = runner.invoke(main, ["run", "-m", str(d), "--json", "the ___ sat"])
    check(r, json_out=True)


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_corrupt_char_model_and_fair_esm_checkpoint(runner, tmp_path, how):
    from infill.data.builtins import builtin_path
    for name, weights in (("greek", "model.safetensors"), ("greek", "charmodel.json"),
                          ("protein", "esm2_protein.pt")):
        src = builtin_path(f"builtin:{name}")
        d = tmp_path / f"{name}-{weights}"
        shutil.copytree(src if src.is_dir() else src.parent, d)
        corrupt(d / weights, how)
        r = runner.invoke(main, ["run", "-m", str(d), "--json", "α?β" if name == "greek" else "MK?L"])
        check(r, json_out=True)
        assert r.exit_code == 2


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_corrupt_tiny_char_and_esm_models(runner, greek_char_dir, esm2_tiny_path, tmp_path, how):
    for kind, src, victim in (("greek", greek_char_dir, "model.safetensors"),
                              ("greek", greek_char_dir, "charmodel.json"),
                              ("protein", esm2_tiny_path, "esm2_tiny.pt"),
                              ("protein", esm2_tiny_path, "esm2_tiny-contact-regression.pt")):
        d = tmp_path / f"{kind}-{victim}"
        shutil.copytree(src if Path(src).is_dir() else Path(src).parent, d)
        corrupt(d / victim, how)
        model = str(d) if kind == "greek" else str(d / "esm2_tiny.pt")
        for args in (["run", "--json", "α?β" if kind == "greek" else "MK?L"],
                     ["rescore", "--json", "αβγ" if kind == "greek" else "MKL"]):
            r = runner.invoke(main, [*args, "-m", model])
            check(r, json_out=True)
            if victim != "esm2_tiny-contact-regression.pt":   # not needed to fill gaps
                assert r.exit_code == 2, (victim, r.output)


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_corrupt_bench_config_and_train_checkpoint(runner, bert_dir, tmp_path, how):
    data = tmp_path / "data.txt"
    data.write_text("the cat sat on the mat\n")
    out = tmp_path / "out"
    args = ["bench", str(data), "-m", bert_dir, "--out", str(out), "--no-progress", "--methods",
            "hcb-l2r", "--gap-lengths", "1"]
    assert runner.invoke(main, args).exit_code == 0
    corrupt(out / "config.json", how)
    r = runner.invoke(main, args)
    check(r)
    assert r.exit_code == 2 and "config.json" in r.stderr
    corpus = tmp_path / "c.txt"
    corpus.write_text(GREEK_CORPUS, encoding="utf-8")
    targs = ["train", "greek", str(corpus), "--out", str(tmp_path / "t"), "--no-progress",
             *TRAIN_TINY, "--steps", "2"]
    assert runner.invoke(main, targs).exit_code == 0
    corrupt(tmp_path / "t" / "checkpoint.pt", how)
    r = runner.invoke(main, targs + ["--resume", "--steps", "3"])
    check(r)
    assert r.exit_code == 2 and "checkpoint.pt" in r.stderr


@pytest.fixture(scope="module")
def bench_done(runner, bert_dir, tmp_path_factory):
    """A finished tiny bench: (its arguments without --out, its folder)."""
    d = tmp_path_factory.mktemp("bench-done")
    data = d / "data.txt"
    data.write_text("the cat sat on the mat\nthe dog sat\nthe cat sat on the dog\n")
    args = ["bench", str(data), "-m", bert_dir, "--no-progress", "--methods", "hcb-l2r",
            "--gap-lengths", "1,2", "--batch-size", "2"]
    r = runner.invoke(main, args + ["--out", str(d / "out")])
    assert r.exit_code == 0, r.output
    return args, d / "out"


NOT_ROWS = [b"{}", b"[1]", b"NaN", b"null", b"1", b'"row"', b"true", b'{"key": 1}',
            b"\xff\xfe", b"{", b"Infinity"]


@pytest.mark.parametrize("line", NOT_ROWS + ["wrong-type", "bool-n", "missing-field"])
def test_results_lines_that_are_not_rows(runner, bench_done, tmp_path, line):
    """A complete line of results.jsonl that is not a results row: the resume names the file."""
    args, done = bench_done
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(done / "config.json", out)
    rows = (done / "results.jsonl").read_bytes().split(b"\n")
    if isinstance(line, str):
        row = json.loads(rows[0])
        if line == "wrong-type":
            row["n"] = "1"
        elif line == "bool-n":
            row["n"] = True
        else:
            del row["hits"]
        line = json.dumps(row).encode()
    (out / "results.jsonl").write_bytes(rows[0] + b"\n" + line + b"\n" + rows[1] + b"\n")
    r = runner.invoke(main, args + ["--out", str(out), "--json"])
    check(r, json_out=True)
    assert r.exit_code == 2 and "results.jsonl" in r.stderr


@pytest.mark.parametrize("field,value", [("seconds", "NaN"), ("bleu", "Infinity"),
                                         ("forward_calls", "-Infinity")])
def test_results_rows_with_non_finite_numbers(runner, bench_done, tmp_path, field, value):
    """A row that is well-typed but holds NaN/inf: refused, or the report stays finite."""
    args, done = bench_done
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(done / "config.json", out)
    first, *rest = (done / "results.jsonl").read_text().split("\n")
    row = json.loads(first)
    row[field] = 0.125
    first = json.dumps(row).replace("0.125", value)
    (out / "results.jsonl").write_text("\n".join([first, *rest]))
    r = runner.invoke(main, args + ["--out", str(out), "--json"])
    check(r, json_out=True)
    if r.exit_code == 2:
        assert "results.jsonl" in r.stderr


@pytest.fixture(scope="module")
def train_done(runner, tmp_path_factory):
    """A finished tiny greek training run: (its arguments without --out, its folder)."""
    d = tmp_path_factory.mktemp("train-done")
    corpus = d / "c.txt"
    corpus.write_text(GREEK_CORPUS, encoding="utf-8")
    args = ["train", "greek", str(corpus), "--no-progress", *TRAIN_TINY]
    r = runner.invoke(main, args + ["--steps", "2", "--out", str(d / "out")])
    assert r.exit_code == 0, r.output
    return args, d / "out"


def _mutations():
    import torch
    return {
        "step-str": ("step", "x"), "step-neg": ("step", -1), "step-bool": ("step", True),
        "step-float": ("step", 1.5), "step-none": ("step", None), "step-huge": ("step", 2 ** 70),
        "history-str": ("history", "x"), "history-ints": ("history", [1, 2]),
        "history-empty": ("history", []), "history-bad-entry": ("history", [{"step": "x"}]),
        "py_rng-ints": ("py_rng", [1, 2, 3]), "py_rng-str": ("py_rng", "abc"),
        "torch_rng-float": ("torch_rng", torch.zeros(3)),
        "torch_rng-short": ("torch_rng", torch.zeros(3, dtype=torch.uint8)),
        "model-list": ("model", [1]), "model-empty": ("model", {}),
        "model-junk": ("model", {"x": torch.zeros(1)}), "model-str-values": ("model", {"a": "b"}),
        "optimizer-empty": ("optimizer", {}), "optimizer-junk": ("optimizer", {"state": 1}),
        "scheduler-empty": ("scheduler", {}), "scheduler-junk": ("scheduler", {"last_epoch": "x"}),
        "elapsed-str": ("elapsed", "x"), "elapsed-nan": ("elapsed", float("nan")),
        "family-int": ("family", 5), "family-other": ("family", "english"),
        "masking-none": ("masking", None), "seed-str": ("seed", "0"),
        "static-str": ("static", "x"), "missing-step": ("step", KeyError),
        "top-list": (None, [1, 2]), "top-str": (None, "checkpoint"),
    }


MUTATIONS = ["step-str", "step-neg", "step-bool", "step-float", "step-none", "step-huge",
             "history-str", "history-ints", "history-empty", "history-bad-entry", "py_rng-ints",
             "py_rng-str", "torch_rng-float", "torch_rng-short", "model-list", "model-empty",
             "model-junk", "model-str-values", "optimizer-empty", "optimizer-junk",
             "scheduler-empty", "scheduler-junk", "elapsed-str", "elapsed-nan", "family-int",
             "family-other", "masking-none", "seed-str", "static-str", "missing-step", "top-list",
             "top-str"]


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_train_checkpoint_values_of_the_wrong_type(runner, train_done, tmp_path, mutation):
    """A checkpoint that loads (weights_only) but whose values have the wrong types or shapes:
    the resume is refused naming the file, or (harmless values) it goes on; never a traceback."""
    import torch
    args, done = train_done
    out = tmp_path / "out"
    shutil.copytree(done, out)
    key, value = _mutations()[mutation]
    ck = torch.load(out / "checkpoint.pt", map_location="cpu", weights_only=True)
    if key is None:
        ck = value
    elif value is KeyError:
        del ck[key]
    else:
        ck[key] = value
    torch.save(ck, out / "checkpoint.pt")
    r = runner.invoke(main, args + ["--steps", "3", "--out", str(out), "--resume", "--json"])
    check(r, json_out="lines")
    if mutation in ("step-str", "step-neg", "step-bool", "step-float", "step-none",
                    "history-str", "py_rng-ints", "py_rng-str", "torch_rng-float",
                    "torch_rng-short", "model-list", "model-empty", "model-junk",
                    "elapsed-str", "family-int", "masking-none", "seed-str", "missing-step",
                    "top-list", "top-str"):
        assert r.exit_code == 2 and "checkpoint" in r.stderr, r.output
    if r.exit_code == 0:        # what was resumed is a sound log: one entry per step, in order
        log = _rows(out / "train_log.jsonl")    # strict JSON: no NaN/inf written either
        assert all(isinstance(e, dict) and type(e.get("step")) is int for e in log), log
        steps = [e["step"] for e in log]
        assert steps == sorted(set(steps)), steps


def test_a_pickled_checkpoint_never_runs_code(runner, tmp_path):
    """A checkpoint whose unpickling would call os.system must be refused, not executed."""
    import pickle

    import torch

    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    corpus = tmp_path / "c.txt"
    corpus.write_text(GREEK_CORPUS, encoding="utf-8")
    out = tmp_path / "t"
    targs = ["train", "greek", str(corpus), "--out", str(out), "--no-progress", *TRAIN_TINY,
             "--steps", "2"]
    assert runner.invoke(main, targs).exit_code == 0
    torch.save({"model": Evil()}, out / "checkpoint.pt", pickle_module=pickle)
    r = runner.invoke(main, targs + ["--resume", "--steps", "3"])
    assert r.exit_code == 2 and "checkpoint.pt" in r.stderr
    assert not marker.exists()


# ---- injected crashes: resumed runs lose and duplicate nothing ----------------------------------
VOLATILE_ROW = {"seconds"}
VOLATILE_LOG = {"elapsed_s", "cpu_s"}


def _rows(path: Path) -> list[dict]:
    return [strict_json(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def _stable(entries: list[dict], volatile: set[str]) -> list[dict]:
    return [{k: v for k, v in e.items() if k not in volatile} for e in entries]


JUNK = st.one_of(st.just(b""), st.binary(max_size=30),
                 st.sampled_from([b"\n", b"  \n", b"{}\n", b"[1]\n", b"NaN\n", b"{}", b"NaN",
                                  b'{"key": "x"', b"\xff\xfe\x00\n", b"\x00" * 5]))


@CRASH
@given(cut=st.floats(0, 1), junk=JUNK, duplicate=st.booleans())
def test_bench_resumes_after_a_crash_at_any_byte(runner, bench_done, tmp_path_factory, cut, junk,
                                                 duplicate):
    """Kill mid-write (results.jsonl cut at any byte, maybe a junk line or a repeated row after
    it), then resume: exit 0 with exactly the rows of the uninterrupted run, or exit 2 naming
    results.jsonl (a corrupt complete line)."""
    args, done = bench_done
    reference = _rows(done / "results.jsonl")
    data = (done / "results.jsonl").read_bytes()
    data = data[:int(cut * len(data))]
    if duplicate and data.count(b"\n"):          # a row written twice (before the cut)
        data += data.split(b"\n")[0] + b"\n"
    out = tmp_path_factory.mktemp("crash") / "out"
    out.mkdir()
    shutil.copy(done / "config.json", out)
    (out / "results.jsonl").write_bytes(data + junk)
    r = runner.invoke(main, args + ["--out", str(out), "--json"])
    check(r, json_out=True)
    event(f"bench resume: exit {r.exit_code}")
    if r.exit_code == 2:
        assert "results.jsonl" in r.stderr, r.stderr
        return
    rows = _rows(out / "results.jsonl")
    keys = [row["key"] for row in rows]
    assert len(keys) == len(set(keys)), "a row is duplicated"
    assert _stable(rows, VOLATILE_ROW) == _stable(reference, VOLATILE_ROW)
    assert strict_json(r.stdout)["counts"]["rows"] == len(reference)


@pytest.fixture(scope="module")
def train_crash(runner, tmp_path_factory):
    """(arguments, uninterrupted 4-step log, folder of a run killed after step 3 was logged but
    before its checkpoint: checkpoint.pt of step 2, the log up to step 3, the step-3 checkpoint's
    bytes for a write the kill cut short)."""
    d = tmp_path_factory.mktemp("train-crash")
    corpus = d / "c.txt"
    corpus.write_text(GREEK_CORPUS, encoding="utf-8")
    args = ["train", "greek", str(corpus), "--no-progress", *TRAIN_TINY, "--steps", "4"]
    r = runner.invoke(main, args + ["--out", str(d / "ref")])
    assert r.exit_code == 0, r.output
    reference = _rows(d / "ref" / "train_log.jsonl")
    assert [e["step"] for e in reference] == [0, 1, 2, 3, 4]
    crashed = d / "crashed"
    r = runner.invoke(main, args + ["--out", str(crashed), "--stop-after", "2"])
    assert r.exit_code == 0, r.output
    ck2 = (crashed / "checkpoint.pt").read_bytes()
    r = runner.invoke(main, args + ["--out", str(crashed), "--resume", "--stop-after", "3"])
    assert r.exit_code == 0, r.output
    ck3 = (crashed / "checkpoint.pt").read_bytes()
    (crashed / "checkpoint.pt").write_bytes(ck2)
    assert [e["step"] for e in _rows(crashed / "train_log.jsonl")] == [0, 1, 2, 3]
    return args, reference, crashed, ck3


@CRASH
@given(target=st.sampled_from(["checkpoint.pt", "train_log.jsonl", "checkpoint.pt.tmp",
                               "fresh-start"]),
       cut=st.floats(0, 1), junk=JUNK)
def test_train_resumes_after_a_crash_at_any_byte(runner, train_crash, tmp_path_factory, target,
                                                 cut, junk):
    """Kill between checkpoints (log ahead of the checkpoint), with the checkpoint or the log cut
    at any byte and junk after it, or a checkpoint write cut short (checkpoint.pt.tmp), or a kill
    before the first checkpoint followed by a fresh start: the resumed run exits 2 naming the
    file, or 0 with every step logged exactly once, as in an uninterrupted run."""
    args, reference, crashed, ck3 = train_crash
    out = tmp_path_factory.mktemp("crash") / "out"
    shutil.copytree(crashed, out)
    resume = ["--resume"]
    if target == "checkpoint.pt.tmp":
        (out / target).write_bytes(ck3[:int(cut * len(ck3))] + junk)
    elif target == "fresh-start":               # killed before its first checkpoint
        log = (out / "train_log.jsonl").read_bytes()
        for f in list(out.iterdir()):
            if f.name != "train_log.jsonl":
                shutil.rmtree(f) if f.is_dir() else f.unlink()
        (out / "train_log.jsonl").write_bytes(log[:int(cut * len(log))] + junk)
        resume = []
    else:
        data = (out / target).read_bytes()
        (out / target).write_bytes(data[:int(cut * len(data))] + junk)
    r = runner.invoke(main, args + ["--out", str(out), "--json", *resume])
    check(r, json_out="lines")
    event(f"train resume ({target}): exit {r.exit_code}")
    if r.exit_code == 2:
        assert target in ("checkpoint.pt", "train_log.jsonl") and target in r.stderr, r.stderr
        return
    log = _rows(out / "train_log.jsonl")
    assert [e["step"] for e in log] == [0, 1, 2, 3, 4], "every step logged exactly once"
    assert _stable(log, VOLATILE_LOG) == _stable(reference, VOLATILE_LOG)
