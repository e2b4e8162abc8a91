"""After an interrupted ``train`` and a resume, ``train_log.jsonl`` equals an uninterrupted
run's (the validation row a stopped run writes at its stop step is not kept)."""
from __future__ import annotations

import json

import pytest

from infill.training.greek import GreekFamily
from infill.training.loop import TrainConfig, train

LINES = ["μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος", "οὐλομένην, ἣ μυρίʼ Ἀχαιοῖς ἄλγεʼ ἔθηκε,",
         "πολλὰς δʼ ἰφθίμους ψυχὰς Ἄϊδι προΐαψεν", "ἡρώων, αὐτοὺς δὲ ἑλώρια τεῦχε κύνεσσιν"]
TINY = dict(layers=1, hidden=16, heads=2, ff=32, max_length=32, conv_kernel=3)
CLOCKS = ("elapsed_s", "cpu_s")


def run(corpus, out, **kw):
    cfg = TrainConfig(out=str(out), steps=6, batch_size=8, lr=3e-3, warmup=1, eval_every=3,
                      checkpoint_every=1, progress=False, max_val_examples=16, **kw)
    return train(GreekFamily(**TINY), corpus, cfg)


def log(out) -> list[dict]:
    """The log's rows without their clock readings (which differ run to run)."""
    rows = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in CLOCKS} for r in rows]


@pytest.mark.parametrize("stop", [0, 4])
def test_resumed_log_equals_the_uninterrupted_one(tmp_path, stop):
    corpus = tmp_path / "greek.txt"
    corpus.write_text("\n".join(LINES * 10) + "\n", encoding="utf-8")
    run(corpus, tmp_path / "full")
    first = run(corpus, tmp_path / "part", stop_after=stop)
    assert first.step == stop and log(tmp_path / "part")[-1]["step"] == stop
    run(corpus, tmp_path / "part", resume=True)
    assert [r["step"] for r in log(tmp_path / "full")] == [0, 3, 6]
    assert log(tmp_path / "part") == log(tmp_path / "full")


def test_a_resume_with_its_time_spent_logs_no_nan(tmp_path):
    corpus = tmp_path / "greek.txt"
    corpus.write_text("\n".join(LINES * 10) + "\n", encoding="utf-8")
    run(corpus, tmp_path / "part", stop_after=4)
    # the budget is the run's in all: spent before the resume, so it stops before a step
    again = run(corpus, tmp_path / "part", resume=True, time_budget=1e-9)
    assert (again.step, again.stopped) == (4, "time_budget")
    text = (tmp_path / "part" / "train_log.jsonl").read_text()
    rows = [json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in the log"))
            for line in text.splitlines()]
    assert [(r["step"], r["train_loss"]) for r in rows][-1] == (4, None)
