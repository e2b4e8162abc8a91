"""Approximate Greek lacunae against the same text with their stated lengths, in one run.

A ~110-character decree with two ``[c.5]`` lacunae (each decoded at 4-6 letters: 9 length
combinations, ranked together) against the same text with ``[.....]`` (exactly 5), all through
:func:`infill.fill_each` with builtin:greek's defaults and the same top-k: its defaults (one
beam shared by the length combinations, its recorded length score), then each length score
with the shared beam, then a beam per combination ranked by ``pll`` (the way before the shared
beam). With ``--exhaustive`` that last one also runs with every completion rescored in full
(the path before the bounded ranking; same completions and scores). Prints seconds, forward rows
and the ratios.

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
from infill.filling import length_ranking as rank_lengths  # noqa: E402
from infill.names import LENGTH_SCORES  # noqa: E402
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


def timed(model, rows, text: str, top_k: int, **options) -> tuple[float, int, list]:
    """Seconds, forward rows and (fills, rank score) of one fill of a Leiden text."""
    read = read_leiden([Input("1", text)], "___")[0]
    rows[0] = 0
    t = time.perf_counter()
    res = infill.fill_each(model, [read.text], gap=read.gap or 1, top_k=top_k, **options)[0]
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
            "`[c.5]`, builtin:greek's defaults": timed(model, rows, TEXT, args.top_k)}
    for score in LENGTH_SCORES:
        runs[f"`[c.5]`, shared beam, {score}"] = timed(model, rows, TEXT, args.top_k,
                                                        length_score=score)
    each = "`[c.5]`, a beam each, pll"
    runs[each] = timed(model, rows, TEXT, args.top_k, length_score="pll", length_beam="each")
    if args.exhaustive:
        fast = rank_lengths.rank
        rank_lengths.rank = lambda *a, **o: fast(*a, **o, exhaustive=True)
        full = "`[c.5]`, a beam each, pll, every completion rescored"
        runs[full] = timed(model, rows, TEXT, args.top_k, length_score="pll", length_beam="each")
        rank_lengths.rank = fast
        print(f"same top-{args.top_k} and scores: {runs[each][2] == runs[full][2]}")
    base_s, base_rows, _ = runs["stated lengths `[.....]`"]
    lines = ["| input | seconds | forward rows | × stated (s) | × stated (rows) | first reading |",
             "|---|---:|---:|---:|---:|---|"]
    for name, (s, n, got) in runs.items():
        first = " · ".join(got[0][0]) if got else ""
        lines.append(f"| {name} | {s:.2f} | {n:,} | {s / base_s:.1f} | {n / base_rows:.1f} "
                     f"| {first} |")
        print(lines[-1], flush=True)
    out = ROOT / "benchmarks" / "results" / "lacunae.md"
    out.write_text(f"# Approximate lacunae vs stated lengths (builtin:greek, top-{args.top_k}, "
                   "one run)\n\n" + "\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
