"""``infill joint``: pairwise joints (MLM, MRF-L, MRF, HCB, AG) from a masked LM (SPEC §2).

Two modes:
  infill joint --model M --data FILE --scheme random --n 100 --out DIR   # metrics table
  infill joint --model M "text with ___ ___"                              # top pairs of each joint
"""
from __future__ import annotations

import math
import sys

import click

from cli.errors import clean_errors
from infill.errors import InputError

DEFAULT_CORPUS = {"builtin:english": "english", "builtin:greek": "greek"}
ALIASES = ("english", "greek")


def _corpus(model_name: str, data: str | None) -> str:
    """--data as given, else the builtin model's own corpus alias."""
    if data:
        return data
    if model_name in DEFAULT_CORPUS:
        return DEFAULT_CORPUS[model_name]
    raise InputError("give --data FILE (one sentence per line) or a text with two ___ gaps")


def _inspect(model, text: str, gap: int, marker: str, joint_size: int, iterations: int,
             top: int, allow_special: bool) -> None:
    """Print the ``top`` pairs of every joint for one input with two gap tokens."""
    from infill.joint import build_joints, pair_tables

    enc = model.encode(text, gap=gap, marker=marker)
    positions = enc.positions
    if len(positions) != 2:
        raise InputError(f"the joint needs exactly two gap tokens (e.g. two single-token gaps "
                         f"'{marker} {marker}'), this input has {len(positions)}")
    a, b = positions
    t = pair_tables(model, enc.input_ids, a, b, joint_size=joint_size,
                    allow_special=allow_special)
    joints, info = build_joints(t, iterations=iterations)
    click.echo(f"grid {len(t.cand_a)} x {len(t.cand_b)} candidates at positions {a}, {b}; "
               f"AG: {info.iterations} iterations, final change {info.change:.2e}, "
               f"objective {info.objective[0]:.4f} -> {info.objective[-1]:.4f}")
    if "MRF-L" not in joints:
        click.echo("MRF-L: n/a (this model adapter exposes no raw logits)")
    for name, lj in joints.items():
        click.echo(f"\n{name}")
        flat = lj.reshape(-1)
        best = flat.topk(min(top, flat.numel()))
        nb = lj.shape[1]
        for rank, (lp, idx) in enumerate(zip(best.values.tolist(), best.indices.tolist()), 1):
            wa, wb = int(t.cand_a[idx // nb]), int(t.cand_b[idx % nb])
            by_pos = {a: wa, b: wb}
            filled, fills = model.render(enc, [[by_pos[p] for p in g] for g in enc.gaps])
            click.echo(f"  {rank}. p={math.exp(lp):.4f}  "
                       f"[{model.id_to_token(wa)} | {model.id_to_token(wb)}]  {filled}")


@click.command("joint")
@click.argument("text", required=False)
@click.option("--model", "model_name", default="builtin:english", show_default=True,
              help="builtin:NAME, model directory, or hub id.")
@click.option("--data", default=None,
              help="Text file (one sentence per line) or corpus alias english|greek "
                   "(../shared/data; the default for builtin:english/greek).")
@click.option("--split", type=click.Choice(["all", "train", "validation", "test"]), default=None,
              help="With a corpus the model was trained on: which split of the training "
                   "family's examples to use (default: test for an alias, all for a file).")
@click.option("--scheme", type=click.Choice(["random", "contiguous"]), default="random",
              show_default=True, help="Which position pairs to evaluate.")
@click.option("--n", "n", type=int, default=100, show_default=True, help="Number of examples.")
@click.option("--joint-size", type=int, default=50, show_default=True,
              help="K: candidates per position (top-K of its marginal; the whole vocabulary "
                   "when it is at most K).")
@click.option("--iterations", type=int, default=50, show_default=True,
              help="Arnold-Gokhale iterations.")
@click.option("--converged-tol", type=float, default=None,
              help="Also report AG*: AG run until its total-variation change is <= this "
                   "(at most 20000 iterations).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for the pairs.")
@click.option("--pairs-per-text", type=int, default=1, show_default=True,
              help="Distinct position pairs drawn from each sentence.")
@click.option("--min-tokens", type=int, default=4, show_default=True,
              help="Skip lines with fewer (non-special) tokens.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Write joint.json, joint.md and distance.png here.")
@click.option("--top", type=int, default=5, show_default=True, help="Pairs shown per joint "
              "(text mode).")
@click.option("--gap", type=int, default=1, show_default=True,
              help="Tokens per gap marker (text mode): '___ ___' with 1, or '___' with 2.")
@click.option("--marker", default="___", show_default=True, help="Gap marker (text mode).")
@click.option("--batch-size", type=int, default=128, show_default=True,
              help="Rows per forward pass.")
@click.option("--allow-special", is_flag=True, help="Let special tokens be candidates.")
@click.option("--device", default=None, help="cpu, cuda, ... (default: CUDA when available).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@clean_errors
def joint(text, model_name, data, split, scheme, n, joint_size, iterations, converged_tol, seed,
          pairs_per_text, min_tokens, out_dir, top, gap, marker, batch_size, allow_special, device,
          no_progress):
    """Pairwise joints (MLM, MRF-L, MRF, HCB, AG) derived from a masked LM.

    With --data: U-PPL, P-PPL, A-KL, G-KL over N seeded (sentence, pair) examples, in the layout
    of Torroba Hennigen & Kim (2023). With TEXT holding two gap tokens: the top pairs of each joint.
    """
    from infill.errors import ConfigError
    from infill.models import load_model

    for opt, v in (("--n", n), ("--joint-size", joint_size), ("--iterations", iterations),
                   ("--top", top), ("--batch-size", batch_size),
                   ("--pairs-per-text", pairs_per_text)):
        if v < 1:
            raise ConfigError(f"{opt} must be at least 1, got {v}")
    if text is not None and data is not None:
        raise ConfigError("give either TEXT or --data, not both")
    corpus = None if text is not None else _corpus(model_name, data)
    model = load_model(model_name, device=device)
    if text is not None:
        _inspect(model, text, gap, marker, joint_size, iterations, top, allow_special)
        return

    from tqdm import tqdm

    from infill.joint_metrics import evaluate, format_table, held_out, make_pairs, write_outputs

    if split is None:
        split = "test" if corpus in ALIASES else "all"
    texts = held_out(model_name, model, corpus, split)
    examples = make_pairs(model, texts, n, scheme=scheme, seed=seed, min_tokens=min_tokens,
                          per_text=pairs_per_text)
    if len(examples) < n:
        click.echo(f"note: only {len(examples)} pairs qualify ({len(texts)} texts, "
                   f"{pairs_per_text} per text); using {len(examples)}", err=True)
    with tqdm(total=len(examples), desc=f"joint ({scheme})", unit="ex", disable=no_progress,
              file=sys.stderr) as bar:
        result = evaluate(model, examples, joint_size=joint_size, iterations=iterations,
                          batch_size=batch_size, allow_special=allow_special,
                          progress=bar.update, converged_tol=converged_tol)
    result.settings.update({"model": model_name, "data": corpus, "split": split,
                            "scheme": scheme, "seed": seed, "min_tokens": min_tokens,
                            "pairs_per_text": pairs_per_text,
                            "converged_tol": converged_tol})
    title = f"{model_name}, {scheme} pairs ({corpus}, {split})"
    click.echo(f"{title}: {len(examples)} examples, K={joint_size}, AG {iterations} iterations")
    click.echo(format_table(result.table, markdown=False))
    if "MRF-L" not in result.table:
        click.echo("MRF-L: n/a (this model adapter exposes no raw logits)")
    if out_dir:
        paths = write_outputs(result, out_dir, title)
        click.echo("wrote " + ", ".join(str(p) for p in paths.values()))
