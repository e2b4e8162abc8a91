"""``infill models``: list the builtin (and downloadable) models; ``infill models download``."""
from __future__ import annotations

import textwrap

import click

from .errors import InfillGroup, clean_errors
from .options import json_option
from .status import WIDTH, progress_option, wrap
from infill.lazy import LazyModule
from infill.progress import progress as progress_bar

# On first use: `infill models --help` needs none of these.
json = LazyModule("json")
registry = LazyModule("infill.models.registry")
defaults = LazyModule("infill.filling.defaults")


@click.group(cls=InfillGroup, invoke_without_command=True)
@click.option("--model", "-m", "model", default=None,
              help="Describe this model instead (e.g. an Ithaca checkpoint_v1.pkl).")
@json_option
@click.pass_context
@clean_errors
def models(ctx, model, as_json):
    """List the models that load by name (--model NAME), with their size on disk; with
    --model, describe that one model (architecture, alphabet, parameters)."""
    if ctx.invoked_subcommand is not None:
        return


    if model is not None:
        row = {**registry.describe_model(model), **_defaults(model)}
        if as_json:
            click.echo(json.dumps(row, ensure_ascii=False))
        else:
            for key, value in row.items():
                if isinstance(value, dict):
                    value = ", ".join(f"{k} {v}" for k, v in value.items())
                click.echo("\n".join(wrap(f"{key}: {value}", "    ")))
        return

    rows = registry.list_models()
    if as_json:
        for row in rows:
            click.echo(json.dumps(row, ensure_ascii=False))
        return
    _table(rows)


def _defaults(model: str) -> dict:
    """The decoding defaults the model records (``defaults.json``) and why, for its row."""
    rec = defaults.recommendation(model)
    if rec.source == "infill":
        return {}
    extra = {k: v for k, v in (("gap", rec.gap), ("length_score", rec.length_score),
                               ("length_beam", rec.length_beam), ("rerank", rec.rerank),
                               ("lacuna_edges", rec.lacuna_edges)) if v}
    return {"defaults": {"scorer": rec.scorer, "order": rec.order, **extra},
            "defaults_why": rec.why}


def _table(rows: list[dict]) -> None:
    """The models as a table that fits :data:`WIDTH` columns: name, family and size on the
    row's line, the description wrapped on indented lines under it."""
    cols = ("name", "family", "size")
    table = [dict(zip(cols, cols))] + [{**r, "size": _size(r)} for r in rows]
    widths = {k: max(len(str(r[k])) for r in table) for k in cols}
    for r in table:
        click.echo("  ".join(str(r[k]).ljust(widths[k]) for k in cols).rstrip())
        for line in textwrap.wrap(r.get("description", ""), WIDTH - 4, break_on_hyphens=False):
            click.echo("    " + line)


def _size(row: dict) -> str:
    if row["bytes"] is None:
        return row["status"]
    return f"{row['bytes'] / 2 ** 20:.1f} MiB"


@models.command("download")
@click.argument("names", nargs=-1, required=True)
@progress_option
@clean_errors
def download(names, progress):
    """Fetch and convert downloadable models (e.g. sapiens-vh) into infill's cache."""
    with progress_bar(total=len(names), desc="download", unit="model", enabled=progress) as bar:
        for name in names:
            bar.set_postfix_str(name)
            path = registry.prepare(name)
            bar.clear()
            click.echo(f"{name}: ready in {path}")
            bar.update(1)
