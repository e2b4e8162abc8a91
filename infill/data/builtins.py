"""Builtin models shipped in ``data/models`` (``builtin:NAME``), usable offline.

They ship inside the package (``infill/assets/models``, built from the repository's
``data/models``); ``INFILL_MODELS_DIR`` overrides the directory.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from infill.errors import ModelLoadError

__all__ = ["Builtin", "BUILTINS", "builtin_path", "models_dir", "disk_size"]


@dataclass(frozen=True)
class Builtin:
    name: str
    path: str          # relative to the models directory; may be a glob (one match expected)
    family: str
    description: str
    knows: str = ""    # what it was trained on, in a few words (the workbench's model picker)
    unit: str = "tokens"   # what its gaps are counted in (the loaded model's ``unit``)


BUILTINS: dict[str, Builtin] = {b.name: b for b in [
    Builtin("english", "english", "english",
            "WordPiece BERT (4 layers, hidden 256, word-level vocabulary of 8000) trained with "
            "whole-word masking on the spoken lines of 34 Shakespeare plays + Tiny Shakespeare, "
            "with a corpus memory of its training lines (it recites them)",
            "Shakespeare's plays"),
    Builtin("greek", "greek", "greek",
            "Ithaca-style character transformer (conv + 4 layers, hidden 192, 511-character "
            "context, a word stream of 10,000 words) on Greek literature (Perseus and a fifth "
            "of Tesserae, iota adscript) and the training splits of the IOSPE (Black Sea) and "
            "IAph (Aphrodisias) inscriptions, with the lexicon of their words "
            "(a damaged word is restored from the words that fit) and a phrase and shape "
            "memory of each corpus (a formula from its parallels, even where only its layout "
            "survives), weighed by how like each corpus the input is; '?' = character to "
            "restore, '-' = missing", unit="characters"),
    Builtin("latin", "latin", "latin",
            "Character transformer like builtin:greek (conv + 4 layers, hidden 192, 511-character "
            "context) in Aeneas's Latin alphabet, on the training split of 34,972 EDH Latin "
            "inscriptions (CC BY-SA) and Perseus Latin literature, with a lexicon of the "
            "inscriptions' words and the literature's and phrase and shape memories of the "
            "inscriptions; reads the stone's "
            "letters (an expansion in parentheses is kept in the output, not read); '?' = "
            "character to restore, '-' = missing", "Latin inscriptions (EDH)",
            unit="characters"),
    Builtin("protein", "protein/esm2_protein.pt", "protein",
            "ESM2-architecture protein MLM (fair-esm checkpoint, 4 layers, hidden 128) trained on "
            "ONE protein family only, HypF/AcyP (acylphosphatase, 64-127 residues): it does not "
            "know other proteins; for those use an ESM2 checkpoint (fair-esm, e.g. "
            "--model esm2_t6_8M_UR50D.pt)", "one protein family only: HypF/AcyP", "residues"),
]}


def assets_dir() -> Path:
    """The package's data folder: ``infill/assets`` when installed from a wheel, the repository's
    ``data/`` in a source checkout (editable install)."""
    installed = Path(__file__).resolve().parents[1] / "assets"
    return installed if installed.is_dir() else Path(__file__).resolve().parents[2] / "data"


def models_dir() -> Path:
    """Where builtin models live."""
    env = os.environ.get("INFILL_MODELS_DIR")
    if env:
        return Path(env)
    return assets_dir() / "models"


def builtin_path(name: str) -> Path:
    """Path of ``builtin:NAME`` (or ``NAME``); :class:`ModelLoadError` when unknown or missing."""
    key = name[len("builtin:"):] if name.startswith("builtin:") else name
    if key not in BUILTINS:
        raise ModelLoadError(f"unknown builtin model {name!r}; available: "
                             + ", ".join(f"builtin:{k}" for k in BUILTINS))
    entry = BUILTINS[key]
    root = models_dir()
    matches = sorted(root.glob(entry.path)) if any(c in entry.path for c in "*?[") else \
        [root / entry.path]
    matches = [m for m in matches if m.is_file() or (m / "charmodel.json").exists()
               or (m / "config.json").exists()]
    if len(matches) != 1:
        what = "is missing" if not matches else f"is ambiguous ({len(matches)} matches)"
        raise ModelLoadError(f"builtin model {key!r} {what}: expected {root / entry.path} "
                             "(reinstall infill, or set INFILL_MODELS_DIR)")
    return matches[0]


def disk_size(path: Path) -> int:
    """Bytes on disk of a model file or directory (training checkpoints excluded)."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and p.name != "checkpoint.pt")
