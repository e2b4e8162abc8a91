"""``infill bench``: run the infilling benchmark grid and write tables and plots."""
from __future__ import annotations

import click

from cli.errors import clean_errors
from infill.errors import ConfigError


def int_list(value: str, what: str) -> list[int]:
    try:
        out = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise ConfigError(f"{what} must be comma-separated integers, got {value!r}") from None
    if not out:
        raise ConfigError(f"{what} is empty")
    return out


@click.command()
@click.argument("data")
@click.option("--model", "-m", default="builtin:english", show_default=True,
              help="builtin:NAME, a local model directory / checkpoint, or a hub id.")
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False),
              help="Output directory (results.jsonl, summary.json/.md, plots). Re-running with "
                   "the same arguments continues an interrupted run.")
@click.option("--format", "fmt", type=click.Choice(["lines", "fasta", "jsonl", "greek"]),
              help="Format of DATA (default: from the name / file suffix).")
@click.option("--split", default="all", show_default=True,
              type=click.Choice(["all", "train", "validation", "test"]),
              help="Use one part of the training split (the family's examples and split seed).")
@click.option("--family", type=click.Choice(["english", "greek", "protein"]),
              help="Training family whose examples/split --split refers to (default: DATA's name).")
@click.option("--examples", "-n", "limit", default=200, show_default=True, type=int,
              help="Examples drawn at random (seeded) from DATA; 0 = all.")
@click.option("--gaps", default="2,3,4,5", show_default=True,
              help="Gap lengths in model tokens (one span of each length per example).")
@click.option("--methods", default="beam", show_default=True,
              help="Comma-separated methods or groups: hcb-l2r, hcb-b2w, standard-l2r, "
                   "standard-b2w, scramble-l2r/b2w, swap-l2r/b2w, pure, tempT, nucleusP; "
                   "groups beam, sampling, ablations, all.")
@click.option("--beam", "beams", default="5", show_default=True,
              help="Beam sizes (comma-separated), e.g. 5,20.")
@click.option("--pivot", "pivots", multiple=True,
              help="HCB pivot token (repeatable); 'all' sweeps every vocabulary entry.")
@click.option("--topk", default="1,5,10,20", show_default=True,
              help="k for top-k exact match (only k <= beam are reported).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--batch-size", default=16, show_default=True, type=click.IntRange(min=1),
              help="Examples decoded together.")
@click.option("--bertscore-model", help="BERTScore scorer: a local HF model directory or hub id "
                                        "(column left out with a warning if it cannot load).")
@click.option("--bertscore-layers", type=int, help="Layer of the scorer model to use.")
@click.option("--allow-special", is_flag=True, help="Let special tokens fill gaps.")
@click.option("--no-dedup", is_flag=True, help="Best-to-worst without merging equal completions.")
@click.option("--device", help="cpu, cuda, cuda:1, ... (default: CUDA when available).")
@click.option("--overwrite", is_flag=True, help="Discard an earlier run in --out.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@clean_errors
def bench(data, model, out, fmt, split, family, limit, gaps, methods, beams, pivots, topk, seed,
          batch_size, bertscore_model, bertscore_layers, allow_special, no_dedup, device,
          overwrite, no_progress):
    """Benchmark infilling decoders on DATA.

    DATA is a corpus name (english, greek, protein: ../shared/data), a text file (one example
    per line), a FASTA file, a JSONL file of {"text": ...}, or hf:NAME[:split][:column].
    Each example gets one random span of every gap length; every method fills the same spans.
    """
    import warnings

    from infill.bench import BenchConfig, run_bench

    config = BenchConfig(
        model=model, data=data, fmt=fmt, split=split, family=family, limit=limit or None,
        gaps=int_list(gaps, "--gaps"), methods=[m.strip() for m in methods.split(",") if m.strip()],
        beams=int_list(beams, "--beam"), pivots=list(pivots), ks=int_list(topk, "--topk"),
        seed=seed, batch_size=batch_size, allow_special=allow_special, dedup=not no_dedup,
        bertscore_model=bertscore_model, bertscore_layers=bertscore_layers, device=device)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = run_bench(config, out, overwrite=overwrite, progress=not no_progress)
    for w in caught:
        if "BERTScore" in str(w.message):
            click.echo(f"Warning: {w.message}", err=True)
    c = summary["counts"]
    click.echo(f"{c['rows']} rows; examples used per gap length: "
               + ", ".join(f"n={n}: {c['used'][n]} (skipped {c['skipped'][n]})" for n in c["used"]))
    click.echo(f"Wrote {out}/results.jsonl, summary.json, summary.md, "
               + ", ".join(summary["plots"]))
    click.echo("")
    from pathlib import Path
    click.echo((Path(out) / "summary.md").read_text(encoding="utf-8"))
