"""Fixtures of the ``infill serve`` tests: the models loaded once, an in-process client, a live
server on loopback (uvicorn in a thread), and the comparison with direct ``fill_each`` calls."""
from __future__ import annotations

import json
import math
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

NEEDS_SERVE = "infill serve needs the 'serve' extra (fastapi, uvicorn)"
MODELS = ("builtin:english", "builtin:greek")
STARTUP_TIMEOUT = 60.0
LOCAL = "http://127.0.0.1:8000"
"""The base URL of in-process clients: the app answers requests that name its own host."""


@pytest.fixture(scope="session")
def catalog():
    """The named models, with English and Greek loaded (on CPU)."""
    from infill.serve.catalog import ModelCatalog
    cat = ModelCatalog(device="cpu")
    cat.preload(MODELS)
    return cat


@pytest.fixture(scope="module")
def client(catalog):
    """An in-process client of an app on the shared catalog (its worker runs meanwhile)."""
    from fastapi.testclient import TestClient

    from infill.serve.app import create_app
    with TestClient(create_app(catalog), raise_server_exceptions=False, base_url=LOCAL) as c:
        yield c


def expected(catalog, model: str, text: str, *, gap=None, marker: str = "___",
             top_k: int = 5, id: str | None = None, **options) -> dict:
    """What ``infill run --json`` prints for one input: a direct ``fill_each`` call (the options
    not given, the gap's length included, take the model's recommended defaults, as in
    ``infill run``)."""
    from infill import fill_each
    res = fill_each(catalog.get(model), [text], gap=gap, top_k=top_k, marker=marker, **options)[0]
    res.model, res.id = model, id                # what the job knows besides the model object
    return json.loads(json.dumps(res.to_json()))


@pytest.fixture(scope="session")
def local_url():
    """:data:`LOCAL` for the tests."""
    return LOCAL


@pytest.fixture(scope="session")
def expected_fn():
    """:func:`expected` (direct ``fill_each`` answers) for the tests."""
    return expected


@pytest.fixture
def first_of_every_front_end(client, catalog):
    """``first_of_every_front_end(model, text)``: ``POST /api/fill``, ``infill run --json`` and
    the Python API answer ``text`` (top 3) alike; returns the first completion's fills, joined
    and lower-cased."""
    from click.testing import CliRunner

    from infill_cli.main import main

    def first(model: str, text: str) -> str:
        got = client.post("/api/fill", json={"text": text, "model": model, "top_k": 3,
                                             "id": "1"})
        assert got.status_code == 200
        out = CliRunner().invoke(main, ["run", "--model", model, "--device", "cpu", "--json",
                                        "--top-k", "3", text])
        assert out.exit_code == 0, out.output
        assert got.json() == json.loads(out.output.splitlines()[0])
        assert got.json() == expected(catalog, model, text, top_k=3, id="1")
        return "".join(got.json()["completions"][0]["fills"]).lower()
    return first


@pytest.fixture(scope="session")
def same_answer_fn():
    """:func:`same_answer` for the tests."""
    return same_answer


def same_answer(got, want, rel: float = 1e-5) -> bool:
    """Equal structure, strings and integers; floats equal up to ``rel`` (a batched decode pads
    inputs, which moves float scores in their last digits)."""
    if isinstance(want, float) and isinstance(got, (int, float)):
        return math.isclose(got, want, rel_tol=rel, abs_tol=rel)
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and \
            all(same_answer(got[k], want[k], rel) for k in want)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and \
            all(same_answer(g, w, rel) for g, w in zip(got, want))
    return type(got) is type(want) and got == want


def wait_healthy(base: str, timeout: float = STARTUP_TIMEOUT, proc=None, log=None) -> dict:
    """Poll ``GET /api/health`` until it answers ok (bounded by ``timeout``); ``proc``: the
    server's process (and ``log`` its stderr file), to fail at once if it exits."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            said = log.read_text(errors="replace")[-2000:] if log is not None else ""
            raise RuntimeError(f"server exited with {proc.returncode}: {said}")
        try:
            with urllib.request.urlopen(base + "/api/health", timeout=2) as r:
                return json.loads(r.read())
        except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
            last = e
        threading.Event().wait(0.05)       # poll interval
    raise TimeoutError(f"server at {base} not healthy after {timeout:.0f} s: {last}")


def post_json(base: str, path: str, body: dict, timeout: float = 60) -> tuple[int, dict]:
    data = json.dumps(body, ensure_ascii=False).encode()
    req = urllib.request.Request(base + path, data=data,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.fixture(scope="session")
def post_fn():
    """:func:`post_json` for the tests."""
    return post_json


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def live_server(catalog) -> Iterator[tuple[str, object]]:
    """uvicorn serving an app on the shared catalog at 127.0.0.1:<free port>, in a thread;
    yields (base URL, app)."""
    import uvicorn

    from infill.serve.app import create_app
    app = create_app(catalog)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        threading.Event().wait(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    wait_healthy(base)
    try:
        yield base, app
    finally:
        server.should_exit = True
        thread.join(30)


SERVE_ARGS = ("--model", "builtin:greek", "--max-beam", "8")
"""The one ``infill serve`` process of the session: Greek by default, beam at most 8."""


@pytest.fixture(scope="session")
def cli_server(tmp_path_factory) -> Iterator[str]:
    """``infill serve`` (:data:`SERVE_ARGS`) as a subprocess on a free loopback port, shared by
    the session; yields the base URL and terminates the process at the end."""
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "stderr.txt"
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "infill_cli.main", "serve", "--port",
                                 str(port), "--log-level", "warning", *SERVE_ARGS],
                                stdout=subprocess.DEVNULL, stderr=err)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base, proc=proc, log=log)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


# Chromium must not try the network: no QUIC, no background services, a fresh profile
CHROMIUM_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                  "--hide-scrollbars", "--force-device-scale-factor=1"]
PAGE_LOAD_TIMEOUT = 60


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium driven by selenium, one per test module; the test skips (with the
    reason) where selenium, Chromium or its driver is absent (Debian: ``apt-get install
    chromium chromium-driver``)."""
    pytest.importorskip("selenium", reason="the browser test needs selenium (pip install selenium)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    binary = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")
                   if shutil.which(b)), None)
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        pytest.skip("no headless Chromium here (apt-get install chromium chromium-driver)")
    profile = tempfile.mkdtemp(prefix="infill-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    driver.set_page_load_timeout(PAGE_LOAD_TIMEOUT)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
