"""Greek models compared on the editors' supplements of an IOSPE split (issue 20, item 6).

Reads finished `infill bench iospe` runs (one per model; the same --split, --gap-lengths and
seed, any -n: a smaller sample is a prefix of a larger one) and tabulates top-1/5/10 exact match
and the character error rate per model and method **on the supplements every run holds**, with
95% paired bootstrap intervals of each model minus the first (the baseline). Each RUN is
LABEL=DIR[:MINUTES] (MINUTES: the model's training time, for the accuracy-against-training-time
curve).

    python benchmarks/iospe_models.py --table benchmarks/results/bench/iospe_models.md \
        "shipped=/work/runs/eval/old_val150:87" "step29=/work/runs/eval/step29_val100:118"

Each run comes from, e.g.:

    OMP_NUM_THREADS=1 infill bench iospe --split validation -m MODEL --gap-lengths 1,2,3,4,5,6,7,8,9,10 \
        --methods hcb-l2r,standard-l2r --beam-size 10 -k 1,5,10 -n 150 --out DIR
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from common import write_table

from infill.bench.epidoc import cer
from infill.bench.stats import paired_bootstrap


def load(run: str) -> tuple[str, float | None, dict[str, dict[str, dict]], str]:
    """(label, minutes, {method: {example key: row}}, model name) of one LABEL=DIR[:MINUTES]."""
    label, _, rest = run.partition("=")
    path, _, minutes = rest.partition(":")
    rows: dict[str, dict[str, dict]] = {}
    for line in (Path(path) / "results.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        rows.setdefault(r["method"], {})[r["key"].split("|", 1)[1]] = r
    model = json.loads((Path(path) / "config.json").read_text())["model"]
    return label, float(minutes) if minutes else None, rows, model


def scores(r: dict) -> dict[str, float]:
    return {"top1": float(r["hits"]["1"]), "top5": float(r["hits"]["5"]),
            "top10": float(r["hits"]["10"]), "cer": cer(r["fill"], r["gold_fill"])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="LABEL=DIR[:MINUTES]; the first is the baseline")
    ap.add_argument("--table", type=Path, default=None)
    a = ap.parse_args()
    runs = [load(r) for r in a.runs]
    base = runs[0]
    lines = ["| model | training min | method | n | top-1 % | top-5 % | top-10 % | CER | "
             "top-1 vs baseline | top-10 vs baseline | CER vs baseline |",
             "|---|---:|---|---:|---:|---:|---:|---:|---|---|---|"]
    for label, minutes, rows, model in runs:
        for method, mine in rows.items():
            ref = base[2].get(method, {})
            held = [set(r[2][method]) for r in runs if method in r[2]]
            common = sorted(set.intersection(*held))
            if not common:
                continue
            s = [scores(mine[k]) for k in common]
            mean = {m: sum(x[m] for x in s) / len(s) for m in s[0]}
            diffs = []
            for m, scale in (("top1", 100), ("top10", 100), ("cer", 1)):
                if label == base[0] or not ref:
                    diffs.append("")
                    continue
                b = paired_bootstrap([x[m] for x in s], [scores(ref[k])[m] for k in common])
                d = 0 if scale == 100 else 3
                diffs.append(f"{scale * b['mean_diff']:+.{d}f} [{scale * b['lo']:+.{d}f}, "
                             f"{scale * b['hi']:+.{d}f}]")
            lines.append(f"| {label} (`{model}`) | {'' if minutes is None else f'{minutes:g}'} | "
                         f"{method} | {len(common)} | {100 * mean['top1']:.1f} | "
                         f"{100 * mean['top5']:.1f} | {100 * mean['top10']:.1f} | "
                         f"{mean['cer']:.3f} | " + " | ".join(diffs) + " |")
    write_table(lines + [""], ["python benchmarks/iospe_models.py " + " ".join(a.runs)],
                a.table) if a.table else print("\n".join(lines))


if __name__ == "__main__":
    main()
