"""The masked-LM training loop shared by every model family (English BERT, Greek chars, ESM2).

A family (see :class:`Family`) knows how to turn a corpus into token-id examples, build a model,
compute output logits at selected positions and save the final artifact in the format
:func:`infill.load_model` reads. Everything else lives here:

- **Split.** Examples are split once into train / validation / test by a seeded permutation
  (:func:`split_indices`; ``split_seed``, default 0). The split is written to ``split.json``.
- **Masking.** Every maskable position (``Family.maskable``; never specials, never ``-``) is chosen
  independently with probability ``mask_rate`` (0.15), at least one per example. Chosen positions
  become labels. Scheme ``bert``: of the chosen inputs 80% are replaced by the mask id, 10% by a
  random token (``Family.random_ids``), 10% left unchanged; scheme ``plain``: all replaced by the
  mask id. ``span > 1`` masks contiguous spans instead (SpanBERT / Ithaca style: lengths drawn
  from Geometric(``span_p``) clipped to ``span``, until ``mask_rate`` of the maskable positions are
  chosen; one 80/10/10 decision per span), which trains the model for multi-token gaps.
  ``whole_word``: words (a piece and the continuation pieces after it, ``Family.continues_word``)
  are chosen instead of positions, each with probability ``mask_rate`` (at least one), and all
  their pieces become labels, with one 80/10/10 decision per word (BERT's whole-word masking).
  The draw for example ``i`` in epoch ``e`` is a pure function of ``(seed, e, i)``.
- **Batches.** Each epoch is a seeded permutation of the training examples cut into batches;
  ``bucket``: examples of similar length are batched together (less padding; see
  :meth:`Trainer._bucketed`), still a pure function of ``(seed, epoch)``.
  ``static``: the masks are drawn once per example when the dataset is built (epoch 0) and reused
  every epoch (saved in the checkpoint); ``dynamic``: re-drawn every epoch (the HCB beam-search
  paper, §7). Validation masks are always fixed (drawn once with their own stream).
- **Damage** (Ithaca-style, families with ``damage_id``): before masking, each non-special input
  position is replaced by ``damage_id`` (``-``) with probability ``damage_rate``; damaged positions
  are never labels and never masked. Static/dynamic applies to damage too.
- **Loop.** AdamW, linear warmup then linear decay over the planned steps (``steps``, or
  ``epochs`` x batches per epoch); stops early once the run has taken ``time_budget`` seconds
  in all, the runs it resumes included (wall clock, or CPU time with ``budget_clock="cpu"``).
  Evaluation before the
  first step and every ``eval_every`` steps: validation loss (mean cross-entropy per label) and accuracy (argmax), printed
  and appended to ``train_log.jsonl``. Checkpoint (model, optimizer, scheduler, step, torch RNG
  state, static masks) to ``checkpoint.pt`` every ``checkpoint_every`` steps and at the end;
  ``snapshot_every`` also saves the loadable model to ``snapshots/step<N>/`` (for accuracy-vs-
  training-time curves); ``resume=True`` continues from it and gives the same result as an uninterrupted run (on CPU);
  a larger ``steps`` on resume extends the run. Ctrl-C or SIGTERM stops a run at the next step
  boundary and saves both (a resumed run is then exact too).
"""
from __future__ import annotations

import json
import math
import os
import random
import signal
import sys
import threading
import time
import warnings
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from infill.data.files import files_of, path_record, read_torch_file
from infill.data.splits import split_indices
from infill.errors import ConfigError, InputError, ModelLoadError
from infill.models.device import cpu_supports_bf16, resolve_device
from infill.progress import progress as progress_bar
from infill.training.request import TrainConfig, TrainRequest

__all__ = ["TrainRequest", "TrainConfig", "Family", "TrainResult", "Trainer", "train", "draw_corruption",
           "collate", "validation_metrics", "CHECKPOINT", "LOG"]

CHECKPOINT = "checkpoint.pt"
LOG = "train_log.jsonl"
_VAL_EPOCH = -1        # the RNG stream of the (fixed) validation masks
_EPOCH_STREAM = 104_729  # salt of the per-epoch shuffle's random stream
BUCKET_BATCHES = 50     # --bucket: batches per length-sorted group
MAX_STEPS = 10 ** 9      # a plan beyond this is a typo (and would overflow the schedule)


class Family(ABC):
    """What the loop needs from a model family. Labels are input ids (output id == input id)."""

    name: str = "?"
    mask_id: int
    pad_id: int
    damage_id: int | None = None
    #: the family's defaults for the options ``infill train`` leaves unset
    default_damage_rate: float = 0.0
    default_lr: float = 1e-3

    @abstractmethod
    def load_examples(self, corpus: Path | tuple[Path, ...], out: Path) -> list[list[int]]:
        """Token-id examples (specials included, each <= the model's max length).

        May write what the final artifact needs (e.g. a trained tokenizer) under ``out``; called
        again on resume, where it must reproduce the same examples (reuse what it wrote).
        """

    @abstractmethod
    def maskable(self, ids: torch.Tensor) -> torch.Tensor:
        """Bool tensor, same shape as ``ids``: positions that may be masked/damaged (no specials)."""

    @abstractmethod
    def random_ids(self) -> torch.Tensor:
        """1-D long tensor: the ids a "random token" replacement draws from (uniformly)."""

    @abstractmethod
    def build_model(self) -> nn.Module:
        """A freshly initialized model (the loop seeds torch before calling this)."""

    @abstractmethod
    def logits(self, model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor,
               select: torch.Tensor) -> torch.Tensor:
        """[N, V] output logits at the positions where ``select`` ([B, T] bool) is True, row-major."""

    @abstractmethod
    def save(self, model: nn.Module, out: Path) -> None:
        """Write the final artifact (loadable with :func:`infill.load_model`) into ``out``."""

    def save_memory(self, out: Path, train: list[list[int]]) -> None:
        """Write what the artifact keeps of its training examples beside it (default: nothing;
        the english family writes a corpus memory, :mod:`infill.models.memory`, the greek family
        a lexicon, :mod:`infill.models.lexicon`)."""

    def split_examples(self, n: int, seed: int, val_fraction: float, test_fraction: float
                       ) -> dict[str, list[int]]:
        """Train / validation / test indices of the ``n`` examples :meth:`load_examples` gave
        (default: :func:`infill.data.splits.split_indices`)."""
        return split_indices(n, seed, val_fraction, test_fraction)

    def continues_word(self, ids: torch.Tensor) -> torch.Tensor | None:
        """Bool tensor like ``ids``: True where a token continues the word before it (for
        whole-word masking); None: the family has no words."""
        return None

    def parameter_estimate(self) -> int:
        """Roughly how many parameters :meth:`build_model` will allocate (checked against the
        machine's memory before building it); 0 = unknown."""
        return 0

    def describe(self) -> dict[str, Any]:
        """Model options recorded in ``train_info.json`` (held-out splits are rebuilt from them,
        see :func:`infill.data.splits.heldout`)."""
        return {}


@dataclass
class TrainResult:
    out: str
    step: int
    val_loss: float
    val_accuracy: float
    history: list[dict] = field(default_factory=list)
    stopped: str = "steps"            # "steps" | "time_budget" | "stop_after" | "interrupted"
    n_train: int = 0
    n_val: int = 0
    n_test: int = 0


# ---- data ----------------------------------------------------------------------------------
def draw_corruption(ids: list[int], family: Family, cfg: TrainRequest, epoch: int, index: int
                    ) -> tuple[list[int], list[int]]:
    """(corrupted input ids, labels with -100 where unlabeled) for one example.

    A pure function of (cfg.seed, epoch, index): the same call always gives the same draw.
    """
    rng = np.random.default_rng([cfg.seed, epoch + 2, index])
    x = torch.tensor(ids, dtype=torch.long)
    can = family.maskable(x).numpy().copy()
    inp = list(ids)
    if family.damage_id is not None and cfg.damage_rate > 0:
        dmg = (rng.random(len(ids)) < cfg.damage_rate) & can
        if dmg.sum() >= can.sum():     # keep at least one position to predict
            dmg[np.flatnonzero(can)[0]] = False
        for p in np.flatnonzero(dmg):
            inp[p] = family.damage_id
        can &= ~dmg
    if cfg.span > 1:
        chosen, span_id = _draw_spans(rng, can, cfg)
    elif cfg.whole_word:
        cont = family.continues_word(x)
        if cont is None:
            raise ConfigError(f"the {family.name} family has no words: 'whole_word' is for "
                              "english", field="whole_word")
        chosen, span_id = _draw_words(rng, can, cont.numpy(), cfg.mask_rate)
    else:
        chosen = (rng.random(len(ids)) < cfg.mask_rate) & can
        if not chosen.any() and can.any():
            chosen[rng.choice(np.flatnonzero(can))] = True
        span_id = np.arange(len(ids))
    labels = [-100] * len(ids)
    rand_pool = None
    action = rng.random(len(ids))[span_id]  # one 80/10/10 decision per span
    for p in np.flatnonzero(chosen):
        labels[p] = ids[p]
        if cfg.scheme == "plain" or action[p] < 0.8:
            inp[p] = family.mask_id
        elif action[p] < 0.9:
            if rand_pool is None:
                rand_pool = family.random_ids()
            inp[p] = int(rand_pool[rng.integers(len(rand_pool))])
        # else: unchanged
    return inp, labels


def _draw_words(rng: np.random.Generator, can: np.ndarray, cont: np.ndarray, rate: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """Whole words: each word (a maskable piece not continuing a word, with the maskable
    continuation pieces after it) chosen with probability ``rate``, at least one.
    Returns (chosen [T] bool, word index [T]: the pieces of one word share it)."""
    T = len(can)
    word = np.arange(T)
    for p in range(1, T):
        if can[p] and cont[p] and can[p - 1]:
            word[p] = word[p - 1]
    starts = np.flatnonzero(can & (word == np.arange(T)))
    chosen = np.zeros(T, dtype=bool)
    if not len(starts):
        return chosen, word
    pick = starts[rng.random(len(starts)) < rate]
    if not len(pick):
        pick = starts[rng.integers(len(starts)):][:1]
    chosen = np.isin(word, pick) & can
    return chosen, word


def _draw_spans(rng: np.random.Generator, can: np.ndarray, cfg: TrainRequest
                ) -> tuple[np.ndarray, np.ndarray]:
    """Contiguous masked spans (SpanBERT-style): lengths ~ Geometric(span_p) clipped to
    ``cfg.span``, starts uniform over maskable positions, until ``mask_rate`` of the maskable
    positions are chosen (at least one). A span stops at an unmaskable position (special or damage).
    Returns (chosen [T] bool, span index [T]: positions of one span share it)."""
    T = len(can)
    chosen = np.zeros(T, dtype=bool)
    span_id = np.arange(T)
    cand = np.flatnonzero(can)
    if not len(cand):
        return chosen, span_id
    budget = max(1, int(round(cfg.mask_rate * len(cand))))
    for _ in range(4 * budget):                       # bounded: each try chooses >= 0 positions
        if chosen.sum() >= budget:
            break
        length = min(int(rng.geometric(cfg.span_p)), cfg.span, budget - int(chosen.sum()))
        start = int(cand[rng.integers(len(cand))])
        end = start
        while end < T and end - start < length and can[end]:
            end += 1
        chosen[start:end] = True
        span_id[start:end] = start
    return chosen, span_id


def collate(batch: list[tuple[list[int], list[int]]], pad_id: int
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Pad (inputs, labels) pairs to [B, T] tensors: input_ids, attention_mask, labels."""
    T = max(len(x) for x, _ in batch)
    ids = torch.full((len(batch), T), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), T), -100, dtype=torch.long)
    attn = torch.zeros((len(batch), T), dtype=torch.bool)
    for r, (x, y) in enumerate(batch):
        ids[r, :len(x)] = torch.tensor(x)
        labels[r, :len(y)] = torch.tensor(y)
        attn[r, :len(x)] = True
    return ids, attn, labels


def _loss(family: Family, model: nn.Module, ids, attn, labels, reduction="mean",
          autocast: torch.dtype | None = None):
    dev = next(model.parameters()).device
    ids, attn, labels = ids.to(dev), attn.to(dev), labels.to(dev)
    select = labels != -100
    with torch.autocast(dev.type, dtype=autocast or torch.bfloat16, enabled=autocast is not None):
        logits = family.logits(model, ids, attn, select)
    logits = logits.float()
    return nn.functional.cross_entropy(logits, labels[select], reduction=reduction), logits, labels[select]


@torch.inference_mode()
def validation_metrics(family: Family, model: nn.Module, batches: list,
                       autocast: torch.dtype | None = None) -> tuple[float, float]:
    """(mean cross-entropy per label, accuracy) over pre-collated validation batches."""
    was_training = model.training
    model.eval()
    total, correct, n = 0.0, 0, 0
    for ids, attn, labels in batches:
        loss, logits, gold = _loss(family, model, ids, attn, labels, reduction="sum",
                                   autocast=autocast)
        total += float(loss)
        correct += int((logits.argmax(-1) == gold).sum())
        n += int(gold.numel())
    model.train(was_training)
    return total / max(n, 1), correct / max(n, 1)


# ---- the loop ------------------------------------------------------------------------------
def _note_changed(name: str, saved: float, given: float, step: int) -> None:
    """A warning where a resumed run trains with another ``name`` than its checkpoint did (a
    flag left out of the resuming command takes its default)."""
    if not math.isclose(saved, given, rel_tol=1e-12, abs_tol=0.0):
        warnings.warn(f"resuming with {name} {given:g} from step {step + 1} (the checkpoint "
                      f"trained with {saved:g}; pass the same value to continue it unchanged)",
                      stacklevel=4)


def _schedule(warmup: int, total: int):
    def f(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))
    return f


def available_memory() -> int | None:
    """Bytes of memory available now (Linux /proc/meminfo), or None when unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def transformer_parameters(layers: int, hidden: int, ff: int, embeddings: int) -> int:
    """Parameters of a transformer encoder: per layer attention (4 h^2) + feed-forward (2 h ff),
    plus ``embeddings`` rows of width h (vocabulary, positions, output head)."""
    return layers * (4 * hidden * hidden + 2 * hidden * ff) + embeddings * hidden


def _check_memory(family: Family) -> None:
    """Refuse a model whose training state (weights, gradients, two Adam moments: 16 bytes per
    parameter) cannot fit in the memory this machine has free."""
    params = family.parameter_estimate()
    free = available_memory()
    if params and free and 16 * params > free:
        raise ConfigError(f"a model of about {params / 1e6:,.0f}M parameters needs about "
                          f"{16 * params / 2 ** 30:,.1f} GiB to train; {free / 2 ** 30:,.1f} GiB "
                          "are free: choose smaller 'hidden' / 'layers' / 'ff' / 'max_length'",
                          field=("hidden", "layers", "ff", "max_length"))


def _atomic_save(obj, path: Path) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


CHECKPOINT_FIELDS = {"model": dict, "optimizer": dict, "scheduler": dict, "torch_rng": torch.Tensor,
                     "py_rng": (list, tuple), "step": int, "history": list,
                     "elapsed": (int, float), "masking": str, "seed": int, "family": str}
"""What a training checkpoint holds (and the types :meth:`Trainer.restore` relies on)."""


def load_checkpoint(path: Path) -> dict:
    """A training checkpoint, read without unpickling code (``weights_only=True``: tensors,
    numbers, strings, lists, tuples and dicts only)."""
    ck = read_torch_file(path, "training checkpoint")
    if not _is_checkpoint(ck):
        raise ModelLoadError(f"{path} is not an infill training checkpoint (or from an older "
                             "version); start afresh in another 'out'", field="out")
    return ck


def _is_checkpoint(ck) -> bool:
    """The fields and value types :meth:`Trainer.restore` relies on (a file that loads but holds
    anything else is refused before it is used)."""
    if not isinstance(ck, dict) or not set(CHECKPOINT_FIELDS) <= set(ck):
        return False
    if any(not isinstance(ck[k], t) or isinstance(ck[k], bool) for k, t in CHECKPOINT_FIELDS.items()):
        return False
    py = ck["py_rng"]
    history_ok = all(isinstance(e, dict) and isinstance(e.get("step"), int)
                     and not isinstance(e.get("step"), bool) for e in ck["history"])
    return (0 <= ck["step"] <= MAX_STEPS and math.isfinite(ck["elapsed"]) and history_ok
            and ck["torch_rng"].dtype == torch.uint8
            and ck["torch_rng"].numel() == torch.get_rng_state().numel()
            and len(py) == 3 and isinstance(py[1], (list, tuple)) and len(py[1]) == 625
            and all(isinstance(x, int) for x in py[1])
            and isinstance(ck["scheduler"].get("last_epoch"), int)
            and "base_lrs" in ck["scheduler"])


def _py_state(state):
    """random.getstate() round-trips through the checkpoint as nested lists: back to tuples."""
    return (state[0], tuple(state[1]), state[2])


class Trainer:
    """One training run: :meth:`restore` (or start), :meth:`run_steps`, :meth:`finalize`."""

    def __init__(self, family: Family, corpus: str | Path | tuple[str, ...], cfg: TrainRequest):
        if not isinstance(cfg, TrainRequest):
            raise ConfigError(f"config must be a TrainRequest, got {type(cfg).__name__}")
        if family.damage_id is None and cfg.damage_rate > 0:
            raise ConfigError(f"the {family.name} family has no missing-character symbol: "
                              "damage rate must be 0")
        _check_memory(family)
        self.family, self.cfg = family, cfg
        self.corpus = corpus if isinstance(corpus, tuple) else Path(corpus)
        for path in files_of(self.corpus):
            try:
                found = path.is_file()
            except (OSError, ValueError):      # a name no file can have (NUL, lone surrogate)
                found = False
            if not found:
                raise InputError(f"corpus file not found: {str(path)!r}")
        self.out = Path(cfg.out)
        self.ckpt_path = self.out / CHECKPOINT
        self._check_out()
        self._prepare_data()
        torch.manual_seed(cfg.seed)
        random.seed(cfg.seed)
        self.device = resolve_device(cfg.device)
        self.autocast = cfg.autocast_dtype()
        if self.autocast is not None and self.device.type == "cpu" and not cpu_supports_bf16():
            warnings.warn("bf16 on this CPU is emulated (no AVX512-BF16/AMX): expect training "
                          "to be slower than float32", stacklevel=2)
        self.model = family.build_model().to(self.device)
        self.model.train()
        decay = [p for n, p in self.model.named_parameters() if p.dim() >= 2]
        no_decay = [p for n, p in self.model.named_parameters() if p.dim() < 2]
        self.opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                      {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr)
        self.sched = torch.optim.lr_scheduler.LambdaLR(
            self.opt, _schedule(min(cfg.warmup, self.total), self.total))
        self.static = None
        if cfg.masking == "static":
            self.static = {i: draw_corruption(self.examples[i], family, cfg, 0, i)
                           for i in self.train_idx}
        self.step, self.history = 0, []
        self.elapsed_before = self.cpu_before = 0.0
        self.train_loss: float | None = None        # none yet (a resumed run: none this run)
        self._epoch_batches: tuple[int, list] = (-1, [])
        self.stop_request: list[int] = []
        self.t0, self.c0 = time.time(), time.process_time()

    # ---- setup ------------------------------------------------------------------------------
    def _check_out(self) -> None:
        cfg, out = self.cfg, self.out
        if out.exists() and not out.is_dir():
            raise ConfigError(f"'out' {str(out)!r} is a file", field="out")
        if cfg.resume and not self.ckpt_path.exists():
            raise ConfigError(f"'resume': no checkpoint in {out}", field="resume")
        if not cfg.resume:
            if self.ckpt_path.exists():
                raise ConfigError(f"{out} already holds a checkpoint: pass 'resume' to continue "
                                  "it, or choose another 'out'", field=("out", "resume"))
            if (out / "train_info.json").exists():
                raise ConfigError(f"{out} already holds a trained model; choose another 'out'",
                                  field="out")
        try:
            out.mkdir(parents=True, exist_ok=True)
            if not cfg.resume and (out / LOG).exists():
                (out / LOG).unlink()   # a run killed before its first checkpoint: start afresh
        except OSError as e:
            raise ConfigError(f"cannot write to 'out' {str(out)!r}: {e.strerror or e}",
                              field="out") from None

    def _prepare_data(self) -> None:
        cfg, family = self.cfg, self.family
        self.examples = family.load_examples(self.corpus, self.out)
        self.split = family.split_examples(len(self.examples), cfg.split_seed, cfg.val_fraction,
                                           cfg.test_fraction)
        self.train_idx = self.split["train"]
        val_idx = self.split["validation"][: cfg.max_val_examples]
        (self.out / "split.json").write_text(json.dumps({
            "seed": cfg.split_seed, "val_fraction": cfg.val_fraction,
            "test_fraction": cfg.test_fraction, "n_examples": len(self.examples),
            "sizes": {k: len(v) for k, v in self.split.items()}, **self.split}))
        self.per_epoch = math.ceil(len(self.train_idx) / cfg.batch_size)
        planned = cfg.steps if cfg.steps is not None else cfg.epochs * self.per_epoch
        if not planned <= MAX_STEPS:
            raise ConfigError(f"{planned:.3g} steps planned ({self.per_epoch:,} per epoch): at "
                              f"most {MAX_STEPS:,}; ask for fewer 'steps' / 'epochs'",
                              field=("steps", "epochs"))
        self.total = cfg.steps if cfg.steps is not None else max(1, int(math.ceil(planned)))
        self.val_batches = []
        for s in range(0, len(val_idx), cfg.batch_size):
            chunk = val_idx[s: s + cfg.batch_size]
            self.val_batches.append(collate(
                [draw_corruption(self.examples[i], family, cfg, _VAL_EPOCH, i) for i in chunk],
                family.pad_id))

    # ---- checkpoint -------------------------------------------------------------------------
    def restore(self) -> None:
        """Continue from ``checkpoint.pt``: weights, optimizer, schedule, RNG states, history;
        the log is cut back to the checkpoint (entries written after it are redone)."""
        ck = load_checkpoint(self.ckpt_path)
        cfg = self.cfg
        if ck["family"] != self.family.name:
            raise ConfigError(f"'resume': {self.out} holds a {ck['family']} run, not "
                              f"{self.family.name}", field="resume")
        if ck["masking"] != cfg.masking or ck["seed"] != cfg.seed:
            raise ConfigError(f"'resume': checkpoint was trained with masking={ck['masking']}, "
                              f"seed={ck['seed']}; pass the same options", field="resume")
        try:
            self.model.load_state_dict(ck["model"])
            self.opt.load_state_dict(ck["optimizer"])
        except (RuntimeError, ValueError, KeyError, TypeError) as e:
            raise ConfigError(f"'resume': {self.ckpt_path} does not fit this model ("
                              f"{str(e).splitlines()[0][:120]}); pass the same model options",
                              field="resume") from None
        try:
            self.sched.load_state_dict(ck["scheduler"])
            torch.set_rng_state(ck["torch_rng"])
            if self.device.type == "cuda" and ck.get("cuda_rng") is not None:
                torch.cuda.set_rng_state(ck["cuda_rng"], self.device)
            random.setstate(_py_state(ck["py_rng"]))
            static = None if self.static is None else \
                {int(k): (list(v[0]), list(v[1])) for k, v in ck["static"].items()}
        except (RuntimeError, ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
            raise ModelLoadError(f"{self.ckpt_path} is not an infill training checkpoint "
                                 f"({str(e).splitlines()[0][:120] if str(e) else type(e).__name__})"
                                 "; start afresh in another 'out'", field="out") from None
        # this run's peak lr and weight decay (the saved ones were the old run's: a resume with
        # another --lr or --weight-decay takes them from here on), and the next step's learning
        # rate under this run's plan (the saved one ends the old plan: 0 at its last step, when
        # a finished run is extended with more --steps)
        _note_changed("lr", self.sched.base_lrs[0], cfg.lr, ck["step"])
        _note_changed("weight_decay", self.opt.param_groups[0]["weight_decay"],
                      cfg.weight_decay, ck["step"])
        self.sched.base_lrs = [cfg.lr] * len(self.opt.param_groups)
        self.opt.param_groups[0]["weight_decay"] = cfg.weight_decay
        for group, base in zip(self.opt.param_groups, self.sched.base_lrs):
            group["initial_lr"] = base
            group["lr"] = base * self.sched.lr_lambdas[0](self.sched.last_epoch)
        self.step = ck["step"]
        self.history = [e for e in ck["history"] if self._planned(e["step"])]
        self.elapsed_before, self.cpu_before = ck["elapsed"], ck.get("cpu_elapsed", 0.0)
        # the plan (steps / epochs) is this run's: the same options continue the saved run
        # exactly; more steps extend it (the learning-rate schedule is stretched accordingly)
        if static is not None:
            self.static = static
        with open(self.out / LOG, "w") as f:       # drop entries logged after the checkpoint
            for entry in self.history:
                f.write(json.dumps(entry) + "\n")

    def _planned(self, step: int) -> bool:
        """Whether an uninterrupted run logs validation at ``step``: the untrained model, every
        ``eval_every`` steps and the last (a stopped run's row at its stop step is not; a
        resumed run drops it, so that its log equals an uninterrupted run's)."""
        return step == 0 or step % self.cfg.eval_every == 0 or step == self.total

    def save_checkpoint(self) -> None:
        _atomic_save({"model": self.model.state_dict(), "optimizer": self.opt.state_dict(),
                      "scheduler": self.sched.state_dict(), "torch_rng": torch.get_rng_state(),
                      "py_rng": random.getstate(), "step": self.step, "total": self.total,
                      "history": self.history, "elapsed": self.elapsed(),
                      "cpu_elapsed": self.used_cpu(), "family": self.family.name,
                      "masking": self.cfg.masking, "seed": self.cfg.seed, "static": self.static,
                      "cuda_rng": (torch.cuda.get_rng_state(self.device)
                                   if self.device.type == "cuda" else None)},
                     self.ckpt_path)

    # ---- clocks and log ---------------------------------------------------------------------
    def elapsed(self) -> float:
        return self.elapsed_before + time.time() - self.t0

    def used_cpu(self) -> float:
        return self.cpu_before + time.process_time() - self.c0

    def used(self) -> float:
        return self.used_cpu() if self.cfg.budget_clock == "cpu" else self.elapsed()

    def evaluate(self, loss: float | None) -> dict:
        vl, va = validation_metrics(self.family, self.model, self.val_batches, self.autocast)
        entry = {"step": self.step, "epoch": round(self.step / self.per_epoch, 3),
                 "train_loss": loss, "val_loss": vl, "val_accuracy": va,
                 "elapsed_s": round(self.elapsed(), 1), "cpu_s": round(self.used_cpu(), 1)}
        self.history.append(entry)
        with open(self.out / LOG, "a") as f:
            f.write(json.dumps(entry) + "\n")
        return entry

    # ---- the loop ---------------------------------------------------------------------------
    def batch(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The training batch of the current step (a pure function of the seed and the step)."""
        cfg = self.cfg
        epoch, k = divmod(self.step, self.per_epoch)
        rng = np.random.default_rng([cfg.seed, _EPOCH_STREAM, epoch])
        order = rng.permutation(self.train_idx)
        if cfg.bucket:
            chunk = self._bucketed(epoch, order, rng)[k]
        else:
            chunk = order[k * cfg.batch_size: (k + 1) * cfg.batch_size].tolist()
        pairs = [self.static[i] if self.static is not None
                 else draw_corruption(self.examples[i], self.family, cfg, epoch, i) for i in chunk]
        return collate(pairs, self.family.pad_id)

    def _bucketed(self, epoch: int, order: np.ndarray, rng: np.random.Generator
                  ) -> list[list[int]]:
        """The batches of one epoch with length bucketing: the shuffled examples in groups of
        ``BUCKET_BATCHES`` batches, sorted by length within a group, cut into batches, and the
        batches shuffled (same number of batches per epoch; cached per epoch)."""
        if self._epoch_batches[0] != epoch:
            B, size = self.cfg.batch_size, self.cfg.batch_size * BUCKET_BATCHES
            batches = []
            for s in range(0, len(order), size):
                group = sorted(order[s:s + size].tolist(), key=lambda i: len(self.examples[i]))
                batches += [group[j:j + B] for j in range(0, len(group), B)]
            self._epoch_batches = (epoch, [batches[j] for j in rng.permutation(len(batches))])
        return self._epoch_batches[1]

    def train_step(self) -> None:
        ids, attn, labels = self.batch()
        loss, _, _ = _loss(self.family, self.model, ids, attn, labels, autocast=self.autocast)
        if not torch.isfinite(loss):
            raise ConfigError(f"training diverged at step {self.step} (loss {float(loss)}); "
                              "lower 'lr'", field="lr")
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.clip or math.inf)
        if not torch.isfinite(norm):        # a finite loss can still have an overflowing gradient
            raise ConfigError(f"training diverged at step {self.step} (gradient norm "
                              f"{float(norm)}); lower 'lr' or 'dropout'", field=("lr", "dropout"))
        self.opt.step()
        self.sched.step()
        self.step += 1
        self.train_loss = float(loss.detach())

    def run_steps(self, bar=None) -> str:
        """Train until the plan, the time budget, ``stop_after`` or a stop request ends the run;
        returns why it stopped."""
        cfg = self.cfg
        while self.step < self.total:
            if cfg.time_budget is not None and self.used() >= cfg.time_budget:
                return "time_budget"
            if cfg.stop_after is not None and self.step >= cfg.stop_after:
                return "stop_after"
            if self.stop_request:
                return "interrupted"
            self.train_step()
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{self.train_loss:.3f}", refresh=False)
            if self.step % cfg.eval_every == 0 or self.step == self.total:
                e = self.evaluate(self.train_loss)
                tqdm.write(f"step {self.step}/{self.total}  train_loss {self.train_loss:.4f}  "
                           f"val_loss {e['val_loss']:.4f}  val_acc {e['val_accuracy']:.4f}",
                           file=sys.stderr)    # progress: stdout is the result's alone
            if self.step % cfg.checkpoint_every == 0:
                self.save_checkpoint()
            if cfg.snapshot_every and self.step % cfg.snapshot_every == 0:
                self.model.eval()
                self.family.save(self.model, self.out / "snapshots" / f"step{self.step}")
                self.model.train()
        return "steps"

    def finalize(self, stopped: str) -> TrainResult:
        """Evaluate (if the last step was not), checkpoint, save the model and its record."""
        if self.history[-1]["step"] != self.step:
            self.evaluate(self.train_loss)
        self.save_checkpoint()
        self.model.eval()
        self.family.save(self.model, self.out)
        self.family.save_memory(self.out, [self.examples[i] for i in self.train_idx])
        last = self.history[-1]
        result = TrainResult(out=str(self.out), step=self.step, val_loss=last["val_loss"],
                             val_accuracy=last["val_accuracy"], history=self.history,
                             stopped=stopped, n_train=len(self.split["train"]),
                             n_val=len(self.split["validation"]), n_test=len(self.split["test"]))
        info = {"family": self.family.name, "corpus": path_record(self.corpus),
                "config": asdict(self.cfg), "model": self.family.describe(),
                "result": {k: v for k, v in asdict(result).items() if k != "history"}}
        (self.out / "train_info.json").write_text(json.dumps(info, indent=1))
        return result

    def run(self) -> TrainResult:
        """restore (with ``resume``) -> evaluate the untrained model -> run_steps -> finalize.
        Ctrl-C (SIGINT) and SIGTERM (``kill``) end the run at the next step boundary and keep
        what was learned (checkpoint and model are saved), so ``resume`` continues it exactly;
        a second Ctrl-C stops at once without saving (the last checkpoint stays)."""
        if self.cfg.resume:
            self.restore()
        if not self.history:        # the untrained model's validation numbers, for reference
            self.evaluate(None)
        bar = progress_bar(total=self.total, initial=self.step, enabled=self.cfg.progress,
                           desc=f"train {self.family.name}", unit="step")
        previous = {}
        if threading.current_thread() is threading.main_thread():
            previous = {sig: signal.signal(sig, self._request_stop)
                        for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            stopped = self.run_steps(bar)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            bar.close()
        return self.finalize(stopped)

    def _request_stop(self, signum: int, frame) -> None:
        """Signal handler: stop at the next step boundary (a step cut short would leave its
        random draws and a half-updated optimizer in the checkpoint, and a resumed run would
        differ from an uninterrupted one)."""
        if signum == signal.SIGINT and self.stop_request:
            raise KeyboardInterrupt          # Ctrl-C twice: stop now, keep the last checkpoint
        self.stop_request.append(signum)
        if signum == signal.SIGINT:
            tqdm.write("note: stopping after this step (Ctrl-C again to stop at once without "
                       "saving)", file=sys.stderr)


def train(family: Family, corpus: str | Path | tuple[str, ...], cfg: TrainRequest) -> TrainResult:
    """Train ``family``'s model on ``corpus`` with the options in ``cfg``; see the module doc."""
    return Trainer(family, corpus, cfg).run()
