"""Top-1 / top-5 exact match of HCB and standard beam search (both orders) for
each builtin model on its held-out (test) split, gaps of 1-5 tokens / characters / residues.

    python benchmarks/accuracy.py [--examples 200] [--models english,greek,protein]

Writes one ``infill bench`` run per model under benchmarks/results/bench/accuracy/<model>/ and
the combined markdown table to benchmarks/results/bench/accuracy.md (a builtin not in --models
keeps the section of its last run there).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from common import BUILTINS, RESULTS, cells, fmt, infill_bench, rel, write_table

METHODS = ["hcb-l2r", "standard-l2r", "hcb-b2w", "standard-b2w"]
GAPS = [1, 2, 3, 4, 5]
UNIT = {"english": "WordPiece tokens", "greek": "characters", "protein": "residues"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", type=int, default=200)
    ap.add_argument("--models", default=",".join(BUILTINS))
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS / "accuracy")
    ap.add_argument("--table", type=Path, default=RESULTS / "accuracy.md")
    ap.add_argument("--overwrite", action="store_true",
                    help="Start the runs afresh (e.g. after a builtin model was retrained).")
    a = ap.parse_args()
    lines = [f"Top-1 / top-5 exact match (%) on each builtin model's test split "
             f"(beam {a.beam}; up to {a.examples} test examples drawn with seed 0, one random "
             "span of each gap length per example; cells: top-1 / top-5).", ""]
    cmds = []
    asked = a.models.split(",")
    kept = [n for n in BUILTINS if n not in asked and (a.out / n / "summary.json").is_file()]
    for name in asked + kept:      # a model not run now keeps its section from its last run
        out = a.out / name
        args = [name.split("-")[0], "--model", f"builtin:{name}", "--split", "test", "--examples",
                str(a.examples), "--gap-lengths", ",".join(map(str, GAPS)), "--methods",
                ",".join(METHODS), "--beam-size", str(a.beam), "--top-k", "1,5", "--device", "cpu",
                "--out", rel(out), "--no-progress"]
        if name in asked:
            s = infill_bench(args + (["--overwrite"] if a.overwrite else []))
        else:
            s = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        cmds.append("infill bench " + " ".join(args))
        c = cells(s)
        used = s["counts"]["used"]
        lines += [f"### builtin:{name} (gap unit: {UNIT.get(name.split('-')[0], 'tokens')}; examples used "
                  + ", ".join(f"n={n}: {used[str(n)]}" for n in GAPS) + ")", "",
                  "| method | " + " | ".join(f"n={n}" for n in GAPS) + " | all |",
                  "|---|" + "---:|" * (len(GAPS) + 1)]
        for m in METHODS:
            key = f"{m}/b{a.beam}"
            row = [f"{fmt(c[(key, n)]['top1'])} / {fmt(c[(key, n)]['top5'])}"
                   for n in GAPS + ["all"]]
            lines.append(f"| {m} | " + " | ".join(row) + " |")
        lines.append("")
    write_table(lines, cmds, a.table)


if __name__ == "__main__":
    main()
