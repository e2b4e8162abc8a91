"""Options that are valid but would change nothing for the input at hand -- a temperature without
a tempered sampler, a nucleus mass without nucleus sampling, a length score where every gap has
one length, a rerank where every gap's lengths compete -- are refused with one line naming the
option (CLI exit 2, HTTP 4xx, a ConfigError in Python), never taken without effect (issue 46);
where some inputs use the option and others cannot, those others say so in a note."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import infill
from infill.errors import ConfigError
from infill_cli.main import main

TEXT = "the ___ sat"
GREEK = "ὁ δῆμος ἐτίμησεν ___ ἀνέθηκεν"

NO_EFFECT = [      # (options, the option named, why)
    ({"temperature": 0.5}, "temperature", "beam search: nothing is tempered"),
    ({"temperature": 0.5, "sampling": "pure"}, "temperature", "pure sampling is at T = 1"),
    ({"temperature": 0.5, "sampling": "nucleus"}, "temperature", "nucleus sampling is at T = 1"),
    ({"top_p": 0.5}, "top_p", "beam search: no nucleus"),
    ({"top_p": 0.5, "sampling": "temperature"}, "top_p", "tempered sampling: no nucleus"),
    ({"length_score": "pll-gap", "gap": 2}, "length_score", "one length: nothing to rank"),
    ({"length_beam": "shared", "gap": 2}, "length_beam", "one length: no beam to share"),
    ({"rerank": "pll", "gap": "1-2"}, "rerank", "lengths compete: ranked by length_score"),
]


def _flags(options: dict) -> list[str]:
    return [a for k, v in options.items() for a in (f"--{k.replace('_', '-')}", str(v))]


@pytest.mark.parametrize("options, name, why", NO_EFFECT, ids=[w for *_, w in NO_EFFECT])
def test_cli_refuses_an_option_without_effect(bert_dir, options, name, why):
    r = CliRunner().invoke(main, ["run", "-m", bert_dir, *_flags(options), TEXT])
    assert r.exit_code == 2 and not r.stdout, (why, r.output)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in r.output
    assert lines[0].startswith(f"Error: --{name.replace('_', '-')} "), lines[0]
    assert "=--" not in lines[0] and "'--" not in lines[0], lines[0]     # values stay values


@pytest.mark.parametrize("options, name, why", NO_EFFECT, ids=[w for *_, w in NO_EFFECT])
def test_python_api_refuses_it_naming_the_field(bert, options, name, why):
    with pytest.raises(ConfigError) as e:
        infill.fill(bert, TEXT, **options)
    assert e.value.field == name, why


@pytest.mark.parametrize("options, name, why", [c for c in NO_EFFECT if c[1] not in
                                                ("temperature", "top_p")],
                         ids=[w for _, n, w in NO_EFFECT if n not in ("temperature", "top_p")])
def test_http_refuses_it_with_a_4xx_naming_the_field(bert_dir, options, name, why):
    pytest.importorskip("fastapi", reason="the HTTP mode needs the 'serve' extra")
    from fastapi.testclient import TestClient

    from infill.serve.app import create_app
    from infill.serve.catalog import ModelCatalog

    app = create_app(ModelCatalog(extra=(bert_dir,), device="cpu"), default_model=bert_dir)
    with TestClient(app, base_url="http://127.0.0.1:8000") as c:
        r = c.post("/api/fill", json={"text": TEXT, **options})
    assert r.status_code == 400 and name in r.json()["error"], (why, r.text)


def test_the_same_options_are_honoured_where_they_act(bert):
    """Each refused option above acts once its input or sampler is there."""
    def fills(**o):
        [found] = infill.fill(bert, TEXT, beam_size=4, top_k=4, seed=1, **o)
        return [c.fills for c in found]

    hot, cold = fills(sampling="temperature", temperature=5.0), fills(sampling="temperature",
                                                                      temperature=0.2)
    assert hot != cold
    assert fills(sampling="nucleus", top_p=1e-6) != fills(sampling="nucleus", top_p=1.0)
    ranked = {s: infill.fill(bert, TEXT, gap="1-2", length_score=s, top_k=5)[0]
              for s in ("pll", "per-char")}
    assert [c.rank_score for c in ranked["pll"]] != [c.rank_score for c in ranked["per-char"]]
    [off] = infill.fill(bert, TEXT, gap=2, top_k=3, rerank="off")
    [pll] = infill.fill(bert, TEXT, gap=2, top_k=3, rerank="pll")
    assert [c.rank_score for c in pll] != [c.rank_score for c in off]


def test_readings_of_one_length_refuse_a_length_score(greek_char_dir):
    run = CliRunner().invoke(main, ["run", "-m", greek_char_dir, "--readings", "ἀρ|ἀπ",
                                    "--length-score", "pll-gap", GREEK])
    assert run.exit_code == 2 and "length-score" in run.stderr, run.output
    ok = CliRunner().invoke(main, ["run", "-m", greek_char_dir, "--json", "--readings",
                                   "ἀρ|ἀπο", "--length-score", "pll-gap", GREEK])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["config"]["length_score"] == "pll-gap"


def test_a_rerank_names_the_inputs_whose_lengths_compete(greek_char_dir, tmp_path):
    """A Leiden [c.2] brings its own lengths: with --rerank, that line says the rerank did not
    apply to it; the line of one length is reranked."""
    lines = tmp_path / "in.txt"
    lines.write_text("ὁ δῆμος ἐτίμησεν [..]ον\nὁ δῆμος ἐτίμησεν [c.2]ον\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["run", "-m", greek_char_dir, "--json", "--rerank", "pll",
                                  "--input", str(lines)])
    assert r.exit_code == 0, r.output
    one, ranged = [json.loads(line) for line in r.stdout.splitlines()]
    assert one["config"].get("rerank") == "pll" and not any("rerank" in n for n in one["notes"])
    assert any(n.startswith("rerank pll: not applied") for n in ranged["notes"]), ranged["notes"]
