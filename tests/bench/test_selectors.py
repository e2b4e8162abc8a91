"""Example selectors (infill.bench.selectors): a custom selector's spans are exactly the ones
benchmarked, and resuming and sharding work with it as with the random spans."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from infill.bench import BenchRequest, Selection, run_bench
from infill.bench.gaps import Example
from infill.bench.runner import RESULTS, read_rows
from infill.errors import ConfigError

TEXTS = ["the cat sat on the mat", "the dog sat on the cat", "on the mat the cat sat",
         "the mat sat on the dog", "the cat on the mat"]


class LastWords:
    """Hide the last ``n`` tokens before the final [SEP] of each text (ids 10, 20, ...)."""

    def __init__(self, texts, tag="last"):
        self.texts, self.tag = texts, tag

    def __call__(self, model, request):
        examples, skipped = {n: [] for n in request.gap_lengths}, {n: 0 for n in request.gap_lengths}
        for i, text in enumerate(self.texts):
            ids = tuple(model.tokenize(text))
            for n in request.gap_lengths:
                if len(ids) - 2 < n:
                    skipped[n] += 1
                else:
                    examples[n].append(Example(10 * (i + 1), n, ids, len(ids) - 1 - n))
        k = len(self.texts)
        return Selection(examples, skipped, k, k, k, identity={"selector": self.tag})

    def spans(self, model, gaps):
        return {(10 * (i + 1), n, len(model.tokenize(t)) - 1 - n)
                for i, t in enumerate(self.texts) for n in gaps}


def _request(bert_dir, **kw):
    base = dict(model=bert_dir, data="(selector)", gap_lengths=(1, 2), methods=("hcb-l2r", "pure"),
                beam_size=(3,), top_k=(1, 3), batch_size=2, device="cpu")
    return BenchRequest(**{**base, **kw})


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def test_a_custom_selectors_spans_are_exactly_the_ones_benchmarked(tmp_path, bert_dir, bert):
    sel = LastWords(TEXTS)
    summary = run_bench(_request(bert_dir), tmp_path / "out", model=bert, progress=False,
                        selector=sel)
    rows = read_rows(tmp_path / "out" / RESULTS)
    for method in ("hcb-l2r/b3", "pure/b3"):
        mine = [r for r in rows if r["method"] == method]
        assert {(r["example_id"], r["n"], r["start"]) for r in mine} == sel.spans(bert, (1, 2))
        assert len(mine) == 2 * len(TEXTS)
    for r in rows:
        ids = list(bert.tokenize(TEXTS[r["example_id"] // 10 - 1]))
        assert r["gold"] == ids[r["start"]:r["start"] + r["n"]]
        assert r["start"] + r["n"] == len(ids) - 1          # the last words, nothing else
    assert summary["complete"] and summary["counts"]["examples_drawn"] == len(TEXTS)
    assert summary["counts"]["used"] == {"1": 5, "2": 5}
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["selector"] == {"selector": "last"}
    assert config["beam_size"] == [3] and config["top_k"] == [1, 3]


def test_a_custom_selection_resumes_and_refuses_another_selection(tmp_path, bert_dir, bert):
    sel, req = LastWords(TEXTS), _request(bert_dir)
    run_bench(req, tmp_path / "full", model=bert, progress=False, selector=sel)
    lines = (tmp_path / "full" / RESULTS).read_text().splitlines()
    out = tmp_path / "out"
    out.mkdir()
    (out / "config.json").write_text((tmp_path / "full" / "config.json").read_text())
    (out / RESULTS).write_text("\n".join(lines[:7]) + "\n" + lines[7][:30])   # interrupted
    orig, calls = bert.log_probs, {"rows": 0}

    def counted(ids, *a):
        calls["rows"] += ids.shape[0]
        return orig(ids, *a)

    bert.log_probs = counted
    try:
        summary = run_bench(req, out, model=bert, progress=False, selector=sel)
        assert _strip(read_rows(out / RESULTS)) == _strip(read_rows(tmp_path / "full" / RESULTS))
        assert summary["complete"] and calls["rows"] > 0
        before = calls["rows"]
        run_bench(req, out, model=bert, progress=False, selector=sel)   # nothing left to do
        assert calls["rows"] == before
    finally:
        del bert.log_probs
    with pytest.raises(ConfigError, match=r"different arguments \(selector\)"):
        run_bench(req, out, model=bert, progress=False, selector=LastWords(TEXTS, tag="other"))


SCRIPT = """import sys
sys.path.insert(0, {here!r})
from test_selectors import LastWords, TEXTS, _request
from infill.bench import run_bench
from infill.parallel import exit_process
run_bench(_request(sys.argv[1]), sys.argv[2], selector=LastWords(TEXTS), progress=False)
exit_process(0)
"""


@pytest.mark.slow
def test_a_custom_selection_sharded_over_two_processes_equals_one(tmp_path, bert_dir):
    script = tmp_path / "run.py"
    script.write_text(SCRIPT.format(here=os.path.dirname(__file__)))
    env = dict(os.environ, OMP_NUM_THREADS="1", INFILL_DIST_BACKEND="gloo")
    one = subprocess.run([sys.executable, str(script), bert_dir, str(tmp_path / "one")],
                         env=env, capture_output=True, text=True, timeout=300)
    assert one.returncode == 0, one.stderr
    two = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                          "--nproc-per-node=2", str(script), bert_dir, str(tmp_path / "two")],
                         env=env, capture_output=True, text=True, timeout=300)
    assert two.returncode == 0, two.stderr
    assert _strip(read_rows(tmp_path / "two" / RESULTS)) == \
        _strip(read_rows(tmp_path / "one" / RESULTS))
    assert len(read_rows(tmp_path / "one" / RESULTS)) == 2 * 2 * len(TEXTS)
    assert not list((tmp_path / "two").glob("results.rank*.jsonl"))
