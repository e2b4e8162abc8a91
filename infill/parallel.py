"""Runs sharded over processes with torch.distributed (started by ``torchrun``).

Under ``torchrun --nproc-per-node N`` (or ``--nnodes``/rendezvous for several machines) every
process is one *rank*. Work is cut into units in a fixed order (the batches a single-process run
would make); rank r takes units r, r + N, r + 2N, ... -- so every unit is computed exactly as in
a single-process run, whatever N is. Results travel to rank 0 over torch.distributed
(``gather``), never through files, so several machines need no shared filesystem; rank 0 merges
them in the single-process order and is the only rank that prints or writes summaries. Without
torchrun (no ``WORLD_SIZE`` in the environment) everything is one rank and nothing is
initialized.

The process group uses gloo on CPU and NCCL when the run is on CUDA; each rank then uses its
own GPU (``cuda:LOCAL_RANK``).
"""
from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from infill.errors import ConfigError, InfillError
from infill.lazy import LazyModule, torch

dist = LazyModule("torch.distributed")

__all__ = ["Shard", "current", "exit_process"]


@dataclass(frozen=True)
class Shard:
    """This process's place in the run: ``rank`` of ``world`` (``local_rank`` on its machine)."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        """Rank 0 prints, merges and writes summaries."""
        return self.rank == 0

    @property
    def active(self) -> bool:
        return self.world > 1

    def mine(self, n_units: int) -> list[int]:
        """The unit indices this rank computes (round robin over the fixed order)."""
        return list(range(self.rank, n_units, self.world))

    def owns(self, unit: int) -> bool:
        return unit % self.world == self.rank

    def device(self, device: str | None) -> str | None:
        """Each rank on its own GPU: ``cuda`` (or the default, when CUDA is there) becomes
        ``cuda:LOCAL_RANK``; CPU stays CPU."""
        if not self.active:
            return device
        if device in (None, "cuda") and torch.cuda.is_available():
            return f"cuda:{self.local_rank}"
        if device is not None and device.startswith("cuda:") and self.world > 1:
            raise ConfigError("under torchrun each rank picks its GPU (cuda:LOCAL_RANK); "
                              "pass 'device' cuda, not a fixed cuda:N", field="device")
        return device

    def gather(self, obj) -> list | None:
        """Every rank's ``obj`` on rank 0 (in rank order); None on the others."""
        if not self.active:
            return [obj]
        out = [None] * self.world if self.main else None
        dist.gather_object(obj, out, dst=0)
        return out

    def broadcast(self, obj):
        """Rank 0's ``obj`` on every rank."""
        if not self.active:
            return obj
        box = [obj]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def on_main(self, fn):
        """Run ``fn`` on rank 0 only; an infill error there is raised on every rank (instead of
        leaving the others waiting); returns ``fn``'s result on rank 0, None elsewhere."""
        result, failure = None, None
        if self.main:
            try:
                result = fn()
            except InfillError as e:
                failure = e                 # pickled with its fields (InfillError.__reduce__)
        failure = self.broadcast(failure)
        if failure is not None:
            raise failure
        return result

    def everywhere(self, fn):
        """Run ``fn`` on every rank; an infill error on any rank (the lowest failing one) is raised
        on every rank (instead of leaving the others waiting); returns ``fn``'s result."""
        result, failure = None, None
        try:
            result = fn()
        except InfillError as e:
            failure = e
        failures = self.gather(failure)
        failure = self.broadcast(next((f for f in failures if f is not None), None)
                                 if self.main else None)
        if failure is not None:
            raise failure
        return result

    def barrier(self) -> None:
        if self.active:
                dist.barrier()


_CURRENT: Shard | None = None


def current() -> Shard:
    """This process's shard; initializes the process group once when run under torchrun."""
    global _CURRENT
    if _CURRENT is not None:
        return _CURRENT
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    if world <= 1:
        _CURRENT = Shard()
        return _CURRENT
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if not dist.is_initialized():
        backend = "nccl" if torch.cuda.is_available() and os.environ.get("INFILL_DIST_BACKEND",
                                                                          "") != "gloo" else "gloo"
        if backend == "nccl":
            torch.cuda.set_device(local)
        dist.init_process_group(backend=backend)
        atexit.register(_finish)
    _CURRENT = Shard(rank, world, local)
    return _CURRENT


def _finish() -> None:
    """Every rank tears the group down together (after a barrier)."""
    if not dist.is_initialized():
        return
    try:
        dist.barrier()
    except Exception:            # a peer already gone (it failed): nothing left to wait for
        pass
    dist.destroy_process_group()


def exit_process(code: int) -> None:
    """End the process with ``code``. Under torchrun: tear the group down, flush, and leave
    without the interpreter's C++ teardown -- a library that keeps a reference to the group
    (transformers does, once a model is loaded) keeps gloo's threads alive past
    ``destroy_process_group``, and destroying them at interpreter exit can abort the process
    ("terminate called without an active exception") after all its work is done."""
    if _CURRENT is None or not _CURRENT.active:
        sys.exit(code)
    try:
        _finish()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)


def merge_in_order(parts: Sequence[Sequence[tuple[int, object]]]) -> list:
    """Results tagged with their unit index, from every rank -> one list in unit order."""
    tagged = sorted(((u, x) for part in parts for u, x in part), key=lambda ux: ux[0])
    return [x for _, x in tagged]
