"""infill.jobs.sharding: inputs cut round robin over ranks, results back in input order on rank 0.

Two ranks are simulated in one process: a shard whose ``gather`` hands rank 0 what every rank
computed (the real gather is torch.distributed's; 2-process runs are in
tests/bench/test_sharded_runs.py)."""
from __future__ import annotations

import pickle
from dataclasses import dataclass, field

import pytest

from infill.errors import ConfigError
from infill.parallel import Shard
from infill.jobs.sharding import over_batches, over_inputs


@dataclass(frozen=True)
class Simulated(Shard):
    board: dict = field(default_factory=dict, compare=False)

    def gather(self, obj):
        self.board[self.rank] = obj
        return [self.board[r] for r in range(self.world)] if self.main else None


class Bar:
    def __init__(self):
        self.n = 0

    def update(self, k):
        self.n += k


def test_over_inputs_splits_round_robin_and_merges_in_order():
    items = list("abcdefg")
    board, seen = {}, []

    def fn(x):
        seen.append(x)
        return x.upper()

    bar = Bar()
    assert over_inputs(items, fn, Simulated(1, 3, board=board), progress=bar) is None
    assert over_inputs(items, fn, Simulated(2, 3, board=board)) is None
    assert seen == ["b", "e", "c", "f"] and bar.n == 2
    assert over_inputs(items, fn, Simulated(0, 3, board=board)) == list("ABCDEFG")
    assert over_inputs(items, fn, Shard()) == list("ABCDEFG")          # one process


def test_over_batches_calls_once_per_rank_with_its_items():
    items = [3, 1, 4, 1, 5]
    board, calls = {}, []

    def fn(batch):
        calls.append(list(batch))
        return [10 * x for x in batch]

    assert over_batches(items, fn, Simulated(1, 2, board=board)) is None
    assert over_batches(items, fn, Simulated(0, 2, board=board)) == [30, 10, 40, 10, 50]
    assert calls == [[1, 1], [3, 4, 5]]
    assert over_batches(items[:1], fn, Simulated(1, 2, board={})) is None   # no item: no call
    assert calls[-1] == [3, 4, 5]


def test_over_batches_in_batches_of_a_size_with_a_bar():
    items = list(range(7))
    board, calls = {}, []

    def fn(batch):
        calls.append(list(batch))
        return [x * x for x in batch]

    bar = Bar()
    assert over_batches(items, fn, Simulated(1, 2, board=board), batch_size=2) is None
    assert over_batches(items, fn, Simulated(0, 2, board=board), batch_size=2,
                        progress=bar) == [x * x for x in items]
    assert calls == [[1, 3], [5], [0, 2], [4, 6]] and bar.n == 4
    calls.clear()
    assert over_batches(items, fn, Shard(), batch_size=3, progress=bar) == \
        [x * x for x in items]
    assert calls == [[0, 1, 2], [3, 4, 5], [6]] and bar.n == 11


@dataclass(frozen=True)
class Wire(Shard):
    """One rank whose gather/broadcast send objects through pickle, as torch.distributed does."""

    def gather(self, obj):
        return [pickle.loads(pickle.dumps(obj))]

    def broadcast(self, obj):
        return pickle.loads(pickle.dumps(obj))


@pytest.mark.parametrize("method", ["on_main", "everywhere"])
def test_an_error_raised_on_a_rank_keeps_its_class_message_and_fields(method):
    def fail():
        raise ConfigError("'beam_size' must be >= 1", field="beam_size", input=3, path="x.txt",
                          line=7)

    with pytest.raises(ConfigError) as info:
        getattr(Wire(), method)(fail)
    e = info.value
    assert (str(e), e.field, e.input, e.path, e.line) == \
        ("'beam_size' must be >= 1", "beam_size", 3, "x.txt", 7)
    assert e.worded(lambda f: "--" + f.replace("_", "-")) == "--beam-size must be >= 1"
