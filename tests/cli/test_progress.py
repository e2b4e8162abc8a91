"""Progress bars: on stderr when it is a terminal or --progress asks, never on a pipe otherwise,
and never on stdout (the results stay clean)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from infill.progress import progress, show
from infill_cli.main import main

TWO = ["To be, or not to ___, that is the question.", "The ___ sat on the mat."]


@pytest.fixture
def terminal(monkeypatch):
    """stderr counts as a terminal."""
    monkeypatch.setattr("infill.progress.interactive", lambda: True)


def test_show_follows_the_terminal_unless_asked(monkeypatch):
    monkeypatch.setattr("infill.progress.interactive", lambda: False)
    assert (show(None), show(True), show(False)) == (False, True, False)
    monkeypatch.setattr("infill.progress.interactive", lambda: True)
    assert (show(None), show(True), show(False)) == (True, True, False)
    with progress(total=3, enabled=False) as bar:
        bar.update(3)                            # a hidden bar takes updates too
        assert bar.disable


def run(*args):
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 0, r.output
    return r


@pytest.mark.parametrize("cmd", [["run", "--json", "--batch-size", "1"],
                                 ["sample", "--json", "--sweeps", "2", "--chains", "2"]])
def test_bar_only_when_asked_or_on_a_terminal(cmd, monkeypatch):
    quiet = run(*cmd, *TWO)
    assert quiet.stderr == ""                    # a pipe: nothing
    asked = run(*cmd, "--progress", *TWO)
    assert f"{cmd[0]}: 100%" in asked.stderr and "2/2" in asked.stderr
    assert [json.loads(line)["input"] for line in asked.stdout.splitlines()] == TWO
    assert asked.stdout == quiet.stdout          # the results are untouched
    monkeypatch.setattr("infill.progress.interactive", lambda: True)
    assert "2/2" in run(*cmd, *TWO).stderr       # a terminal: the bar by default
    assert "2/2" not in run(*cmd, "--no-progress", *TWO).stderr


def test_one_input_has_no_bar(terminal):
    r = run("run", "--json", TWO[0])
    assert "run:" not in r.stderr


def test_rescore_bar_over_a_file_of_texts(tmp_path, monkeypatch):
    """``rescore`` over many texts scores them 32 at a time (the bar moves per call); the
    energies are those of one call over all of them."""
    import math

    from infill import load_model
    from infill.mcmc import rescore_each
    texts = [f"The {w} sat on the mat number {n}." for n in range(8)
             for w in ("cat", "dog", "king", "queen", "fool")]            # 40 texts
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(texts) + "\n")
    quiet = run("rescore", "--json", "--input", str(path))
    assert quiet.stderr == ""
    asked = run("rescore", "--json", "--progress", "--input", str(path))
    assert "rescore: 100%" in asked.stderr and "40/40" in asked.stderr
    assert asked.stdout == quiet.stdout
    rows = sorted((json.loads(line) for line in quiet.stdout.splitlines()),
                  key=lambda r: r["input_index"])
    once = rescore_each(load_model("builtin:english", device="cpu"), texts)
    assert [r["text"] for r in rows] == texts
    assert all(math.isclose(r["energy"], s.energy, rel_tol=1e-5) for r, s in zip(rows, once))
    monkeypatch.setattr("infill.progress.interactive", lambda: True)
    assert "40/40" in run("rescore", "--json", "--input", str(path)).stderr
    assert "rescore:" not in run("rescore", "--json", "--no-progress", "--input", str(path)).stderr
