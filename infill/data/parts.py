"""The parts of a split -- train, validation, test -- and how a collection is split into them: a
seeded permutation of its items (:func:`split_indices`), or of its documents' names
(:func:`split_documents`). ``infill train`` records its split by these; :mod:`infill.data.splits`
rebuilds a trained model's held-out data, :mod:`infill.data.epidoc_corpus` splits an EpiDoc
folder by inscription.
"""
from __future__ import annotations

from infill.errors import InputError
from infill.lazy import LazyModule

np = LazyModule("numpy")        # on first use: the command line's options read PARTS without numpy

__all__ = ["PARTS", "SPLITS", "split_documents", "split_indices"]

PARTS = ("train", "validation", "test")
SPLITS = ("all", *PARTS)
"""What a held-out option takes: one part of the split, or all the data (a file's, unsplit)."""
_SPLIT_STREAM = 7_919  # salt of the split permutation's random stream (fixed: splits are records)


def split_indices(n: int, seed: int = 0, val_fraction: float = 0.05,
                  test_fraction: float = 0.05) -> dict[str, list[int]]:
    """Deterministic train/validation/test split of ``n`` examples (seeded permutation)."""
    perm = np.random.default_rng([seed, _SPLIT_STREAM]).permutation(n).tolist()
    n_val = max(1, int(round(n * val_fraction)))
    n_test = int(round(n * test_fraction))
    if n - n_val - n_test < 1:
        raise InputError(f"corpus too small: {n} examples cannot be split into train/validation/test")
    return {"validation": sorted(perm[:n_val]), "test": sorted(perm[n_val:n_val + n_test]),
            "train": sorted(perm[n_val + n_test:])}


def split_documents(names: "list[str]", seed: int = 0, val_fraction: float = 0.1,
                    test_fraction: float = 0.1) -> dict[str, list[str]]:
    """Split whole documents (e.g. IOSPE inscriptions, by file name) into train/validation/test:
    :func:`split_indices` over the sorted, de-duplicated names, so a split depends only on the set
    of names and the seed. Every example drawn from one document stays in that document's part.
    IOSPE uses the defaults (seed 0, 80/10/10) for training, tuning and the README's test table."""
    ordered = sorted(set(names))
    parts = split_indices(len(ordered), seed, val_fraction, test_fraction)
    return {part: [ordered[i] for i in idx] for part, idx in parts.items()}
