"""What the user chose on the command line, and the status lines a person reads on stderr."""
from __future__ import annotations

import textwrap

import click
from click.core import ParameterSource

from infill import progress as _progress

__all__ = ["WIDTH", "chosen_options", "defaults_line", "interactive", "progress_option", "say",
           "wrap"]

WIDTH = 100
"""The widest line a command prints for a person (status lines, tables' long text)."""


def chosen_options(ctx: click.Context | None = None) -> set[str]:
    """Names of the current command's options the user gave (not left at their default)."""
    ctx = ctx or click.get_current_context()
    return {name for name in ctx.params
            if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)}


def interactive() -> bool:
    """Whether stderr is a terminal (:func:`infill.progress.interactive`, looked up when called)."""
    return _progress.interactive()


def wrap(text: str, indent: str = "  ", width: int = WIDTH) -> list[str]:
    """``text`` as lines of at most ``width`` characters, the later ones indented."""
    return textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=False) or [""]


def say(line: str) -> None:
    """A status line (e.g. which defaults a run used) on stderr, when stderr is a terminal;
    wrapped at :data:`WIDTH` columns."""
    if line and interactive():
        click.echo("\n".join(wrap(line)), err=True)


def defaults_line(defaults) -> str:
    """The short form of :meth:`infill.filling.defaults.Defaults.line`: the values a run took from the
    model's (or infill's) defaults, whose they are and where the why is, in at most
    :data:`WIDTH` columns (the why itself: ``infill models -m MODEL`` and ``--json``)."""
    if not defaults.values:
        return ""
    used = "defaults: " + ", ".join(f"{k.replace('_', '-')} {v}"
                                    for k, v in defaults.values.items())
    source = defaults.recommendation.source
    if source == "infill":
        return f"{used} (infill's)"
    tries = (f"{used} ({source}'s; why: infill models -m {source})",
             f"{used} (why: infill models -m {source})", f"{used} ({source}'s)")
    return next((line for line in tries if len(line) <= WIDTH), used)


def _chosen_progress(ctx, param, value):
    """The choice also governs the bars a library call opens inside the command."""
    _progress.choose(value)
    return value


progress_option = click.option(
    "--progress/--no-progress", "progress", default=None, callback=_chosen_progress,
    help="Progress bar with ETA on stderr [default: when stderr is a terminal].")
