"""Lacunae of uncertain length on real inscriptions: which length score ranks the lengths best.

Each editor's supplement of n = 2..10 letters in a part (default: validation; the test split is
never used for a choice) of IOSPE or another EpiDoc corpus (``--corpus``; EDH with ``--files`` and
``--fold-uv``) is hidden as a lacuna of *about* n letters, the range an
epigrapher's ``[c.n]`` gives (:func:`infill.data.epidoc.approximate_lengths`: n ± a fifth of n,
at least ± 1); every length of the range is decoded and the completions ranked together by each
length score (:mod:`infill.decoding.lengths`), beside the gap given at the editor's exact length
(the oracle). A restoration is right when it equals the editor's (and so has the right length).

    OMP_NUM_THREADS=1 python benchmarks/iospe_lengths.py --model builtin:greek [--examples 60]
    # Latin: --model builtin:latin --corpus EDH_DIR --files 600 --fold-uv

Prints a markdown table: top-1 / top-10 exact, the character error rate of the first restoration
(Ithaca's), how often the first restoration has the editor's length (and the first three
distinct lengths of the top 10 hold it), the seconds taken; then each score paired against the
first (95% bootstrap intervals).
"""
from __future__ import annotations

import argparse
import random
import time

import torch

import infill
from infill.bench.epidoc import epidoc_folder, tasks_for
from infill.data.epidoc import approximate_lengths
from infill.data.latin import fold_uv
from infill.decoding.lengths import LENGTH_SCORES

MARK = "?"


def lacuna(task) -> str:
    """The task's text with its run of ``?`` replaced by one gap marker."""
    at = task.text.index(MARK * len(task.gold))
    return task.text[:at] + "___" + task.text[at + len(task.gold):]


def main() -> None:
    from unknown_lengths import (corpus_name, outcomes, paired,  # it imports MARK from here
                                 print_table, row)
    args = _arguments()
    torch.set_num_threads(1)
    tasks = tasks_for(epidoc_folder(args.corpus), args.split, list(range(2, 11)), args.files)
    tasks = sorted(random.Random(0).sample(tasks, min(args.examples, len(tasks))),
                   key=lambda t: (t.file, t.index))
    model = infill.load_model(args.model, device="cpu")
    alphabet = getattr(model, "alphabet", None)
    same = fold_uv if args.fold_uv else (lambda x: x)
    opts = {"beam_size": args.beam, "top_k": 10} | ({"scorer": args.scorer} if args.scorer else {})
    t = time.perf_counter()
    exact = [infill.fill(model, x.text, gap=1, marker=MARK, **opts)[0] for x in tasks]
    rows = [row("exact length (oracle)", exact, tasks, time.perf_counter() - t, alphabet, same)]
    texts = [lacuna(x) for x in tasks]
    ranges = [approximate_lengths(len(x.gold)) for x in tasks]
    first, deltas = None, []
    for entry in args.scores.split(","):
        kind, _, beam = entry.partition("/")
        beam = beam or "shared"
        t = time.perf_counter()
        got = [infill.fill(model, text, gap=rng, length_score=kind, length_beam=beam, **opts)[0]
               for text, rng in zip(texts, ranges)]
        rows.append(row(f"c.n, {kind}, {beam} beam", got, tasks, time.perf_counter() - t,
                        alphabet, same))
        now = outcomes(got, tasks, alphabet, same)
        if first is None:
            first = (entry, now)
        else:
            deltas.append(paired(f"{entry} against {first[0]}", now, first[1]))
    print(f"{len(tasks)} supplements of 2-10 letters, {corpus_name(args.corpus)} {args.split}, "
          f"{args.model}, beam {args.beam}\n")
    print_table(("gap", "right length"), rows, deltas)


def _arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:greek")
    ap.add_argument("--corpus", default="iospe",
                    help="iospe, or a folder of EpiDoc files (IAph, EDH: .../edh)")
    ap.add_argument("--split", default="validation", choices=("train", "validation"))
    ap.add_argument("--files", type=int, default=0,
                    help="read a seeded sample of this many of the part's files (EDH: 600)")
    ap.add_argument("--fold-uv", action="store_true",
                    help="compare Latin u and v as one letter (the stone has V for both)")
    ap.add_argument("--examples", type=int, default=60)
    ap.add_argument("--beam", type=int, default=10)
    ap.add_argument("--scorer", default=None, help="default: the model's recorded default")
    ap.add_argument("--scores", default=",".join(LENGTH_SCORES),
                    help="length scores to compare, each optionally /shared or /each (the "
                         "length beam; default shared), e.g. pll/each,per-char/shared; the "
                         "first is the baseline of the paired differences")
    return ap.parse_args()


if __name__ == "__main__":
    main()
