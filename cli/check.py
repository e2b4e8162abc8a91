"""``infill check``: flag doubtful readings -- the written letters, word pieces or residues much
less probable than an alternative in their context (the library's check job,
:func:`infill.jobs.check.check`, does the work)."""
from __future__ import annotations

import click

from .errors import CLIError, InfillCommand, clean_errors
from .options import (SafePath, device_options, field_option, input_option, json_option,
                      model_option, no_window_option, request_args)
from .ranks import finish
from .status import progress_option
from infill.check_request import CheckRequest
from infill.lazy import LazyModule
from infill.progress import progress as progress_bar

# What runs the check, on first use (`infill check --help` needs none of it). ``sharding.load``
# is read uncached (``.module``): tests replace it.
io = LazyModule(f"{__package__}.io")
show = LazyModule(f"{__package__}.check_output")
parallel = LazyModule("infill.parallel")
sharding = LazyModule("infill.jobs.sharding")
checking = LazyModule("infill.checking")
epigraphy = LazyModule("infill.epigraphy")
check_job = LazyModule("infill.jobs.check")


def _check(name: str, *aliases: str, **overrides):
    return field_option(CheckRequest, name, *aliases, **overrides)


@click.command(cls=InfillCommand)
@click.argument("texts", nargs=-1, metavar="[TEXT|FILE]...")
@model_option
@input_option()
@_check("threshold", "-t")
@_check("marker")
@click.option("--view", type=click.Choice(["both", "aligned", "table"]), default="both",
              show_default=True, help="aligned: the text with the flagged positions marked; "
                                      "table: every checked position; both.")
@click.option("--scores", "scores_path", default=None, type=SafePath(dir_okay=False),
              help="Write the substitution table (a row per position, a column per residue or "
                   "letter: log p(mut) - log p(written), each masked alone) as TSV, or CSV for "
                   "a .csv name. Protein and character models.")
@click.option("--plot", "plot_path", default=None, type=SafePath(dir_okay=False),
              help="Draw the substitution table as a heat map (PNG; FILE-ID.png per input "
                   "when there are several). Protein and character models.")
@click.option("--out", "out", default=None, type=SafePath(file_okay=False),
              help="EpiDoc files: write each edition into this folder with a <note "
                   "type=\"doubtful\"> after the <lb/> of each line with flagged letters.")
@device_options
@no_window_option
@json_option
@progress_option
@clean_errors
def check(texts, model, input_file, view, scores_path, plot_path, out, device, dtype,
          no_window, as_json, progress, **params):
    """Flag doubtful readings: written tokens much less probable than an alternative.

    Each preserved letter, word piece or residue of TEXT is masked alone (the text's gaps stay
    masked and are not checked) and the model's probability of what is written is compared
    with its most probable alternative; a position is flagged when the alternative is at least
    e^THRESHOLD times as probable. Inputs: arguments, --input FILE or stdin (one per line, or
    FASTA records), or EpiDoc files (the stone's letters are checked, the editors' supplements
    read as context; a note per inscription line). Protein models also give ESM's
    masked-marginal score of every substitution (--scores, --plot, and --json).

    \b
    infill check "To be, or not to be, that is the questoin."
    infill check --model builtin:greek "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῖος"
    infill check --model builtin:protein --view aligned MAKRVYFLAHGGQVQGVGFRYFTQKRASEYGLTGWCRNTDNNKVEGEAQGDEDALKKLLKDIDEGPRSARWVKLDQEERDLVQDENDFAVRR
    """
    request = CheckRequest(window=not no_window, **request_args(CheckRequest, params))
    for path, flag in ((scores_path, "--scores"), (plot_path, "--plot")):
        show.check_writable(path, flag)
    shard = parallel.current()
    lm = sharding.module.load(model, device, shard, dtype=dtype)
    table = bool(scores_path or plot_path)
    if table:
        _need_table(lm, model)
    checks = _run(lm, model, texts, input_file, request, table, shard, progress, out)
    if checks is None:
        return finish(shard, None, 0, verb="checked")
    failed = _print(checks, view, as_json, no_window, lm)
    _write_files([c for c in checks if c.error is None], scores_path, plot_path, out)
    finish(shard, failed, len(checks), verb="checked")


def _write_files(done, scores_path, plot_path, out_dir) -> None:
    """--scores, --plot and --out for the inputs checked."""
    if done and scores_path:
        show.write_scores(scores_path, done)
    for c in done if plot_path else ():
        show.write_plot(show.per_input(plot_path, c.id, len(done) > 1), c)
    for c in done if out_dir else ():
        show.write_edition(out_dir, c)


def _need_table(lm, name: str) -> None:
    if checking.substitution_alphabet(lm) is None:
        raise CLIError(f"--scores and --plot need a model of residues or characters (a "
                       f"substitution table per position); {name} reads {lm.unit}")


def _run(lm, model: str, texts, input_file, request: CheckRequest, table: bool, shard,
         progress, out_dir=None):
    """Every input's check: EpiDoc files by edition, else the inputs read as ``run`` reads
    them."""
    files = epigraphy.epidoc_paths(list(texts), input_file)
    if files is not None:
        return check_job.check_editions(lm, files, request, name=model, table=table) \
            if shard.main else None
    if out_dir is not None:
        raise CLIError("--out is for EpiDoc files (TEI XML) only")
    records = io.read_records(tuple(texts), input_file)
    shown = progress if shard.main and len(records) > 1 else False
    with progress_bar(total=len(shard.mine(len(records))), desc="check", unit="input",
                      enabled=shown) as bar, io.LongInputs.quiet():
        return check_job.check(lm, records, request, name=model, table=table or None,
                               shard=shard, progress=bar)


def _print(checks, view: str, as_json: bool, no_window: bool, lm) -> int:
    """Errors and notes on stderr, each input's check on stdout; the number that failed."""
    long_inputs = io.LongInputs(lm, no_window, "each token checked in the longest context "
                                               "window centred on it")
    long_inputs.note(any(c.result is not None and c.result.windowed for c in checks))
    color, failed = io.use_color(), 0
    for n, c in enumerate(checks, 1):
        for note in c.notes:
            click.echo(f"note: input {c.id}: {note}", err=True)
        if c.error is not None:
            failed += 1
            c.error = long_inputs.error(c.error, c.error_field)
            click.echo(f"Error: input {c.id}: {c.error}", err=True)
        if as_json:
            io.json_line(c.to_json())
        elif c.error is None:
            show.write_check(n, c, view, color)
    return failed
