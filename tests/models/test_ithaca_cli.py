"""An Ithaca checkpoint (tests/fixtures/ithaca, random weights) wherever a model is accepted:
``infill run`` (table, aligned view, JSON), ``serve``, ``bench``, ``joint``, ``sample``,
``rescore`` and ``models``, each checked against the adapter's own conditionals."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

import infill
from infill_cli.main import main

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "ithaca"
CKPT = str(FIX / "ithaca_tiny_numpy.pkl")
EXPECTED = json.loads((FIX / "expected.json").read_text(encoding="utf-8"))
ONE = EXPECTED["cases"][2]           # one character to restore, '-' damage around it
TEXT = "ειπε- επειδη ___ ___ ανηρ"     # two gap characters next to a '-' (missing, not restored)


@pytest.fixture(scope="module")
def lm():
    threads = torch.get_num_threads()   # one thread here; the rest of the suite keeps its own
    torch.set_num_threads(1)
    yield infill.load_model(CKPT, device="cpu")
    torch.set_num_threads(threads)


def invoke(*args):
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 0, r.output
    return r.output


def conditionals(lm, ids: list[int], positions: list[int]) -> torch.Tensor:
    """log q at ``positions`` of one input, straight from the adapter."""
    x = torch.tensor([ids])
    return lm.log_probs(x, torch.ones_like(x, dtype=torch.bool), torch.tensor([positions]))[0]


def pll_energy(lm, text: str) -> float:
    """E_local by hand: mask (with '-') each scored position in turn."""
    ids = lm.tokenize(text)
    total = 0.0
    for t, tok in enumerate(ids):
        if tok in lm.special_ids:
            continue
        x = list(ids)
        x[t] = lm.mask_id
        total -= float(conditionals(lm, x, [t])[0, tok])
    return total


def test_run_matches_ithacas_restorations_on_one_position():
    """One position: every order is the same search, so Ithaca's own top-20 restorations (texts
    and exp(log-prob) scores) are what standard beam search with beam 20 gives."""
    out = json.loads(invoke("run", "-m", CKPT, "--json", "--scorer", "standard", "-b", "20",
                            "-k", "20", "--", ONE["input"]))
    comps = out["completions"]
    assert [c["text"] for c in comps] == [r["text"] for r in ONE["restorations"]]
    for c, r in zip(comps, ONE["restorations"]):
        assert math.exp(c["score"]) == pytest.approx(r["score"], abs=1e-5)
        assert c["positions"][0]["prob"] == pytest.approx(r["score"], abs=1e-5)
        # a character offset in the text; Ithaca counts its start symbol '<' as position 0
        assert c["positions"][0]["index"] == ONE["restore_positions"][0] - 1


def test_run_aligned_view_shows_per_character_confidence():
    text = "Ἔδοξεν τῇ βουλῇ ?? δήμῳ"
    data = json.loads(invoke("run", "-m", CKPT, "--json", "-k", "3", text))
    shown = invoke("run", "-m", CKPT, "--view", "aligned", "-k", "3", text)
    conf = [line.split()[-1] for line in shown.splitlines() if line.strip().startswith("conf")]
    want = ["".join(str(min(9, int(p["prob"] * 10))) for p in c["positions"])
            for c in data["completions"]]
    assert conf == want
    for c in data["completions"]:
        assert f"βουλῇ {c['fills'][0]} δήμῳ" in shown          # the user's own text around it


def test_run_refuses_the_malicious_checkpoint_in_one_line():
    marker = Path("/tmp/ithaca_fixture_pwned")
    marker.unlink(missing_ok=True)
    r = CliRunner().invoke(main, ["run", "--model", str(FIX / "malicious.pkl"), "αβγ ?"])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: refused Ithaca/Aeneas checkpoint")
    assert "posix.system" in lines[0] and not marker.exists()


def test_models_describes_a_checkpoint():
    row = json.loads(invoke("models", "--model", CKPT, "--json"))
    assert row["family"] == "ithaca" and row["words"] == 17 and row["max_length"] == 768
    assert row["config"]["num_layers"] == 2 and row["alphabet"].startswith("#<^ -α")
    assert "architecture: 2 layers, 2 heads, width 48" in invoke("models", "--model", CKPT)


def test_serve_lists_and_uses_a_checkpoint(monkeypatch, lm):
    pytest.importorskip("uvicorn")
    from fastapi.testclient import TestClient
    import uvicorn
    apps = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: apps.append(app))
    invoke("serve", "--model", CKPT, "--device", "cpu")
    with TestClient(apps[0], base_url="http://127.0.0.1:8000") as client:
        rows = {r["name"]: r for r in client.get("/api/models").json()}
        assert rows[CKPT]["family"] == "greek" and rows[CKPT]["status"] == "loaded"
        got = client.post("/api/fill", json={"text": ONE["input"], "model": CKPT,
                                             "scorer": "standard", "beam": 5, "top_k": 5}).json()
    assert [c["text"] for c in got["completions"]] == [r["text"] for r in ONE["restorations"][:5]]


def test_bench_fills_only_the_chosen_span(tmp_path):
    """Texts with '-' damage: the mask is Ithaca's '-', yet only the drawn span is filled."""
    data = tmp_path / "lines.txt"
    data.write_text("\n".join(c["input"].replace("?", "α") for c in EXPECTED["cases"]) + "\n",
                    encoding="utf-8")
    invoke("bench", "-m", CKPT, str(data), "--format", "lines", "--gap-lengths", "3", "--beam-size", "4",
           "--methods", "hcb-l2r,standard-b2w", "-k", "1,4", "-n", "0", "-o", str(tmp_path / "out"),
           "--no-progress")
    results = (tmp_path / "out" / "results.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in results.splitlines()]
    assert len(rows) == 2 * 4 and sum("-" in r["gold_text"] for r in rows) == 2 * 2
    for r in rows:
        assert all(len(h) == r["n"] for h in r["hyps"])
        filled, gold = r["filled_text"], r["gold_text"]
        assert len(filled) == len(gold)
        s = r["start"] - 1                                   # ids start with '<'
        assert filled[:s] == gold[:s] and filled[s + r["n"]:] == gold[s + r["n"]:]


def test_joint_mlm_pair_equals_the_adapters_conditionals(lm):
    out = json.loads(invoke("joint", "-m", CKPT, "--json", "-k", "3", TEXT))
    enc = lm.encode(TEXT)
    assert out["positions"] == enc.positions
    q = conditionals(lm, enc.input_ids, enc.positions).exp() * lm.allowed_mask()
    q = q / q.sum(-1, keepdim=True)                          # the MLM joint on the candidate grid
    for pair in out["joints"]["MLM"]:
        a, b = pair["tokens"]
        assert pair["prob"] == pytest.approx(float(q[0, a] * q[1, b]), rel=1e-5)
        assert pair["text"].startswith("ειπε- επειδη ")


def test_sample_energies_are_pseudo_log_likelihoods(lm):
    out = json.loads(invoke("sample", "-m", CKPT, "--json", "--sweeps", "2", "--chains", "2",
                            "-k", "3", TEXT))
    assert out["samples"]
    for s in out["samples"]:
        assert s["text"].startswith("ειπε- επειδη ") and len(s["tokens"]) == 2
        assert s["energy"] == pytest.approx(pll_energy(lm, s["text"]), abs=1e-3)


def test_rescore_ranks_by_pseudo_log_likelihood(lm):
    texts = ["ειπε- επειδη ανηρ", "εδοξεν τηι βουληι", "ειπε- επειδη ανηρ αγαθος"]
    out = invoke("rescore", "-m", CKPT, "--json", *texts)
    rows = [json.loads(line) for line in out.splitlines()]
    by_text = {r["text"]: r["energy"] for r in rows}
    assert set(by_text) == set(texts)
    for t in texts:
        assert by_text[t] == pytest.approx(pll_energy(lm, t), abs=1e-3)
    assert [r["energy"] for r in rows] == sorted(by_text.values())

