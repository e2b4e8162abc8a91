"""HCB vs standard beam search on antibody heavy chains with two pretrained MLMs (AntiBERTy,
Sapiens-VH): spans of 2-6 residues hidden inside CDR-H3 and inside the frameworks.

    OMP_NUM_THREADS=1 python benchmarks/antibody.py --estimate      # cost per row, planned hours
    OMP_NUM_THREADS=1 nohup python benchmarks/antibody.py > benchmarks/results/antibody/run.log 2>&1 &
    python benchmarks/antibody.py --summary-only                     # tables and plots from the rows

Data: the committed abstar heavy chains (data/antibody/hiv_bnab_heavy.fa, reads_1k_heavy.fa; no
light chains). Every sequence is IMGT-numbered once (anarcism, infill.data.regions). Sequences are
taken in a seeded random order per file, and each part of the benchmark uses the first B bnAbs and
R reads of that order (``--X B+R``), so smaller parts are subsets of larger ones.

Spans: for every sequence, region and gap length n in 2..6, one span of n residues drawn with a
generator seeded by (seed, file, sequence, region, n): uniformly among the starts that keep the
span inside CDR-H3 (IMGT 105-117) or, for the region ``fr``, inside one framework (FR1, FR2, FR3 or
FR4, IMGT 1-26 / 39-55 / 66-104 / 118-128, all starts of all four pooled). A sequence whose region
is too short is skipped and counted; Sapiens-VH refuses sequences over 142 residues (skipped and
counted). The spans do not depend on the model, the method or the sizes of the parts.

Decoding goes through ``infill.api.run_decoder`` with a ``DecodeConfig`` per method (names of
infill.bench.methods), many examples per call. Every (model, method, region, n, sequence) is one
row of results.jsonl, appended as soon as it exists; a re-run skips the rows already there, so an
interrupted run continues where it stopped. Parts:

  beam5 / beam20   hcb-l2r, standard-l2r, hcb-b2w, standard-b2w at beam 5 / 20
  sampling         pure, temp0.5, nucleus0.9 (--sampling) at beams 5 and 20 (matched budget)
  sweep            AntiBERTy, CDR-H3: HCB left-to-right beam 5 with pivot [CLS], [MASK] (the
                   default) and each of the 20 residues (injected as context), plus standard
  joint            AntiBERTy, contiguous pairs inside CDR-H3: U-PPL, P-PPL, A-KL, G-KL of the
                   MLM, MRF-L, MRF, HCB and AG pairwise joints (infill.joint.metrics)

Metrics: top-1 / top-5 exact span match, per-residue accuracy of the top-1, BLEU of the top-1
(sacrebleu over residues, infill.bench.metrics); HCB - standard with the same order and beam as a
paired difference over the same spans, 95% paired bootstrap resampling sequences
(infill.bench.stats). Outputs in --out: results.jsonl (raw rows), config.json, summary.json,
summary.md, *.png.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "antibody"
DATA = {"bnab": ROOT / "data" / "antibody" / "hiv_bnab_heavy.fa",
        "reads": ROOT / "data" / "antibody" / "reads_1k_heavy.fa"}
DATA_LABEL = {"bnab": "HIV bnAb heavy chains", "reads": "heavy-chain reads"}
MODELS = ("antiberty", "sapiens-vh")
MODEL_LABEL = {"antiberty": "AntiBERTy", "sapiens-vh": "Sapiens-VH"}
REGIONS = ("cdr3", "fr")
REGION_LABEL = {"cdr3": "CDR-H3", "fr": "framework"}
FRAMEWORKS = ("fr1", "fr2", "fr3", "fr4")
GAPS = (2, 3, 4, 5, 6)
BEAM_METHODS = ("hcb-l2r", "standard-l2r", "hcb-b2w", "standard-b2w")
RESIDUES = "ACDEFGHIKLMNPQRSTVWY"
SWEEP_PIVOTS = ("[CLS]", "[MASK]", *RESIDUES)
PARTS = ("beam5", "beam20", "sampling", "sweep", "joint")
N_BOOT = 10_000
STYLE = {  # method name -> (colour, marker, linestyle); colour-blind-safe Tableau/Okabe-Ito mix
    "hcb-l2r": ("#0072B2", "o", "-"), "standard-l2r": ("#E69F00", "s", "--"),
    "hcb-b2w": ("#009E73", "^", "-"), "standard-b2w": ("#D55E00", "v", "--"),
    "pure": ("#CC79A7", "D", ":"), "temp0.5": ("#56B4E9", "P", ":"),
    "temp0.25": ("#8C564B", "h", ":"), "temp0.75": ("#7F7F7F", "*", ":"),
    "nucleus0.9": ("#000000", "X", ":"),
}


# ------------------------------------------------------------------------------------------------
# data: sequences, numbering, spans
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Seq:
    sid: str            # "bnab:17" (file key : record index)
    dataset: str
    index: int
    name: str
    sequence: str
    spans: dict         # region -> [start, end) residue span (fr1..fr4, cdr3)


def load_sequences() -> tuple[dict[str, list[Seq]], dict[str, dict]]:
    """Every record of both files, IMGT-numbered once; (seqs per file, skip counts per file)."""
    from infill.data.fasta import read_fasta
    from infill.data.regions import number_many

    out, skipped = {}, {}
    for ds, path in DATA.items():
        recs = read_fasta(path)
        doms = number_many([r.sequence for r in recs], chains="H", workers=1, strict=False)
        keep, bad = [], {"not numbered": 0, "anchors missing": 0}
        for i, (r, d) in enumerate(zip(recs, doms)):
            if d is None:
                bad["not numbered"] += 1
                continue
            if d.missing_anchors:
                bad["anchors missing"] += 1
                continue
            keep.append(Seq(f"{ds}:{i}", ds, i, r.header.split()[0], r.sequence,
                            {k: tuple(d.spans[k]) for k in (*FRAMEWORKS, "cdr3")}))
        out[ds], skipped[ds] = keep, dict(bad, records=len(recs))
    return out, skipped


def derive_seed(*parts) -> int:
    from infill.bench.gaps import derive_seed as _d
    return _d(*parts)


def seq_order(seqs: dict[str, list[Seq]], seed: int) -> dict[str, list[Seq]]:
    """Each file's sequences in a seeded random order (parts take prefixes of it)."""
    out = {}
    for ds, items in seqs.items():
        items = list(items)
        random.Random(derive_seed(seed, "order", ds)).shuffle(items)
        out[ds] = items
    return out


def pick_span(s: Seq, region: str, n: int, seed: int) -> tuple[int, str] | None:
    """(start residue index, part: cdr3 / fr1..fr4) of the seeded span, or None if none fits."""
    parts = ("cdr3",) if region == "cdr3" else FRAMEWORKS
    starts = [(st, p) for p in parts for st in range(s.spans[p][0], s.spans[p][1] - n + 1)]
    if not starts:
        return None
    return random.Random(derive_seed(seed, s.dataset, s.index, region, n)).choice(starts)


def parse_size(text: str) -> tuple[int, int]:
    try:
        b, r = (int(x) for x in text.split("+"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected B+R (bnAbs+reads), got {text!r}") from None
    if b < 0 or r < 0:
        raise argparse.ArgumentTypeError(f"sizes must be >= 0, got {text!r}")
    return b, r


# ------------------------------------------------------------------------------------------------
# the plan
# ------------------------------------------------------------------------------------------------
@dataclass
class Example:
    seq: Seq
    region: str
    part: str           # cdr3, fr1..fr4
    n: int
    start: int          # residue index of the span's first residue


@dataclass
class Task:
    """One method on one model, region and gap length, over a list of examples."""

    model: str
    method: object      # infill.bench.methods.Method
    region: str
    n: int
    examples: list[Example] = field(default_factory=list)
    parts: set = field(default_factory=set)

    def key(self, ex: Example) -> str:
        return f"{self.model}|{self.method.key}|{self.region}|n={self.n}|{ex.seq.sid}"

    def forward_rows(self, ex: Example | None = None) -> int:
        # one row at the root, then one per live hypothesis (20 residues >= any beam used here)
        return 1 + (self.n - 1) * self.method.beam


def sizes_of(args) -> dict[str, dict[str, tuple[int, int]]]:
    return {
        "antiberty": {"beam5": args.antiberty_beam5, "beam20": args.antiberty_beam20,
                      "sampling": args.antiberty_sampling, "sweep": args.sweep,
                      "joint": args.joint},
        "sapiens-vh": {"beam5": args.sapiens_beam5, "beam20": args.sapiens_beam20,
                       "sampling": args.sapiens_sampling, "sweep": (0, 0), "joint": (0, 0)},
    }


@dataclass
class Plan:
    tasks: list[Task]
    joint: list[tuple[Seq, int]]                     # (sequence, a residue index), b = a + 1
    usage: dict                                      # sample sizes and skips
    order: dict[str, list[Seq]]
    sweep_seqs: set = field(default_factory=set)     # sids of the pivot sweep's sequences


def make_plan(args, models: dict, seqs: dict[str, list[Seq]], numbering_skips: dict) -> Plan:
    from infill.bench.methods import build_grid, expand_names

    order = seq_order(seqs, args.seed)
    sizes = sizes_of(args)
    sampling = expand_names(args.sampling)
    sampling_beams = {"antiberty": args.antiberty_sampling_beams,
                      "sapiens-vh": args.sapiens_sampling_beams}
    tasks: dict[str, Task] = {}
    joint: list[tuple[Seq, int]] = []
    sweep_seqs: set = set()
    usage: dict = {"numbering": numbering_skips, "models": {}}

    def chosen(b: int, r: int) -> list[Seq]:
        return order["bnab"][:b] + order["reads"][:r]

    def add(model, method, region, n, ex, part):
        tk = f"{model}|{method.key}|{region}|{n}"
        t = tasks.setdefault(tk, Task(model, method, region, n))
        t.parts.add(part)
        if all(e.seq.sid != ex.seq.sid for e in t.examples):
            t.examples.append(ex)

    for model in args.models:
        m = models[model]
        mu = usage["models"][model] = {}
        for part in PARTS:
            b, r = sizes[model][part]
            if b + r == 0:
                continue
            pool = chosen(b, r)
            too_long = [s for s in pool if len(s.sequence) + 2 > m.max_length]
            usable = [s for s in pool if len(s.sequence) + 2 <= m.max_length]
            info = {"requested": {"bnab": b, "reads": r},
                    "used": {ds: sum(s.dataset == ds for s in usable) for ds in DATA},
                    "skipped_too_long": {ds: sum(s.dataset == ds for s in too_long) for ds in DATA},
                    "max_residues": m.max_length - 2}
            mu[part] = info
            if part == "joint":
                jpairs, nofit = [], 0
                for s in usable:
                    a = pick_span(s, "cdr3", 2, derive_seed(args.seed, "joint"))
                    if a is None:
                        nofit += 1
                    else:
                        jpairs.append((s, a[0]))
                info["skipped_no_fit"] = nofit
                info["pairs"] = len(jpairs)
                joint = jpairs
                continue
            if part == "beam5":
                grid = build_grid(list(BEAM_METHODS), [5])
            elif part == "beam20":
                grid = build_grid(list(BEAM_METHODS), [20])
            elif part == "sampling":
                grid = build_grid(sampling, sampling_beams[model])
            else:  # sweep: the default pivot is [MASK]: its rows are the plain hcb-l2r/b5 rows
                pivots = [(m.resolve_pivot(p), p) for p in SWEEP_PIVOTS if p != "[MASK]"]
                if m.token_to_id("[MASK]") != m.default_pivot:
                    raise SystemExit(f"{model}: the default pivot is not [MASK]")
                grid = build_grid(["hcb-l2r"], [5], pivots) + build_grid(["hcb-l2r", "standard-l2r"], [5])
            regions = ("cdr3",) if part == "sweep" else REGIONS
            if part == "sweep":
                sweep_seqs = {s.sid for s in usable}
            info["examples"], info["skipped_no_fit"] = {}, {}
            for region in regions:
                for n in args.gaps:
                    exs = []
                    for s in usable:
                        sp = pick_span(s, region, n, args.seed)
                        if sp is not None:
                            exs.append(Example(s, region, sp[1], n, sp[0]))
                    info["examples"][f"{region}/n={n}"] = len(exs)
                    info["skipped_no_fit"][f"{region}/n={n}"] = len(usable) - len(exs)
                    for method in grid:
                        for ex in exs:
                            add(model, method, region, n, ex, part)
    # run order: the central comparison first, then the rest
    rank = {p: i for i, p in enumerate(PARTS)}
    tl = sorted(tasks.values(), key=lambda t: (min(rank[p] for p in t.parts),
                                               MODELS.index(t.model) if t.model in MODELS else 9,
                                               t.method.beam, t.region, t.n))
    return Plan(tl, joint, usage, order, sweep_seqs)


# ------------------------------------------------------------------------------------------------
# results file (same conventions as infill.bench.runner: append, flush, fsync; resume by key)
# ------------------------------------------------------------------------------------------------
def read_rows(path: Path) -> dict[str, dict]:
    if not path.exists():
        return {}
    data = path.read_bytes()
    *complete, tail = data.split(b"\n")
    rows = {}
    for i, line in enumerate(complete, 1):
        if line.strip():
            try:
                r = json.loads(line)
            except ValueError:
                raise SystemExit(f"{path}: line {i} is corrupt; remove it") from None
            rows.setdefault(r["key"], r)
    if tail:   # an interrupted write: cut it off, it is redone
        with open(path, "r+b") as f:
            f.truncate(len(data) - len(tail))
    return rows


class RowWriter:
    def __init__(self, path: Path):
        self.f = open(path, "a", encoding="utf-8")

    def write(self, row: dict) -> None:
        self.f.write(json.dumps(row) + "\n")
        self.f.flush()
        os.fsync(self.f.fileno())

    def close(self) -> None:
        self.f.close()


IDENTITY = ("seed", "gaps")


def check_config(out: Path, args) -> dict:
    """config.json: what fixes the rows (seed, gaps) must match a previous run in ``out``."""
    path = out / "config.json"
    cur = {"seed": args.seed, "gaps": list(args.gaps)}
    if path.exists():
        old = json.loads(path.read_text())
        diff = [k for k in IDENTITY if old.get(k) != cur[k]]
        if diff:
            raise SystemExit(f"{out} holds rows of a run with other {', '.join(diff)}; use another "
                             "--out or delete its results.jsonl and config.json")
        cur = {**old, **cur}
    return cur


# ------------------------------------------------------------------------------------------------
# running
# ------------------------------------------------------------------------------------------------
def make_row(task: Task, ex: Example, hyps, model, seconds: float) -> dict:
    from infill.bench.metrics import sentence_bleu

    gold = ex.seq.sequence[ex.start:ex.start + ex.n]
    fills = [model.detokenize(list(h.tokens)) for h in hyps]
    rank = next((i for i, f in enumerate(fills, 1) if f == gold), None)
    top = fills[0] if fills else ""
    m = task.method
    return {
        "key": task.key(ex), "model": task.model, "method": m.key, "name": m.name,
        "scorer": m.scorer, "order": m.order, "beam": m.beam, "sampling": m.sampling,
        "pivot": m.pivot_label, "region": task.region, "part": ex.part, "n": ex.n,
        "seq": ex.seq.sid, "dataset": ex.seq.dataset, "seq_name": ex.seq.name, "start": ex.start,
        "gold": gold, "hyps": fills, "scores": [round(float(h.score), 5) for h in hyps],
        "rank": rank, "top1": rank == 1, "top5": (rank is not None and rank <= 5) if m.beam >= 5 else None,
        "res_acc": sum(a == b for a, b in zip(top, gold)) / ex.n if top else 0.0,
        "bleu": sentence_bleu(list(top), list(gold)) if top else 0.0,
        "forward_rows": task.forward_rows(), "seconds": round(seconds, 4),
    }


def ids_for(model, ex: Example) -> list[int]:
    ids = model.tokenize(ex.seq.sequence)
    for t in range(ex.start + 1, ex.start + 1 + ex.n):        # +1: the leading [CLS] / <s>
        ids[t] = model.mask_id
    return ids


class Clock:
    """Progress and time left from the seconds per forward row measured so far (per model)."""

    def __init__(self, plan_rows: dict[str, int], prior: dict[str, float]):
        self.left = dict(plan_rows)
        self.rate = dict(prior)        # seconds per forward row
        self.t0 = time.time()

    def done(self, model: str, rows: int, seconds: float) -> None:
        self.left[model] -= rows
        r = seconds / max(rows, 1)
        self.rate[model] = r if model not in self.rate else 0.8 * self.rate[model] + 0.2 * r

    def eta(self) -> float:
        return sum(self.left[m] * self.rate.get(m, 0.1) for m in self.left)


def hms(s: float) -> str:
    s = int(max(0, s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def run_tasks(plan: Plan, models, rows: dict, writer: RowWriter, args, log) -> None:
    from infill.api import run_decoder
    from infill.config import DecodeConfig

    todo = {m: 0 for m in models}
    for t in plan.tasks:
        todo[t.model] += sum(t.forward_rows() for e in t.examples if t.key(e) not in rows)
    todo["antiberty-joint"] = sum(1 + 40 for s, a in plan.joint if f"joint|{s.sid}" not in rows)
    clock = Clock(todo, {"antiberty": 0.095, "sapiens-vh": 0.004, "antiberty-joint": 0.095})
    log(f"to do: {', '.join(f'{k} {v:,} forward rows' for k, v in todo.items())}; "
        f"estimated {hms(clock.eta())}")
    joint_done = False
    for t in plan.tasks:
        if not joint_done and min(PARTS.index(p) for p in t.parts) > PARTS.index("beam5"):
            run_joint(plan, models, rows, writer, args, log, clock)   # after the beam-5 grid
            joint_done = True
        missing = [e for e in t.examples if t.key(e) not in rows]
        if not missing:
            continue
        model = models[t.model]
        cfg = t.method.decode_config(DecodeConfig()).replace(
            seed=derive_seed(args.seed, t.model, t.method.key, t.region, t.n) & 0x7FFFFFFF)
        per_call = max(1, args.rows_per_call // t.method.beam)
        for s in range(0, len(missing), per_call):
            batch = missing[s:s + per_call]
            t0 = time.perf_counter()
            hyps = run_decoder(model, [ids_for(model, e) for e in batch], None, cfg)
            dt = time.perf_counter() - t0
            for e, h in zip(batch, hyps):
                row = make_row(t, e, h, model, dt / len(batch))
                writer.write(row)
                rows[row["key"]] = row
            clock.done(t.model, t.forward_rows() * len(batch), dt)
        log(f"{t.model} {t.method.key} {t.region} n={t.n}: {len(missing)} spans in "
            f"{time.time() - clock.t0:.0f}s total; left {hms(clock.eta())}")
    if not joint_done:
        run_joint(plan, models, rows, writer, args, log, clock)


def run_joint(plan: Plan, models, rows, writer, args, log, clock, chunk: int = 16) -> None:
    from infill.joint.metrics import PairExample, evaluate_joints

    todo = [(s, a) for s, a in plan.joint if f"joint|{s.sid}" not in rows]
    if not todo:
        return
    model = models["antiberty"]
    for k in range(0, len(todo), chunk):
        part = todo[k:k + chunk]
        exs = [PairExample(model.tokenize(s.sequence), a + 1, a + 2, i)
               for i, (s, a) in enumerate(part)]
        t0 = time.perf_counter()
        res = evaluate_joints(model, exs, joint_size=args.joint_size, iterations=args.ag_iterations,
                              chunk=8)
        dt = time.perf_counter() - t0
        for (s, a), rec in zip(part, res.records):
            row = {"key": f"joint|{s.sid}", "kind": "joint", "model": "antiberty", "seq": s.sid,
                   "dataset": s.dataset, "seq_name": s.name,
                   "a": a, "pair": s.sequence[a:a + 2], "grid": rec["grid"],
                   "metrics": rec["metrics"], "ag_iterations": res.ag_iterations,
                   "ag_final_change": res.ag_final_change, "ag_monotone": res.ag_monotone,
                   "seconds": round(dt / len(part), 4)}
            writer.write(row)
            rows[row["key"]] = row
        clock.done("antiberty-joint", 41 * len(part), dt)
    log(f"joint: {len(todo)} pairs; left {hms(clock.eta())}")


# ------------------------------------------------------------------------------------------------
# estimate
# ------------------------------------------------------------------------------------------------
def estimate(plan: Plan, models, rows, args) -> None:
    """Time a few real decodes per model, then the plan's missing forward rows -> hours."""
    from infill.api import run_decoder
    from infill.config import DecodeConfig

    rate = {}
    for name, model in models.items():
        t = next(t for t in plan.tasks if t.model == name and t.method.key == "hcb-l2r/b5"
                 and t.region == "cdr3" and t.n == 4)
        k = min(len(t.examples), max(1, args.rows_per_call // 5))
        exs = t.examples[:k]
        for beam in (5, 20):
            cfg = DecodeConfig(scorer="hcb", beam_size=beam)
            per = max(1, min(k, args.rows_per_call // beam))
            t0 = time.perf_counter()
            run_decoder(model, [ids_for(model, e) for e in exs[:per]], None, cfg)
            dt = time.perf_counter() - t0
            fr = per * (1 + 3 * beam)
            rate.setdefault(name, []).append(dt / fr)
            print(f"{name}: beam {beam}, {per} spans of 4 residues: {dt:.2f}s, {fr} forward rows, "
                  f"{dt / fr * 1000:.1f} ms/row, {dt / per:.2f} s/span", flush=True)
    rate = {k: sum(v) / len(v) for k, v in rate.items()}
    total = 0.0
    by: dict[tuple[str, str], float] = {}
    for t in plan.tasks:
        fr = sum(t.forward_rows() for e in t.examples if t.key(e) not in rows)
        part = min(t.parts, key=PARTS.index)
        by[(t.model, part)] = by.get((t.model, part), 0) + fr * rate[t.model]
    if plan.joint:
        by[("antiberty", "joint")] = sum(41 for s, a in plan.joint
                                         if f"joint|{s.sid}" not in rows) * rate["antiberty"]
    for (m, p), s in sorted(by.items()):
        total += s
        print(f"  {m:11s} {p:9s} {s / 3600:6.2f} h", flush=True)
    print(f"total {total / 3600:.2f} h of one thread (missing rows only)", flush=True)


# ------------------------------------------------------------------------------------------------
# summary
# ------------------------------------------------------------------------------------------------
def pct(x):
    return None if x is None else 100.0 * x


def f1(x, d=1):
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"


def cell_stats(rs: list[dict]) -> dict:
    from infill.bench.metrics import corpus_bleu
    from infill.bench.stats import wilson_interval

    n = len(rs)
    out = {"n": n, "n_seqs": len({r["seq"] for r in rs})}
    for k in ("top1", "top5"):
        vals = [r[k] for r in rs if r[k] is not None]
        if vals and len(vals) == n:
            s = sum(vals)
            lo, hi = wilson_interval(s, n)
            out[k] = 100 * s / n
            out[k + "_ci"] = [100 * lo, 100 * hi]
        else:
            out[k], out[k + "_ci"] = None, None
    out["res_acc"] = 100 * sum(r["res_acc"] for r in rs) / n if n else None
    by_n: dict[int, list] = {}
    for r in rs:
        by_n.setdefault(r["n"], []).append(r)
    bleus = [corpus_bleu([list(x["hyps"][0]) if x["hyps"] else [] for x in v], [list(x["gold"]) for x in v])
             for v in by_n.values()]
    out["bleu"] = sum(bleus) / len(bleus) if bleus else None
    return out


def res_acc_ci(rs: list[dict], seed: int = 0) -> list[float]:
    from infill.bench.stats import bootstrap_replicates
    import numpy as np

    reps = bootstrap_replicates([r["res_acc"] for r in rs], n_boot=2000, seed=seed,
                                groups=[r["seq"] for r in rs])
    lo, hi = np.quantile(reps, [0.025, 0.975])
    return [100 * float(lo), 100 * float(hi)]


def method_sort(key: str) -> tuple:
    name, beam = key.split("/")[0], int(key.split("/")[1][1:])
    names = list(BEAM_METHODS) + ["pure", "temp0.25", "temp0.5", "temp0.75", "nucleus0.9"]
    return (beam, names.index(name) if name in names else 99, key)


def summarize(out: Path, rows: dict[str, dict], plan: Plan | None, cfg: dict, args) -> dict:
    from infill.bench.stats import paired_bootstrap, wilson_interval

    keys = None
    if plan is not None:
        keys = {t.key(e) for t in plan.tasks for e in t.examples}
        keys |= {f"joint|{s.sid}" for s, a in plan.joint}
    dec = [r for r in rows.values() if r.get("kind") != "joint" and (keys is None or r["key"] in keys)]
    jrows = [r for r in rows.values() if r.get("kind") == "joint" and (keys is None or r["key"] in keys)]
    summary: dict = {"command": cfg.get("command"), "config": cfg,
                     "usage": plan.usage if plan is not None else cfg.get("usage"),
                     "rows": len(dec), "joint_rows": len(jrows)}
    summary["compute_seconds"] = sum(r.get("seconds", 0) for r in dec) + sum(
        r.get("seconds", 0) for r in jrows)

    # ---- cells: model x region x method x n ------------------------------------------------------
    groups: dict[tuple, list] = {}
    for r in dec:
        if r["pivot"] is not None:
            continue
        groups.setdefault((r["model"], r["region"], r["method"], r["n"]), []).append(r)
        groups.setdefault((r["model"], r["region"], r["method"], "all"), []).append(r)
    cells = []
    for (model, region, method, n), rs in sorted(groups.items(), key=lambda kv: (
            kv[0][0], kv[0][1], method_sort(kv[0][2]), str(kv[0][3]))):
        c = {"model": model, "region": region, "method": method, "n_gap": n, **cell_stats(rs)}
        c["res_acc_ci"] = res_acc_ci(rs)
        cells.append(c)
    summary["cells"] = cells
    cell = {(c["model"], c["region"], c["method"], c["n_gap"]): c for c in cells}

    # ---- paired HCB - standard ---------------------------------------------------------------
    paired = []
    for model in MODELS:
        for beam in (5, 20):
            for order in ("l2r", "b2w"):
                h_key, s_key = f"hcb-{order}/b{beam}", f"standard-{order}/b{beam}"
                for region in (*REGIONS, "both"):
                    for n in (*GAPS, "all"):
                        idx_h = {(r["region"], r["n"], r["seq"]): r for r in dec
                                 if r["model"] == model and r["method"] == h_key
                                 and (region == "both" or r["region"] == region)
                                 and (n == "all" or r["n"] == n)}
                        idx_s = {(r["region"], r["n"], r["seq"]): r for r in dec
                                 if r["model"] == model and r["method"] == s_key
                                 and (region == "both" or r["region"] == region)
                                 and (n == "all" or r["n"] == n)}
                        common = sorted(set(idx_h) & set(idx_s))
                        if not common:
                            continue
                        p = {"model": model, "beam": beam, "order": order, "region": region,
                             "n_gap": n, "n": len(common),
                             "n_seqs": len({k[2] for k in common})}
                        g = [k[2] for k in common]
                        p["top1_differs"] = sum(idx_h[k]["hyps"][:1] != idx_s[k]["hyps"][:1]
                                                for k in common)
                        p["beam_differs"] = sum(idx_h[k]["hyps"] != idx_s[k]["hyps"]
                                                for k in common)
                        for metric in ("top1", "top5", "res_acc", "bleu"):
                            a = [float(idx_h[k][metric]) for k in common]
                            b = [float(idx_s[k][metric]) for k in common]
                            scale = 1.0 if metric == "bleu" else 100.0
                            res = paired_bootstrap([scale * x for x in a], [scale * x for x in b],
                                                   n_boot=N_BOOT, seed=0, groups=g)
                            res["hcb"] = sum(a) * scale / len(a)
                            res["standard"] = sum(b) * scale / len(b)
                            res["hcb_better"] = sum(x > y for x, y in zip(a, b))
                            res["std_better"] = sum(x < y for x, y in zip(a, b))
                            p[metric] = res
                        paired.append(p)
    summary["paired"] = paired

    # ---- pivot sweep --------------------------------------------------------------------------
    sweep = []
    sw_rows = [r for r in dec if r["model"] == "antiberty" and r["region"] == "cdr3"
               and r["beam"] == 5 and r["order"] == "left-to-right"]
    sweep_seqs = plan.sweep_seqs if plan is not None else set()
    if sweep_seqs:
        sw_rows = [r for r in sw_rows if r["seq"] in sweep_seqs]
        by_p: dict[str, dict] = {}
        for r in sw_rows:
            label = "standard" if r["scorer"] == "standard" else (r["pivot"] or "[MASK]")
            by_p.setdefault(label, {})[(r["n"], r["seq"])] = r
        base = by_p.get("[MASK]", {})
        for label, d in by_p.items():
            rs = list(d.values())
            hits = sum(r["top1"] for r in rs)
            lo, hi = wilson_interval(hits, len(rs))
            e = {"pivot": label, "n": len(rs), "n_seqs": len({r["seq"] for r in rs}),
                 "top1": 100 * hits / len(rs), "top1_ci": [100 * lo, 100 * hi],
                 "top5": 100 * sum(r["top5"] for r in rs) / len(rs),
                 "res_acc": 100 * sum(r["res_acc"] for r in rs) / len(rs),
                 "by_n": {str(n): (100 * sum(r["top1"] for r in rs if r["n"] == n)
                                   / sum(1 for r in rs if r["n"] == n))
                          if any(r["n"] == n for r in rs) else None for n in GAPS}}
            common = sorted(set(d) & set(base))
            if label != "[MASK]" and common:
                e["vs_mask"] = paired_bootstrap([100.0 * d[k]["top1"] for k in common],
                                                [100.0 * base[k]["top1"] for k in common],
                                                n_boot=N_BOOT, seed=0, groups=[k[1] for k in common])
            sweep.append(e)
        sweep.sort(key=lambda e: (-e["top1"], e["pivot"]))
    summary["sweep"] = sweep

    # ---- joint --------------------------------------------------------------------------------
    if jrows:
        from infill.joint.metrics import ROWS, aggregate
        table = {}
        for name in ROWS:
            recs = [r["metrics"][name] for r in jrows if name in r["metrics"]]
            if recs:
                table[name] = aggregate(recs)
        summary["joint"] = {"table": table, "n": len(jrows),
                            "n_seqs": len({r["seq"] for r in jrows}),
                            "joint_size": cfg.get("joint_size"), "ag_iterations": cfg.get("ag_iterations"),
                            "ag_monotone": all(r["ag_monotone"] for r in jrows),
                            "ag_final_change_max": max(r["ag_final_change"] for r in jrows),
                            "grid": sorted({tuple(r["grid"]) for r in jrows})}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    pngs = plot_all(out, summary, dec, plan)
    write_md(out, summary, cell, pngs)
    return summary


# ------------------------------------------------------------------------------------------------
# plots
# ------------------------------------------------------------------------------------------------
def data_label(rs: list[dict]) -> str:
    seqs = {(r["dataset"], r["seq"]) for r in rs}
    nb = sum(1 for d, _ in seqs if d == "bnab")
    nr = sum(1 for d, _ in seqs if d == "reads")
    return f"abstar heavy chains: {nb} HIV bnAbs + {nr} reads"


def plot_all(out: Path, summary: dict, dec: list[dict], plan) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pngs = []
    cells = summary["cells"]
    for model in MODELS:
        for region in REGIONS:
            cs = [c for c in cells if c["model"] == model and c["region"] == region
                  and c["n_gap"] != "all"]
            if not cs:
                continue
            rs = [r for r in dec if r["model"] == model and r["region"] == region and r["pivot"] is None]
            beams = sorted({int(c["method"].split("/b")[1]) for c in cs})
            fig, axes = plt.subplots(len(beams), 3, figsize=(14.5, 3.9 * len(beams)), squeeze=False)
            handles = {}
            for bi, beam in enumerate(beams):
                meths = sorted({c["method"] for c in cs if c["method"].endswith(f"/b{beam}")},
                               key=method_sort)
                for mi, mk in enumerate(meths):
                    name = mk.split("/")[0]
                    colour, marker, ls = STYLE.get(name, ("grey", "o", "-"))
                    pts = sorted((c for c in cs if c["method"] == mk), key=lambda c: c["n_gap"])
                    if len(pts) < 2:
                        continue      # no line from a single point
                    off = (mi - (len(meths) - 1) / 2) * 0.07
                    xs = [c["n_gap"] + off for c in pts]
                    nn = sorted({c["n"] for c in pts})
                    nlab = str(nn[0]) if len(nn) == 1 else f"{nn[0]}-{nn[-1]}"
                    for ci, metric in enumerate(("top1", "top5", "res_acc")):
                        ax = axes[bi][ci]
                        ys = [c[metric] for c in pts]
                        if any(y is None for y in ys):
                            continue
                        cis = [c[metric + "_ci"] for c in pts]
                        err = [[y - lo for y, (lo, hi) in zip(ys, cis)],
                               [hi - y for y, (lo, hi) in zip(ys, cis)]]
                        h = ax.errorbar(xs, ys, yerr=err, color=colour, marker=marker, ls=ls,
                                        lw=1.4, ms=5.5, capsize=2.5, elinewidth=0.9)
                        entry = handles.setdefault(name, [h, {}])
                        entry[1][beam] = nlab
                for ci, (metric, ylab) in enumerate((
                        ("top1", "top-1 exact span match (%)"),
                        ("top5", "top-5 exact span match (%)"),
                        ("res_acc", "per-residue accuracy of top-1 (%)"))):
                    ax = axes[bi][ci]
                    ax.set_xticks(sorted({c["n_gap"] for c in cs}))
                    ax.set_xlabel("gap length (residues)")
                    ax.set_ylabel(ylab)
                    ax.set_title(f"beam {beam}: " + ylab.split(" (")[0], fontsize=10)
                    ax.grid(alpha=0.3)
                    ax.set_ylim(bottom=0)
            n_seqs = len({r["seq"] for r in rs})
            fig.suptitle(f"{MODEL_LABEL[model]} — {REGION_LABEL[region]} spans of 2–6 residues — "
                         f"{data_label(rs)} ({n_seqs} sequences)\n"
                         "error bars: 95% Wilson (top-k), 95% bootstrap over sequences "
                         "(per-residue)", fontsize=11)
            names = sorted(handles, key=lambda nm: method_sort(f"{nm}/b5"))
            labels = [nm + " (n = " + ", ".join(f"{v} at beam {bm}" for bm, v in
                                                sorted(handles[nm][1].items())) + " per gap)"
                      for nm in names]
            fig.legend([handles[nm][0] for nm in names], labels, loc="center left",
                       bbox_to_anchor=(0.995, 0.5), fontsize=8.5, frameon=False,
                       title="method (spans per gap length)")
            fig.tight_layout(rect=(0, 0, 1, 0.95))
            p = out / f"accuracy_{model}_{region}.png"
            fig.savefig(p, dpi=110, bbox_inches="tight")
            plt.close(fig)
            pngs.append(p.name)

    # paired differences (pooled over gap lengths)
    ps = [p for p in summary["paired"] if p["n_gap"] == "all"]
    if ps:
        fig, axes = plt.subplots(1, 3, figsize=(15, 0.42 * len(ps) + 2.2), sharey=True)
        labels = [f"{MODEL_LABEL[p['model']]} · {REGION_LABEL.get(p['region'], 'CDR-H3 + framework')}"
                  f" · {p['order']} · beam {p['beam']}  (n={p['n']}, {p['n_seqs']} seqs)" for p in ps]
        ys = list(range(len(ps)))[::-1]
        style = {("l2r", 5): ("#0072B2", "o"), ("l2r", 20): ("#56B4E9", "s"),
                 ("b2w", 5): ("#D55E00", "^"), ("b2w", 20): ("#E69F00", "v")}
        for ax, (metric, title) in zip(axes, (("top1", "Δ top-1 (points)"),
                                               ("top5", "Δ top-5 (points)"),
                                               ("res_acc", "Δ per-residue accuracy (points)"))):
            seen = set()
            for y, p in zip(ys, ps):
                colour, marker = style[(p["order"], p["beam"])]
                r = p[metric]
                lab = f"{p['order']}, beam {p['beam']}"
                ax.errorbar([r["mean_diff"]], [y], xerr=[[r["mean_diff"] - r["lo"]],
                                                         [r["hi"] - r["mean_diff"]]],
                            color=colour, marker=marker, ms=6, capsize=3, ls="none",
                            label=None if lab in seen else lab)
                seen.add(lab)
            ax.axvline(0, color="black", lw=0.8)
            ax.set_xlabel(f"HCB − standard, {title.split(' (')[0][2:]} (percentage points)")
            ax.set_title(title, fontsize=10)
            ax.grid(alpha=0.3, axis="x")
        axes[0].set_yticks(ys)
        axes[0].set_yticklabels(labels, fontsize=8)
        h, lab = axes[0].get_legend_handles_labels()
        fig.legend(h, lab, loc="center left", bbox_to_anchor=(0.995, 0.5), frameon=False,
                   title="order, beam")
        fig.suptitle("HCB − standard beam search (same order, same beam, same spans; gap lengths "
                     "2–6 residues pooled), 95% paired bootstrap over sequences\n"
                     f"{data_label(dec)}", fontsize=11)
        fig.tight_layout(rect=(0, 0, 1, 0.94))
        p = out / "paired_hcb_minus_standard.png"
        fig.savefig(p, dpi=110, bbox_inches="tight")
        plt.close(fig)
        pngs.append(p.name)

    # pivot sweep
    sw = summary["sweep"]
    if len(sw) >= 2:
        fig, ax = plt.subplots(figsize=(12, 4.6))
        piv = [e for e in sw if e["pivot"] != "standard"]
        std = next((e for e in sw if e["pivot"] == "standard"), None)
        xs = list(range(len(piv)))
        for x, e in zip(xs, piv):
            special = e["pivot"] in ("[MASK]", "[CLS]")
            colour = "#D55E00" if e["pivot"] == "[MASK]" else "#009E73" if special else "#0072B2"
            marker = "D" if e["pivot"] == "[MASK]" else "s" if special else "o"
            ax.errorbar([x], [e["top1"]], yerr=[[e["top1"] - e["top1_ci"][0]],
                                                [e["top1_ci"][1] - e["top1"]]],
                        color=colour, marker=marker, ms=6, capsize=3, ls="none")
        if std is not None:
            ax.axhline(std["top1"], color="#E69F00", ls="--", lw=1.2)
            ax.axhspan(std["top1_ci"][0], std["top1_ci"][1], color="#E69F00", alpha=0.12)
        ax.set_xticks(xs)
        ax.set_xticklabels([e["pivot"] for e in piv], rotation=45, ha="right", fontsize=9)
        ax.set_xlabel("HCB pivot token (injected at the unfilled gap positions), sorted by top-1")
        ax.set_ylabel("top-1 exact span match (%)")
        ax.grid(alpha=0.3, axis="y")
        from matplotlib.lines import Line2D
        hs = [Line2D([], [], color="#D55E00", marker="D", ls="none", label="HCB, pivot [MASK] (default)"),
              Line2D([], [], color="#009E73", marker="s", ls="none", label="HCB, pivot [CLS]"),
              Line2D([], [], color="#0072B2", marker="o", ls="none", label="HCB, residue pivot"),
              Line2D([], [], color="#E69F00", ls="--", label="standard beam search (band: 95% CI)")]
        ax.legend(handles=hs, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        n0 = piv[0]
        ax.set_title(f"AntiBERTy — HCB pivot sweep, left-to-right, beam 5 — CDR-H3 spans of 2–6 "
                     f"residues pooled\n{n0['n_seqs']} sequences, n={n0['n']} spans per pivot; "
                     "95% Wilson intervals", fontsize=10.5)
        fig.tight_layout()
        p = out / "pivot_sweep_antiberty.png"
        fig.savefig(p, dpi=110, bbox_inches="tight")
        plt.close(fig)
        pngs.append(p.name)
    return pngs


# ------------------------------------------------------------------------------------------------
# markdown
# ------------------------------------------------------------------------------------------------
def ci(c, k):
    v = c.get(k + "_ci")
    return "" if not v else f" [{v[0]:.1f}, {v[1]:.1f}]"


def write_md(out: Path, s: dict, cell: dict, pngs: list[str]) -> None:
    cfg = s["config"]
    L = ["# Antibody heavy chains: HCB vs standard beam search on pretrained MLMs", ""]
    L += ["Command (resumable; `--summary-only` re-renders this file from results.jsonl):", "",
          "```", cfg.get("command", "?"), "```", ""]
    wall = cfg.get("wall_seconds")
    L += [f"Wall time of the run: {hms(wall) if wall else 'n/a'} (h:mm:ss, all sessions); "
          f"decoding time summed over rows: {hms(s['compute_seconds'])}; one CPU thread "
          f"(OMP_NUM_THREADS=1), float32, seed {cfg['seed']}.", ""]
    L += ["Data: abstar heavy chains (`data/antibody/hiv_bnab_heavy.fa`, `reads_1k_heavy.fa`; no "
          "light chains), IMGT-numbered once with anarcism. Spans: one per sequence, region and gap "
          "length (2–6 residues), seeded, fully inside CDR-H3 (IMGT 105–117) or inside one "
          "framework (FR1–FR4 pooled: the span never crosses a CDR). Same spans for every model "
          "and method. Metrics: top-k = gold span among the k best completions; per-residue = "
          "fraction of the span's residues the top-1 gets right; BLEU = sacrebleu corpus BLEU of "
          "the top-1 over residues, BLEU-n with n = min(4, gap length), pooled column = mean over "
          "gap lengths. Sampling baselines use the same engine at matched budget (B rows).", ""]
    # sample sizes
    L += ["## Sample sizes", "", "| model | part | sequences used (bnAbs + reads) | skipped: too long "
          "| spans per gap length (CDR-H3 / framework) | skipped: region too short |",
          "|---|---|---|---|---|---|"]
    usage = s.get("usage") or {}
    for model, parts in usage.get("models", {}).items():
        for part, u in parts.items():
            used = u["used"]
            tl = u["skipped_too_long"]
            if part == "joint":
                spans = f"{u.get('pairs', 0)} pairs"
                nofit = str(u.get("skipped_no_fit", 0))
            else:
                ex = u.get("examples", {})
                spans = " / ".join(
                    ",".join(str(ex.get(f"{reg}/n={n}", "–")) for n in GAPS)
                    for reg in (("cdr3",) if part == "sweep" else REGIONS))
                nf = u.get("skipped_no_fit", {})
                nofit = str(sum(nf.values())) if nf else "0"
            L.append(f"| {MODEL_LABEL[model]} | {part} | {used['bnab']} + {used['reads']} | "
                     f"{tl['bnab']} + {tl['reads']} (> {u['max_residues']} residues) | {spans} | {nofit} |")
    nb = usage.get("numbering", {})
    if nb:
        L += ["", "Numbering: " + "; ".join(
            f"{DATA_LABEL[d]}: {v['records']} records, {v['not numbered']} not numbered, "
            f"{v['anchors missing']} with misplaced anchors" for d, v in nb.items()) + "."]
    L.append("")

    # main tables
    L += ["## Accuracy", "",
          "Top-1 exact match (%) by gap length, then pooled over gap lengths: top-1 / top-5 / "
          "per-residue (%) / BLEU. n = spans per gap length.", ""]
    for model in MODELS:
        for region in REGIONS:
            meths = sorted({k[2] for k in cell if k[0] == model and k[1] == region}, key=method_sort)
            if not meths:
                continue
            L += [f"### {MODEL_LABEL[model]}, {REGION_LABEL[region]}", "",
                  "| method | n | " + " | ".join(f"top-1 n={n}" for n in GAPS)
                  + " | top-1 | top-5 | per-res | BLEU |",
                  "|---|---:|" + "---:|" * (len(GAPS) + 4)]
            for mk in meths:
                c = cell.get((model, region, mk, "all"))
                ns = sorted({cell[(model, region, mk, n)]["n"] for n in GAPS
                             if (model, region, mk, n) in cell})
                nlab = str(ns[0]) if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"
                L.append(f"| {mk} | {nlab} | " + " | ".join(
                    f1(cell[(model, region, mk, n)]["top1"]) if (model, region, mk, n) in cell else "–"
                    for n in GAPS) + f" | {f1(c['top1'])} | {f1(c['top5'])} | {f1(c['res_acc'])} | "
                    f"{f1(c['bleu'])} |")
            L.append("")
            if f"accuracy_{model}_{region}.png" in pngs:
                L += [f"![{model} {region}](accuracy_{model}_{region}.png)", ""]

    # the full table: model x region x gap length x method
    L += ["### Full table: every model × region × gap length × method", "",
          "n = spans (one per sequence); top-1 / top-5 with 95% Wilson intervals; per-residue with "
          "a 95% bootstrap interval over sequences; BLEU = sacrebleu corpus BLEU of the top-1.", "",
          "<details><summary>show</summary>", "",
          "| model | region | gap | method | n | top-1 [95% CI] | top-5 [95% CI] | per-res [95% CI] "
          "| BLEU |", "|---|---|---:|---|---:|---:|---:|---:|---:|"]
    for model in MODELS:
        for region in REGIONS:
            meths = sorted({k[2] for k in cell if k[0] == model and k[1] == region}, key=method_sort)
            for n in (*GAPS, "all"):
                for mk in meths:
                    c = cell.get((model, region, mk, n))
                    if c is None:
                        continue
                    L.append(f"| {MODEL_LABEL[model]} | {REGION_LABEL[region]} | {n} | {mk} | "
                             f"{c['n']} | {f1(c['top1'])}{ci(c, 'top1')} | {f1(c['top5'])}"
                             f"{ci(c, 'top5')} | {f1(c['res_acc'])}{ci(c, 'res_acc')} | "
                             f"{f1(c['bleu'])} |")
    L += ["", "</details>", ""]

    # paired
    L += ["## HCB − standard (paired, same spans)", "",
          "Mean difference HCB − standard in percentage points over the same spans (gap lengths "
          "2–6 pooled), 95% paired bootstrap interval resampling sequences (10,000 replicates; "
          "the spans of one sequence move together), two-sided bootstrap p. Levels: HCB / "
          "standard top-1. `+/-`: spans where HCB's top-1 is right and standard's wrong / the "
          "reverse. `top-1 ≠`: spans where the two top-1 fills differ at all (% of n).", "",
          "| model | region | order | beam | n (seqs) | top-1 ≠ | top-1 HCB / std | Δ top-1 [95% CI] "
          "| p | +/- | Δ top-5 [95% CI] | Δ per-res [95% CI] |",
          "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in s["paired"]:
        if p["n_gap"] != "all":
            continue
        t1, t5, ra = p["top1"], p["top5"], p["res_acc"]

        def iv(r):
            return f"{r['mean_diff']:+.2f} [{r['lo']:+.2f}, {r['hi']:+.2f}]"
        reg = REGION_LABEL.get(p["region"], "both")
        sig = " **" if (t1["lo"] > 0 or t1["hi"] < 0) else ""
        L.append(f"| {MODEL_LABEL[p['model']]} | {reg} | {p['order']} | {p['beam']} | {p['n']} "
                 f"({p['n_seqs']}) | {100 * p['top1_differs'] / p['n']:.1f} | "
                 f"{t1['hcb']:.1f} / {t1['standard']:.1f} | {iv(t1)}{sig} | "
                 f"{t1['p_two_sided']:.3f} | {t1['hcb_better']}/{t1['std_better']} | {iv(t5)} | {iv(ra)} |")
    L += ["", "** the 95% interval excludes 0.", ""]
    if "paired_hcb_minus_standard.png" in pngs:
        L += ["![paired](paired_hcb_minus_standard.png)", ""]
    # per gap length, top-1
    L += ["Δ top-1 (points) by gap length, both regions pooled [95% CI]:", "",
          "| model | order | beam | " + " | ".join(f"n={n}" for n in GAPS) + " |",
          "|---|---|---:|" + "---:|" * len(GAPS)]
    for model in MODELS:
        for beam in (5, 20):
            for order in ("l2r", "b2w"):
                ps = {p["n_gap"]: p for p in s["paired"] if p["model"] == model and p["beam"] == beam
                      and p["order"] == order and p["region"] == "both"}
                if not ps:
                    continue
                L.append(f"| {MODEL_LABEL[model]} | {order} | {beam} | " + " | ".join(
                    (f"{ps[n]['top1']['mean_diff']:+.1f} [{ps[n]['top1']['lo']:+.1f}, "
                     f"{ps[n]['top1']['hi']:+.1f}]") if n in ps else "–" for n in GAPS) + " |")
    L.append("")

    # sweep
    if s["sweep"]:
        std = next((e for e in s["sweep"] if e["pivot"] == "standard"), None)
        L += ["## Pivot sweep (AntiBERTy, CDR-H3, HCB left-to-right, beam 5)", "",
              f"Gap lengths 2–6 pooled; {s['sweep'][0]['n_seqs']} sequences, n = "
              f"{s['sweep'][0]['n']} spans per pivot. Non-[MASK] pivots are injected at the "
              "unfilled gap positions as context (SPEC §1). Δ vs [MASK]: paired bootstrap over "
              "sequences (no correction for the 21 comparisons)."
              + (f" Standard beam search: {std['top1']:.1f}{ci(std, 'top1')}." if std else ""), "",
              "| pivot | top-1 [95% Wilson] | top-5 | per-res | " + " | ".join(
                  f"n={n}" for n in GAPS) + " | Δ top-1 vs [MASK] [95% CI] |",
              "|---|---:|---:|---:|" + "---:|" * len(GAPS) + "---:|"]
        for e in s["sweep"]:
            vm = e.get("vs_mask")
            d = "–" if not vm else f"{vm['mean_diff']:+.1f} [{vm['lo']:+.1f}, {vm['hi']:+.1f}]"
            L.append(f"| `{e['pivot']}` | {e['top1']:.1f}{ci(e, 'top1')} | {e['top5']:.1f} | "
                     f"{e['res_acc']:.1f} | " + " | ".join(f1(e['by_n'][str(n)]) for n in GAPS)
                     + f" | {d} |")
        L.append("")
        if "pivot_sweep_antiberty.png" in pngs:
            L += ["![pivot sweep](pivot_sweep_antiberty.png)", ""]

    # joint
    if s.get("joint"):
        from infill.joint.metrics import format_table
        j = s["joint"]
        L += ["## Pairwise joints (AntiBERTy, contiguous pairs inside CDR-H3)", "",
              f"{j['n']} pairs (one per sequence, {j['n_seqs']} sequences), candidate grid "
              f"{'/'.join(f'{a}x{b}' for a, b in j['grid'])} (the 20 residues), AG "
              f"{j['ag_iterations']} iterations (objective monotone: {j['ag_monotone']}, max final "
              f"TV change {j['ag_final_change_max']:.1e}). Lower is better.", "",
              format_table(j["table"]), ""]
    (out / "summary.md").write_text("\n".join(L) + "\n")


# ------------------------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--gaps", default=",".join(map(str, GAPS)))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sampling", default="pure,temp0.5,nucleus0.9",
                    help="sampling baselines (names of infill.bench.methods)")
    sz = {"type": parse_size}
    ap.add_argument("--antiberty-beam5", default=(24, 12), **sz, help="B+R sequences")
    ap.add_argument("--antiberty-beam20", default=(6, 3), **sz)
    ap.add_argument("--antiberty-sampling", default=(6, 3), **sz)
    ap.add_argument("--antiberty-sampling-beams", default="5",
                    help="beam sizes (rows) of AntiBERTy's sampling baselines")
    ap.add_argument("--sapiens-beam5", default=(202, 100), **sz)
    ap.add_argument("--sapiens-beam20", default=(100, 50), **sz)
    ap.add_argument("--sapiens-sampling", default=(40, 20), **sz)
    ap.add_argument("--sapiens-sampling-beams", default="5,20")
    ap.add_argument("--sweep", default=(5, 3), **sz, help="AntiBERTy pivot sweep, B+R sequences")
    ap.add_argument("--joint", default=(70, 30), **sz, help="AntiBERTy pairwise joints, B+R")
    ap.add_argument("--joint-size", type=int, default=50)
    ap.add_argument("--ag-iterations", type=int, default=50)
    ap.add_argument("--rows-per-call", type=int, default=160,
                    help="forward rows per model call (examples per call = this // beam)")
    ap.add_argument("--estimate", action="store_true", help="time a few decodes, print the plan's cost")
    ap.add_argument("--summary-only", action="store_true")
    args = ap.parse_args()
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    args.gaps = [int(x) for x in args.gaps.split(",")]
    for k in ("antiberty_sampling_beams", "sapiens_sampling_beams"):
        v = getattr(args, k)
        setattr(args, k, [int(x) for x in v.split(",")] if isinstance(v, str) else list(v))
    out = args.out if args.out.is_absolute() else ROOT / args.out
    out.mkdir(parents=True, exist_ok=True)

    import torch
    import warnings
    warnings.filterwarnings("ignore", category=UserWarning, module="infill")
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    import infill

    def log(msg: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)

    t_start = time.time()
    if args.summary_only and (out / "config.json").exists():
        old = json.loads((out / "config.json").read_text())
        args.seed, args.gaps = old.get("seed", args.seed), old.get("gaps", args.gaps)
    cfg = check_config(out, args)
    if args.summary_only and cfg.get("sizes"):    # the run's own sizes, whatever the defaults
        for model, parts in cfg["sizes"].items():
            prefix = "antiberty" if model == "antiberty" else "sapiens"
            for part, v in parts.items():
                name = part if part in ("sweep", "joint") else f"{prefix}_{part}"
                if part in ("sweep", "joint") and model != "antiberty":
                    continue
                setattr(args, name, tuple(v))
        args.sampling = cfg.get("sampling", args.sampling)
        for k in ("antiberty_sampling_beams", "sapiens_sampling_beams"):
            setattr(args, k, cfg.get(k, getattr(args, k)))
        args.models = cfg.get("models", args.models)
    seqs, skips = load_sequences()
    log(f"numbered: {', '.join(f'{k} {len(v)}' for k, v in seqs.items())} ({time.time() - t_start:.0f}s)")
    models = {m: infill.load_model(m, device="cpu") for m in args.models}
    plan = make_plan(args, models, seqs, skips)
    rows = read_rows(out / "results.jsonl")
    if args.estimate:
        estimate(plan, models, rows, args)
        return
    if not args.summary_only:
        cmd = "OMP_NUM_THREADS=1 python benchmarks/antibody.py " + shlex.join(sys.argv[1:])
        cfg.update({"command": cmd.strip(), "models": args.models, "sampling": args.sampling,
                    "antiberty_sampling_beams": args.antiberty_sampling_beams,
                    "sapiens_sampling_beams": args.sapiens_sampling_beams,
                    "sizes": {m: {p: list(v) for p, v in d.items()} for m, d in sizes_of(args).items()},
                    "joint_size": args.joint_size, "ag_iterations": args.ag_iterations,
                    "rows_per_call": args.rows_per_call, "torch": torch.__version__,
                    "infill": infill.__version__, "usage": plan.usage})
        (out / "config.json").write_text(json.dumps(cfg, indent=1))
        log(f"{len(rows)} rows already in {out / 'results.jsonl'}")
        writer = RowWriter(out / "results.jsonl")
        try:
            run_tasks(plan, models, rows, writer, args, log)
        finally:
            writer.close()
            sessions = cfg.setdefault("sessions", [])
            sessions.append({"start": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t_start)),
                             "wall_seconds": round(time.time() - t_start, 1)})
            cfg["wall_seconds"] = round(sum(x["wall_seconds"] for x in sessions), 1)
            (out / "config.json").write_text(json.dumps(cfg, indent=1))
    else:
        old = json.loads((out / "config.json").read_text()) if (out / "config.json").exists() else {}
        cfg = {**old, **cfg}
    log("summarizing")
    summarize(out, rows, plan, cfg, args)
    log(f"wrote {out / 'summary.md'}")


if __name__ == "__main__":
    main()
