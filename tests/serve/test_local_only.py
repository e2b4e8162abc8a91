"""``infill serve`` answers its own page only (:mod:`infill.serve.guard`): a request whose Host
does not name the server (DNS rebinding) and a POST from another site's page (a "simple"
cross-origin request: ``Content-Type: text/plain``, no preflight) are 403 JSON; a POST body not
declared JSON is 415; nothing refused reaches the decoder."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")

from fastapi.testclient import TestClient  # noqa: E402

BODY = json.dumps({"text": "the cat ___ on the mat", "top_k": 1})
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def app_on(catalog):
    """app_on(**create_app options) -> an in-process client of an app (its own worker)."""
    from infill.serve.app import create_app
    clients = []

    def start(base_url: str = "http://127.0.0.1:8000", **options) -> TestClient:
        c = TestClient(create_app(catalog, **options), raise_server_exceptions=False,
                       base_url=base_url)
        clients.append(c.__enter__())
        return c

    yield start
    for c in clients:
        c.__exit__(None, None, None)


def refused(r, status: int, *words: str) -> None:
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert list(body) == ["error"] and "\n" not in body["error"], body
    assert all(w in body["error"] for w in words), body


def served(c) -> int:
    return c.app.state.worker.stats()["served"]


@pytest.mark.parametrize("path", ["/", "/api/health", "/api/models", "/static/app.js"])
def test_a_foreign_host_is_refused(client, path):
    """DNS rebinding: a page of evil.example whose name now points at 127.0.0.1."""
    refused(client.get(path, headers={"Host": "evil.example"}), 403, "evil.example")
    refused(client.get(path, headers={"Host": "evil.example:8000"}), 403, "allow_hosts")


def test_a_post_naming_a_foreign_host_is_never_decoded(client):
    before = served(client)
    r = client.post("/api/fill", content=BODY, headers={**JSON, "Host": "evil.example:8000",
                                                        "Origin": "http://evil.example:8000"})
    refused(r, 403, "evil.example")
    assert served(client) == before


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "LOCALHOST", "[::1]:8000",
                                  "127.0.0.2:8000", "localhost:9000"])
def test_the_server_own_names_are_answered(client, host):
    """Loopback names and addresses; any port (an SSH tunnel forwards another port)."""
    r = client.get("/api/health", headers={"Host": host})
    assert r.status_code == 200 and r.json()["status"] == "ok", r.text


@pytest.mark.parametrize("host", ["", "127.0.0.1:8000@evil.example", "evil.example/x",
                                  "[::1", "localhost.evil.example"])
def test_malformed_or_lookalike_hosts_are_refused(client, host):
    refused(client.get("/api/health", headers={"Host": host}), 403)


def test_a_cross_origin_simple_post_is_refused(client):
    """The form a page of another site may send without a preflight: refused before its body
    is read, whatever it holds."""
    before = served(client)
    r = client.post("/api/fill", content=BODY, headers={"Content-Type": "text/plain",
                                                        "Origin": "http://evil.example"})
    refused(r, 403, "cross-origin", "evil.example")
    for origin in ("null", "http://127.0.0.1:9999", "http://localhost:8000", "file://",
                   "http://evil.example"):
        r = client.post("/api/fill", content=BODY, headers={**JSON, "Origin": origin})
        refused(r, 403, "cross-origin")
    assert served(client) == before


@pytest.mark.parametrize("kind", ["text/plain", "application/x-www-form-urlencoded",
                                  "multipart/form-data; boundary=x", None])
@pytest.mark.parametrize("path", ["/api/fill", "/api/epidoc"])
def test_a_body_not_declared_json_is_415(client, kind, path):
    headers = {} if kind is None else {"Content-Type": kind}
    before = served(client)
    refused(client.post(path, content=BODY, headers=headers), 415, "application/json")
    assert served(client) == before


def test_the_page_own_posts_are_answered(client):
    """Same origin (what the workbench page sends), and a client that sends no Origin (curl)."""
    for extra in ({"Origin": "http://127.0.0.1:8000"}, {},
                  {"Content-Type": "application/json; charset=utf-8"}):
        r = client.post("/api/fill", content=BODY, headers={**JSON, **extra})
        assert r.status_code == 200 and r.json()["completions"], r.text


def test_allowed_and_listening_names(app_on):
    named = app_on(base_url="http://workbench.lan:8000", allow_hosts=("Workbench.LAN",))
    assert named.get("/api/health").status_code == 200
    r = named.post("/api/fill", content=BODY,
                   headers={**JSON, "Origin": "http://workbench.lan:8000"})
    assert r.status_code == 200, r.text
    refused(named.get("/api/health", headers={"Host": "other.lan"}), 403)
    everywhere = app_on(base_url="http://192.168.1.20:8000", host="0.0.0.0")
    assert everywhere.get("/api/health").status_code == 200      # any address of the machine
    refused(everywhere.get("/api/health", headers={"Host": "evil.example"}), 403)
    assert everywhere.get("/api/health", headers={"Host": "[fe80::1]:8000"}).status_code == 200


def test_serve_takes_allow_host(monkeypatch):
    """``infill serve --allow-host NAME`` (repeatable) gives the app those names."""
    import uvicorn
    from click.testing import CliRunner

    from infill_cli.main import main
    apps = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: apps.append(app))
    r = CliRunner().invoke(main, ["serve", "--model", "builtin:greek", "--port", "0",
                                  "--allow-host", "box.lan", "--allow-host", "gpu.lan"])
    assert r.exit_code == 0, r.output
    with TestClient(apps[0], base_url="http://gpu.lan:8000") as c:
        assert c.get("/api/health").status_code == 200
        assert c.get("/api/health", headers={"Host": "box.lan"}).status_code == 200
        refused(c.get("/api/health", headers={"Host": "evil.example"}), 403)
