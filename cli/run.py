"""``infill run``: fill the gaps of one or more inputs and print ranked completions (the
library's fill job, :func:`infill.jobs.fill_inputs`, does the work)."""
from __future__ import annotations

import click

from .errors import CLIError, InfillCommand, clean_errors
from .ranks import finish
from .readings import APP_READINGS_HELP, READINGS_HELP, run_app_readings, run_readings
from .status import defaults_line, progress_option, say
from .options import (GapLengthType, SafePath, deprecated, device_options,
                      field_option, input_option, json_option, model_option, no_window_option,
                      request_args, seed_option, speed_options, stack, temperature_type)
from infill.config import DecodeConfig
from infill.data.files import check_text
from infill.errors import WINDOWED
from infill.jobs.fill import FillRequest, fill_inputs
from infill.lazy import LazyModule
from infill.names import SAMPLERS
from infill.progress import progress as progress_bar

io = LazyModule(f"{__package__}.io")      # read and printed when it runs, not for --help
epidoc_cli = LazyModule(f"{__package__}.epidoc")
epigraphy = LazyModule("infill.epigraphy")
parallel = LazyModule("infill.parallel")
sharding = LazyModule("infill.jobs.sharding")    # .load read uncached (.module): tests replace it


def _decode(name: str, *aliases: str, **overrides):
    return field_option(DecodeConfig, name, *aliases, **overrides)


decode_options = stack(
    _decode("decoder"),
    _decode("scorer"),
    _decode("order"),
    _decode("beam_size", "--beam", "-b"),
    _decode("pivot", multiple=True, default=(), type=str,
            help="HCB pivot token (default: the model's mask / missing symbol); repeat once "
                 "per gap position for a per-position pivot."),
    _decode("pivot_context"),
    _decode("dedup"),
    _decode("dedup_keep"),
    _decode("allow_special"),
    _decode("sampling"),
    click.option("--sample", "sample_alias", type=click.Choice(SAMPLERS), default=None,
                 hidden=True, callback=deprecated("--sample", "--sampling")),
    _decode("temperature", type=temperature_type()),
    _decode("top_p"),
    _decode("unknown_max_length"),
    _decode("length_penalty"))


def decode_config(sample_alias=None, **params) -> DecodeConfig:
    """The parsed decode options (and ``--seed``) as one validated :class:`DecodeConfig`."""
    if params.get("sampling") and sample_alias and params["sampling"] != sample_alias:
        raise click.UsageError("give --sampling only (not also the deprecated --sample)")
    for p in params.get("pivot") or ():
        check_text(p, "--pivot")
    args = request_args(DecodeConfig, params)
    args["pivot"] = tuple(args["pivot"]) if args.get("pivot") else None
    args["sampling"] = args.get("sampling") or sample_alias
    return DecodeConfig(**args)


def _fill(name: str, *aliases: str, **overrides):
    return field_option(FillRequest, name, *aliases, **overrides)


@click.command(cls=InfillCommand)
@click.argument("texts", nargs=-1, metavar="[TEXT]...")
@model_option
@input_option()
@_fill("gap", "-g", type=GapLengthType())
@_fill("marker")
@_fill("length_score")
@_fill("length_beam")
@_fill("rerank")
@decode_options
@_fill("top_k", "-k")
@seed_option
@device_options
@speed_options
@click.option("--allow-nonstandard", is_flag=True,
              help="Protein models: allow non-standard residues (X, B, U, Z, O) as fills.")
@_fill("region")
@_fill("unclear")
@_fill("lacuna_edges")
@_fill("unknown_lengths", metavar="LO-HI")
@no_window_option
@click.option("--view", type=click.Choice(["table", "aligned"]), default="table",
              show_default=True, help="table: ranked texts; aligned: the gap region of each "
                                      "hypothesis stacked, with per-character confidence.")
@click.option("--output-format", "fmt",
              type=click.Choice(["text", "json", "fasta", "epidoc", "leiden"]),
              default="text", show_default=True,
              help="text (--view), JSON Lines (same as --json), FASTA (top-k designs); for "
                   "EpiDoc files also epidoc (the file with the restorations) or leiden.")
@click.option("--hide-supplied", is_flag=True,
              help="EpiDoc files: hide the editors' supplements and restore them afresh (the "
                   "editor's reading is reported beside the model's).")
@click.option("--out", "out", default=None, type=SafePath(file_okay=False),
              help="EpiDoc files: write each file's --output-format epidoc/leiden into this "
                   "folder (needed for several files).")
@click.option("--legend", is_flag=True,
              help="Explain the table's columns on stderr [default: the first time, on a "
                   "terminal].")
@click.option("--readings", "readings", multiple=True, metavar="'A|B|...'",
              help=READINGS_HELP)
@click.option("--app-readings", is_flag=True, help=APP_READINGS_HELP)
@json_option
@progress_option
@_fill("batch_size")
@clean_errors
def run(texts, model, input_file, device, dtype, quantize, compile_model, allow_nonstandard,
        no_window, view, fmt, hide_supplied, out, legend, as_json, progress, readings,
        app_readings, **params):
    """Fill each gap marker (default ___) in TEXT with --gap tokens and rank the completions.

    Inputs come from the arguments, --input FILE or stdin: one per line, or FASTA records (the
    header's first word is the input's id), or EpiDoc TEI files (and folders of them): their
    editions' lost text is restored. '?' marks one character/residue to restore for the
    Greek, Latin and protein models; a Leiden lacuna of unknown extent ([---]) is a break
    unless --unknown-lengths restores it; the model's own mask token ([MASK], <mask>) works
    as a marker too; #[ηιν] is one character (residue) to restore limited to those letters (--unclear restore
    also restores each Leiden underdotted letter, and an EpiDoc <unclear>, among its look-alikes).
    An input that cannot be filled is reported (stderr, and "error" in --json) and the others
    go on; the exit code is then 2.

    A text that starts with '-' (a Leiden lost stretch, - - -) goes after --.

    \b
    infill run "To be, or not to ___, that is the question."
    infill run --model builtin:greek --view aligned "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ??ς"
    infill run --model builtin:greek "ἄνδρα μοι ἔννεπε, μ[..]σα, πολύτροπον"
    infill run --model builtin:greek -- "- - -ος ἀνέθη[.]εν"
    infill run --model builtin:protein "MAKRVYFLAHGGQVQG???RYFTQKRASEYGLTGWCRNTDNNKVEGEAQ"
    """
    shard, fmt = parallel.current(), "json" if as_json else fmt
    request = FillRequest(config=decode_config(**params), window=not no_window,
                          **request_args(FillRequest, params))
    options = dict(dtype=dtype, quantize=quantize, compile=compile_model)
    if allow_nonstandard:
        options["allow_nonstandard"] = True
    epidoc = _epidoc_inputs(texts, input_file, fmt, hide_supplied, out)
    _check_printing(epidoc is not None, bool(readings or app_readings), view, legend, progress,
                    fmt, allow_nonstandard)
    if readings or app_readings:
        return _run_readings(texts, input_file, model,
                             sharding.module.load(model, device, shard, **options),
                             epidoc, readings, app_readings, request, fmt, out, hide_supplied)
    if epidoc is not None:
        return epidoc_cli.run_epidoc(sharding.module.load(model, device, shard, **options), model,
                                     epidoc, request, fmt, hide_supplied, out)
    records = io.read_records(texts, input_file)
    lm = sharding.module.load(model, device, shard, **options)
    job = fill_inputs(lm, records, request, name=model, shard=shard)
    say(defaults_line(job.defaults.ranked(job.ranks_lengths, job.reranks)))
    for input_id, warning in job.warnings:
        click.echo(f"Warning: input {input_id}: {warning}", err=True)
    failed = _print_fills(job, fmt, view, io.LongInputs(lm, no_window), progress, shard,
                          legend)
    finish(shard, failed, len(job.inputs))


def _run_readings(texts, input_file, model: str, lm, epidoc, readings, app_readings, request,
                  fmt: str, out, hide_supplied: bool) -> None:
    """--readings (typed, one text) or --app-readings (EpiDoc files' <app> readings)."""
    if readings and app_readings:
        raise CLIError("give --readings (typed readings of one text) or --app-readings (an "
                       "EpiDoc file's <app> readings), not both")
    if hide_supplied:
        raise CLIError("--hide-supplied restores supplements; readings are scored with "
                       "--readings or --app-readings alone")
    if out is not None and not (app_readings and fmt == "epidoc"):
        raise CLIError("--out writes files: with --app-readings, --output-format epidoc; "
                       "readings print a table or --json")
    if app_readings:
        if epidoc is None:
            raise CLIError("--app-readings reads EpiDoc files (TEI XML); for a typed text "
                           "give --readings 'a|b' per lacuna")
        return run_app_readings(lm, model, epidoc, request, fmt, out)
    if epidoc is not None:
        raise CLIError("an EpiDoc file's readings come from its <app> entries: use "
                       "--app-readings")
    return run_readings(lm, model, io.read_records(texts, input_file), readings, request, fmt)


def _check_printing(epidoc: bool, readings: bool, view: str, legend: bool, progress,
                    fmt: str, allow_nonstandard: bool) -> None:
    """The options of typed inputs' printing refused where they do not apply: EpiDoc files print
    their lacunae's readings, readings their combinations (a table or --json), one text or
    file at a time (no progress over batches); --allow-nonstandard is for protein models'
    sequences, not editions."""
    if not (epidoc or readings):
        return
    what = "--readings / --app-readings" if readings else "EpiDoc files"
    if view != "table":
        raise CLIError(f"--view is for typed inputs' completions; {what} print their own table")
    if legend:
        raise CLIError(f"--legend explains the completions' table; {what} print their own")
    if progress:
        raise CLIError(f"--progress shows a bar over batches of typed inputs; {what} have none")
    if fmt == "fasta":
        raise CLIError(f"--output-format fasta writes designed sequences; {what} print a table, "
                       "--json" + ("" if readings else " or epidoc / leiden"))
    if allow_nonstandard and epidoc:
        raise CLIError("--allow-nonstandard is for protein models' residues, not EpiDoc files")


def _epidoc_inputs(texts, input_file, fmt: str, hide_supplied: bool, out):
    """The EpiDoc files the inputs name (None: not EpiDoc); the EpiDoc-only options refused for
    other inputs."""
    epidoc = epigraphy.epidoc_paths(texts, input_file)
    if epidoc is None and (fmt in epidoc_cli.FORMATS or hide_supplied or out):
        raise CLIError("--output-format epidoc/leiden, --hide-supplied and --out are for EpiDoc "
                       "files (TEI XML) only")
    return epidoc


def _print_fills(job, fmt: str, view: str, long_inputs: io.LongInputs, progress, shard,
                 legend: bool = False) -> int:
    """Print every input's fill as its batch is done (rank 0); the number that failed
    (``legend``: --legend)."""
    color = io.use_color()
    shown = progress if shard.main and len(job.batches()) > 1 else False
    bar = progress_bar(total=len(job.inputs), desc="run", unit="input", enabled=shown)
    failed = n = 0
    with io.LongInputs.quiet():
        for fills in job.decoded():
            bar.clear()                      # results print on a clean line, then the bar
            long_inputs.note(any(f.result.windows for f in fills))
            for f in fills:
                n += 1
                failed += _print_fill(n, f, fmt, view, long_inputs, color, legend)
            bar.update(len(fills))
    bar.close()
    return failed


def _print_fill(n: int, f, fmt: str, view: str, long_inputs: io.LongInputs, color: bool,
                legend: bool = False) -> int:
    """One input's errors and notes on stderr, its completions on stdout; 1 if it failed."""
    rec = f.input
    f.error = long_inputs.error(f.error, f.error_field)
    if f.error is not None:
        click.echo(f"Error: input {rec.id}: {f.error}", err=True)
    for note in f.result.notes:
        if not note.startswith(WINDOWED):        # said once for all inputs (long_inputs)
            click.echo(f"note: input {rec.id}: {note}", err=True)
    if fmt == "json":
        io.json_line(f.to_json())
    elif f.error is not None:
        pass
    elif fmt == "fasta":
        io.write_fasta(rec, f.completions, f.model)
    elif view == "aligned":
        io.write_aligned(n, rec, f.completions, color)
    else:
        io.write_table(n, rec, f.completions, color, legend)
    return int(f.error is not None)
