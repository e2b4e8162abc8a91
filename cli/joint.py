"""``infill joint``: pairwise joints (MLM, MRF-L, MRF, HCB, AG) from a masked LM (SPEC §2).

Two modes:
  infill joint --model M --data FILE --scheme random --n 100 --out DIR   # metrics table
  infill joint --model M "text with ___ ___"                              # top pairs of each joint
"""
from __future__ import annotations

import math
import sys

import click

from .errors import InfillCommand, clean_errors
from .io import LongInputs, json_line
from .options import (SPLITS, FiniteFloat, SafePath, allow_special_option, data_option,
                      device_options, examples_option, json_option, model_option,
                      no_window_option, progress_option, seed_option, speed_options)
from infill.errors import InputError
from infill.joint.constructions import AG_MAX_ITERATIONS



def _corpus(model_name: str, data: str | None) -> str:
    """--data as given, else the named corpus of the family the model was trained on (its
    ``infill train`` record: every builtin model, any ``train --out`` folder)."""
    if data:
        return data
    from infill.data.corpora import CORPORA
    from infill.data.splits import training_record

    family = training_record(model_name).get("family")
    if family in CORPORA:
        return family
    raise InputError("give --data FILE (one sentence per line) or a text with two ___ gaps")


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _inspect(model, model_name: str, text: str, gap: int, marker: str, joint_size: int,
             iterations: int, top: int, allow_special: bool, long_inputs: LongInputs,
             as_json: bool) -> None:
    """The ``top`` pairs of every joint for one input with two gap tokens: a table, or one JSON
    line (--json)."""
    from infill.joint import JOINT_NAMES, build_joints, pair_tables

    enc = model.encode(text, gap=gap, marker=marker)
    for note in enc.notes:
        click.echo(f"note: {note}", err=True)
    positions = enc.positions
    if len(positions) != 2:
        raise InputError(f"the joint needs exactly two gap tokens (e.g. two single-token gaps "
                         f"'{marker} {marker}'), this input has {len(positions)}")
    a, b = positions
    try:
        with LongInputs.quiet():
            t = pair_tables(model, enc.input_ids, a, b, joint_size=joint_size,
                            allow_special=allow_special, window=long_inputs.window)
    except InputError as e:
        raise InputError(long_inputs.error(str(e).splitlines()[0])) from None
    windows = [] if t.window is None else \
        [{"start": t.window[0], "end": t.window[1], "gaps": list(range(len(enc.gaps)))}]
    long_inputs.note(windows)
    joints, info = build_joints(t, iterations=iterations)
    tops = {}
    for name, lj in joints.items():
        flat = lj.reshape(-1)
        best = flat.topk(min(top, flat.numel()))
        nb = lj.shape[1]
        rows = []
        for rank, (lp, idx) in enumerate(zip(best.values.tolist(), best.indices.tolist()), 1):
            wa, wb = int(t.cand_a[idx // nb]), int(t.cand_b[idx % nb])
            r = model.render(enc, enc.split([wa, wb]))
            rows.append({"rank": rank, "text": r.text, "fills": list(r.fills),
                         "tokens": [wa, wb],
                         "token_strings": [model.id_to_token(wa), model.id_to_token(wb)],
                         "prob": math.exp(lp), "logp": _finite(lp)})
        tops[name] = rows
    if as_json:
        json_line({"input": text, "model": model_name, "gap": gap, "positions": [a, b],
                   "grid": [len(t.cand_a), len(t.cand_b)], "joint_size": joint_size,
                   "ag": {"iterations": info.iterations, "change": _finite(info.change),
                          "objective": [_finite(info.objective[0]),
                                        _finite(info.objective[-1])]},
                   "joints": {name: tops.get(name) for name in JOINT_NAMES},
                   "windows": windows, "error": None})
        return
    click.echo(f"grid {len(t.cand_a)} x {len(t.cand_b)} candidates at positions {a}, {b}; "
               f"AG: {info.iterations} iterations, final change {info.change:.2e}, "
               f"objective {info.objective[0]:.4f} -> {info.objective[-1]:.4f}")
    if "MRF-L" not in joints:
        click.echo("MRF-L: n/a (this model adapter exposes no raw logits)")
    for name, rows in tops.items():
        click.echo(f"\n{name}")
        for row in rows:
            click.echo(f"  {row['rank']}. p={row['prob']:.4f}  "
                       f"[{' | '.join(row['token_strings'])}]  {row['text']}")


@click.command("joint", cls=InfillCommand)
@click.argument("text", required=False)
@model_option
@click.option("--data", default=None,
              help="Text file (one sentence per line) or corpus name english|greek|protein "
                   "(the default for the builtin models).")
@click.option("--split", type=click.Choice(SPLITS), default=None,
              help="With a corpus the model was trained on: which split of the training "
                   "family's examples to use (default: test for a corpus name, all for a file).")
@click.option("--scheme", type=click.Choice(["random", "contiguous"]), default="random",
              show_default=True, help="Which position pairs to evaluate.")
@examples_option
@click.option("--n", "n_alias", type=int, default=None, hidden=True)
@click.option("--joint-size", type=click.IntRange(min=1), default=50, show_default=True,
              help="K: candidates per position (top-K of its marginal; the whole vocabulary "
                   "when it is at most K).")
@click.option("--iterations", type=click.IntRange(1, AG_MAX_ITERATIONS), default=50,
              show_default=True, help="Arnold-Gokhale iterations.")
@click.option("--converged-tol", type=FiniteFloat(min=0, min_open=True), default=None,
              help="Also report AG*: AG run until its total-variation change is <= this "
                   f"(at most {AG_MAX_ITERATIONS:,} iterations).")
@seed_option
@click.option("--pairs-per-text", type=click.IntRange(min=1), default=1, show_default=True,
              help="Distinct position pairs drawn from each sentence.")
@click.option("--min-tokens", type=click.IntRange(min=2), default=4, show_default=True,
              help="Skip lines with fewer (non-special) tokens.")
@click.option("--out", "out", type=SafePath(file_okay=False), default=None,
              help="Write joint.json, joint.md and distance.png here.")
@click.option("--top-k", "-k", "top_k", type=click.IntRange(min=1), default=5, show_default=True,
              help="Pairs shown per joint (TEXT mode).")
@click.option("--top", "top_alias", type=int, default=None, hidden=True)
@click.option("--gap", type=click.IntRange(min=1), default=1, show_default=True,
              help="Tokens per gap marker (TEXT mode): '___ ___' with 1, or '___' with 2.")
@click.option("--marker", default="___", show_default=True, help="Gap marker (TEXT mode).")
@click.option("--batch-size", type=click.IntRange(min=1), default=128, show_default=True,
              help="Rows per forward pass.")
@allow_special_option("Let special tokens be candidates.")
@device_options
@speed_options
@data_option
@progress_option
@no_window_option
@json_option
@clean_errors
def joint(text, model, data, split, scheme, examples, n_alias, joint_size, iterations,
          converged_tol, seed, pairs_per_text, min_tokens, out, top_k, top_alias, gap, marker,
          batch_size, allow_special, device, dtype, quantize, compile_model, data_root, progress,
          no_window, as_json):
    """Pairwise joints (MLM, MRF-L, MRF, HCB, AG) derived from a masked LM.

    With --data: U-PPL, P-PPL, A-KL, G-KL over N seeded (sentence, pair) examples, in the layout
    of Torroba Hennigen & Kim (2023). With TEXT holding two gap tokens: the top pairs of each joint
    (--json: one JSON line). A text longer than the model's maximum length is read in the longest
    context window centred on the pair (said once on stderr; "windows" in --json); with
    --no-window, TEXT is refused and --data skips such texts.
    """
    model_name = model
    for old, new, value in (("--n", "--examples", n_alias), ("--top", "--top-k", top_alias)):
        if value is not None:
            click.echo(f"Warning: {old} is deprecated; use {new}", err=True)
    n = n_alias if n_alias is not None else examples
    top = top_alias if top_alias is not None else top_k
    out_dir = out
    from infill.errors import ConfigError
    from infill.models import load_model

    if n < 1:
        raise ConfigError("--examples must be at least 1")
    if text is not None:
        from infill.data.files import check_text
        check_text(text, "TEXT")
    if text is not None and data is not None:
        raise ConfigError("give either TEXT or --data, not both")
    corpus = None if text is not None else _corpus(model_name, data)
    if out_dir and text is None:           # fail before the work, not after it
        from infill.data.files import ensure_dir
        ensure_dir(out_dir, "--out folder")
    from infill.parallel import current
    shard = current()
    model = load_model(model_name, device=shard.device(device), dtype=dtype, quantize=quantize,
                       compile=compile_model)
    if text is not None:
        _inspect(model, model_name, text, gap, marker, joint_size, iterations, top, allow_special,
                 LongInputs(model, no_window, "read in the longest context window centred on "
                                             "the gaps"), as_json)
        return

    from infill.joint.metrics import evaluate_joints, format_table, held_out, make_pairs, \
        write_outputs

    if split is None:
        from infill.data.corpora import CORPORA
        split = "test" if corpus in CORPORA else "all"
    texts = held_out(model_name, model, corpus, split, data_root)
    long_inputs = LongInputs(model, no_window, "each pair read in the longest context window "
                                               "centred on it")
    examples = make_pairs(model, texts, n, scheme=scheme, seed=seed, min_tokens=min_tokens,
                          per_text=pairs_per_text, window=long_inputs.window)
    if len(examples) < n and shard.main:
        click.echo(f"note: only {len(examples)} pairs qualify ({len(texts)} texts, "
                   f"{pairs_per_text} per text); using {len(examples)}", err=True)
    from infill.progress import progress as progress_bar
    with progress_bar(total=len(examples), desc=f"joint ({scheme})", unit="pair",
                      enabled=progress if shard.main else False) as bar, LongInputs.quiet():
        result = evaluate_joints(model, examples, joint_size=joint_size, iterations=iterations,
                          batch_size=batch_size, allow_special=allow_special,
                          progress=bar.update, converged_tol=converged_tol, shard=shard,
                          window=long_inputs.window)
    if result is None:                     # under torchrun, rank 0 reports
        return
    windows = [{"line": rec["line"], "a": rec["a"], "b": rec["b"], "start": rec["window"][0],
                "end": rec["window"][1]} for rec in result.records if rec["window"] is not None]
    long_inputs.note(windows, what=f"{len(windows)} of {len(result.records)} examples",
                     refuse="skip them")
    result.settings.update({"model": model_name, "data": corpus, "split": split,
                            "scheme": scheme, "seed": seed, "min_tokens": min_tokens,
                            "pairs_per_text": pairs_per_text,
                            "converged_tol": converged_tol})
    title = f"{model_name}, {scheme} pairs ({corpus}, {split})"
    if as_json:
        import json
        data = result.to_json()
        data.pop("records")
        click.echo(json.dumps({"title": title, **data, "windows": windows}, ensure_ascii=False))
        if out_dir:
            write_outputs(result, out_dir, title)
        return
    click.echo(f"{title}: {len(examples)} examples, K={joint_size}, AG {iterations} iterations")
    click.echo(format_table(result.table, markdown=False))
    if "MRF-L" not in result.table:
        click.echo("MRF-L: n/a (this model adapter exposes no raw logits)")
    if out_dir:
        paths = write_outputs(result, out_dir, title)
        click.echo("wrote " + ", ".join(str(p) for p in paths.values()))
