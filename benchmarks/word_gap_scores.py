"""Whole-word gaps (``gap="word"``): which length score ranks the lengths best, on builtin:english.

One-word gaps as benchmarks/english_words.py makes them (:mod:`infill.bench.words`) on lines of
OTHER that are not lines of TRAIN (builtin:english was trained on TRAIN): the gap's length unknown
(1-3 word pieces, ``gap="word"``) and ranked by each length score, beside the gap given at the
word's true number of pieces (the oracle length).

    OMP_NUM_THREADS=1 python benchmarks/word_gap_scores.py \
        --train ../shared/data/english/tinyshakespeare.txt \
        --other ../shared/data/english/shakespeare_plays.txt [--examples 200]

Prints a markdown table (top-1 / top-5 exact word, and the seconds taken).
"""
from __future__ import annotations

import argparse
import time

import torch

import infill
from infill.bench.words import word_gaps, word_pieces
from infill.decoding.lengths import LENGTH_SCORES


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", required=True)
    ap.add_argument("--other", required=True)
    ap.add_argument("--examples", type=int, default=200)
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--scorer", default="hcb")
    args = ap.parse_args()
    torch.set_num_threads(1)
    from infill.data.examples import distinct_lines
    from infill.data.files import read_lines
    seen = set(distinct_lines(read_lines(args.train, "train")))
    lines = [x for x in distinct_lines(read_lines(args.other, "other")) if x not in seen]
    model = infill.load_model("builtin:english", device="cpu")
    gaps = word_gaps(lines, args.examples, seed=0)
    texts = [g.text for g in gaps]
    rows = []
    oracle = [infill.fill(model, g.text, gap=word_pieces(model, g.word), top_k=5,
                          beam_size=args.beam, scorer=args.scorer)[0] for g in gaps]
    rows.append(("oracle length", oracle, None))
    for kind in LENGTH_SCORES:
        t = time.perf_counter()
        got = [r.completions for r in infill.fill_each(model, texts, gap="word", top_k=5,
                                                       beam_size=args.beam, scorer=args.scorer,
                                                       length_score=kind)]
        rows.append((f"word, {kind}", got, time.perf_counter() - t))
    print(f"{len(gaps)} one-word gaps, builtin:english, {args.scorer}, beam {args.beam}\n")
    print("| gap | top-1 | top-5 | seconds |\n|---|---:|---:|---:|")
    for name, comps, secs in rows:
        top1 = sum(bool(c) and c[0].fills[0] == g.word for c, g in zip(comps, gaps))
        top5 = sum(any(x.fills[0] == g.word for x in c[:5]) for c, g in zip(comps, gaps))
        sec = "" if secs is None else f"{secs:.0f}"
        print(f"| {name} | {100 * top1 / len(gaps):.1f}% | {100 * top5 / len(gaps):.1f}% | {sec} |")


if __name__ == "__main__":
    main()
