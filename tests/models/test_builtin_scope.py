"""Each builtin says what it knows wherever models are listed (issue 21): `infill models`, its
JSON, and the workbench's catalog; the demo inputs are texts of each builtin's own corpus kind."""
import json
from pathlib import Path

from click.testing import CliRunner

import infill
from infill.serve.catalog import ModelCatalog
from infill_cli.main import main

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


def test_protein_builtin_says_it_knows_one_family_everywhere_models_are_listed():
    r = CliRunner().invoke(main, ["models"])
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if x.startswith("builtin:protein"))
    assert "ONE protein family only, HypF/AcyP" in line and "ESM2" in line
    rows = {x["name"]: x for x in map(json.loads, CliRunner().invoke(
        main, ["models", "--json"]).output.splitlines())}
    assert rows["builtin:protein"]["knows"] == "one protein family only: HypF/AcyP"
    served = {x["name"]: x for x in ModelCatalog().rows()}
    assert served["builtin:protein"]["knows"] == rows["builtin:protein"]["knows"]
    assert "HypF/AcyP" in served["builtin:protein"]["description"]


def test_protein_demo_inputs_are_hypf_acyp_sequences_the_model_restores():
    lines = [x for x in (DEMO / "protein.txt").read_text().splitlines() if x]
    assert len(lines) == 3 and all(x.startswith("MA") for x in lines)
    lm = infill.load_model("builtin:protein", device="cpu")
    out = infill.fill(lm, lines[0], top_k=1)[0][0]
    assert "?" not in out.text and len(out.text) == len(lines[0])
