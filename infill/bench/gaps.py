"""Which spans a benchmark hides: one gap per example and gap length, seeded.

Gap selection (:func:`select_examples`), as in the HCB beam-search paper: for every example and
every gap length n, a contiguous span of n model tokens chosen uniformly among the spans made only
of ordinary (non-special) tokens, with a random generator seeded by (seed, example index, n) -- so
the span of an example does not depend on how many examples or which other gap lengths are run,
and every method sees exactly the same inputs. Examples with fewer than n ordinary tokens are
skipped and counted. An example longer than the model's ``max_length`` keeps a context window
centred on its gap (:func:`infill.decoding.windows.truncate`).
"""
from __future__ import annotations

import random
import zlib
from dataclasses import dataclass

from infill.decoding.windows import body_bounds as _body_bounds
from infill.decoding.windows import truncate
from infill.errors import InputError
from infill.models.base import MaskedLM


@dataclass(frozen=True)
class Example:
    """One benchmark input: ``ids`` (specials included) with the gold span at ``start:start+n``."""

    example_id: int   # index of the text in the loaded corpus
    n: int            # gap length in model tokens
    ids: tuple[int, ...]
    start: int

    @property
    def gold(self) -> tuple[int, ...]:
        return self.ids[self.start:self.start + self.n]

    def masked(self, mask_id: int) -> list[int]:
        ids = list(self.ids)
        ids[self.start:self.start + self.n] = [mask_id] * self.n
        return ids

    def filled(self, tokens) -> list[int]:
        ids = list(self.ids)
        ids[self.start:self.start + self.n] = list(tokens)
        return ids


# ---- which examples -----------------------------------------------------------------------------
def pick_indices(candidates: list[int], limit: int | None, seed: int) -> list[int]:
    """A seeded random subset of ``limit`` indices (all when limit is None), in corpus order."""
    if limit is None or limit >= len(candidates):
        return list(candidates)
    rng = random.Random(derive_seed(seed, "examples"))
    return sorted(rng.sample(list(candidates), limit))


def tokenize_texts(model: MaskedLM, texts: list[str], indices: list[int]
                   ) -> dict[int, list[int] | None]:
    """{index: model ids with specials}; None where the model rejects the text."""
    out: dict[int, list[int] | None] = {}
    for i in indices:
        try:
            out[i] = list(model.tokenize(texts[i]))
        except InputError:
            out[i] = None
    return out


# ---- gap selection ----------------------------------------------------------------------------
def derive_seed(*parts) -> int:
    """A 32-bit seed from any parts (stable across runs and platforms)."""
    return zlib.crc32("|".join(map(str, parts)).encode())


def ordinary_positions(model: MaskedLM, ids: list[int]) -> list[bool]:
    """True where a gap may go: not a special token, not mask/pad."""
    bad = set(model.special_ids) | {model.mask_id, model.pad_id}
    return [i not in bad for i in ids]


def body_bounds(model: MaskedLM, ids: list[int]) -> tuple[int, int]:
    """(lo, hi): ids[:lo] and ids[hi:] are the leading / trailing special tokens."""
    return _body_bounds(ids, set(model.special_ids) | {model.mask_id, model.pad_id})


def choose_span(ok: list[bool], n: int, rng: random.Random) -> int | None:
    """Start of a uniformly chosen run of n positions that are all ``ok``; None if there is none."""
    starts, run = [], 0
    for i, good in enumerate(ok):
        run = run + 1 if good else 0
        if run >= n:
            starts.append(i - n + 1)
    return rng.choice(starts) if starts else None


def select_examples(model: MaskedLM, token_lists: dict[int, list[int] | None], gaps: list[int],
                    seed: int) -> tuple[list[Example], dict[int, int]]:
    """One gap of each length in ``gaps`` per example; returns (examples, skipped count per n).

    ``token_lists`` maps a corpus index to its model ids (specials included), or None for a text
    the model rejected (skipped for every n, and counted). Output order: gap length, then index.
    """
    examples: dict[int, list[Example]] = {n: [] for n in gaps}
    skipped = {n: 0 for n in gaps}
    for idx in sorted(token_lists):
        ids = token_lists[idx]
        if ids is None:
            for n in gaps:
                skipped[n] += 1
            continue
        ok = ordinary_positions(model, ids)
        lo, hi = body_bounds(model, ids)
        for n in gaps:
            rng = random.Random(derive_seed(seed, idx, n))
            start = choose_span(ok, n, rng)
            if start is None:
                skipped[n] += 1
                continue
            window, wstart = truncate(ids, start, n, lo, hi, model.max_length)
            examples[n].append(Example(idx, n, tuple(window), wstart))
    return [e for n in gaps for e in examples[n]], skipped
