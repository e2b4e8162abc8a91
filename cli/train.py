"""``infill train``: train a small masked LM (english / greek / latin / protein) with the shared loop.

Its options are the fields of :class:`~infill.training.request.TrainRequest` and
:class:`~infill.training.request.ModelOptions` (``field_option``); ``--progress``, ``--device``
and ``--dtype`` are the options every command shares, with the same names as the fields.
"""
from __future__ import annotations

from dataclasses import asdict

import click

from .errors import InfillCommand, clean_errors
from .options import SafePath, data_option, field_option, json_option, request_args
from .status import progress_option
from infill.errors import InputError
from infill.lazy import LazyModule
from infill.training import default_corpus, run_training, train_request
from infill.training.request import ModelOptions, TrainRequest

json = LazyModule("json")                       # on first use: --help needs neither
corpora = LazyModule("infill.data.corpora")

CLI = {
    "out": dict(aliases=("-o",), type=SafePath(file_okay=False), required=True, default=None),
    "progress": progress_option,      # device and dtype: the fields' own (bf16 is autocast here)
    # plain numbers: the request's rules word the error (the help shows no range)
    "mask_rate": dict(type=float), "epochs": dict(type=float), "time_budget": dict(type=float),
    # None: the family's default (infill.training.train_request)
    "damage_rate": dict(type=float, default=None), "lr": dict(type=float, default=None),
    "inscriptions": dict(type=SafePath(file_okay=False, exists=True),
                         multiple=True),  # several folders: the flag repeated (none: ())
}
"""Where a flag is not the field's plain ``field_option``: its own click settings, a shared
option, or None (made with another)."""


def _option(request, name: str):
    how = CLI.get(name, {})
    if not isinstance(how, dict):
        return how
    how = dict(how)
    return field_option(request, name, *how.pop("aliases", ()), **how)


def train_options(fn):
    """Every field of both requests as an option, in their order."""
    options = [_option(TrainRequest, n) for n in TrainRequest.fields()] \
        + [_option(ModelOptions, n) for n in ModelOptions.fields()]
    for option in reversed([o for o in options if o is not None]):
        fn = option(fn)
    return fn


@click.command(cls=InfillCommand)
@click.argument("family", type=str)
@click.argument("corpus", required=False, type=SafePath(dir_okay=False))
@train_options
@data_option
@json_option
@clean_errors
def train(family, corpus, data_root, as_json, **params):
    """Train a FAMILY (english, greek, latin, protein) masked LM on CORPUS.

    CORPUS defaults to the family's named corpus under --data-dir ($INFILL_DATA, else
    ../shared/data of a checkout). The final model in --out loads with `infill run --model DIR`
    / infill.load_model(DIR) for every family.
    """
    family = family.lower()
    request = train_request(family, **request_args(TrainRequest, params))
    model = ModelOptions(**request_args(ModelOptions, params))
    if corpus is None:
        corpus = default_corpus(family, data_root)
        if corpus is None:
            if family in corpora.CORPORA and corpora.data_root(data_root) is not None:
                corpora.resolve_corpus(family, data_root)   # raises: which file is missing, how
            raise InputError(f"no CORPUS given and the {family} corpus was not found: give the "
                             "file, or --data-dir DIR (or INFILL_DATA=DIR) holding the corpora; "
                             f"{corpora.corpus_hint(family)}")
    result = run_training(family, corpus if isinstance(corpus, tuple) else str(corpus), request,
                          model)
    if as_json:
        click.echo(json.dumps({k: v for k, v in asdict(result).items() if k != "history"}))
        return
    click.echo(f"trained {family} model: {result.step} steps ({result.stopped}), "
               f"val_loss {result.val_loss:.4f}, val_accuracy {result.val_accuracy:.4f}; "
               f"saved to {result.out}")
