"""Every option of ``infill run`` against every input mode -- typed text, ``--input`` lines, FASTA,
EpiDoc files, ``--readings`` and ``POST /api/fill`` -- is honoured or refused, never dropped
(issue 46).

Each mode runs once as a baseline and once with the option; :data:`EXPECTED` says, per option and
mode, which of the two it must be:

- ``H`` honoured: the run is not a refusal and what it produced differs from the baseline's (its
  stdout, stderr, exit code, the files it wrote, how many decodes it ran and what the model was
  loaded with -- an option that changes none of these did nothing);
- ``R`` refused: exit 2 with one line ``Error: ...`` naming the option (HTTP: a 4xx
  ``{"error": ...}`` naming the field), nothing on stdout;
- ``M`` the mode's own option (``--model``, ``--input``, ``--readings``), exercised by every run.

Options whose effect needs something in the input (a gap of several lengths for
``--length-score``, an input too long for ``--no-window``, a sampler for ``--temperature``) add
it to the baseline too (:data:`OPTIONS`: ``base``). The tiny models of ``tests/conftest.py``: a
BERT for text, FASTA and HTTP, a character model for EpiDoc and readings.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("fastapi", reason="the HTTP mode needs the 'serve' extra")

from infill_cli.run import run as run_command  # noqa: E402
from infill_cli.main import main  # noqa: E402

MODES = ("text", "file", "fasta", "epidoc", "readings", "http")
TEXTS = ["the ___ sat", "a ___ cat", "my ___ dog"]
LONG = " ".join(["the cat sat on the mat"] * 14) + " ___ dog"      # > 64 tokens
GREEK = "ὁ δῆμος ἐτίμησ̣εν ___ ἀνέθηκεν"                            # σ̣: an unclear letter
EDITION = """<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title>t</title>
</titleStmt><publicationStmt><p>p</p></publicationStmt><sourceDesc><p>s</p></sourceDesc>
</fileDesc></teiHeader><text><body><div type="edition" xml:lang="grc"><ab>
<lb n="1"/>ὁ δῆμος ἐτίμησεν <w>Ἀρ<gap reason="lost" quantity="3" unit="character"/>ος</w>
<lb n="2"/><gap reason="lost" {extent} unit="character"/>ἀνέθηκεν στρατηγ<unclear>ό</unclear>ν
<lb n="3"/><supplied reason="lost"><app><lem>θεοῖς</lem><rdg>θεῷ</rdg></app></supplied> καὶ <supplied reason="lost">δήμωι</supplied>
</ab></div></body></text></TEI>
"""
RANGE, FIXED, UNKNOWN = 'atLeast="1" atMost="2"', 'quantity="2"', 'extent="unknown"'
"""A lacuna of uncertain length (its lengths ranked together), of one length, or of unknown
extent (a break unless --unknown-lengths)."""

OPTIONS: dict[str, dict] = {
    # name: cli (the flags), json (the body's fields; None: the option has no JSON field of its
    # own name), base (added to both runs), and per-input needs: one input, a long one, the
    # table instead of --json, a marker in the text
    "gap": dict(cli=["--gap", "{gap}"], json={"gap": 2}),
    "marker": dict(cli=["--marker", "@@"], json={"marker": "@@"}, marker=True),
    "length_score": dict(cli=["--length-score", "pll-gap"], json={"length_score": "pll-gap"},
                         lengths=True),
    "length_beam": dict(cli=["--length-beam", "shared"], json={"length_beam": "shared"},
                        lengths=True),
    "rerank": dict(cli=["--rerank", "pll"], json={"rerank": "pll"}),
    "decoder": dict(cli=["--decoder", "ag"], json={"decoder": "ag"}),
    "scorer": dict(cli=["--scorer", "standard"], json={"scorer": "standard"}),
    "order": dict(cli=["--order", "best-to-worst"], json={"order": "best-to-worst"}),
    "beam_size": dict(cli=["--beam-size", "7"], json={"beam_size": 7}),
    "pivot": dict(cli=["--pivot", "{pivot}"], json={"pivot": "the"}),
    "pivot_context": dict(cli=["--pivot-context", "mask"], json={"pivot_context": "mask"}),
    "dedup": dict(cli=["--no-dedup"], json={"dedup": False}),
    "dedup_keep": dict(cli=["--dedup-keep", "lower"], json={"dedup_keep": "lower"}),
    "allow_special": dict(cli=["--allow-special"], json={"allow_special": True}),
    "sampling": dict(cli=["--sampling", "pure"], json={"sampling": "pure"}),
    "sample_alias": dict(cli=["--sample", "pure"], json={"sample": "pure"}, names=["sampl"]),
    "temperature": dict(cli=["--temperature", "0.5"], json={"temperature": 0.5},
                        base=["--sampling", "temperature"], names=["sampling"]),
    "top_p": dict(cli=["--top-p", "0.5"], json={"top_p": 0.5}, base=["--sampling", "nucleus"],
                  names=["sampling"]),
    "top_k": dict(cli=["--top-k", "2"], json={"top_k": 2}),
    "unknown_max_length": dict(cli=["--unknown-max-length", "5"],
                               json={"unknown_max_length": 5}),
    "length_penalty": dict(cli=["--length-penalty", "0.5"], json={"length_penalty": 0.5}),
    "seed": dict(cli=["--seed", "3"], json={"seed": 3}, base=["--scorer", "scramble"]),
    "device": dict(cli=["--device", "cpu"], json={"device": "cpu"}),
    "dtype": dict(cli=["--dtype", "bf16"], json={"dtype": "bf16"}),
    "quantize": dict(cli=["--quantize", "int8"], json={"quantize": "int8"}),
    "compile_model": dict(cli=["--compile"], json={"compile": True}, names=["compile"]),
    "allow_nonstandard": dict(cli=["--allow-nonstandard"], json={"allow_nonstandard": True}),
    "region": dict(cli=["--region", "cdr3"], json={"region": "cdr3"}),
    "unclear": dict(cli=["--unclear", "restore"], json={"unclear": "restore"}),
    "lacuna_edges": dict(cli=["--lacuna-edges", "letters"], json={"lacuna_edges": "letters"}),
    "unknown_lengths": dict(cli=["--unknown-lengths", "1-2"], json={"unknown_lengths": "1-2"},
                            unknown=True),
    "no_window": dict(cli=["--no-window"], json={"window": False}, long=True,
                      names=["window"]),
    "view": dict(cli=["--view", "aligned"], json={"view": "aligned"}, table=True),
    "fmt": dict(cli=["--output-format", "{format}"], json={"output_format": "fasta"}, table=True,
                names=["output"]),
    "hide_supplied": dict(cli=["--hide-supplied"], json={"hide_supplied": True}),
    "out": dict(cli=["--out", "{out}"], json={"out": "x"}, epidoc=["--output-format", "leiden"],
                table=True),
    "legend": dict(cli=["--legend"], json={"legend": True}, table=True),
    "readings": dict(cli=["--readings", "cat|dog"], json={"readings": "cat|dog"}, one=True),
    "app_readings": dict(cli=["--app-readings"], json={"app_readings": True},
                         names=["readings"]),
    "as_json": dict(cli=["--json"], json={"json": True}, table=True),
    "progress": dict(cli=["--progress"], json={"progress": True}),
    "batch_size": dict(cli=["--batch-size", "1"], json={"batch_size": 1}),
    "input_file": dict(cli=["--input", "{input}"], json={"input": "x"}, names=["input"]),
    "model": dict(cli=[], json=None),
}

EXPECTED = {   # text, file, fasta, epidoc, readings, http
    "gap": "HHHRHH", "marker": "HHHRHH", "length_score": "HHHHHH", "length_beam": "HHHHHH",
    "rerank": "HHHHHH", "decoder": "HHHHRR", "scorer": "HHHHHH", "order": "HHHHHH",
    "beam_size": "HHHHHH", "pivot": "HHHHHH", "pivot_context": "HHHHHR", "dedup": "HHHHHR",
    "dedup_keep": "HHHHHR", "allow_special": "HHHHHR", "sampling": "HHHHRR",
    "sample_alias": "HHHHRR", "temperature": "HHHHRR", "top_p": "HHHHRR", "top_k": "HHHHHH", "seed": "HHHHRH",
    "unknown_max_length": "RRRRRR", "length_penalty": "RRRRRR",
    "device": "HHHHHR", "dtype": "HHHHHR", "quantize": "HHHHHR", "compile_model": "HHHHHR",
    "allow_nonstandard": "RRRRRR", "region": "HHHRRH", "unclear": "RRRHHR",
    "lacuna_edges": "HHHHHH",
    "unknown_lengths": "RRRHRR",
    "no_window": "HHHHHH", "view": "HHHRRR", "fmt": "HHHHHR", "hide_supplied": "RRRHRR",
    "out": "RRRHRR", "legend": "HHHRRR", "readings": "HHHRMR", "app_readings": "RRRHRR",
    "as_json": "HHHHHR", "progress": "HHHRRR", "batch_size": "HHHHRR", "input_file": "RMMRRR",
    "model": "MMMMMM",
}


def test_every_option_of_run_is_in_the_table():
    """A new option of ``infill run`` must say what it does in every mode."""
    names = {p.name for p in run_command.params} - {"texts"}
    assert names == set(OPTIONS) == set(EXPECTED)
    assert all(len(v) == len(MODES) and set(v) <= set("HRM") for v in EXPECTED.values())


@pytest.fixture
def observed(monkeypatch):
    """What a run did besides printing: how many decodes (``fill_resolved`` calls) and the
    options the model was loaded with (``--compile`` recorded, not compiled: too slow)."""
    import infill.filling.planner
    import infill.jobs.sharding
    seen = {"calls": 0, "load": None}
    fill, load = infill.filling.planner.fill_resolved, infill.jobs.sharding.load

    def counting(*a, **k):
        seen["calls"] += 1
        return fill(*a, **k)

    def loading(name, device, shard, **options):
        seen["load"] = (device, sorted(options.items()))
        options.pop("compile", None)
        return load(name, device, shard, **options)

    monkeypatch.setattr(infill.filling.planner, "fill_resolved", counting)
    monkeypatch.setattr(infill.jobs.sharding, "load", loading)
    return seen


def _inputs(mode: str, spec: dict) -> list[str]:
    texts = [LONG] if spec.get("long") else TEXTS[:1] if spec.get("one") else TEXTS
    if spec.get("marker"):
        texts = [t + " on @@ mat" for t in texts]
    if mode == "fasta":                 # a sequence has no spaces: words apart by commas
        texts = [t.replace(" ", ",") for t in texts]
    return texts


def _cli_args(mode: str, spec: dict, tmp: Path, bert: str, greek: str, with_option: bool
              ) -> list[str]:
    """The command line of a run of ``mode`` (with the option, or the baseline)."""
    texts = _inputs(mode, spec)
    args = [] if spec.get("table") else ["--json"]
    args += list(spec.get("base", []))
    if mode in ("text", "file", "fasta"):
        args += ["--model", bert] + (["--gap", "1-2"] if spec.get("lengths") else [])
        if mode == "text":
            inputs = ["--", *texts]
        else:
            path = tmp / f"in.{'fa' if mode == 'fasta' else 'txt'}"
            path.write_text("".join(f">r{i}\n{t}\n" if mode == "fasta" else f"{t}\n"
                                    for i, t in enumerate(texts, 1)), encoding="utf-8")
            inputs = ["--input", str(path)]
    elif mode == "epidoc":
        for name in ("a.xml", "b.xml"):
            extent = RANGE if spec.get("lengths") else UNKNOWN if spec.get("unknown") else FIXED
            (tmp / name).write_text(EDITION.format(extent=extent), encoding="utf-8")
        args += ["--model", greek] + list(spec.get("epidoc", []))
        inputs = [str(tmp / "a.xml"), str(tmp / "b.xml")]
    else:                                                        # --readings
        text = GREEK.replace("___", "@@") if spec.get("marker") and with_option else GREEK
        text = " ".join(["ὁ δῆμος ἐτίμησεν"] * 4) + " " + text if spec.get("long") else text
        readings = "ἀρ|ἀπο" if spec.get("lengths") else "ἀρ|ἀπ"
        args += ["--model", greek, "--readings", readings]
        inputs = ["--", text]
    if not with_option:
        return args + inputs
    fmt = {"epidoc": "json", "readings": "json"}.get(mode, "fasta")
    (tmp / "in.txt").write_text(f"{TEXTS[0]}\n", encoding="utf-8")
    values = {"pivot": "α" if mode in ("epidoc", "readings") else "the", "format": fmt,
              "gap": "2-3" if mode == "readings" else "2",
              "out": str(tmp / "out"), "input": str(tmp / "in.txt")}
    option = [a.format(**values) for a in spec["cli"]]
    return args + option + inputs


def _cli_run(args: list[str], seen: dict, tmp: Path) -> tuple:
    seen.update(calls=0, load=None)
    r = CliRunner().invoke(main, ["run", *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    out = tmp / "out"
    written = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    return r.exit_code, r.stdout, r.stderr, seen["calls"], seen["load"], written


def _refused(result: tuple, names: list[str]) -> bool:
    code, stdout, stderr = result[:3]
    lines = [line for line in stderr.strip().splitlines()
             if not (line.startswith("Warning: ") and "deprecated" in line)]
    return code == 2 and not stdout and len(lines) == 1 and lines[0].startswith("Error: ") \
        and any(n in lines[0].lower() for n in names)


def _names(option: str, spec: dict) -> list[str]:
    flags = [o.lstrip("-") for p in run_command.params if p.name == option
             for o in (*p.opts, *p.secondary_opts) if o.startswith("--")]
    return [*flags, option, option.replace("_", "-"), *spec.get("names", [])]


@pytest.mark.slow
@pytest.mark.parametrize("mode", [m for m in MODES if m != "http"])
def test_every_option_is_honoured_or_refused_on_the_command_line(
        mode, bert_dir, greek_char_dir, observed, tmp_path):
    k = MODES.index(mode)
    wrong = {}
    for option, spec in OPTIONS.items():
        want = EXPECTED[option][k]
        if want == "M":
            continue
        folder = tmp_path / option
        folder.mkdir()
        base = _cli_run(_cli_args(mode, spec, folder, bert_dir, greek_char_dir, False),
                        observed, folder)
        got = _cli_run(_cli_args(mode, spec, folder, bert_dir, greek_char_dir, True),
                       observed, folder)
        refused = _refused(got, _names(option, spec))
        if want == "R" and not refused:
            wrong[option] = ("not refused", got[:3])
        elif want == "H" and (refused or got == base):
            wrong[option] = ("refused" if refused else "no effect", got[:3])
    assert not wrong, json.dumps(wrong, ensure_ascii=False, indent=1)[:6000]


@pytest.mark.slow
def test_every_option_is_honoured_or_refused_over_http(bert_dir):
    from fastapi.testclient import TestClient

    from infill.serve.app import create_app
    from infill.serve.catalog import ModelCatalog

    catalog = ModelCatalog(extra=(bert_dir,), device="cpu")
    app = create_app(catalog, default_model=bert_dir)
    k = MODES.index("http")
    wrong = {}
    with TestClient(app, raise_server_exceptions=False, base_url="http://127.0.0.1:8000") as c:
        for option, spec in OPTIONS.items():
            want = EXPECTED[option][k]
            if want == "M":
                continue
            body = {"text": _inputs("http", spec)[0],
                    **({"gap": "1-2"} if spec.get("lengths") else {})}
            for flag, value in zip(spec.get("base", [])[::2], spec.get("base", [])[1::2]):
                body[flag.lstrip("-").replace("-", "_")] = value
            base = c.post("/api/fill", json=body)
            got = c.post("/api/fill", json={**body, **spec["json"]})
            message = got.json().get("error", "") if got.status_code >= 400 else ""
            refused = 400 <= got.status_code < 500 and any(
                n in message.lower() for n in (*spec["json"], *_names(option, spec)))
            if want == "R" and not refused:
                wrong[option] = ("not refused", got.status_code, got.text[:300])
            elif want == "H" and (refused or (got.status_code, got.text) ==
                                  (base.status_code, base.text)):
                wrong[option] = ("refused" if refused else "no effect", got.status_code,
                                 got.text[:300])
    assert not wrong, json.dumps(wrong, ensure_ascii=False, indent=1)[:6000]
