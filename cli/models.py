"""``infill models``: list the builtin (and downloadable) models; ``infill models download``."""
from __future__ import annotations

import click

from .errors import InfillGroup, clean_errors
from .options import json_option
from .status import progress_option


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
    import json

    from infill.models.registry import describe_model, list_models

    if model is not None:
        row = describe_model(model)
        if as_json:
            click.echo(json.dumps(row, ensure_ascii=False))
        else:
            for key, value in row.items():
                click.echo(f"{key}: {value}")
        return

    rows = list_models()
    if as_json:
        for row in rows:
            click.echo(json.dumps(row, ensure_ascii=False))
        return
    header = {"name": "name", "family": "family", "size": "size", "description": "description"}
    table = [header] + [{**r, "size": _size(r)} for r in rows]
    widths = {k: max(len(str(r[k])) for r in table) for k in ("name", "family", "size")}
    for r in table:
        click.echo("  ".join(str(r[k]).ljust(widths[k]) for k in ("name", "family", "size"))
                   + "  " + r["description"])


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
    from infill.models.registry import prepare
    from infill.progress import progress as progress_bar

    with progress_bar(total=len(names), desc="download", unit="model", enabled=progress) as bar:
        for name in names:
            bar.set_postfix_str(name)
            path = prepare(name)
            bar.clear()
            click.echo(f"{name}: ready in {path}")
            bar.update(1)
