"""``infill serve``: a local restoration and design workbench (web page + JSON API)."""
from __future__ import annotations

import click

from infill.errors import ConfigError
from infill.lazy import LazyModule
from infill.requests import ServeLimits
from infill.serve.limits import Limits

from .errors import InfillCommand, clean_errors
from .options import DEFAULT_MODEL, device_options, field_option

LIMITS = Limits()          # the option defaults are the library's
model_catalog = LazyModule("infill.serve.catalog")  # the models (torch): when it serves
listen = LazyModule("infill.serve.listen")

_SERVE_EXTRA = "infill serve needs FastAPI and uvicorn: pip install 'infill-mlm[serve]'"


@click.command(cls=InfillCommand)
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (127.0.0.1: this machine only).")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="Also answer requests that name this server NAME (repeatable); besides "
                   "localhost, loopback addresses and --host, every other Host is refused (a "
                   "defence against DNS rebinding).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: any free port).")
@click.option("--model", "-m", "models", multiple=True, metavar="MODEL",
              help="Load MODEL at start (repeatable); the first is the page's and the API's "
                   "default [default: builtin:english]. A local model directory or checkpoint "
                   "given here is offered in the model picker too.")
@device_options
@field_option(ServeLimits, "max_text")
@field_option(ServeLimits, "max_beam")
@field_option(ServeLimits, "max_top_k")
@field_option(ServeLimits, "max_gap")
@field_option(ServeLimits, "max_positions")
@field_option(ServeLimits, "max_pending")
@field_option(ServeLimits, "max_batch")
@field_option(ServeLimits, "batch_wait_ms")
@field_option(ServeLimits, "max_wait_s")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]),
              help="uvicorn's log level.")
@clean_errors
def serve(host, allow_hosts, port, models, device, dtype, max_text, max_beam, max_top_k, max_gap,
          max_positions, max_pending, max_batch, batch_wait_ms, max_wait_s, log_level):
    """Serve the workbench page and the JSON API on HOST:PORT.

    Open http://HOST:PORT/ in a browser: type a text with gaps, pick a model, and see the ranked
    hypotheses with per-character confidence. The API: GET /api/models, GET /api/health,
    POST /api/fill with {"text": ..., "model": ..., "gap": ..., "beam": ..., ...} (answers the
    object of one line of `infill run --json`). Concurrent requests are decoded in batches.

    \b
    infill serve
    infill serve --model builtin:greek --model builtin:english --port 8080
    """
    try:                                      # optional: its absence is one clear line
        import uvicorn

        from infill.serve.app import create_app
    except ModuleNotFoundError as e:
        raise ConfigError(f"{_SERVE_EXTRA} ({e.name} is missing)") from None
    listen.check_address(host, port)                 # before any model loads: a clean Error line
    limits = Limits(max_text=max_text, max_beam=max_beam, max_top_k=max_top_k, max_gap=max_gap,
                    max_positions=max_positions, max_pending=max_pending, max_batch=max_batch,
                    batch_wait_ms=batch_wait_ms, max_wait_s=max_wait_s)
    catalog = model_catalog.ModelCatalog(extra=models, device=device, dtype=dtype)
    for name in models or (DEFAULT_MODEL,):       # the default model is ready for the first request
        click.echo(f"note: loading {name} ...", err=True)
        catalog.get(name)
    app = create_app(catalog, limits, default_model=models[0] if models else DEFAULT_MODEL,
                     host=host, allow_hosts=allow_hosts)
    if host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"Warning: serving on {host}: anyone who can reach it can use this machine's "
                   "CPU/GPU (the workbench has no authentication)", err=True)
    uvicorn.run(app, host=host, port=port, log_level=log_level, http=listen.JsonErrorsH11Protocol)
