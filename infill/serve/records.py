"""``POST /api/fill`` with ``"record": "all"``: every record of a FASTA text in one request.

The answer is ``{"id": <the request's id>, "records": [...]}`` with one entry per record, in
file order: the line ``infill run --json`` prints for that record (its ``id`` the record's id,
the header's first word) plus the whole ``header``. Every record is filled with the request's
options and ``region``; a record that cannot be filled (no sequence, no such region, malformed
Leiden, too many positions) carries its one-line ``error`` and no completions, and the others
are answered as usual, as ``infill run`` does for a FASTA file.

The records are queued together, so the batching worker decodes them as one batch. Limits are
the server's own (:class:`infill.requests.ServeLimits`): the whole FASTA text is at most
``max_text`` characters and holds at most ``max_batch`` records (more: 413 naming the limit);
what the request asks for beyond that (model, beam, top_k...) fails the whole request (400).
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from concurrent.futures import Future

from infill.filling.results import FillResult
from infill.filling.defaults import Defaults
from infill.errors import InfillError, InputError
from infill.jobs.inputs import Input, text_inputs
from infill.serve.catalog import ModelCatalog
from infill.serve.limits import ClientGone, Limits, ServerBusy, TooLarge
from infill.filling.request import FillRequest
from infill.serve.schema import FillBody, check_request, text_job
from infill.serve.worker import BatchWorker, Job

__all__ = ["fill_records", "record_jobs"]

Wait = Callable[[Future], Awaitable[FillResult]]
Item = tuple[Input, "Job | None", list[str], "str | None"]


def record_jobs(req: FillBody, catalog: ModelCatalog, limits: Limits,
                default_model: str) -> tuple[str, FillRequest, Defaults, list[Item]]:
    """The model, the resolved fill request, the defaults it took and, per FASTA record (read as ``infill run`` reads a
    FASTA file, :func:`text_inputs`), ``(record, job, notes, error)``: a record that cannot be
    read has no job and its one-line error. Raises for what fails the whole request."""
    model, request, defaults = check_request(req, catalog, limits, default_model)
    records = text_inputs(req.text, "the FASTA text")
    if records[0].header is None:
        raise InputError("record 'all' is for FASTA text (records under '>' header lines); "
                         "send this text without 'record'")
    if len(records) > limits.max_batch:
        raise TooLarge(f"too many FASTA records to fill at once: {len(records)} (limit "
                       f"max_batch={limits.max_batch}); send them in parts")
    out = []
    for rec in records:                  # each entry: the line infill run --json prints
        notes: list[str] = list(req._notes)
        if rec.error is not None:
            out.append((rec, None, notes, rec.error))
            continue
        try:
            job, read = text_job(rec.text, model, request, defaults, catalog, limits)
        except InfillError as e:
            out.append((rec, None, notes, str(e).splitlines()[0]))
            continue
        out.append((rec, job, notes + read, None))
    return model, request, defaults, out


async def fill_records(req: FillBody, catalog: ModelCatalog, limits: Limits,
                       default_model: str, worker: BatchWorker, wait: Wait) -> dict:
    """The answer to a request for every record (module docstring). ``wait`` awaits one
    queued job's result (the app's client-aware wait): a client that leaves or a queue past
    ``max_wait_s`` fails the whole request and cancels the records still queued."""
    model, request, defaults, items = record_jobs(req, catalog, limits, default_model)
    futures: list[Future | None] = []
    try:
        for _, job, _, _ in items:
            futures.append(None if job is None else worker.submit(job))
        entries = []
        for (rec, job, notes, error), fut in zip(items, futures):
            result = FillResult(None, [], error, defaults=defaults, config=request.config,
                                gap=request.gap) if fut is None else \
                await _result(wait, fut, job)
            result.model, result.id = model, rec.id
            out = result.to_json()
            entries.append({**out, "notes": notes + out["notes"], "header": rec.header})
    finally:
        for fut in futures:               # nothing left queued for a request that failed
            if fut is not None:
                fut.cancel()
    return {"id": req.id, "records": entries}


async def _result(wait: Wait, fut: Future, job: Job) -> FillResult:
    """One record's result; its own error (e.g. too many positions) as the result's error."""
    try:
        return await wait(fut)
    except (ClientGone, ServerBusy):
        raise
    except InfillError as e:
        return FillResult(job.text, [], str(e).splitlines()[0], defaults=job.defaults,
                          config=job.config, gap=job.gap)

