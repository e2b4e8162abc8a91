"""The ASGI application of ``infill serve``: the workbench page and the JSON API.

    GET  /              the workbench page (all assets from /static: works offline)
    GET  /api/models    the models a request may name: name, family, status, description
    GET  /api/options   scorers, orders, regions, reranks, defaults and limits (what the page's controls offer)
    GET  /api/health    {"status": "ok", ...} and the batching worker's counters
    POST /api/fill      one input -> the object of one line of ``infill run --json``
                        ("record": "all": every FASTA record -> {"records": [one such per record]})
    POST /api/check     one text -> the object of one line of ``infill check --json``
    POST /api/readings  one text and its lacunae's readings -> one line of ``infill run
                        --readings --json``

Every error answers ``{"error": "one line"}``: 400 for a bad request, 413 for a body or text
over the limits, 429 when the queue is full, 503 when a request waited in the queue past
``max_wait_s``, 404/405 for unknown routes, 403 for a request that does not name this server
(its Host) or a POST from another site's page (its Origin), 415 for a POST body not declared
JSON (:mod:`infill.serve.guard`); never a traceback. An error names a request field
in its JSON spelling (``'beam_size'``). While a request waits, the
server checks that its client is still connected: when it has left, the request's queued decode
is cancelled (a decode already running finishes, its answer dropped) and the server logs one
line. Malformed HTTP (rejected by the protocol parser before the application) is answered by
:mod:`infill.serve.listen`.
"""
from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from infill.config import ORDERS, SCORERS
from infill.errors import InfillError, InputError
from infill.serve import epidoc as epidoc_route     # its names read at each request (tests
                                                    # replace epidoc_job)
from infill.serve.catalog import ModelCatalog
from infill.serve.check import check_answer, parse_check
from infill.serve.guard import WILDCARDS, LocalOnly, host_names
from infill.filling.results import FillResult
from infill.serve.limits import ClientGone, Limits, QueueTimeout, ServerBusy, TooLarge
from infill.serve.readings import parse_readings_body, readings_answer
from infill.serve.records import fill_records
from infill.serve.schema import FillBody, build_job, parse_request
from infill.serve.worker import BatchWorker
from infill.data.regions import REGIONS
from infill.names import LACUNA_EDGES, RERANKS

__all__ = ["STATIC", "create_app"]

STATIC = Path(__file__).resolve().parent / "static"
DEFAULT_MODEL = "builtin:english"
log = logging.getLogger("infill.serve")
POLL_S = 0.1
"""How often a waiting request checks that its client is still connected."""
UPLOAD_THREADS = 1
"""Threads that read uploads (EpiDoc files) off the event loop: uploads take one core at most."""
T = TypeVar("T")


def _status(e: InfillError) -> int:
    if isinstance(e, TooLarge):
        return 413
    if isinstance(e, ClientGone):
        return 499
    if isinstance(e, QueueTimeout):
        return 503
    if isinstance(e, ServerBusy):
        return 429
    return 400


def _finite(obj):
    """JSON has no NaN/Infinity: such floats (a -inf log-probability) become null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def json_response(obj, status: int = 200) -> Response:
    """UTF-8 JSON (as ``infill run --json`` writes it)."""
    try:
        body = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    except ValueError:
        body = json.dumps(_finite(obj), ensure_ascii=False, allow_nan=False)
    return Response(body, status_code=status, media_type="application/json")


def error(message: str, status: int = 400) -> Response:
    return json_response({"error": message}, status)


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (:class:`TooLarge`) past ``limit`` bytes without reading on.
    (Starlette's own body limit answers a plain-text 413; this one keeps the JSON error.)"""
    declared = request.headers.get("content-length", "").strip()
    if declared.isascii() and declared.isdigit() and \
            (len(declared) > len(str(limit)) or int(declared) > limit):
        raise TooLarge(f"request body too large: {declared} bytes (limit {limit})")
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise TooLarge(f"request body too large (limit {limit} bytes)")
    except ClientDisconnect:
        raise ClientGone(f"client left while sending its request ({len(body)} bytes "
                         "received)") from None
    return bytes(body)


async def await_result(request: Request, fut: Future, max_wait_s: float) -> FillResult:
    """The worker's answer to ``fut``, checking every :data:`POLL_S` that the client is still
    there: when it has left, the job is cancelled (if its decode has not started) and
    :class:`ClientGone` raised; a job still queued after ``max_wait_s`` is cancelled and
    :class:`QueueTimeout` raised (503)."""
    waiting = asyncio.wrap_future(fut)
    start = time.monotonic()
    while True:
        done, _ = await asyncio.wait({waiting}, timeout=POLL_S)
        if done:
            return waiting.result()
        if await request.is_disconnected():
            cancelled = fut.cancel()
            raise ClientGone("client left before its answer: "
                             + ("its decode was cancelled" if cancelled else
                                "its decode was running; the answer is dropped"))
        waited = time.monotonic() - start
        if waited > max_wait_s and fut.cancel():
            raise QueueTimeout(f"server busy: the request waited {waited:.0f} s in the queue "
                               f"(limit {max_wait_s:g} s); retry later")


async def off_loop(request: Request, fn: Callable[..., T], *args) -> T:
    """``fn(*args)`` in the uploads' thread (:data:`UPLOAD_THREADS`), so that the event loop
    answers other requests meanwhile (``/api/health`` included). A ValueError ``fn`` raises that
    is no InfillError -- a value of the upload its reader could not read -- is an
    :class:`InputError` (a 400), never a server error."""
    pool = getattr(request.app.state, "uploads", None)
    try:
        if pool is None:                  # an application run without its lifespan
            return await asyncio.to_thread(fn, *args)
        return await asyncio.wrap_future(pool.submit(fn, *args))
    except InfillError:
        raise
    except (ValueError, OverflowError, RecursionError) as e:
        reason = str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__
        raise InputError(f"unreadable upload: {reason}") from None


def _answer_errors(app: FastAPI) -> None:
    """Every error as one JSON line (:func:`error`), the fields it names in their JSON spelling."""

    @app.exception_handler(InfillError)
    async def infill_error(request: Request, e: InfillError) -> Response:
        message = e.worded(repr)             # JSON fields are the API's names
        if isinstance(e, ClientGone):       # one line in the log; the answer reaches no one
            client = f"{request.client.host}:{request.client.port}" if request.client else "?"
            log.info("%s %s from %s: %s", request.method, request.url.path, client, message)
        return error(message, _status(e))

    @app.exception_handler(ClientDisconnect)
    async def client_left(request: Request, _e: ClientDisconnect) -> Response:
        return await infill_error(request, ClientGone("client left during the request"))

    @app.exception_handler(HTTPException)
    async def http_error(_request: Request, e: HTTPException) -> Response:
        return error(str(e.detail), e.status_code)

    @app.exception_handler(Exception)
    async def internal_error(_request: Request, e: Exception) -> Response:
        log.error("internal error: %s: %s", type(e).__name__, e)
        return error(f"internal error ({type(e).__name__}); see the server's log", 500)


def _describe(app: FastAPI, catalog: ModelCatalog, limits: Limits, default_model: str,
              worker: BatchWorker) -> None:
    """The page and what it reads: models, options (choices, defaults, limits), health."""

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/api/models")
    def models() -> Response:
        return json_response(catalog.rows())

    @app.get("/api/options")
    async def options() -> Response:
        return json_response({
            "scorers": list(SCORERS), "orders": list(ORDERS), "default_model": default_model,
            "regions": list(REGIONS), "reranks": list(RERANKS),
            "lacuna_edges": list(LACUNA_EDGES),
            "defaults": {"model": default_model,        # None: the model's recommendation
                         **{k: f.default for k, f in FillBody.model_fields.items()
                            if k not in ("text", "model", "id")}},
            "limits": limits.to_json()})

    @app.get("/api/health")
    async def health() -> Response:
        return json_response({"status": "ok" if worker.alive else "stopped",
                              "models_loaded": catalog.loaded, **worker.stats()},
                             200 if worker.alive else 503)


def create_app(catalog: ModelCatalog | None = None, limits: Limits | None = None,
               default_model: str | None = None, worker: BatchWorker | None = None,
               host: str = "127.0.0.1", allow_hosts: Sequence[str] = ()) -> FastAPI:
    """The application. ``catalog``: the models offered (default: the named ones); ``limits``
    (default: :class:`Limits`' defaults);
    ``default_model``: what a request without ``model`` gets (default builtin:english); the
    catalog's extra models are loaded here, before the first request;
    ``worker``: the batching worker (default: a new one on ``catalog``), started and stopped
    with the application (its lifespan); ``host``: the address it is served on, and
    ``allow_hosts`` other names it answers to (:mod:`infill.serve.guard`: any other Host, a
    cross-origin POST or a POST body not declared JSON is refused)."""
    catalog = catalog if catalog is not None else ModelCatalog()
    catalog.preload(catalog.extra)      # what an extra reads (Leiden, letters) is its adapter's
    limits = limits if limits is not None else Limits()
    default_model = catalog.check(default_model or DEFAULT_MODEL)
    worker = worker if worker is not None else BatchWorker(catalog, limits)
    # FastAPI's /docs pages load their scripts from a CDN: off, so that nothing needs a network
    app = FastAPI(title="infill serve", lifespan=_lifespan(worker), docs_url=None,
                  redoc_url=None)
    app.state.catalog, app.state.worker, app.state.limits = catalog, worker, limits
    app.add_middleware(LocalOnly, names=host_names(host, allow_hosts),
                       any_address=host.strip("[]") in WILDCARDS)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    _answer_errors(app)
    _describe(app, catalog, limits, default_model, worker)
    _decode(app, catalog, limits, default_model, worker)
    _check(app, catalog, limits, default_model)
    _readings(app, catalog, limits, default_model)
    return app


def _lifespan(worker: BatchWorker):
    """The application's lifespan: the batching worker and the upload threads run while it is
    served."""
    @asynccontextmanager
    async def lifespan(served: FastAPI):
        worker.start()
        served.state.uploads = ThreadPoolExecutor(UPLOAD_THREADS,
                                                  thread_name_prefix="infill-upload")
        try:
            yield
        finally:
            served.state.uploads.shutdown(wait=False, cancel_futures=True)
            await asyncio.to_thread(worker.stop)
    return lifespan


def _decode(app: FastAPI, catalog: ModelCatalog, limits: Limits, default_model: str,
            worker: BatchWorker) -> None:
    """The routes that decode: ``POST /api/fill`` (one text, or every FASTA record) and
    ``POST /api/epidoc``, each queued on the batching worker."""
    @app.post("/api/fill")
    async def fill(request: Request) -> Response:
        req = parse_request(await read_body(request, limits.max_body))
        if req.record == "all":             # every FASTA record: one entry per record
            return json_response(await fill_records(
                req, catalog, limits, default_model, worker,
                lambda fut: await_result(request, fut, limits.max_wait_s)))
        job, notes = build_job(req, catalog, limits, default_model)
        result = await await_result(request, worker.submit(job), limits.max_wait_s)
        if result.error is not None:
            return error(result.error)
        result.model, result.id = job.model, req.id
        out = result.to_json()
        out["notes"] = notes + out["notes"]
        return json_response(out)

    @app.post("/api/epidoc")
    async def epidoc(request: Request) -> Response:
        req = epidoc_route.parse_epidoc(await read_body(request, limits.max_body))
        job, res = await off_loop(request, epidoc_route.epidoc_job, req, catalog, limits,
                                  default_model)
        result = None if job is None else \
            await await_result(request, worker.submit(job), limits.max_wait_s)
        if result is not None and result.error is not None:
            return error(result.error)
        model = job.model if job else catalog.check(req.model or default_model)
        return json_response(await off_loop(request, epidoc_route.epidoc_answer, res, result,
                                            model))


def _check(app: FastAPI, catalog: ModelCatalog, limits: Limits, default_model: str) -> None:
    """``POST /api/check``: a text's doubtful readings (:mod:`infill.serve.check`), computed in
    the uploads' thread, off the event loop."""
    @app.post("/api/check")
    async def check(request: Request) -> Response:
        req = parse_check(await read_body(request, limits.max_body))
        return json_response(await off_loop(request, check_answer, req, catalog, limits,
                                            default_model))


def _readings(app: FastAPI, catalog: ModelCatalog, limits: Limits, default_model: str) -> None:
    """``POST /api/readings``: the readings proposed for a text's lacunae scored
    (:mod:`infill.serve.readings`), in the uploads' thread, off the event loop."""
    @app.post("/api/readings")
    async def readings(request: Request) -> Response:
        req = parse_readings_body(await read_body(request, limits.max_body))
        return json_response(await off_loop(request, readings_answer, req, catalog, limits,
                                            default_model))
