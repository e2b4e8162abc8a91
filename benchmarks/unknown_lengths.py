"""Lacunae of unknown length on real inscriptions (issue 47): editors' supplements hidden as
``[---]`` and restored with ``unknown_lengths``, against the same supplements with their length
given.

Each editor's supplement of n = 2..10 letters in an IOSPE part (default: validation) -- a seeded
sample -- is hidden as a Leiden lacuna of unknown length, ``[---]``, and restored through the
job ``infill run`` runs (:func:`infill.jobs.fill.fill_inputs`, ``unknown_lengths=LO-HI``): every
length of the range decoded and the completions ranked by the length score. The oracle row gives
the editor's exact length. A restoration is right when it equals the editor's letters.

    OMP_NUM_THREADS=1 python benchmarks/unknown_lengths.py --examples 40 --range 1-12

Prints a markdown table: top-1 / top-10 exact, the character error rate of the first restoration,
how often the editor's length is the first restoration's (top-1 length) or among the first three
distinct lengths of the top 10 (top-3 lengths), and the seconds taken.
"""
from __future__ import annotations

import argparse
import random
import time

import torch
from iospe_lengths import MARK, letters

import infill
from infill.bench.epidoc import cer, epidoc_folder, tasks_for
from infill.jobs.fill import fill_inputs


def hidden(task) -> str:
    """The task's text with its run of ``?`` written as a lacuna of unknown length."""
    at = task.text.index(MARK * len(task.gold))
    return task.text[:at] + "[---]" + task.text[at + len(task.gold):]


def lengths_ranked(completions) -> list[int]:
    """The distinct lengths of ranked completions, in the order they first appear."""
    out: list[int] = []
    for c in completions:
        n = len(letters(c))
        if n not in out:
            out.append(n)
    return out


def row(name, comps, tasks, secs) -> str:
    fills = [[letters(y) for y in c] for c in comps]
    firsts = [f[0] if f else "" for f in fills]
    n = len(tasks)
    top1 = sum(f == x.gold for f, x in zip(firsts, tasks))
    top10 = sum(x.gold in f[:10] for f, x in zip(fills, tasks))
    err = sum(cer(f, x.gold) for f, x in zip(firsts, tasks)) / n
    ranked = [lengths_ranked(c) for c in comps]
    len1 = sum(bool(r) and r[0] == len(x.gold) for r, x in zip(ranked, tasks))
    len3 = sum(len(x.gold) in r[:3] for r, x in zip(ranked, tasks))
    return (f"| {name} | {100 * top1 / n:.1f}% | {100 * top10 / n:.1f}% | {err:.3f} | "
            f"{100 * len1 / n:.0f}% | {100 * len3 / n:.0f}% | {secs:.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:greek")
    ap.add_argument("--split", default="validation", choices=("train", "validation"))
    ap.add_argument("--examples", type=int, default=40)
    ap.add_argument("--beam", type=int, default=10)
    ap.add_argument("--range", default="1-12", help="unknown_lengths: LO-HI")
    ap.add_argument("--scores", default="pll-gap",
                    help="length scores to compare, comma-separated (each a row)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    tasks = tasks_for(epidoc_folder("iospe"), args.split, list(range(2, 11)))
    tasks = sorted(random.Random(0).sample(tasks, min(args.examples, len(tasks))),
                   key=lambda t: (t.file, t.index))
    model = infill.load_model(args.model, device="cpu")
    opts = {"beam_size": args.beam, "top_k": 10}
    rows = []
    t = time.perf_counter()
    exact = [infill.fill(model, x.text, gap=1, marker=MARK, **opts)[0] for x in tasks]
    rows.append(row("length given (oracle)", exact, tasks, time.perf_counter() - t))
    for kind in args.scores.split(","):
        t = time.perf_counter()
        got = [one.result.completions for one in
               fill_inputs(model, [hidden(x) for x in tasks], unknown_lengths=args.range,
                           length_score=kind, **opts)]
        rows.append(row(f"[---] as {args.range}, {kind}", got, tasks, time.perf_counter() - t))
    print(f"{len(tasks)} supplements of 2-10 letters hidden as [---], IOSPE {args.split}, "
          f"{args.model}, beam {args.beam}, seed 0\n")
    print("| lacuna | top-1 | top-10 | CER | top-1 length | top-3 lengths | seconds |\n"
          "|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
