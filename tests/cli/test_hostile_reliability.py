"""Hostile cases of the reliability round (issue 22), beside the hypothesis-driven suite
(tests/cli/test_hostile_input.py, whose ``check`` they share): deeply nested JSON in every JSON
file infill reads, endless and oversized inputs, absurd Leiden counts and very long Leiden
texts, API inputs that are not text, and answers that used to be silently wrong.

Each case asserts what the user gets: one ``Error:`` line and exit 2 (CLI), an infill exception
(API), or the right answer with its note."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infill.data.leiden import MAX_COUNT, convert
from infill.errors import InfillError, InputError
from click.testing import CliRunner

from infill_cli.main import main

from .test_hostile_input import LIGHT, check

DEEP = "[" * 100_000 + "]" * 100_000
"""JSON nested 100,000 levels deep: Python's json parser overflows its recursion limit."""


# ---- Leiden: counts of thousands of digits, long texts (linear conversion) ---------------------
@LIGHT
@given(digits=st.integers(4, 6000), approx=st.booleans(), zeros=st.integers(0, 5000))
def test_leiden_counts_of_any_number_of_digits(digits, approx, zeros):
    """A count with thousands of digits is refused in one line (int() of more than 4,300 digits
    used to raise ValueError); leading zeros never count."""
    text = f"αβ [{'c.' if approx else '.'}{'0' * zeros}{'9' * digits}] γδ"
    with pytest.raises(InputError, match=f"between 1 and {MAX_COUNT}"):
        convert(text)
    assert convert(f"[.{'0' * zeros}3]").text == "???"


def test_leiden_count_of_5000_digits_on_the_command_line(runner, greek_char_dir):
    r = runner.invoke(main, ["run", "-m", greek_char_dir, "--json", "μῆνιν [." + "9" * 5000 + "]"])
    check(r, json_out=True)
    assert r.exit_code == 2 and "lacuna count" in r.stderr


@pytest.mark.parametrize("n", [1, 7, 20_000])
def test_leiden_conversion_of_long_texts_is_exact(n):
    """Long inputs convert exactly as their pieces do (the conversion was quadratic in the
    spaces of a lacuna; its speed is measured in benchmarks/leiden_speed.py)."""
    assert convert("[" + ". " * n + ".]").text == "?" * (n + 1)
    assert convert("[" + "- " * n + "-]").text == "-" * (n + 1)
    unit = "μῆνιν [.3] ἄειδε [αβ . .] θεὰ ⟦γ⟧ (δε) {ζ} ἔ[- -]ι | "
    one = convert(unit)
    assert one.text == "μῆνιν ??? ἄειδε αβ ?? θεὰ γ δε ἔ--ι "
    assert convert(unit * n).text == one.text * n
    words = "ἄειδε " * n
    assert convert(words + "[...]").text == words + "???"


@pytest.fixture(scope="module")
def runner():
    from click.testing import CliRunner
    return CliRunner()


# ---- deeply nested JSON in every JSON file infill reads -----------------------------------------
def test_deep_json_in_model_files(runner, bert_dir, greek_char_dir, tmp_path):
    for src, name, text in ((bert_dir, "config.json", "the ___ sat"),
                            (greek_char_dir, "charmodel.json", "α?β")):
        d = tmp_path / name
        shutil.copytree(src, d)
        (d / name).write_text(DEEP)
        r = runner.invoke(main, ["run", "-m", str(d), "--json", text])
        check(r, json_out=True)
        assert r.exit_code == 2 and name in r.stderr and "nested 100,000 levels" in r.stderr


def _bench(data: Path, bert_dir: str, out: Path) -> list[str]:
    return ["bench", str(data), "-m", bert_dir, "--out", str(out), "--no-progress", "--methods",
            "hcb-l2r", "--gap-lengths", "1", "--json"]


def test_deep_json_in_bench_files(runner, bert_dir, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"text": "the cat sat on the mat"}\n' + DEEP + "\n")
    r = runner.invoke(main, _bench(data, bert_dir, tmp_path / "a"))
    check(r, json_out=True)
    assert r.exit_code == 2 and "data.jsonl:2" in r.stderr and "nested" in r.stderr
    data.write_text('{"text": "the cat sat on the mat"}\n')
    out = tmp_path / "b"
    assert runner.invoke(main, _bench(data, bert_dir, out)).exit_code == 0
    rows = (out / "results.jsonl").read_text()
    (out / "results.jsonl").write_text(rows + DEEP + "\n")          # a results line on resume
    r = runner.invoke(main, _bench(data, bert_dir, out))
    check(r, json_out=True)
    assert r.exit_code == 2 and "results.jsonl" in r.stderr
    (out / "results.jsonl").write_text(rows)
    (out / "config.json").write_text(DEEP)                          # the run's configuration
    r = runner.invoke(main, _bench(data, bert_dir, out))
    check(r, json_out=True)
    assert r.exit_code == 2 and "config.json" in r.stderr and "nested" in r.stderr


def test_json_reader_bounds(tmp_path):
    from infill.data.files import MAX_JSON_DEPTH, parse_json, read_json
    ok = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert parse_json(ok, "x") == json.loads(ok)
    # brackets inside strings are text, not nesting
    assert parse_json(json.dumps({"k": "[" * 5000 + '\\"{'}), "x") == {"k": "[" * 5000 + '\\"{'}
    with pytest.raises(InputError, match=f"nested {MAX_JSON_DEPTH + 1} levels"):
        parse_json("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1), "x")
    with pytest.raises(InputError, match="not valid JSON"):
        parse_json("{", "x")
    f = tmp_path / "big.json"
    f.write_text(json.dumps(["x" * 100]))
    with pytest.raises(InputError, match="longer than the 64-byte limit"):
        read_json(f, "file", limit=64)


# ---- endless and oversized inputs ---------------------------------------------------------------
@pytest.mark.parametrize("command, device", [("run", "/dev/zero"), ("rescore", "/dev/zero"),
                                             ("sample", "/dev/urandom"), ("run", "-")])
def test_endless_inputs_are_read_with_a_bound(runner, bert_dir, monkeypatch, command, device):
    """/dev/zero reports a size of 0: the reader stops at the input limit instead of reading
    until memory runs out."""
    monkeypatch.setenv("INFILL_MAX_INPUT_BYTES", str(2 ** 20))
    stdin = open("/dev/zero", "rb") if device == "-" else None
    try:
        r = runner.invoke(main, [command, "-m", bert_dir, "--json", "--input", device],
                          input=stdin)
    finally:
        if stdin is not None:
            stdin.close()
    check(r, json_out=True)
    assert r.exit_code == 2 and "longer than the 1 MiB limit" in r.stderr
    assert "INFILL_MAX_INPUT_BYTES" in r.stderr


@pytest.mark.parametrize("command", ["run", "rescore", "sample"])
def test_an_input_past_the_length_limit_is_refused_at_once(runner, bert_dir, tmp_path,
                                                           monkeypatch, command):
    monkeypatch.setenv("INFILL_MAX_INPUT_CHARS", "1000")
    f = tmp_path / "long.txt"
    f.write_text("the cat sat\n" + "the cat " * 200 + "___\n")
    r = runner.invoke(main, [command, "-m", bert_dir, "--json", "--input", str(f)])
    check(r, json_out=True)
    assert r.exit_code == 2 and "line 2 is 1,603 characters long" in r.stderr
    assert "limit of 1,000" in r.stderr and "INFILL_MAX_INPUT_CHARS" in r.stderr
    monkeypatch.setenv("INFILL_MAX_INPUT_CHARS", "lots")
    r = runner.invoke(main, [command, "-m", bert_dir, "--json", "the ___ sat"])
    check(r, json_out=True)
    assert r.exit_code == 2 and "INFILL_MAX_INPUT_CHARS must be a positive" in r.stderr


# ---- silent wrong answers -----------------------------------------------------------------------
@pytest.mark.parametrize("command", ["run", "rescore", "sample"])
def test_fasta_records_without_sequence_are_reported(runner, esm2_tiny_path, tmp_path, command):
    f = tmp_path / "in.fa"
    text = "MK?LAG" if command != "rescore" else "MKVLAG"
    f.write_text(f">a\n{text}\n>empty\n>b\n{text}\n>also-empty\n\n")
    r = runner.invoke(main, [command, "-m", esm2_tiny_path, "--json", "--input", str(f)])
    check(r, json_out=True)
    assert r.exit_code == 2
    assert "'empty' (line 3) has no sequence" in r.stderr
    assert "'also-empty' (line 6) has no sequence" in r.stderr
    ids = [json.loads(ln)["id"] for ln in r.stdout.splitlines() if ln.strip()]
    assert {"a", "b", "empty", "also-empty"} <= set(ids) or {"a", "b"} <= set(ids)


def test_run_reports_the_leiden_notes(runner, greek_char_dir):
    r = runner.invoke(main, ["run", "-m", greek_char_dir, "--json", "μῆνιν(?) [c.3] θεὰ"])
    check(r, json_out=True)
    assert r.exit_code == 0, r.output
    notes = json.loads(r.stdout)["notes"]
    assert any("doubt" in n for n in notes) and any("c.3" in n for n in notes), notes
    r = runner.invoke(main, ["run", "-m", greek_char_dir, "μῆνιν(?) [c.3] θεὰ"])
    assert r.exit_code == 0 and "note: input 1: the editor's doubt" in r.stderr


# ---- the Python API: inputs that are not text / not ids -----------------------------------------
@pytest.mark.parametrize("bad", ["a \ud800 ___ b", "\udcff ___", "___ \udfff"])
def test_fill_refuses_lone_surrogates_per_input(bert, bad):
    import infill
    with pytest.raises(InputError, match="unpaired surrogate|not valid UTF-8"):
        infill.fill(bert, bad)
    good, failed, also = infill.fill_each(bert, ["the ___ sat", bad, "the cat ___"])
    assert "surrogate" in failed.error or "not valid UTF-8" in failed.error
    assert not failed.completions
    assert good.error is None and also.error is None
    assert [c.text for c in good.completions] == [c.text for c in infill.fill(bert, "the ___ sat")[0]]


@pytest.mark.parametrize("make", [
    lambda m: ["a", m.mask_id, "b"], lambda m: [[2, m.mask_id, 3], ["a", m.mask_id]],
    lambda m: [2.0, m.mask_id, 3], lambda m: [True, m.mask_id, 3], lambda m: [2, m.mask_id, 10 ** 9],
    lambda m: [2, m.mask_id, -1], lambda m: [[2, m.mask_id], None], lambda m: [b"ab", m.mask_id]])
def test_decode_refuses_what_is_not_token_ids(bert, make):
    import infill
    with pytest.raises(InfillError, match="token ids|token id"):
        infill.decode(bert, make(bert))


def test_decode_takes_numpy_and_tensor_rows(bert):
    import numpy as np
    import torch

    import infill
    ids = [2, 7, bert.mask_id, 8, 3]
    want = [h.tokens for h in infill.decode(bert, ids)]
    assert [h.tokens for h in infill.decode(bert, np.array(ids))] == want
    assert [h.tokens for h in infill.decode(bert, torch.tensor(ids))] == want
    both = infill.decode(bert, [np.array(ids), torch.tensor(ids)])
    assert [[h.tokens for h in hs] for hs in both] == [want, want]


@pytest.mark.parametrize("grid", [["--gap-lengths", "2,2,2"], ["--gap-lengths", "1,2,1", "--beams", "3,3"],
                                  ["--methods", "hcb-l2r,hcb-l2r,std-l2r", "--gap-lengths", "1"],
                                  ["--methods", "beam,hcb-l2r", "--gap-lengths", "1"]])
def test_bench_with_a_repeated_grid_value_completes(runner, bert_dir, tmp_path, grid):
    """A value repeated in a grid option planned rows that were never written ("complete":
    false, exit 0, every time): each value runs once, with a warning."""
    data = tmp_path / "data.txt"
    data.write_text("the cat sat on the mat\nthe dog sat on the mat\nthe cat sat\n")
    args = ["bench", str(data), "-m", bert_dir, "--out", str(tmp_path / "out"), "--no-progress",
            "-n", "2", "--json", *grid]
    if "--methods" not in grid:
        args += ["--methods", "hcb-l2r"]
    r = runner.invoke(main, args)
    check(r, json_out=True)
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["complete"] is True, summary
    if grid[0] != "--methods" or "hcb-l2r,hcb-l2r" in grid[1]:
        assert "given more than once" in r.stderr
    r = runner.invoke(main, args)                   # the resume agrees with the deduplicated grid
    check(r, json_out=True)
    assert r.exit_code == 0 and json.loads(r.stdout)["complete"] is True


# ---- protein letters that only look like residues -----------------------------------------------
@pytest.mark.parametrize("text", ["MKıT??AKQ", "MKſT??AKQ", "MKﬁ??AKQ", "MKßT??AKQ", "MKＩT??AKQ"])
def test_protein_letters_that_uppercase_to_residues_are_refused(runner, esm2_tiny_path, text):
    """str.upper() maps the dotless ı to I, ſ to S, the ligature ﬁ to FI, ß to SS: such a
    letter was read as a residue without a word. Only ASCII letters are case-folded."""
    r = runner.invoke(main, ["run", "-m", esm2_tiny_path, "--json", text])
    check(r, json_out=True)
    assert r.exit_code == 2 and "invalid residue" in r.stderr and "position 3" in r.stderr
    r = runner.invoke(main, ["run", "-m", esm2_tiny_path, "--json", "mkit??akq"])
    assert r.exit_code == 0, r.output                   # ASCII lower case is still read


def test_antibody_numbering_refuses_look_alike_letters():
    from infill.data.regions import _letters
    for text in ("EVQıVES", "EVQßVES"):
        with pytest.raises(InputError, match="invalid residue .* at position 4"):
            _letters(text, "the sequence")
    assert _letters("evq lves", "x")[0] == "evqlves"


# ---- one bound for the AG iterations, in the library --------------------------------------------
@pytest.mark.parametrize("iterations", [10 ** 9, 20_001, 0, -1, True, 2.5])
def test_ag_iterations_have_one_bound_in_the_library(bert, bert_dir, iterations):
    import torch

    import infill
    from infill.errors import ConfigError
    from infill.joint.constructions import AG_MAX_ITERATIONS, ag
    assert AG_MAX_ITERATIONS == 20_000
    with pytest.raises(ConfigError):
        infill.fill(bert, "the ___ sat", gap=2, decoder="ag", ag_iterations=iterations)
    q = torch.log_softmax(torch.randn(3, 3, dtype=torch.float64), 0)
    with pytest.raises(ConfigError, match="1 to 20,000 iterations"):
        ag(q, q.T.contiguous(), iterations=iterations)
    r = CliRunner().invoke(main, ["joint", "the ___ sat", "-m", bert_dir, "--iterations",
                                  str(iterations)])
    check(r)
    assert r.exit_code == 2 and "--iterations" in r.stderr


@pytest.mark.parametrize("command", ["bench", "train", "joint"])
def test_data_files_that_never_end(runner, bert_dir, tmp_path, monkeypatch, command):
    """A corpus or data file that is a device: read up to the input limit, not 2 GiB."""
    monkeypatch.setenv("INFILL_MAX_INPUT_BYTES", str(2 ** 20))
    args = {"bench": ["bench", "/dev/zero", "-m", bert_dir, "--out", str(tmp_path / "b"),
                      "--no-progress", "--methods", "hcb-l2r", "--gap-lengths", "1", "--json"],
            "train": ["train", "greek", "/dev/zero", "--out", str(tmp_path / "t"),
                      "--no-progress", "--steps", "1", "--json"],
            "joint": ["joint", "--data", "/dev/zero", "-m", bert_dir, "--json"]}[command]
    r = runner.invoke(main, args)
    check(r, json_out=True)
    assert r.exit_code == 2, r.output
    # refused as no regular file, or read up to the limit; never 2 GiB of zeros
    assert "longer than the 1 MiB limit" in r.stderr or "not found" in r.stderr, r.stderr


def test_input_from_a_named_pipe(runner, bert_dir, tmp_path):
    """A FIFO is read like a file once its writer comes (and up to the input limit)."""
    import os
    import threading
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "w") as f:
            f.write("the ___ sat\nthe cat ___\n")

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    r = runner.invoke(main, ["run", "-m", bert_dir, "--json", "--input", str(fifo)])
    writer.join(30)
    check(r, json_out=True)
    assert r.exit_code == 0 and len(r.stdout.splitlines()) == 2


def test_train_json_prints_the_result_alone(runner, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος\n" * 30, encoding="utf-8")
    r = runner.invoke(main, ["train", "greek", str(corpus), "--out", str(tmp_path / "t"),
                             "--hidden", "16", "--layers", "1", "--heads", "2", "--max-length",
                             "32", "--batch-size", "4", "--eval-every", "1", "--steps", "3",
                             "--json"])
    check(r, json_out=True)                 # every stdout line is JSON: no progress lines
    assert r.exit_code == 0 and len(r.stdout.splitlines()) == 1
    assert json.loads(r.stdout)["step"] == 3 and "step 3/3" in r.stderr
