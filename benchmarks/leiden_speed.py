"""Leiden conversion time against input length (it must grow linearly).

Three shapes of input, each at lengths doubling from 10,000 to 160,000 characters: a lacuna of
dots with spaces between them (``[. . . .]``: the case that was quadratic), an inscription with
sigla every few words, and plain words with one lacuna at the end. The table gives seconds and
microseconds per character (flat = linear).

    OMP_NUM_THREADS=1 python benchmarks/leiden_speed.py [--max 160000]

Writes benchmarks/results/leiden_speed.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from infill.data.leiden import convert  # noqa: E402

SHAPES = {
    "dotted lacuna `[. . .]`": lambda n: "[" + ". " * (n // 2 - 1) + ".]",
    "sigla every few words": lambda n: ("μῆνιν ἄειδε [c.3] θεὰ (?) ⟦αβ⟧ [.2]ος |" * n)[:n]
                                        .rsplit(" ", 1)[0],
    "plain words, one lacuna": lambda n: ("ἄειδε " * n)[: n - 5] + "[...]",
}


def seconds(text: str, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        convert(text)
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=160_000, help="longest input in characters")
    args = ap.parse_args()
    lengths = []
    n = 10_000
    while n <= args.max:
        lengths.append(n)
        n *= 2
    rows = ["| input | " + " | ".join(f"{n:,} chars" for n in lengths) + " |",
            "|---|" + "---|" * len(lengths)]
    for name, make in SHAPES.items():
        cells = []
        for n in lengths:
            text = make(n)
            s = seconds(text)
            cells.append(f"{s:.3f} s ({1e6 * s / len(text):.1f} µs/char)")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
        print(rows[-1], flush=True)
    out = ROOT / "benchmarks" / "results" / "leiden_speed.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("# Leiden conversion time (best of 3, one CPU thread)\n\n"
                   + "\n".join(rows) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
