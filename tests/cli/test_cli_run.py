"""``infill run`` through click's test runner: output, JSON schema, every error path."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from infill_cli.main import main


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


def test_fills_are_highlighted_with_color(runner, bert_dir, monkeypatch):
    import click
    r = runner.invoke(main, ["run", "--model", bert_dir, "-k", "1", "--json", "the ___ sat"])
    c = json.loads(r.output)["completions"][0]
    (a, b), = c["spans"]
    assert c["text"][a:b] == c["fills"][0] and c["text"].startswith("the ")
    prob = c["positions"][0]["prob"]
    colour = "green" if prob >= 0.5 else "yellow" if prob >= 0.1 else "red"
    r = runner.invoke(main, ["run", "--model", bert_dir, "-k", "1", "the ___ sat"], color=True)
    assert r.exit_code == 0
    row = r.output.splitlines()[2]
    # exactly the filled characters are styled, by the confidence of their token
    assert row.endswith("the " + "".join(click.style(ch, fg=colour, bold=True)
                                         for ch in c["fills"][0]) + " sat")
    monkeypatch.setenv("NO_COLOR", "1")
    r = runner.invoke(main, ["run", "--model", bert_dir, "-k", "1", "the ___ sat"], color=True)
    assert "\x1b[" not in r.output
    # without colour, a conf column: one digit (tenths of probability) per filled character
    header, row = r.output.splitlines()[1:3]
    assert header.split() == ["rank", "score", "conf", "completion"]
    digit = str(min(9, int(prob * 10)))
    assert row.split()[2] == digit * len(c["fills"][0]) and row.endswith(c["text"])


def test_aligned_view_without_colour_marks_differences(runner, bert_dir):
    r = runner.invoke(main, ["run", "--model", bert_dir, "--json", "-k", "3", "the ___ sat"])
    fills = [c["fills"][0] for c in json.loads(r.output)["completions"]]
    r = runner.invoke(main, ["run", "--model", bert_dir, "--view", "aligned", "-k", "3",
                             "the ___ sat"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    rows = [ln for ln in lines if ln.split()[:1] in (["1"], ["2"], ["3"])]
    assert [ln.split()[0] for ln in rows] == ["1", "2", "3"]
    differs = [ln for ln in lines if ln.split()[:1] == ["differs"]]
    expect = [f for f in fills[1:] if any(a != b for a, b in zip(f.ljust(len(fills[0])), fills[0]))
              or len(f) > len(fills[0])]
    assert len(differs) == len(expect) and all(set(ln.split()[1]) == {"^"} for ln in differs)


def test_json_lines_schema(runner, bert_dir):
    r = runner.invoke(main, ["run", "--model", bert_dir, "--json", "--gap", "2", "--beam", "4",
                             "--top-k", "2", "the ___ sat", "___ on the mat"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in r.output.splitlines()]
    assert [row["input"] for row in rows] == ["the ___ sat", "___ on the mat"]
    for row in rows:
        assert set(row) == {"id", "input", "model", "config", "gap", "windows", "notes", "error",
                            "completions"}
        assert row["config"]["scorer"] == "hcb" and row["config"]["beam_size"] == 4
        assert row["error"] is None and row["windows"] == []
        assert [c["rank"] for c in row["completions"]] == [1, 2]
        for c in row["completions"]:
            assert isinstance(c["text"], str) and isinstance(c["score"], float)
            assert len(c["tokens"]) == 2 and len(c["fills"]) == 1
            assert [p["token_id"] for p in c["positions"]] == c["tokens"]
            assert all(0 < p["prob"] <= 1 and p["logq"] <= 0 for p in c["positions"])
            assert sorted(p["step"] for p in c["positions"]) == [0, 1]


def test_input_file_and_stdin_and_options(runner, bert_dir, tmp_path):
    f = tmp_path / "in.txt"
    f.write_text("the ___ sat\n\n___ dog\n")
    r = runner.invoke(main, ["run", "--model", bert_dir, "--input", str(f), "--json", "-k", "1"])
    assert r.exit_code == 0, r.output
    assert [json.loads(x)["input"] for x in r.output.splitlines()] == ["the ___ sat", "___ dog"]
    r2 = runner.invoke(main, ["run", "--model", bert_dir, "--json", "-k", "1", "--scorer", "hcb",
                              "--order", "best-to-worst", "--marker", "@@", "--pivot-context", "mask"],
                       input="the @@ sat\n")
    assert r2.exit_code == 0, r2.output
    row = json.loads(r2.output)
    assert row["config"]["scorer"] == "hcb" and row["config"]["order"] == "best-to-worst"
    assert row["config"]["pivot_context"] == "mask"
    r2 = runner.invoke(main, ["run", "--model", bert_dir, "--scorer", "standard",
                              "--pivot-context", "mask", "the ___ sat"])
    assert r2.exit_code == 2 and "the standard scorer injects none" in r2.output   # no pivot
    r3 = runner.invoke(main, ["run", "--model", bert_dir, "--json", "--sampling", "nucleus",
                              "--top-p", "0.8", "--seed", "3", "--gap", "2", "the ___ sat"])
    r4 = runner.invoke(main, ["run", "--model", bert_dir, "--json", "--sample", "nucleus", "--top-p",
                              "0.8", "--seed", "3", "--gap", "2", "the ___ sat"])
    assert r3.exit_code == 0 and r3.stdout == r4.stdout         # --sample: deprecated spelling
    assert "--sample is deprecated" in r4.stderr
    assert json.loads(r3.output)["config"]["scorer"] == "standard"
    both = runner.invoke(main, ["run", "--model", bert_dir, "--sampling", "nucleus", "--sample",
                                "pure", "the ___ sat"])
    assert both.exit_code == 2 and "Traceback" not in both.output
    assert both.stderr.splitlines() == [
        "Warning: --sample is deprecated; use --sampling",
        "Error: give --sampling only (not also the deprecated --sample) (see 'main run --help')"]
    r5 = runner.invoke(main, ["run", "--model", bert_dir, "--json", "--pivot", "dog", "--pivot", "cat",
                              "--gap", "2", "the ___ sat"])
    assert r5.exit_code == 0, r5.output


def _assert_clean_error(r, fragment, per_input=False):
    """Exit 2, one error line (a bad input's own line: one input has no closing count), no
    trace."""
    assert r.exit_code == 2, r.output
    err = r.stderr.strip().splitlines()
    assert len(err) == 1, r.stderr
    assert err[0].startswith("Error: ") and fragment in err[0], r.stderr
    if per_input:
        assert err[0].startswith("Error: input 1: ")
    assert "Traceback" not in r.output


@pytest.mark.parametrize("args,fragment,per_input", [
    (["nothing to fill"], "no gap marker", True),
    (["--gap", "40", "the ___ sat"], "maximum length", False),
    (["--no-window", "the ___ sat" + " on the mat" * 8], "maximum length", True),
    (["   "], "empty input", True),
    (["--pivot", "zebra", "the ___"], "not in the vocabulary", False),
    (["--dtype", "fp16", "--device", "cpu", "the ___"], "only supported on CUDA", False),
    (["--allow-nonstandard", "the ___"], "do not apply", False),
])
def test_error_paths(runner, bert_dir, args, fragment, per_input):
    _assert_clean_error(runner.invoke(main, ["run", "--model", bert_dir, *args]), fragment,
                        per_input)


def test_one_bad_input_does_not_stop_the_others(runner, bert_dir, tmp_path):
    f = tmp_path / "in.txt"
    f.write_text("the ___ sat\nno gap here\n___ dog\n")
    r = runner.invoke(main, ["run", "--model", bert_dir, "--input", str(f), "--json", "-k", "1"])
    assert r.exit_code == 2
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [row["id"] for row in rows] == ["1", "2", "3"]
    assert [row["error"] is None for row in rows] == [True, False, True]
    assert "no gap marker" in rows[1]["error"] and rows[1]["completions"] == []
    assert r.stderr.splitlines()[0].startswith("Error: input 2: no gap marker")


def test_top_k_above_the_beam_raises_the_beam(runner, bert_dir):
    r = runner.invoke(main, ["run", "--model", bert_dir, "--json", "-k", "7", "--beam", "3",
                             "the ___"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.output)
    assert len(row["completions"]) == 7 and row["config"]["beam_size"] == 7


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


def test_warnings_are_one_line_each_once(runner, bert_dir, monkeypatch):
    """A library warning reaches the user as one `Warning:` line, once, without Python's file
    and source line (here: bf16 on a CPU without bf16 units, as the loader sees it)."""
    import infill.models.device as device
    monkeypatch.setattr(device, "cpu_supports_bf16", lambda: False)
    r = runner.invoke(main, ["run", "--model", bert_dir, "--device", "cpu", "--dtype", "bf16",
                             "the ___ sat", "a ___ b"])
    assert r.exit_code == 0, r.output
    assert r.stderr.splitlines() == ["Warning: bf16 on this CPU is emulated (no AVX512-BF16/AMX): "
                                     "expect it to be slower than float32"]


def test_bf16_is_native_where_onednn_says_so(monkeypatch):
    import torch

    import infill.models.device as device
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: True)
    assert device.cpu_supports_bf16() is True


def test_a_text_starting_with_a_dash_is_told_to_go_after_double_dash(runner):
    """A Leiden text opening with a lost stretch (- - -) is not an option: the error says how
    to give it, and given after -- it is restored."""
    text = "- - -ος ἀνέθη[.]εν"
    r = runner.invoke(main, ["run", "-m", "builtin:greek", text])
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith("Error: No such option '- '.")
    assert f"(a text that starts with '-' goes after --: main run -- '{text}')" in r.stderr
    assert "goes after --" not in runner.invoke(main, ["run", "--nosuch", "x"]).stderr
    r = runner.invoke(main, ["run", "-m", "builtin:greek", "-k", "1", "--", text])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[2].endswith("- - -ος ἀνέθηκεν")
