"""builtin:greek's memory of the input's own text reaches every front end through the one jobs
layer: the HTTP API, ``infill run --json`` and the Python API give the same restoration, and it
is the name the inscription gives elsewhere."""
from __future__ import annotations

import json

from click.testing import CliRunner

from infill_cli.main import main

TEXT = ("Ἀρτέμων Ἀδράστου τοῦ Διονυσίου Δινομάχου τοὺς ἓξ κείονας ἐκ τῶν ἰδίων ἀνέθηκε· "
        "Ἀρτέμων Ἀδράστου τοῦ Διονυσίου ????????? τοὺς ἓξ κείονας")


def test_the_own_text_restoration_is_the_same_through_http_cli_and_api(client, catalog,
                                                                      expected_fn):
    model = catalog.get("builtin:greek")
    assert model.own_text is not None
    got = client.post("/api/fill", json={"text": TEXT, "model": "builtin:greek", "top_k": 3,
                                         "id": "1"})
    assert got.status_code == 200
    out = CliRunner().invoke(main, ["run", "--model", "builtin:greek", "--device", "cpu",
                                    "--json", "--top-k", "3", TEXT])
    assert out.exit_code == 0, out.output
    assert got.json() == json.loads(out.output.splitlines()[0])
    assert got.json() == expected_fn(catalog, "builtin:greek", TEXT, top_k=3, id="1")
    first = got.json()["completions"][0]
    assert "".join(first["fills"]).lower() == "δινομαχου"
