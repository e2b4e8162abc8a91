"""How every job runs over its inputs: the model loaded on this process's device, the inputs cut
round robin over the torchrun ranks (:meth:`~infill.parallel.Shard.mine`), and the results
merged back in input order on rank 0 (:func:`~infill.parallel.merge_in_order`) -- so that
``sample``, ``rescore`` and any new job shard the same way, and a single-process run is the
same code with one rank.

    lm = load("builtin:english", device="cpu")
    results = over_inputs(texts, lambda text: sample(lm, text))   # None on ranks > 0

A job whose output should come as it goes (``run``: batches printed while later ones decode)
takes :func:`in_rounds` instead: the same items per rank, gathered one round at a time.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from infill.lazy import LazyModule
from infill.parallel import Shard, current, merge_in_order

api = LazyModule("infill.api")                       # the model loaders (torch), on first use

__all__ = ["load", "over_inputs", "over_batches", "in_rounds"]

Item = TypeVar("Item")
Result = TypeVar("Result")


def load(name_or_path: str, device: str | None = None, shard: Shard | None = None, **options):
    """:func:`infill.load_model` on this rank's device (``cuda`` -> ``cuda:LOCAL_RANK`` under
    torchrun); ``options`` as there (dtype, quantize, compile, family options)."""
    shard = shard if shard is not None else current()
    return api.load_model(name_or_path, device=shard.device(device), **options)


def over_inputs(items: Sequence[Item], fn: Callable[[Item], Result], shard: Shard | None = None,
                progress=None) -> list[Result] | None:
    """``fn`` on every item, each rank taking its own items; every result on rank 0 in input
    order, None on the other ranks. ``progress``: a bar advanced once per item done here."""
    shard = shard if shard is not None else current()
    mine = []
    for i in shard.mine(len(items)):
        mine.append((i, fn(items[i])))
        if progress is not None:
            progress.update(1)
    parts = shard.gather(mine)
    return merge_in_order(parts) if shard.main else None


def over_batches(items: Sequence[Item], fn: Callable[[list[Item]], list[Result]],
                 shard: Shard | None = None, batch_size: int | None = None,
                 progress=None) -> list[Result] | None:
    """``fn`` on this rank's items together (one batched call, e.g. one scoring pass; with
    ``batch_size``, one call per that many of them), returning one result per item; every
    result on rank 0 in input order, None elsewhere. ``progress``: a bar advanced by each call's
    items."""
    shard = shard if shard is not None else current()
    mine = shard.mine(len(items))
    size = batch_size or max(len(mine), 1)
    results = []
    for start in range(0, len(mine), size):
        batch = [items[i] for i in mine[start:start + size]]
        results += fn(batch)
        if progress is not None:
            progress.update(len(batch))
    parts = shard.gather(list(zip(mine, results)))
    return merge_in_order(parts) if shard.main else None


def in_rounds(items: Sequence[Item], fn: Callable[[Item], Result],
              shard: Shard | None = None) -> Iterator[Result]:
    """``fn`` on every item, each rank taking the items :func:`over_inputs` gives it, one round
    of N items (N ranks) at a time: after each round rank 0 yields that round's results in input
    order, so output can follow the work; the other ranks yield nothing."""
    shard = shard if shard is not None else current()
    for first in range(0, len(items), shard.world):
        k = first + shard.rank
        parts = shard.gather(fn(items[k]) if k < len(items) else None)
        if shard.main:
            yield from parts[:len(items) - first]
