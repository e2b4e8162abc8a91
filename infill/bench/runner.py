"""Run the benchmark grid, one ``results.jsonl`` row per (method, example), resumably.

Resumption: ``config.json`` in the output directory stores the arguments; a re-run with the same
arguments reads the rows already in ``results.jsonl`` (a truncated last line -- an interrupted
write -- is dropped and redone) and computes only the missing ones. Every row is appended,
flushed and fsync'ed as soon as it exists, so an interrupt loses at most the batch in flight and
never duplicates a row. Batches are fixed by the example list (batch b of a gap length is always
the same examples) and each batch gets its own derived seed, so a resumed run produces exactly
the rows of an uninterrupted one.

Sharded runs (``torchrun``, :mod:`infill.parallel`): rank r appends its rows to
``results.rank{r}.jsonl`` (on its own disk: ``--out`` need not be shared) and also sends them to
rank 0 over torch.distributed at the end; rank 0 writes ``results.jsonl`` in the single-process
order and the per-rank files go. On (re)start every rank reads the rows in ``results.jsonl`` and
any ``results.rank*.jsonl`` it sees and rank 0 collects them all, so an interrupted run -- sharded
or not -- resumes from every rank's rows with any number of processes, one included.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from infill.bench.gaps import Example, derive_seed
from infill.bench.methods import Method, build_grid, expand_names
from infill.bench.metrics import BertScore, gold_rank, sentence_bleu, topk_hits, usable_ks
from infill.bench.report import write_report
from infill.bench.request import BenchConfig, BenchRequest  # noqa: F401 (BenchConfig: old path)
from infill.bench.selectors import ExampleSelector, Selection, default_selector
from infill.config import DecodeConfig
from infill.data.builtins import builtin_path
from infill.data.files import ensure_dir, parse_json, read_json
from infill.errors import ConfigError, InputError, ModelLoadError
from infill.filling.decoders import run_decoder
from infill.models import load_model
from infill.models.base import MaskedLM
from infill.models.encoder import refuse_custom_code
from infill.parallel import current
from infill.progress import progress as progress_bar

METHOD_SEED_MASK = 0x7FFFFFFF
"""Per-(method, gap length) decode seeds are cut to 31 bits (as the first recorded runs were:
changing it would change every stored sampling result and break resuming them)."""

RESULTS = "results.jsonl"
CONFIG = "config.json"
MAX_SWEEP_VOCAB = 128


# ---- results file -------------------------------------------------------------------------------
ROW_FIELDS = {"key": str, "method": str, "n": int, "gold": list, "hyps": list, "hits": dict,
              "bleu": (int, float), "forward_calls": (int, float), "forward_rows": (int, float),
              "seconds": (int, float)}
"""The fields (and types) of a results row that the resume logic and the report read."""


def _is_row(row) -> bool:
    return isinstance(row, dict) and all(
        isinstance(row.get(k), t) and not isinstance(row.get(k), bool)
        and (not isinstance(row[k], float) or math.isfinite(row[k]))
        for k, t in ROW_FIELDS.items())


def read_rows(path: Path, is_row: Callable[[object], bool] = _is_row) -> list[dict]:
    """Rows of a results file. A last line without its newline is an interrupted write: it is cut
    off the file (and redone later). Any other unreadable line (or one ``is_row`` refuses) is an
    error."""
    if not path.exists():
        return []
    data = path.read_bytes()
    *complete, tail = data.split(b"\n")
    rows = []
    for i, line in enumerate(complete, 1):
        if not line.strip():
            continue
        try:
            row = parse_json(line, f"{path}: line {i}")
        except InputError:
            row = None
        if not is_row(row):
            raise InputError(f"{path}: line {i} is corrupt; remove it or use 'overwrite'",
                             path=str(path), line=i, field="overwrite")
        rows.append(row)
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
    if name.startswith("builtin:"):
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


def _read_config(cfg_path: Path) -> dict:
    try:
        old = read_json(cfg_path, "benchmark configuration")
    except InputError as e:
        raise ModelLoadError(f"{str(e).splitlines()[0][:200]}; remove it or use 'overwrite' to "
                             "start afresh", field="overwrite") from None
    if not isinstance(old, dict):
        raise ModelLoadError(f"{cfg_path} is not a benchmark configuration; remove it or use "
                             "'overwrite' to start afresh", field="overwrite")
    return old


def prepare_out(out: Path, config: BenchRequest, overwrite: bool = False,
                rank: int = 0, identity: dict | None = None) -> list[dict]:
    """Create/validate the output directory; return the rows already done there (``results.jsonl``
    and any per-rank files of an interrupted sharded run, de-duplicated by key).

    Rank 0 runs it first; the other ranks then run it on what they see as ``--out`` (the same
    folder on a shared filesystem, where they find rank 0's ``config.json``; their own machine's
    folder otherwise, which gets its own ``config.json`` so that rows left there by a run with
    other arguments are refused, or removed by ``--overwrite``). ``identity``: a custom
    selector's, stored as ``selector``."""
    ensure_dir(out, "'out' folder", field="out")
    cfg_path, res_path = out / CONFIG, out / RESULTS
    if overwrite:
        # a non-main rank leaves config.json alone: on a shared --out it is rank 0's new one
        for p in ((cfg_path,) if rank == 0 else ()) + (res_path, *out.glob("results.rank*.jsonl")):
            p.unlink(missing_ok=True)
    new = dict(config.to_json(), model_fingerprint=model_fingerprint(config.model))
    if identity is not None:
        new["selector"] = identity
    if cfg_path.exists():
        old = config.stored(_read_config(cfg_path))
        if old != new and rank and overwrite:
            _write_config(cfg_path, new, rank)
        elif old != new:
            diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            where = "" if rank == 0 else f" (as seen by rank {rank})"
            if diff == ["model_fingerprint"]:
                raise ConfigError(f"{out}{where} holds results of another version of model "
                                  f"{config.model!r} (its files changed); use another 'out', or "
                                  "'overwrite' to start afresh", field=("model", "out", "overwrite"))
            raise ConfigError(f"{out}{where} holds a run with different arguments "
                              f"({', '.join(diff)}); use another 'out', or 'overwrite' to start "
                              "afresh", field=(diff[0], "out", "overwrite"))
    elif (res_path.exists() and res_path.stat().st_size) or any(
            f.stat().st_size for f in out.glob("results.rank*.jsonl")):
        raise ConfigError(f"{out} holds results without {CONFIG}; use 'overwrite' or another "
                          "'out'", field=("overwrite", "out"))
    else:
        _write_config(cfg_path, new, rank)
    return read_all_rows(out)


def _write_config(path: Path, config: dict, rank: int) -> None:
    """Atomically (several ranks of one machine may write the same file at once)."""
    tmp = path.with_name(f"{path.name}.rank{rank}.tmp")
    tmp.write_text(json.dumps(config, indent=2))
    os.replace(tmp, path)


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
                raise ConfigError(f"'pivot' all sweeps every vocabulary entry; {model.name} has "
                                  f"{model.vocab_size} (> {MAX_SWEEP_VOCAB}); "
                                  "name the pivots instead", field="pivot")
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
        "beam": method.config.beam_size, "pivot": method.pivot_label, "n": ex.n,
        "example_id": ex.example_id, "start": ex.start, "gold": list(ex.gold),
        "hyps": tokens, "scores": scores, "rank": rank,
        "hits": {str(k): v for k, v in topk_hits(rank, usable_ks(ks, method.config.beam_size)
                                                 ).items()},
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
    pool_size: int = 0      # examples the draw was made from (the split part, or the corpus)
    unit: str = "tokens"    # what a gap is counted in (tokens, characters, residues)
    report: Callable | None = None   # extra tables of a selector: report(out, rows) -> dict
    identity: dict | None = None     # a custom selector's identity (stored in config.json)

    def total_rows(self) -> int:
        return len(self.grid) * sum(len(v) for v in self.examples.values())


def make_plan(model: MaskedLM, config: BenchRequest,
              selector: ExampleSelector | None = None) -> Plan:
    """The examples (chosen by ``selector``, default: :func:`default_selector`) and the method
    grid of a run."""
    chosen: Selection = (selector or default_selector(config))(model, config)
    grid = build_grid(expand_names(list(config.methods)), list(config.beam_size),
                      resolve_pivots(model, list(config.pivot)))
    return Plan(chosen.examples, chosen.skipped, grid, chosen.n_texts, chosen.corpus_size,
                chosen.pool_size, model.unit, chosen.report, chosen.identity)


def by_length(examples: list[Example]) -> list[Example]:
    """Examples ordered by length, ties by example index (deterministic), so that a batch holds
    inputs of similar lengths and its forward passes compute little padding. Results do not
    depend on it: beam search is per input (scores up to float32 rounding), and sampling draws
    are keyed by the input (infill.decoding.proposals.KeyedRNG), never by its batch mates."""
    return sorted(examples, key=lambda e: (len(e.ids), e.example_id))


def units(plan: Plan, batch_size: int) -> list[tuple[Method, int, list[Example]]]:
    """The run's work units in their fixed order: (method, gap length, batch of examples), the
    examples of a gap length batched in order of length (:func:`by_length`). A sharded run
    (:mod:`infill.parallel`) gives unit u to rank u % world, so every batch is decoded exactly as
    in a single-process run."""
    return [(m, n, b) for m in plan.grid for n in plan.examples
            for b in batches(by_length(plan.examples[n]), batch_size)]


def rank_file(out: Path, rank: int) -> Path:
    return out / f"results.rank{rank}.jsonl"


def unique_rows(rows: list[dict]) -> list[dict]:
    """The first row of each key."""
    seen, unique = set(), []
    for r in rows:
        if r["key"] not in seen:
            seen.add(r["key"])
            unique.append(r)
    return unique


def read_all_rows(out: Path) -> list[dict]:
    """Rows of ``results.jsonl`` and of any per-rank files of an interrupted sharded run."""
    rows = read_rows(out / RESULTS)
    for f in sorted(out.glob("results.rank*.jsonl")):
        rows += read_rows(f)
    return unique_rows(rows)


def write_results(out: Path, plan: Plan, batch_size: int, rows: list[dict]) -> list[dict]:
    """Rank 0, at the end of a run: ``rows`` (every rank's, de-duplicated) into ``results.jsonl``
    in the single-process order (atomically), then the per-rank files it sees go. Returns the
    rows in that order."""
    order = {example_key(m, e): k for k, (m, n, b) in enumerate(units(plan, batch_size))
             for e in b}
    rows = sorted(unique_rows(rows), key=lambda r: (order.get(r["key"], len(order)), r["key"]))
    tmp = out / (RESULTS + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, out / RESULTS)
    remove_rank_files(out)
    return rows


def remove_rank_files(out: Path) -> None:
    for f in out.glob("results.rank*.jsonl"):
        f.unlink(missing_ok=True)   # several ranks may clean one shared folder at once


def collect_rows(shard, local: list[dict]) -> list[dict] | None:
    """Every rank's ``local`` rows on rank 0, de-duplicated (None elsewhere). Rows travel over
    torch.distributed, so rank 0 gets them whether or not ``--out`` is shared; a rank sends only
    the rows rank 0 does not hold already (nothing, on a shared folder)."""
    if not shard.active:
        return local
    have = shard.broadcast({r["key"] for r in local} if shard.main else None)
    parts = shard.gather([r for r in local if r["key"] not in have])
    return unique_rows(local + [r for part in parts for r in part]) if shard.main else None


def run_bench(config: BenchRequest, out: str | Path, model: MaskedLM | None = None,
              overwrite: bool = False, progress: bool | None = None,
              selector: ExampleSelector | None = None) -> dict:
    """Run (or continue) a benchmark into ``out``; returns the summary (also written there).
    ``selector`` chooses the examples and their spans (:mod:`infill.bench.selectors`; default:
    random spans, or an EpiDoc corpus's supplements).

    Under ``torchrun`` the work units are shared out over the ranks (each writes its own rows
    and sends them to rank 0, which merges them and writes the report); the results equal a
    single-process run's."""
    shard = current()
    out = Path(out)
    if config.bertscore_model:             # a scorer folder with code of its own: refused first
        refuse_custom_code(config.bertscore_model, "BERTScore scorer")
    if model is None:
        model = load_model(config.model, device=shard.device(config.device), dtype=config.dtype,
                           quantize=config.quantize, compile=config.compile)
    plan = make_plan(model, config, selector)
    # rank 0 first (it may start afresh), then the others on what they see as --out; an error
    # on any rank stops every rank
    local = shard.on_main(lambda: prepare_out(out, config, overwrite, identity=plan.identity))
    local = shard.everywhere(lambda: local if shard.main else prepare_out(
        out, config, overwrite, rank=shard.rank, identity=plan.identity))
    # every rank's rows (whatever the number of ranks that wrote them) before deciding what is
    # missing; every rank has read its rows before anyone appends
    rows = collect_rows(shard, local)
    done = shard.broadcast({r["key"] for r in rows} if shard.main else None)
    bert = None
    if config.bertscore_model:
        bert = BertScore.load(config.bertscore_model, config.bertscore_layers, device=config.device)

    work = [u for k, u in enumerate(units(plan, config.batch_size)) if shard.owns(k)]
    parts = shard.gather(_run_owned(model, config, work, done, out, shard, bert, progress))
    summary = None
    if shard.main:
        rows = write_results(out, plan, config.batch_size,
                             rows + [r for part in parts for r in part])
        summary = write_report(out, config, plan, rows, bert_available=bert is not None)
        if plan.report is not None:
            summary["selector"] = plan.report(out, rows)
    summary = shard.broadcast(summary)
    if not shard.main:
        remove_rank_files(out)        # merged by rank 0 (this rank's own disk, if not shared)
    return summary


def _run_owned(model: MaskedLM, config: BenchRequest, work: list, done: set, out: Path, shard,
               bert, progress: bool | None) -> list[dict]:
    """Run this rank's work units, skipping the rows in ``done``, with a bar over the rows;
    returns the rows it wrote (to ``results.jsonl``, or its rank's file under torchrun)."""
    total = sum(len(b) for _, _, b in work)
    todo = sum(1 for m, _, b in work for e in b if example_key(m, e) not in done)
    bar = progress_bar(total=total, initial=total - todo, unit="row", enabled=progress,
                       desc="bench" if not shard.active else f"bench rank {shard.rank}")
    writer = RowWriter(out / RESULTS if not shard.active else rank_file(out, shard.rank))
    counter = CallCounter(model)
    new: list[dict] = []
    try:
        _run_units(model, config, work, done, writer, counter, bert, bar, new)
    finally:
        counter.close()
        writer.close()
        if bar is not None:
            bar.close()
    return new


def _run_units(model, config, work, done, writer, counter, bert, bar, new: list) -> None:
    base = DecodeConfig(dedup=config.dedup, allow_special=config.allow_special)
    for method, n, batch in work:
        missing = [e for e in batch if example_key(method, e) not in done]
        if not missing:
            continue
        # one seed per (method, gap length): an example's draws depend only on it and the
        # example (infill.decoding.proposals.KeyedRNG), whatever the batch or the rank
        dcfg = method.decode_config(base).replace(
            seed=derive_seed(config.seed, method.key, n) & METHOD_SEED_MASK)
        counter.reset()
        t0 = time.perf_counter()
        # the gaps are given: a model whose mask is also a text symbol (Ithaca's '-') may hold
        # it elsewhere in the input
        results = run_decoder(model, [e.masked(model.mask_id) for e in batch],
                              [list(range(e.start, e.start + e.n)) for e in batch], dcfg)
        seconds = (time.perf_counter() - t0) / len(batch)
        rows = [make_row(model, method, e, hyps, list(config.top_k), counter.calls,
                         counter.rows / len(batch), seconds)
                for e, hyps in zip(batch, results) if e in missing]
        if bert is not None:
            f1 = bert.f1([r["filled_text"] for r in rows], [r["gold_text"] for r in rows])
            for r, f in zip(rows, f1):
                r["bertscore"] = f
        for r in rows:
            writer.write(r)
            done.add(r["key"])
            new.append(r)
        if bar is not None:
            bar.update(len(rows))
