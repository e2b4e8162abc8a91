"""Aeneas's own search reproduced (tests/fixtures/aeneas: its ``restore()`` results on random
weights): ``?`` gaps, ``#`` lacunae of unknown length and both, at beam 5 and 200, Aeneas's
keep-lower merge (``dedup_keep="lower"``) and the keep-higher rule, through the API, the CLI and
HTTP; and infill's own decoders over an Aeneas model for ``?`` gaps.

Scores are compared to 2e-5 relative: Aeneas's float32 forward differs from a float64 one by up to
about 1e-5 in log-probability (its own rounding), so tighter agreement is not defined by the
fixture; texts, restored positions and the number of search steps agree exactly."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

import infill
from infill import DecodeConfig
from infill.decoding.aeneas import RestoreOptions, restore
from infill_cli.main import main

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "aeneas"
EXPECTED = json.loads((FIX / "expected.json").read_text(encoding="utf-8"))
LANGS = ["latin", "greek"]
REL = 2e-5


def cases(lang: str) -> list[dict]:
    return EXPECTED["languages"][lang]["cases"]


def path(lang: str, variant: str = "numpy") -> str:
    return str(FIX / f"aeneas_tiny_{lang}_{variant}.pkl")


@pytest.fixture(scope="module", params=LANGS)
def lm(request):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield request.param, infill.load_model(path(request.param), device="cpu")
    torch.set_num_threads(threads)


def config(run: dict, keep: str) -> DecodeConfig:
    return DecodeConfig(scorer="standard", order="any-order", beam_size=run["beam_width"],
                        temperature=run["temperature"], length_penalty=run["a_penalty"],
                        unknown_max_length=run["unk_restoration_max_len"], dedup_keep=keep)


def restored(completion) -> list[int]:
    return sorted(p.index for p in completion.positions)


def check(completions, run: dict) -> None:
    want = run["predictions"]
    assert [c.text for c in completions] == [w["text"] for w in want]
    for c, w in zip(completions, want):
        assert restored(c) == w["restored"]
        assert math.exp(c.score) == pytest.approx(w["score"], rel=REL)
        assert c.rank_score == pytest.approx(w["rank_key"], rel=REL)


SMALL = ["small_beam", "small_beam_keep_higher", "small_beam_unk_max_4"]


@pytest.mark.parametrize("name", SMALL)
def test_beam_5_reproduces_aeneas_restore_for_every_case(lm, name):
    lang, model = lm
    runs = [(c, c["runs"][name]) for c in cases(lang) if name in c["runs"]]
    assert runs
    run = runs[0][1]
    keep = "higher" if "higher" in name else "lower"
    results = infill.fill_each(model, [c["input"] for c, _ in runs], top_k=run["beam_width"],
                               config=config(run, keep))
    for (case, run), res in zip(runs, results):
        assert res.error is None
        check(res.completions, run)


def test_steps_and_restored_runs_of_a_lacuna(lm):
    """The search takes as many steps as Aeneas's, and a '#' restores one contiguous run."""
    lang, model = lm
    for case in cases(lang):
        run = case["runs"]["small_beam"]
        ids, positions, gaps = model.restore_input(case["input"])
        found, steps = restore(model, ids, positions, gaps, RestoreOptions(beam_width=5))
        assert steps == run["search_iterations"]
        for r in found:
            for g in set(r.gap):
                at = [p for p, k in zip(r.open, r.gap) if k == g]
                assert at == list(range(at[0], at[0] + len(at)))


def _agree_up_to_ties(completions, run: dict) -> None:
    """Beam 200 reaches keys whose recorded gaps are a few float32 ulps (down to 0): the same
    predictions, in Aeneas's order except where two adjacent keys differ by less than 1e-5."""
    want = run["predictions"]
    got = [c.text for c in completions]
    assert sorted(got) == sorted(w["text"] for w in want)
    key = {w["text"]: w["rank_key"] for w in want}
    for k, (c, w) in enumerate(zip(completions, want)):
        if c.text != w["text"]:
            assert abs(key[c.text] - w["rank_key"]) < 1e-5, (k, c.text, w["text"])
        else:
            assert math.exp(c.score) == pytest.approx(w["score"], rel=REL)


@pytest.mark.parametrize("keep", ["lower", "higher"])
def test_beam_200_on_question_marks(lm, keep):
    lang, model = lm
    name = "default" if keep == "lower" else "default_keep_higher"
    chosen = [c for c in cases(lang) if "predictions" in c["runs"][name] and "#" not in c["input"]]
    assert len(chosen) == 2
    results = infill.fill_each(model, [c["input"] for c in chosen], top_k=200,
                               config=config(chosen[0]["runs"][name], keep))
    for case, res in zip(chosen, results):
        _agree_up_to_ties(res.completions, case["runs"][name])


@pytest.mark.slow
def test_beam_200_on_lacunae():
    """Two '#' and a '?' at Aeneas's default beam (41 steps; about 20 s on one CPU thread; the
    other beam-200 lacuna runs are in benchmarks/aeneas_parity.py)."""
    model = infill.load_model(path("greek"), device="cpu")
    case = cases("greek")[4]
    res = infill.fill_each(model, [case["input"]], top_k=200,
                           config=config(case["runs"]["default"], "lower"))[0]
    _agree_up_to_ties(res.completions, case["runs"]["default"])


def test_the_two_merge_rules_differ_on_the_fixture():
    differ = sum(c["runs"]["small_beam"]["predictions"]
                 != c["runs"]["small_beam_keep_higher"]["predictions"]
                 for lang in LANGS for c in cases(lang))
    assert differ >= 5


# ---- the same through the CLI, the API and HTTP ----------------------------------------------
GREEK_LACUNA = cases("greek")[4]            # two '#' and a '?'


def test_cli_run_matches_the_fixture_on_lacunae():
    run = GREEK_LACUNA["runs"]["small_beam"]
    r = CliRunner().invoke(main, ["run", "--model", path("greek"), "--order", "any-order",
                                  "--dedup-keep", "lower", "-b", "5", "-k", "5", "--json", "--",
                                  GREEK_LACUNA["input"]])
    assert r.exit_code == 0, r.output
    line = json.loads(r.output.strip().splitlines()[-1])
    assert line["config"]["scorer"] == "standard" and line["config"]["order"] == "any-order"
    comps = line["completions"]
    assert [c["text"] for c in comps] == [w["text"] for w in run["predictions"]]
    for c, w in zip(comps, run["predictions"]):
        assert sorted(p["index"] for p in c["positions"]) == w["restored"]
        assert math.exp(c["score"]) == pytest.approx(w["score"], rel=REL)


def test_cli_unknown_max_length_and_length_penalty():
    case = cases("latin")[1]
    run = case["runs"]["small_beam_unk_max_4"]
    r = CliRunner().invoke(main, ["run", "--model", path("latin", "jax"), "--order", "any-order",
                                  "--scorer", "standard", "--dedup-keep", "lower", "-b", "5",
                                  "-k", "5", "--unknown-max-length", "4", "--length-penalty", "1",
                                  "--json", "--", case["input"]])
    assert r.exit_code == 0, r.output
    comps = json.loads(r.output.strip().splitlines()[-1])["completions"]
    assert [c["text"] for c in comps] == [w["text"] for w in run["predictions"]]
    assert all(len("".join(c["fills"])) <= 4 for c in comps)


def test_api_fill_matches_the_fixture_and_defaults_to_aeneas_search():
    """With nothing chosen, an Aeneas model runs its own search (its recommended defaults)."""
    model = infill.load_model(path("greek", "jax"), device="cpu")
    run = GREEK_LACUNA["runs"]["small_beam_keep_higher"]
    res = infill.fill_each(model, [GREEK_LACUNA["input"]], top_k=5, beam_size=5)[0]
    assert res.defaults.values == {"scorer": "standard", "order": "any-order"}
    check(res.completions, run)
    fills = [len(f) for f in res.completions[0].fills]
    spans = res.completions[0].spans
    assert [e - s for s, e in spans] == fills and fills[2] == 1       # the '?' is one character


def test_http_fill_matches_the_fixture(monkeypatch):
    pytest.importorskip("uvicorn")
    from fastapi.testclient import TestClient
    import uvicorn
    apps = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: apps.append(app))
    ckpt = path("greek")
    r = CliRunner().invoke(main, ["serve", "--model", ckpt, "--device", "cpu"])
    assert r.exit_code == 0, r.output
    run = GREEK_LACUNA["runs"]["small_beam_keep_higher"]      # the server keeps METHODS §1's rule
    with TestClient(apps[0], base_url="http://127.0.0.1:8000") as client:
        rows = {row["name"]: row for row in client.get("/api/models").json()}
        assert rows[ckpt]["family"] == "greek"
        got = client.post("/api/fill", json={"text": GREEK_LACUNA["input"], "model": ckpt,
                                             "order": "any-order", "scorer": "standard",
                                             "beam_size": 5, "top_k": 5}).json()
        bad = client.post("/api/fill", json={"text": GREEK_LACUNA["input"], "model": ckpt,
                                             "order": "left-to-right", "beam_size": 5})
    assert [c["text"] for c in got["completions"]] == [w["text"] for w in run["predictions"]]
    for c, w in zip(got["completions"], run["predictions"]):
        assert math.exp(c["score"]) == pytest.approx(w["score"], rel=REL)
    assert "lacuna of unknown length" in json.dumps(bad.json())


# ---- infill's own decoders over an Aeneas model ------------------------------------------------
def test_a_lacuna_needs_aeneas_search():
    r = CliRunner().invoke(main, ["run", "--model", path("latin"), "--order", "left-to-right",
                                  "--", cases("latin")[1]["input"]])
    assert r.exit_code == 2
    assert "lacuna of unknown length" in r.output and len(r.output.strip().splitlines()) == 1


def test_one_character_standard_equals_the_model_softmax(lm):
    """A one-character gap decoded by infill's engine: its best completions are the best of the
    restoration softmax over Aeneas's candidates at that position, with those log-probs."""
    lang, model = lm
    text = next(c for c in cases(lang) if "#" not in c["input"])["input"]
    k = text.index("?")
    one = text[:k + 1] + text[k + 1:].replace("?", "a" if lang == "latin" else "α")
    res = infill.fill_each(model, [one], top_k=3, scorer="standard", order="left-to-right",
                           beam_size=3)[0]
    assert res.error is None and len(res.completions) == 3
    ids, positions, _ = model.restore_input(one)
    lq = model.log_probs(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.bool),
                         torch.tensor([positions]))[0, 0]
    best = sorted(model.letters.candidates, key=lambda c: -float(lq[c]))[:3]
    assert [c.tokens[0] for c in res.completions] == best
    assert [c.score for c in res.completions] == pytest.approx([float(lq[c]) for c in best])


@pytest.mark.parametrize("options", [
    {"scorer": "hcb", "order": "left-to-right"},
    {"scorer": "standard", "order": "best-to-worst"},
    {"scorer": "hcb", "order": "any-order"},
    {"sampling": "pure", "seed": 3},
    {"sampling": "nucleus", "top_p": 0.8, "seed": 3},
])
def test_infill_decoders_work_over_aeneas_on_question_marks(lm, options):
    lang, model = lm
    case = next(c for c in cases(lang) if "#" not in c["input"])
    res = infill.fill_each(model, [case["input"]], top_k=3, beam_size=4, **options)[0]
    assert res.error is None and res.completions
    n = len(case["restore_positions"])
    allowed = set(model.letters.candidates)
    for c in res.completions:
        assert len(c.tokens) == n and set(c.tokens) <= allowed and math.isfinite(c.score)
        assert len(c.text) == len(case["prepared_text"])
