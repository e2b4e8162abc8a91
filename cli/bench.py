"""``infill bench``: run the infilling benchmark grid and write tables and plots."""
from __future__ import annotations

import click

from .errors import InfillCommand, clean_errors
from .options import SPLITS, SafePath, allow_special_option, data_option, device_options, \
    examples_option, json_option, model_option, field_option, progress_option, seed_option, \
    speed_options
from infill.bench.methods import method_names
from infill.config import DecodeConfig
from infill.data.corpora import CORPORA, FORMATS
from infill.errors import ConfigError, MetricUnavailable


def int_list(value: str, what: str) -> list[int]:
    try:
        out = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise ConfigError(f"{what} must be comma-separated integers, got {value!r}") from None
    if not out:
        raise ConfigError(f"{what} is empty")
    return out


@click.command(cls=InfillCommand)
@click.argument("data")
@model_option
@click.option("--out", "-o", required=True, type=SafePath(file_okay=False),
              help="Output directory (results.jsonl, summary.json/.md, plots). Re-running with "
                   "the same arguments continues an interrupted run.")
@click.option("--format", "fmt", type=click.Choice(FORMATS),
              help="Format of DATA (default: from the name / file suffix).")
@click.option("--split", default="all", show_default=True,
              type=click.Choice(SPLITS),
              help="Use one part of the training split (the family's examples and split seed).")
@click.option("--family", type=click.Choice(list(CORPORA)),
              help="Training family whose examples/split --split refers to (default: the "
                   "model's training record, else DATA's name).")
@examples_option
@click.option("--gaps", default="2,3,4,5", show_default=True,
              help="Gap lengths in model tokens (one span of each length per example).")
@click.option("--methods", default="beam", show_default=True,
              help=f"Comma-separated methods: {method_names()}.")
@click.option("--beams", "beams", default="5", show_default=True,
              help="Beam sizes (comma-separated), e.g. 5,20.")
@click.option("--beam", "beams_alias", default=None, hidden=True)
@click.option("--pivot", "pivots", multiple=True,
              help="HCB pivot token (repeatable); 'all' sweeps every vocabulary entry.")
@click.option("--top-k", "-k", "top_k", default="1,5,10,20", show_default=True,
              help="k for top-k exact match (only k <= beam are reported).")
@click.option("--topk", "topk_alias", default=None, hidden=True)
@seed_option
@click.option("--batch-size", default=16, show_default=True, type=click.IntRange(min=1),
              help="Examples decoded together.")
@click.option("--bertscore-model", help="BERTScore scorer: a local HF model directory or hub id "
                                        "(column left out with a warning if it cannot load).")
@click.option("--bertscore-layers", type=click.IntRange(min=1), help="Layer of the scorer model to use.")
@allow_special_option()
@field_option(DecodeConfig, "dedup")
@device_options
@speed_options
@data_option
@click.option("--overwrite", is_flag=True, help="Discard an earlier run in --out.")
@progress_option
@json_option
@clean_errors
def bench(data, model, out, fmt, split, family, examples, gaps, methods, beams, beams_alias, pivots,
          top_k, topk_alias, seed, batch_size, bertscore_model, bertscore_layers, allow_special,
          dedup, device, dtype, quantize, compile_model, data_root, overwrite, progress,
          as_json):
    """Benchmark infilling decoders on DATA.

    DATA is a corpus name (english, greek, protein: see --data-dir), a text file (one example per
    line), a FASTA file, a JSONL file of {"text": ...}, or hf:NAME[:split][:column].
    Each example gets one random span of every gap length; every method fills the same spans.
    """
    import json
    import warnings
    from pathlib import Path

    from infill.bench import BenchConfig, run_bench

    for old, new, value in (("--beam", "--beams", beams_alias), ("--topk", "--top-k", topk_alias)):
        if value is not None:
            click.echo(f"Warning: {old} is deprecated; use {new}", err=True)
    from infill.data.files import check_text
    for p in pivots:
        check_text(p, "--pivot")
    config = BenchConfig(
        model=model, data=data, fmt=fmt, split=split, family=family, limit=examples or None,
        gaps=int_list(gaps, "--gaps"), methods=[m.strip() for m in methods.split(",") if m.strip()],
        beams=int_list(beams_alias or beams, "--beams"), pivots=list(pivots),
        ks=int_list(topk_alias or top_k, "--top-k"), seed=seed, batch_size=batch_size,
        allow_special=allow_special, dedup=dedup, bertscore_model=bertscore_model,
        bertscore_layers=bertscore_layers, device=device, dtype=dtype,
        quantize=quantize, compile=compile_model, data_root=data_root)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = run_bench(config, out, overwrite=overwrite, progress=progress)
    from infill.parallel import current
    if not current().main:                 # under torchrun, rank 0 reports
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
