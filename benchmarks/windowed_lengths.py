"""A long edition's lacunae of uncertain length: one shared beam per context window against a
beam per length (issue 48's editions; METHODS §1.3).

An edition longer than the model is decoded in context windows. Before, its length variants each
had their own beam whatever ``length_beam`` said (``each``: a file with lacunae of 11-17 and 10-14
letters decoded 35 times); now the windows holding the same lacunae share one beam across the
lengths (``shared``, the builtins' recommendation), and the windows alike in every variant are
decoded once. Each file given (the IOSPE and IAph validation and test files longer than the
model, 512 characters, with a lacuna of uncertain length among their hidden supplements:
``[c.5-7]``, ``<gap atLeast atMost>``) is restored both ways (``--hide-supplied``, the model's
other defaults; ``each`` with the repeated windows decoded once too, which changes no result);
per file, the seconds it took (one thread) and how many of its editor's supplements the first
reading restores.

    D=../shared/data/greek
    OMP_NUM_THREADS=1 python benchmarks/windowed_lengths.py --file $D/iaph/iAph110031.xml \
        --file $D/iospe/3.24.xml --file $D/iaph/iAph080002.xml \
        --out benchmarks/results/windowed_lengths.json

Results: ``benchmarks/results/unknown_lengths.md`` ("A long edition's lacunae of uncertain
length").
"""
from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import infill
from infill.data.greek import normalize
from infill.epigraphy import restore_files


def restore(model, path: str, beam: str) -> dict:
    """Seconds, lacunae and editor's supplements restored first, with ``length_beam=beam``."""
    t0 = time.perf_counter()
    [r] = restore_files(model, [path], hide_supplied=True, length_beam=beam)
    seconds = time.perf_counter() - t0
    right = n = 0
    for index, readings in r.readings.items():
        editor = normalize(r.edition.lacunae[index].editor or "", symbols=False)
        if editor and readings:
            n += 1
            right += normalize(readings[0].text, symbols=False) == editor
    return {"seconds": round(seconds, 1), "lacunae": n, "right": right, "error": r.error,
            "windows": len(r.windows)}


def main() -> None:
    """Restore each file both ways, print and save the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:greek")
    ap.add_argument("--file", action="append", required=True, dest="files")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    model = infill.load_model(args.model, device="cpu")
    done = json.loads(args.out.read_text()) if args.out.is_file() else {}
    print("| file | windows | lacunae | each: s | right | shared: s | right |\n"
          "|---|---:|---:|---:|---:|---:|---:|")
    for f in args.files:
        name = Path(f).name
        for beam in ("shared", "each"):
            if f"{name}:{beam}" not in done:
                done[f"{name}:{beam}"] = restore(model, f, beam)
                args.out.write_text(json.dumps(done, indent=1))
        e, s = done[f"{name}:each"], done[f"{name}:shared"]
        print(f"| {name} | {s['windows']} | {e['lacunae']} | {e['seconds']:.0f} | {e['right']} | "
              f"{s['seconds']:.0f} | {s['right']} |", flush=True)


if __name__ == "__main__":
    main()
