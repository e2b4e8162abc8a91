"""HCB vs standard beam search on antibody heavy chains with two pretrained MLMs (AntiBERTy,
Sapiens-VH): spans of 2-6 residues hidden inside CDR-H3 and inside the frameworks.

    OMP_NUM_THREADS=1 python benchmarks/antibody.py --estimate      # cost per row, planned hours
    OMP_NUM_THREADS=1 nohup python benchmarks/antibody.py > benchmarks/results/antibody/run.log 2>&1 &
    python benchmarks/antibody.py --summary-only                     # tables and plots from the rows

Data: the committed abstar heavy chains (data/antibody/hiv_bnab_heavy.fa, reads_1k_heavy.fa; no
light chains). Every sequence is IMGT-numbered once (anarcism, infill.data.regions). Sequences are
taken in a seeded random order per file, and each part of the benchmark uses the first B bnAbs and
R reads of that order (``--X B+R``), so smaller parts are subsets of larger ones.

Spans (the example selector, :class:`RegionSpans`): for every sequence, region and gap length n in
2..6, one span of n residues drawn with a generator seeded by (seed, file, sequence, region, n):
uniformly among the starts that keep the span inside CDR-H3 (IMGT 105-117) or, for the region
``fr``, inside one framework (FR1, FR2, FR3 or FR4, IMGT 1-26 / 39-55 / 66-104 / 118-128, all
starts of all four pooled). A sequence whose region is too short is skipped and counted;
Sapiens-VH refuses sequences over 142 residues (skipped and counted). The spans do not depend on
the model, the method or the sizes of the parts.

Decoding is ``infill bench``'s runner (infill.bench.runner.run_bench) with this selector: one run
per (model, part, region) in ``--out/runs/MODEL-PART-REGION`` (resumable; an example's id is its
sequence's, so a part grown later reuses the rows it has). Parts:

  beam5 / beam20   hcb-l2r, standard-l2r, hcb-b2w, standard-b2w at beam 5 / 20
  sampling         pure, temp0.5, nucleus0.9 (--sampling) at beams 5 and 20 (matched budget)
  sweep            AntiBERTy, CDR-H3: HCB left-to-right beam 5 with pivot [CLS], [MASK] (the
                   default) and each of the 20 residues (injected as context), plus standard
  joint            AntiBERTy, contiguous pairs inside CDR-H3: U-PPL, P-PPL, A-KL, G-KL of the
                   MLM, MRF-L, MRF, HCB and AG pairwise joints (infill.joint.metrics); rows in
                   ``--out/joint.jsonl``

Metrics: top-1 / top-5 exact span match, per-residue accuracy of the top-1, BLEU of the top-1
(sacrebleu over residues, infill.bench.metrics); HCB - standard with the same order and beam as a
paired difference over the same spans, 95% paired bootstrap resampling sequences
(infill.bench.stats). Outputs in --out: config.json, summary.json, summary.md, *.png (the tables:
benchmarks/antibody_tables.py).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from antibody_tables import GAPS, MODELS, REGIONS, summarize  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "antibody"
DATA = {"bnab": ROOT / "data" / "antibody" / "hiv_bnab_heavy.fa",
        "reads": ROOT / "data" / "antibody" / "reads_1k_heavy.fa"}
ID_BASE = {"bnab": 0, "reads": 1_000_000}
"""An example's id: its sequence's index in its file, plus its file's base."""
FRAMEWORKS = ("fr1", "fr2", "fr3", "fr4")
BEAM_METHODS = ("hcb-l2r", "standard-l2r", "hcb-b2w", "standard-b2w")
RESIDUES = "ACDEFGHIKLMNPQRSTVWY"
SWEEP_PIVOTS = ("[CLS]", "[MASK]", *RESIDUES)
PARTS = ("beam5", "beam20", "sampling", "sweep", "joint")
TOP_K = (1, 5)


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

    @property
    def example_id(self) -> int:
        return ID_BASE[self.dataset] + self.index


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


@dataclass(frozen=True)
class RegionSpans:
    """The example selector: one span of every gap length inside ``region`` of each of
    ``seqs`` (the model's whole sequence, [CLS]/<s> first: the span starts one token later)."""

    seqs: tuple[Seq, ...]
    region: str
    seed: int

    def __call__(self, model, request):
        from infill.bench.gaps import Example
        from infill.bench.selectors import Selection

        examples = {n: [] for n in request.gap_lengths}
        skipped = {n: 0 for n in request.gap_lengths}
        for s in self.seqs:
            ids = tuple(model.tokenize(s.sequence))
            for n in request.gap_lengths:
                span = pick_span(s, self.region, n, self.seed)
                if span is None:
                    skipped[n] += 1
                else:
                    examples[n].append(Example(s.example_id, n, ids, span[0] + 1))
        k = len(self.seqs)
        return Selection(examples, skipped, k, k, k,
                         identity={"selector": "antibody-region-spans", "region": self.region})

    def seq_of(self, example_id: int) -> Seq:
        return next(s for s in self.seqs if s.example_id == example_id)


# ------------------------------------------------------------------------------------------------
# the plan: one bench run per (model, part, region), and the joint pairs
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    model: str
    part: str
    region: str
    request: object        # infill.bench.request.BenchRequest
    selector: RegionSpans

    def folder(self, out: Path) -> Path:
        return out / "runs" / f"{self.model}-{self.part}-{self.region}"


def sizes_of(args) -> dict[str, dict[str, tuple[int, int]]]:
    return {
        "antiberty": {"beam5": args.antiberty_beam5, "beam20": args.antiberty_beam20,
                      "sampling": args.antiberty_sampling, "sweep": args.sweep,
                      "joint": args.joint},
        "sapiens-vh": {"beam5": args.sapiens_beam5, "beam20": args.sapiens_beam20,
                       "sampling": args.sapiens_sampling, "sweep": (0, 0), "joint": (0, 0)},
    }


def grid_of(part: str, model: str, args) -> dict:
    """The BenchRequest fields of a part's grid: methods, beam sizes, pivots."""
    if part in ("beam5", "beam20"):
        return {"methods": BEAM_METHODS, "beam_size": (int(part[4:]),)}
    if part == "sampling":
        beams = args.antiberty_sampling_beams if model == "antiberty" \
            else args.sapiens_sampling_beams
        return {"methods": tuple(args.sampling.split(",")), "beam_size": tuple(beams)}
    return {"methods": ("hcb-l2r", "standard-l2r"), "beam_size": (5,), "pivot": SWEEP_PIVOTS}


def part_usage(model, part: str, pool: list[Seq]) -> tuple[dict, list[Seq]]:
    """A part's sample sizes (requested, used, skipped as too long) and its usable sequences."""
    usable = [s for s in pool if len(s.sequence) + 2 <= model.max_length]
    too_long = [s for s in pool if len(s.sequence) + 2 > model.max_length]
    info = {"used": {ds: sum(s.dataset == ds for s in usable) for ds in DATA},
            "skipped_too_long": {ds: sum(s.dataset == ds for s in too_long) for ds in DATA},
            "max_residues": model.max_length - 2}
    return info, usable


def joint_pairs(usable: list[Seq], seed: int, info: dict) -> list[tuple[Seq, int]]:
    """One contiguous pair inside CDR-H3 per sequence: (sequence, index of its first residue)."""
    pairs = []
    for s in usable:
        a = pick_span(s, "cdr3", 2, derive_seed(seed, "joint"))
        if a is not None:
            pairs.append((s, a[0]))
    info["skipped_no_fit"], info["pairs"] = len(usable) - len(pairs), len(pairs)
    return pairs


def region_runs(model_name: str, part: str, usable: list[Seq], args, info: dict) -> list[Run]:
    from infill.bench.request import BenchRequest

    grid = grid_of(part, model_name, args)
    batch = max(1, args.rows_per_call // max(grid["beam_size"]))
    runs = []
    info["examples"], info["skipped_no_fit"] = {}, {}
    for region in (("cdr3",) if part == "sweep" else REGIONS):
        request = BenchRequest(model=model_name, data="abstar heavy chains (data/antibody)",
                               examples=None, gap_lengths=tuple(args.gaps), top_k=TOP_K,
                               seed=args.seed, batch_size=batch, device="cpu", **grid)
        selector = RegionSpans(tuple(usable), region, args.seed)
        for n in args.gaps:
            fits = sum(pick_span(s, region, n, args.seed) is not None for s in usable)
            info["examples"][f"{region}/n={n}"] = fits
            info["skipped_no_fit"][f"{region}/n={n}"] = len(usable) - fits
        runs.append(Run(model_name, part, region, request, selector))
    return runs


def make_plan(args, models: dict, seqs: dict[str, list[Seq]], numbering_skips: dict):
    """(runs in run order, joint pairs, usage: sample sizes and skips)."""
    order = seq_order(seqs, args.seed)
    sizes = sizes_of(args)
    runs, joint = [], []
    usage: dict = {"numbering": numbering_skips, "models": {}}
    for name in args.models:
        mu = usage["models"][name] = {}
        for part in PARTS:
            b, r = sizes[name][part]
            if b + r == 0:
                continue
            info, usable = part_usage(models[name], part, order["bnab"][:b] + order["reads"][:r])
            mu[part] = {"requested": {"bnab": b, "reads": r}, **info}
            if part == "joint":
                joint = joint_pairs(usable, args.seed, mu[part])
            else:
                runs += region_runs(name, part, usable, args, mu[part])
    # run order: the central comparison first, then the rest
    runs.sort(key=lambda t: (PARTS.index(t.part), MODELS.index(t.model), t.region))
    return runs, joint, usage


# ------------------------------------------------------------------------------------------------
# running
# ------------------------------------------------------------------------------------------------
def run_all(runs: list[Run], joint, models: dict, out: Path, args, log) -> None:
    """Every run (the runner resumes each), the joint pairs after the beam-5 grid."""
    from infill.bench.runner import run_bench

    joint_done = False
    for run in runs:
        if not joint_done and PARTS.index(run.part) > PARTS.index("beam5"):
            run_joint(joint, models, out, args, log)
            joint_done = True
        t0 = time.time()
        s = run_bench(run.request, run.folder(out), model=models[run.model],
                      selector=run.selector, progress=False)
        log(f"{run.model} {run.part} {run.region}: {s['counts']['rows']} rows "
            f"({time.time() - t0:.0f}s)")
    if not joint_done:
        run_joint(joint, models, out, args, log)


def _is_joint_row(row) -> bool:
    return isinstance(row, dict) and isinstance(row.get("key"), str) and row.get("kind") == "joint"


def read_joint(out: Path) -> dict[str, dict]:
    from infill.bench.runner import read_rows
    return {r["key"]: r for r in read_rows(out / "joint.jsonl", is_row=_is_joint_row)}


def run_joint(pairs, models, out: Path, args, log, chunk: int = 16) -> None:
    """The pairwise joints of ``pairs`` (rows appended to joint.jsonl; a re-run skips them)."""
    from infill.bench.runner import RowWriter
    from infill.joint.metrics import PairExample, evaluate_joints

    done = read_joint(out)
    todo = [(s, a) for s, a in pairs if f"joint|{s.sid}" not in done]
    if not todo:
        return
    model, writer = models["antiberty"], RowWriter(out / "joint.jsonl")
    try:
        for k in range(0, len(todo), chunk):
            part = todo[k:k + chunk]
            exs = [PairExample(model.tokenize(s.sequence), a + 1, a + 2, i)
                   for i, (s, a) in enumerate(part)]
            t0 = time.perf_counter()
            res = evaluate_joints(model, exs, joint_size=args.joint_size,
                                  iterations=args.ag_iterations, chunk=8)
            dt = time.perf_counter() - t0
            for (s, a), rec in zip(part, res.records):
                writer.write({"key": f"joint|{s.sid}", "kind": "joint", "model": "antiberty",
                              "seq": s.sid, "dataset": s.dataset, "seq_name": s.name, "a": a,
                              "pair": s.sequence[a:a + 2], "grid": rec["grid"],
                              "metrics": rec["metrics"], "ag_iterations": res.ag_iterations,
                              "ag_final_change": res.ag_final_change,
                              "ag_monotone": res.ag_monotone, "seconds": round(dt / len(part), 4)})
    finally:
        writer.close()
    log(f"joint: {len(todo)} pairs")


# ------------------------------------------------------------------------------------------------
# the rows, as the tables read them
# ------------------------------------------------------------------------------------------------
def records(runs: list[Run], models: dict, out: Path) -> list[dict]:
    """Every planned row of every run, with its model, region, sequence and residue strings;
    a row two parts share (the sweep's plain methods) once."""
    from infill.bench.methods import build_grid, expand_names
    from infill.bench.runner import RESULTS, example_key, read_rows, resolve_pivots

    recs: dict[tuple, dict] = {}
    for run in runs:
        model, req = models[run.model], run.request
        grid = build_grid(expand_names(list(req.methods)), list(req.beam_size),
                          resolve_pivots(model, list(req.pivot)))
        plan = run.selector(model, req)
        wanted = {example_key(m, e): (m, e) for m in grid for exs in plan.examples.values()
                  for e in exs}
        for row in read_rows(run.folder(out) / RESULTS):
            if row["key"] in wanted:
                method, ex = wanted[row["key"]]
                rec = record(run, model, method, ex, row)
                recs.setdefault((rec["model"], rec["method"], rec["region"], rec["n"],
                                 rec["seq"]), rec)
    return list(recs.values())


def record(run: Run, model, method, ex, row: dict) -> dict:
    """One row in the tables' terms (residue strings, top-1 / top-5 hits, per-residue
    accuracy)."""
    seq = run.selector.seq_of(ex.example_id)
    gold = seq.sequence[ex.start - 1:ex.start - 1 + ex.n]
    fills = [model.detokenize(h) for h in row["hyps"]]
    top = fills[0] if fills else ""
    cfg = method.config
    return {
        "key": f"{run.model}|{method.key}|{run.region}|n={ex.n}|{seq.sid}", "model": run.model,
        "method": method.key, "name": method.name, "scorer": cfg.scorer_name,
        "order": cfg.order, "beam": cfg.beam_size, "sampling": cfg.sampling,
        "pivot": method.pivot_label, "region": run.region,
        "part": pick_span(seq, run.region, ex.n, run.request.seed)[1], "n": ex.n,
        "seq": seq.sid, "dataset": seq.dataset, "seq_name": seq.name, "start": ex.start - 1,
        "gold": gold, "hyps": fills, "scores": [round(x, 5) for x in row["scores"]],
        "rank": row["rank"], "top1": row["hits"]["1"], "top5": row["hits"].get("5"),
        "res_acc": sum(a == b for a, b in zip(top, gold)) / ex.n if top else 0.0,
        "bleu": row["bleu"], "forward_rows": row["forward_rows"], "seconds": row["seconds"],
    }


# ------------------------------------------------------------------------------------------------
# estimate
# ------------------------------------------------------------------------------------------------
def estimate(runs: list[Run], joint, models, out: Path, args) -> None:
    """Time a few real decodes per model, then the missing rows' forward rows -> hours."""
    from infill.api import run_decoder
    from infill.config import DecodeConfig

    rate = {}
    for name, model in models.items():
        run = next(r for r in runs if r.model == name and r.region == "cdr3")
        exs = run.selector(model, run.request).examples.get(4) or next(
            e for e in run.selector(model, run.request).examples.values() if e)
        for beam in (5, 20):
            per = max(1, min(len(exs), args.rows_per_call // beam))
            t0 = time.perf_counter()
            run_decoder(model, [e.masked(model.mask_id) for e in exs[:per]], None,
                        DecodeConfig(scorer="hcb", beam_size=beam))
            dt = time.perf_counter() - t0
            fr = per * (1 + (exs[0].n - 1) * beam)
            rate.setdefault(name, []).append(dt / fr)
            print(f"{name}: beam {beam}, {per} spans of {exs[0].n} residues: {dt:.2f}s, {fr} "
                  f"forward rows, {dt / fr * 1000:.1f} ms/row", flush=True)
    rate = {k: sum(v) / len(v) for k, v in rate.items()}
    done = {r["key"] for r in records(runs, models, out)}
    by: dict[tuple[str, str], float] = {}
    for run in runs:
        plan = run.selector(models[run.model], run.request)
        for m in run.request.methods:
            for beam in run.request.beam_size:
                for n, exs in plan.examples.items():
                    left = sum(f"{run.model}|{m}/b{beam}|{run.region}|n={n}|"
                               f"{run.selector.seq_of(e.example_id).sid}" not in done
                               for e in exs)
                    cost = left * (1 + (n - 1) * beam) * rate[run.model]
                    by[(run.model, run.part)] = by.get((run.model, run.part), 0) + cost
    left = sum(f"joint|{s.sid}" not in read_joint(out) for s, _ in joint)
    if left:
        by[("antiberty", "joint")] = 41 * left * rate["antiberty"]
    for (m, p), s in sorted(by.items()):
        print(f"  {m:11s} {p:9s} {s / 3600:6.2f} h", flush=True)
    print(f"total {sum(by.values()) / 3600:.2f} h of one thread (missing rows only)", flush=True)


# ------------------------------------------------------------------------------------------------
def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--gap-lengths", "--gaps", dest="gaps", default=",".join(map(str, GAPS)))
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
    return args


def recorded_args(args, cfg: dict) -> None:
    """``--summary-only``: the run's own seed, gaps, sizes and grids, whatever the defaults."""
    args.seed, args.gaps = cfg.get("seed", args.seed), cfg.get("gaps", args.gaps)
    for model, parts in cfg.get("sizes", {}).items():
        prefix = "antiberty" if model == "antiberty" else "sapiens"
        for part, v in parts.items():
            if part in ("sweep", "joint") and model != "antiberty":
                continue
            setattr(args, part if part in ("sweep", "joint") else f"{prefix}_{part}", tuple(v))
    args.sampling = cfg.get("sampling", args.sampling)
    for k in ("antiberty_sampling_beams", "sapiens_sampling_beams"):
        setattr(args, k, cfg.get(k, getattr(args, k)))
    args.models = cfg.get("models", args.models)


def run_record(args, usage: dict, torch_version: str, version: str) -> dict:
    """What config.json keeps of a run besides its sessions: command, sizes, grids, versions."""
    cmd = "OMP_NUM_THREADS=1 python benchmarks/antibody.py " + shlex.join(sys.argv[1:])
    return {"seed": args.seed, "gaps": list(args.gaps), "command": cmd.strip(),
            "models": args.models, "sampling": args.sampling,
            "antiberty_sampling_beams": args.antiberty_sampling_beams,
            "sapiens_sampling_beams": args.sapiens_sampling_beams,
            "sizes": {m: {p: list(v) for p, v in d.items()} for m, d in sizes_of(args).items()},
            "joint_size": args.joint_size, "ag_iterations": args.ag_iterations,
            "rows_per_call": args.rows_per_call, "torch": torch_version, "infill": version,
            "usage": usage}


def main() -> None:
    args = parse_args()
    out = args.out if args.out.is_absolute() else ROOT / args.out
    out.mkdir(parents=True, exist_ok=True)
    import torch
    import warnings
    warnings.filterwarnings("ignore", category=UserWarning, module="infill")
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    import infill

    def log(msg: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)

    t_start, cfg_path = time.time(), out / "config.json"
    cfg = json.loads(cfg_path.read_text()) if cfg_path.exists() else {}
    if args.summary_only:
        recorded_args(args, cfg)
    seqs, skips = load_sequences()
    log(f"numbered: {', '.join(f'{k} {len(v)}' for k, v in seqs.items())} "
        f"({time.time() - t_start:.0f}s)")
    models = {m: infill.load_model(m, device="cpu") for m in args.models}
    runs, joint, usage = make_plan(args, models, seqs, skips)
    if args.estimate:
        return estimate(runs, joint, models, out, args)
    if not args.summary_only:
        cfg.update(run_record(args, usage, torch.__version__, infill.__version__))
        cfg_path.write_text(json.dumps(cfg, indent=1))
        try:
            run_all(runs, joint, models, out, args, log)
        finally:
            sessions = cfg.setdefault("sessions", [])
            sessions.append({"start": time.strftime("%Y-%m-%d %H:%M:%S",
                                                    time.localtime(t_start)),
                             "wall_seconds": round(time.time() - t_start, 1)})
            cfg["wall_seconds"] = round(sum(x["wall_seconds"] for x in sessions), 1)
            cfg_path.write_text(json.dumps(cfg, indent=1))
    log("summarizing")
    planned = {f"joint|{s.sid}" for s, _ in joint}
    jrows = [r for k, r in read_joint(out).items() if k in planned]
    sweep_seqs = {s.sid for run in runs if run.part == "sweep" for s in run.selector.seqs}
    summarize(out, records(runs, models, out), jrows, usage, {"seed": args.seed, **cfg},
              sweep_seqs)
    log(f"wrote {out / 'summary.md'}")


if __name__ == "__main__":
    main()
