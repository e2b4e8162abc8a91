"""A long ``infill sample`` shows it moves: the sampler reports each sweep through a
``progress(done, total)`` callable and prints nothing itself; the CLI's second bar follows it."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from infill import mcmc
from infill.jobs.sample import sample_inputs
from infill.progress import choose, follow, progress
from infill_cli.main import main


def test_the_sampler_reports_each_sweep_once(bert, capsys):
    calls = []
    res = mcmc.sample(bert, "the ___ sat on the mat .", sweeps=3, chains=2, seed=0,
                      progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 3), (2, 3), (3, 3)]
    assert len(res.temperatures) == 3
    assert capsys.readouterr() == ("", "")                   # the library prints nothing
    quiet = mcmc.sample(bert, "the ___ sat on the mat .", sweeps=3, chains=2, seed=0)
    assert [s.text for s in quiet.samples] == [s.text for s in res.samples]   # None: nothing


def test_the_job_reports_the_sweeps_of_every_input(bert):
    calls = []
    sample_inputs(bert, ["the ___ sat .", "a ___ ran ."], sweeps=2, chains=1,
                  on_sweep=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 2), (2, 2)] * 2
    old = []
    with pytest.warns(DeprecationWarning, match="'epochs' is now 'sweeps'"), \
            pytest.warns(DeprecationWarning, match="'on_epoch' is now 'on_sweep'"):
        sample_inputs(bert, ["the ___ sat ."], epochs=2, chains=1,
                      on_epoch=lambda done, total: old.append((done, total)))
    assert old == [(1, 2), (2, 2)]                           # the old spellings still work


def test_follow_moves_a_bar_and_restarts_it_per_input():
    with progress(total=2, enabled=True) as bar:
        moved = follow(bar)
        moved(1, 2)
        moved(2, 2)
        assert (bar.n, bar.total) == (2, 2)
        moved(1, 5)                                          # the next input's chains
        assert (bar.n, bar.total) == (1, 5)


def test_the_cli_shows_the_sweeps_when_asked_only(monkeypatch):
    args = ["sample", "--sweeps", "2", "--chains", "1",
            "To be, or not to ___, that is the question."]
    asked = CliRunner().invoke(main, [*args, "--progress"])
    assert asked.exit_code == 0, asked.output
    assert "sweeps:" in asked.stderr and "/2 [" in asked.stderr       # a bar of 2 sweeps
    quiet = CliRunner().invoke(main, args)
    assert "sweeps:" not in quiet.stderr and quiet.stdout == asked.stdout
    monkeypatch.setattr("infill.progress.interactive", lambda: True)
    assert "sweeps:" in CliRunner().invoke(main, args).stderr
    assert "sweeps:" not in CliRunner().invoke(main, [*args, "--no-progress"]).stderr
    choose(None)                        # the flag's choice is not left to the next test
