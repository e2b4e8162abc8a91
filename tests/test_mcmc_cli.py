"""``infill sample`` / ``infill rescore`` through click's runner on a tiny saved BERT, and the
energies through the real loader checked against transformers directly."""
from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner

from cli.main import main
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
                             "--epochs", "4", "--top", "5", TEXT])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == f"[1] {TEXT}"
    assert lines[1].startswith("  MH, energy local: 3 chains x 4 epochs, acceptance ")
    assert lines[2].split() == ["rank", "visits", "energy", "sample"]
    rows = [ln.split() for ln in lines[3:] if ln.strip()]
    assert 1 <= len(rows) <= 5 and [int(x[0]) for x in rows] == list(range(1, len(rows) + 1))
    visits = [int(x[1]) for x in rows]
    assert visits == sorted(visits, reverse=True)
    assert all(x[2 + 1] == "the" and x[-4:] == ["sat", "on", "the", "mat"] for x in rows)


def test_json_is_consistent_with_the_api_and_the_energy(runner, bert, bert_dir):
    (row,) = run_json(runner, bert_dir, "--gap", "2", "--chains", "4", "--epochs", "5",
                      "--top", "100", "--seed", "3", TEXT)
    assert row["input"] == TEXT and row["energy"] == "local" and row["chains"] == 4
    assert sum(s["count"] for s in row["samples"]) == 4 * 5 * 2        # every step, every chain
    assert row["distinct"] == len(row["samples"])
    assert 0 <= row["novel_rate"] <= row["acceptance_rate"] <= 1
    assert len(row["energy_trace"]) == 6 and all(len(e) == 4 for e in row["energy_trace"])
    api = mcmc.sample(bert, TEXT, gap=2, chains=4, epochs=5, seed=3)
    assert [s["tokens"] for s in row["samples"]] == [list(s.tokens) for s in api.samples]
    enc = bert.encode(TEXT, 2)
    for s in row["samples"][:3]:
        ids = list(enc.input_ids)
        for p, t in zip(enc.positions, s["tokens"]):
            ids[p] = t
        assert s["energy"] == pytest.approx(float(mcmc.energy(bert, ids)[0]), abs=1e-6)
        assert s["text"] == bert.render(enc, [s["tokens"]])[0]


def test_seed_determinism_and_options(runner, bert_dir):
    args = ["--gap", "2", "--chains", "2", "--epochs", "3", "--order", "random", "--top-p",
            "0.9", "--proposal-temperature", "1.5", "--block", "2", TEXT]
    a = run_json(runner, bert_dir, "--seed", "1", *args)
    b = run_json(runner, bert_dir, "--seed", "1", *args)
    c = run_json(runner, bert_dir, "--seed", "2", *args)
    assert a == b and a != c
    assert a[0]["block_sizes"] == [2, 2, 1] and a[0]["top_p"] == 0.9


def test_gibbs_anneal_and_raw(runner, bert_dir):
    (g,) = run_json(runner, bert_dir, "--gibbs", "--epochs", "3", TEXT)
    assert g["acceptance_rate"] == 1.0 and g["gibbs"] is True
    (a,) = run_json(runner, bert_dir, "--gap", "2", "--anneal", "0.02", "--epochs", "6",
                    "--chains", "2", TEXT)
    assert a["temperatures"] == pytest.approx([1.0, 0.98, 0.96, 0.94, 0.92, 0.90])
    assert a["best"]["energy"] <= min(s["energy"] for s in a["samples"])
    (r,) = run_json(runner, bert_dir, "--energy", "raw", "--epochs", "2", "--init", "random", TEXT)
    (loc,) = run_json(runner, bert_dir, "--energy", "local", "--epochs", "2", "--init", "random",
                      TEXT)
    assert r["energy"] == "raw" and r["samples"][0]["energy"] != loc["samples"][0]["energy"]


def test_rescore_ranks_by_energy(runner, bert, bert_dir, tmp_path):
    texts = ["the cat sat on the mat", "the dog sat on the mat", "mat mat mat the", "cat"]
    want = mcmc.rescore(bert, texts)
    r = runner.invoke(main, ["rescore", "--model", bert_dir, "--json", *texts])
    assert r.exit_code == 0, r.output
    ranking = json.loads(r.output)["ranking"]
    assert [x["text"] for x in ranking] == [texts[i] for i in sorted(range(4),
                                                                     key=want.__getitem__)]
    assert [x["energy"] for x in ranking] == pytest.approx(sorted(want))
    f = tmp_path / "beam.txt"
    f.write_text("\n".join(texts) + "\n\n")
    from_file = runner.invoke(main, ["rescore", "--model", bert_dir, str(f)])
    from_stdin = runner.invoke(main, ["rescore", "--model", bert_dir], input="\n".join(texts))
    assert from_file.exit_code == 0 and from_file.output == from_stdin.output
    rows = from_file.output.splitlines()[1:]
    assert [ln.split()[0] for ln in rows] == ["1", "2", "3", "4"]
    assert rows[0].endswith(ranking[0]["text"])


@pytest.mark.parametrize("args, message", [
    (["sample", "no marker here"], "no gap marker"),
    (["sample", "--burn-in", "5", "--epochs", "5", TEXT], "burn_in"),
    (["sample", "--model", "/nonexistent/model", TEXT], "no such model"),
    (["sample", "--marker", "", TEXT], "marker"),
    (["rescore", "--energy", "raw"], "empty input"),
])
def test_errors_are_one_line_exit_2(runner, bert_dir, args, message):
    cmd, rest = args[0], args[1:]
    if "--model" not in rest:
        rest = ["--model", bert_dir, *rest]
    r = runner.invoke(main, [cmd, *rest], input="")
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0]


def test_usage_errors_exit_2(runner, bert_dir):
    for bad in (["--gap", "0"], ["--top-p", "0"], ["--energy", "global"], ["--chains", "0"]):
        r = runner.invoke(main, ["sample", "--model", bert_dir, *bad, TEXT])
        assert r.exit_code == 2 and "Traceback" not in r.output
