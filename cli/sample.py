"""``infill sample`` (Metropolis–Hastings from MLM energies) and ``infill rescore`` (rank
completions by energy). SPEC §3."""
from __future__ import annotations

import json
from pathlib import Path

import click

from cli.errors import clean_errors
from cli.options import device_options, gap_options, input_option, model_option
from cli.run import highlight_fills, read_inputs

_ENERGY = click.Choice(["local", "raw"])


def _sample_json(text, model, res, top) -> dict:
    def row(s):
        return {"text": s.text, "fills": list(s.fills), "tokens": list(s.tokens),
                "energy": s.energy, "count": s.count}
    return {"input": text, "model": model, **res.settings,
            "acceptance_rate": res.acceptance_rate, "novel_rate": res.novel_rate,
            "proposals": res.proposals, "steps": res.steps, "distinct": len(res.samples),
            "temperatures": res.temperatures, "block_sizes": res.block_sizes,
            "energy_trace": res.energy_trace.tolist(), "best": row(res.best),
            "samples": [dict(rank=r, **row(s)) for r, s in enumerate(res.samples[:top], 1)]}


@click.command()
@click.argument("texts", nargs=-1, metavar="[TEXT]...")
@model_option
@input_option()
@gap_options
@click.option("--energy", type=_ENERGY, default="local", show_default=True,
              help="local: -pseudo-log-likelihood; raw: -sum of unnormalized logits.")
@click.option("--proposal-temperature", default=1.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True), help="Temper the masked-conditional proposal.")
@click.option("--top-p", default=None, type=click.FloatRange(0, 1, min_open=True),
              help="Nucleus-truncate the proposal (its exact probabilities enter the MH ratio).")
@click.option("--block", default=1, show_default=True, type=click.IntRange(min=1),
              help="Positions proposed together from one pass (block MH).")
@click.option("--block-schedule", type=click.Choice(["anneal", "fixed"]), default="anneal",
              show_default=True, help="anneal: block size falls linearly from --block to 1.")
@click.option("--temperature", default=1.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True), help="Target temperature at epoch 0.")
@click.option("--anneal", default=0.0, show_default=True, type=click.FloatRange(min=0),
              help="Lower the target temperature by this much per epoch (e.g. 0.02).")
@click.option("--min-temperature", default=0.01, show_default=True,
              type=click.FloatRange(min=0, min_open=True), help="Floor of the annealed temperature.")
@click.option("--epochs", default=10, show_default=True, type=click.IntRange(min=1),
              help="Sweeps over the gap positions.")
@click.option("--chains", default=4, show_default=True, type=click.IntRange(min=1),
              help="Chains run in parallel (one batch).")
@click.option("--burn-in", default=0, show_default=True, type=click.IntRange(min=0),
              help="Epochs not counted in the visit counts.")
@click.option("--order", type=click.Choice(["left-to-right", "random"]), default="left-to-right",
              show_default=True, help="Order in which a sweep visits the gap positions.")
@click.option("--init", type=click.Choice(["greedy", "random"]), default="greedy",
              show_default=True, help="Warm start of every chain.")
@click.option("--gibbs", is_flag=True, help="Degenerate Gibbs baseline: always accept.")
@click.option("--allow-special", is_flag=True, help="Let special tokens be placed in gaps.")
@click.option("--top", "-k", default=10, show_default=True, type=click.IntRange(min=1),
              help="Distinct samples shown per input (most visited first).")
@click.option("--seed", default=0, show_default=True, type=int)
@device_options
@click.option("--json", "as_json", is_flag=True, help="JSON Lines output, one object per input.")
@clean_errors
def sample(texts, model, input_file, gap, marker, energy, proposal_temperature, top_p, block,
           block_schedule, temperature, anneal, min_temperature, epochs, chains, burn_in, order,
           init, gibbs, allow_special, top, seed, device, dtype, as_json):
    """Sample fills for each gap marker in TEXT by Metropolis–Hastings on the model's energy.

    Prints the distinct samples, most visited first, with their energy (lower is better) and
    visit counts; --anneal turns the sampler into a mode seeker.

    \b
    infill sample --gap 2 "To be, or not to ___, that is the question."
    infill sample --anneal 0.02 --epochs 50 --chains 8 --json "The ___ sat on the mat."
    """
    import infill
    from infill.mcmc import sample as mh_sample

    inputs = read_inputs(texts, input_file)
    lm = infill.load_model(model, device=device, dtype=dtype)
    for n, text in enumerate(inputs, 1):
        res = mh_sample(lm, text, gap=gap, energy=energy,
                        proposal_temperature=proposal_temperature, top_p=top_p, block=block,
                        anneal=anneal, epochs=epochs, chains=chains, seed=seed, marker=marker,
                        block_schedule=block_schedule, temperature=temperature,
                        min_temperature=min_temperature, burn_in=burn_in, order=order,
                        init=init, gibbs=gibbs, allow_special=allow_special)
        if as_json:
            click.echo(json.dumps(_sample_json(text, model, res, top), ensure_ascii=False))
            continue
        kind = "Gibbs (always accept)" if gibbs else "MH"
        click.echo(f"[{n}] {text}")
        click.echo(f"  {kind}, energy {energy}: {chains} chains x {epochs} epochs, "
                   f"acceptance {res.acceptance_rate:.3f}, novel {res.novel_rate:.3f}, "
                   f"{len(res.samples)} distinct")
        click.echo(f"  {'rank':>4}  {'visits':>6}  {'energy':>10}  sample")
        for r, s in enumerate(res.samples[:top], 1):
            click.echo(f"  {r:>4}  {s.count:>6}  {s.energy:>10.4f}  "
                       f"{highlight_fills(s.text, s.fills, True)}", color=None)
        if anneal > 0 or res.best.count == 0:
            click.echo(f"  best  {res.best.count:>6}  {res.best.energy:>10.4f}  "
                       f"{highlight_fills(res.best.text, res.best.fills, True)}", color=None)
        click.echo()


@click.command()
@click.argument("items", nargs=-1, metavar="[FILE | TEXT...]")
@model_option
@input_option("completion")
@click.option("--energy", type=_ENERGY, default="local", show_default=True,
              help="local: -pseudo-log-likelihood; raw: -sum of unnormalized logits.")
@device_options
@click.option("--json", "as_json", is_flag=True, help="One JSON object (the ranking).")
@clean_errors
def rescore(items, model, input_file, energy, device, dtype, as_json):
    """Rank complete texts (e.g. the completions of a beam) by energy, lowest first.

    Give the texts as arguments, one per line in a FILE (a single argument naming an existing
    file, or --input), or on stdin.

    \b
    infill rescore "the cat sat on the mat." "the dog sat on the mat."
    infill run --json -k 5 "the ___ sat" | jq -r '.completions[].text' | infill rescore
    """
    import infill
    from infill.mcmc import rescore as energies_of

    if len(items) == 1 and input_file is None and Path(items[0]).is_file():
        input_file = Path(items[0]).read_text(encoding="utf-8").splitlines()
        items = ()
    texts = read_inputs(tuple(items), input_file)
    lm = infill.load_model(model, device=device, dtype=dtype)
    es = energies_of(lm, texts, energy=energy)
    lengths = [len([t for t in lm.tokenize(x) if t not in lm.special_ids]) for x in texts]
    order = sorted(range(len(texts)), key=lambda i: (es[i], i))
    rows = [{"rank": r, "text": texts[i], "energy": es[i], "tokens": lengths[i],
             "energy_per_token": es[i] / max(lengths[i], 1), "input_index": i}
            for r, i in enumerate(order, 1)]
    if as_json:
        click.echo(json.dumps({"model": model, "energy": energy, "ranking": rows},
                              ensure_ascii=False))
        return
    click.echo(f"  {'rank':>4}  {'energy':>10}  {'E/token':>8}  text")
    for row in rows:
        click.echo(f"  {row['rank']:>4}  {row['energy']:>10.4f}  {row['energy_per_token']:>8.4f}  "
                   f"{row['text']}")
