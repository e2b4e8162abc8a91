"""The HCB beam-search paper's infilling tables on the builtin models: every method (HCB and
standard beam search in both orders, the matched-budget sampling baselines, the two ablations)
x gap lengths 2-5, top-k exact match, BLEU (and BERTScore when a scorer model is given).

    python benchmarks/infilling.py [--examples 50] [--beam-size 5] [--models english,greek,protein]
                                   [--bertscore-model DIR]

One ``infill bench`` run per model under benchmarks/results/bench/infilling/<model>/ (tables in
its summary.md, plots next to it); the combined top-1 table goes to
benchmarks/results/bench/infilling.md.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from common import BUILTINS, RESULTS, cells, fmt, infill_bench, rel, write_table

GAPS = [2, 3, 4, 5]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", type=int, default=50)
    ap.add_argument("--beam-size", default="5")
    ap.add_argument("--models", default=",".join(BUILTINS))
    ap.add_argument("--methods", default="all")
    ap.add_argument("--bertscore-model")
    ap.add_argument("--out", type=Path, default=RESULTS / "infilling")
    ap.add_argument("--table", type=Path, default=RESULTS / "infilling.md")
    ap.add_argument("--overwrite", action="store_true",
                    help="Start the runs afresh (e.g. after a builtin model was retrained).")
    a = ap.parse_args()
    lines, cmds = [], []
    for name in a.models.split(","):
        out = a.out / name
        args = [name.split("-")[0], "--model", f"builtin:{name}", "--split", "test", "--examples",
                str(a.examples), "--gap-lengths", ",".join(map(str, GAPS)), "--methods", a.methods,
                "--beam-size", a.beam_size, "--device", "cpu", "--out", rel(out), "--no-progress"]
        args += ["--overwrite"] if a.overwrite else []
        if a.bertscore_model:
            args += ["--bertscore-model", a.bertscore_model]
        s = infill_bench(args)
        cmds.append("infill bench " + " ".join(x for x in args if x != "--overwrite"))
        c = cells(s)
        ks = sorted({int(k[3:]) for cell in s["cells"] for k in cell if k.startswith("top")})
        used = s["counts"]["used"]
        lines += [f"### builtin:{name}: top-1 / top-{ks[-1]} exact match (%), BLEU of the top-1 "
                  "(examples used " + ", ".join(f"n={n}: {used[str(n)]}" for n in GAPS) + ")", "",
                  "| method | " + " | ".join(f"n={n}" for n in GAPS) + " | BLEU (mean over n) |"
                  + " passes/example |",
                  "|---|" + "---:|" * (len(GAPS) + 2)]
        for m in dict.fromkeys(cell["method"] for cell in s["cells"]):
            row = [f"{fmt(c[(m, n)]['top1'])} / {fmt(c[(m, n)].get(f'top{ks[-1]}'))}"
                   for n in GAPS]
            allc = c[(m, "all")]
            lines.append(f"| {m} | " + " | ".join(row) + f" | {fmt(allc['bleu'])} | "
                         f"{fmt(allc['forward_calls_per_example'], 2)} |")
        lines.append("")
    write_table(lines, cmds, a.table)


if __name__ == "__main__":
    main()
