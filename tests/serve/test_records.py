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
    want = expected_fn(catalog, PROTEIN, seq, top_k=top_k, id=rec_id)
    want["notes"] = [f"FASTA: filled record {k} of {n} ({header})"] + want["notes"]
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
    ({"text": FASTA, "beam": 51}, 400, "beam must be between 1 and 50 on this server, got 51"),
    ({"text": FASTA, "record": "every"}, 400,
     'record: a record number (1, 2, ...) or "all", got "every"'),
    ({"text": FASTA, "region": "cdr3"}, 400, "region is for antibody models (this model's "
                                             "family: protein)"),
])
def test_whole_request_errors(client, body, status, message):
    got = client.post("/api/fill", json={"model": PROTEIN, "record": "all", **body})
    assert got.status_code == status, got.text[:300]
    assert list(got.json()) == ["error"] and message in got.json()["error"]


def test_region_masks_every_record(catalog, expected_fn, same_answer_fn):
    """``region`` applies to each record; a record that is no antibody V domain fails alone.
    (builtin:protein stands in for an antibody model: the region is masked before decoding.)"""
    pytest.importorskip("anarcism", reason="--region needs the 'antibody' extra")
    from fastapi.testclient import TestClient

    from infill.data.fasta import read_fasta
    from infill.data.regions import mask_region
    from infill.serve.app import create_app
    from infill.serve.catalog import ModelCatalog

    class AntibodyCatalog(ModelCatalog):
        def family(self, name):
            return "antibody" if name == PROTEIN else super().family(name)

    cat = AntibodyCatalog(device="cpu")
    cat._loaded[PROTEIN] = catalog.get(PROTEIN)
    heavy = read_fasta(_data("antibody", "hiv_bnab_heavy.fa"))[:2]
    text = "".join(f">{r.header}\n{r.sequence}\n" for r in heavy) + f">lysozyme\n{SECOND}\n"
    with TestClient(create_app(cat), raise_server_exceptions=False) as c:
        got = c.post("/api/fill", json={"text": text, "model": PROTEIN, "record": "all",
                                        "region": "cdr3", "top_k": 2}).json()
    recs = got["records"]
    for k, rec in enumerate(heavy):
        masked = mask_region(rec.sequence, "cdr3")
        assert "?" in masked and recs[k]["input"] == masked
        want = expected_fn(catalog, PROTEIN, masked, top_k=2, id=rec.id)
        assert same_answer_fn([c["text"] for c in recs[k]["completions"]],
                              [c["text"] for c in want["completions"]])
    with pytest.raises(Exception) as e:
        mask_region(SECOND, "cdr3")
    assert recs[2]["error"] == str(e.value).splitlines()[0] and recs[2]["completions"] == []


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
