"""``infill joint``: pairwise joints (MLM, MRF-L, MRF, HCB, AG) from a masked LM (METHODS §2); the
library's joint job (:mod:`infill.jobs.joint`) does the work.

Two modes:
  infill joint --model M --data FILE --pair-scheme random -n 100 --out DIR   # metrics table
  infill joint --model M "text with ___ ___"                              # top pairs of each joint
"""
from __future__ import annotations

import click

from .errors import CLIError, InfillCommand, clean_errors
from .options import (SafePath, data_option, deprecated, device_options, examples_option,
                      field_option, json_option, model_option, no_window_option,
                      progress_option, request_args, speed_options)
from infill.data.files import ensure_dir
from infill.errors import InputError
from infill.jobs.joint import JointRequest, check_mode, joint_corpus, joint_metrics, pair_joints
from infill.lazy import LazyModule
from infill.progress import progress as progress_bar

io = LazyModule(f"{__package__}.io")      # read and printed when it runs, not for --help
json = LazyModule("json")
parallel = LazyModule("infill.parallel")
sharding = LazyModule("infill.jobs.sharding")    # .load read uncached (.module): tests replace it
metrics = LazyModule("infill.joint.metrics")


def _joint(name: str, *aliases: str, **overrides):
    return field_option(JointRequest, name, *aliases, **overrides)


def _print_pairs(res) -> None:
    """The top pairs of every joint for one text, as a table."""
    ag = res.ag
    click.echo(f"grid {res.grid[0]} x {res.grid[1]} candidates at positions {res.positions[0]}, "
               f"{res.positions[1]}; AG: {ag['iterations']} iterations, final change "
               f"{ag['change']:.2e}, objective {ag['objective'][0]:.4f} -> "
               f"{ag['objective'][-1]:.4f}")
    if "MRF-L" not in res.joints:
        click.echo("MRF-L: n/a (this model adapter exposes no raw logits)")
    for name, rows in res.joints.items():
        click.echo(f"\n{name}")
        for row in rows:
            click.echo(f"  {row['rank']}. p={row['prob']:.4f}  "
                       f"[{' | '.join(row['token_strings'])}]  {row['text']}")


@click.command("joint", cls=InfillCommand)
@click.argument("text", required=False)
@model_option
@_joint("data")
@_joint("split")
@_joint("pair_scheme")
@click.option("--scheme", "scheme_alias", type=click.Choice(("random", "contiguous")),
              default=None, hidden=True, callback=deprecated("--scheme", "--pair-scheme"))
@examples_option
@click.option("--n", "n_alias", type=int, default=None, hidden=True,
              callback=deprecated("--n", "--examples"))
@_joint("joint_size")
@_joint("ag_iterations")
@click.option("--iterations", "iterations_alias", type=int, default=None, hidden=True,
              callback=deprecated("--iterations", "--ag-iterations"))
@_joint("converged_tol")
@_joint("seed")
@_joint("pairs_per_text")
@_joint("min_tokens")
@click.option("--out", "out", type=SafePath(file_okay=False), default=None,
              help="Write joint.json, joint.md and distance.png here.")
@_joint("top_k", "-k")
@click.option("--top", "top_alias", type=int, default=None, hidden=True,
              callback=deprecated("--top", "--top-k"))
@_joint("gap")
@_joint("marker")
@_joint("batch_size")
@_joint("allow_special")
@device_options
@speed_options
@data_option
@progress_option
@no_window_option
@json_option
@clean_errors
def joint(text, model, examples, n_alias, out, top_alias, iterations_alias, scheme_alias, device,
          dtype, quantize, compile_model, data_root, progress, no_window, as_json, **params):
    """Pairwise joints (MLM, MRF-L, MRF, HCB, AG) derived from a masked LM.

    With --data: U-PPL, P-PPL, A-KL, G-KL over N seeded (sentence, pair) examples, in the layout
    of Torroba Hennigen & Kim (2023). With TEXT holding two gap tokens: the top pairs of each joint
    (--json: one JSON line). A text longer than the model's maximum length is read in the longest
    context window centred on the pair (said once on stderr; "windows" in --json); with
    --no-window, TEXT is refused and --data skips such texts.
    """
    aliases = {"examples": n_alias, "top_k": top_alias, "ag_iterations": iterations_alias,
               "pair_scheme": scheme_alias}                 # old spellings, warned of on parse
    params.update({"examples": examples}, **{k: v for k, v in aliases.items() if v is not None})
    params["examples"] = params["examples"] or None          # -n 0: all, as bench
    request = JointRequest(text=text, window=not no_window,
                           **request_args(JointRequest, params))
    check_mode(request, text=text is not None)       # before the model is loaded
    if out and text is not None:
        raise CLIError("--out writes the metrics' files of --data; with TEXT the pairs are "
                       "printed (--json: one JSON line)")
    corpus = None if text is not None else joint_corpus(model, request.data)
    if out and text is None:               # fail before the work, not after it
        ensure_dir(out, "--out folder")
    shard = parallel.current()
    lm = sharding.module.load(model, device, shard, dtype=dtype, quantize=quantize,
                              compile=compile_model)
    if text is not None:
        return _one_text(lm, model, text, request, no_window, as_json)
    _metrics(lm, model, corpus, request, data_root, out, shard, progress, no_window, as_json)


def _one_text(lm, model: str, text: str, request: JointRequest, no_window: bool,
              as_json: bool) -> None:
    """TEXT mode: the top pairs of each joint, as a table or one JSON line."""
    long_inputs = io.LongInputs(
        lm, no_window, "read in the longest context window centred on the gaps")
    for note in lm.input_notes(text):
        click.echo(f"note: {note}", err=True)
    try:
        with io.LongInputs.quiet():
            res = pair_joints(lm, text, request, name=model)
    except InputError as e:
        if e.field != "window":
            raise
        raise InputError(long_inputs.error(e.message(), e.field)) from None
    long_inputs.note(res.windows)
    if as_json:
        io.json_line(res.to_json())
    else:
        _print_pairs(res)


def _metrics(lm, model: str, corpus: str, request: JointRequest, data_root, out, shard,
             progress, no_window: bool, as_json: bool) -> None:
    """--data mode: the metrics table (or one JSON line), and the files in ``out``."""
    long_inputs = io.LongInputs(
        lm, no_window, "each pair read in the longest context window centred on it")

    def begin(examples: int, texts: int):
        if request.examples is not None and examples < request.examples and shard.main:
            click.echo(f"note: only {examples} pairs qualify ({texts} texts, "
                       f"{request.pairs_per_text} per text); using {examples}", err=True)
        return progress_bar(total=examples, desc=f"joint ({request.pair_scheme})", unit="pair",
                            enabled=progress if shard.main else False)

    with io.LongInputs.quiet():
        res = joint_metrics(lm, request, name=model, corpus=corpus, data_root=data_root,
                            shard=shard, begin=begin)
    if res is None:                        # under torchrun, rank 0 reports
        return
    long_inputs.note(res.windows, what=f"{len(res.windows)} of {len(res.result.records)} "
                                       "examples", refuse="skip them")
    if as_json:
        click.echo(json.dumps(res.to_json(), ensure_ascii=False))
        if out:
            res.write(out)
        return
    click.echo(f"{res.title}: {res.examples} examples, K={request.joint_size}, AG "
               f"{request.ag_iterations} iterations")
    click.echo(metrics.format_table(res.result.table, markdown=False))
    if "MRF-L" not in res.result.table:
        click.echo("MRF-L: n/a (this model adapter exposes no raw logits)")
    if out:
        paths = res.write(out)
        click.echo("wrote " + ", ".join(str(p) for p in paths.values()))
