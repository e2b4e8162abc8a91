"""On a terminal, what a person reads fits 100 columns: one short defaults line, the table's
legend the first time only (a marker file remembers it; --legend shows it again), and the
tables of ``infill models``."""
from __future__ import annotations

from click.testing import CliRunner

from infill_cli.io import TABLE_LEGEND
from infill_cli.main import main

TWO = ["--gap", "1", "To be, or not to ___, that is the question.", "The ___ sat on the mat."]


def joined(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines())


def test_legend_the_first_time_on_a_terminal_then_on_request(monkeypatch, legend_marker):
    r = CliRunner().invoke(main, ["run", *TWO])
    assert r.exit_code == 0 and r.stderr == ""                 # a pipe: the table alone
    assert not legend_marker.exists()
    monkeypatch.setattr("infill.progress.interactive", lambda: True)
    first = CliRunner().invoke(main, ["run", "--no-progress", *TWO])
    assert first.exit_code == 0, first.output
    assert joined(first.stderr).count(TABLE_LEGEND) == 1 and legend_marker.exists()
    assert "--legend shows it again" in first.stderr
    assert first.stdout.splitlines()[1].split() == ["rank", "score", "conf", "completion"]
    again = CliRunner().invoke(main, ["run", "--no-progress", *TWO])
    assert again.exit_code == 0 and TABLE_LEGEND[:40] not in again.stderr
    asked = CliRunner().invoke(main, ["run", "--no-progress", "--legend", *TWO])
    assert joined(asked.stderr).count(TABLE_LEGEND) == 1
    for r in (first, again, asked):
        assert all(len(line) <= 100 for line in r.stderr.splitlines()), r.stderr


def test_the_defaults_line_is_short_and_says_where_the_why_is(monkeypatch):
    monkeypatch.setattr("infill.progress.interactive", lambda: True)
    r = CliRunner().invoke(main, ["run", "--no-progress", "To be, or not to ___, that is the "
                                  "question."])
    assert r.exit_code == 0, r.output
    line = r.stderr.splitlines()[0]
    assert line == ("defaults: gap word, scorer hcb, order left-to-right, length-score pll-word "
                    "(builtin:english's)")
    r = CliRunner().invoke(main, ["run", "--no-progress", "-m", "builtin:greek", "μ[..]σα"])
    assert r.stderr.splitlines()[0] == ("defaults: scorer standard, order left-to-right, "
                                        "lacuna-edges letters (builtin:greek's)")
    assert all(len(x) <= 100 for x in r.stderr.splitlines()), r.stderr


def test_models_tables_fit_100_columns():
    listing = CliRunner().invoke(main, ["models"])
    assert listing.exit_code == 0, listing.output
    assert all(len(x) <= 100 for x in listing.stdout.splitlines()), listing.stdout
    assert listing.stdout.splitlines()[0].split() == ["name", "family", "size"]
    one = CliRunner().invoke(main, ["models", "--model", "builtin:greek"])
    assert one.exit_code == 0, one.output
    assert all(len(x) <= 100 for x in one.stdout.splitlines()), one.stdout
    assert "defaults: scorer standard, order left-to-right" in one.stdout
    assert "IOSPE validation split" in joined(one.stdout)          # the why, in full
