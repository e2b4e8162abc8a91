"""Every example of every command's ``--help`` (the ``\\b`` blocks of the docstrings) runs, and
its top answer is the one a reader of that field expects: "be" in Hamlet's line, Ἀχιλεὺς /
Ἀχιλῆος in the Iliad's first line, ... The demo inputs (data/demo) are checked the same way."""
from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from infill_cli.main import COMMANDS, main

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


def _commands():
    """(path, command) of every command and subcommand of ``infill``."""
    ctx = click.Context(main)
    for name in COMMANDS:
        command = main.get_command(ctx, name)
        yield name, command
        for sub, child in getattr(command, "commands", {}).items():
            yield f"{name} {sub}", child


def help_examples() -> list[str]:
    """The example lines of every command's help: the lines of its ``\\b`` blocks."""
    found = []
    for _, command in _commands():
        block = False
        for line in (command.help or "").splitlines():
            text = line.strip()
            block = text == "\b" or (block and bool(text))
            if block and text.startswith("infill "):
                found.append(text)
    return found


def top_row(output: str) -> str:
    """The rank-1 row of a table (run, sample, rescore)."""
    return next(line for line in output.splitlines() if line.split()[:1] == ["1"])


def flagged_word(output: str) -> str:
    """``infill check``'s aligned view: the characters marked ^ under its text line."""
    text, marks = output.splitlines()[1:3]
    return "".join(text[i] for i, m in enumerate(marks) if m == "^")


def top_sample(output: str) -> str:
    return json.loads(output.splitlines()[0])["samples"][0]["text"]


WORLD = "To be, or not to be, that is the question."
EXPECTED = {
    'infill run "To be, or not to ___, that is the question."':
        lambda out: top_row(out).endswith(WORLD),
    'infill run --model builtin:greek --view aligned "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ??ς"':
        lambda out: top_row(out).endswith(("Ἀχιλεὺς", "Ἀχιλῆος")),
    'infill run --model builtin:greek "ἄνδρα μοι ἔννεπε, μ[..]σα, πολύτροπον"':
        lambda out: top_row(out).endswith("ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον"),
    'infill run --model builtin:greek -- "- - -ος ἀνέθη[.]εν"':
        lambda out: top_row(out).endswith("- - -ος ἀνέθηκεν"),
    'infill run --model builtin:protein "MAKRVYFLAHGGQVQG???RYFTQKRASEYGLTGWCRNTDNNKVEGEAQ"':
        lambda out: "QVQGVGFRYF" in top_row(out),          # the family's G-x-G-F-R motif
    'infill sample --chains 2 --sweeps 5 "To be, or not to ___, that is the question."':
        lambda out: top_row(out).endswith(WORLD),
    'infill sample --anneal 0.2 --sweeps 5 --json "Friends, Romans, countrymen, lend me your ___"':
        lambda out: top_sample(out).endswith("lend me your ears"),
    'infill rescore "Now is the winter of our discontent" "Now is the winter of our approach"':
        lambda out: top_row(out).endswith("of our discontent"),
    "infill run --json -k 5 \"Now is the winter of our ___\" | jq -r '.completions[].text' | "
    "infill rescore":
        lambda out: top_row(out).endswith("of our discontent"),
    'infill check "To be, or not to be, that is the questoin."':
        lambda out: flagged_word(out) == "questoin",
    'infill check --model builtin:greek "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῖος"':
        lambda out: flagged_word(out) == "ι",   # Ἀχιλῖος: η, as Homer wrote
    "infill check --model builtin:protein --view aligned "
    "MAKRVYFLAHGGQVQGVGFRYFTQKRASEYGLTGWCRNTDNNKVEGEAQGDEDALKKLLKDIDEGPRSARWVKLDQEERDLVQDENDFAVRR":
        lambda out: "W" in flagged_word(out),     # the V71W substitution
    "infill serve": lambda out: out == "127.0.0.1:8000",
    "infill serve --model builtin:greek --model builtin:english --port 8080":
        lambda out: out == "127.0.0.1:8080",
}
"""Each example and the check of its output (stdout; serve: the address it would listen on)."""

SLOW = {'infill sample --anneal 0.2 --sweeps 5 --json "Friends, Romans, countrymen, lend me '
        'your ___"'}
"""Examples of more than a few seconds on two CPU cores."""


def test_every_help_example_has_its_check():
    assert sorted(help_examples()) == sorted(EXPECTED)


def run_line(line: str, monkeypatch) -> str:
    """Run an example as a shell would (stages joined by |); the last stage's stdout."""
    stages, stage = [], []
    for word in shlex.split(line):
        if word == "|":
            stages, stage = stages + [stage], []
        else:
            stage.append(word)
    out = None
    for argv in stages + [stage]:
        out = _stage(argv, out, monkeypatch)
    return out


def _stage(argv: list[str], stdin: str | None, monkeypatch) -> str:
    """One stage: ``infill ...`` through click's runner, another program as a subprocess."""
    if argv[0] != "infill":
        if shutil.which(argv[0]) is None:
            pytest.skip(f"{argv[0]} is not installed")
        return subprocess.run(argv, input=stdin, capture_output=True, text=True, check=True,
                              timeout=60).stdout
    if argv[1] == "serve":
        return _serve(argv[1:], monkeypatch)
    r = CliRunner().invoke(main, argv[1:], input=stdin)
    assert r.exit_code == 0, r.output
    return r.stdout


def _serve(args: list[str], monkeypatch) -> str:
    """``infill serve`` up to listening: its models load and uvicorn is asked for the address."""
    import uvicorn
    asked = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **kw: asked.update(
        app=app, host=host, port=port))
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert asked["app"] is not None
    return f"{asked['host']}:{asked['port']}"


@pytest.mark.parametrize("line", [pytest.param(x, marks=pytest.mark.slow) if x in SLOW else x
                                  for x in EXPECTED])
def test_help_example_gives_the_expected_answer(line, monkeypatch):
    out = run_line(line, monkeypatch)
    assert EXPECTED[line](out), out


@pytest.mark.slow
def test_english_demo_lines_are_filled_as_shakespeare_wrote_them():
    """data/demo/english.txt: each line's top fill (what each shows: data/demo/README.md)."""
    r = CliRunner().invoke(main, ["run", "--json", "-k", "1", "--input",
                                  str(DEMO / "english.txt")])
    assert r.exit_code == 0, r.output
    fills = [json.loads(x)["completions"][0]["fills"] for x in r.stdout.splitlines()]
    assert fills == [["be"], ["thou"], ["stage"], ["ears"], ["Yorick"], ["discontent"]]


def test_greek_demo_lines_restore_homer():
    """data/demo/greek.txt: Peleus' son and ἔθηκε first; the Odyssey's πολύτροπον second, behind
    πολυτρόφοι (as data/demo/README.md says)."""
    r = CliRunner().invoke(main, ["run", "--json", "-k", "2", "--model", "builtin:greek",
                                  "--input", str(DEMO / "greek.txt")])
    assert r.exit_code == 0, r.output
    texts = [[c["text"] for c in json.loads(x)["completions"]] for x in r.stdout.splitlines()]
    assert [t[0].split()[-2 if i == 0 else -1] for i, t in enumerate(texts)] == \
        ["πηληϊαδεω", "εθηκε", "πολυτροφοι"]
    assert texts[2][1].split()[-1] == "πολυτροπον"
