"""``infill run`` through click's test runner: output, JSON schema, every error path."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cli.main import main


@pytest.fixture
def runner():
    return CliRunner()


def test_table_output_ranks_and_fills(runner, bert_dir):
    r = runner.invoke(main, ["run", "--model", bert_dir, "--gap", "2", "--top-k", "3",
                             "the ___ sat on the ___."])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == "[1] the ___ sat on the ___."
    ranks = [ln.split()[0] for ln in lines[2:5]]
    assert ranks == ["1", "2", "3"]
    scores = [float(ln.split()[1]) for ln in lines[2:5]]
    assert scores == sorted(scores, reverse=True)
    assert all(" sat on the " in ln for ln in lines[2:5])


def test_fills_are_highlighted_with_color(runner, bert_dir):
    r = runner.invoke(main, ["run", "--model", bert_dir, "-k", "1", "the ___ sat"], color=True)
    assert r.exit_code == 0
    row = r.output.splitlines()[2]
    assert "\x1b[32m\x1b[1m" in row and row.count("\x1b[0m") == 1


def test_json_lines_schema(runner, bert_dir):
    r = runner.invoke(main, ["run", "--model", bert_dir, "--json", "--gap", "2", "--beam", "4",
                             "--top-k", "2", "the ___ sat", "___ on the mat"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in r.output.splitlines()]
    assert [row["input"] for row in rows] == ["the ___ sat", "___ on the mat"]
    for row in rows:
        assert set(row) == {"input", "model", "scorer", "order", "beam", "sample", "seed", "completions"}
        assert row["scorer"] == "hcb" and row["beam"] == 4
        assert [c["rank"] for c in row["completions"]] == [1, 2]
        for c in row["completions"]:
            assert isinstance(c["text"], str) and isinstance(c["score"], float)
            assert len(c["tokens"]) == 2 and len(c["fills"]) == 1


def test_input_file_and_stdin_and_options(runner, bert_dir, tmp_path):
    f = tmp_path / "in.txt"
    f.write_text("the ___ sat\n\n___ dog\n")
    r = runner.invoke(main, ["run", "--model", bert_dir, "--input", str(f), "--json", "-k", "1"])
    assert r.exit_code == 0, r.output
    assert [json.loads(x)["input"] for x in r.output.splitlines()] == ["the ___ sat", "___ dog"]
    r2 = runner.invoke(main, ["run", "--model", bert_dir, "--json", "-k", "1", "--scorer", "standard",
                              "--order", "best-to-worst", "--marker", "@@", "--pivot-context", "mask"],
                       input="the @@ sat\n")
    assert r2.exit_code == 0, r2.output
    row = json.loads(r2.output)
    assert row["scorer"] == "standard" and row["order"] == "best-to-worst"
    r3 = runner.invoke(main, ["run", "--model", bert_dir, "--json", "--sample", "nucleus", "--top-p",
                              "0.8", "--seed", "3", "--gap", "2", "the ___ sat"])
    r4 = runner.invoke(main, ["run", "--model", bert_dir, "--json", "--sample", "nucleus", "--top-p",
                              "0.8", "--seed", "3", "--gap", "2", "the ___ sat"])
    assert r3.exit_code == 0 and r3.output == r4.output
    assert json.loads(r3.output)["scorer"] == "standard"
    r5 = runner.invoke(main, ["run", "--model", bert_dir, "--json", "--pivot", "dog", "--pivot", "cat",
                              "--gap", "2", "the ___ sat"])
    assert r5.exit_code == 0, r5.output


def _assert_clean_error(r, fragment):
    assert r.exit_code == 2, r.output
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("Error: ") and fragment in err[0], r.stderr
    assert "Traceback" not in r.output


@pytest.mark.parametrize("args,fragment", [
    (["nothing to fill"], "no gap marker"),
    (["--gap", "40", "the ___ sat"], "maximum length"),
    (["   "], "empty input"),
    (["--top-k", "9", "--beam", "3", "the ___"], "cannot exceed"),
    (["--pivot", "zebra", "the ___"], "not in the vocabulary"),
    (["--dtype", "fp16", "--device", "cpu", "the ___"], "only supported on CUDA"),
    (["--allow-nonstandard", "the ___"], "do not apply"),
])
def test_error_paths(runner, bert_dir, args, fragment):
    _assert_clean_error(runner.invoke(main, ["run", "--model", bert_dir, *args]), fragment)


def test_unknown_model_and_offline_hub(runner, offline_hub, tmp_path):
    _assert_clean_error(runner.invoke(main, ["run", "--model", str(tmp_path / "nope"), "a ___"]),
                        "no such model")
    _assert_clean_error(runner.invoke(main, ["run", "--model", str(tmp_path), "a ___"]),
                        "no config.json")
    r = runner.invoke(main, ["run", "--model", "bert-base-cased", "a ___"])
    _assert_clean_error(r, "'bert-base-cased'")
    assert "--model DIR" in r.stderr


def test_empty_input_file(runner, bert_dir, tmp_path):
    f = tmp_path / "empty.txt"
    f.write_text("\n  \n")
    _assert_clean_error(runner.invoke(main, ["run", "--model", bert_dir, "--input", str(f)]), "empty input")
