"""Opt-in speed-ups of a loaded model's forward pass (``--quantize int8``, ``--compile``).

Both change the arithmetic, so they are off by default; ``benchmarks/forward.py`` measures each
against exact fp32 (speed ratio, and how often the top-1 completion changes). ``--dtype bf16``
(:mod:`infill.models.device`) is the third such option.

- ``quantize="int8"``: dynamic int8 quantization of every ``nn.Linear`` (weights int8, activations
  quantized on the fly; CPU only), with PyTorch's eager ``quantize_dynamic``.
- ``compile=True``: ``torch.compile`` (dynamic shapes) of the modules that do the work
  (:meth:`~infill.models.base.MaskedLM.heavy_modules`); the first calls of each new shape pay the
  compilation.
"""
from __future__ import annotations

import warnings

import torch
from torch import nn

from infill.errors import ConfigError
from infill.models.base import MaskedLM

QUANTIZATIONS = ("int8",)


def accelerate(lm: MaskedLM, quantize: str | None = None, compile: bool = False) -> MaskedLM:
    """Apply the requested speed-ups to ``lm`` in place; returns it."""
    if quantize is not None:
        if quantize not in QUANTIZATIONS:
            raise ConfigError(f"unknown quantization {quantize!r}; choose from "
                              f"{', '.join(QUANTIZATIONS)}")
        if lm.device.type != "cpu":
            raise ConfigError("int8 dynamic quantization runs on the CPU; on CUDA use 'dtype' bf16 "
                              "or fp16", field=("quantize", "dtype"))
        for module in lm.heavy_modules(whole=True):
            if next(module.parameters(), torch.empty(0)).dtype != torch.float32:
                raise ConfigError("'quantize' int8 needs float32 weights (drop 'dtype')",
                                  field=("quantize", "dtype"))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")    # torch.ao.quantization's deprecation notice
                torch.ao.quantization.quantize_dynamic(module, {nn.Linear}, dtype=torch.qint8,
                                                       inplace=True)
    if compile:
        for module in lm.heavy_modules():
            module.compile(dynamic=True)
    lm.acceleration = {"quantize": quantize, "compile": bool(compile)}
    return lm
