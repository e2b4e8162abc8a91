"""What one training run is asked to do: :class:`TrainRequest` (the shared loop's options) and
:class:`ModelOptions` (the family's model shape and extra data), frozen requests checked at
construction by the one mechanism of :mod:`infill.fields`; ``infill train``'s options are made
from their fields. Imports no torch (the command line's help reads these fields).

The field names and their order are also the ``config`` record of ``train_info.json``.
"""
from __future__ import annotations

import dataclasses
import os
import warnings
from dataclasses import dataclass
from typing import Any

from infill.errors import ConfigError
from infill.fields import MAX_SEED, Request, Spec, option
from infill.lazy import LazyModule, torch
from infill.names import DTYPE_SPELLINGS

devices = LazyModule("infill.models.device")        # on first use: --help reads the fields only

__all__ = ["TrainRequest", "TrainConfig", "ModelOptions", "MASKINGS", "SCHEMES", "CLOCKS",
           "TRAIN_DTYPES"]

MASKINGS = ("static", "dynamic")
"""static: masks drawn once per example; dynamic: re-drawn every epoch."""
SCHEMES = ("bert", "plain")
"""bert: masked inputs 80% mask / 10% random / 10% kept; plain: all mask."""
CLOCKS = ("wall", "cpu")
"""What a time budget measures: elapsed seconds, or this process's CPU seconds."""
TRAIN_DTYPES = DTYPE_SPELLINGS
"""Names of a training precision (fp16 is named, to be refused with the reason)."""


@dataclass(frozen=True)
class _Either(Spec):
    """The rules of a choice between two strings, worded "must be 'a' or 'b'"."""

    def check(self, value, name: str) -> None:
        a, b = self.names()
        if not isinstance(value, str) or value not in (a, b):
            raise ConfigError(f"{self.what or name} must be {a!r} or {b!r}, not {value!r}",
                              field=name)


def _either(default: str, choices: tuple[str, str], help: str, what: str) -> Any:
    return dataclasses.field(default=default,
                             metadata={"spec": _Either(str, help, choices=choices, what=what)})


def _fraction(default: float, help: str, low_open: bool) -> Any:
    return option(default, float, help, low=0, low_open=low_open, high=1, high_open=True)


@dataclass(frozen=True)
class TrainRequest(Request):
    """Options of the shared training loop (:func:`infill.training.loop.train`).

    masking, scheme, mask_rate -- which positions become labels and how their inputs change;
        ``span`` > 1: contiguous spans of lengths ~ Geometric(``span_p``); ``whole_word``:
        every piece of a chosen word (not with spans)
    damage_rate        -- Ithaca-style ``-`` damage (families with a missing symbol)
    steps / epochs     -- the plan (one of them); ``time_budget`` / ``stop_after`` end a run
                          earlier (``budget_clock``: wall or CPU seconds)
    batch_size, lr, weight_decay, warmup, clip -- AdamW, linear warmup then decay, gradient-norm
                          clipping (0: none)
    seed, split_seed   -- the masks, batches and initialization; the train/validation/test split
                          (``val_fraction``, ``test_fraction``; ``max_val_examples`` evaluated)
    eval_every, checkpoint_every, snapshot_every -- in steps (snapshot 0: none)
    resume             -- continue the checkpoint in ``out``
    progress, device, dtype -- progress bar (None: when stderr is a terminal); where and in
                          which precision (bf16 autocast; weights stay float32)
    """

    KIND = "training"

    out: str = option(dataclasses.MISSING, str, "Output directory (checkpoint, logs, final "
                      "model).")
    masking: str = _either("dynamic", MASKINGS, "static: masks drawn once per example; "
                           "dynamic: re-drawn every epoch.", "--masking")
    scheme: str = _either("bert", SCHEMES, "bert: masked inputs 80% mask / 10% random / 10% "
                          "kept; plain: all mask.", "masking scheme")
    mask_rate: float = option(0.15, float, low=0, low_open=True, high=1, high_open=True)
    span: int = option(1, int, "Longest masked span; >1 masks contiguous spans (lengths ~ "
                       "Geometric(--span-p)).", low=1)
    span_p: float = option(0.2, float, "Parameter of the geometric span-length distribution "
                           "(mean about 1/p).", low=0, low_open=True, high=1,
                           what="span probability")
    whole_word: bool = option(False, bool, "Mask whole words (all pieces of a word together; "
                              "english).")
    bucket: bool = option(False, bool, "Batch examples of similar length together (less "
                          "padding, faster).")
    damage_rate: float = option(0.0, float, "Ithaca-style '-' damage rate (greek only; default "
                                "0.05 for greek).", low=0, high=1, high_open=True)
    steps: int | None = option(None, int, "Planned optimizer steps.", low=1, optional=True)
    epochs: float | None = option(None, float, "Planned epochs (if --steps not given).", low=0,
                                  low_open=True, optional=True)
    time_budget: float | None = option(None, float, "Stop (and save) once the run has taken "
                                       "this many seconds in all (a resumed run counts the time "
                                       "before).", low=0, low_open=True, optional=True)
    budget_clock: str = _either("wall", CLOCKS, "What --time-budget measures: elapsed or CPU "
                                "seconds.", "budget clock")
    batch_size: int = option(32, int, low=1, high=65536)
    lr: float = option(1e-3, float, "Peak learning rate [default: 1e-3].", low=0, low_open=True,
                       what="'lr'")
    weight_decay: float = option(0.01, float, "AdamW weight decay of the weight matrices "
                                 "(biases and norms: none).", low=0)
    warmup: int = option(100, int, low=0)
    clip: float = option(1.0, float, "Clip the gradient norm to this (0: no clipping).", low=0)
    seed: int = option(0, int, low=0, high=MAX_SEED)
    split_seed: int = option(0, int, "Seed of the train/validation/test split.", low=0,
                             high=MAX_SEED)
    val_fraction: float = _fraction(0.05, "Fraction of the examples held out for validation.",
                                    low_open=True)
    test_fraction: float = _fraction(0.05, "Fraction of the examples held out for testing.",
                                     low_open=False)
    max_val_examples: int = option(512, int, "Validation examples evaluated (the first of the "
                                   "validation split).", low=1)
    eval_every: int = option(200, int, low=1)
    checkpoint_every: int = option(200, int, low=1)
    snapshot_every: int = option(0, int, "Also save the loadable model to OUT/snapshots/step<N>/"
                                 " every N steps.", low=0)
    resume: bool = option(False, bool, "Continue from the checkpoint in --out.")
    stop_after: int | None = option(None, int, "End this run after this step (the schedule "
                                    "still plans --steps).", low=0, optional=True)
    progress: bool | None = option(None, bool, "Progress bar with ETA on stderr [default: when "
                                   "stderr is a terminal].", optional=True)
    device: str | None = option(None, str, "cpu, cuda, cuda:N [default: cuda if available].",
                                optional=True)
    dtype: str | None = option(None, str, "float32, or bf16: bf16 autocast (weights stay "
                               "float32).", choices=TRAIN_DTYPES, optional=True)

    def normalize(self) -> None:
        if isinstance(self.out, os.PathLike):
            object.__setattr__(self, "out", os.fspath(self.out))

    def check(self) -> None:
        try:
            devices.resolve_device(self.device)          # a device this machine lacks
        except ConfigError as e:
            e.field = "device"
            raise
        if self.dtype in ("fp16", "float16"):
            raise ConfigError("fp16 training needs loss scaling, which infill train does not "
                              "do; use 'dtype' bf16", field="dtype")
        if self.whole_word and self.span > 1:
            raise ConfigError("'whole_word' and 'span' > 1 are two different maskings: choose "
                              "one", field=("whole_word", "span"))
        if self.steps is None and self.epochs is None:
            raise ConfigError("give 'steps' or 'epochs'", field=("steps", "epochs"))
        if not self.val_fraction + self.test_fraction < 1:
            raise ConfigError("validation/test fractions must be in (0, 1) and sum to less "
                              "than 1", field="test_fraction")

    def autocast_dtype(self):
        """The autocast precision of the forward pass: None (float32) or torch.bfloat16.
        Weights, gradients and optimizer state stay float32 (mixed precision)."""
        if self.dtype in ("bf16", "bfloat16"):
            return torch.bfloat16
        return None

    def validate(self) -> None:
        """Deprecated: a request is checked when it is made (this checks it again)."""
        warnings.warn("TrainRequest.validate() is no longer needed: a request is checked when "
                      "it is made", DeprecationWarning, stacklevel=2)
        Request.__post_init__(self)


TrainConfig = TrainRequest
"""The old name of :class:`TrainRequest` (still importable)."""


def _size(high: int, help: str, low: int = 1) -> Any:
    return option(None, int, help, low=low, high=high, optional=True)


@dataclass(frozen=True)
class ModelOptions(Request):
    """The family's model options; None: the family's default. Each family takes the ones that
    apply to it (and refuses the others): english ``vocab_size``, ``init_from`` (a BERT masked
    LM's weights and vocabulary); english and greek ``dropout``; greek ``conv_kernel``,
    ``words``, ``inscriptions`` (an EpiDoc folder whose training split joins the corpus,
    ``inscription_copies`` times) and ``init_from`` (a character model's weights)."""

    KIND = "model"

    layers: int | None = _size(256, "Transformer layers.")
    hidden: int | None = _size(16384, "Hidden size.")
    heads: int | None = _size(1024, "Attention heads.")
    ff: int | None = _size(65536, "Feed-forward size [default: 4 x hidden].")
    max_length: int | None = _size(65536, "Longest input in tokens.")
    vocab_size: int | None = _size(1_000_000, "WordPiece vocabulary (english).")
    conv_kernel: int | None = _size(1023, "Residual convolution over this many neighbouring "
                                    "characters (greek; 0 = none).", low=0)
    words: int | None = _size(1_000_000, "Word stream over this many most frequent words "
                              "(greek; Ithaca's; 0 = none).", low=0)
    inscriptions: str | None = option(None, str, "EpiDoc folder (IOSPE) whose training split "
                                      "joins the corpus (greek); several: repeat the flag (API: "
                                      "a list, or the folders joined by os.pathsep), each split "
                                      "by inscription on its own.", optional=True)
    inscription_copies: int | None = _size(1000, "Differently packed copies of the "
                                           "inscriptions per epoch (greek) [default: 4].")
    dropout: float | None = option(None, float, "Dropout of the hidden layers and attention "
                                   "(english, greek) [default: 0.1].", low=0, high=1,
                                   high_open=True, optional=True)
    init_from: str | None = option(None, str, "Start from this model's weights: a character "
                                   "model (greek), or a BERT directory or builtin:english with "
                                   "the same architecture, whose vocabulary the run adopts "
                                   "(english).", optional=True)

    def normalize(self) -> None:
        if isinstance(self.inscriptions, (list, tuple)):     # several folders: one string
            joined = os.pathsep.join(os.fspath(f) for f in self.inscriptions)
            object.__setattr__(self, "inscriptions", joined or None)
        for name in ("inscriptions", "init_from"):
            if isinstance(getattr(self, name), os.PathLike):
                object.__setattr__(self, name, os.fspath(getattr(self, name)))

    def check(self) -> None:
        for name in ("inscriptions", "init_from"):
            value = getattr(self, name)
            if value is not None and not str(value).strip():
                raise ConfigError(f"'{name}' is empty: give a path (or leave it out)", field=name)

    def given(self) -> dict[str, Any]:
        """The options set (not None): the keywords the family is built with."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}
