"""Every option shared by several commands, defined once (one name, one help text).

Choices come from the library's registries (:data:`infill.config.SCORERS`, ``ORDERS``,
``SAMPLERS``, ``DECODERS``), and :func:`decode_config` turns the parsed options into the one
:class:`~infill.config.DecodeConfig` the library validates.
"""
from __future__ import annotations

import click

from infill.config import (DECODERS, MAX_SEED, ORDERS, PIVOT_CONTEXTS, SAMPLERS, SCORERS,
                           DecodeConfig)
from infill.data.files import check_text
from infill.data.splits import PARTS
from infill.decoding.proposals import MAX_TEMPERATURE
from infill.models.device import DTYPES

class FiniteFloat(click.FloatRange):
    """click's FloatRange, refusing nan and inf (which compare false with any bound)."""

    name = "float range"

    def convert(self, value, param, ctx):
        import math
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return rv


class SafePath(click.Path):
    """click's Path, failing cleanly for names no file can have (a NUL, a lone surrogate) instead
    of letting ``os.stat`` raise."""

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except (UnicodeError, ValueError) as e:
            self.fail(f"{value!r} is not a valid file name ({type(e).__name__})", param, ctx)


DEFAULT_MODEL = "builtin:english"
SPLITS = ("all", *PARTS)
DEFAULTS = DecodeConfig()
"""The library's decoding defaults: the CLI shows them, it does not restate them."""


def _stack(*decorators):
    def apply(fn):
        for d in reversed(decorators):
            fn = d(fn)
        return fn
    return apply


def deprecated(old: str, new: str):
    """Callback of a hidden option kept for one release under its old name."""
    def callback(ctx, param, value):
        if value is not None and value != param.default and value != ():
            click.echo(f"Warning: {old} is deprecated; use {new}", err=True)
        return value
    return callback


model_option = click.option(
    "--model", "-m", default=DEFAULT_MODEL, show_default=True,
    help="builtin:NAME, antiberty / sapiens-vh / sapiens-vl, a local model directory or "
         "checkpoint, or a hub id.")

device_options = _stack(
    click.option("--device", default=None,
                 help="cpu, cuda, cuda:N [default: cuda if available]."),
    click.option("--dtype", type=click.Choice(DTYPES), default=None,
                 help="Weights' precision: bf16 (CUDA, or CPU -- slow where the CPU lacks bf16 "
                      "units), fp16 (CUDA); default float32."))

speed_options = _stack(
    click.option("--quantize", type=click.Choice(["int8"]), default=None,
                 help="Dynamic int8 quantization of the linear layers (CPU; approximate)."),
    click.option("--compile", "compile_model", is_flag=True,
                 help="torch.compile the network (first calls pay the compilation)."))


def input_option(what: str = "input"):
    return click.option("--input", "-i", "input_file", type=SafePath(dir_okay=False, allow_dash=True),
                        help=f"Read one {what} per line (or FASTA records) from FILE ('-': stdin).")


gap_options = _stack(
    click.option("--gap", "-g", default=1, show_default=True, type=click.IntRange(min=1),
                 help="Tokens (characters, residues) to fill at each gap marker."),
    click.option("--marker", default="___", show_default=True, help="The gap marker in TEXT."))

seed_option = click.option("--seed", default=0, show_default=True,
                           type=click.IntRange(0, MAX_SEED),
                           help="Seed of every random draw (results are deterministic under it).")

json_option = click.option("--json", "as_json", is_flag=True,
                           help="JSON Lines output, one object per input.")

examples_option = click.option("--examples", "-n", "examples", type=click.IntRange(min=0),
                               default=200, show_default=True,
                               help="Examples drawn at random (seeded); 0 = all.")

data_option = click.option("--data-dir", "data_root", type=SafePath(file_okay=False), default=None,
                           help="Folder of the named corpora (english, greek, protein) "
                                "[default: $INFILL_DATA, else ../shared/data of a checkout].")

progress_option = click.option("--no-progress", is_flag=True, help="No progress bar.")

no_window_option = click.option(
    "--no-window", is_flag=True,
    help="Refuse inputs longer than the model's maximum length (joint --data: skip such texts) "
         "instead of reading them in the longest context window centred on their gaps (rescore: "
         "on each scored token).")


def allow_special_option(help: str = "Let special tokens be placed in gaps."):
    return click.option("--allow-special", is_flag=True, help=help)


def no_dedup_option():
    return click.option("--no-dedup", is_flag=True,
                        help="best-to-worst: keep duplicate fills (the classic algorithm).")


decode_options = _stack(
    click.option("--decoder", type=click.Choice(DECODERS), default=DEFAULTS.decoder,
                 show_default=True,
                 help="beam: beam search (or a sampling baseline); ag: the Arnold-Gokhale "
                      "pairwise joint (gaps of exactly two tokens)."),
    click.option("--scorer", type=click.Choice(list(SCORERS)), default=None,
                 help="Update rule [default: hcb; standard with --sampling]."),
    click.option("--order", type=click.Choice(ORDERS), default=DEFAULTS.order, show_default=True,
                 help="Which gap position a hypothesis fills next."),
    click.option("--beam", "-b", default=DEFAULTS.beam_size, show_default=True,
                 type=click.IntRange(min=1),
                 help="Beam size (rows for --sampling); raised to --top-k if smaller."),
    click.option("--pivot", multiple=True,
                 help="HCB pivot token (default: the model's mask / missing symbol); repeat once "
                      "per gap position for a per-position pivot."),
    click.option("--pivot-context", type=click.Choice(PIVOT_CONTEXTS),
                 default=DEFAULTS.pivot_context,
                 show_default=True, help="Pivots as context (SPEC) or [MASK] context (the paper's "
                                         "published code)."),
    no_dedup_option(),
    allow_special_option(),
    click.option("--sampling", type=click.Choice(SAMPLERS), default=None,
                 help="A sampling baseline at the same budget instead of beam search."),
    click.option("--sample", "sample_alias", type=click.Choice(SAMPLERS), default=None,
                 hidden=True, callback=deprecated("--sample", "--sampling")),
    click.option("--temperature", default=DEFAULTS.temperature, show_default=True,
                 type=FiniteFloat(min=0, min_open=True, max=MAX_TEMPERATURE),
                 help="Sampling temperature (--sampling temperature)."),
    click.option("--top-p", default=DEFAULTS.top_p, show_default=True,
                 type=FiniteFloat(0, 1, min_open=True),
                 help="Nucleus mass (--sampling nucleus)."))


def decode_config(decoder, scorer, order, beam, pivot, pivot_context, no_dedup, allow_special,
                  sampling, sample_alias, temperature, top_p, seed) -> DecodeConfig:
    """The parsed decode options as one validated :class:`DecodeConfig`."""
    if sampling and sample_alias and sampling != sample_alias:
        raise click.UsageError("give --sampling only (not also the deprecated --sample)")
    for p in pivot:
        check_text(p, "--pivot")
    return DecodeConfig(decoder=decoder, scorer=scorer, order=order, beam_size=beam,
                        pivot=tuple(pivot) if pivot else None, pivot_context=pivot_context,
                        dedup=not no_dedup, allow_special=allow_special,
                        sampling=sampling or sample_alias, temperature=temperature, top_p=top_p,
                        seed=seed)


def top_k_option(default: int = 5, help: str = "Completions shown per input."):
    return click.option("--top-k", "-k", "top_k", default=default, show_default=True,
                        type=click.IntRange(min=1), help=help)
