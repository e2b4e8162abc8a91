"""The batching worker: simultaneous jobs cost one ``fill_resolved`` call per (model, request but
its top-k), each job gets exactly its own input's answer, and one bad job fails alone.

Jobs are submitted before the worker starts, so the batch it collects is known in advance (no
timing in these tests)."""
from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("fastapi", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")

from infill import DecodeConfig, InputError, fill_each
from infill.filling.planner import fill_resolved
from infill.filling.request import FillRequest
from infill.serve.limits import Limits, ServerBusy, TooLarge
from infill.serve.worker import BatchWorker, Job

TEXTS = ["To be, or not to ___, that is the question.", "O Romeo, Romeo! wherefore art ___ Romeo?",
         "All the world's a ___.", "Now is the winter of our ___ made glorious summer."]
TIMEOUT = 60


class Counting:
    """fill_resolved, recording the texts of every call."""

    def __init__(self):
        self.calls: list[list[str]] = []

    def __call__(self, model, texts, *args, **kwargs):
        self.calls.append(list(texts))
        return fill_resolved(model, texts, *args, **kwargs)


def job(text: str, model: str = "builtin:english", top_k: int = 5, gap: int = 1,
        **options) -> Job:
    from infill.filling.defaults import resolve_fill       # resolved, as the server's are
    request, defaults = resolve_fill(model, FillRequest(config=DecodeConfig(**options), gap=gap,
                                                        top_k=top_k))
    return Job(model, request, text, defaults)


def run(catalog, jobs: list[Job], limits: Limits | None = None, fill=None):
    """Submit every job, then start the worker; the futures, the worker and the fill used."""
    fill = fill or Counting()
    worker = BatchWorker(catalog, limits, fill=fill)
    futures = [worker.submit(j) for j in jobs]
    worker.start()
    for f in futures:
        f.exception(TIMEOUT)
    worker.stop()
    return futures, worker, fill


def test_one_fill_call_for_simultaneous_jobs(catalog):
    jobs = [job(t, top_k=k) for t, k in zip(TEXTS + TEXTS[:2], [5, 3, 1, 5, 2, 4])]
    futures, worker, fill = run(catalog, jobs)
    assert fill.calls == [[j.text for j in jobs]]
    assert worker.stats() == {"pending": 0, "batches": 1, "served": 6,
                              "largest_batch": 6, "cancelled": 0, "expired": 0,
                              "alive": False}
    # exactly the direct batched call, cut to each job's top-k
    direct = fill_each(catalog.get("builtin:english"), [j.text for j in jobs], gap=1, top_k=5)
    for j, f, d in zip(jobs, futures, direct):
        assert f.result() == dataclasses.replace(d, completions=d.completions[:j.top_k])
        assert len(f.result().completions) == j.top_k


def test_batched_answers_rank_like_single_calls(catalog, same_answer_fn, expected_fn):
    jobs = [job(t, top_k=3) for t in TEXTS]
    futures, _, fill = run(catalog, jobs)
    assert len(fill.calls) == 1
    for j, f in zip(jobs, futures):
        f.result().model = j.model
        got = f.result().to_json()
        want = expected_fn(catalog, j.model, j.text, gap=j.gap, top_k=3)
        for answer in (got, want):      # which defaults were resolved where: not the batching's
            answer["config"].pop("defaults", None)
        assert same_answer_fn(got, want)


def test_groups_by_model_config_and_gap(catalog):
    jobs = [job(TEXTS[0]), job(TEXTS[1], order="best-to-worst"), job(TEXTS[2]),
            job("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ?ος", model="builtin:greek"),
            job(TEXTS[3], gap=2), job(TEXTS[1], order="best-to-worst"),
            job(TEXTS[0], top_k=7)]             # top-k 7 raises the beam: another config
    futures, _, fill = run(catalog, jobs)
    assert fill.calls == [[TEXTS[0], TEXTS[2]], [TEXTS[1], TEXTS[1]],
                          ["μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ?ος"], [TEXTS[3]], [TEXTS[0]]]
    assert all(f.exception() is None for f in futures)
    assert len(futures[6].result().completions) == 7


def test_a_bad_input_fails_alone(catalog):
    jobs = [job(TEXTS[0]), job("no gap marker here"), job(TEXTS[2])]
    futures, _, fill = run(catalog, jobs)
    assert len(fill.calls) == 1
    assert futures[1].result().error.startswith("no gap marker")
    direct = fill_each(catalog.get("builtin:english"), [j.text for j in jobs], gap=1)
    assert [f.result() for f in futures] == direct


def test_a_group_error_fails_only_its_group(catalog):
    jobs = [job(TEXTS[0], gap=100), job(TEXTS[1])]     # gap past the model's 48 tokens
    futures, _, _ = run(catalog, jobs)
    assert isinstance(futures[0].exception(), InputError)
    assert futures[1].result().completions


def test_too_many_positions_fails_alone(catalog):
    jobs = [job("μῆνιν " + "?" * 9, model="builtin:greek"), job("μῆνιν ???", model="builtin:greek")]
    futures, _, fill = run(catalog, jobs, Limits(max_positions=8))
    assert isinstance(futures[0].exception(), TooLarge)
    assert "9 (limit 8)" in str(futures[0].exception())
    assert fill.calls == [["μῆνιν ???"]]


def test_an_unexpected_failure_is_isolated(catalog):
    def fragile(model, texts, *args, **kwargs):
        if any("Romeo" in t for t in texts):
            raise RuntimeError("boom")
        return fill_resolved(model, texts, *args, **kwargs)

    futures, _, _ = run(catalog, [job(TEXTS[0]), job(TEXTS[1]), job(TEXTS[2])], fill=fragile)
    assert isinstance(futures[1].exception(), RuntimeError)
    assert futures[0].result().completions and futures[2].result().completions


def test_busy_past_max_pending_and_after_stop(catalog):
    worker = BatchWorker(catalog, Limits(max_pending=2))
    futures = [worker.submit(job(TEXTS[0])), worker.submit(job(TEXTS[1]))]
    with pytest.raises(ServerBusy, match="limit 2"):
        worker.submit(job(TEXTS[2]))
    worker.start()
    assert all(f.result(TIMEOUT).completions for f in futures)
    assert worker.pending == 0
    worker.submit(job(TEXTS[2])).result(TIMEOUT)         # room again
    worker.stop()
    assert not worker.alive
    with pytest.raises(ServerBusy, match="shutting down"):
        worker.submit(job(TEXTS[0]))


def test_max_batch_splits_batches(catalog):
    jobs = [job(t) for t in TEXTS]
    _, worker, fill = run(catalog, jobs, Limits(max_batch=3))
    assert fill.calls == [TEXTS[:3], TEXTS[3:]]
    assert worker.largest == 3


def test_unknown_model_fails_its_jobs(catalog):
    futures, _, _ = run(catalog, [job(TEXTS[0], model="builtin:nope"), job(TEXTS[1])])
    assert isinstance(futures[0].exception(), InputError)
    assert futures[1].result().completions


def test_a_lone_request_does_not_wait(catalog):
    """The batch wait applies under load only: with a 1 s wait, one request still comes back
    at the speed of its decode."""
    import time
    worker = BatchWorker(catalog, Limits(batch_wait_ms=1000)).start()
    try:
        t = time.monotonic()
        assert worker.submit(job(TEXTS[0])).result(TIMEOUT).completions
        assert time.monotonic() - t < 0.9
    finally:
        worker.stop()


def test_inputs_of_very_different_length_are_decoded_apart(catalog):
    """One fill_each call for the group; inside it, inputs of very different length are decoded
    in separate buckets (infill.api.length_buckets), and each job gets its own result."""
    short = ["μῆνιν ?", "θεὰ ?ειδε"]                                  # 8 and 10 model tokens
    long = ["ὃς μάλα πολλὰ πλάγχθη, ἐπεὶ Τροίης ἱερὸν πτολ??θρον ἔπερσε"]  # 59
    jobs = [job(t, model="builtin:greek") for t in [short[0], long[0], short[1]]]
    futures, _, fill = run(catalog, jobs)
    assert fill.calls == [[short[0], long[0], short[1]]]
    direct = fill_each(catalog.get("builtin:greek"), [short[0], long[0], short[1]])
    assert [f.result() for f in futures] == direct