"""Pairwise joints on a real (tiny, random) BERT loaded through infill, and ``infill joint``.

Uses the session fixture ``bert_dir`` (tests/conftest.py): a saved BertForMaskedLM + tokenizer.
"""
from __future__ import annotations

import json
import math

import pytest
import torch
from click.testing import CliRunner

from infill_cli.joint import joint
from infill.config import DecodeConfig
from infill.joint import build_joints, decode_ag, pair_tables
from infill.joint.metrics import evaluate_joints, make_pairs, read_lines

LINES = [
    "the cat sat on the mat",
    "the dog sat on the cat",
    "the mat sat on the dog",
    "cat",                                   # too short: skipped
    "the dog sat on the mat and the cat",    # 'and' is unknown: [UNK] positions are skipped
    "the cats sat on the mats",
    "on the mat the dog sat",
    "the cat on the mat sat on the dog",
    "dog dog cat cat mat mat",
    "the the the cat",
]


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("jdata") / "lines.txt"
    p.write_text("\n".join(LINES) + "\n\n")
    return str(p)


@pytest.fixture(scope="module")
def hf(bert_dir):
    import infill
    return infill.load_model(bert_dir, device="cpu")


def test_tables_equal_direct_forward_of_the_hf_model(hf, bert_dir):
    from transformers import BertForMaskedLM
    net = BertForMaskedLM.from_pretrained(bert_dir).eval()
    ids = hf.tokenize("the cat sat on the mat")
    a, b = 2, 4
    t = pair_tables(hf, ids, a, b, joint_size=4, gold=(ids[a], ids[b]))

    def forward(x, pos):
        with torch.no_grad():
            return net(input_ids=torch.tensor([x])).logits[0, pos].double()

    # candidates: top-4 non-special ids of the both-masked marginal (+ gold), specials never in
    x = list(ids)
    x[a] = x[b] = hf.mask_id
    f = forward(x, a)
    f[list(hf.special_ids)] = -math.inf
    assert t.cand_a.tolist()[:4] == torch.topk(f, 4).indices.tolist()
    assert not set(t.cand_a.tolist()) & hf.special_ids
    assert (int(t.cand_a[t.gold[0]]), int(t.cand_b[t.gold[1]])) == (ids[a], ids[b])
    for j, wb in enumerate(t.cand_b.tolist()):
        x = list(ids)
        x[a], x[b] = hf.mask_id, wb
        lg = forward(x, a)
        assert torch.allclose(t.logits_a_b[:, j], lg[t.cand_a], atol=1e-4)
        lp = torch.log_softmax(lg, 0)[t.cand_a]
        assert torch.allclose(t.log_qa_b[:, j], lp - torch.logsumexp(lp, 0), atol=1e-5)
    for i, wa in enumerate(t.cand_a.tolist()):
        x = list(ids)
        x[a], x[b] = wa, hf.mask_id
        lp = torch.log_softmax(forward(x, b), 0)[t.cand_b]
        assert torch.allclose(t.log_qb_a[i], lp - torch.logsumexp(lp, 0), atol=1e-5)
    joints, info = build_joints(t)
    assert list(joints) == ["MLM", "MRF-L", "MRF", "HCB", "AG"]
    for lj in joints.values():
        assert lj.dtype == torch.float64 and torch.isfinite(lj).all()
        assert abs(float(lj.exp().sum()) - 1) < 1e-9
    assert info.iterations == 50
    assert all(y <= x + 1e-12 for x, y in zip(info.objective, info.objective[1:]))


def test_full_vocabulary_grid_when_small(hf):
    ids = hf.tokenize("the cat sat on the mat")
    t = pair_tables(hf, ids, 1, 2, joint_size=50)
    allowed = sorted(set(range(hf.vocab_size)) - hf.special_ids)
    assert sorted(t.cand_a.tolist()) == allowed and sorted(t.cand_b.tolist()) == allowed


def test_make_pairs_on_hf(hf):
    ex = make_pairs(hf, LINES, 6, scheme="random", seed=3)
    assert len(ex) == 6
    assert [(e.line, e.a, e.b) for e in ex] == \
        [(e.line, e.a, e.b) for e in make_pairs(hf, LINES, 6, scheme="random", seed=3)]
    assert [(e.line, e.a, e.b) for e in ex] != \
        [(e.line, e.a, e.b) for e in make_pairs(hf, LINES, 6, scheme="random", seed=4)]
    for e in ex:
        assert e.a < e.b and LINES[e.line] != "cat"
        assert e.gold[0] not in hf.special_ids and e.gold[1] not in hf.special_ids
    ex_c = make_pairs(hf, LINES, 20, scheme="contiguous", seed=0)
    assert len(ex_c) == 9 and all(e.b == e.a + 1 for e in ex_c)


def _run(args):
    return CliRunner().invoke(joint, args, catch_exceptions=False)


def _printed_table(output: str) -> dict[str, list[str]]:
    rows = {}
    for ln in output.splitlines():
        parts = ln.split()
        if parts and parts[0] in ("MLM", "MRF-L", "MRF", "HCB", "AG") and len(parts) == 5:
            rows[parts[0]] = parts[1:]
    return rows


def test_cli_table_json_markdown_png(bert_dir, data_file, hf, tmp_path):
    out = tmp_path / "out"
    args = ["--model", bert_dir, "--data", data_file, "--pair-scheme", "random", "-n", "5",
            "--joint-size", "5", "--ag-iterations", "20", "--seed", "1", "--no-progress",
            "--device", "cpu"]
    r = _run(args + ["--out", str(out)])
    assert r.exit_code == 0, r.output
    rows = _printed_table(r.output)
    assert list(rows) == ["MLM", "MRF-L", "MRF", "HCB", "AG"]
    data = json.loads((out / "joint.json").read_text())
    assert data["settings"]["n"] == 5 and data["settings"]["pair_scheme"] == "random"
    for name, cells in rows.items():
        t = data["table"][name]
        assert cells == [f"{t['U-PPL']:.3f}", f"{t['P-PPL']:.3f}", f"{t['A-KL']:.4f}",
                         f"{t['G-KL']:.4f}"]
    # the same numbers through the Python API
    ex = make_pairs(hf, read_lines(data_file), 5, scheme="random", seed=1)
    api = evaluate_joints(hf, ex, joint_size=5, iterations=20)
    for name in rows:
        for m, v in api.table[name].items():
            assert data["table"][name][m] == pytest.approx(v, rel=1e-6)
    assert len(data["records"]) == 5 and data["distance_breakdown"]["AG"]
    md = (out / "joint.md").read_text()
    assert "| joint | U-PPL | P-PPL | A-KL | G-KL |" in md and "| AG |" in md
    assert (out / "distance.png").read_bytes()[:4] == b"\x89PNG"
    # seeded: a second run gives the same table
    r2 = _run(args + ["--out", str(tmp_path / "out2")])
    assert r2.exit_code == 0
    assert json.loads((tmp_path / "out2" / "joint.json").read_text())["table"] == data["table"]


def test_cli_contiguous(bert_dir, data_file, tmp_path):
    r = _run(["--model", bert_dir, "--data", data_file, "--pair-scheme", "contiguous", "--examples", "3",
              "--joint-size", "4", "--ag-iterations", "5", "--out", str(tmp_path), "--no-progress",
              "--device", "cpu"])
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "joint.json").read_text())
    assert [rec["distance"] for rec in data["records"]] == [1, 1, 1]


def test_cli_text_mode_prints_top_pairs(bert_dir, hf):
    text = "the cat ___ ___ the mat"
    r = _run(["--model", bert_dir, "--top-k", "3", "--joint-size", "6", "--device", "cpu", text])
    assert r.exit_code == 0, r.output
    out = r.output.splitlines()
    heads = [i for i, ln in enumerate(out) if ln in ("MLM", "MRF-L", "MRF", "HCB", "AG")]
    assert [out[i] for i in heads] == ["MLM", "MRF-L", "MRF", "HCB", "AG"]
    ag_lines = out[heads[-1] + 1:heads[-1] + 4]
    assert [ln.strip()[:2] for ln in ag_lines] == ["1.", "2.", "3."]
    # the AG list is what decode_ag ranks first
    enc = hf.encode(text, gap=1)
    best = decode_ag(hf, [enc.input_ids], DecodeConfig(decoder="ag", joint_size=6, beam_size=3))[0]
    for ln, h in zip(ag_lines, best):
        assert f"[{hf.id_to_token(h.tokens[0])} | {hf.id_to_token(h.tokens[1])}]" in ln
        assert f"p={math.exp(h.score):.4f}" in ln
    probs = [float(ln.split("p=")[1].split()[0]) for ln in ag_lines]
    assert probs == sorted(probs, reverse=True)
    # one gap of two tokens is the same input
    r2 = _run(["--model", bert_dir, "-k", "3", "--joint-size", "6", "--gap", "2",
               "--device", "cpu", "the cat ___ the mat"])
    assert r2.exit_code == 0 and r2.output == r.output


@pytest.mark.parametrize("args, message", [
    (["the cat ___ on the mat"], "exactly two gap tokens"),
    (["--data", "/nonexistent/file.txt"], "data file not found"),
    (["-n", "-1", "--data", "x"], "-1"),
    (["--converged-tol", "-1", "--data", "x"], "'--converged-tol': -1.0 is not in the range"),
    (["--data", "x", "the ___ ___"], "either a text (TEXT) or --data"),
])
def test_cli_errors_are_one_line(bert_dir, args, message):
    r = CliRunner().invoke(joint, ["--model", bert_dir, "--device", "cpu"] + args)
    assert r.exit_code == 2
    err = r.stderr if r.stderr_bytes is not None else r.output
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error:") and message in lines[0]


def test_cli_bad_model_and_registration(tmp_path):
    r = CliRunner().invoke(joint, ["--model", str(tmp_path), "--data", __file__])
    assert r.exit_code == 2 and "Error:" in r.output and "Traceback" not in r.output
    from infill_cli.main import main
    r = CliRunner().invoke(main, ["joint", "--help"])
    assert r.exit_code == 0 and "--joint-size" in r.output and "--pair-scheme" in r.output


def test_held_out_sources(bert_dir, hf, data_file):
    from infill.errors import InputError
    from infill.joint.metrics import held_out
    assert held_out(bert_dir, hf, data_file, "all") == [ln for ln in LINES if ln]
    # a split needs the model's recorded training split (train_info.json / split.json)
    with pytest.raises(InputError, match="no recorded training split"):
        held_out(bert_dir, hf, data_file, "test")
    r = CliRunner().invoke(joint, ["--model", bert_dir, "--data", "english", "--device", "cpu"])
    assert r.exit_code == 2 and "Error:" in r.output and "Traceback" not in r.output


def test_ag_scorer_through_the_public_api(hf):
    import infill
    enc = hf.encode("the cat ___ on the mat", gap=2)
    direct = decode_ag(hf, [enc.input_ids], DecodeConfig(decoder="ag", beam_size=3))[0]
    got = infill.fill(hf, "the cat ___ on the mat", gap=2, decoder="ag", beam_size=3, top_k=3)[0]
    assert [c.tokens for c in got] == [h.tokens for h in direct]
    assert [c.score for c in got] == pytest.approx([h.score for h in direct])
    assert infill.decode(hf, enc.input_ids, decoder="ag", beam_size=3) == direct
    # the old spelling scorer="ag" still selects the AG decoder
    assert infill.decode(hf, enc.input_ids, scorer="ag", beam_size=3) == direct


@pytest.mark.parametrize("model, corpus", [("builtin:greek", "greek/perseus_grc.txt"),
                                           ("builtin:protein", "protein/hypf.fa")])
def test_default_data_is_the_corpus_the_model_was_trained_on(tmp_path, model, corpus):
    """Without --data, a model trained by `infill train` (every builtin) is evaluated on its own
    family's corpus: here an empty data folder, so the error names that corpus's file."""
    r = CliRunner().invoke(joint, ["--model", model, "--data-dir", str(tmp_path), "-n", "5"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert f"holding {corpus}" in r.stderr


def test_no_default_data_for_a_model_without_a_training_record(bert_dir):
    r = CliRunner().invoke(joint, ["--model", bert_dir, "-n", "5"])
    assert r.exit_code == 2 and "give --data FILE" in r.stderr


# -- TEXT --json, and long inputs as in `infill run` ----------------------------------------------
PAIR_TEXT = "the cat ___ ___ the mat"
LONG_PAIR = PAIR_TEXT + " on the mat" * 8                 # 32 tokens; the tiny BERT takes 24
TEXT_ARGS = ["--top-k", "3", "--joint-size", "6", "--device", "cpu"]


def _json_lines(r) -> list[dict]:
    lines = r.stdout.splitlines()
    assert lines and all(ln.strip() for ln in lines)
    return [json.loads(ln) for ln in lines]               # every line one JSON object


def test_cli_text_mode_json_lines(bert_dir, hf):
    r = _run(["--model", bert_dir, *TEXT_ARGS, "--json", PAIR_TEXT])
    assert r.exit_code == 0 and r.stderr == "", r.output
    (row,) = _json_lines(r)
    assert row["input"] == PAIR_TEXT and row["model"] == bert_dir and row["error"] is None
    assert row["windows"] == [] and row["grid"] == [6, 6] and row["ag"]["iterations"] == 50
    assert list(row["joints"]) == ["MLM", "MRF-L", "MRF", "HCB", "AG"]
    enc = hf.encode(PAIR_TEXT, gap=1)
    assert row["positions"] == list(enc.positions)
    best = decode_ag(hf, [enc.input_ids], DecodeConfig(decoder="ag", joint_size=6, beam_size=3))[0]
    ag = row["joints"]["AG"]
    assert [p["rank"] for p in ag] == [1, 2, 3]
    assert [p["tokens"] for p in ag] == [list(h.tokens) for h in best]
    assert [p["prob"] for p in ag] == pytest.approx([math.exp(h.score) for h in best])
    assert all(p["logp"] == pytest.approx(math.log(p["prob"])) for p in ag)
    for p in ag:
        assert p["token_strings"] == [hf.id_to_token(t) for t in p["tokens"]]
        assert p["text"] == f"the cat {p['fills'][0]} {p['fills'][1]} the mat"
    # the table shows the same pairs
    table = _run(["--model", bert_dir, *TEXT_ARGS, PAIR_TEXT]).output.splitlines()
    at = table.index("AG")
    for ln, p in zip(table[at + 1:at + 4], ag):
        assert f"p={p['prob']:.4f}  [{' | '.join(p['token_strings'])}]  {p['text']}" in ln


def test_cli_text_mode_long_input_is_windowed_noted_once_and_recorded(bert_dir, hf):
    r = _run(["--model", bert_dir, *TEXT_ARGS, "--json", LONG_PAIR])
    assert r.exit_code == 0, r.output
    assert r.stderr.splitlines() == [
        "note: input longer than the model's maximum length (24 tokens): read in the longest "
        "context window centred on the gaps (--no-window to refuse)"]
    (row,) = _json_lines(r)
    (w,) = row["windows"]
    assert w["gaps"] == [0, 1] and w["end"] - w["start"] == hf.max_length - 2
    assert w["start"] <= row["positions"][0] < row["positions"][1] < w["end"]
    assert all(p["text"].endswith(" on the mat" * 8) for p in row["joints"]["AG"])
    table = _run(["--model", bert_dir, *TEXT_ARGS, LONG_PAIR])
    assert table.exit_code == 0 and table.stderr == r.stderr     # the same one note
    enc = hf.encode(LONG_PAIR, gap=1)
    with pytest.warns(UserWarning, match="maximum length"):
        t = pair_tables(hf, enc.input_ids, *enc.positions, joint_size=6)
    assert t.window == (w["start"], w["end"])


def test_cli_text_mode_no_window_refuses(bert_dir, hf):
    r = CliRunner().invoke(joint, ["--model", bert_dir, *TEXT_ARGS, "--no-window", "--json",
                                   LONG_PAIR])
    assert r.exit_code == 2 and r.stdout == "" and "Traceback" not in r.output
    (line,) = r.stderr.splitlines()
    assert line.startswith("Error: input is 30 tokens long") and "maximum length 22 tokens" in line
    assert "drop --no-window to read it in context windows" in line
    assert _run(["--model", bert_dir, *TEXT_ARGS, "--no-window", PAIR_TEXT]).exit_code == 0
    from infill.errors import InputError
    enc = hf.encode(LONG_PAIR, gap=1)
    with pytest.raises(InputError, match="maximum length"):
        pair_tables(hf, enc.input_ids, *enc.positions, joint_size=6, window=False)


def test_cli_data_mode_long_lines(bert_dir, hf, tmp_path):
    f = tmp_path / "long.txt"
    f.write_text("\n".join(LINES[:3] + [LINES[0] + " on the mat" * 8,
                                        LINES[1] + " on the mat" * 9]) + "\n")
    args = ["--model", bert_dir, "--data", str(f), "-n", "5", "--joint-size", "4",
            "--ag-iterations", "5", "--no-progress", "--device", "cpu", "--json"]
    r = _run(args)
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["settings"]["n"] == 5
    windows = data["windows"]
    assert sorted(w["line"] for w in windows) == [3, 4]
    for w in windows:
        assert w["end"] - w["start"] == hf.max_length - 2 and w["start"] <= w["a"] < w["b"] < w["end"]
    assert r.stderr.splitlines() == [
        "note: 2 of 5 examples longer than the model's maximum length (24 tokens): each pair "
        "read in the longest context window centred on it (--no-window to skip them)"]
    # --no-window: the long lines do not qualify
    r = _run(args + ["--no-window"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["windows"] == [] and json.loads(r.stdout)["settings"]["n"] == 3
    assert r.stderr.splitlines() == ["note: only 3 pairs qualify (5 texts, 1 per text); using 3"]
    assert all(len(e.input_ids) <= hf.max_length
               for e in make_pairs(hf, read_lines(str(f)), 5, window=False))
