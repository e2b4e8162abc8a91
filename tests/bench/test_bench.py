"""infill bench: metrics, data and gap selection, the methods grid, resumable runs, the CLI."""
from __future__ import annotations

import json
import math

import pytest
import torch
from click.testing import CliRunner

import infill
from infill.bench import BenchConfig, run_bench
from infill.bench import gaps as bgaps
from infill.bench.methods import build_grid, expand_names
from infill.bench.metrics import (BertScore, corpus_bleu, gold_rank, sentence_bleu, topk_hits,
                                  usable_ks)
from infill.bench.runner import RESULTS, read_rows
from infill.errors import ConfigError, InputError

TEXTS = ["the cat sat on the mat", "the dog sat", "cat", "the cats sat on the dog mat",
         "on the mat the dog sat", "dog dog", "the mat"]


# ---- metrics ----------------------------------------------------------------------------------
def test_gold_rank_and_topk_hits():
    hyps = [(1, 2), (3, 4), (5, 6)]
    assert gold_rank((3, 4), hyps) == 2
    assert gold_rank([5, 6], hyps) == 3
    assert gold_rank((9, 9), hyps) is None
    assert topk_hits(2, [1, 5]) == {1: False, 5: True}
    assert topk_hits(1, [1, 5]) == {1: True, 5: True}
    assert topk_hits(None, [1, 5]) == {1: False, 5: False}
    assert usable_ks([1, 5, 10, 20], 5) == [1, 5]
    assert usable_ks([20, 1, 10], 20) == [1, 10, 20]


def test_bleu_hand_computed():
    # BLEU-n with n = gap length (<= 4), sacrebleu's exp smoothing for empty n-gram orders.
    assert sentence_bleu([1, 2], [1, 2]) == pytest.approx(100.0)
    assert sentence_bleu([3, 4], [1, 2]) == pytest.approx(0.0)
    # p1 = 1/2, p2 = 0 -> smoothed 1/2: sqrt(1/2 * 1/2)
    assert sentence_bleu([1, 3], [1, 2]) == pytest.approx(50.0)
    # p1..p4 = 3/4, 2/3, 1/2, smoothed 1/2
    assert sentence_bleu([1, 2, 3, 5], [1, 2, 3, 4]) == pytest.approx(
        100 * (3 / 4 * 2 / 3 * 1 / 2 * 1 / 2) ** 0.25)
    # corpus: p1 = 3/4, p2 = 1/2 (clipped counts summed over both sentences), BP = 1
    assert corpus_bleu([[1, 2], [1, 3]], [[1, 2], [1, 2]]) == pytest.approx(100 * math.sqrt(3 / 8))
    # a one-token gap is BLEU-1 = unigram precision
    assert corpus_bleu([[1], [2], [3], [3]], [[1], [2], [3], [4]]) == pytest.approx(75.0)


def test_bertscore_missing_model_is_left_out_with_warning(tmp_path):
    with pytest.warns(UserWarning, match="BERTScore left out"):
        assert BertScore.load(str(tmp_path / "no-such-model")) is None


def test_bertscore_local_model(bert_dir):
    scorer = BertScore.load(bert_dir)
    assert scorer is not None
    f = scorer.f1(["the cat sat on the mat", "the dog"], ["the cat sat on the mat", "mat on cat"])
    assert f[0] == pytest.approx(1.0, abs=1e-5)
    assert f[1] < 0.999


def _lists(model, texts):
    return bgaps.tokenize_texts(model, texts, list(range(len(texts))))


def test_gap_selection_deterministic_and_skips_counted(bert):
    lists = _lists(bert, TEXTS)
    exs, skipped = bgaps.select_examples(bert, lists, [1, 2, 3], seed=7)
    again, skipped2 = bgaps.select_examples(bert, lists, [1, 2, 3], seed=7)
    assert exs == again and skipped == skipped2
    # ordinary (non-special) token counts: 6, 3, 1, 8 (cats = cat ##s), 6, 2, 2
    assert skipped == {1: 0, 2: 1, 3: 3}
    assert sum(e.n == 3 for e in exs) == len(TEXTS) - 3
    for e in exs:
        full = lists[e.example_id]
        assert list(e.ids) == full  # short texts are not truncated
        assert all(t not in bert.special_ids for t in e.gold)
        masked = e.masked(bert.mask_id)
        assert masked.count(bert.mask_id) == e.n
        assert e.filled(e.gold) == full
    # a span does not depend on which other examples or gap lengths are selected
    sub, _ = bgaps.select_examples(bert, {3: lists[3]}, [2], seed=7)
    assert sub == [e for e in exs if e.example_id == 3 and e.n == 2]
    # another seed moves at least one span
    other, _ = bgaps.select_examples(bert, lists, [1, 2, 3], seed=8)
    assert [e.start for e in other] != [e.start for e in exs]


def test_truncation_keeps_specials_and_centres_the_gap(bert):
    long_text = " ".join(["the cat sat on the mat"] * 8)   # 48 words + 2 specials > 24
    ids = bert.tokenize(long_text)
    assert len(ids) > bert.max_length
    exs, _ = bgaps.select_examples(bert, {0: ids}, [1, 2, 3, 4], seed=0)
    for e in exs:
        assert len(e.ids) == bert.max_length
        assert e.ids[0] == ids[0] and e.ids[-1] == ids[-1]          # [CLS] ... [SEP]
        assert all(t not in bert.special_ids for t in e.ids[1:-1])
        assert tuple(e.gold) == tuple(e.ids[e.start:e.start + e.n])
        # the span in the full input (same seeded draw), and the window centred on it: its left
        # edge is the span's middle minus half the width, clipped to the body [1, len - 1)
        import random
        start = bgaps.choose_span(bgaps.ordinary_positions(bert, ids), e.n,
                                  random.Random(bgaps.derive_seed(0, 0, e.n)))
        width = bert.max_length - 2
        left = min(max(1, (2 * start + e.n) // 2 - width // 2), len(ids) - 1 - width)
        assert e.ids == (ids[0], *ids[left:left + width], ids[-1])
        assert e.start == start - left + 1


def test_pick_indices_seeded_subset():
    a = bgaps.pick_indices(list(range(100)), 10, seed=3)
    assert a == bgaps.pick_indices(list(range(100)), 10, seed=3)
    assert a == sorted(a) and len(set(a)) == 10
    assert a != bgaps.pick_indices(list(range(100)), 10, seed=4)
    assert bgaps.pick_indices([5, 6], None, 0) == [5, 6]


# ---- methods -------------------------------------------------------------------------------------
def test_methods_grid():
    names = expand_names("beam,pure,std-l2r,temp0.25,nucleus")
    assert names == ["hcb-l2r", "hcb-b2w", "standard-l2r", "standard-b2w", "pure", "temp0.25",
                     "nucleus0.9"]
    grid = build_grid(names, [5, 20], pivots=[(4, "[MASK]"), (2, "[CLS]")])
    keys = [m.key for m in grid]
    assert "hcb-l2r/b5/pivot=[CLS]" in keys and "standard-b2w/b20" in keys
    assert "nucleus0.9/b20" in keys
    # hcb x 2 pivots + 5 others, per beam
    assert len(grid) == 2 * (2 * 2 + 5)
    t = next(m for m in grid if m.name == "temp0.25")
    base = infill.DecodeConfig(seed=3)
    assert t.decode_config(base) == infill.DecodeConfig(
        scorer="standard", order="left-to-right", beam_size=5, sampling="temperature",
        temperature=0.25, seed=3)
    b2w = next(m for m in grid if m.key == "hcb-b2w/b5/pivot=[CLS]")
    assert b2w.decode_config(base) == infill.DecodeConfig(scorer="hcb", order="best-to-worst",
                                                          beam_size=5, pivot=2, seed=3)
    assert len(expand_names("all")) == 15
    with pytest.raises(ConfigError, match="unknown method"):
        expand_names("hcb-r2l")
    with pytest.raises(ConfigError, match="beam"):
        build_grid(["pure"], [0])


# ---- results file ------------------------------------------------------------------------------
def _row(key: str) -> str:
    return json.dumps({"key": key, "method": "hcb-l2r/b4", "n": 1, "gold": [5], "hyps": [[5]],
                       "hits": {"1": True}, "bleu": 100.0, "forward_calls": 1, "forward_rows": 1.0,
                       "seconds": 0.1})


def test_read_rows_drops_truncated_last_line(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text(_row("a") + "\n" + _row("b") + "\n" + _row("c")[:30])
    assert [r["key"] for r in read_rows(p)] == ["a", "b"]
    assert p.read_text() == _row("a") + "\n" + _row("b") + "\n"
    p.write_text(_row("a") + '\n{"key": \n' + _row("c") + "\n")
    with pytest.raises(InputError, match="line 2 is corrupt"):
        read_rows(p)


@pytest.mark.parametrize("line", ["{}", "[1]", "NaN", '"row"', '{"key": "a"}',
                                  _row("a").replace('"n": 1', '"n": "1"')])
def test_read_rows_refuses_json_that_is_not_a_row(tmp_path, line):
    p = tmp_path / "r.jsonl"
    p.write_text(_row("a") + "\n" + line + "\n")
    with pytest.raises(InputError, match="line 2 is corrupt"):
        read_rows(p)


# ---- runs ----------------------------------------------------------------------------------------
def _corpus(tmp_path):
    p = tmp_path / "corpus.txt"
    p.write_text("\n".join(TEXTS) + "\n")
    return str(p)


def _config(bert_dir, corpus, **kw):
    base = dict(model=bert_dir, data=corpus, limit=None, gaps=[1, 2], beams=[4],
                methods=["hcb-l2r", "standard-b2w", "temp0.5"], ks=[1, 3, 10], batch_size=2,
                device="cpu")
    base.update(kw)
    return BenchConfig(**base)


def _strip(rows):
    drop = {"seconds"}
    return sorted(({k: v for k, v in r.items() if k not in drop} for r in rows),
                  key=lambda r: r["key"])


def test_rows_match_decode_and_metrics(tmp_path, bert_dir, bert):
    cfg = _config(bert_dir, _corpus(tmp_path))
    summary = run_bench(cfg, tmp_path / "out", model=bert, progress=False)
    rows = read_rows(tmp_path / "out" / RESULTS)
    # 3 methods x (7 examples at n=1 + 6 at n=2)
    assert len(rows) == 3 * 13 == summary["counts"]["rows"] and summary["complete"]
    assert summary["counts"]["skipped"] == {"1": 0, "2": 1}
    lists = _lists(bert, TEXTS)
    for r in rows[:5] + rows[-5:]:
        ids = lists[r["example_id"]]
        assert r["gold"] == ids[r["start"]:r["start"] + r["n"]]
        assert r["rank"] == gold_rank(r["gold"], r["hyps"])
        assert r["hits"] == {"1": r["rank"] == 1, "3": r["rank"] is not None and r["rank"] <= 3}
        assert r["gold_text"] == bert.detokenize(ids)
    # the one-token HCB rows: top-1 = argmax of the model's conditional over non-special tokens
    for r in [r for r in rows if r["method"] == "hcb-l2r/b4" and r["n"] == 1]:
        ids = list(lists[r["example_id"]])
        ids[r["start"]] = bert.mask_id
        lp = bert.log_probs(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.bool),
                            torch.tensor([[r["start"]]]))[0, 0]
        lp[list(bert.special_ids)] = -math.inf
        assert r["hyps"][0] == [int(lp.argmax())]
        assert r["forward_calls"] == 1
    # the summary's top-1 is the mean of the rows' hits
    cell = next(c for c in summary["cells"] if c["method"] == "standard-b2w/b4" and c["n"] == 2)
    sel = [r for r in rows if r["method"] == "standard-b2w/b4" and r["n"] == 2]
    assert cell["count"] == 6
    assert cell["top1"] == pytest.approx(100 * sum(r["rank"] == 1 for r in sel) / 6)
    assert cell["bleu"] == pytest.approx(corpus_bleu([r["hyps"][0] for r in sel],
                                                     [r["gold"] for r in sel]))
    assert "top10" not in cell and "bertscore" not in cell   # k > beam; no scorer asked for
    assert cell["forward_calls_per_example"] == 2


def test_resume_after_interrupt_loses_and_duplicates_nothing(tmp_path, bert_dir):
    corpus = _corpus(tmp_path)
    cfg = _config(bert_dir, corpus)
    full = run_bench(cfg, tmp_path / "full", model=infill.load_model(bert_dir, device="cpu"),
                     progress=False)
    ref = _strip(read_rows(tmp_path / "full" / RESULTS))

    model = infill.load_model(bert_dir, device="cpu")
    orig, calls = model.log_probs, {"n": 0}

    def failing(*a):
        calls["n"] += 1
        if calls["n"] > 7:
            raise KeyboardInterrupt("simulated interrupt")
        return orig(*a)

    model.log_probs = failing
    with pytest.raises(KeyboardInterrupt):
        run_bench(cfg, tmp_path / "part", model=model, progress=False)
    res = tmp_path / "part" / RESULTS
    partial = read_rows(res)
    assert 0 < len(partial) < len(ref)
    # and a write cut in the middle of a line
    with open(res, "a") as f:
        f.write('{"key": "hcb-l2r/b4|n=1|ex=')
    model.log_probs = orig
    summary = run_bench(cfg, tmp_path / "part", model=model, progress=False)
    rows = read_rows(res)
    keys = [r["key"] for r in rows]
    assert len(keys) == len(set(keys)) == len(ref)
    assert len(res.read_text().splitlines()) == len(ref)
    assert _strip(rows) == ref   # same fills, scores, ranks (sampling method included)
    assert [c["top1"] for c in summary["cells"]] == [c["top1"] for c in full["cells"]]
    # a third run has nothing left to do and changes nothing
    n_calls = calls["n"]
    run_bench(cfg, tmp_path / "part", model=model, progress=False)
    assert calls["n"] == n_calls and len(read_rows(res)) == len(ref)


def test_changed_arguments_are_refused(tmp_path, bert_dir, bert):
    corpus = _corpus(tmp_path)
    run_bench(_config(bert_dir, corpus, gaps=[1], methods=["hcb-l2r"]), tmp_path / "o",
              model=bert, progress=False)
    with pytest.raises(ConfigError, match="different arguments .*gap_lengths"):
        run_bench(_config(bert_dir, corpus, gaps=[2], methods=["hcb-l2r"]), tmp_path / "o",
                  model=bert, progress=False)
    s = run_bench(_config(bert_dir, corpus, gaps=[2], methods=["hcb-l2r"]), tmp_path / "o",
                  model=bert, progress=False, overwrite=True)
    assert {c["n"] for c in s["cells"]} == {2, "all"}


def test_retrained_model_is_refused(tmp_path, bert_dir, bert):
    import shutil
    model_dir = tmp_path / "model"
    shutil.copytree(bert_dir, model_dir)
    cfg = _config(str(model_dir), _corpus(tmp_path), gaps=[1], methods=["hcb-l2r"])
    run_bench(cfg, tmp_path / "o", model=bert, progress=False)
    run_bench(cfg, tmp_path / "o", model=bert, progress=False)  # unchanged: resumes
    (model_dir / "model.safetensors").write_bytes(b"retrained")
    with pytest.raises(ConfigError, match="another version of model"):
        run_bench(cfg, tmp_path / "o", model=bert, progress=False)


def test_pivot_sweep(tmp_path, bert_dir, bert):
    cfg = _config(bert_dir, _corpus(tmp_path), gaps=[2], methods=["hcb-l2r"], pivots=["all"],
                  limit=3)
    s = run_bench(cfg, tmp_path / "sweep", model=bert, progress=False)
    pivots = {c["pivot"] for c in s["cells"]}
    assert pivots == {bert.id_to_token(i) for i in range(bert.vocab_size)}
    assert "pivot_sweep.png" in s["plots"]
    assert (tmp_path / "sweep" / "pivot_sweep.png").stat().st_size > 0
    # the [MASK] pivot is the default pivot: same fills as the default run
    d = run_bench(_config(bert_dir, cfg.data, gaps=[2], methods=["hcb-l2r"], limit=3),
                  tmp_path / "default", model=bert, progress=False)
    mask_rows = [r for r in read_rows(tmp_path / "sweep" / RESULTS) if r["pivot"] == "[MASK]"]
    def_rows = read_rows(tmp_path / "default" / RESULTS)
    assert [r["hyps"] for r in mask_rows] == [r["hyps"] for r in def_rows]
    assert d["counts"]["used"] == s["counts"]["used"]


# ---- CLI -----------------------------------------------------------------------------------------
def test_cli_end_to_end(tmp_path, bert_dir):
    from infill_cli.main import main

    corpus = _corpus(tmp_path)
    out = tmp_path / "cli"
    args = ["bench", corpus, "--model", bert_dir, "--out", str(out), "--gap-lengths", "1,2",
            "--methods", "hcb-l2r,standard-l2r,hcb-b2w", "--beam", "3", "--topk", "1,3",
            "--examples", "5",
            "--device", "cpu", "--no-progress", "--bertscore-model", str(tmp_path / "nope")]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    for f in ("results.jsonl", "config.json", "summary.json", "summary.md", "topk_vs_k.png",
              "accuracy_vs_gap.png"):
        assert (out / f).stat().st_size > 0
    assert "Warning: BERTScore left out" in res.output
    md = (out / "summary.md").read_text()
    assert "### Top-1 exact match (%)" in md and "### Top-3 exact match (%)" in md
    assert "| method | n=1 | n=2 | all |" in md
    assert "BERTScore left out" in md and "### BERTScore" not in md
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["examples_drawn"] == 5
    rows = read_rows(out / RESULTS)
    assert len(rows) == 3 * sum(summary["counts"]["used"].values())
    for c in summary["cells"]:
        if c["n"] == "all":
            continue
        sel = [r for r in rows if r["method"] == c["method"] and r["n"] == c["n"]]
        line = f"| {c['method']} |"
        assert line in md
        assert c["top1"] == pytest.approx(100 * sum(r["rank"] == 1 for r in sel) / len(sel))
        row = next(l for l in md.splitlines() if l.startswith(line) and "%" not in l)
        assert f"{c['top1']:.1f}" in row
    # re-running continues (nothing to do) and reports the same table
    res2 = CliRunner().invoke(main, args)
    assert res2.exit_code == 0 and (out / "summary.md").read_text() == md
    # errors are one clean line with exit code 2
    bad = CliRunner().invoke(main, args[:-2] + ["--gap-lengths", "1,x"])
    assert bad.exit_code == 2 and \
        "Error: --gap-lengths must be comma-separated integers" in bad.output
    bad = CliRunner().invoke(main, ["bench", corpus, "--model", bert_dir, "--out", str(out),
                                    "--methods", "nope", "--device", "cpu", "--no-progress"])
    assert bad.exit_code == 2 and "Error:" in bad.output and "Traceback" not in bad.output


# ---- held-out split ----------------------------------------------------------------------------
def test_test_split_uses_the_training_familys_examples_and_split(tmp_path):
    from infill.data.greek import GREEK
    from infill.models.char import save_char
    from infill.data.splits import split_indices
    from infill.training.greek import GreekFamily

    corpus = tmp_path / "grc.txt"
    corpus.write_text("Μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην, ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε,\n"
                      * 30, encoding="utf-8")
    torch.manual_seed(0)
    fam = GreekFamily(layers=1, hidden=16, heads=2, max_length=24)
    save_char(fam.build_model().eval(), tmp_path / "m", GREEK)
    examples = fam.load_examples(str(corpus), tmp_path)
    split = split_indices(len(examples), seed=0, val_fraction=0.2, test_fraction=0.2)
    # the split recorded next to the model wins over the defaults
    (tmp_path / "m" / "split.json").write_text(json.dumps({"n_examples": len(examples), **split}))
    model = infill.load_model(str(tmp_path / "m"), device="cpu")
    cfg = BenchConfig(model=str(tmp_path / "m"), data=str(corpus), split="test", family="greek",
                      limit=None, gaps=[2], methods=["hcb-l2r"], device="cpu")
    s = run_bench(cfg, tmp_path / "out", model=model, progress=False)
    rows = read_rows(tmp_path / "out" / RESULTS)
    assert sorted(r["example_id"] for r in rows) == split["test"]
    assert s["counts"]["corpus_examples"] == len(examples)
    for r in rows:
        ids = examples[r["example_id"]]
        assert r["gold"] == ids[r["start"]:r["start"] + 2]
    with pytest.raises(ConfigError, match="'family'"):
        run_bench(BenchConfig(model=str(tmp_path / "m"), data=str(corpus), split="test",
                              gaps=[2], device="cpu"), tmp_path / "o2", model=model, progress=False)


# ---- resuming a sharded run, length-ordered batches ------------------------------------------------
def _cells(summary):
    return [{k: v for k, v in c.items() if k != "examples_per_s"} for c in summary["cells"]]


def test_sharded_rows_resume_in_one_process(tmp_path, bert_dir, bert):
    """Two ranks died before rank 0 merged (their rows in results.rank*.jsonl, some also in
    results.jsonl): a plain single-process run takes every one of them into account."""
    from infill.bench.runner import read_all_rows
    cfg = _config(bert_dir, _corpus(tmp_path))
    full = run_bench(cfg, tmp_path / "full", model=bert, progress=False)
    lines = (tmp_path / "full" / RESULTS).read_text().splitlines()
    ref = [{k: v for k, v in json.loads(x).items() if k != "seconds"} for x in lines]
    out = tmp_path / "out"
    out.mkdir()
    (out / "config.json").write_text((tmp_path / "full" / "config.json").read_text())
    (out / RESULTS).write_text("\n".join(lines[:2]) + "\n")                  # 2 merged rows
    (out / "results.rank0.jsonl").write_text("\n".join(lines[1:6:2]) + "\n")  # 1 of them again
    (out / "results.rank1.jsonl").write_text("\n".join(lines[7:9]) + "\n" + lines[9][:25])
    assert len(read_all_rows(out)) == 6
    model = infill.load_model(bert_dir, device="cpu")
    orig, calls = model.log_probs, {"rows": 0}

    def counted(ids, *a):
        calls["rows"] += ids.shape[0]
        return orig(ids, *a)

    model.log_probs = counted
    summary = run_bench(cfg, out, model=model, progress=False)
    got = [{k: v for k, v in r.items() if k != "seconds"} for r in read_rows(out / RESULTS)]
    assert got == ref                               # every row, once, in the single-process order
    assert len((out / RESULTS).read_text().splitlines()) == len(ref)
    assert not list(out.glob("results.rank*.jsonl"))
    assert summary["complete"] and summary["counts"]["rows"] == len(ref)
    assert _cells(summary) == _cells(full)
    before = calls["rows"]
    assert before > 0
    run_bench(cfg, out, model=model, progress=False)        # nothing left: no model call
    assert calls["rows"] == before


def test_batches_are_ordered_by_length_and_results_do_not_depend_on_it(tmp_path, bert_dir, bert):
    from infill.bench.runner import make_plan, units
    corpus = _corpus(tmp_path)
    cfg = _config(bert_dir, corpus, batch_size=3)
    plan = make_plan(bert, cfg)
    us = units(plan, cfg.batch_size)
    for m in plan.grid:
        for n, exs in plan.examples.items():
            flat = [e for mm, nn, b in us if mm == m and nn == n for e in b]
            assert sorted(flat, key=lambda e: e.example_id) == sorted(exs, key=lambda e: e.example_id)
            # stable sort by length, ties in example order
            assert [(len(e.ids), e.example_id) for e in flat] == sorted(
                (len(e.ids), e.example_id) for e in exs)
    assert units(plan, cfg.batch_size) == us                        # deterministic
    # batched (length-ordered) rows = rows decoded one example at a time (no padding at all):
    # same tokens (beam search and sampling); scores up to float32 rounding
    run_bench(cfg, tmp_path / "b", model=bert, progress=False)
    run_bench(_config(bert_dir, corpus, batch_size=1), tmp_path / "a", model=bert, progress=False)
    batched, alone = read_rows(tmp_path / "b" / RESULTS), read_rows(tmp_path / "a" / RESULTS)
    alone = {r["key"]: r for r in alone}
    assert len(batched) == len(alone)
    for r in batched:
        a = alone[r["key"]]
        assert r["hyps"] == a["hyps"] and r["rank"] == a["rank"] and r["fill"] == a["fill"]
        assert r["scores"] == pytest.approx(a["scores"], abs=1e-5)
