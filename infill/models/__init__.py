"""Model adapters. :func:`load_model` picks the right one from a name or path."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from infill.data.builtins import builtin_path
from infill.data.files import read_json
from infill.errors import ModelLoadError
from infill.lazy import LazyModule
from infill.models.checkpoints import load_pickle
from infill.models.encoder import refuse_custom_code

if TYPE_CHECKING:
    from infill.models.base import MaskedLM

# The adapters import torch: each on first use (names unlike the submodules', which the import
# system binds on this package when it loads them).
_base = LazyModule("infill.models.base")
_accel = LazyModule("infill.models.accel")
_antibody = LazyModule("infill.models.antibody")
_char = LazyModule("infill.models.char")
_esm = LazyModule("infill.models.esm")
_hf = LazyModule("infill.models.hf")
_ithaca = LazyModule("infill.models.ithaca")

__all__ = ["Encoding", "MaskedLM", "load_model"]


def __getattr__(name: str):
    """``Encoding`` and ``MaskedLM`` on first use (importing this package costs no torch)."""
    if name in ("Encoding", "MaskedLM"):
        return getattr(_base, name)
    raise AttributeError(f"module 'infill.models' has no attribute {name!r}")


def load_model(name_or_path: str, device: str | None = None, dtype: str | None = None,
               quantize: str | None = None, compile: bool = False, **options) -> MaskedLM:
    """Load a masked LM (see :func:`_load`); ``quantize="int8"`` / ``compile=True`` apply the
    opt-in speed-ups of :mod:`infill.models.accel`."""
    lm = _load(name_or_path, device, dtype, **options)
    if quantize is not None or compile:
        _accel.accelerate(lm, quantize=quantize, compile=compile)
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
    - a ``.pkl`` file: Ithaca's or Aeneas's published checkpoint, told apart by its content
      (read with a restricted unpickler), and a
      directory with ``ithaca.json``: an Ithaca-architecture model saved by infill;
    - otherwise a hub id (Hugging Face, or a fair-esm pretrained name such as
      ``esm2_t6_8M_UR50D``), which needs network access.
    """
    name = str(name_or_path)
    kw = {"device": device, "dtype": dtype, **options}
    if _antibody.is_antibody_name(name):
        return _antibody.load_antibody(name, **kw)
    if name.startswith("builtin:"):
        lm = _load(str(builtin_path(name)), device, dtype, **options)
        lm.name = name          # messages name builtin:greek, not the folder it lies in
        return lm
    path = Path(name).expanduser()
    if path.is_file():
        return _load_file(path, name, kw)
    if path.is_dir():
        return _load_dir(path, name, kw)
    return _load_hub(name, kw)


def _load_file(path: Path, name: str, kw: dict) -> MaskedLM:
    """A checkpoint file, by its suffix: ``.pt`` fair-esm, ``.pkl`` Ithaca or Aeneas (by its
    content)."""
    if path.suffix == ".pt":
        return _esm.load_fair_esm(str(path), **kw)
    if path.suffix == ".pkl":
        return load_pickle(path, **kw)
    raise ModelLoadError(f"don't know how to load model file {name!r} (expected a .pt fair-esm "
                         "checkpoint, an Ithaca or Aeneas .pkl checkpoint or a model directory)")


def _load_dir(path: Path, name: str, kw: dict) -> MaskedLM:
    """A model directory, by the file that describes it (antibody metadata, ``charmodel.json``,
    ``ithaca.json``, ``config.json``, else one fair-esm checkpoint)."""
    if (path / _antibody.META_FILE).exists():
        return _antibody.load_antibody(str(path), **kw)
    if (path / "charmodel.json").exists():
        return _char.load_char(str(path), **kw)
    if (path / "ithaca.json").exists():
        return _ithaca.load_ithaca(str(path), **kw)
    if not (path / "config.json").exists():
        return _load_checkpoint_dir(path, name, kw)
    return _load_hf_dir(path, kw)


def _load_checkpoint_dir(path: Path, name: str, kw: dict) -> MaskedLM:
    """A directory without ``config.json`` holding exactly one fair-esm checkpoint."""
    checkpoints = [p for p in sorted(path.glob("*.pt"))
                   if not p.name.endswith("-contact-regression.pt") and p.name != "checkpoint.pt"]
    if len(checkpoints) == 1:     # e.g. the output folder of `infill train protein`
        return _esm.load_fair_esm(str(checkpoints[0]), **kw)
    raise ModelLoadError(f"model directory {name!r} has no config.json (nor charmodel.json, "
                         "nor one fair-esm .pt checkpoint)")


def _load_hf_dir(path: Path, kw: dict) -> MaskedLM:
    """A Hugging Face model directory; ESM2 (``model_type`` esm) gets the protein adapter."""
    config = read_json(path / "config.json", "model configuration", ModelLoadError)
    if not isinstance(config, dict):
        raise ModelLoadError(f"{path / 'config.json'} is not a model configuration (a JSON "
                             "object)")
    refuse_custom_code(str(path))         # never a folder's own code (auto_map, unknown type)
    if config.get("model_type") == "esm":
        return _esm.load_hf_esm(str(path), **kw)
    return _hf.load_hf(str(path), **kw)


def _load_hub(name: str, kw: dict) -> MaskedLM:
    """A hub id: a fair-esm pretrained name, a Hugging Face ESM2 id, or any Hugging Face masked
    LM (a name that looks like a local path is refused)."""
    if name.startswith((".", "/", "~")) or name.count("/") > 1 or name.endswith(".pt"):
        raise ModelLoadError(f"no such model file or directory: {name!r}")
    if name.startswith("esm") and "/" not in name:
        return _esm.load_fair_esm(name, **kw)
    if name.startswith("facebook/esm"):
        return _esm.load_hf_esm(name, **kw)
    return _hf.load_hf(name, **kw)
