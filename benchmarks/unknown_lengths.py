"""Lacunae of unknown length on real inscriptions (issue 47): editors' supplements hidden as
``[---]`` and restored with ``unknown_lengths``, against the same supplements with their length
given.

Each editor's supplement of n = 2..10 letters in a part (default: validation) of IOSPE or another
EpiDoc corpus (``--corpus``; IAph; never Crete, which is kept for the final table) -- a seeded
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
from iospe_lengths import MARK
from iospe_lengths_report import letters

import infill
from infill.bench.epidoc import cer, epidoc_folder, tasks_for
from infill.bench.stats import paired_bootstrap
from infill.data.latin import fold_uv
from infill.jobs.fill import fill_inputs


def hidden(task) -> str:
    """The task's text with its run of ``?`` written as a lacuna of unknown length."""
    at = task.text.index(MARK * len(task.gold))
    return task.text[:at] + "[---]" + task.text[at + len(task.gold):]


def lengths_ranked(fills: list[str]) -> list[int]:
    """The distinct lengths of ranked restorations, in the order they first appear."""
    out: list[int] = []
    for f in fills:
        n = len(f)
        if n not in out:
            out.append(n)
    return out


def outcomes(comps, tasks, alphabet=None, same=lambda x: x) -> dict[str, list[float]]:
    """Per supplement: top-1 and top-10 exact (0/1) and the first restoration's CER."""
    fills = [[same(letters(y, alphabet)) for y in c] for c in comps]
    golds = [same(x.gold) for x in tasks]
    return {"top-1": [float(f[:1] == [g]) for f, g in zip(fills, golds)],
            "top-10": [float(g in f[:10]) for f, g in zip(fills, golds)],
            "CER": [cer(f[0] if f else "", g) for f, g in zip(fills, golds)]}


def paired(name: str, new: dict, base: dict) -> str:
    """One line: ``new`` against ``base`` (:func:`outcomes` of the same supplements), paired
    bootstrap 95% intervals."""
    parts = []
    for k, scale, digits in (("top-1", 100, 1), ("top-10", 100, 1), ("CER", 1, 3)):
        p = paired_bootstrap(new[k], base[k])
        parts.append(f"{k} {scale * p['mean_diff']:+.{digits}f} [{scale * p['lo']:+.{digits}f}, "
                     f"{scale * p['hi']:+.{digits}f}]")
    return f"- {name}: " + ", ".join(parts)


def row(name, comps, tasks, secs, alphabet=None, same=lambda x: x) -> str:
    """One row of the table (``same``: how restorations and golds are compared, e.g. Latin u =
    v)."""
    fills = [[same(letters(y, alphabet)) for y in c] for c in comps]
    golds = [same(x.gold) for x in tasks]
    firsts = [f[0] if f else "" for f in fills]
    n = len(tasks)
    top1 = sum(f == g for f, g in zip(firsts, golds))
    top10 = sum(g in f[:10] for f, g in zip(fills, golds))
    err = sum(cer(f, g) for f, g in zip(firsts, golds)) / n
    ranked = [lengths_ranked(f) for f in fills]
    len1 = sum(bool(r) and r[0] == len(g) for r, g in zip(ranked, golds))
    len3 = sum(len(g) in r[:3] for r, g in zip(ranked, golds))
    return (f"| {name} | {100 * top1 / n:.1f}% | {100 * top10 / n:.1f}% | {err:.3f} | "
            f"{100 * len1 / n:.0f}% | {100 * len3 / n:.0f}% | {secs:.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:greek")
    ap.add_argument("--corpus", default="iospe",
                    help="iospe, or a folder of EpiDoc files (IAph: .../greek/iaph)")
    ap.add_argument("--split", default="validation", choices=("train", "validation", "test"))
    ap.add_argument("--files", type=int, default=0,
                    help="read a seeded sample of this many of the part's files (EDH: 300)")
    ap.add_argument("--fold-uv", action="store_true",
                    help="compare Latin u and v as one letter (the stone has V for both)")
    ap.add_argument("--examples", type=int, default=40)
    ap.add_argument("--beam", type=int, default=10)
    ap.add_argument("--range", default="1-12", help="unknown_lengths: LO-HI")
    ap.add_argument("--scores", default="pll-gap",
                    help="length scores to compare, comma-separated (each a row)")
    ap.add_argument("--lacuna-edges", default=None,
                    help="lacuna_edges rules to compare, comma-separated (any, letters; each "
                    "its rows); default: the model's")
    args = ap.parse_args()
    torch.set_num_threads(1)
    tasks = tasks_for(epidoc_folder(args.corpus), args.split, list(range(2, 11)), args.files)
    tasks = sorted(random.Random(0).sample(tasks, min(args.examples, len(tasks))),
                   key=lambda t: (t.file, t.index))
    model = infill.load_model(args.model, device="cpu")
    alphabet = getattr(model, "alphabet", None)
    same = fold_uv if args.fold_uv else (lambda x: x)
    rows, deltas = [], []
    for edges in args.lacuna_edges.split(",") if args.lacuna_edges else [None]:
        rule = "" if edges is None else f", lacuna edges {edges}"
        opts = {"beam_size": args.beam, "top_k": 10,
                **({} if edges is None else {"lacuna_edges": edges})}
        t = time.perf_counter()
        exact = [infill.fill(model, x.text, gap=1, marker=MARK, **opts)[0] for x in tasks]
        rows.append(row(f"length given (oracle){rule}", exact, tasks, time.perf_counter() - t,
                        alphabet, same))
        first = None
        for kind in args.scores.split(","):
            t = time.perf_counter()
            got = [one.result.completions for one in
                   fill_inputs(model, [hidden(x) for x in tasks], unknown_lengths=args.range,
                               length_score=kind, **opts)]
            rows.append(row(f"[---] as {args.range}, {kind}{rule}", got, tasks,
                            time.perf_counter() - t, alphabet, same))
            now = outcomes(got, tasks, alphabet, same)
            if first is None:
                first = (kind, now)
            else:
                deltas.append(paired(f"{kind} against {first[0]}{rule}", now, first[1]))
    print(f"{len(tasks)} supplements of 2-10 letters hidden as [---], {corpus_name(args.corpus)} "
          f"{args.split}, {args.model}, beam {args.beam}, seed 0\n")
    print_table(("lacuna", "top-1 length"), rows, deltas)


def corpus_name(corpus: str) -> str:
    """``IOSPE``, or the folder's name."""
    return "IOSPE" if corpus == "iospe" else corpus.rstrip("/").rsplit("/", 1)[-1]


def print_table(heads: tuple[str, str], rows: list[str], deltas: list[str]) -> None:
    """The table of :func:`row`s (``heads``: its first column's and fifth column's names), then
    the paired differences, if any."""
    print(f"| {heads[0]} | top-1 | top-10 | CER | {heads[1]} | top-3 lengths | seconds |\n"
          "|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    if deltas:
        print("\nPaired differences (95% bootstrap intervals; CER: lower is better):\n")
        print("\n".join(deltas))


if __name__ == "__main__":
    main()
