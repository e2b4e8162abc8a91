"""``infill sample`` (Metropolis–Hastings from MLM energies) and ``infill rescore`` (rank
completions by energy). METHODS §3."""
from __future__ import annotations

import click

from .errors import InfillCommand, clean_errors
from .status import progress_option, say
from .options import (deprecated, device_options, field_option, gap_options, input_option,
                      json_option, model_option, no_window_option, read_aliases, request_args,
                      seed_option, speed_options, stack, temperature_type)
from .ranks import finish
from infill.lazy import LazyModule
from infill.progress import follow, progress as progress_bar
from infill.requests import MAX_SWEEPS, RescoreRequest, SampleRequest

io = LazyModule(f"{__package__}.io")      # read and printed when it runs, not for --help
defaults = LazyModule("infill.filling.defaults")
parallel = LazyModule("infill.parallel")
sharding = LazyModule("infill.jobs.sharding")    # .load read uncached (.module): tests replace it
sample_job = LazyModule("infill.jobs.sample")
rescore_job = LazyModule("infill.jobs.rescore")

ALIASES = {"temperature_alias": "target_temperature", "order_alias": "sweep_order",
           "epochs_alias": "sweeps", "top_alias": "top_k"}
"""The hidden old spellings of sample's options -> the parameter each sets."""

run_options = stack(device_options, speed_options, no_window_option, json_option,
                    progress_option, clean_errors)
"""The options of how both commands run and print, last on the command line."""


def _styled(s, color: bool) -> str:
    if not color or not s.spans:
        return s.text
    out, cursor = [], 0
    for a, b in s.spans:
        out += [s.text[cursor:a], click.style(s.text[a:b], fg="green", bold=True)]
        cursor = b
    return "".join(out) + s.text[cursor:]


@click.command(cls=InfillCommand)
@click.argument("texts", nargs=-1, metavar="[TEXT]...")
@model_option
@input_option()
@gap_options
@field_option(SampleRequest, "energy")
@field_option(SampleRequest, "proposal_temperature")
@field_option(SampleRequest, "top_p")
@field_option(SampleRequest, "block")
@field_option(SampleRequest, "block_schedule")
@field_option(SampleRequest, "target_temperature")
@click.option("--temperature", "temperature_alias", default=None, hidden=True,
              type=temperature_type(), callback=deprecated("--temperature", "--target-temperature"))
@field_option(SampleRequest, "anneal")
@field_option(SampleRequest, "min_temperature")
@field_option(SampleRequest, "sweeps")
@click.option("--epochs", "epochs_alias", default=None, hidden=True,
              type=click.IntRange(1, MAX_SWEEPS), callback=deprecated("--epochs", "--sweeps"))
@field_option(SampleRequest, "chains")
@field_option(SampleRequest, "burn_in")
@field_option(SampleRequest, "sweep_order")
# --sweep-order's former name, still read without a warning for now (scripts use it)
@click.option("--order", "order_alias", default=None, hidden=True,
              type=click.Choice(SampleRequest.rules("sweep_order").names()))
@field_option(SampleRequest, "init")
@field_option(SampleRequest, "gibbs")
@field_option(SampleRequest, "allow_special")
@click.option("--top-k", "-k", "top_k", default=10, show_default=True, type=click.IntRange(min=1),
              help="Distinct samples shown per input (lowest energy first).")
@click.option("--top", "top_alias", default=None, hidden=True, type=click.IntRange(min=1),
              callback=deprecated("--top", "--top-k"))
@seed_option
@run_options
def sample(texts, model, input_file, gap, marker, device, dtype, quantize, compile_model,
           no_window, as_json, progress, **params):
    """Sample fills for each gap marker in TEXT by Metropolis–Hastings on the model's energy.

    Prints the distinct samples, lowest energy (best) first, with their energy and
    visit counts; --anneal turns the sampler into a mode seeker. An input longer than the
    model's maximum length is sampled in the longest context window centred on its gaps (said
    once on stderr; "windows" in --json). An input that cannot be sampled is reported and the
    others go on (exit code 2 at the end).

    \b
    infill sample --chains 2 --sweeps 5 "To be, or not to ___, that is the question."
    infill sample --anneal 0.2 --sweeps 5 --json "Friends, Romans, countrymen, lend me your ___"
    """
    params = read_aliases(params, ALIASES)
    opts = SampleRequest(**request_args(SampleRequest, params))
    shard = parallel.current()
    records = io.read_records(texts, input_file)
    lm = sharding.module.load(model, device, shard, dtype=dtype, quantize=quantize,
                              compile=compile_model)
    gap, gap_note = defaults.fixed_gap(gap, lm)
    if gap_note and shard.main:
        say(gap_note)
    long_inputs = io.LongInputs(
        lm, no_window, "sampled in the longest context window centred on the gaps")
    results = _sampled(lm, model, records, opts, gap, marker, long_inputs, shard, progress)
    failed = (_print_samples(results, opts, params["top_k"], as_json, long_inputs)
              if shard.main else None)
    finish(shard, failed, len(records), verb="sampled")


def _sampled(lm, model: str, records, opts: SampleRequest, gap: int, marker: str,
             long_inputs: io.LongInputs, shard, progress) -> list | None:
    """Every input's samples (rank 0; None on the others), with a bar over the inputs and one
    over the sweeps of the input being sampled (it can take minutes) where ``progress``."""
    shown = progress if shard.main else False
    with progress_bar(total=len(shard.mine(len(records))), desc="sample", unit="input",
                      enabled=shown) as bar, \
            progress_bar(total=opts.sweeps, desc="sweeps", unit="sweep", enabled=shown,
                         leave=False) as sweeps, io.LongInputs.quiet():
        return sample_job.sample_inputs(lm, records, opts, gap=gap, marker=marker,
                                        window=long_inputs.window, name=model, shard=shard,
                                        progress=bar, on_sweep=follow(sweeps))


def _print_samples(results: list, opts: SampleRequest, top: int, as_json: bool,
                   long_inputs: io.LongInputs) -> int:
    """Rank 0 prints every input's samples in input order; the number that failed."""
    long_inputs.note(any(s.error is None and s.result.windows for s in results))
    color = io.use_color()
    for n, s in enumerate(results, 1):
        s.error = long_inputs.error(s.error, s.error_field)
        _print_sample(n, s, opts, top, as_json, color)
    return sum(s.error is not None for s in results)


def _print_sample(n: int, s, opts: SampleRequest, top: int, as_json: bool, color: bool) -> None:
    """One input's notes and error on stderr; its samples as a table or a JSON line."""
    rec, res = s.input, s.result
    for note in s.notes:
        click.echo(f"note: input {rec.id}: {note}", err=True)
    if s.error is not None:
        click.echo(f"Error: input {rec.id}: {s.error}", err=True)
    if as_json:
        io.json_line(s.to_json(top))
    if as_json or s.error is not None:
        return
    kind = "Gibbs (always accept)" if opts.gibbs else "MH"
    click.echo(f"[{n}] {rec.header or rec.text}")
    click.echo(f"  {kind}, energy {opts.energy}: {opts.chains} chains x {opts.sweeps} sweeps, "
               f"acceptance {res.acceptance_rate:.3f}, novel {res.novel_rate:.3f}, "
               f"{len(res.samples)} distinct")
    click.echo(f"  {'rank':>4}  {'energy':>10}  {'visits':>6}  sample")
    for r, smp in enumerate(res.samples[:top], 1):
        click.echo(f"  {r:>4}  {smp.energy:>10.4f}  {smp.count:>6}  {_styled(smp, color)}",
                   color=color)
    if opts.anneal > 0 or res.best.count == 0:
        click.echo(f"  best  {res.best.energy:>10.4f}  {res.best.count:>6}  "
                   f"{_styled(res.best, color)}", color=color)
    click.echo()


@click.command(cls=InfillCommand)
@click.argument("texts", nargs=-1, metavar="[TEXT]...")
@model_option
@input_option("completion")
@field_option(RescoreRequest, "energy")
@click.option("--top-k", "-k", "top_k", default=None, type=click.IntRange(min=1),
              help="Show only the k lowest-energy texts [default: all].")
@run_options
def rescore(texts, model, input_file, energy, top_k, device, dtype, quantize, compile_model,
            no_window, as_json, progress):
    """Rank complete texts (e.g. the completions of a beam) by energy, lowest first.

    Give the texts as arguments, one per line with --input FILE, or on stdin. A text the model
    cannot score (empty, or nothing but special tokens) is reported and left out of the
    ranking (exit code 2 at the end). A text longer than the model's maximum length scores each
    token in the longest context window centred on it (said once on stderr; "windows" in
    --json).

    \b
    infill rescore "Now is the winter of our discontent" "Now is the winter of our approach"
    infill run --json -k 5 "Now is the winter of our ___" | jq -r '.completions[].text' | infill rescore
    """
    shard = parallel.current()
    records = io.read_records(tuple(texts), input_file, "text")
    lm = sharding.module.load(model, device, shard, dtype=dtype, quantize=quantize,
                              compile=compile_model)
    long_inputs = io.LongInputs(
        lm, no_window, "each token scored in the longest context window centred on it")
    shown = progress if shard.main and len(records) > 1 else False
    with progress_bar(total=len(shard.mine(len(records))), desc="rescore", unit="text",
                      enabled=shown) as bar, io.LongInputs.quiet():
        ranking = rescore_job.rescore_inputs(lm, records, energy=energy,
                                             window=long_inputs.window, name=model,
                                             shard=shard, progress=bar)
    failed = _print_ranking(ranking, top_k, as_json, long_inputs) if shard.main else None
    finish(shard, failed, len(records), noun="text", verb="scored")


def _print_ranking(ranking, top_k: int | None, as_json: bool,
                   long_inputs: io.LongInputs) -> int:
    """Rank 0: the texts' notes and errors on stderr, the ranking (``top_k`` rows; None: all) as
    a table or JSON lines; the number of texts that could not be scored."""
    long_inputs.note(ranking.windowed)
    for t in ranking.texts:
        for note in t.notes:
            click.echo(f"note: text {t.id}: {note}", err=True)
        t.scored.error = long_inputs.error(t.scored.error, t.scored.error_field)
    for t in ranking.failed:
        click.echo(f"Error: text {t.id}: {t.error}", err=True)
    if as_json:
        for row in ranking.to_json(top_k):
            io.json_line(row)
    else:
        click.echo(f"  {'rank':>4}  {'energy':>10}  {'E/token':>8}  text")
        for row in ranking.top(top_k):
            click.echo(f"  {row['rank']:>4}  {row['energy']:>10.4f}  "
                       f"{row['energy_per_token']:>8.4f}  {row['text']}")
    return len(ranking.failed)
