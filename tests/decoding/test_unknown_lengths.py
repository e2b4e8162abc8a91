"""Lacunae of unknown length (Leiden ``[---]``, EpiDoc ``<gap extent="unknown">``) restored with
``unknown_lengths`` (issue 47): each becomes a gap of LO-HI characters ranked as ``gap=(lo, hi)``
ranks one -- checked against that and against the length score recomputed here by brute force
(one forward pass per masked position) -- through the job, the command line and EpiDoc in and
out; left as a break without the option."""
from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner

import infill
from infill.data.epidoc import read_edition
from infill.data.leiden import convert
from infill.epigraphy import epidoc_output, restore_files
from infill.errors import ConfigError, InputError
from infill.jobs.fill import fill_inputs

LEIDEN = "ὁ δῆμος ἐτίμη[---]ν ἀνέθηκεν"
MARKED = "ὁ δῆμος ἐτίμη___ν ἀνέθηκεν"
EDITION = """<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title>t</title>
</titleStmt><publicationStmt><p>p</p></publicationStmt><sourceDesc><p>s</p></sourceDesc>
</fileDesc></teiHeader><text><body><div type="edition" xml:lang="grc"><ab>
<lb n="1"/>ὁ δῆμος ἐτίμη<gap reason="lost" extent="unknown" unit="character"/>ν ἀνέθηκεν
</ab></div></body></text></TEI>
"""


@pytest.fixture(scope="module")
def greek(greek_char_dir):
    return infill.load_model(greek_char_dir)


def _job(model, text, **options):
    [one] = list(fill_inputs(model, [text], **options))
    return one.result


def gap_pll(model, text, n, tokens) -> float:
    """Σ over the gap positions of log q_t(x_t | the filled text with t masked), one forward
    pass per position (``pll-gap``, written out here)."""
    enc = model.encode(text, n)
    ids = list(enc.input_ids)
    for p, t in zip(enc.positions, tokens):
        ids[p] = t
    total = 0.0
    for p in enc.positions:
        x = torch.tensor([ids])
        x[0, p] = model.mask_id
        lq = model.log_probs(x, torch.ones_like(x, dtype=torch.bool), torch.tensor([[p]]))[0, 0]
        total += float(lq[ids[p]])
    return total


def test_leiden_unknown_lacuna_is_read_as_a_range():
    assert convert(LEIDEN).text == "ὁ δῆμος ἐτίμη---ν ἀνέθηκεν"        # default: a break
    assert convert(LEIDEN).breaks == 1 and convert(LEIDEN, unknown=(1, 3)).breaks == 0
    assert convert("Α[- - -]Β[---]Γ[.2]Δ[c.3]").breaks == 2 and not convert("Α[.2]Β").breaks
    got = convert("ΑΒ[- - -]ΓΔ[c.3]Ε", unknown=(2, 5))
    assert got.text == "ΑΒ___ΓΔ___Ε" and got.gaps == ((2, 5), (2, 4))
    # too many combinations: the approximate lacunae at their stated length first ...
    got = convert("[---]Α[---]Β[c.10]", unknown=(2, 9))
    assert got.text == "___Α___Β??????????" and got.gaps == ((2, 9), (2, 9))
    # ... then the unknown ones: one line naming the option
    with pytest.raises(InputError, match="unknown_lengths") as e:
        convert("[---]Α[---]Β[---]", unknown=(2, 9))
    assert e.value.field == "unknown_lengths"


@pytest.mark.parametrize("score", ["pll", "pll-gap", "per-char", "per-char-0.7"])
def test_an_unknown_lacuna_ranks_as_a_gap_range(greek, score):
    got = _job(greek, LEIDEN, unknown_lengths="1-3", top_k=6, beam_size=6, length_score=score)
    want = infill.fill(greek, MARKED, gap=(1, 3), top_k=6, beam_size=6, length_score=score)[0]
    assert [(c.text, c.score, c.rank_score) for c in got.completions] == \
        [(c.text, c.score, c.rank_score) for c in want]
    assert got.gap == [(1, 3)] and got.length_score == score


@pytest.mark.parametrize("score", ["pll-gap", "per-char", "per-char-0.7"])
def test_lengths_ranked_exactly_by_the_length_score(greek, score):
    """Every length's own beam (``each``), all completions rescored by brute force: the top
    k of the pool, in order, with the same values."""
    k = beam = 6
    got = _job(greek, LEIDEN, unknown_lengths=(1, 3), top_k=k, beam_size=beam,
               length_score=score, length_beam="each").completions
    pool = []
    for n in (1, 2, 3):
        for c in infill.fill(greek, MARKED, gap=n, top_k=beam, beam_size=beam)[0]:
            power = {"per-char": 1.0, "per-char-0.7": 0.7}.get(score)
            value = gap_pll(greek, MARKED, n, c.tokens) if power is None else \
                c.score / len(c.fills[0]) ** power
            pool.append((value, c.text))
    pool.sort(key=lambda v: -v[0])
    assert [c.text for c in got] == [t for _, t in pool[:k]]
    assert [c.rank_score for c in got] == pytest.approx([v for v, _ in pool[:k]], abs=1e-4)
    if score == "per-char":       # the others' top 6 are all one length on this tiny model
        assert len({len(c.fills[0]) for c in got}) > 1          # the lengths really compete


def test_refused_where_it_cannot_apply(greek, bert):
    with pytest.raises(ConfigError, match="unknown_lengths"):     # fill reads no Leiden
        infill.fill(greek, MARKED, unknown_lengths="1-3")
    with pytest.raises(ConfigError, match="unknown_lengths"):     # a model of word pieces
        list(fill_inputs(bert, ["the [---] sat"], unknown_lengths="1-3"))
    for bad in ("word", "0-3", "3-1", "1-40", 1.5):
        with pytest.raises(InputError, match="unknown_lengths"):
            _job(greek, LEIDEN, unknown_lengths=bad)


def test_only_breaks_name_the_option(greek, greek_char_dir, tmp_path):
    """A text whose only lost text is of unknown extent says how to restore it; with a letter
    to restore as well, the break stays and the letter is restored."""
    from infill_cli.main import main
    [one] = list(fill_inputs(greek, [LEIDEN]))
    err = one.result.error
    assert not one.result.completions and "unknown_lengths" in err and "[---]" in err
    [kept] = list(fill_inputs(greek, ["ὁ δῆμος ἐτίμη[---]ν ἀνέθη[.]εν"], top_k=2))
    assert kept.result.input == "ὁ δῆμος ἐτίμη---ν ἀνέθη?εν" and kept.result.completions
    [sets] = list(fill_inputs(greek, ["ὁ δῆμος ἐτίμη[---]ν ἀνέθη#[κχ]εν"], top_k=2))
    assert {c.fills[0] for c in sets.result.completions} <= {"κ", "χ"}
    r = CliRunner().invoke(main, ["run", "--model", greek_char_dir, LEIDEN])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "--unknown-lengths" in r.stderr
    path = tmp_path / "u.xml"
    path.write_text(EDITION, encoding="utf-8")
    [plain] = restore_files(greek, [str(path)])
    assert any("unknown_lengths" in n for n in plain.notes)
    [given] = restore_files(greek, [str(path)], unknown_lengths="1-3", top_k=2, beam_size=2)
    assert not any("nothing to restore" in n for n in given.notes)


def test_command_line(greek_char_dir):
    from infill_cli.main import main
    r = CliRunner().invoke(main, ["run", "--model", greek_char_dir, "--unknown-lengths", "1-3",
                                  "--json", "-k", "4", LEIDEN])
    assert r.exit_code == 0, r.output
    line = json.loads(r.stdout)
    assert line["input"] == MARKED and line["gap"] == [[1, 3]]
    assert line["config"]["length_score"] and len(line["completions"]) == 4
    plain = CliRunner().invoke(main, ["run", "--model", greek_char_dir, "--json", LEIDEN])
    assert plain.exit_code == 2 and "---" in json.loads(plain.stdout)["input"]   # a break
    bad = CliRunner().invoke(main, ["run", "--model", greek_char_dir, "--unknown-lengths",
                                    "2-1", LEIDEN])
    assert bad.exit_code == 2 and not bad.stdout
    assert bad.stderr.strip().count("\n") == 0 and bad.stderr.startswith("Error: ")


def test_epidoc_round_trip(greek, tmp_path):
    path = tmp_path / "u.xml"
    path.write_text(EDITION, encoding="utf-8")
    [plain] = restore_files(greek, [str(path)])
    assert plain.error is None and not plain.readings                  # a break: untouched
    [r] = restore_files(greek, [str(path)], unknown_lengths="1-3", top_k=5, beam_size=5)
    assert r.error is None and r.rendered.ranges == [(0, (1, 3))]
    want = infill.fill(greek, r.rendered.text.replace("\x00", "___"), gap=[(1, 3)], top_k=5,
                       beam_size=5)[0]
    assert [c.text for c in r.completions] == [c.text for c in want]
    readings = r.readings[0]
    assert {x.text for x in readings} == {c.fills[0] for c in want}
    out = tmp_path / "out.xml"
    out.write_text(epidoc_output(r, "tiny"), encoding="utf-8")
    back = read_edition(str(out))
    [sup] = back.supplements
    assert (sup.node.get("reason"), sup.node.get("cert")) == ("lost", "low")
    app = [el for el in sup.node.iter() if el.tag.endswith("}lem") or el.tag.endswith("}rdg")]
    assert [el.text for el in app] == [x.text for x in readings]
    assert sup.editor == readings[0].text               # the first reading, read back as text


def test_leiden_output(greek, tmp_path):
    from infill.data.epidoc_write import leiden
    from infill.epigraphy import leiden_output
    path = tmp_path / "u.xml"
    path.write_text(EDITION, encoding="utf-8")
    [r] = restore_files(greek, [str(path)], unknown_lengths="1-3", top_k=3, beam_size=3)
    assert leiden_output(r) == f"ὁ δῆμος ἐτίμη[{r.readings[0][0].text}]ν ἀνέθηκεν"
    assert leiden(r.edition) == "ὁ δῆμος ἐτίμη[---]ν ἀνέθηκεν"       # not read: a break again


def test_aeneas_own_search_refuses_infill_decoders_honour(tmp_path):
    """Aeneas's own search sizes '#' itself: unknown_lengths there is one line; the same
    checkpoint under infill's decoders restores [---] at every length."""
    from pathlib import Path

    from infill_cli.main import main
    pkl = str(Path(__file__).resolve().parents[1] / "fixtures" / "aeneas" /
              "aeneas_tiny_greek_numpy.pkl")
    text = "ὁ δῆμος [---] ἀνέθηκεν"
    own = CliRunner().invoke(main, ["run", "--model", pkl, "--order", "any-order",
                                    "--unknown-lengths", "1-3", text])
    assert own.exit_code == 2 and not own.stdout
    assert own.stderr.startswith("Error: ") and own.stderr.strip().count("\n") == 0
    assert "#" in own.stderr and "unknown_lengths" in own.stderr
    ours = CliRunner().invoke(main, ["run", "--model", pkl, "--order", "left-to-right",
                                     "--scorer", "standard", "--unknown-lengths", "1-3",
                                     "--json", text])
    assert ours.exit_code == 0, ours.output
    line = json.loads(ours.stdout)
    assert line["input"] == "ὁ δῆμος ___ ἀνέθηκεν" and line["gap"] == [[1, 3]]


def test_http_fill_and_epidoc(greek, greek_char_dir):
    """POST /api/fill and /api/epidoc take the field and answer as the job does."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from infill.serve.app import create_app
    from infill.serve.catalog import ModelCatalog
    app = create_app(ModelCatalog(extra=(greek_char_dir,), device="cpu"),
                     default_model=greek_char_dir)
    want = _job(greek, LEIDEN, unknown_lengths="1-3", top_k=3)
    with TestClient(app, raise_server_exceptions=False, base_url="http://127.0.0.1:8000") as c:
        # the edition first: an extra model's unit is known once loaded (ModelCatalog.unit)
        plain = c.post("/api/epidoc", json={"xml": EDITION, "top_k": 3}).json()
        assert plain["leiden"] == "ὁ δῆμος ἐτίμη[---]ν ἀνέθηκεν" and not plain["lacunae"]
        ed = c.post("/api/epidoc", json={"xml": EDITION, "top_k": 3, "unknown_lengths": "1-3"})
        [lac] = ed.json()["lacunae"]
        assert lac["lengths"] == [1, 3] and lac["readings"]
        assert ed.json()["leiden"] == f"ὁ δῆμος ἐτίμη[{lac['readings'][0]['text']}]ν ἀνέθηκεν"
        got = c.post("/api/fill", json={"text": LEIDEN, "unknown_lengths": "1-3", "top_k": 3})
        assert got.status_code == 200, got.text
        assert [x["text"] for x in got.json()["completions"]] == \
            [x.text for x in want.completions]
        only = c.post("/api/fill", json={"text": LEIDEN})
        assert only.status_code == 400 and "unknown_lengths" in only.json()["error"]
        bad = c.post("/api/fill", json={"text": LEIDEN, "unknown_lengths": "word"})
        assert bad.status_code == 400 and "unknown_lengths" in bad.json()["error"]
