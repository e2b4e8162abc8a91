"""Minimum Bayes risk for CER against the most probable restoration, builtin:greek on IOSPE.

The first restoration of a lacuna is the beam's most probable one; the measure issue 35 targets is
the CER of that first restoration. The decision that minimizes expected CER under the model is
the candidate c of the beam that minimizes sum_c' p(c') CER(c, c'), p the softmax of the
candidates' scores / T (Kumar & Byrne 2004's MBR, over the beam as the hypothesis and evidence
space). This script decodes every 1-10 letter supplement of a split once (standard left-to-right,
beam 10, ``rerank="pll"``, so each restoration keeps both its beam ``score`` and its
``rank_score`` = (score + PLL) / 2), caches them in ``--out`` (``scored.<split>.jsonl``), and
prints top-1 and CER of the first restoration under each decision, paired against the beam's
most probable one (95% paired bootstrap):

    OMP_NUM_THREADS=1 python benchmarks/iospe_mbr.py --split validation

Results: ``results/iospe_rerank.md`` ("Minimum Bayes risk"). Validation only: the rule was not
chosen, so the test split was not decoded for it.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import infill
from infill.bench.epidoc import cer
from infill.bench.stats import paired_bootstrap
from iospe_lengths_report import chosen_tasks, key, letters

TEMPERATURES = (0.5, 1.0, 2.0)


def decode(split: str, cache: Path) -> list[dict]:
    """Per supplement: the editor's reading, the beam's restorations and both their scores."""
    tasks = chosen_tasks(split, 0)
    done = {}
    if cache.is_file():
        for line in cache.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            done[row["key"]] = row
    todo = [t for t in tasks if key(t) not in done]
    if todo:
        model = infill.load_model("builtin:greek", device="cpu")
        t0 = time.perf_counter()
        with cache.open("a", encoding="utf-8") as f:
            for k, t in enumerate(todo):
                comps = infill.fill(model, t.text, gap=1, marker="?", beam_size=10, top_k=10,
                                    rerank="pll")[0]
                done[key(t)] = {"key": key(t), "gold": t.gold,
                                "fills": [letters(c) for c in comps],
                                "score": [c.score for c in comps],
                                "rank_score": [c.rank_score for c in comps]}
                f.write(json.dumps(done[key(t)], ensure_ascii=False) + "\n")
                f.flush()
                if k % 20 == 19:
                    print(f"  {k + 1}/{len(todo)} ({time.perf_counter() - t0:.0f} s)", flush=True)
    return [done[key(t)] for t in tasks]


def choose(row: dict, value: str, temperature: float | None) -> str:
    """The first restoration: the most probable (``temperature`` None) or the MBR one."""
    s = np.asarray(row[value], dtype=float)
    if temperature is None:
        return row["fills"][int(np.argmax(s))]
    p = np.exp((s - s.max()) / temperature)
    p /= p.sum()
    risk = [sum(pj * cer(c, other) for pj, other in zip(p, row["fills"])) for c in row["fills"]]
    return row["fills"][int(np.argmin(risk))]


def line(name: str, rows: list[dict], picks: list[str], base: tuple) -> str:
    top1 = np.array([float(p == r["gold"]) for p, r in zip(picks, rows)])
    errs = np.array([cer(p, r["gold"]) for p, r in zip(picks, rows)])
    d1, dc = paired_bootstrap(top1, base[0]), paired_bootstrap(errs, base[1])
    return (f"| {name} | {100 * top1.mean():.1f} | {errs.mean():.3f} | "
            f"{100 * d1['mean_diff']:+.1f} [{100 * d1['lo']:+.1f}, {100 * d1['hi']:+.1f}] | "
            f"{dc['mean_diff']:+.3f} [{dc['lo']:+.3f}, {dc['hi']:+.3f}] |"), (top1, errs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="validation", choices=["validation", "test"])
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "lengths")
    args = ap.parse_args()
    rows = decode(args.split, args.out / f"scored.{args.split}.jsonl")
    print(f"{len(rows)} supplements of the {args.split} split\n")
    print("| first restoration | top-1 % | CER | Δ top-1 | Δ CER |\n|---|---:|---:|---:|---:|")
    base = None
    for value, label in (("score", "beam score"), ("rank_score", "(score + PLL) / 2")):
        for temperature in (None, *TEMPERATURES):
            name = f"{label}, " + ("most probable" if temperature is None
                                   else f"MBR, T = {temperature:g}")
            picks = [choose(r, value, temperature) for r in rows]
            if base is None:
                _, base = line(name, rows, picks, (np.zeros(len(rows)), np.zeros(len(rows))))
            text, _ = line(name, rows, picks, base)
            print(text)


if __name__ == "__main__":
    main()
