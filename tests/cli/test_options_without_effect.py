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


EPIDOC = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "epidoc"
             / "iospe_1.10.xml")
OTHER_COMMANDS = [      # (the command's arguments, the flag named, why); {m}: the model
    (["run", "--scorer", "standard", "--pivot-context", "mask", TEXT], "pivot-context",
     "standard injects no pivot"),
    (["run", "--decoder", "ag", "--order", "best-to-worst", "--gap", "2", TEXT], "order",
     "the ag decoder has no order"),
    (["sample", "--target-temperature", "0.5", "--min-temperature", "2", "--anneal", "0.1",
      TEXT], "anneal", "a floor above the target leaves nothing to anneal"),
    (["sample", "--gibbs", "--anneal", "0.1", TEXT], "anneal", "gibbs accepts every proposal"),
    (["joint", "--split", "train", "the ___ ___ sat"], "split", "TEXT has no corpus split"),
    (["joint", "--converged-tol", "0.001", "the ___ ___ sat"], "converged-tol",
     "TEXT reports no AG*"),
    (["joint", "--out", "{out}", "the ___ ___ sat"], "out", "TEXT writes no files"),
    (["joint", "--data", "{data}", "-k", "3"], "top-k", "the metrics show no pairs"),
    (["check", "--marker", "", TEXT], "marker", "an empty marker marks nothing"),
    (["bench", "{data}", "-o", "{out}", "--methods", "standard-l2r", "--pivot", "the"], "pivot",
     "no HCB method takes a pivot"),
    (["bench", "{data}", "-o", "{out}", "--bertscore-layers", "3"], "bertscore-layers",
     "no BERTScore model to take a layer of"),
    (["check", "-m", "{greek}", "--marker", "@@", EPIDOC], "marker",
     "an edition marks its own lacunae"),
]


@pytest.mark.parametrize("args, name, why", OTHER_COMMANDS, ids=[w for *_, w in OTHER_COMMANDS])
def test_every_command_refuses_an_option_it_would_drop(bert_dir, greek_char_dir, tmp_path,
                                                        args, name, why):
    """Each was taken and changed nothing (an audit of every command's options, 2026-12-02)."""
    data = tmp_path / "lines.txt"
    data.write_text("the cat sat on the mat today\nthe dog ran in the park again\n")
    args = [a.format(out=tmp_path / "o", data=data, greek=greek_char_dir) for a in args]
    model = [] if "-m" in args else ["-m", bert_dir]
    r = CliRunner().invoke(main, [args[0], *model, *args[1:]])
    assert r.exit_code == 2 and not r.stdout, (why, r.output)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.output, r.output
    assert lines[0].startswith("Error: ") and f"--{name}" in lines[0], lines[0]
    assert not (tmp_path / "o").exists()


def test_check_of_an_edition_honours_scores_and_no_window(greek_char_dir, tmp_path):
    """``check --scores`` on an EpiDoc file writes its substitution table (it raised a
    TypeError: the table was never asked for); ``--no-window`` refuses an edition longer than
    the model (it was read in windows all the same)."""
    scores = tmp_path / "s.tsv"
    r = CliRunner().invoke(main, ["check", "-m", greek_char_dir, "--scores", str(scores),
                                  EPIDOC])
    assert r.exit_code == 0, r.output
    rows = scores.read_text(encoding="utf-8").splitlines()
    assert rows[0].split("\t")[:3] == ["id", "position", "written"] and len(rows) > 10
    assert all(len(x.split("\t")) == len(rows[0].split("\t")) for x in rows)
    long = tmp_path / "long.xml"          # longer than the tiny model's 48 characters
    long.write_text(LONG_EDITION.format(text="ὁ δῆμος ἐτίμησεν τὸν ἀνδριάντα " * 4),
                    encoding="utf-8")
    r = CliRunner().invoke(main, ["check", "-m", greek_char_dir, str(long)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["check", "-m", greek_char_dir, "--no-window", str(long)])
    assert r.exit_code != 0 and "maximum length" in r.output


LONG_EDITION = """<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title>t</title>
</titleStmt><publicationStmt><p>p</p></publicationStmt><sourceDesc><p>s</p></sourceDesc>
</fileDesc></teiHeader><text><body><div type="edition" xml:lang="grc"><ab>
<lb n="1"/>{text}<supplied reason="lost">δήμωι</supplied>
</ab></div></body></text></TEI>
"""


def test_joint_of_one_text_reads_batch_size(bert, monkeypatch):
    """TEXT mode's tables are built ``batch_size`` rows per pass (it was read only by --data)."""
    from infill.jobs import joint as joint_job
    from infill.jobs.joint import JointRequest, pair_joints

    seen = []
    real = joint_job.tables.pair_tables

    def spy(*a, **k):
        seen.append(k.get("batch_size"))
        return real(*a, **k)

    monkeypatch.setattr(joint_job.tables, "pair_tables", spy)
    pair_joints(bert, "the ___ ___ sat", JointRequest(joint_size=4, ag_iterations=3,
                                                      batch_size=7))
    assert seen == [7]


def test_bench_with_top_k_without_one_and_two_pivots_finishes(bert_dir, tmp_path):
    """The pivot sweep's plot needs top-1; with ``-k 2`` it raised KeyError after every row
    was computed (and again on resume). Now the sweep is not drawn and the summary is written."""
    lines = tmp_path / "lines.txt"
    lines.write_text("the cat sat on the mat today\nthe dog ran in the park again\n")
    r = CliRunner().invoke(main, ["bench", str(lines), "-m", bert_dir, "-o", str(tmp_path / "b"),
                                  "-n", "2", "--gap-lengths", "2", "--methods", "hcb-l2r",
                                  "-b", "2", "-k", "2", "--pivot", "the", "--pivot", "cat"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "b" / "summary.json").exists()
    assert not (tmp_path / "b" / "pivot_sweep.png").exists()


def test_the_python_api_refuses_what_the_command_refuses(bert):
    """The same rules in Python: a substitution table of a model of word pieces, a window that
    is no bool, a floor above the target temperature, a tempered Gibbs chain."""
    from infill.jobs.sample import sample_inputs

    with pytest.raises(ConfigError, match="'table'") as e:
        infill.check(bert, ["the cat sat"], table=True)
    assert e.value.field == "table"
    for options, field in [(dict(window="no"), "window"),
                           (dict(min_temperature=2, target_temperature=0.5, anneal=0.1),
                            "min_temperature"),
                           (dict(gibbs=True, anneal=0.1), "anneal")]:
        with pytest.raises(ConfigError) as e:
            sample_inputs(bert, ["the ___ sat"], sweeps=1, **options)
        assert field in (e.value.field if isinstance(e.value.field, tuple) else (e.value.field,))
