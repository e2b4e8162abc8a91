"""What one ``infill bench`` run is: :class:`BenchRequest`, a request (:mod:`infill.requests`)
whose fields are the command's flags and the names ``config.json`` stores.

The grid axes (``gap_lengths``, ``methods``, ``beam_size``, ``pivot``, ``top_k``) hold one
value per point of the grid: ``beam_size=(5, 20)`` runs every method at both beam sizes.
Fields shared with :class:`~infill.config.DecodeConfig` (``beam_size``, ``pivot``, ``dedup``,
``allow_special``, ``seed``) are the same options, swept. Old spellings (``beams=``, ``ks=``,
``limit=``, ``pivots=``, ``fmt=``, ``gaps=``) are read with a DeprecationWarning, and a
``config.json`` written under them still resumes (:meth:`BenchRequest.stored`).
"""
from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

from infill.config import MAX_BEAM, DecodeConfig
from infill.data.corpora import CORPORA, FORMATS
from infill.data.splits import SPLITS
from infill.errors import ConfigError
from infill.names import DTYPE_SPELLINGS
from infill.fields import MAX_BATCH_SIZE, Request, Spec, option, seed_option

__all__ = ["BenchRequest", "BenchConfig", "SPLITS", "GRID_AXES"]

GRID_AXES = {"gap_lengths": "gap length", "beam_size": "beam size", "top_k": "k of top-k",
             "methods": "method", "pivot": "pivot"}
"""The fields holding one value per point of the grid, and how a warning names a value."""


def _required(kind: type, help: str) -> Any:
    return dataclasses.field(metadata={"spec": Spec(kind, help)})


def _decoding(name: str) -> Any:
    """A field that is :class:`DecodeConfig`'s field ``name`` (same default and rules)."""
    f = DecodeConfig.fields()[name]
    return dataclasses.field(default=f.default, metadata=f.metadata)


def _axis(default: tuple, kind: type, help: str, **rules) -> Any:
    return option(default, kind, help, many=True, **rules)


@dataclass(frozen=True)
class BenchRequest(Request):
    """Everything that determines a benchmark's results (stored in ``config.json`` and checked
    on resume), and where its model and corpora come from."""

    RENAMED: ClassVar[dict[str, str]] = {"beams": "beam_size", "ks": "top_k", "limit": "examples",
                                         "pivots": "pivot", "fmt": "format",
                                         "gaps": "gap_lengths"}
    KIND: ClassVar[str] = "bench"

    model: str = _required(str, "builtin:NAME, antiberty / sapiens-vh / sapiens-vl, a local model "
                           "directory or checkpoint, or a hub id.")
    data: str = _required(str, "A corpus name, a text / FASTA / JSONL file, hf:NAME, or a folder "
                               "of EpiDoc files (iospe).")
    format: str | None = option(None, str, "Format of DATA (default: from the name / file "
                                "suffix).", choices=FORMATS, optional=True)
    split: str = option("all", str, "Use one part of the training split (the family's examples "
                        "and split seed).", choices=SPLITS)
    family: str | None = option(None, str, "Training family whose examples/split --split refers "
                                "to (default: the model's training record, else DATA's name).",
                                choices=lambda: list(CORPORA), optional=True)
    examples: int | None = option(200, int, "Examples drawn at random (seeded).",
                                  low=1, optional=True, what="the number of examples")
    gap_lengths: tuple[int, ...] = _axis((2, 3, 4, 5), int, "Gap lengths in model tokens (one "
                                         "span of each length per example).", low=1,
                                         what="gap length")
    methods: tuple[str, ...] = _axis(("beam",), str, "Comma-separated methods",
                                     what="method")      # names: infill.bench.methods
    beam_size: tuple[int, ...] = _axis((5,), int, "Beam sizes (comma-separated), e.g. 5,20.",
                                       low=1, high=MAX_BEAM, what="beam size")
    pivot: tuple[str, ...] = _axis((), str, "HCB pivot token (repeatable); 'all' sweeps every "
                                   "vocabulary entry.", optional=True, what="pivot")
    top_k: tuple[int, ...] = _axis((1, 5, 10, 20), int, "k for top-k exact match (only k <= "
                                   "beam size are reported).", low=1, what="k of top-k")
    seed: int = seed_option()
    batch_size: int = option(16, int, "Examples decoded together.", low=1, high=MAX_BATCH_SIZE,
                             what="batch size")
    allow_special: bool = _decoding("allow_special")
    dedup: bool = _decoding("dedup")
    bertscore_model: str | None = option(None, str, "BERTScore scorer: a local HF model directory "
                                         "or hub id (column left out with a warning if it cannot "
                                         "load).", optional=True)
    bertscore_layers: int | None = option(None, int, "Layer of the scorer model to use.", low=1,
                                          optional=True, what="BERTScore layer")
    device: str | None = option(None, str, "cpu, cuda, cuda:N [default: cuda if available].",
                                optional=True)
    dtype: str | None = option(None, str, "Weights' precision: bf16 (CUDA, or CPU -- slow where "
                               "the CPU lacks bf16 units), fp16 (CUDA); default float32.",
                               choices=DTYPE_SPELLINGS, optional=True)
    quantize: str | None = option(None, str, "Dynamic int8 quantization of the linear layers "
                                  "(CPU; approximate).", choices=("int8",), optional=True)
    compile: bool = option(False, bool, "torch.compile the network (first calls pay the "
                           "compilation).")
    data_root: str | None = option(None, str, "Folder of the named corpora", optional=True)
    # (not part of the results' identity: a run elsewhere with the corpora elsewhere is the same)

    def check(self) -> None:
        if self.bertscore_layers is not None and self.bertscore_model is None:
            raise ConfigError("'bertscore_layers' is the layer of the BERTScore scorer model; "
                              "give bertscore_model too", field="bertscore_layers")

    def normalize(self) -> None:
        """A list is read as a tuple; a value repeated on a grid axis runs once, with a warning
        (it would plan rows that are never written: the run could not complete)."""
        for name, what in GRID_AXES.items():
            values = getattr(self, name)
            if isinstance(values, list):
                values = tuple(values)
            if isinstance(values, tuple):
                once = tuple(dict.fromkeys(values))
                if len(once) < len(values):
                    repeated = sorted({str(v) for v in values if values.count(v) > 1})
                    warnings.warn(f"{what} {', '.join(repeated)} given more than once: run once",
                                  stacklevel=5)
                object.__setattr__(self, name, once)

    def to_json(self) -> dict:
        """What identifies the results (checked on resume): every field but ``data_root``, and
        ``dtype``/``quantize``/``compile`` only when set (runs recorded before they existed stay
        resumable)."""
        out = super().to_json()
        out.pop("data_root")
        for key in ("dtype", "quantize", "compile"):
            if not out[key]:
                out.pop(key)
        return out

    @property
    def gaps(self) -> tuple[int, ...]:
        """Deprecated: :attr:`gap_lengths` (read with a DeprecationWarning until 0.3.0)."""
        warnings.warn("BenchRequest.gaps is now gap_lengths; 'gaps' will be removed in the next "
                      "release", DeprecationWarning, stacklevel=2)
        return self.gap_lengths

    @classmethod
    def stored(cls, record: dict) -> dict:
        """A ``config.json`` record (or a summary's ``config``) with its old field names
        (``beams``, ``ks``, ``gaps``, ...) renamed, so that a run recorded before the rename
        compares equal to its request."""
        return {cls.RENAMED.get(k, k): v for k, v in record.items()}


def BenchConfig(**options) -> BenchRequest:
    """The former name of :class:`BenchRequest` (its old keywords are read with a warning)."""
    return BenchRequest.from_options(**options)
