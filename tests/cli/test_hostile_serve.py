"""Hostile clients of ``infill serve`` (issue 22), on a live uvicorn server on loopback with the
tiny BERT: clients that leave while their request waits (their decode must not run; one log
line, no traceback), requests that wait past the queue bound (503 JSON), bodies cut short,
malformed HTTP that the protocol parser rejects (JSON 400, not uvicorn's plain text), and
``infill serve`` on an address it cannot listen on (``Error:``, exit 2)."""
from __future__ import annotations

import json
import logging
import socket
import threading
import time
from http.client import HTTPConnection

import pytest
from click.testing import CliRunner

pytest.importorskip("uvicorn", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")

from infill.filling.planner import fill_resolved  # noqa: E402
from infill_cli.main import main  # noqa: E402

from .test_hostile_input import check  # noqa: E402

WAIT = 30.0
"""Upper bound of every wait below (a wait ends as soon as its condition holds)."""


def until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


class Gate:
    """A ``fill`` for the worker that records the texts it decodes and holds the first call
    until :attr:`release` is set (so that later requests queue behind it)."""

    def __init__(self):
        self.release, self.started, self.texts = threading.Event(), threading.Event(), []

    def __call__(self, model, texts, *args, **options):
        self.texts.extend(texts)
        self.started.set()
        self.release.wait(WAIT)
        return fill_resolved(model, texts, *args, **options)


@pytest.fixture
def serve(bert_dir, caplog):
    """start(limits) -> (host, port, worker, gate): a live server whose worker decodes through a
    :class:`Gate`; logs go to ``caplog``."""
    import uvicorn

    from infill.serve.app import create_app
    from infill.serve.catalog import ModelCatalog
    from infill.serve.limits import Limits
    from infill.serve.listen import JsonErrorsH11Protocol
    from infill.serve.worker import BatchWorker

    caplog.set_level(logging.INFO)
    running = []

    def start(**limits):
        catalog = ModelCatalog(extra=(bert_dir,), device="cpu")
        lim, gate = Limits(**limits), Gate()
        worker = BatchWorker(catalog, lim, fill=gate)
        app = create_app(catalog, lim, default_model=bert_dir, worker=worker)
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None,
                                               log_level="info", http=JsonErrorsH11Protocol))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        running.append((server, thread, gate))
        until(lambda: server.started, "the server to start")
        port = server.servers[0].sockets[0].getsockname()[1]
        return "127.0.0.1", port, worker, gate

    yield start
    for server, thread, gate in running:
        gate.release.set()
        server.should_exit = True
        thread.join(WAIT)


def post(host, port, text: str, timeout: float = WAIT) -> tuple[int, dict]:
    conn = HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("POST", "/api/fill", json.dumps({"text": text}),
                     {"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


def raw(host, port, data: bytes) -> socket.socket:
    """A connection that has sent ``data`` (the caller closes it: a client that leaves)."""
    s = socket.create_connection((host, port), timeout=WAIT)
    s.sendall(data)
    return s


def request_bytes(text: str) -> bytes:
    body = json.dumps({"text": text}).encode()
    return (b"POST /api/fill HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


def in_thread(fn, *args):
    out = []
    t = threading.Thread(target=lambda: out.append(fn(*args)), daemon=True)
    t.start()
    return t, out


def no_tracebacks(caplog) -> None:
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
    assert "Traceback" not in caplog.text


# ---- clients that leave -------------------------------------------------------------------------
def test_requests_of_clients_that_left_are_never_decoded(serve, caplog):
    host, port, worker, gate = serve()
    first, answer = in_thread(post, host, port, "the ___ sat")
    until(gate.started.is_set, "the first decode")             # the worker is now busy
    gone = [raw(host, port, request_bytes(t)) for t in ("the cat ___", "the dog ___", "___ mat")]
    until(lambda: worker.pending == 4, "three more requests queued")
    for s in gone:
        s.close()                                              # their clients leave
    until(lambda: worker.pending == 1, "the left requests cancelled")
    gate.release.set()
    first.join(WAIT)
    assert answer and answer[0][0] == 200, answer
    assert gate.texts == ["the ___ sat"]                       # the others never decoded
    until(lambda: worker.stats()["cancelled"] == 3 or worker.pending == 0, "the worker")
    left = [r.getMessage() for r in caplog.records if "client left" in r.getMessage()]
    assert len(left) == 3 and all("cancelled" in m for m in left), left
    assert all("\n" not in m for m in left)
    no_tracebacks(caplog)
    assert post(host, port, "the ___ sat")[0] == 200           # and the server goes on


def test_a_request_waiting_past_the_queue_bound_gets_503(serve, caplog):
    host, port, worker, gate = serve(max_wait_s=0.3)
    first, answer = in_thread(post, host, port, "the ___ sat")
    until(gate.started.is_set, "the first decode")
    status, body = post(host, port, "the cat ___")            # waits behind the held decode
    assert status == 503 and "waited" in body["error"] and "0.3 s" in body["error"], body
    gate.release.set()
    first.join(WAIT)
    assert answer[0][0] == 200
    assert gate.texts == ["the ___ sat"]
    no_tracebacks(caplog)


def test_the_worker_refuses_jobs_that_waited_past_the_bound(bert_dir):
    """Without the application's polling too: the worker itself never starts a decode for a
    job that has waited longer than max_wait_s."""
    from infill.serve.catalog import ModelCatalog
    from infill.serve.limits import Limits, QueueTimeout
    from infill.serve.schema import FillBody, build_job
    from infill.serve.worker import BatchWorker

    catalog = ModelCatalog(extra=(bert_dir,), device="cpu")
    limits, gate = Limits(max_wait_s=0.2), Gate()
    worker = BatchWorker(catalog, limits, fill=gate).start()
    jobs = [build_job(FillBody(text=t), catalog, limits, bert_dir)[0]
            for t in ("the ___ sat", "the cat ___")]
    try:
        held = worker.submit(jobs[0])
        until(gate.started.is_set, "the first decode")
        late = worker.submit(jobs[1])
        time.sleep(0.3)                                        # past the bound, still queued
        gate.release.set()
        assert held.result(WAIT).error is None
        with pytest.raises(QueueTimeout, match="waited"):
            late.result(WAIT)
        assert gate.texts == ["the ___ sat"] and worker.stats()["expired"] == 1
    finally:
        gate.release.set()
        worker.stop()


def test_a_body_cut_short_is_one_log_line(serve, caplog):
    host, port, worker, gate = serve()
    s = raw(host, port, b"POST /api/fill HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                        b"{\"text\": \"the")
    time.sleep(0.2)
    s.close()
    until(lambda: any("while sending" in r.getMessage() for r in caplog.records), "the log line")
    no_tracebacks(caplog)
    gate.release.set()
    assert post(host, port, "the ___ sat")[0] == 200


# ---- malformed HTTP -----------------------------------------------------------------------------
MALFORMED = {
    "negative content-length": b"POST /api/fill HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
    "non-ascii header name": "GET /api/health HTTP/1.1\r\nHost: x\r\nX-Ñame: 1\r\n\r\n".encode(),
    "non-ascii path": "GET /api/ñ HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
    "two content-lengths": b"POST /api/fill HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
                           b"Content-Length: 2\r\n\r\nab",
    "not http": b"HELLO\r\n\r\n",
    "space in header name": b"GET / HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n",
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_http_is_answered_in_json(serve, caplog, name):
    host, port, worker, gate = serve()
    s = raw(host, port, MALFORMED[name])
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    assert 400 <= status < 500, data
    assert b"application/json" in head.lower(), data
    assert "error" in json.loads(body), data
    no_tracebacks(caplog)


# ---- an address that cannot be listened on ------------------------------------------------------
@pytest.fixture
def no_uvicorn(monkeypatch):
    import uvicorn
    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: calls.append(k))
    return calls


def test_serve_on_a_port_in_use(bert_dir, no_uvicorn):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        r = CliRunner().invoke(main, ["serve", "-m", bert_dir, "--port", str(port)])
    check(r)
    assert r.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in r.stderr
    assert "in use" in r.stderr and not no_uvicorn


@pytest.mark.parametrize("host", ["no-such-host.invalid", "999.1.1.1", "bad host", "\udcff"])
def test_serve_on_a_host_that_does_not_resolve(bert_dir, no_uvicorn, host):
    r = CliRunner().invoke(main, ["serve", "-m", bert_dir, "--host", host])
    check(r)
    assert r.exit_code == 2 and "--host" in r.stderr and not no_uvicorn


def test_serve_runs_uvicorn_with_the_json_protocol(bert_dir, no_uvicorn):
    from infill.serve.listen import JsonErrorsH11Protocol
    r = CliRunner().invoke(main, ["serve", "-m", bert_dir, "--port", "0"])
    assert r.exit_code == 0, r.output
    assert no_uvicorn[0]["http"] is JsonErrorsH11Protocol
