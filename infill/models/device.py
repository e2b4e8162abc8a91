"""Where and in which precision a model runs: ``--device`` and ``--dtype`` resolved once."""
from __future__ import annotations

import warnings

from infill.lazy import torch

from infill.errors import ConfigError
from infill.names import DTYPES

_DTYPES = {"float32": "float32", "fp32": "float32", "bf16": "bfloat16", "bfloat16": "bfloat16",
           "fp16": "float16", "float16": "float16"}
"""Each name of ``--dtype`` (and alias) -> the torch dtype's attribute name."""


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None`` -> CUDA when available, else CPU. Only CPU and CUDA devices are supported."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as e:
        raise ConfigError(f"unknown device {device!r} (use cpu, cuda or cuda:N)") from e
    if dev.type not in ("cpu", "cuda"):
        raise ConfigError(f"device {device!r} is not supported (use cpu, cuda or cuda:N)")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ConfigError(f"device {device!r} asked for, but CUDA is not available here")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ConfigError(f"device {device!r}: only {torch.cuda.device_count()} CUDA device(s)")
    return dev


def cpu_supports_bf16() -> bool:
    """Whether this CPU runs bf16 matrix products natively (AVX512-BF16 / AMX); elsewhere torch
    emulates them, correctly but slowly."""
    try:    # oneDNN's own test of the instruction set (AVX512-BF16 or AMX)
        if torch.ops.mkldnn._is_mkldnn_bf16_supported():
            return True
    except Exception:  # noqa: BLE001 - a torch build without oneDNN
        pass
    try:
        caps = torch.backends.cpu.get_cpu_capability()
    except Exception:  # noqa: BLE001 - old torch
        return False
    return "AMX" in caps or "AVX512_BF16" in caps or "AVX512BF16" in caps


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """``None`` -> float32. bf16 on CUDA and CPU (warns where the CPU emulates it); fp16 on CUDA."""
    if dtype is None:
        return torch.float32
    if isinstance(dtype, str):
        if dtype not in _DTYPES:
            raise ConfigError(f"unknown dtype {dtype!r}; choose from {', '.join(DTYPES)}")
        dtype = getattr(torch, _DTYPES[dtype])
    if dtype not in (torch.float32, torch.bfloat16, torch.float16):
        raise ConfigError(f"dtype {dtype} is not supported; choose from {', '.join(DTYPES)}")
    if dtype == torch.float16 and device.type != "cuda":
        raise ConfigError(f"fp16 is only supported on CUDA; use float32 or bf16 on {device.type}")
    if dtype == torch.bfloat16 and device.type == "cpu" and not cpu_supports_bf16():
        warnings.warn("bf16 on this CPU is emulated (no AVX512-BF16/AMX): expect it to be slower "
                      "than float32", stacklevel=2)
    return dtype
