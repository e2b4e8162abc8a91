"""``infill bench``: run the infilling benchmark grid and write tables and plots."""
from __future__ import annotations

import warnings
from pathlib import Path

import click

from .errors import InfillCommand, clean_errors
from .options import SafePath, ListType, data_option, deprecated, device_options, \
    examples_option, field_option, json_option, model_option, progress_option, request_args, \
    seed_option, speed_options
from infill.bench.methods import method_names
from infill.bench.request import BenchRequest
from infill.data.files import check_text
from infill.errors import MetricUnavailable
from infill.lazy import LazyModule

# On first use: `infill bench --help` needs none of these.
json = LazyModule("json")
runner = LazyModule("infill.bench.runner")
parallel = LazyModule("infill.parallel")


def _field(name: str, *aliases: str, **overrides):
    return field_option(BenchRequest, name, *aliases, **overrides)


def _old(flag: str, new: str, param: str, kind: type = int):
    """A hidden option kept under its old name for one release."""
    return click.option(flag, param, type=ListType(kind), default=None, hidden=True,
                        callback=deprecated(flag, new))


@click.command(cls=InfillCommand)
@click.argument("data")
@model_option
@click.option("--out", "-o", required=True, type=SafePath(file_okay=False),
              help="Output directory (results.jsonl, summary.json/.md, plots). Re-running with "
                   "the same arguments continues an interrupted run.")
@_field("format")
@_field("split")
@_field("family")
@examples_option
@_field("gap_lengths")
@_old("--gaps", "--gap-lengths", "gaps_alias")
@_field("methods", help=f"Comma-separated methods: {method_names()}.")
@_field("beam_size", "--beam", "-b")
@_old("--beams", "--beam-size", "beams_alias")
@_field("pivot", multiple=True, type=str, default=())
@_field("top_k", "-k")
@_old("--topk", "--top-k", "topk_alias")
@seed_option
@_field("batch_size")
@_field("bertscore_model")
@_field("bertscore_layers")
@_field("allow_special")
@_field("dedup")
@device_options
@speed_options
@data_option
@click.option("--overwrite", is_flag=True, help="Discard an earlier run in --out.")
@progress_option
@json_option
@clean_errors
def bench(out, beams_alias, topk_alias, gaps_alias, examples, compile_model, overwrite, progress,
          as_json, **params):
    """Benchmark infilling decoders on DATA.

    DATA is a corpus name (english, greek, protein: see --data-dir), a text file (one example per
    line), a FASTA file, a JSONL file of {"text": ...}, or hf:NAME[:split][:column].
    Each example gets one random span of every gap length; every method fills the same spans.
    """
    for p in params["pivot"]:
        check_text(p, "--pivot")
    args = request_args(BenchRequest, params)
    args.update(examples=examples or None, beam_size=beams_alias or args["beam_size"],
                top_k=topk_alias or args["top_k"], compile=compile_model,
                gap_lengths=gaps_alias or args["gap_lengths"])
    config = BenchRequest(**args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = runner.run_bench(config, out, overwrite=overwrite, progress=progress)
    if not parallel.current().main:                 # under torchrun, rank 0 reports
        return
    for w in caught:
        if issubclass(w.category, MetricUnavailable):
            click.echo(f"Warning: {w.message}", err=True)
    if as_json:
        click.echo(json.dumps(summary, ensure_ascii=False))
        return
    c = summary["counts"]
    click.echo(f"{c['rows']} rows; examples used per gap length: "
               + ", ".join(f"n={n}: {c['used'][n]} (skipped {c['skipped'][n]})" for n in c["used"]))
    click.echo(f"Wrote {out}/" + ", ".join(["results.jsonl", "summary.json", "summary.md",
                                            *summary["plots"]]))
    click.echo("")
    click.echo((Path(out) / "summary.md").read_text(encoding="utf-8"))
