"""Model adapters. :func:`load_model` picks the right one from a name or path."""
from __future__ import annotations

from pathlib import Path

from infill.errors import ModelLoadError

__all__ = ["Encoding", "MaskedLM", "load_model"]


def __getattr__(name: str):
    """``Encoding`` and ``MaskedLM`` on first use (importing this package costs no torch)."""
    if name in ("Encoding", "MaskedLM"):
        from infill.models import base
        return getattr(base, name)
    raise AttributeError(f"module 'infill.models' has no attribute {name!r}")


def load_model(name_or_path: str, device: str | None = None, dtype: str | None = None,
               quantize: str | None = None, compile: bool = False, **options) -> MaskedLM:
    """Load a masked LM (see :func:`_load`); ``quantize="int8"`` / ``compile=True`` apply the
    opt-in speed-ups of :mod:`infill.models.accel`."""
    lm = _load(name_or_path, device, dtype, **options)
    if quantize is not None or compile:
        from infill.models.accel import accelerate
        accelerate(lm, quantize=quantize, compile=compile)
    return lm


def _load(name_or_path: str, device: str | None = None, dtype: str | None = None,
          **options) -> MaskedLM:
    """Load a masked LM by builtin name (``builtin:english``), local path or hub id.

    - ``builtin:NAME``: a model shipped with infill (see ``infill models``);
    - ``antiberty``, ``sapiens-vh``, ``sapiens-vl``: pretrained antibody models, converted into
      infill's cache on first use (:mod:`infill.models.antibody`);
    - a directory with ``config.json``: a Hugging Face masked LM (ESM2 directories get the
      protein adapter), with ``charmodel.json``: an Ithaca-style character model;
    - a ``.pt`` file: a fair-esm checkpoint (``esm2_t6_8M_UR50D.pt``-style);
    - a ``.pkl`` file: Ithaca's published checkpoint (read with a restricted unpickler), and a
      directory with ``ithaca.json``: an Ithaca-architecture model saved by infill;
    - otherwise a hub id (Hugging Face, or a fair-esm pretrained name such as
      ``esm2_t6_8M_UR50D``), which needs network access.
    """
    name = str(name_or_path)
    from infill.models.antibody import is_antibody_name
    if is_antibody_name(name):
        from infill.models.antibody import load_antibody
        return load_antibody(name, device=device, dtype=dtype, **options)
    if name.startswith("builtin:"):
        from infill.data.builtins import builtin_path
        name = str(builtin_path(name))
    path = Path(name).expanduser()
    if path.is_file():
        if path.suffix == ".pt":
            from infill.models.esm import load_fair_esm
            return load_fair_esm(str(path), device=device, dtype=dtype, **options)
        if path.suffix == ".pkl":
            from infill.models.ithaca import load_ithaca_checkpoint
            return load_ithaca_checkpoint(str(path), device=device, dtype=dtype, **options)
        raise ModelLoadError(f"don't know how to load model file {name!r} (expected a .pt fair-esm "
                             "checkpoint, an Ithaca .pkl checkpoint or a model directory)")
    if path.is_dir():
        from infill.models.antibody import META_FILE
        if (path / META_FILE).exists():
            from infill.models.antibody import load_antibody
            return load_antibody(str(path), device=device, dtype=dtype, **options)
        if (path / "charmodel.json").exists():
            from infill.models.char import load_char
            return load_char(str(path), device=device, dtype=dtype, **options)
        if (path / "ithaca.json").exists():
            from infill.models.ithaca import load_ithaca
            return load_ithaca(str(path), device=device, dtype=dtype, **options)
        if not (path / "config.json").exists():
            checkpoints = [p for p in sorted(path.glob("*.pt"))
                           if not p.name.endswith("-contact-regression.pt") and p.name != "checkpoint.pt"]
            if len(checkpoints) == 1:     # e.g. the output folder of `infill train protein`
                from infill.models.esm import load_fair_esm
                return load_fair_esm(str(checkpoints[0]), device=device, dtype=dtype, **options)
            raise ModelLoadError(f"model directory {name!r} has no config.json (nor charmodel.json, "
                                 "nor one fair-esm .pt checkpoint)")
        from infill.data.files import read_json
        config = read_json(path / "config.json", "model configuration", ModelLoadError)
        if not isinstance(config, dict):
            raise ModelLoadError(f"{path / 'config.json'} is not a model configuration (a JSON "
                                 "object)")
        model_type = config.get("model_type")
        if model_type == "esm":
            from infill.models.esm import load_hf_esm
            return load_hf_esm(str(path), device=device, dtype=dtype, **options)
        from infill.models.hf import load_hf
        return load_hf(str(path), device=device, dtype=dtype, **options)
    if name.startswith((".", "/", "~")) or name.count("/") > 1 or name.endswith(".pt"):
        raise ModelLoadError(f"no such model file or directory: {name!r}")
    if name.startswith("esm") and "/" not in name:
        from infill.models.esm import load_fair_esm
        return load_fair_esm(name, device=device, dtype=dtype, **options)
    if name.startswith("facebook/esm"):
        from infill.models.esm import load_hf_esm
        return load_hf_esm(name, device=device, dtype=dtype, **options)
    from infill.models.hf import load_hf
    return load_hf(name, device=device, dtype=dtype, **options)
