"""``infill serve`` on the command line: options, one-line errors, and a real server process."""
from __future__ import annotations

import json
import urllib.request

import pytest
from click.testing import CliRunner
from infill_cli.main import main

pytest.importorskip("uvicorn", reason="infill serve needs the 'serve' extra (fastapi, uvicorn)")


def test_help_lists_the_options():
    out = CliRunner().invoke(main, ["serve", "--help"])
    assert out.exit_code == 0
    for option in ("--host", "--port", "--model", "--max-text", "--max-beam", "--max-top-k",
                   "--max-gap", "--max-positions", "--max-pending", "--max-batch",
                   "--batch-wait-ms", "--device"):
        assert option in out.output


@pytest.mark.parametrize("args, message", [
    (["--model", "/nonexistent/model-dir"], "Error: no such model file or directory"),
    (["--model", "builtin:nope"], "Error: unknown builtin model 'builtin:nope'"),
    (["--max-batch", "0"], "Error: Invalid value for '--max-batch'"),
    (["--port", "70000"], "Error: Invalid value for '--port'"),
])
def test_bad_options_are_one_line_errors(args, message):
    out = CliRunner().invoke(main, ["serve", *args])
    assert out.exit_code == 2
    lines = [line for line in out.output.strip().splitlines() if not line.startswith("note: loading ")]
    assert len(lines) == 1 and lines[0].startswith(message), out.output


def test_real_server_process(cli_server, catalog, expected_fn, post_fn):
    """The installed command serves the page and the API; its first --model is the default
    and its limits apply."""
    with urllib.request.urlopen(cli_server + "/", timeout=10) as r:
        assert 'id="fill-form"' in r.read().decode()
    with urllib.request.urlopen(cli_server + "/api/options", timeout=10) as r:
        options = json.loads(r.read())
    assert options["default_model"] == "builtin:greek" and options["limits"]["max_beam"] == 8
    text = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ[.1]ος"
    status, got = post_fn(cli_server, "/api/fill", {"text": text, "top_k": 3})
    assert status == 200, got
    assert got == expected_fn(catalog, "builtin:greek", "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ?ος",
                              top_k=3)
    status, got = post_fn(cli_server, "/api/fill", {"text": text, "beam_size": 9})
    assert (status, got) == (400, {"error": "beam_size must be between 1 and 8 on this server, got 9"})


def test_without_the_serve_extra(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "uvicorn", None)        # as if not installed
    out = CliRunner().invoke(main, ["serve"])
    assert out.exit_code == 2
    assert out.output.strip() == ("Error: infill serve needs FastAPI and uvicorn: pip install "
                                  "'infill-mlm[serve]' (uvicorn is missing)")
