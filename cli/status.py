"""What the user chose on the command line, and the status lines a person reads on stderr."""
from __future__ import annotations

import click
from click.core import ParameterSource

from infill.progress import interactive

__all__ = ["chosen_options", "progress_option", "say"]


def chosen_options(ctx: click.Context | None = None) -> set[str]:
    """Names of the current command's options the user gave (not left at their default)."""
    ctx = ctx or click.get_current_context()
    return {name for name in ctx.params
            if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)}


def say(line: str) -> None:
    """A status line (e.g. which defaults a run used) on stderr, when stderr is a terminal."""
    if line and interactive():
        click.echo(line, err=True)


progress_option = click.option(
    "--progress/--no-progress", "progress", default=None,
    help="Progress bar with ETA on stderr [default: when stderr is a terminal].")
