"""The HCB beam-search paper's §7: static vs dynamic masking. Two small models are trained with
the same recipe except ``--masking static|dynamic`` (masks drawn once per example vs redrawn every
epoch), and at every checkpoint HCB and standard beam search are compared on the held-out split:
the gain HCB − standard in top-1 exact match, per decoding order.

    python benchmarks/masking.py [--family protein] [--records 4000] [--steps 1200] [--every 200]

The corpus is cut to its first ``--records`` examples (lines / FASTA records) so that a CPU run
covers many epochs: static masks only differ from dynamic ones from the second epoch on.

Training goes through the same loop as ``infill train FAMILY CORPUS --out DIR --masking M
--steps S ...``, stopped and resumed at every checkpoint (``stop_after`` / ``resume``) so each
stage's model can be saved and benchmarked; each stage's model lies in
benchmarks/results/bench/masking/<masking>/step<k>/ (weights not kept, only the bench results),
the table in benchmarks/results/bench/masking.md. The models and the corpus subset live in a
scratch folder (``--work``), so each summary also records display names for titles
(``model_label``, ``data_label``); ``--relabel`` rewrites them (and the plots) in finished runs.
"""
from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from common import RESULTS, ROOT, cells, fmt, infill_bench, rel

from infill.bench.report import render

METHODS = ["hcb-l2r", "standard-l2r", "hcb-b2w", "standard-b2w"]
GAPS = [2, 3, 4, 5]
CORPUS = {"english": "../shared/data/english/tinyshakespeare.txt",
          "greek": "../shared/data/greek/perseus_grc.txt",
          "protein": "../shared/data/protein/hypf.fa"}
CORPUS_NAME = {"english": "Tiny Shakespeare", "greek": "Perseus Greek", "protein": "HypF"}
ARCH = {"english": "BERT", "greek": "character transformer", "protein": "ESM2"}


def labels(family: str, masking: str, stage: int, records: int, opts: dict) -> dict:
    """Display names of one stage's run (its model and corpus are scratch files)."""
    size = f"{opts['layers']} layers x {opts['hidden']}"
    part = f"first {records:,} records" if records else "all records"
    return {"model_label": f"{family} {ARCH[family]}, {size} ({masking} masking, step {stage})",
            "data_label": f"{CORPUS_NAME[family]} ({part})"}


def relabel(out: Path, family: str, records: int, opts: dict) -> None:
    """Store display names in the finished runs under ``out`` and redraw their plots."""
    for path in sorted(out.glob("*/step*/summary.json")):
        masking, stage = path.parent.parent.name, int(path.parent.name[len("step"):])
        summary = json.loads(path.read_text(encoding="utf-8"))
        summary.update(labels(family, masking, stage, records, opts))
        render(summary, path.parent)
        print(path.parent, summary["plots"])


def artifact(model_dir: Path) -> Path:
    """What ``infill.load_model`` reads: the directory, or the fair-esm checkpoint inside it."""
    if (model_dir / "config.json").exists() or (model_dir / "charmodel.json").exists():
        return model_dir
    return next(p for p in sorted(model_dir.glob("esm2*.pt"))
                if not p.name.endswith("-contact-regression.pt"))


def subset_corpus(family: str, records: int, work: Path) -> Path:
    """The first ``records`` FASTA records / lines of the family's corpus, written under work."""
    src = (ROOT / CORPUS[family]).read_text(encoding="utf-8").splitlines(keepends=True)
    if family == "protein":
        starts = [i for i, line in enumerate(src) if line.startswith(">")]
        keep = src[:starts[records]] if records < len(starts) else src
    else:
        keep = src[:records]
    work.mkdir(parents=True, exist_ok=True)
    path = work / ("corpus.fa" if family == "protein" else "corpus.txt")
    path.write_text("".join(keep), encoding="utf-8")
    return path


def train_stage(family: str, corpus: Path, out: Path, masking: str, steps: int, stage: int,
                opts: dict, lr: float) -> dict:
    from infill.training import TrainConfig, run_training

    cfg = TrainConfig(out=str(out), masking=masking, steps=steps, stop_after=stage,
                      resume=(out / "checkpoint.pt").exists(), eval_every=stage,
                      checkpoint_every=10 ** 9, batch_size=32, lr=lr, seed=0, progress=False)
    res = run_training(family, str(corpus), cfg, **opts)
    return {"step": res.step, "val_loss": res.val_loss, "val_accuracy": res.val_accuracy}


def _report(a: argparse.Namespace, opts: dict, corpus: Path, table: dict[str, list[dict]],
            cmds: list[str]) -> list[str]:
    """The markdown report: the table of every stage under both maskings, and the commands."""
    opt_str = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in opts.items())
    lines = [f"{a.family} models ({opt_str}), trained on the first {a.records or 'all'} records of "
             f"{CORPUS[a.family]}, batch 32, lr {a.lr}, {a.steps} planned steps, "
             f"seed 0; top-1 exact match (%) on {a.examples} test-split examples, gaps "
             f"{GAPS[0]}-{GAPS[-1]} pooled, beam {a.beam}. Δ = HCB − standard (top-1; "
             "in brackets the same for top-5).", "",
             "| masking | step | val loss | val acc | HCB l2r | std l2r | Δ l2r | HCB b2w | "
             "std b2w | Δ b2w |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for masking, rows in table.items():
        for r in rows:
            lines.append(
                f"| {masking} | {r['step']} | {r['val_loss']:.3f} | {r['val_accuracy']:.3f} | "
                f"{fmt(r['hcb-l2r'])} | {fmt(r['standard-l2r'])} | "
                f"{fmt(r['hcb-l2r'] - r['standard-l2r'], 2)} "
                f"({fmt(r['hcb-l2r@5'] - r['standard-l2r@5'], 2)}) | {fmt(r['hcb-b2w'])} | "
                f"{fmt(r['standard-b2w'])} | {fmt(r['hcb-b2w'] - r['standard-b2w'], 2)} "
                f"({fmt(r['hcb-b2w@5'] - r['standard-b2w@5'], 2)}) |")
    lines += ["", "Training (per masking M, stage by stage through the same loop as):", "", "```",
              f"infill train {a.family} {rel(corpus)} --out DIR --masking M --steps {a.steps} "
              f"--batch-size 32 --lr {a.lr} --seed 0 {opt_str}", "```", "",
              "Benchmark of each stage (first stage shown):", "", "```"] + cmds + ["```", ""]
    return lines


def _args() -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", default="protein", choices=list(CORPUS))
    ap.add_argument("--steps", type=int, default=1200)
    ap.add_argument("--every", type=int, default=200)
    ap.add_argument("--records", type=int, default=4000,
                    help="Train/evaluate on the corpus's first N records (0 = all).")
    ap.add_argument("--examples", type=int, default=200)
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--max-length", type=int, default=130)
    ap.add_argument("--vocab-size", type=int, default=1000, help="english only")
    ap.add_argument("--keep-rows", action="store_true",
                    help="Keep each stage's results.jsonl (large); summaries are always kept.")
    ap.add_argument("--work", type=Path, default=Path("/tmp/infill_masking"),
                    help="Where the models are trained (not kept in the repository).")
    ap.add_argument("--out", type=Path, default=RESULTS / "masking")
    ap.add_argument("--table", type=Path, default=RESULTS / "masking.md")
    ap.add_argument("--relabel", action="store_true",
                    help="Only rewrite the display names and plots of the runs under --out.")
    return ap.parse_args()


def main() -> None:
    a = _args()
    opts = dict(layers=a.layers, hidden=a.hidden, heads=a.heads, max_length=a.max_length)
    if a.relabel:
        relabel(a.out, a.family, a.records, opts)
        return
    if a.family == "english":
        opts["vocab_size"] = a.vocab_size
    stages = list(range(a.every, a.steps + 1, a.every))
    if a.work.exists():
        shutil.rmtree(a.work)
    corpus = (subset_corpus(a.family, a.records, a.work) if a.records
              else ROOT / CORPUS[a.family])
    table: dict[str, list[dict]] = {}
    cmds = []
    for masking in ("static", "dynamic"):
        work = a.work / masking
        table[masking] = []
        for stage in stages:
            val = train_stage(a.family, corpus, work / "train", masking, a.steps, stage, opts,
                              a.lr)
            model_dir = work / f"step{stage}"
            shutil.copytree(work / "train", model_dir,
                            ignore=shutil.ignore_patterns("checkpoint.pt"))
            out = a.out / masking / f"step{stage}"
            args = [str(corpus), "--model", str(artifact(model_dir)), "--family", a.family,
                    "--split", "test", "--examples", str(a.examples),
                    "--gap-lengths", ",".join(map(str, GAPS)), "--methods", ",".join(METHODS),
                    "--beam-size", str(a.beam), "--top-k", "1,5",
                    "--device", "cpu", "--out", rel(out), "--no-progress", "--overwrite"]
            s = infill_bench(args)
            out = out if out.is_absolute() else ROOT / out
            s.update(labels(a.family, masking, stage, a.records, opts))
            render(s, out)                   # titles with display names, not scratch paths
            if not a.keep_rows:
                (out / "results.jsonl").unlink()
            if stage == stages[0]:
                cmds.append("infill bench " + " ".join(args))
            c = cells(s)
            row = dict(val, **{m: c[(f"{m}/b{a.beam}", "all")]["top1"] for m in METHODS},
                       **{f"{m}@5": c[(f"{m}/b{a.beam}", "all")]["top5"] for m in METHODS})
            table[masking].append(row)
            print(masking, json.dumps(row), flush=True)
    lines = _report(a, opts, corpus, table, cmds)
    a.table.parent.mkdir(parents=True, exist_ok=True)
    a.table.write_text("\n".join(lines))
    (a.out / "masking.json").write_text(json.dumps(table, indent=1))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
