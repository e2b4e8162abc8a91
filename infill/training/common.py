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
  mask id. The draw for example ``i`` in epoch ``e`` is a pure function of ``(seed, e, i)``.
  ``static``: the masks are drawn once per example when the dataset is built (epoch 0) and reused
  every epoch (saved in the checkpoint); ``dynamic``: re-drawn every epoch (the HCB beam-search
  paper, §7). Validation masks are always fixed (drawn once with their own stream).
- **Damage** (Ithaca-style, families with ``damage_id``): before masking, each non-special input
  position is replaced by ``damage_id`` (``-``) with probability ``damage_rate``; damaged positions
  are never labels and never masked. Static/dynamic applies to damage too.
- **Loop.** AdamW, linear warmup then linear decay over the planned steps (``steps``, or
  ``epochs`` x batches per epoch); stops early at ``time_budget`` seconds (wall clock, or this
  process's CPU time with ``budget_clock="cpu"``). Evaluation before the
  first step and every ``eval_every`` steps: validation loss (mean cross-entropy per label) and accuracy (argmax), printed
  and appended to ``train_log.jsonl``. Checkpoint (model, optimizer, scheduler, step, torch RNG
  state, static masks) to ``checkpoint.pt`` every ``checkpoint_every`` steps and at the end;
  ``resume=True`` continues from it and gives the same result as an uninterrupted run (on CPU);
  a larger ``steps`` on resume extends the run. Ctrl-C or SIGTERM stops a run and saves both.
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
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from infill.errors import ConfigError, InputError

__all__ = ["TrainConfig", "Family", "TrainResult", "train", "split_indices", "draw_corruption",
           "collate", "evaluate", "CHECKPOINT", "LOG"]

CHECKPOINT = "checkpoint.pt"
LOG = "train_log.jsonl"
_VAL_EPOCH = -1  # the RNG stream of the (fixed) validation masks


@dataclass
class TrainConfig:
    """Options of the shared loop (family-specific model options go to the family)."""

    out: str
    masking: str = "dynamic"          # "static" | "dynamic"
    scheme: str = "bert"              # "bert" (80/10/10) | "plain" (all -> mask id)
    mask_rate: float = 0.15
    damage_rate: float = 0.0          # Ithaca-style '-' damage (families with damage_id only)
    steps: int | None = None          # planned optimizer steps (or give epochs)
    epochs: float | None = None
    time_budget: float | None = None  # seconds; stop (and save) when exceeded
    budget_clock: str = "wall"        # "wall": elapsed time; "cpu": this process's CPU time
    batch_size: int = 32
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup: int = 100
    clip: float = 1.0
    seed: int = 0
    split_seed: int = 0
    val_fraction: float = 0.05
    test_fraction: float = 0.05
    max_val_examples: int = 512
    eval_every: int = 200
    checkpoint_every: int = 200
    resume: bool = False
    stop_after: int | None = None     # end this run after this step (schedule still plans `steps`)
    progress: bool = True

    def validate(self) -> None:
        if self.budget_clock not in ("wall", "cpu"):
            raise ConfigError(f"budget clock must be 'wall' or 'cpu', not {self.budget_clock!r}")
        if self.masking not in ("static", "dynamic"):
            raise ConfigError(f"--masking must be 'static' or 'dynamic', not {self.masking!r}")
        if self.scheme not in ("bert", "plain"):
            raise ConfigError(f"masking scheme must be 'bert' or 'plain', not {self.scheme!r}")
        if not 0 < self.mask_rate < 1:
            raise ConfigError(f"mask rate must be in (0, 1), got {self.mask_rate}")
        if not 0 <= self.damage_rate < 1:
            raise ConfigError(f"damage rate must be in [0, 1), got {self.damage_rate}")
        if self.steps is None and self.epochs is None:
            raise ConfigError("give --steps or --epochs")
        if self.steps is not None and self.steps < 1:
            raise ConfigError(f"--steps must be >= 1, got {self.steps}")
        if self.epochs is not None and self.epochs <= 0:
            raise ConfigError(f"--epochs must be > 0, got {self.epochs}")
        if self.batch_size < 1:
            raise ConfigError(f"--batch-size must be >= 1, got {self.batch_size}")
        if self.lr <= 0:
            raise ConfigError(f"--lr must be > 0, got {self.lr}")
        if not (0 < self.val_fraction < 1 and 0 <= self.test_fraction < 1
                and self.val_fraction + self.test_fraction < 1):
            raise ConfigError("validation/test fractions must be in (0, 1) and sum to less than 1")


class Family(ABC):
    """What the loop needs from a model family. Labels are input ids (output id == input id)."""

    name: str = "?"
    mask_id: int
    pad_id: int
    damage_id: int | None = None

    @abstractmethod
    def load_examples(self, corpus: str | Path, out: Path) -> list[list[int]]:
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

    def describe(self) -> dict[str, Any]:
        """Model options recorded in ``train_info.json`` (and accepted back by the constructor)."""
        return {}

    @classmethod
    def from_description(cls, d: dict[str, Any]) -> "Family":
        """The family back from :meth:`describe` (used to rebuild held-out splits)."""
        return cls(**d)

    def decode(self, ids: list[int]) -> str:
        """Text of an example (specials dropped); used to read held-out splits as text."""
        raise NotImplementedError(f"the {self.name} family cannot decode examples to text")


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
def split_indices(n: int, seed: int = 0, val_fraction: float = 0.05,
                  test_fraction: float = 0.05) -> dict[str, list[int]]:
    """Deterministic train/validation/test split of ``n`` examples (seeded permutation)."""
    perm = np.random.default_rng([seed, 7_919]).permutation(n).tolist()
    n_val = max(1, int(round(n * val_fraction)))
    n_test = int(round(n * test_fraction))
    if n - n_val - n_test < 1:
        raise InputError(f"corpus too small: {n} examples cannot be split into train/validation/test")
    return {"validation": sorted(perm[:n_val]), "test": sorted(perm[n_val:n_val + n_test]),
            "train": sorted(perm[n_val + n_test:])}


def draw_corruption(ids: list[int], family: Family, cfg: TrainConfig, epoch: int, index: int
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
    chosen = (rng.random(len(ids)) < cfg.mask_rate) & can
    if not chosen.any() and can.any():
        chosen[rng.choice(np.flatnonzero(can))] = True
    labels = [-100] * len(ids)
    rand_pool = None
    action = rng.random(len(ids))
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


def _loss(family: Family, model: nn.Module, ids, attn, labels, reduction="mean"):
    select = labels != -100
    logits = family.logits(model, ids, attn, select).float()
    return nn.functional.cross_entropy(logits, labels[select], reduction=reduction), logits, labels[select]


@torch.inference_mode()
def evaluate(family: Family, model: nn.Module, batches: list) -> tuple[float, float]:
    """(mean cross-entropy per label, accuracy) over pre-collated validation batches."""
    was_training = model.training
    model.eval()
    total, correct, n = 0.0, 0, 0
    for ids, attn, labels in batches:
        loss, logits, gold = _loss(family, model, ids, attn, labels, reduction="sum")
        total += float(loss)
        correct += int((logits.argmax(-1) == gold).sum())
        n += int(gold.numel())
    model.train(was_training)
    return total / max(n, 1), correct / max(n, 1)


# ---- the loop ------------------------------------------------------------------------------
def _schedule(warmup: int, total: int):
    def f(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))
    return f


def _atomic_save(obj, path: Path) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def train(family: Family, corpus: str | Path, cfg: TrainConfig) -> TrainResult:
    """Train ``family``'s model on ``corpus`` with the options in ``cfg``; see the module doc."""
    cfg.validate()
    if family.damage_id is None and cfg.damage_rate > 0:
        raise ConfigError(f"the {family.name} family has no missing-character symbol: "
                          "damage rate must be 0")
    corpus = Path(corpus)
    if not corpus.is_file():
        raise InputError(f"corpus file not found: {corpus}")
    out = Path(cfg.out)
    ckpt_path = out / CHECKPOINT
    if cfg.resume and not ckpt_path.exists():
        raise ConfigError(f"--resume: no checkpoint in {out}")
    if not cfg.resume and ckpt_path.exists():
        raise ConfigError(f"{out} already holds a checkpoint: pass --resume to continue it, "
                          "or choose another --out")
    out.mkdir(parents=True, exist_ok=True)

    examples = family.load_examples(corpus, out)
    split = split_indices(len(examples), cfg.split_seed, cfg.val_fraction, cfg.test_fraction)
    train_idx, val_idx = split["train"], split["validation"][: cfg.max_val_examples]
    (out / "split.json").write_text(json.dumps({
        "seed": cfg.split_seed, "val_fraction": cfg.val_fraction,
        "test_fraction": cfg.test_fraction, "n_examples": len(examples),
        "sizes": {k: len(v) for k, v in split.items()}, **split}))

    per_epoch = math.ceil(len(train_idx) / cfg.batch_size)
    total = cfg.steps if cfg.steps is not None else max(1, int(math.ceil(cfg.epochs * per_epoch)))

    val_batches = []
    for s in range(0, len(val_idx), cfg.batch_size):
        chunk = val_idx[s: s + cfg.batch_size]
        val_batches.append(collate([draw_corruption(examples[i], family, cfg, _VAL_EPOCH, i)
                                    for i in chunk], family.pad_id))

    torch.manual_seed(cfg.seed)
    random.seed(cfg.seed)
    model = family.build_model()
    model.train()
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, _schedule(min(cfg.warmup, total), total))

    static = None
    if cfg.masking == "static":
        static = {i: draw_corruption(examples[i], family, cfg, 0, i) for i in train_idx}
    step, history, elapsed_before, cpu_before = 0, [], 0.0, 0.0
    if cfg.resume:
        ck = torch.load(ckpt_path, weights_only=False)
        if ck["masking"] != cfg.masking or ck["seed"] != cfg.seed:
            raise ConfigError(f"--resume: checkpoint was trained with masking={ck['masking']}, "
                              f"seed={ck['seed']}; pass the same options")
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        sched.load_state_dict(ck["scheduler"])
        torch.set_rng_state(ck["torch_rng"])
        random.setstate(ck["py_rng"])
        step, history, elapsed_before = ck["step"], ck["history"], ck["elapsed"]
        cpu_before = ck.get("cpu_elapsed", 0.0)
        # the plan (steps / epochs) is this run's: the same options continue the saved run
        # exactly; more steps extend it (the learning-rate schedule is stretched accordingly)
        if static is not None:
            static = ck["static"]

    def save_checkpoint() -> None:
        _atomic_save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                      "scheduler": sched.state_dict(), "torch_rng": torch.get_rng_state(),
                      "py_rng": random.getstate(), "step": step, "total": total,
                      "history": history, "elapsed": elapsed_before + time.time() - t0,
                      "cpu_elapsed": used_cpu(),
                      "masking": cfg.masking, "seed": cfg.seed, "static": static}, ckpt_path)

    def log(entry: dict) -> None:
        history.append(entry)
        with open(out / LOG, "a") as f:
            f.write(json.dumps(entry) + "\n")

    bar = tqdm(total=total, initial=step, disable=not cfg.progress, desc=f"train {family.name}",
               dynamic_ncols=True)
    t0, c0 = time.time(), time.process_time()

    def used_cpu() -> float:
        return cpu_before + time.process_time() - c0

    def used() -> float:
        return used_cpu() if cfg.budget_clock == "cpu" else elapsed_before + time.time() - t0

    train_loss = float("nan")
    stop_request: list[int] = []

    def eval_entry(loss: float | None) -> dict:
        vl, va = evaluate(family, model, val_batches)
        entry = {"step": step, "epoch": round(step / per_epoch, 3), "train_loss": loss,
                 "val_loss": vl, "val_accuracy": va,
                 "elapsed_s": round(elapsed_before + time.time() - t0, 1),
                 "cpu_s": round(used_cpu(), 1)}
        log(entry)
        return entry

    def run_steps() -> str:
        nonlocal step, train_loss
        while step < total:
            if cfg.time_budget is not None and used() >= cfg.time_budget:
                return "time_budget"
            if cfg.stop_after is not None and step >= cfg.stop_after:
                return "stop_after"
            if stop_request:
                return "interrupted"
            epoch, k = divmod(step, per_epoch)
            order = np.random.default_rng([cfg.seed, 104_729, epoch]).permutation(train_idx)
            chunk = order[k * cfg.batch_size: (k + 1) * cfg.batch_size].tolist()
            pairs = [static[i] if static is not None
                     else draw_corruption(examples[i], family, cfg, epoch, i) for i in chunk]
            ids, attn, labels = collate(pairs, family.pad_id)
            loss, _, _ = _loss(family, model, ids, attn, labels)
            if not torch.isfinite(loss):
                raise ConfigError(f"training diverged at step {step} (loss {float(loss)}); "
                                  "lower --lr")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.clip:
                nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
            opt.step()
            sched.step()
            step += 1
            train_loss = float(loss.detach())
            bar.update(1)
            bar.set_postfix(loss=f"{train_loss:.3f}", refresh=False)
            if step % cfg.eval_every == 0 or step == total:
                e = eval_entry(train_loss)
                tqdm.write(f"step {step}/{total}  train_loss {train_loss:.4f}  val_loss "
                           f"{e['val_loss']:.4f}  val_acc {e['val_accuracy']:.4f}")
                sys.stdout.flush()
            if step % cfg.checkpoint_every == 0:
                save_checkpoint()
        return "steps"

    if step == 0:          # the untrained model's validation numbers, for reference
        eval_entry(None)
    # SIGTERM (`kill`) ends the run at the next step boundary; Ctrl-C interrupts at once. Both
    # keep what was learned: checkpoint and final model are saved below.
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, lambda *_: stop_request.append(1))
    try:
        stopped = run_steps()
    except KeyboardInterrupt:
        stopped = "interrupted"
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    bar.close()
    if history[-1]["step"] != step:
        eval_entry(train_loss)
    save_checkpoint()
    model.eval()
    family.save(model, out)
    last = history[-1]
    result = TrainResult(out=str(out), step=step, val_loss=last["val_loss"],
                         val_accuracy=last["val_accuracy"], history=history, stopped=stopped,
                         n_train=len(split["train"]), n_val=len(split["validation"]),
                         n_test=len(split["test"]))
    info = {"family": family.name, "corpus": str(corpus), "config": asdict(cfg),
            "model": family.describe(), "result": {k: v for k, v in asdict(result).items()
                                                   if k != "history"}}
    (out / "train_info.json").write_text(json.dumps(info, indent=1))
    return result
