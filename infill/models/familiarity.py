"""How far an input lies from what a small model knows: a measured signal and its recorded
threshold, so that a fill of an input the model has never seen the like of says so.

The signal (:func:`score`) is the mean log-probability per known residue (token) of the input
under the model, each position masked once: the known positions are split into ``stride``
deterministic groups (position ``i`` in group ``i % stride``; ``stride`` 7 masks about 14% of them
at a time, as in training), each group masked together with the input's own gaps, and every
known position scored once from its group's row. It is a pseudo-log-likelihood in ``stride``
forward rows instead of one row per position. Inputs longer than the model's window are scored
window by window.

The threshold lives beside the checkpoint in ``familiarity.json`` (:data:`FILE`), written by
:func:`calibrate` from the model's own validation split: the 1st percentile of the validation
sequences' scores (each with a 5-residue gap, as a fill has one). Only a checkpoint with such a
file does this (builtin:protein; the file records how it was measured). At run time the
adapter's :meth:`~infill.models.base.MaskedLM.encode` adds :func:`note` to the encoding's notes,
which reach the result's ``notes`` (JSON) and ``infill run``'s stderr once per input.

    python benchmarks/protein_familiarity.py builtin:protein ../shared/data/protein/hypf.fa \
        [--write]     # recompute (and rewrite) data/models/protein/familiarity.json
"""
from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

from infill.data.files import read_json
from infill.errors import ModelLoadError
from infill.lazy import LazyModule, torch

np = LazyModule("numpy")

__all__ = ["FILE", "Familiarity", "calibrate", "load", "note", "score"]

FILE = "familiarity.json"
STRIDE = 7
MIN_KNOWN = 16
"""Fewer known residues than this: no verdict (too little to judge)."""


@dataclass
class Familiarity:
    """A model's recorded familiarity threshold (``familiarity.json``)."""

    model: str                 # how notes name the model (builtin:protein)
    knows: str                 # what it was trained on, in a few words
    checkpoint: str            # the file it belongs to (the threshold applies to no other)
    threshold: float           # mean log-probability per known residue, nats
    percentile: float          # of the validation scores that the threshold is (1.0)
    stride: int = STRIDE
    min_known: int = MIN_KNOWN
    measured: dict = field(default_factory=dict)   # how, and the distribution's numbers
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "_cache"}


def load(checkpoint: str | Path) -> Familiarity | None:
    """The threshold recorded beside ``checkpoint`` (a file), or None when there is none or it
    belongs to another file; a malformed one is a :class:`ModelLoadError` naming it."""
    path = Path(checkpoint)
    f = path.parent / FILE
    if not path.is_file() or not f.is_file():
        return None
    data = read_json(f, "familiarity record", ModelLoadError)
    try:
        fam = Familiarity(**{k: v for k, v in data.items() if not k.startswith("_")})
    except (AttributeError, TypeError):
        raise ModelLoadError(f"{f}: not a familiarity record (expected model, knows, checkpoint, "
                             "threshold, percentile, ...)") from None
    if not (isinstance(fam.threshold, (int, float)) and math.isfinite(fam.threshold)
            and isinstance(fam.stride, int) and 1 <= fam.stride <= 64
            and isinstance(fam.min_known, int) and fam.min_known >= 1
            and isinstance(fam.checkpoint, str) and isinstance(fam.model, str)):
        raise ModelLoadError(f"{f}: a familiarity record needs a finite threshold, a stride of "
                             "1-64 and a positive min_known")
    return fam if fam.checkpoint == path.name else None


def _groups(known: list[int], stride: int) -> list[list[int]]:
    return [g for g in (known[r::stride] for r in range(stride)) if g]


def score(model, input_ids: list[int], stride: int = STRIDE) -> tuple[float, int]:
    """(mean log-probability per known position, number of known positions) of an encoded
    input (``input_ids`` with the model's mask id at its gaps), each known position masked once
    (see the module docstring). Known = neither special nor masked."""
    special = {model.cls_id, model.eos_id, model.pad_id, model.mask_id}
    ids = list(input_ids)
    body = [i for i, t in enumerate(ids) if t not in (model.cls_id, model.eos_id, model.pad_id)]
    if not body:
        return float("nan"), 0
    span = max(1, model.max_length - 2)
    total, n = 0.0, 0
    for lo in range(0, len(body), span):
        part = body[lo:lo + span]
        window = [model.cls_id] + [ids[i] for i in part] + [model.eos_id]
        known = [k + 1 for k, i in enumerate(part) if ids[i] not in special]
        groups = _groups(known, stride)
        if not groups:
            continue
        width = max(len(g) for g in groups)
        rows, pos, true = [], [], []
        for g in groups:
            row = list(window)
            for p in g:
                row[p] = model.mask_id
            rows.append(row)
            pad = g + [g[-1]] * (width - len(g))
            pos.append(pad)
            true.append([window[p] for p in pad])
        ids_t = torch.tensor(rows, dtype=torch.long)
        attn = torch.ones_like(ids_t, dtype=torch.bool)
        lp = model.log_probs(ids_t, attn, torch.tensor(pos, dtype=torch.long)).float().cpu()
        picked = lp.gather(-1, torch.tensor(true, dtype=torch.long)[..., None])[..., 0]
        for r, g in enumerate(groups):
            total += float(picked[r, :len(g)].sum())
            n += len(g)
    return (total / n if n else float("nan")), n


def note(model, fam: Familiarity, input_ids: list[int]) -> str | None:
    """The note for an input below the threshold (None otherwise, or with too few known
    residues). Scores are cached by input, so length variants cost one measurement."""
    key = tuple(int(t) for t in input_ids)
    if key not in fam._cache:
        if len(fam._cache) > 1024:
            fam._cache.clear()
        fam._cache[key] = score(model, list(key), fam.stride)
    value, n = fam._cache[key]
    if n < fam.min_known or math.isnan(value) or value >= fam.threshold:
        return None
    reach = 100 - fam.percentile
    return (f"lies far outside {fam.model}'s training family ({fam.knows}): per-residue "
            f"log-likelihood {value:.2f}, below the {fam.threshold:.2f} that {reach:g}% of its "
            "validation sequences reach; its fills are guesses")


# ---- calibration ---------------------------------------------------------------------------
def calibrate(model, sequences: list[str], gap: int = 5, seed: int = 0,
              percentile: float = 1.0, stride: int = STRIDE) -> dict:
    """Scores of ``sequences`` (each with one ``gap``-residue gap at a seeded place, as a fill
    has) and their distribution: the threshold is the ``percentile``-th percentile."""
    rng = random.Random(seed)
    scores = []
    for s in sequences:
        a = rng.randrange(0, max(1, len(s) - gap))
        enc = model.encode(s[:a] + "?" * gap + s[a + gap:], gap)
        scores.append(score(model, enc.input_ids, stride)[0])
    arr = np.array(scores)
    q = {p: float(np.percentile(arr, p)) for p in (0.5, 1, 5, 50)}
    return {"threshold": round(float(np.percentile(arr, percentile)), 3),
            "percentile": percentile, "stride": stride,
            "measured": {"on": f"{len(arr)} validation sequences, each with a {gap}-residue gap "
                               f"at a seeded place (seed {seed})",
                         "mean": round(float(arr.mean()), 3), "sd": round(float(arr.std()), 3),
                         "min": round(float(arr.min()), 3),
                         "percentiles": {str(k): round(v, 3) for k, v in q.items()}},
            "_scores": scores}
