"""Run the benchmark grid, one ``results.jsonl`` row per (method, example), resumably.

Resumption: ``config.json`` in the output directory stores the arguments; a re-run with the same
arguments reads the rows already in ``results.jsonl`` (a truncated last line -- an interrupted
write -- is dropped and redone) and computes only the missing ones. Every row is appended,
flushed and fsync'ed as soon as it exists, so an interrupt loses at most the batch in flight and
never duplicates a row. Batches are fixed by the example list (batch b of a gap length is always
the same examples) and each batch gets its own derived seed, so a resumed run produces exactly
the rows of an uninterrupted one.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from infill.bench.data import (CORPORA, Example, _derive, family_split, load_texts, pick_indices,
                               select_examples, tokenize_texts, training_info)
from infill.bench.methods import Method, build_grid, expand_names
from infill.bench.metrics import BertScore, gold_rank, sentence_bleu, topk_hits, usable_ks
from infill.errors import ConfigError, InputError
from infill.models.base import MaskedLM

RESULTS = "results.jsonl"
CONFIG = "config.json"
MAX_SWEEP_VOCAB = 128


@dataclass
class BenchConfig:
    """Everything that determines the results (stored in ``config.json`` and checked on resume)."""

    model: str
    data: str
    fmt: str | None = None
    split: str = "all"
    family: str | None = None
    limit: int | None = 200
    gaps: list[int] = field(default_factory=lambda: [2, 3, 4, 5])
    methods: list[str] = field(default_factory=lambda: ["beam"])
    beams: list[int] = field(default_factory=lambda: [5])
    pivots: list[str] = field(default_factory=list)
    ks: list[int] = field(default_factory=lambda: [1, 5, 10, 20])
    seed: int = 0
    batch_size: int = 16
    allow_special: bool = False
    dedup: bool = True
    bertscore_model: str | None = None
    bertscore_layers: int | None = None
    device: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


# ---- results file -------------------------------------------------------------------------------
def read_rows(path: Path) -> list[dict]:
    """Rows of a results file. A last line without its newline is an interrupted write: it is cut
    off the file (and redone later). Any other unreadable line is an error."""
    if not path.exists():
        return []
    data = path.read_bytes()
    *complete, tail = data.split(b"\n")
    rows = []
    for i, line in enumerate(complete, 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError:
            raise InputError(f"{path}: line {i} is corrupt; remove it or use --overwrite") from None
    if tail:
        with open(path, "r+b") as f:
            f.truncate(len(data) - len(tail))
    seen, unique = set(), []
    for r in rows:  # defensive: never count a key twice
        if r["key"] not in seen:
            seen.add(r["key"])
            unique.append(r)
    return unique


class RowWriter:
    """Append-only JSONL writer: one flushed and fsync'ed line per row."""

    def __init__(self, path: Path):
        self.f = open(path, "a", encoding="utf-8")

    def write(self, row: dict) -> None:
        self.f.write(json.dumps(row, ensure_ascii=False) + "\n")
        self.f.flush()
        os.fsync(self.f.fileno())

    def close(self) -> None:
        self.f.close()


def model_fingerprint(name: str) -> str | None:
    """sha256 over the files of a local model (a directory's top-level files except the training
    checkpoint and log, or the checkpoint file itself); None for hub ids. Stored with the arguments, so
    resuming against a retrained model is refused instead of mixing results of two models."""
    import hashlib

    if name.startswith("builtin:"):
        from infill.models.builtin import builtin_path
        name = str(builtin_path(name))
    p = Path(name)
    if p.is_file():
        files = [p]
    elif p.is_dir():
        files = sorted(f for f in p.iterdir()
                       if f.is_file() and f.name not in ("checkpoint.pt", "train_log.jsonl"))
    else:
        return None
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0")
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


def prepare_out(out: Path, config: BenchConfig, overwrite: bool = False) -> list[dict]:
    """Create/validate the output directory; return the rows already done."""
    out.mkdir(parents=True, exist_ok=True)
    cfg_path, res_path = out / CONFIG, out / RESULTS
    if overwrite:
        for p in (cfg_path, res_path):
            if p.exists():
                p.unlink()
    new = dict(config.to_json(), model_fingerprint=model_fingerprint(config.model))
    if cfg_path.exists():
        old = json.loads(cfg_path.read_text())
        if old != new:
            diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            if diff == ["model_fingerprint"]:
                raise ConfigError(f"{out} holds results of another version of model "
                                  f"{config.model!r} (its files changed); use another --out, or "
                                  "--overwrite to start afresh")
            raise ConfigError(f"{out} holds a run with different arguments ({', '.join(diff)}); "
                              "use another --out, or --overwrite to start afresh")
    elif res_path.exists() and res_path.stat().st_size:
        raise ConfigError(f"{res_path} exists without {CONFIG}; use --overwrite or another --out")
    else:
        cfg_path.write_text(json.dumps(new, indent=2))
    return read_rows(res_path)


# ---- model call counting ------------------------------------------------------------------------
class CallCounter:
    """Counts forward passes (and rows forwarded) by wrapping ``model.log_probs``."""

    def __init__(self, model: MaskedLM):
        self.model, self.calls, self.rows = model, 0, 0
        self._orig = model.log_probs
        self._own = "log_probs" in vars(model)  # an instance-level override to restore

        def counted(input_ids, attention_mask, positions):
            self.calls += 1
            self.rows += int(input_ids.shape[0])
            return self._orig(input_ids, attention_mask, positions)

        model.log_probs = counted

    def reset(self) -> None:
        self.calls = self.rows = 0

    def close(self) -> None:
        if self._own:
            self.model.log_probs = self._orig
        else:
            del self.model.log_probs  # back to the class's method


# ---- the grid ---------------------------------------------------------------------------------
def resolve_pivots(model: MaskedLM, pivots: list[str]) -> list[tuple[int, str]]:
    """--pivot values -> (id, label); ``all`` = every output id (small vocabularies only)."""
    out: list[tuple[int, str]] = []
    for p in pivots:
        if p == "all":
            if model.vocab_size > MAX_SWEEP_VOCAB:
                raise ConfigError(f"--pivot all sweeps every vocabulary entry; {model.name} has "
                                  f"{model.vocab_size} (> {MAX_SWEEP_VOCAB}); "
                                  "name the pivots instead")
            out += [(i, model.id_to_token(i)) for i in range(model.vocab_size)]
        else:
            pid = model.resolve_pivot(int(p) if p.isdigit() else p)
            out.append((pid, model.id_to_token(pid)))
    seen, unique = set(), []
    for pid, label in out:
        if pid not in seen:
            seen.add(pid)
            unique.append((pid, label))
    return unique


def batches(examples: list[Example], size: int) -> list[list[Example]]:
    return [examples[i:i + size] for i in range(0, len(examples), size)]


def example_key(method: Method, ex: Example) -> str:
    return f"{method.key}|n={ex.n}|ex={ex.example_id}"


def make_row(model: MaskedLM, method: Method, ex: Example, hyps, ks: list[int], calls: int,
             rows_fwd: float, seconds: float) -> dict:
    tokens = [list(h.tokens) for h in hyps]
    scores = [float(h.score) for h in hyps]
    rank = gold_rank(ex.gold, tokens)
    top = tokens[0] if tokens else []
    return {
        "key": example_key(method, ex), "method": method.key, "name": method.name,
        "beam": method.beam, "pivot": method.pivot_label, "n": ex.n,
        "example_id": ex.example_id, "start": ex.start, "gold": list(ex.gold),
        "hyps": tokens, "scores": scores, "rank": rank,
        "hits": {str(k): v for k, v in topk_hits(rank, usable_ks(ks, method.beam)).items()},
        "bleu": sentence_bleu(top, ex.gold) if top else 0.0,
        "fill": model.detokenize(top), "gold_fill": model.detokenize(list(ex.gold)),
        "filled_text": model.detokenize(ex.filled(top)) if top else "",
        "gold_text": model.detokenize(list(ex.ids)),
        "forward_calls": calls, "forward_rows": rows_fwd, "seconds": seconds,
    }


@dataclass
class Plan:
    """What a run will do (examples, grid, counts) -- everything but the model calls."""

    examples: dict[int, list[Example]]
    skipped: dict[int, int]
    grid: list[Method]
    n_texts: int
    corpus_size: int

    def total_rows(self) -> int:
        return len(self.grid) * sum(len(v) for v in self.examples.values())


def make_plan(model: MaskedLM, config: BenchConfig) -> Plan:
    """Examples (split, subset, gap spans) and the method grid of a configuration."""
    if not config.gaps or any(n < 1 for n in config.gaps):
        raise ConfigError(f"gap lengths must be >= 1, got {config.gaps}")
    if config.batch_size < 1:
        raise ConfigError("batch size must be >= 1")
    if config.split == "all":
        texts = load_texts(config.data, config.fmt)
        indices = pick_indices(list(range(len(texts))), config.limit, config.seed)
        lists = tokenize_texts(model, texts, indices)
        corpus_size = len(texts)
    else:
        family = config.family or (config.data if config.data in CORPORA else None)
        if family is None:
            raise ConfigError("--split needs the training family (--family english|greek|protein) "
                              "unless the data is one of the corpus names")
        examples, part = family_split(family, config.data, config.split, model,
                                      training_info(config.model))
        indices = pick_indices(part, config.limit, config.seed)
        lists = {i: list(examples[i]) for i in indices}
        corpus_size = len(examples)
    exs, skipped = select_examples(model, lists, config.gaps, config.seed)
    by_n = {n: [e for e in exs if e.n == n] for n in config.gaps}
    grid = build_grid(expand_names(config.methods), config.beams,
                      resolve_pivots(model, config.pivots))
    return Plan(by_n, skipped, grid, len(indices), corpus_size)


def run_bench(config: BenchConfig, out: str | Path, model: MaskedLM | None = None,
              overwrite: bool = False, progress: bool = True) -> dict:
    """Run (or continue) a benchmark into ``out``; returns the summary (also written there)."""
    from infill.bench.report import write_report

    out = Path(out)
    if model is None:
        from infill.models import load_model
        model = load_model(config.model, device=config.device)
    plan = make_plan(model, config)
    done_rows = prepare_out(out, config, overwrite)
    done = {r["key"] for r in done_rows}
    bert = None
    if config.bertscore_model:
        bert = BertScore.load(config.bertscore_model, config.bertscore_layers, device=config.device)

    todo = plan.total_rows() - sum(
        1 for m in plan.grid for n, exs in plan.examples.items() for e in exs
        if example_key(m, e) in done)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=plan.total_rows(), initial=plan.total_rows() - todo, unit="row",
                   desc="bench", dynamic_ncols=True)
    writer = RowWriter(out / RESULTS)
    counter = CallCounter(model)
    try:
        _run_grid(model, config, plan, done, writer, counter, bert, bar)
    finally:
        counter.close()
        writer.close()
        if bar is not None:
            bar.close()
    return write_report(out, config, plan, read_rows(out / RESULTS),
                        bert_available=bert is not None)


def _run_grid(model, config, plan, done, writer, counter, bert, bar) -> None:
    from infill import decode

    for method in plan.grid:
        for n in config.gaps:
            for b, batch in enumerate(batches(plan.examples[n], config.batch_size)):
                missing = [e for e in batch if example_key(method, e) not in done]
                if not missing:
                    continue
                counter.reset()
                t0 = time.perf_counter()
                results = decode(model, [e.masked(model.mask_id) for e in batch],
                                 dedup=config.dedup, allow_special=config.allow_special,
                                 seed=_derive(config.seed, method.key, n, b) & 0x7FFFFFFF,
                                 **method.decode_kwargs())
                seconds = (time.perf_counter() - t0) / len(batch)
                rows = [make_row(model, method, e, hyps, config.ks, counter.calls,
                                 counter.rows / len(batch), seconds)
                        for e, hyps in zip(batch, results) if e in missing]
                if bert is not None:
                    f1 = bert.f1([r["filled_text"] for r in rows], [r["gold_text"] for r in rows])
                    for r, f in zip(rows, f1):
                        r["bertscore"] = f
                for r in rows:
                    writer.write(r)
                    done.add(r["key"])
                if bar is not None:
                    bar.update(len(rows))
