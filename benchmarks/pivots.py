"""HCB pivot sweep (the paper's Ithaca / ESM2 figures): top-1 exact match of HCB beam search
with every vocabulary entry as the pivot, on the small-vocabulary builtin models.

    python benchmarks/pivots.py [--examples 24] [--models greek,protein] [--order l2r]

One ``infill bench --pivot all`` run per model under benchmarks/results/bench/pivots/<model>/
(bar chart: pivot_sweep.png); the table goes to benchmarks/results/bench/pivots.md.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from common import RESULTS, fmt, infill_bench, rel, write_table

GAPS = [2, 3, 4, 5]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", type=int, default=24)
    ap.add_argument("--models", default="greek,protein")
    ap.add_argument("--order", default="l2r", choices=["l2r", "b2w"])
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS / "pivots")
    ap.add_argument("--table", type=Path, default=RESULTS / "pivots.md")
    ap.add_argument("--overwrite", action="store_true",
                    help="Start the runs afresh (e.g. after a builtin model was retrained).")
    a = ap.parse_args()
    lines, cmds = [], []
    for name in a.models.split(","):
        out = a.out / name
        args = [name.split("-")[0], "--model", f"builtin:{name}", "--split", "test", "--examples",
                str(a.examples), "--gap-lengths", ",".join(map(str, GAPS)), "--methods",
                f"hcb-{a.order},standard-{a.order}", "--pivot", "all", "--beam-size", str(a.beam),
                "--top-k", "1", "--batch-size", "24", "--device", "cpu", "--out", rel(out),
                "--no-progress"]
        args += ["--overwrite"] if a.overwrite else []
        s = infill_bench(args)
        cmds.append("infill bench " + " ".join(x for x in args if x != "--overwrite"))
        pooled = [c for c in s["cells"] if c["n"] == "all"]
        std = next(c for c in pooled if c["name"].startswith("standard"))
        sweep = sorted((c for c in pooled if c["pivot"] is not None), key=lambda c: -c["top1"])
        lines += [f"### builtin:{name}: HCB ({a.order}, beam {a.beam}) top-1 (%) by pivot, "
                  f"gaps {GAPS[0]}-{GAPS[-1]} pooled; standard beam search: "
                  f"{fmt(std['top1'])}", "",
                  "| pivot | top-1 | " + " | ".join(f"n={n}" for n in GAPS) + " |",
                  "|---|---:|" + "---:|" * len(GAPS)]
        by = {(c["method"], c["n"]): c for c in s["cells"]}
        for c in sweep:
            lines.append(f"| `{c['pivot']}` | {fmt(c['top1'])} | "
                         + " | ".join(fmt(by[(c['method'], n)]['top1']) for n in GAPS) + " |")
        lines.append("")
    write_table(lines, cmds, a.table)


if __name__ == "__main__":
    main()
