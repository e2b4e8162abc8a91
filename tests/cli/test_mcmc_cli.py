"""``infill sample`` / ``infill rescore`` through click's runner on a tiny saved BERT, and the
energies through the real loader checked against transformers directly."""
from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner

from infill_cli.main import main
from infill import mcmc

TEXT = "the ___ sat on the mat"


@pytest.fixture
def runner():
    return CliRunner()


def run_json(runner, bert_dir, *args):
    r = runner.invoke(main, ["sample", "--model", bert_dir, "--json", *args])
    assert r.exit_code == 0, r.output
    return [json.loads(line) for line in r.output.splitlines()]


def by_hand(bert_dir, text: str, kind: str) -> float:
    """E(x) straight from transformers: mask each non-special position in turn."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer
    tok = AutoTokenizer.from_pretrained(bert_dir)
    net = AutoModelForMaskedLM.from_pretrained(bert_dir).eval()
    ids = tok(text)["input_ids"]
    total = 0.0
    with torch.no_grad():
        for t in range(1, len(ids) - 1):                     # skip [CLS] and [SEP]
            x = list(ids)
            x[t] = tok.mask_token_id
            logits = net(input_ids=torch.tensor([x])).logits[0, t].double()
            f = logits if kind == "raw" else torch.log_softmax(logits, -1)
            total -= float(f[ids[t]])
    return total


@pytest.mark.parametrize("kind", ["local", "raw"])
def test_energy_through_the_loader_matches_transformers(bert, bert_dir, kind):
    text = "the cat sat on the mat"
    ids = bert.tokenize(text)
    assert mcmc.scored_positions(bert, ids) == list(range(1, len(ids) - 1))
    assert float(mcmc.energy(bert, ids, kind)[0]) == pytest.approx(by_hand(bert_dir, text, kind),
                                                                   abs=1e-4)


def test_table_output(runner, bert_dir):
    r = runner.invoke(main, ["sample", "--model", bert_dir, "--gap", "2", "--chains", "3",
                             "--sweeps", "4", "--top-k", "5", TEXT])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == f"[1] {TEXT}"
    assert lines[1].startswith("  MH, energy local: 3 chains x 4 sweeps, acceptance ")
    assert lines[2].split() == ["rank", "energy", "visits", "sample"]
    rows = [ln.split() for ln in lines[3:] if ln.strip()]
    assert 1 <= len(rows) <= 5 and [int(x[0]) for x in rows] == list(range(1, len(rows) + 1))
    energies = [float(x[1]) for x in rows]          # ranked by energy, visits beside it
    assert energies == sorted(energies) and all(int(x[2]) >= 1 for x in rows)
    assert all(x[2 + 1] == "the" and x[-4:] == ["sat", "on", "the", "mat"] for x in rows)


def test_json_is_consistent_with_the_api_and_the_energy(runner, bert, bert_dir):
    (row,) = run_json(runner, bert_dir, "--gap", "2", "--chains", "4", "--sweeps", "5",
                      "--top-k", "100", "--seed", "3", TEXT)
    assert row["input"] == TEXT and row["energy"] == "local" and row["chains"] == 4
    assert sum(s["count"] for s in row["samples"]) == 4 * 5 * 2        # every step, every chain
    assert row["distinct"] == len(row["samples"])
    assert 0 <= row["novel_rate"] <= row["acceptance_rate"] <= 1
    assert len(row["energy_trace"]) == 6 and all(len(e) == 4 for e in row["energy_trace"])
    api = mcmc.sample(bert, TEXT, gap=2, chains=4, sweeps=5, seed=3)
    assert [s["tokens"] for s in row["samples"]] == [list(s.tokens) for s in api.samples]
    enc = bert.encode(TEXT, 2)
    for s in row["samples"][:3]:
        ids = list(enc.input_ids)
        for p, t in zip(enc.positions, s["tokens"]):
            ids[p] = t
        assert s["energy"] == pytest.approx(float(mcmc.energy(bert, ids)[0]), abs=1e-6)
        assert s["text"] == bert.render(enc, [s["tokens"]])[0]


def test_seed_determinism_and_options(runner, bert_dir):
    args = ["--gap", "2", "--chains", "2", "--sweeps", "3", "--order", "random", "--top-p",
            "0.9", "--proposal-temperature", "1.5", "--block", "2", TEXT]
    a = run_json(runner, bert_dir, "--seed", "1", *args)
    b = run_json(runner, bert_dir, "--seed", "1", *args)
    c = run_json(runner, bert_dir, "--seed", "2", *args)
    assert a == b and a != c
    assert a[0]["block_sizes"] == [2, 2, 1] and a[0]["top_p"] == 0.9


def test_old_epochs_flag_is_sweeps_with_one_warning(runner, bert_dir):
    new = runner.invoke(main, ["sample", "--model", bert_dir, "--json", "--sweeps", "3", TEXT])
    old = runner.invoke(main, ["sample", "--model", bert_dir, "--json", "--epochs", "3", TEXT])
    assert new.exit_code == old.exit_code == 0, old.output
    assert old.stdout == new.stdout and json.loads(old.stdout)["sweeps"] == 3
    assert old.stderr.count("Warning: --epochs is deprecated; use --sweeps") == 1
    assert "deprecated" not in new.stderr


def test_the_api_refuses_what_the_cli_refuses(bert):
    """The bounds of --sweeps, --chains and --anneal are the request's own rules."""
    from infill.errors import ConfigError
    from infill.requests import MAX_CHAINS, MAX_SWEEPS, MAX_TEMPERATURE
    for field, bad in [("sweeps", MAX_SWEEPS + 1), ("chains", MAX_CHAINS + 1),
                       ("anneal", MAX_TEMPERATURE * 2)]:
        with pytest.raises(ConfigError) as e:
            mcmc.sample(bert, TEXT, **{field: bad})
        assert e.value.field == field
        r = CliRunner().invoke(main, ["sample", "--model", "builtin:english", f"--{field}",
                                      str(bad), TEXT])
        assert r.exit_code == 2 and f"--{field}" in r.stderr


def test_gibbs_anneal_and_raw(runner, bert_dir):
    (g,) = run_json(runner, bert_dir, "--gibbs", "--sweeps", "3", TEXT)
    assert g["acceptance_rate"] == 1.0 and g["gibbs"] is True
    (a,) = run_json(runner, bert_dir, "--gap", "2", "--anneal", "0.02", "--sweeps", "6",
                    "--chains", "2", TEXT)
    assert a["temperatures"] == pytest.approx([1.0, 0.98, 0.96, 0.94, 0.92, 0.90])
    assert a["best"]["energy"] <= min(s["energy"] for s in a["samples"])
    (r,) = run_json(runner, bert_dir, "--energy", "raw", "--sweeps", "2", "--init", "random", TEXT)
    (loc,) = run_json(runner, bert_dir, "--energy", "local", "--sweeps", "2", "--init", "random",
                      TEXT)
    assert r["energy"] == "raw" and r["samples"][0]["energy"] != loc["samples"][0]["energy"]


def test_rescore_ranks_by_energy(runner, bert, bert_dir, tmp_path):
    texts = ["the cat sat on the mat", "the dog sat on the mat", "mat mat mat the", "cat"]
    want = mcmc.rescore(bert, texts)
    r = runner.invoke(main, ["rescore", "--model", bert_dir, "--json", *texts])
    assert r.exit_code == 0, r.output
    ranking = [json.loads(x) for x in r.output.splitlines()]          # JSON Lines, best first
    assert [x["rank"] for x in ranking] == [1, 2, 3, 4]
    assert [x["text"] for x in ranking] == [texts[i] for i in sorted(range(4),
                                                                     key=want.__getitem__)]
    assert [x["energy"] for x in ranking] == pytest.approx(sorted(want))
    f = tmp_path / "beam.txt"
    f.write_text("\n".join(texts) + "\n\n")
    from_file = runner.invoke(main, ["rescore", "--model", bert_dir, "--input", str(f)])
    from_stdin = runner.invoke(main, ["rescore", "--model", bert_dir], input="\n".join(texts))
    assert from_file.exit_code == 0 and from_file.output == from_stdin.output
    rows = from_file.output.splitlines()[1:]
    assert [ln.split()[0] for ln in rows] == ["1", "2", "3", "4"]
    assert rows[0].endswith(ranking[0]["text"])


@pytest.mark.parametrize("args, message, per_input", [
    (["sample", "no marker here"], "no gap marker", True),
    (["sample", "--burn-in", "5", "--sweeps", "5", TEXT], "--burn-in must be less than --sweeps",
     False),
    (["sample", "--model", "/nonexistent/model", TEXT], "no such model", False),
    (["sample", "--marker", "", TEXT], "marker", True),
    (["rescore", "--energy", "raw"], "empty input", False),
    (["rescore", "", "the cat sat"], "nothing to score", True),
    (["rescore", "[CLS] [SEP]"], "nothing to score", True),
])
def test_errors_are_one_line_exit_2(runner, bert_dir, args, message, per_input):
    cmd, rest = args[0], args[1:]
    if "--model" not in rest:
        rest = ["--model", bert_dir, *rest]
    r = runner.invoke(main, [cmd, *rest], input="")
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in r.output and lines[0].startswith("Error: ") and message in lines[0]
    several = args == ["rescore", "", "the cat sat"]            # the one case of two inputs
    assert len(lines) == (2 if several else 1), lines   # one input: no closing count line
    if several:
        assert "1 of 2 text(s) could not be scored" in lines[1]


def test_rescore_never_ranks_an_empty_text_first(runner, bert_dir):
    r = runner.invoke(main, ["rescore", "--model", bert_dir, "--json", "", "the cat sat"])
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert rows[0]["rank"] == 1 and rows[0]["text"] == "the cat sat"
    assert rows[1]["rank"] is None and "nothing to score" in rows[1]["error"]
    assert r.exit_code == 2


def test_usage_errors_exit_2(runner, bert_dir):
    for bad in (["--gap", "0"], ["--top-p", "0"], ["--energy", "global"], ["--chains", "0"]):
        r = runner.invoke(main, ["sample", "--model", bert_dir, *bad, TEXT])
        assert r.exit_code == 2 and "Traceback" not in r.output


# -- long inputs: one behaviour with `infill run` (a context window, one stderr note, `windows`
#    in --json, --no-window refuses) -------------------------------------------------------------
LONG = "the ___ sat" + " on the mat" * 8                 # 29 tokens; the tiny BERT takes 24
LONG_TEXT = "the cat sat" + " on the mat" * 8


def _notes(r):
    return [ln for ln in r.stderr.splitlines() if ln.startswith("note:")]


def _refused(r, verb):
    """--no-window: exit 2, the input's one error line names the length and what --no-window
    turned off (one input: no closing count line); no traceback."""
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in r.output, lines
    assert lines[0].startswith("Error: ") and "maximum length 22 tokens" in lines[0]
    assert "drop --no-window to read it in context windows" in lines[0]


def test_sample_long_input_is_windowed_noted_once_and_recorded(runner, bert, bert_dir):
    r = runner.invoke(main, ["sample", "--model", bert_dir, "--json", "--sweeps", "2",
                             "--chains", "2", LONG, LONG.replace("sat", "lay"), TEXT])
    assert r.exit_code == 0, r.output
    assert _notes(r) == ["note: input longer than the model's maximum length (24 tokens): sampled "
                         "in the longest context window centred on the gaps (--no-window to "
                         "refuse)"]
    assert len(r.stderr.splitlines()) == 1                    # no Python warning besides
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert "window" not in rows[0]                            # one field, as in `infill run`
    (w,) = rows[0]["windows"]
    assert set(w) == {"start", "end", "gaps"} and w["gaps"] == [0]
    assert w["end"] - w["start"] == bert.max_length - 2       # [CLS] and [SEP] kept
    assert rows[2]["windows"] == []
    assert all(s["text"].endswith(" on the mat" * 8) for s in rows[0]["samples"])
    with pytest.warns(UserWarning, match="maximum length"):
        api = mcmc.sample(bert, LONG, sweeps=2, chains=2)
    assert api.windows == rows[0]["windows"]


def test_sample_no_window_refuses(runner, bert, bert_dir):
    _refused(runner.invoke(main, ["sample", "--model", bert_dir, "--no-window", LONG]),
             "input(s) could not be sampled")
    r = runner.invoke(main, ["sample", "--model", bert_dir, "--no-window", "--json", LONG])
    (row,) = [json.loads(x) for x in r.stdout.splitlines()]
    assert row["windows"] == [] and "--no-window" in row["error"]
    # short inputs are untouched by --no-window
    r = runner.invoke(main, ["sample", "--model", bert_dir, "--no-window", "--sweeps", "2", TEXT])
    assert r.exit_code == 0 and r.stderr == ""
    from infill.errors import InputError
    with pytest.raises(InputError, match="maximum length"):
        mcmc.sample(bert, LONG, window=False)


def test_rescore_long_text_is_windowed_noted_once_and_recorded(runner, bert, bert_dir):
    texts = [LONG_TEXT, "the cat sat on the mat", LONG_TEXT.replace("cat", "dog")]
    r = runner.invoke(main, ["rescore", "--model", bert_dir, "--json", *texts])
    assert r.exit_code == 0, r.output
    assert _notes(r) == ["note: input longer than the model's maximum length (24 tokens): each "
                         "token scored in the longest context window centred on it (--no-window "
                         "to refuse)"]
    assert len(r.stderr.splitlines()) == 1
    rows = {x["id"]: x for x in map(json.loads, r.stdout.splitlines())}
    assert "windowed" not in rows["1"]
    (w,) = rows["1"]["windows"]
    n = len(bert.tokenize(LONG_TEXT))
    assert w == {"start": 1, "end": n - 1, "width": bert.max_length - 2,
                 "positions": rows["1"]["tokens"]}
    assert rows["2"]["windows"] == [] and rows["3"]["windows"] == rows["1"]["windows"]
    with pytest.warns(UserWarning, match="2 text"):
        res = mcmc.rescore_each(bert, texts)
    assert [x.windows for x in res] == [rows[i]["windows"] for i in "123"]
    assert res[0].windowed and not res[1].windowed
    r = runner.invoke(main, ["rescore", "--model", bert_dir, *texts])      # table: same note
    assert r.exit_code == 0 and _notes(r) and len(r.stderr.splitlines()) == 1


def test_rescore_no_window_refuses(runner, bert, bert_dir):
    _refused(runner.invoke(main, ["rescore", "--model", bert_dir, "--no-window", LONG_TEXT]),
             "text(s) could not be scored")
    r = runner.invoke(main, ["rescore", "--model", bert_dir, "--no-window", "--json", LONG_TEXT,
                             "the cat sat"])
    assert r.exit_code == 2
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert rows[0]["text"] == "the cat sat" and rows[0]["windows"] == []
    assert rows[1]["rank"] is None and "--no-window" in rows[1]["error"]
    assert rows[1]["windows"] == []
    assert mcmc.rescore_each(bert, [LONG_TEXT], window=False)[0].error.startswith("input is ")


def test_no_window_is_one_shared_option(runner):
    """The same flag, with the same help, on every command that reads inputs."""
    helps = {}
    for cmd in ("run", "sample", "rescore", "joint"):
        r = runner.invoke(main, [cmd, "--help"], terminal_width=1000)
        assert r.exit_code == 0
        (line,) = [ln for ln in r.output.splitlines() if ln.strip().startswith("--no-window")]
        helps[cmd] = " ".join(line.split())
    assert len(set(helps.values())) == 1, helps
