"""Click options shared by several commands (one definition, one help text)."""
from __future__ import annotations

import click

DEFAULT_MODEL = "builtin:english"


def model_option(fn):
    return click.option("--model", "-m", default=DEFAULT_MODEL, show_default=True,
                        help="builtin:NAME, a local model directory / checkpoint, or a hub id.")(fn)


def input_option(what: str = "input"):
    return click.option("--input", "-i", "input_file", type=click.File("r", encoding="utf-8"),
                        help=f"Read one {what} per line from FILE ('-' for stdin).")


def gap_options(fn):
    fn = click.option("--marker", default="___", show_default=True, help="The gap marker in TEXT.")(fn)
    return click.option("--gap", "-g", default=1, show_default=True, type=click.IntRange(min=1),
                        help="Tokens to fill at each gap marker.")(fn)


def device_options(fn):
    fn = click.option("--dtype", type=click.Choice(["float32", "bf16", "fp16"]), default=None,
                      help="Half precision on CUDA.")(fn)
    return click.option("--device", default=None,
                        help="cpu, cuda, cuda:N [default: cuda if available].")(fn)
