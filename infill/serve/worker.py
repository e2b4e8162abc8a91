"""The batching worker: one thread owns the models and runs every decode.

Requests enqueue a :class:`Job` and get a :class:`concurrent.futures.Future`. The worker takes
the first waiting job and all those already queued (at most ``max_batch`` in all; under load it
also waits up to ``batch_wait_ms`` for more, while a lone request never waits), groups them by
(model, resolved fill request but its top-k) and runs ONE
:func:`~infill.filling.planner.fill_resolved` per group with the group's largest top-k (it
decodes inputs of similar length together,
:func:`infill.filling.planner.length_buckets`); each job gets its own input's result cut to its top-k.
So N simultaneous requests cost about one batched decode, torch never runs on two threads, and
a bad input fails only its own request (``fill_resolved`` reports errors per input). Jobs that
arrive while a batch runs wait in the queue and form the next batch.

Work nobody waits for is not done: a job whose future was cancelled (its client left, see
:mod:`infill.serve.app`) is skipped -- a job is marked running only when its own decode starts,
so a cancellation counts until then -- and a job that waited in the queue longer than
``max_wait_s`` fails with :class:`QueueTimeout` instead of being decoded.

Batched and single decodes of an input rank the same completions; their float scores may differ
in the last digits (padding changes the shapes of the matrix products): ``max_batch=1`` gives
bit-for-bit the scores of a lone ``fill_resolved`` call.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import queue
import threading
import time
import warnings
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from infill.config import DecodeConfig
from infill.decoding.lengths import one_length
from infill.errors import InfillError, LongInputWarning
from infill.filling.defaults import Defaults
from infill.filling.planner import fill_resolved
from infill.filling.request import FillRequest
from infill.filling.results import FillResult
from infill.models.base import MaskedLM
from infill.serve.catalog import ModelCatalog
from infill.serve.limits import Limits, QueueTimeout, ServerBusy, TooLarge

__all__ = ["BatchWorker", "Job"]

log = logging.getLogger("infill.serve")


@dataclass(frozen=True)
class Job:
    """One request's decode: the ``text`` (as read: Leiden converted, a region masked) and its
    ``request``, resolved once (:func:`~infill.filling.defaults.resolve_fill`; its gap and
    letters this text's own), with the ``defaults`` it took."""

    model: str
    request: FillRequest
    text: str
    defaults: Defaults | None = field(default=None, compare=False)

    @property
    def config(self) -> DecodeConfig:
        return self.request.config

    @property
    def gap(self):
        return self.request.gap

    @property
    def top_k(self) -> int:
        return self.request.top_k

    @property
    def key(self) -> tuple:
        """Jobs with equal keys are decoded in one call: one model, one request but its top-k."""
        options = {**self.request.to_json(), "top_k": None}
        return (self.model, json.dumps(options, sort_keys=True, default=repr))


_STOP = object()


class BatchWorker:
    """A daemon thread serving :class:`Job` s in batches (see the module docstring).

    ``fill`` is :func:`~infill.filling.planner.fill_resolved` (replaceable in tests to count
    calls).
    """

    def __init__(self, catalog: ModelCatalog, limits: Limits | None = None,
                 fill: Callable[..., list[FillResult]] = fill_resolved):
        self.catalog, self.fill = catalog, fill
        self.limits = limits if limits is not None else Limits()
        self._queue: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._pending = 0
        self._thread: threading.Thread | None = None
        self._stopped = False
        self.batches = 0          # fill calls made
        self.served = 0           # jobs answered
        self.largest = 0          # most jobs in one fill call
        self.cancelled = 0        # jobs skipped: their client had left
        self.expired = 0          # jobs refused: they waited past max_wait_s
        self._last = 0            # jobs in the last batch collected

    # ---- the requests' side -----------------------------------------------------------------
    def submit(self, job: Job) -> Future:
        """Queue ``job``; the future resolves to its :class:`FillResult` (or an InfillError).
        Jobs submitted before :meth:`start` wait for it. Raises :class:`ServerBusy` when
        ``max_pending`` jobs are already waiting or running, or after :meth:`stop`."""
        with self._lock:
            if self._stopped:
                raise ServerBusy("server shutting down")
            if self._pending >= self.limits.max_pending:
                raise ServerBusy(f"server busy: {self._pending} requests in progress (limit "
                                 f"{self.limits.max_pending}); retry shortly")
            self._pending += 1
        fut: Future = Future()
        fut.add_done_callback(self._done)
        self._queue.put((job, fut, time.monotonic()))
        return fut

    def _done(self, _fut: Future) -> None:
        with self._lock:
            self._pending -= 1

    @property
    def pending(self) -> int:
        return self._pending

    def stats(self) -> dict:
        return {"pending": self._pending, "batches": self.batches, "served": self.served,
                "largest_batch": self.largest, "cancelled": self.cancelled,
                "expired": self.expired, "alive": self.alive}

    # ---- lifecycle --------------------------------------------------------------------------
    def start(self) -> BatchWorker:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="infill-batch-worker",
                                            daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Finish the queued jobs, then end the thread; later submissions are refused."""
        with self._lock:
            self._stopped = True
        if self._thread is not None:
            self._queue.put(_STOP)
            self._thread.join(timeout)
            self._thread = None
        while True:                       # anything submitted after the stop signal
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not _STOP and item[1].set_running_or_notify_cancel():
                item[1].set_exception(ServerBusy("server shutting down"))

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ---- the worker's side ------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            batch, stop = self._collect()
            if batch:
                self._serve(batch)
            if stop:
                return

    def _collect(self) -> tuple[list[tuple[Job, Future, float]], bool]:
        """The first waiting job and every job already queued (at most ``max_batch``); under
        load -- more than one job came, or the last batch had company -- also those that come
        within ``batch_wait_ms``. A lone request never waits. True when the stop signal was met."""
        first = self._queue.get()
        if first is _STOP:
            return [], True
        batch = [first]
        deadline = time.monotonic() + self.limits.batch_wait_ms / 1000
        waiting = False
        while len(batch) < self.limits.max_batch:
            try:
                left = deadline - time.monotonic()
                item = self._queue.get(timeout=left) if waiting and left > 0 \
                    else self._queue.get_nowait()
            except queue.Empty:
                if waiting or not (len(batch) > 1 or self._last > 1):
                    break
                waiting = True
                continue
            if item is _STOP:
                return batch, True
            batch.append(item)
        self._last = len(batch)
        return batch, False

    def _serve(self, batch: list[tuple[Job, Future, float]]) -> None:
        groups: dict[tuple, list[tuple[Job, Future]]] = {}
        now = time.monotonic()
        for job, fut, queued in batch:
            if now - queued > self.limits.max_wait_s and fut.set_running_or_notify_cancel():
                self.expired += 1
                fut.set_exception(QueueTimeout(
                    f"server busy: the request waited {now - queued:.0f} s in the queue (limit "
                    f"{self.limits.max_wait_s:g} s); retry later"))
            elif not fut.done():
                groups.setdefault(job.key, []).append((job, fut))
        for (name, *_), items in groups.items():
            items = self._still_wanted(items)
            if not items:
                continue
            try:
                model = self.catalog.get(name)
            except InfillError as e:         # unknown or unloadable model: its jobs fail
                for _, fut in items:
                    fut.set_exception(e)
                continue
            for part in self._split(model, items):
                self._decode(model, part)

    def _still_wanted(self, items: list[tuple[Job, Future]]) -> list[tuple[Job, Future]]:
        """The items whose client still waits, now marked running (a cancelled one is
        skipped: its decode never runs)."""
        keep = [(job, fut) for job, fut in items if fut.set_running_or_notify_cancel()]
        self.cancelled += len(items) - len(keep)
        return keep

    def _split(self, model: MaskedLM, items: list[tuple[Job, Future]]):
        """The items a decode may take: a text over ``max_positions`` fails with
        :class:`TooLarge`; the others go together (``fill_resolved`` groups them by length itself,
        :func:`infill.filling.planner.length_buckets`, and reports the texts it cannot read)."""
        keep = []
        for job, fut in items:
            try:
                n = len(model.encode(job.text, _longest(job.gap), job.request.marker).positions)
            except InfillError:
                n = 0
            if n > self.limits.max_positions:
                fut.set_exception(TooLarge(f"too many positions to fill: {n} "
                                           f"(limit {self.limits.max_positions})"))
            else:
                keep.append((job, fut))
        return [keep] if keep else []

    def _decode(self, model: MaskedLM, items: list[tuple[Job, Future]]) -> None:
        """ONE ``fill`` call for jobs of one key; each future gets its input's result."""
        job = items[0][0]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LongInputWarning)   # noted per result below
                request = job.request.replace(top_k=max(j.top_k for j, _ in items))
                results = self.fill(model, [j.text for j, _ in items], request, job.defaults)
        except InfillError as e:           # the whole group's problem (e.g. a gap too long)
            public = type(e)(_public(str(e), model, job.model))
            for _, fut in items:
                fut.set_exception(public)
            return
        except Exception as e:
            if len(items) > 1:
                for item in items:
                    self._decode(model, [item])
                return
            log.exception("decode failed for %r", job)
            items[0][1].set_exception(e)
            return
        self.batches += 1
        self.largest = max(self.largest, len(items))
        for (j, fut), res in zip(items, results):
            self.served += 1
            fut.set_result(dataclasses.replace(
                res, completions=res.completions[:j.top_k],
                error=None if res.error is None else _public(res.error, model, j.model)))


def _public(message: str, model: MaskedLM, name: str) -> str:
    """An error message as a client may read it: the model's files (a path on the server) are
    named by the model's name in the request."""
    where = str(getattr(model, "name", "") or "")
    return message.replace(where, name) if where and where != name else message


def _longest(gap) -> int:
    """The most tokens one marker of ``gap`` can stand for (a number, a range, ``word``, or a
    list of one of these per marker)."""
    lengths = [one_length(g) for g in (gap if isinstance(gap, (list, tuple)) else (gap,))]
    return max(g if isinstance(g, int) else g.hi for g in lengths)
