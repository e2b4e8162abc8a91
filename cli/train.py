"""``infill train``: train a small masked LM (english / greek / protein) with the shared loop."""
from __future__ import annotations

import click

from .errors import InfillCommand, clean_errors
from .options import SafePath, FiniteFloat, data_option, device_options, json_option
from .status import progress_option
from infill.config import MAX_SEED
from infill.errors import InputError



@click.command(cls=InfillCommand)
@click.argument("family", type=str)
@click.argument("corpus", required=False, type=SafePath(dir_okay=False))
@click.option("--out", "-o", required=True, type=SafePath(file_okay=False),
              help="Output directory (checkpoint, logs, final model).")
@click.option("--masking", type=click.Choice(["static", "dynamic"]), default="dynamic",
              show_default=True,
              help="static: masks drawn once per example; dynamic: re-drawn every epoch.")
@click.option("--scheme", type=click.Choice(["bert", "plain"]), default="bert", show_default=True,
              help="bert: masked inputs 80% mask / 10% random / 10% kept; plain: all mask.")
@click.option("--mask-rate", default=0.15, show_default=True, type=float)
@click.option("--span", default=1, show_default=True, type=click.IntRange(min=1),
              help="Longest masked span; >1 masks contiguous spans (lengths ~ Geometric(--span-p)).")
@click.option("--span-p", default=0.2, show_default=True, type=FiniteFloat(0, 1, min_open=True),
              help="Parameter of the geometric span-length distribution (mean about 1/p).")
@click.option("--whole-word", is_flag=True,
              help="Mask whole words (all pieces of a word together; english).")
@click.option("--bucket", is_flag=True,
              help="Batch examples of similar length together (less padding, faster).")
@click.option("--damage-rate", type=float, default=None,
              help="Ithaca-style '-' damage rate (greek only; default 0.05 for greek).")
@click.option("--steps", type=click.IntRange(min=1), default=None, help="Planned optimizer steps.")
@click.option("--epochs", type=float, default=None, help="Planned epochs (if --steps not given).")
@click.option("--time-budget", type=float, default=None,
              help="Stop (and save) after this many seconds.")
@click.option("--budget-clock", type=click.Choice(["wall", "cpu"]), default="wall",
              show_default=True, help="What --time-budget measures: elapsed or CPU seconds.")
@click.option("--batch-size", default=32, show_default=True, type=click.IntRange(1, 65536))
@click.option("--lr", type=float, default=None, help="Peak learning rate [default: 1e-3].")
@click.option("--warmup", default=100, show_default=True, type=click.IntRange(min=0))
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0, MAX_SEED))
@click.option("--split-seed", default=0, show_default=True, type=click.IntRange(0, MAX_SEED),
              help="Seed of the train/validation/test split.")
@click.option("--eval-every", default=200, show_default=True, type=click.IntRange(min=1))
@click.option("--checkpoint-every", default=200, show_default=True, type=click.IntRange(min=1))
@click.option("--snapshot-every", default=0, show_default=True, type=click.IntRange(min=0),
              help="Also save the loadable model to OUT/snapshots/step<N>/ every N steps.")
@click.option("--resume", is_flag=True, help="Continue from the checkpoint in --out.")
@click.option("--stop-after", type=click.IntRange(min=0), default=None,
              help="End this run after this step (the schedule still plans --steps).")
@progress_option
@click.option("--layers", type=click.IntRange(1, 256), default=None, help="Transformer layers.")
@click.option("--hidden", type=click.IntRange(1, 16384), default=None, help="Hidden size.")
@click.option("--heads", type=click.IntRange(1, 1024), default=None, help="Attention heads.")
@click.option("--ff", type=click.IntRange(1, 65536), default=None, help="Feed-forward size [default: 4 x hidden].")
@click.option("--max-length", type=click.IntRange(1, 65536), default=None, help="Longest input in tokens.")
@click.option("--vocab-size", type=click.IntRange(1, 1_000_000), default=None, help="WordPiece vocabulary (english).")
@click.option("--conv-kernel", type=click.IntRange(0, 1023), default=None,
              help="Residual convolution over this many neighbouring characters (greek; 0 = none).")
@click.option("--words", type=click.IntRange(0, 1_000_000), default=None,
              help="Word stream over this many most frequent words (greek; Ithaca's; 0 = none).")
@click.option("--inscriptions", type=SafePath(file_okay=False, exists=True), default=None,
              help="EpiDoc folder (IOSPE) whose training split joins the corpus (greek).")
@click.option("--inscription-copies", type=click.IntRange(1, 1000), default=None,
              help="Differently packed copies of the inscriptions per epoch (greek) [default: 4].")
@click.option("--init-from", type=str, default=None,
              help="Start from this character model's weights where shapes agree (greek).")
@device_options
@data_option
@json_option
@clean_errors
def train(family, corpus, out, masking, scheme, mask_rate, span, span_p, whole_word, bucket, damage_rate, steps, epochs, time_budget,
          budget_clock, batch_size, lr, warmup, seed, split_seed, eval_every, checkpoint_every, snapshot_every, resume,
          stop_after, progress, layers, hidden, heads, ff, max_length, vocab_size, conv_kernel,
          words, inscriptions, inscription_copies, init_from, device, dtype, data_root, as_json):
    """Train a FAMILY (english, greek, protein) masked LM on CORPUS.

    CORPUS defaults to the family's named corpus under --data-dir ($INFILL_DATA, else
    ../shared/data of a checkout). The final model in --out loads with `infill run --model DIR`
    / infill.load_model(DIR) for every family.
    """
    from infill.training import default_corpus, family_class, run_training
    from infill.training.loop import TrainConfig

    family = family.lower()
    defaults = family_class(family)          # ConfigError for an unknown family
    if corpus is None:
        corpus = default_corpus(family, data_root)
        if corpus is None:
            raise InputError(f"no CORPUS given and the {family} corpus was not found: give the "
                             "file, or --data-dir DIR (or INFILL_DATA=DIR) holding the corpora")
    cfg = TrainConfig(out=out, masking=masking, scheme=scheme, mask_rate=mask_rate, span=span, span_p=span_p,
                      whole_word=whole_word, bucket=bucket,
                      damage_rate=defaults.default_damage_rate if damage_rate is None
                      else damage_rate,
                      steps=steps, epochs=epochs, time_budget=time_budget, budget_clock=budget_clock,
                      batch_size=batch_size,
                      lr=defaults.default_lr if lr is None else lr, warmup=warmup, seed=seed,
                      split_seed=split_seed, eval_every=eval_every,
                      checkpoint_every=checkpoint_every, snapshot_every=snapshot_every,
                      resume=resume, stop_after=stop_after,
                      progress=progress, device=device, dtype=dtype)
    result = run_training(family, str(corpus), cfg, layers=layers, hidden=hidden, heads=heads,
                          ff=ff, max_length=max_length, vocab_size=vocab_size,
                          conv_kernel=conv_kernel, words=words, inscriptions=inscriptions,
                          inscription_copies=inscription_copies, init_from=init_from)
    if as_json:
        import json
        from dataclasses import asdict
        click.echo(json.dumps({k: v for k, v in asdict(result).items() if k != "history"}))
        return
    click.echo(f"trained {family} model: {result.step} steps ({result.stopped}), "
               f"val_loss {result.val_loss:.4f}, val_accuracy {result.val_accuracy:.4f}; "
               f"saved to {result.out}")
