"""Lacunae of uncertain length on real inscriptions: which length score ranks the lengths best.

Each editor's supplement of n = 2..10 letters in an IOSPE part (default: validation; the test
split is never used for a choice) is hidden as a lacuna of *about* n letters, the range an
epigrapher's ``[c.n]`` gives (:func:`infill.data.epidoc.approximate_lengths`: n ± a fifth of n,
at least ± 1); every length of the range is decoded and the completions ranked together by each
length score (:mod:`infill.decoding.lengths`), beside the gap given at the editor's exact length
(the oracle). A restoration is right when it equals the editor's (and so has the right length).

    OMP_NUM_THREADS=1 python benchmarks/iospe_lengths.py --model builtin:greek [--examples 60]

Prints a markdown table: top-1 / top-10 exact, the character error rate of the first restoration
(Ithaca's), how often the first restoration has the editor's length, and the seconds taken.
"""
from __future__ import annotations

import argparse
import random
import time

import torch

import infill
from infill.bench.epidoc import cer, epidoc_folder, tasks_for
from infill.data.epidoc import approximate_lengths
from infill.data.greek import normalize
from infill.decoding.lengths import LENGTH_SCORES

MARK = "?"


def lacuna(task) -> str:
    """The task's text with its run of ``?`` replaced by one gap marker."""
    at = task.text.index(MARK * len(task.gold))
    return task.text[:at] + "___" + task.text[at + len(task.gold):]


def letters(completion) -> str:
    """A completion's restored letters, normalized as the editors' readings are (no accents)."""
    return normalize("".join(completion.fills), symbols=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:greek")
    ap.add_argument("--split", default="validation", choices=("train", "validation"))
    ap.add_argument("--examples", type=int, default=60)
    ap.add_argument("--beam", type=int, default=10)
    ap.add_argument("--scorer", default=None, help="default: the model's recorded default")
    ap.add_argument("--scores", default=",".join(LENGTH_SCORES),
                    help="length scores to compare, each optionally /shared or /each (the "
                         "length beam; default shared), e.g. pll/each,per-char/shared")
    args = ap.parse_args()
    torch.set_num_threads(1)
    tasks = tasks_for(epidoc_folder("iospe"), args.split, list(range(2, 11)))
    tasks = sorted(random.Random(0).sample(tasks, min(args.examples, len(tasks))),
                   key=lambda t: (t.file, t.index))
    model = infill.load_model(args.model, device="cpu")
    opts = {"beam_size": args.beam, "top_k": 10} | ({"scorer": args.scorer} if args.scorer else {})
    rows = []
    t = time.perf_counter()
    exact = [infill.fill(model, x.text, gap=1, marker=MARK, **opts)[0] for x in tasks]
    rows.append(("exact length (oracle)", exact, time.perf_counter() - t))
    texts = [lacuna(x) for x in tasks]
    ranges = [approximate_lengths(len(x.gold)) for x in tasks]
    for entry in args.scores.split(","):
        kind, _, beam = entry.partition("/")
        beam = beam or "shared"
        t = time.perf_counter()
        got = [infill.fill(model, text, gap=rng, length_score=kind, length_beam=beam, **opts)[0]
               for text, rng in zip(texts, ranges)]
        rows.append((f"c.n, {kind}, {beam} beam", got, time.perf_counter() - t))
    print(f"{len(tasks)} supplements of 2-10 letters, IOSPE {args.split}, {args.model}, "
          f"beam {args.beam}\n")
    print("| gap | top-1 | top-10 | CER | right length | seconds |\n|---|---:|---:|---:|---:|---:|")
    for name, comps, secs in rows:
        fills = [[letters(y) for y in c] for c in comps]
        firsts = [f[0] if f else "" for f in fills]
        top1 = sum(f == x.gold for f, x in zip(firsts, tasks))
        top10 = sum(x.gold in f[:10] for f, x in zip(fills, tasks))
        err = sum(cer(f, x.gold) for f, x in zip(firsts, tasks)) / len(tasks)
        right = sum(len(f) == len(x.gold) for f, x in zip(firsts, tasks))
        n = len(tasks)
        print(f"| {name} | {100 * top1 / n:.1f}% | {100 * top10 / n:.1f}% | {err:.3f} "
              f"| {100 * right / n:.0f}% | {secs:.0f} |")


if __name__ == "__main__":
    main()
