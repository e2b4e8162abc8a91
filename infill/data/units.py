"""What a gap is counted in -- tokens, characters or residues -- told from a run's settings."""
from __future__ import annotations

from pathlib import Path

__all__ = ["infer_unit"]

_FASTA = (".fa", ".fasta", ".faa", ".fas")


def infer_unit(config: dict) -> str:
    """What a gap of a run is counted in, from its configuration alone (for summaries written
    before the model's ``unit`` was stored): residues for protein models or FASTA data,
    characters for Greek / character models, else tokens."""
    family = str(config.get("family") or "")
    model, data = str(config.get("model", "")), str(config.get("data", ""))
    low = f"{model} {data}".lower()
    if family == "protein" or data.lower().endswith(_FASTA) or "protein" in low \
            or Path(model).name.lower().startswith("esm"):
        return "residues"
    if family == "greek" or "greek" in low or (Path(model) / "charmodel.json").is_file():
        return "characters"
    return "tokens"
