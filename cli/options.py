"""Every option shared by several commands, defined once (one name, one help text).

An option that sets a field of a request type (:mod:`infill.requests`,
:class:`~infill.config.DecodeConfig`) is made from that field by :func:`field_option`: its flag
is the field's name (``beam_size`` -> ``--beam-size``), its type, range, choices, default and
help are the field's. :func:`request_args` turns the parsed options back into the request's
constructor arguments (sacrebleu's CLI-to-API mapping), so a command only adds what is its own.
"""
from __future__ import annotations

import math

import click

from .errors import CLIError
from .status import progress_option  # --progress/--no-progress, one name everywhere

from infill.errors import InfillError
from infill.fields import MAX_SEED, MAX_TEMPERATURE, MIN_TEMPERATURE, spec_of
from infill.lazy import LazyModule
from infill.names import DTYPE_SPELLINGS

# A gap length is read when one is given, not for --help.
lengths = LazyModule("infill.decoding.lengths")
fill_job = LazyModule("infill.jobs.fill")

class FiniteFloat(click.FloatRange):
    """click's FloatRange, refusing nan and inf (which compare false with any bound)."""

    name = "float range"

    def convert(self, value, param, ctx):
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


def field_option(request, name: str, *aliases: str, **overrides):
    """The click option of ``request``'s field ``name``: flag ``--name`` (dashes for
    underscores) plus ``aliases`` (e.g. a short flag, an older spelling), parameter name
    ``name``, and type, range, choices, default and help from the field's rules; ``overrides``
    go to ``click.option`` (e.g. a front end's extra bound)."""
    field = request.fields()[name]
    spec = spec_of(field)
    flag = "--" + name.replace("_", "-")
    kw: dict = {"default": field.default, "help": spec.help, "show_default": True}
    if spec.kind is bool:
        decls = (f"{flag}/--no-{flag[2:]}",) if field.default else (flag,)
        kw.update(is_flag=True, show_default=False)
        if field.default:
            kw["help"] = f"{spec.help}  [default: on]"
    else:
        decls = (flag,)
        kw["type"] = _click_type(spec)
        if field.default is None:
            kw["show_default"] = False
        if spec.many:                   # a grid axis: comma-separated, e.g. --gap-lengths 2,3,4
            kw.update(type=ListType(spec.kind), default=",".join(map(str, field.default)))
    kw.update(overrides)
    return click.option(*decls, *aliases, name, **kw)


def _click_type(spec):
    if spec.choices is not None:
        return click.Choice(spec.names())
    if spec.kind is int:
        return click.IntRange(spec.low, spec.high, min_open=spec.low_open,
                              max_open=spec.high_open)
    if spec.kind is float:
        return FiniteFloat(spec.low, spec.high, min_open=spec.low_open, max_open=spec.high_open)
    return str


class ListType(click.ParamType):
    """A comma-separated list (``2,3,4``) for a many-valued request field: a tuple of ints or
    of strings (the field's rules check the values)."""

    name = "LIST"

    def __init__(self, kind: type):
        self.kind = kind

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        flag = param.opts[0] if param is not None else "the list"
        items = [v.strip() for v in str(value).split(",") if v.strip()]
        if not items:
            raise CLIError(f"{flag} is empty")
        if self.kind is not int:
            return tuple(items)
        try:
            return tuple(int(v) for v in items)
        except ValueError:
            raise CLIError(f"{flag} must be comma-separated integers, got {value!r}") from None


def request_args(request, params: dict) -> dict:
    """The parsed options that are fields of ``request``, as its constructor arguments."""
    fields = request.fields()
    return {k: v for k, v in params.items() if k in fields}


def stack(*decorators):
    """One decorator applying ``decorators`` in order (the first is outermost)."""
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


def read_aliases(params: dict, aliases: dict[str, str]) -> dict:
    """``params`` with the value of each hidden old spelling given (``aliases``: its parameter
    -> the current one's; warned of when parsed) moved to the current parameter."""
    for alias, name in aliases.items():
        value = params.pop(alias, None)
        if value is not None:
            params[name] = value
    return params


model_option = click.option(
    "--model", "-m", default=DEFAULT_MODEL, show_default=True,
    help="builtin:NAME, antiberty / sapiens-vh / sapiens-vl, a local model directory or "
         "checkpoint, or a hub id.")

device_options = stack(
    click.option("--device", default=None,
                 help="cpu, cuda, cuda:N [default: cuda if available]."),
    click.option("--dtype", type=click.Choice(DTYPE_SPELLINGS), default=None,
                 help="Weights' precision: bf16 (CUDA, or CPU -- slow where the CPU lacks bf16 "
                      "units), fp16 (CUDA); default float32."))

speed_options = stack(
    click.option("--quantize", type=click.Choice(["int8"]), default=None,
                 help="Dynamic int8 quantization of the linear layers (CPU; approximate)."),
    click.option("--compile", "compile_model", is_flag=True,
                 help="torch.compile the network (first calls pay the compilation)."))


def input_option(what: str = "input"):
    return click.option("--input", "-i", "input_file", type=SafePath(dir_okay=False, allow_dash=True),
                        help=f"Read one {what} per line (or FASTA records) from FILE ('-': stdin).")


gap_options = stack(
    click.option("--gap", "-g", default=None, type=click.IntRange(min=1),
                 help="Tokens (characters, residues) to fill at each gap marker  [default: the "
                      "model's gap length when it records a fixed one, else 1]"),
    click.option("--marker", default="___", show_default=True, help="The gap marker in TEXT."))



class GapLengthType(click.ParamType):
    """``--gap`` of ``run``: a number, a range ``lo-hi`` (a lacuna of uncertain length) or
    ``word`` (one whole word of word pieces); read by :func:`infill.decoding.lengths.gap_lengths`."""

    name = "N|LO-HI|word"

    def convert(self, value, param, ctx):
        try:
            fill_job.check_gap_text(value)
            return lengths.parse_length(value)
        except InfillError as e:
            self.fail(str(e), param, ctx)


seed_option = click.option("--seed", default=0, show_default=True,
                           type=click.IntRange(0, MAX_SEED),
                           help="Seed of every random draw (results are deterministic under it).")

json_option = click.option("--json", "as_json", is_flag=True,
                           help="JSON Lines output, one object per input.")

examples_option = click.option("--examples", "-n", "examples", type=click.IntRange(min=0),
                               default=200, show_default=True,
                               help="Examples drawn at random (seeded). 0: all (the API's "
                                    "None).")

data_option = click.option("--data-dir", "--data-root", "data_root",
                           type=SafePath(file_okay=False), default=None,
                           help="Folder of the named corpora (english, greek, latin, protein) "
                                "[default: $INFILL_DATA, else ../shared/data of a checkout].")


no_window_option = click.option(
    "--no-window", is_flag=True,
    help="Refuse inputs longer than the model's maximum length (joint --data: skip such texts) "
         "instead of reading them in the longest context window centred on their gaps (rescore: "
         "on each scored token).")


def temperature_type() -> FiniteFloat:
    """A temperature: a finite number in [MIN_TEMPERATURE, MAX_TEMPERATURE] (the rule of every
    temperature field, :func:`infill.fields.temperature_option`)."""
    return FiniteFloat(min=MIN_TEMPERATURE, max=MAX_TEMPERATURE)
