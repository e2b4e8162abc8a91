"""Whole-word gaps (``gap="word"``): which length score ranks the lengths best, on an English model.

One-word gaps as benchmarks/english_words.py makes them (:mod:`infill.bench.words`, the same
held-out lines: the test part of the model's recorded split of CORPUS): the gap's length unknown
(1-3 word pieces, ``gap="word"``) and ranked by each length score, beside the gap given at the
word's true number of pieces (the oracle length) and a gap of one token (what ``___`` meant
before ``word`` became builtin:english's default gap).

    OMP_NUM_THREADS=1 python benchmarks/word_gap_scores.py --model builtin:english \
        --corpus CORPUS [--examples 300] [--scores pll,pll-gap,per-char] [--split validation]

``--split validation`` measures on the validation lines instead: that is where a default is chosen.

Prints a markdown table (top-1 / top-5 exact word, and the seconds taken).
"""
from __future__ import annotations

import argparse
import time

import torch

import infill
from infill.bench.words import word_gaps, word_pieces
from infill.decoding.lengths import LENGTH_SCORES

from english_words import test_lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:english")
    ap.add_argument("--corpus", required=True, help="the model's training corpus")
    ap.add_argument("--split-of", help="model whose test split gives the lines (default: --model)")
    ap.add_argument("--examples", type=int, default=300)
    ap.add_argument("--scores", default=",".join(LENGTH_SCORES))
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--scorer", default="hcb")
    ap.add_argument("--split", choices=("test", "validation"), default="test")
    args = ap.parse_args()
    torch.set_num_threads(1)
    lines = test_lines(args.corpus, args.split_of or args.model, args.split)
    model = infill.load_model(args.model, device="cpu")
    gaps = word_gaps(lines, args.examples, seed=0)
    texts = [g.text for g in gaps]
    opts = {"top_k": 5, "beam_size": args.beam, "scorer": args.scorer}
    rows = []
    t = time.perf_counter()
    oracle = [infill.fill(model, g.text, gap=word_pieces(model, g.word), **opts)[0] for g in gaps]
    rows.append(("oracle length", oracle, time.perf_counter() - t))
    t = time.perf_counter()
    rows.append(("one token", [r.completions for r in infill.fill_each(model, texts, gap=1, **opts)],
                 time.perf_counter() - t))
    for kind in args.scores.split(","):
        t = time.perf_counter()
        got = [r.completions for r in infill.fill_each(model, texts, gap="word",
                                                       length_score=kind, **opts)]
        rows.append((f"word, {kind}", got, time.perf_counter() - t))
    print(f"{len(gaps)} one-word gaps of held-out {args.split} lines, {args.model}, {args.scorer}, "
          f"beam {args.beam}\n")
    print("| gap | top-1 | top-5 | seconds |\n|---|---:|---:|---:|")
    for name, comps, secs in rows:
        top1 = sum(bool(c) and c[0].fills[0] == g.word for c, g in zip(comps, gaps))
        top5 = sum(any(x.fills[0] == g.word for x in c[:5]) for c, g in zip(comps, gaps))
        sec = f"{secs:.0f}"
        print(f"| {name} | {100 * top1 / len(gaps):.1f}% | {100 * top5 / len(gaps):.1f}% | {sec} |")


if __name__ == "__main__":
    main()
