"""``POST /api/fill`` with ``"record": "all"``: every record of a pasted FASTA text in one
request, each answered as ``infill run --json`` answers that record (checked against direct
``fill_each`` calls), errors on their own record only, the server's limits on the whole."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")

PROTEIN = "builtin:protein"
FIRST = "MKVLAAGIVALLLAAGCSSS??KEELKAQLEQ"
SECOND = "MSDKIIHLTDDSFDTDVLKADGAILVDFWA??WCGPCKMIAPILDEIADEY"
FASTA = (f">first some protein\n{FIRST[:20]}\n{FIRST[20:]}\n>empty\n"
         f">bad a digit\nMKV1AA??LL\n>wide\nM{'?' * 65}K\n>second\n{SECOND}\n")


def _post(client, **body):
    got = client.post("/api/fill", json=body)
    return got.status_code, got.json()


def _filled(expected_fn, catalog, seq, rec_id, k, n, header, top_k=3):
    want = expected_fn(catalog, PROTEIN, seq, top_k=top_k, id=rec_id)   # infill run's line
    return {**want, "header": header}


def test_every_record_is_answered_as_infill_run_answers_it(client, catalog, expected_fn,
                                                          same_answer_fn):
    status, got = _post(client, text=FASTA, model=PROTEIN, record="all", top_k=3, id="batch-7")
    assert status == 200, got
    assert list(got) == ["id", "records"] and got["id"] == "batch-7"
    recs = got["records"]
    assert [r["id"] for r in recs] == ["first", "empty", "bad", "wide", "second"]
    assert [r["header"] for r in recs] == ["first some protein", "empty", "bad a digit", "wide",
                                           "second"]
    # the good records: exactly a direct fill of their sequence (scores up to batch padding)
    assert same_answer_fn(recs[0], _filled(expected_fn, catalog, FIRST, "first", 1, 5,
                                           "first some protein"))
    assert same_answer_fn(recs[4], _filled(expected_fn, catalog, SECOND, "second", 5, 5,
                                           "second"))
    assert recs[0]["completions"] and recs[0]["error"] is None
    # the bad ones: each its own one-line error, no completions, the rest unaffected
    errors = [r["error"] for r in recs]
    assert errors[1] == "FASTA record 'empty' (line 4) has no sequence"
    assert errors[2].startswith("invalid residue '1' at position 4 of the sequence")
    assert errors[3] == "too many positions to fill: 65 (limit 64)"
    assert all(recs[k]["completions"] == [] for k in (1, 2, 3))
    assert all("\n" not in e for e in errors[1:4])
    assert recs[3]["input"] == f"M{'?' * 65}K"
    assert client.get("/api/health").json()["pending"] == 0


def test_a_single_record_still_answers_alone(client, catalog, expected_fn):
    """The record picker counts every header (an empty record too), as the page does."""
    status, got = _post(client, text=FASTA, model=PROTEIN, record=5, top_k=3)
    assert status == 200
    want = expected_fn(catalog, PROTEIN, SECOND, top_k=3)
    assert got["notes"][0] == "FASTA: filled record 5 of 5 (second)"
    assert [c["text"] for c in got["completions"]] == [c["text"] for c in want["completions"]]
    assert _post(client, text=FASTA, model=PROTEIN, record=2) == \
        (400, {"error": "FASTA record 2 (empty) has no sequence"})


@pytest.mark.parametrize("body, status, message", [
    ({"text": "".join(f">r{i}\nMK??\n" for i in range(33))}, 413,
     "too many FASTA records to fill at once: 33 (limit max_batch=32); send them in parts"),
    ({"text": ">long\n" + "M" * 2010 + "??\n"}, 413, "text too long: 2019 characters (limit 2000)"),
    ({"text": "MKV??LL"}, 400, "record 'all' is for FASTA text"),
    ({"text": FASTA, "beam_size": 51}, 400,
     "beam_size must be between 1 and 50 on this server, got 51"),
    ({"text": FASTA, "record": "every"}, 400,
     'record: a record number (1, 2, ...) or "all", got "every"'),
])
def test_whole_request_errors(client, body, status, message):
    got = client.post("/api/fill", json={"model": PROTEIN, "record": "all", **body})
    assert got.status_code == status, got.text[:300]
    assert list(got.json()) == ["error"] and message in got.json()["error"]


def test_region_masks_every_record_as_infill_run_does(client, same_answer_fn, tmp_path):
    """``region`` applies to each record and a record that is no antibody V domain fails alone:
    the answer is, record for record, what ``infill run --json --region`` prints for the same
    FASTA text (one pipeline, :mod:`infill.jobs`). builtin:protein stands in for an antibody
    model: the region is masked before decoding."""
    pytest.importorskip("anarcism", reason="--region needs the 'antibody' extra")
    from click.testing import CliRunner

    from infill.data.fasta import read_fasta
    from infill_cli.main import main

    heavy = read_fasta(_data("antibody", "hiv_bnab_heavy.fa"))[:2]
    text = "".join(f">{r.header}\n{r.sequence}\n" for r in heavy) + f">lysozyme\n{SECOND}\n"
    got = client.post("/api/fill", json={"text": text, "model": PROTEIN, "record": "all",
                                         "region": "cdr3", "top_k": 2}).json()["records"]
    (tmp_path / "in.fa").write_text(text)
    cli = CliRunner().invoke(main, ["run", "--json", "-m", PROTEIN, "--region", "cdr3", "-k",
                                    "2", "--input", str(tmp_path / "in.fa")])
    assert cli.exit_code == 2 and "1 of 3 input(s) could not be filled" in cli.stderr
    want = [json.loads(line) for line in cli.stdout.splitlines()]
    assert [r.pop("header") for r in got] == [r.header for r in heavy] + ["lysozyme"]
    assert same_answer_fn(got, want)
    assert got[2]["error"].startswith("not an antibody V domain") and got[2]["completions"] == []
    assert "?" in got[0]["input"] and got[0]["completions"]


def _data(*parts):
    from pathlib import Path
    return Path(__file__).resolve().parents[2].joinpath("data", *parts)


def test_answer_is_json_the_page_reads(client):
    """Every record's entry is a complete ``infill run --json`` line (plus ``header``)."""
    got = client.post("/api/fill", json={"text": FASTA, "model": PROTEIN, "record": "all"})
    keys = {"id", "input", "model", "config", "gap", "windows", "notes", "error", "completions",
            "header"}
    assert all(set(r) == keys for r in got.json()["records"])
    assert json.loads(got.text) == got.json()
