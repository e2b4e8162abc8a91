"""``infill models``: list the builtin models."""
from __future__ import annotations

import click

from cli.errors import clean_errors


@click.command()
@clean_errors
def models():
    """List the builtin models (use them as --model builtin:NAME)."""
    from infill.errors import ModelLoadError
    from infill.models.builtin import BUILTINS, builtin_path, disk_size

    rows = []
    for name, entry in BUILTINS.items():
        try:
            size = f"{disk_size(builtin_path(name)) / 1e6:.1f} MB"
        except ModelLoadError:
            size = "missing"
        rows.append((f"builtin:{name}", entry.family, size, entry.description))
    widths = [max(len(r[i]) for r in rows + [("name", "family", "size", "")]) for i in range(3)]
    header = ("name", "family", "size", "description")
    for r in [header, *rows]:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + "  " + r[3])
