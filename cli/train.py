"""``infill train``: train a small masked LM (english / greek / protein) with the shared loop."""
from __future__ import annotations

import click

from cli.errors import clean_errors
from infill.errors import ConfigError, InputError

FAMILY_DEFAULTS = {
    # family: (damage rate, learning rate)
    "english": (0.0, 1e-3),
    "greek": (0.05, 1e-3),
    "protein": (0.0, 1e-3),
}


@click.command()
@click.argument("family", type=str)
@click.argument("corpus", required=False, type=click.Path(dir_okay=False))
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False),
              help="Output directory (checkpoint, logs, final model).")
@click.option("--masking", type=click.Choice(["static", "dynamic"]), default="dynamic",
              show_default=True,
              help="static: masks drawn once per example; dynamic: re-drawn every epoch.")
@click.option("--scheme", type=click.Choice(["bert", "plain"]), default="bert", show_default=True,
              help="bert: masked inputs 80% mask / 10% random / 10% kept; plain: all mask.")
@click.option("--mask-rate", default=0.15, show_default=True, type=float)
@click.option("--damage-rate", type=float, default=None,
              help="Ithaca-style '-' damage rate (greek only; default 0.05 for greek).")
@click.option("--steps", type=int, default=None, help="Planned optimizer steps.")
@click.option("--epochs", type=float, default=None, help="Planned epochs (if --steps not given).")
@click.option("--time-budget", type=float, default=None,
              help="Stop (and save) after this many seconds.")
@click.option("--budget-clock", type=click.Choice(["wall", "cpu"]), default="wall",
              show_default=True, help="What --time-budget measures: elapsed or CPU seconds.")
@click.option("--batch-size", default=32, show_default=True, type=int)
@click.option("--lr", type=float, default=None, help="Peak learning rate [default: 1e-3].")
@click.option("--warmup", default=100, show_default=True, type=int)
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--split-seed", default=0, show_default=True, type=int,
              help="Seed of the train/validation/test split.")
@click.option("--eval-every", default=200, show_default=True, type=int)
@click.option("--checkpoint-every", default=200, show_default=True, type=int)
@click.option("--resume", is_flag=True, help="Continue from the checkpoint in --out.")
@click.option("--stop-after", type=int, default=None,
              help="End this run after this step (the schedule still plans --steps).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--layers", type=int, default=None, help="Transformer layers.")
@click.option("--hidden", type=int, default=None, help="Hidden size.")
@click.option("--heads", type=int, default=None, help="Attention heads.")
@click.option("--ff", type=int, default=None, help="Feed-forward size [default: 4 x hidden].")
@click.option("--max-length", type=int, default=None, help="Longest input in tokens.")
@click.option("--vocab-size", type=int, default=None, help="WordPiece vocabulary (english).")
@click.option("--conv-kernel", type=int, default=None,
              help="Residual convolution over this many neighbouring characters (greek; 0 = none).")
@clean_errors
def train(family, corpus, out, masking, scheme, mask_rate, damage_rate, steps, epochs, time_budget,
          budget_clock, batch_size, lr, warmup, seed, split_seed, eval_every, checkpoint_every, resume,
          stop_after, no_progress, layers, hidden, heads, ff, max_length, vocab_size, conv_kernel):
    """Train a FAMILY (english, greek, protein) masked LM on CORPUS.

    CORPUS defaults to the family's corpus in ../shared/data when it exists. The final model in
    --out loads with `infill run --model DIR` / infill.load_model(DIR).
    """
    from infill.training import FAMILIES, default_corpus, run_training
    from infill.training.common import TrainConfig

    family = family.lower()
    if family not in FAMILIES:
        raise ConfigError(f"unknown family {family!r}; choose one of {', '.join(FAMILIES)}")
    if corpus is None:
        corpus = default_corpus(family)
        if corpus is None:
            raise InputError(f"no CORPUS given and the default {family} corpus was not found")
    dflt_damage, dflt_lr = FAMILY_DEFAULTS[family]
    cfg = TrainConfig(out=out, masking=masking, scheme=scheme, mask_rate=mask_rate,
                      damage_rate=dflt_damage if damage_rate is None else damage_rate,
                      steps=steps, epochs=epochs, time_budget=time_budget, budget_clock=budget_clock,
                      batch_size=batch_size,
                      lr=dflt_lr if lr is None else lr, warmup=warmup, seed=seed,
                      split_seed=split_seed, eval_every=eval_every,
                      checkpoint_every=checkpoint_every, resume=resume, stop_after=stop_after,
                      progress=not no_progress)
    if eval_every < 1 or checkpoint_every < 1:
        raise ConfigError("--eval-every and --checkpoint-every must be >= 1")
    result = run_training(family, str(corpus), cfg, layers=layers, hidden=hidden, heads=heads,
                          ff=ff, max_length=max_length, vocab_size=vocab_size,
                          conv_kernel=conv_kernel)
    click.echo(f"trained {family} model: {result.step} steps ({result.stopped}), "
               f"val_loss {result.val_loss:.4f}, val_accuracy {result.val_accuracy:.4f}; "
               f"saved to {result.out}")
