"""One fill pipeline under every front end (:mod:`infill.jobs`): an explicit choice wins in
every entry point, and the workbench answers exactly what ``infill run --json`` prints."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("fastapi", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")

import infill  # noqa: E402
from infill.jobs.fill import fill_inputs  # noqa: E402
from infill_cli.main import main  # noqa: E402

PROTEIN = "builtin:protein"
SEQ = "MAKRVYFLAHGGQVQG???RYFTQKRASEYGLTGWCRNTDNNKVEGEAQ"
HAND = Path(__file__).resolve().parents[1] / "fixtures" / "epidoc" / "handmade.xml"


def test_an_explicit_order_wins_in_every_entry_point(catalog, client):
    """builtin:protein recommends best-to-worst; left-to-right asked for is what runs, through
    ``fill_inputs``, ``fill_each``, the CLI and HTTP (it once ran best-to-worst in one)."""
    model = catalog.get(PROTEIN)
    asked = infill.DecodeConfig(order="left-to-right")
    via_job = next(iter(fill_inputs(model, [SEQ], config=asked, top_k=3)))
    via_api = infill.fill_each(model, [SEQ], config=asked, top_k=3)[0]
    cli = CliRunner().invoke(main, ["run", "--json", "-m", PROTEIN, "--order", "left-to-right",
                                    "-k", "3", SEQ])
    http = client.post("/api/fill", json={"text": SEQ, "model": PROTEIN,
                                          "order": "left-to-right", "top_k": 3}).json()
    assert cli.exit_code == 0, cli.output
    answers = [via_job.to_json(), via_api.to_json(), json.loads(cli.stdout), http]
    assert [a["config"]["order"] for a in answers] == ["left-to-right"] * 4
    assert all(a["config"]["defaults"]["options"] == ["scorer"] for a in answers)
    texts = [[c["text"] for c in a["completions"]] for a in answers]
    assert texts[1:] == texts[:1] * 3
    b2w = infill.fill_each(model, [SEQ], top_k=3)[0]        # left out: the recommendation
    assert b2w.config.order == "best-to-worst"
    assert [c.score for c in b2w.completions] != [c.score for c in via_api.completions]


def test_the_epidoc_upload_answers_what_infill_run_prints(client):
    """An edition with lacunae of uncertain length (``atLeast``/``atMost``, ``precision``):
    decoded over their whole range by both, the same readings, scores and config."""
    cli = CliRunner().invoke(main, ["run", "--json", "-m", "builtin:greek", "-k", "3",
                                    str(HAND)])
    assert cli.exit_code == 0, cli.output
    want = json.loads(cli.stdout)
    got = client.post("/api/epidoc", json={"xml": HAND.read_text(encoding="utf-8"),
                                           "model": "builtin:greek", "top_k": 3})
    assert got.status_code == 200, got.text
    got = got.json()
    assert got["config"] == want["config"] and got["config"]["length_score"] == "per-char-0.7"
    assert got["lacunae"] == want["lacunae"] and got["completions"] == want["completions"]
    assert [c["spans"] for c in got["completions"]] == [c["spans"] for c in want["completions"]]
    ranged = [x for x in want["lacunae"] if x["lengths"]]
    assert ranged and any(len(r["text"]) != x["length"] for x in ranged for r in x["readings"])
    from infill.epigraphy import restore_files      # the Python API: the same probabilities
    [api] = restore_files(infill.load_model("builtin:greek"), [str(HAND)], top_k=3)
    assert {x["lacuna"]: [(r["text"], r["prob"]) for r in x["readings"]]
            for x in want["lacunae"]} == \
        {k: [(r.text, r.prob) for r in rs] for k, rs in api.readings.items()}


def test_epidoc_provenance_is_the_decode_that_ran(catalog, tmp_path):
    """The JSON config and the restored file's <change> name the options that ran: the model's
    recommended scorer (standard for builtin:greek), not infill's own default (hcb)."""
    src = Path(__file__).resolve().parents[1] / "fixtures" / "epidoc" / "iospe_1.10.xml"
    args = ["run", "-m", "builtin:greek", "-k", "2", "--hide-supplied", str(src)]
    auto = CliRunner().invoke(main, [*args, "--json"])
    standard = CliRunner().invoke(main, [*args, "--json", "--scorer", "standard"])
    hcb = CliRunner().invoke(main, [*args, "--json", "--scorer", "hcb"])
    auto, standard, hcb = (json.loads(r.stdout) for r in (auto, standard, hcb))
    assert auto["config"]["scorer"] == "standard" and "scorer" in auto["config"]["defaults"][
        "options"]
    assert [c["score"] for c in auto["completions"]] == \
        [c["score"] for c in standard["completions"]]
    assert hcb["config"]["scorer"] == "hcb" and \
        [c["score"] for c in hcb["completions"]] != [c["score"] for c in auto["completions"]]
    xml = CliRunner().invoke(main, [*args, "--output-format", "epidoc"]).stdout
    change = xml[xml.index("Lost text restored by infill"):].split("<", 1)[0]
    assert "scorer=standard" in change and "scorer=hcb" not in change
    assert "order=left-to-right" in change and "beam_size=5" in change


def test_rerank_is_one_behaviour_in_every_entry_point(catalog, client):
    """A lacuna of one length reranked by score with pll, or not (left out: builtin:greek's
    default, off): the job, the API, the CLI and HTTP answer the same completions and rank
    scores, and say so."""
    model, text = catalog.get("builtin:greek"), "ἔδοξεν τῆι βουλῆι καὶ τῶι ?????"
    got = {}
    for rerank in ("pll", None):
        kw = {} if rerank is None else {"rerank": rerank}
        via_job = next(iter(fill_inputs(model, [text], top_k=3, marker="?", **kw)))
        via_api = infill.fill_each(model, [text], top_k=3, marker="?", **kw)[0]
        cli = CliRunner().invoke(main, ["run", "--json", "-m", "builtin:greek", "-k", "3",
                                        "--marker", "?", *(["--rerank", rerank] if rerank
                                                           else []), text])
        http = client.post("/api/fill", json={"text": text, "model": "builtin:greek",
                                              "top_k": 3, "marker": "?", **kw})
        assert cli.exit_code == 0 and http.status_code == 200, cli.output + http.text
        answers = [via_job.to_json(), via_api.to_json(), json.loads(cli.stdout), http.json()]
        assert [a["config"].get("rerank") for a in answers] == [rerank] * 4
        rows = [[(c["text"], c.get("rank_score")) for c in a["completions"]] for a in answers]
        for r in rows[1:]:
            assert [t for t, _ in r] == [t for t, _ in rows[0]]
            assert [s for _, s in r] == pytest.approx([s for _, s in rows[0]], abs=1e-5)
        got[rerank] = rows[0]
    assert all(s is not None for _, s in got["pll"]) and all(s is None for _, s in got[None])
    src = Path(__file__).resolve().parents[1] / "fixtures" / "epidoc" / "iospe_1.10.xml"
    args = ["run", "-m", "builtin:greek", "-k", "2", "--hide-supplied", "--rerank", "pll", str(src)]
    cli = json.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)
    http = client.post("/api/epidoc", json={"xml": src.read_text(encoding="utf-8"), "top_k": 2,
                                            "model": "builtin:greek", "hide_supplied": True,
                                            "rerank": "pll"}).json()
    assert cli["config"]["rerank"] == http["config"]["rerank"] == "pll"
    assert [c["rank_score"] for c in cli["completions"]] == \
        pytest.approx([c["rank_score"] for c in http["completions"]], abs=1e-5)
    xml = CliRunner().invoke(main, [*args, "--output-format", "epidoc"]).stdout
    assert "rerank=pll" in xml[xml.index("Lost text restored by infill"):].split("<", 1)[0]
    bad = CliRunner().invoke(main, ["run", "-m", "builtin:greek", "--rerank", "bleu", text])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    bad = client.post("/api/fill", json={"text": text, "model": "builtin:greek", "rerank": "x"})
    assert bad.status_code == 400 and "rerank" in bad.json()["error"]


def test_reranked_readings_are_one_behaviour_in_every_entry_point(catalog, client):
    """Proposed readings ranked with ``rerank="pll"``: ``infill.readings``, ``infill run
    --readings`` and ``POST /api/readings`` give the same rank scores and probabilities."""
    text, cands = "ἔδοξε τῆι βουλῆι καὶ τῶι [....]ι", "δήμω|δάμω|δήμο"
    via_api = infill.readings(catalog.get("builtin:greek"), text, [cands], rerank="pll",
                              name="builtin:greek").to_json()
    cli = CliRunner().invoke(main, ["run", "--json", "-m", "builtin:greek", "--rerank", "pll",
                                    text, "--readings", cands])
    http = client.post("/api/readings", json={"text": text, "readings": [cands],
                                              "model": "builtin:greek", "rerank": "pll"})
    assert cli.exit_code == 0 and http.status_code == 200, cli.output + http.text
    answers = [via_api, json.loads(cli.stdout), http.json()]
    assert [a["config"]["rerank"] for a in answers] == ["pll"] * 3
    rows = [[(c["readings"], c["rank_score"], c["prob"]) for c in a["combinations"]]
            for a in answers]
    for r in rows[1:]:
        assert [x[0] for x in r] == [x[0] for x in rows[0]]
        assert [v for x in r for v in x[1:]] == \
            pytest.approx([v for x in rows[0] for v in x[1:]], abs=1e-5)
    assert all(x[1] is not None for x in rows[0])


def test_lacuna_edges_is_one_behaviour_in_every_entry_point(catalog, client):
    """builtin:latin keeps the word space off a lacuna's edges (its default, ``letters``) or
    not (``any``): the job, the API, the CLI and HTTP answer the same completions and say which
    rule ran; a bad value is one line (CLI: exit 2) or a 400 naming the field."""
    model, text = catalog.get("builtin:latin"), "d m?????felici vixit annis xxv"
    got = {}
    for edges in (None, "any"):
        kw = {} if edges is None else {"lacuna_edges": edges}
        via_job = next(iter(fill_inputs(model, [text], top_k=3, marker="?", **kw)))
        via_api = infill.fill_each(model, [text], top_k=3, marker="?", **kw)[0]
        cli = CliRunner().invoke(main, ["run", "--json", "-m", "builtin:latin", "-k", "3",
                                        "--marker", "?", *(["--lacuna-edges", edges] if edges
                                                           else []), text])
        http = client.post("/api/fill", json={"text": text, "model": "builtin:latin",
                                              "top_k": 3, "marker": "?", **kw})
        assert cli.exit_code == 0 and http.status_code == 200, cli.output + http.text
        answers = [via_job.to_json(), via_api.to_json(), json.loads(cli.stdout), http.json()]
        assert [a["config"]["lacuna_edges"] for a in answers] == [edges or "letters"] * 4
        rows = [[(c["text"], c["score"]) for c in a["completions"]] for a in answers]
        for r in rows[1:]:
            assert [t for t, _ in r] == [t for t, _ in rows[0]]
            assert [s for _, s in r] == pytest.approx([s for _, s in rows[0]], abs=1e-5)
        got[edges] = ["".join(c["fills"]) for c in answers[0]["completions"]]
    assert all(f[0] != " " and f[-1] != " " for f in got[None])
    assert all(f[0] == " " or f[-1] == " " for f in got["any"])
    bad = client.post("/api/fill", json={"text": text, "model": "builtin:latin",
                                         "lacuna_edges": "none"})
    assert bad.status_code == 400 and "lacuna edges" in bad.json()["error"]


def test_a_ranking_option_that_ranks_nothing_is_refused_by_every_entry_point(client):
    """An edition whose lacunae each have one length gets no ``length_score``: ``infill run``
    and ``restore_files`` refused it and ``POST /api/epidoc`` dropped it (200, nothing ranked);
    now each refuses it, naming the option."""
    from infill.epigraphy import restore_files
    from infill.errors import ConfigError

    demo = Path(__file__).resolve().parents[2] / "data" / "demo" / "edition.xml"
    cli = CliRunner().invoke(main, ["run", "-m", "builtin:greek", "--length-score", "per-char",
                                    str(demo)])
    assert cli.exit_code == 2 and "length-score ranks fills of several lengths" in cli.output
    with pytest.raises(ConfigError, match="'length_score' ranks fills of several lengths"):
        restore_files(infill.load_model("builtin:greek"), [str(demo)], length_score="per-char")
    got = client.post("/api/epidoc", json={"xml": demo.read_text(encoding="utf-8"),
                                           "model": "builtin:greek", "length_score": "per-char"})
    assert got.status_code == 400
    assert "'length_score' ranks fills of several lengths" in got.json()["error"]
    ranged = client.post("/api/epidoc", json={"xml": HAND.read_text(encoding="utf-8"),
                                              "model": "builtin:greek", "rerank": "pll"})
    assert ranged.status_code == 400 and "'rerank'" in ranged.json()["error"]
