"""What DeepMind's two Flax checkpoints -- Ithaca's and Aeneas's -- share, read into torch.

Both are pickles of ``{params, model_config, region_map, alphabet}`` read with infill's restricted
unpickler (:func:`infill.data.pickles.read_pickle_file`): no jax or flax is needed and nothing in
the file runs. :func:`read_checkpoint` reads one and says which of the two it is by its content
(:func:`kind_of`); :func:`checked_params` flattens its parameter tree and checks every array the
port reads against the shapes its ``model_config`` implies. Both networks normalize with Flax's
own LayerNorm (:class:`LayerNorm`).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from infill.data.pickles import read_pickle_file
from infill.errors import ConfigError, ModelLoadError

__all__ = ["LayerNorm", "read_checkpoint", "kind_of", "flatten", "checked_params", "short",
           "size", "WHAT", "MAX_SIZE"]

WHAT = "Ithaca/Aeneas checkpoint"
MAX_SIZE = 2 ** 40
"""The largest size a ``model_config`` may give (each size is also bounded by memory)."""
KEYS = ("params", "model_config")
# the parameter each network has and the other lacks (what tells the two apart)
MARKS = {"ithaca": "word_embeddings/embedding",
         "aeneas": "encoderblock_0/self_attention/query/kernel"}


class LayerNorm(nn.Module):
    """Flax's LayerNorm as Ithaca and Aeneas use it: variance as E[x^2] - E[x]^2, eps 1e-12."""

    def __init__(self, dim: int, eps: float = 1e-12):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x * x).mean(-1, keepdim=True) - mean * mean).clamp(min=0)
        return (x - mean) * torch.rsqrt(var + self.eps) * self.scale + self.bias


def short(v) -> str:
    """A value for a message: huge whole numbers by their size (repr of thousands of digits
    fails)."""
    if isinstance(v, (int, np.integer)) and not -10 ** 30 < v < 10 ** 30:
        return f"a number of about 2^{int(v).bit_length()}"
    return repr(v)[:60]


def size(name: str, value) -> int:
    """A ``model_config`` size as an int: a whole number from 1 to :data:`MAX_SIZE`, else a
    ConfigError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not 1 <= value <= MAX_SIZE:
        raise ConfigError(f"model_config {name} must be a whole number from 1 to {MAX_SIZE:,}, "
                          f"got {short(value)}")
    return int(value)


def flatten(tree, prefix: str = "") -> dict:
    """A nested dict of arrays -> ``{"a/b/c": array}``."""
    out = {}
    for k, v in tree.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "/"))
        else:
            out[key] = v
    return out


def weights(ckpt: dict) -> dict:
    """The flat weights of a checkpoint: ``params['params']`` when the file holds the whole
    variables dict (Aeneas also stores ``params_axes`` beside it, names without numbers)."""
    params = ckpt.get("params")
    if isinstance(params, dict) and isinstance(params.get("params"), dict):
        params = params["params"]
    return flatten(params) if isinstance(params, dict) else {}


def kind_of(ckpt, where: str) -> str:
    """``"ithaca"`` or ``"aeneas"`` by what the checkpoint holds; a ModelLoadError naming what is
    missing for anything else."""
    if not isinstance(ckpt, dict):
        raise ModelLoadError(f"{where} is neither an Ithaca nor an Aeneas checkpoint: it holds a "
                             f"{type(ckpt).__name__}, not a dict with params and model_config")
    missing = [k for k in KEYS if k not in ckpt]
    if missing:
        raise ModelLoadError(f"{where} is neither an Ithaca nor an Aeneas checkpoint: it lacks "
                             f"{' and '.join(missing)} (it holds {', '.join(map(str, ckpt))[:80]})")
    flat = weights(ckpt)
    found = [kind for kind, key in MARKS.items() if key in flat]
    if len(found) != 1:
        raise ModelLoadError(f"{where} is neither an Ithaca nor an Aeneas checkpoint: its params "
                             f"lack both {MARKS['ithaca']} (Ithaca) and {MARKS['aeneas']} (Aeneas)"
                             if not found else f"{where} holds both Ithaca's and Aeneas's "
                             "parameters")
    return found[0]


def read_checkpoint(path: str | Path) -> tuple[str, dict]:
    """(``"ithaca"`` | ``"aeneas"``, the unpickled dict) of a ``.pkl`` checkpoint, read once with
    the restricted unpickler."""
    ckpt = read_pickle_file(path, WHAT)
    return kind_of(ckpt, f"{str(path)!r}"), ckpt


def checked_params(ckpt: dict, shapes: dict[str, tuple], where: str) -> dict[str, np.ndarray]:
    """The checkpoint's flat weights, each one in ``shapes`` present, a finite float array of that
    shape (ModelLoadError naming the first that is not)."""
    flat = weights(ckpt)
    if not flat:
        raise ModelLoadError(f"{where}: params is not a tree of arrays")
    for key, shape in shapes.items():
        arr = flat.get(key)
        if arr is None:
            raise ModelLoadError(f"{where} lacks the parameter {key}")
        if not isinstance(arr, np.ndarray) or arr.dtype.kind != "f":
            raise ModelLoadError(f"{where}: parameter {key} is not a float array")
        if tuple(arr.shape) != shape:
            raise ModelLoadError(f"{where}: parameter {key} has shape {tuple(arr.shape)}, but the "
                                 f"model_config implies {shape}")
        if not np.isfinite(arr).all():
            raise ModelLoadError(f"{where}: parameter {key} holds NaN or infinite values")
    return flat


def torch_weights(flat: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    """Flat numpy weights -> float32 torch tensors (copies)."""
    return {k: torch.from_numpy(np.asarray(v, dtype=np.float32).copy()) for k, v in flat.items()}
