"""What ``infill check`` costs on a text longer than the model: milliseconds per checked position,
and how long a text past the bound (``INFILL_MAX_CHECK_POSITIONS``, infill/checking.py) takes to be
refused.

The text is words of builtin:greek's lexicon drawn with a fixed seed, ``--chars`` characters
long (longer than the model's 512, so every position is read in a full window: the cost per
position is the same at any longer length). One process, ``OMP_NUM_THREADS`` as set.

    OMP_NUM_THREADS=1 python benchmarks/check_speed.py [--chars 2000] [--long 20000]

Appends a row to benchmarks/results/check_long_texts.md.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "benchmarks" / "results" / "check_long_texts.md"


def greek_text(n: int, seed: int = 1) -> str:
    """``n`` characters of lexicon words (builtin:greek's lexicon.tsv), space-separated."""
    rows = (ROOT / "data" / "models" / "greek" / "lexicon.tsv").read_text("utf-8").splitlines()
    words = [r.split("\t")[0] for r in rows[1:2001]]
    rng, out = random.Random(seed), ""
    while len(out) < n:
        out += rng.choice(words) + " "
    return out[:n].strip()


def per_position(chars: int) -> tuple[int, float]:
    """(positions, seconds) of checking a ``chars``-character text with builtin:greek."""
    import infill
    from infill.checking import check_readings, read_for_check

    model = infill.load_model("builtin:greek", device="cpu")
    os.environ["INFILL_MAX_CHECK_POSITIONS"] = str(10 ** 6)
    reading = read_for_check(model, greek_text(chars))
    t = time.perf_counter()
    check_readings(model, [reading], 8.0)
    return len(reading.checked), time.perf_counter() - t


def refusal(chars: int) -> tuple[float, str]:
    """(seconds, last stderr line) of ``infill check`` on a ``chars``-character text, start-up
    and model load included, with the default bound."""
    env = {k: v for k, v in os.environ.items() if k != "INFILL_MAX_CHECK_POSITIONS"}
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "infill", "check", "--model",
                           "builtin:greek", "--input", "-"], input=greek_text(chars), text=True,
                          capture_output=True, env=env)
    return time.perf_counter() - t, (proc.stderr.strip().splitlines() or [""])[-1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--chars", type=int, default=2000)
    p.add_argument("--long", type=int, default=20000)
    a = p.parse_args()
    n, secs = per_position(a.chars)
    wait, line = refusal(a.long)
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    load = os.getloadavg()[0]
    row = (f"| {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC | {a.chars:,} | {n:,} | "
           f"{1000 * secs / n:.0f} | {secs:.0f} | {a.long:,} | {wait:.1f} s | {threads} | "
           f"{load:.1f} / {os.cpu_count()} |")
    if not OUT.exists():
        OUT.write_text("# `infill check` on texts longer than the model (builtin:greek)\n\n"
                       "Written by `benchmarks/check_speed.py`.\n\n"
                       "| when | chars | positions | ms / position | s | refused text | "
                       "refused in | OMP threads | load / CPUs |\n"
                       "|---|---|---|---|---|---|---|---|---|\n")
    with OUT.open("a") as f:
        f.write(row + "\n")
    print(row)
    print("refusal:", line)


if __name__ == "__main__":
    main()
