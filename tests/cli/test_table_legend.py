"""The table view's columns are explained once per run, on a terminal's stderr only."""
from __future__ import annotations

from click.testing import CliRunner

from infill_cli.io import TABLE_LEGEND
from infill_cli.main import main

TWO = ["--gap", "1", "To be, or not to ___, that is the question.", "The ___ sat on the mat."]


def test_legend_once_on_a_terminal(monkeypatch):
    r = CliRunner().invoke(main, ["run", *TWO])
    assert r.exit_code == 0 and TABLE_LEGEND not in r.output      # a pipe: the table alone
    monkeypatch.setattr("infill_cli.status.interactive", lambda: True)
    r = CliRunner().invoke(main, ["run", "--no-progress", *TWO])
    assert r.exit_code == 0, r.output
    assert r.stderr.count(TABLE_LEGEND) == 1
    assert all(word in TABLE_LEGEND for word in ("score:", "rank score:", "conf:"))
    assert r.stdout.splitlines()[1].split() == ["rank", "score", "conf", "completion"]
