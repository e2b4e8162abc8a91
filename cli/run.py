"""``infill run``: fill the gaps of one or more inputs and print ranked completions."""
from __future__ import annotations

import json
import sys

import click

from cli.errors import CLIError, clean_errors
from cli.options import device_options, gap_options, input_option, model_option
from infill.errors import InputError



def read_inputs(texts: tuple[str, ...], input_file) -> list[str]:
    """Inputs from the arguments, else one per non-empty line of --input FILE or stdin."""
    if texts and input_file is not None:
        raise InputError("give inputs either as arguments or with --input, not both")
    if texts:
        return list(texts)
    stream = input_file
    if stream is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise InputError("no input: give TEXT, --input FILE, or pipe lines on stdin")
        stream = sys.stdin
    lines = [line.rstrip("\n") for line in stream]
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise InputError("empty input: nothing to fill")
    return lines


def highlight_fills(text: str, fills, color: bool) -> str:
    """The filled text with each fill emphasized (searched left to right)."""
    if not color:
        return text
    out, cursor = [], 0
    for f in fills:
        at = text.find(f, cursor) if f else -1
        if at < 0:
            continue
        out.append(text[cursor:at])
        out.append(click.style(f, fg="green", bold=True))
        cursor = at + len(f)
    out.append(text[cursor:])
    return "".join(out)


def batches(items: list, size: int):
    for i in range(0, len(items), size):
        yield items[i:i + size]


@click.command()
@click.argument("texts", nargs=-1, metavar="[TEXT]...")
@model_option
@input_option()
@gap_options
@click.option("--scorer", type=click.Choice(["hcb", "standard", "scramble", "swap", "ag"]),
              default=None, help="Update rule [default: hcb; standard with --sample].")
@click.option("--order", type=click.Choice(["left-to-right", "best-to-worst"]),
              default="left-to-right", show_default=True)
@click.option("--beam", "-b", default=5, show_default=True, type=click.IntRange(min=1),
              help="Beam size (rows for --sample).")
@click.option("--top-k", "-k", default=5, show_default=True, type=click.IntRange(min=1),
              help="Completions shown per input (at most --beam).")
@click.option("--pivot", multiple=True,
              help="HCB pivot token (default: the model's mask / missing symbol); repeat once per "
                   "gap position for a per-position pivot.")
@click.option("--pivot-context", type=click.Choice(["inject", "mask"]), default="inject",
              show_default=True, help="Pivots as context (SPEC) or [MASK] context (paper's code).")
@click.option("--no-dedup", is_flag=True, help="best-to-worst: keep duplicate fills (classic algorithm).")
@click.option("--allow-special", is_flag=True, help="Let special tokens be placed in gaps.")
@click.option("--allow-nonstandard", is_flag=True,
              help="Protein models: allow non-standard residues as fills.")
@click.option("--sample", type=click.Choice(["pure", "temperature", "nucleus"]), default=None,
              help="Sampling baseline at the same budget instead of beam search.")
@click.option("--temperature", default=1.0, show_default=True, type=float)
@click.option("--top-p", default=0.9, show_default=True, type=float)
@click.option("--seed", default=0, show_default=True, type=int)
@device_options
@click.option("--batch-size", default=32, show_default=True, type=click.IntRange(min=1),
              help="Inputs decoded together (one forward pass per step for the whole batch).")
@click.option("--json", "as_json", is_flag=True, help="JSON Lines output, one object per input.")
@clean_errors
def run(texts, model, input_file, gap, marker, scorer, order, beam, top_k, pivot, pivot_context,
        no_dedup, allow_special, allow_nonstandard, sample, temperature, top_p, seed, device, dtype,
        batch_size, as_json):
    """Fill each gap marker (default ___) in TEXT with --gap tokens and rank the completions.

    \b
    infill run --gap 2 "To be, or not to ___, that is the question."
    infill run --model ./my-bert --scorer standard --order best-to-worst "The ___ sat on the mat."
    """
    import infill

    if top_k > beam:
        raise CLIError(f"--top-k ({top_k}) cannot exceed --beam ({beam})")
    inputs = read_inputs(texts, input_file)
    options = {"allow_nonstandard": True} if allow_nonstandard else {}
    lm = infill.load_model(model, device=device, dtype=dtype, **options)
    piv = None if not pivot else (pivot[0] if len(pivot) == 1 else list(pivot))
    n = 0
    for chunk in batches(inputs, batch_size):
        results = infill.fill(lm, chunk, gap=gap, scorer=scorer, order=order, beam_size=beam,
                              top_k=top_k, pivot=piv, seed=seed, marker=marker, dedup=not no_dedup,
                              pivot_context=pivot_context, allow_special=allow_special,
                              sample=sample, temperature=temperature, top_p=top_p)
        for text, comps in zip(chunk, results):
            n += 1
            if as_json:
                click.echo(json.dumps({
                    "input": text, "model": model, "scorer": scorer or ("standard" if sample else "hcb"),
                    "order": order, "beam": beam, "sample": sample, "seed": seed,
                    "completions": [{"rank": r, "text": c.text, "fills": list(c.fills),
                                     "tokens": list(c.tokens), "score": c.score}
                                    for r, c in enumerate(comps, 1)]}, ensure_ascii=False))
                continue
            click.echo(f"[{n}] {text}")
            click.echo(f"  {'rank':>4}  {'score':>10}  completion")
            for r, c in enumerate(comps, 1):
                click.echo(f"  {r:>4}  {c.score:>10.4f}  {highlight_fills(c.text, c.fills, True)}",
                           color=None)
            click.echo()
