"""Approximate Greek lacunae against the same text with their stated lengths, in one run.

A ~110-character decree with two ``[c.5]`` lacunae (each decoded at 4-6 letters: 9 length
combinations, ranked together by the PLL) against the same text with ``[.....]`` (exactly 5),
both through :func:`infill.fill_each` with builtin:greek's defaults and the same top-k. With
``--exhaustive`` the ranking also runs with every completion rescored in full (the path before
the bounded ranking; same completions and scores). Prints seconds, forward rows and the ratios.

    OMP_NUM_THREADS=1 python benchmarks/lacunae.py [--top-k 5] [--exhaustive]

Writes benchmarks/results/lacunae.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import infill  # noqa: E402
from infill import length_ranking as rank_lengths  # noqa: E402
from infill.jobs.inputs import Input, read_leiden  # noqa: E402

TEXT = ("ἔδοξε τῆι βουλῆι καὶ τῶι δήμωι· Κεκροπὶς ἐπρυτάνευε, [c.5] ἐγραμμάτευε, "
        "Νικίας ἐπεστάτει, [c.5] εἶπε· ἐπειδὴ")


def counting(model) -> list[int]:
    """Count the rows of every forward call of ``model`` (decoding and rescoring)."""
    rows = [0]
    call = model.log_probs

    def log_probs(ids, attn, pos):
        rows[0] += len(ids)
        return call(ids, attn, pos)
    model.log_probs = log_probs
    return rows


def timed(model, rows, text: str, top_k: int) -> tuple[float, int, list]:
    """Seconds, forward rows and (fills, rank score) of one fill of a Leiden text."""
    read = read_leiden([Input("1", text)], "___")[0]
    rows[0] = 0
    t = time.perf_counter()
    res = infill.fill_each(model, [read.text], gap=read.gap or 1, top_k=top_k)[0]
    took = time.perf_counter() - t
    assert res.error is None, res.error
    return took, rows[0], [(c.fills, c.rank_score) for c in res.completions]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--exhaustive", action="store_true", help="also time the full rescoring")
    args = ap.parse_args()
    model = infill.load_model("builtin:greek", device="cpu")
    rows = counting(model)
    timed(model, rows, "αβ [..] γδ", 1)                      # warm-up
    stated = TEXT.replace("[c.5]", "[.....]")
    runs = {"stated lengths `[.....]`": timed(model, rows, stated, args.top_k),
            "approximate `[c.5]`": timed(model, rows, TEXT, args.top_k)}
    if args.exhaustive:
        fast = rank_lengths.rank
        rank_lengths.rank = lambda *a, **o: fast(*a, **o, exhaustive=True)
        runs["approximate, every completion rescored"] = timed(model, rows, TEXT, args.top_k)
        rank_lengths.rank = fast
        same = runs["approximate `[c.5]`"][2] == runs["approximate, every completion rescored"][2]
        print(f"same top-{args.top_k} and scores: {same}")
    base_s, base_rows, _ = runs["stated lengths `[.....]`"]
    lines = ["| input | seconds | forward rows | × stated (s) | × stated (rows) |",
             "|---|---:|---:|---:|---:|"]
    for name, (s, n, _) in runs.items():
        lines.append(f"| {name} | {s:.1f} | {n:,} | {s / base_s:.1f} | {n / base_rows:.1f} |")
        print(lines[-1], flush=True)
    out = ROOT / "benchmarks" / "results" / "lacunae.md"
    out.write_text(f"# Approximate lacunae vs stated lengths (builtin:greek, top-{args.top_k}, "
                   "one run)\n\n" + "\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
