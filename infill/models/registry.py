"""Models that load by name: the builtins shipped in the package, and the pretrained models infill
knows how to fetch and convert (antibody language models)."""
from __future__ import annotations

from pathlib import Path

from infill.errors import ModelLoadError
from infill.data.builtins import BUILTINS, builtin_path, disk_size
from infill.lazy import LazyModule
from infill.models import load_model
from infill.models.checkpoints import describe_pickle

antibody = LazyModule("infill.models.antibody")      # torch: imported when it is listed


def list_models() -> list[dict]:
    """One row per named model: name, family, description, status and bytes on disk."""
    rows = []
    for key, entry in BUILTINS.items():
        try:
            size, status = disk_size(builtin_path(key)), "ready"
        except ModelLoadError:
            size, status = None, "missing"
        rows.append({"name": f"builtin:{key}", "family": entry.family, "status": status,
                     "bytes": size, "description": entry.description, "knows": entry.knows,
                     "unit": entry.unit})
    for spec in antibody.ANTIBODY_MODELS.values():
        folder = antibody.converted_path(spec.name)
        size = disk_size(folder) if folder is not None else None
        status = "ready" if size is not None else (
            "converted on first use" if spec.installed else "infill models download " + spec.name)
        rows.append({"name": spec.name, "family": "antibody", "unit": "residues", "status": status,
                     "bytes": size,
                     "description": f"{spec.description}; {spec.license}; from "
                                    f"{spec.requirement}" + (
                                        "" if size is None else
                                        f"; cached in {antibody.cache_dir()}")})
    return rows


def describe_model(name_or_path: str) -> dict:
    """What one model holds (``infill models --model NAME``): an Ithaca or Aeneas checkpoint is read
    without building its network; any other model is loaded (on the CPU) and summarized."""
    path = Path(str(name_or_path)).expanduser()
    if path.is_file() and path.suffix == ".pkl":
        return describe_pickle(path)
    lm = load_model(str(name_or_path), device="cpu")
    net = getattr(lm, "model", None)
    return {"name": lm.name, "family": type(lm).__name__, "unit": lm.unit,
            "vocabulary": lm.vocab_size, "max_length": lm.max_length,
            "mask": lm.id_to_token(lm.mask_id), "default_pivot": lm.id_to_token(lm.default_pivot),
            "parameters": sum(p.numel() for p in net.parameters()) if net is not None else None}


def prepare(name: str):
    """Fetch/convert a downloadable model into the cache; returns where it is."""
    if antibody.is_antibody_name(name):
        return antibody.convert(name)
    if name.startswith("builtin:") or name in BUILTINS:
        return builtin_path(name)
    raise ModelLoadError(f"unknown model {name!r}; `infill models` lists the named models")
