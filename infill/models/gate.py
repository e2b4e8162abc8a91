"""A memory gate (issue 48): one phrase and shape memory per corpus, each weighed, input by
input, by how like that corpus the input's own text is.

Memories pooled from two corpora trade one corpus's formulae for the other's. builtin:greek's
memories of IOSPE (the Black Sea) and IAph (Aphrodisias) each add 13–15 points of top-1 on
their own corpus; pooled, IAph's cost IOSPE about 7 (``benchmarks/results/greek_field.md``).
An editor reads a decree from Chersonesos against Chersonesos's decrees. The gate does the same:

**Sources.** Each source s (a corpus: ``iospe``, ``iaph``) has a phrase memory P_s and, if it
has one, a shape memory H_s (:mod:`infill.models.phrases`, :mod:`infill.models.shapes`). For a
row x (an input window as the network reads it, restored letters included):

    p_s(x_t)  = M_s(x_t | context of t) + keep_s(t) / V    at each of the row's text characters t
    ℓ_s(x)    = Σ_t log p_s(x_t)
    g_s(x)    = π_s exp(κ ℓ_s(x)) / Σ_r π_r exp(κ ℓ_r(x))
    q'(w | x) = Σ_s g_s(x) · P_s(H_s(q))(w | x)

M_s and keep_s are P_s's Witten–Bell chain and the mass it leaves to the network (the module
doc of :mod:`infill.models.phrases`) at t read as hidden; V is the number of text characters
(letters, the space, the numeral), so where no level of any source saw t's context every
source scores t alike. ℓ_s is the log-likelihood of the row's text under corpus s's memory (an
n-gram model of that corpus, as in language identification), g its posterior over the sources;
κ tempers it, because neighbouring characters share their contexts and are not independent
evidence. Each P_s(H_s(q)) sums to 1, so q' does; with one source q' is exactly that source's
mixture. The gate is mixed last, after the model's own memories (:attr:`CharMaskedLM.mixed`).

On disk, beside the model: ``gate.json`` (:data:`GATE_FILE`: the sources in order with their
prior π, and κ as ``"sharpness"``) and ``sources/<name>/phrases.safetensors`` (and
``shapes.safetensors``). A user's ``phrases.txt`` beside the model is counted into every source.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from infill.data.files import read_json
from infill.errors import ModelLoadError
from infill.models.phrases import PHRASES_FILE, USER_PHRASES, PhraseMemory, load_phrases
from infill.models.shapes import SHAPES_FILE, load_shapes

__all__ = ["GATE_FILE", "SOURCES_DIR", "GATE_SHARPNESS", "MemoryGate", "Source", "load_gate",
           "save_gate", "source_names"]

GATE_FILE = "gate.json"
SOURCES_DIR = "sources"
FORMAT = "infill-gate"
GATE_SHARPNESS = 0.1
"""κ, chosen on the validation splits of IOSPE and IAph (data/README.md#builtingreek)."""
MAX_SOURCES = 8
MAX_SHARPNESS = 10.0
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


@dataclass
class Source:
    """One corpus's memories: ``phrases`` (which the gate reads) and ``shapes`` (or None)."""

    name: str
    prior: float
    phrases: PhraseMemory
    shapes: PhraseMemory | None = None

    def mix(self, logq: torch.Tensor, input_ids: torch.Tensor, positions: torch.Tensor
            ) -> torch.Tensor:
        """log P_s(H_s(q)): the shape memory, then the phrase memory (as a model mixes them)."""
        if self.shapes is not None:
            logq = self.shapes.mix(logq, input_ids, positions)
        return self.phrases.mix(logq, input_ids, positions)


@dataclass
class MemoryGate:
    """The sources and κ (``sharpness``); ``text_ids``: the input ids a row's text is scored
    at (letters, the space, the numeral)."""

    sources: list[Source]
    sharpness: float
    text_ids: np.ndarray

    def mix(self, logq: torch.Tensor, input_ids: torch.Tensor, positions: torch.Tensor
            ) -> torch.Tensor:
        """log q' (the module doc) from log q [R, P, V] at ``positions`` [R, P] of
        ``input_ids`` [R, T]."""
        ids = input_ids.detach().cpu().numpy().astype(np.int64)
        gate = torch.from_numpy(self.weights(ids)).log().to(logq.device)        # [R, S]
        mixed = [src.mix(logq, input_ids, positions).double() for src in self.sources]
        stacked = torch.stack(mixed, dim=-1) + gate[:, None, None, :]            # [R, P, V, S]
        return torch.logsumexp(stacked, dim=-1).to(logq.dtype)

    def weights(self, ids: np.ndarray) -> np.ndarray:
        """[R, S] g_s of each row of ``ids`` [R, T] (the module doc); rows alike are scored
        once."""
        rows, inverse = np.unique(ids, axis=0, return_inverse=True)
        scores = np.stack([self.log_likelihood(src.phrases, rows) for src in self.sources], 1)
        logits = np.log([src.prior for src in self.sources]) + self.sharpness * scores
        logits -= logits.max(1, keepdims=True)
        g = np.exp(logits)
        return (g / g.sum(1, keepdims=True))[inverse.reshape(-1)]

    def log_likelihood(self, memory: PhraseMemory, rows: np.ndarray) -> np.ndarray:
        """[R] ℓ_s: Σ_t log p_s(x_t) over the text characters t of each row."""
        R, T = rows.shape
        text = np.isin(rows, self.text_ids)
        pos = np.broadcast_to(np.arange(T), (R, T))
        floor = 1.0 / len(self.text_ids)
        p = np.full(R * T, floor)
        seen, mixture, keep = memory.mixture(rows, pos)
        if len(seen):
            token = rows.reshape(-1)[seen]
            inside = token < mixture.shape[1]
            chance = np.where(inside, mixture[np.arange(len(seen)), np.minimum(
                token, mixture.shape[1] - 1)], 0.0)
            p[seen] = chance + keep * floor
        return np.where(text, np.log(p).reshape(R, T), 0.0).sum(1)


def load_gate(path: Path, alphabet) -> MemoryGate:
    """Read ``path/gate.json`` and each source's memories (no pickle; one ModelLoadError naming
    what is wrong); a ``phrases.txt`` beside the model is counted into every source."""
    meta = read_json(path / GATE_FILE, "memory gate", ModelLoadError)
    where = str(path / GATE_FILE)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelLoadError(f"{where}: not an infill memory gate (format {FORMAT!r})")
    sharpness, listed = meta.get("sharpness"), meta.get("sources")
    if isinstance(sharpness, bool) or not isinstance(sharpness, (int, float)) or \
            not 0 <= sharpness <= MAX_SHARPNESS:
        raise ModelLoadError(f"{where}: sharpness must be a number from 0 to {MAX_SHARPNESS:g}")
    if not isinstance(listed, list) or not 1 <= len(listed) <= MAX_SOURCES:
        raise ModelLoadError(f"{where}: sources must be a list of 1 to {MAX_SOURCES}")
    sources, user = [], path / USER_PHRASES
    for item in listed:
        name, prior = _source_entry(item, where)
        if name in (s.name for s in sources):
            raise ModelLoadError(f"{where}: source {name!r} is listed twice")
        folder = path / SOURCES_DIR / name
        if not (folder / PHRASES_FILE).is_file():
            raise ModelLoadError(f"{where}: source {name!r} has no {SOURCES_DIR}/{name}/"
                                 f"{PHRASES_FILE}")
        shapes = (load_shapes(folder / SHAPES_FILE, alphabet, user)
                  if (folder / SHAPES_FILE).is_file() else None)
        sources.append(Source(name, prior, load_phrases(folder / PHRASES_FILE, alphabet,
                                                        user=user), shapes))
    text = [alphabet.space_id, *alphabet.letter_ids, alphabet.index[alphabet.numeral]]
    return MemoryGate(sources, float(sharpness), np.array(text, dtype=np.int64))


def _source_entry(item, where: str) -> tuple[str, float]:
    """(name, prior) of one entry of ``sources``, checked."""
    if not isinstance(item, dict) or set(item) != {"name", "prior"}:
        raise ModelLoadError(f"{where}: each source is {{\"name\": ..., \"prior\": ...}}")
    name, prior = item["name"], item["prior"]
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ModelLoadError(f"{where}: a source name is 1-40 of a-z, 0-9, '_' and '-'")
    if isinstance(prior, bool) or not isinstance(prior, (int, float)) or \
            not (math.isfinite(prior) and prior > 0):
        raise ModelLoadError(f"{where}: source {name!r}: prior must be a positive number")
    return name, float(prior)


def save_gate(path: Path, names: list[str], priors: list[float] | None = None,
              sharpness: float = GATE_SHARPNESS) -> Path:
    """Write ``path/gate.json`` for the sources ``names`` (their memories already under
    ``path/sources/<name>/``), equal priors unless given."""
    priors = priors or [1.0] * len(names)
    entries = [{"name": n, "prior": p} for n, p in zip(names, priors)]
    (path / GATE_FILE).write_text(json.dumps({"format": FORMAT, "sharpness": sharpness,
                                              "sources": entries}, indent=1) + "\n")
    return path / GATE_FILE


def source_names(folders: list[Path]) -> list[str]:
    """A source name for each corpus folder: its name, lower-cased, in the letters a name may
    hold (``IOSPE`` -> ``iospe``), numbered where two would be alike."""
    names: list[str] = []
    for folder in folders:
        base = re.sub(r"[^a-z0-9_-]", "-", Path(folder).name.lower()).strip("-_")[:32] or "corpus"
        name, k = base, 2
        while name in names:
            name, k = f"{base}-{k}", k + 1
        names.append(name)
    return names
