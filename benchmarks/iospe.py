"""Restoring the editors' supplements of the IOSPE test split (real Greek inscriptions, EpiDoc):
each supplement of 1-10 characters hidden in turn, every other lost stretch shown as missing; HCB
vs standard beam search, left-to-right, beam 10; top-1/5/10 exact match, character error rate,
whole lost words, per-length rows, paired bootstrap intervals.

    OMP_NUM_THREADS=1 python benchmarks/iospe.py [--model builtin:greek] [--examples 150] [--overwrite]

Writes the run under benchmarks/results/bench/iospe/ and the table to
benchmarks/results/bench/iospe.md. Needs the IOSPE folder (greek/iospe under the data root:
--data-dir, $INFILL_DATA or ../shared/data).
"""
from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from common import RESULTS, infill_bench, rel, write_table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:greek")
    ap.add_argument("--examples", type=int, default=150)
    ap.add_argument("--beam", type=int, default=10)
    ap.add_argument("--out", type=Path, default=RESULTS / "iospe")
    ap.add_argument("--table", type=Path, default=RESULTS / "iospe.md")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--overwrite", action="store_true",
                    help="start afresh when --out holds another model's results (a new builtin)")
    a = ap.parse_args()
    args = ["iospe", "--split", "test", "-m", a.model,
            "--gap-lengths", ",".join(map(str, range(1, 11))),
            "--methods", "hcb-l2r,standard-l2r", "--beam-size", str(a.beam), "-k", "1,5,10",
            "-n", str(a.examples), "--out", rel(a.out), "--no-progress"]
    if a.data_dir:
        args += ["--data-dir", a.data_dir]
    if a.overwrite:
        args.append("--overwrite")
    summary = infill_bench(args)
    c = summary["counts"]
    md = (Path(a.out) / "epidoc.md").read_text(encoding="utf-8")
    lines = [f"`{a.model}` on {c['rows'] // 2} editors' supplements of 1-10 characters drawn "
             "(seed 0) from the IOSPE test split (154 inscriptions, split by inscription "
             f"80/10/10, seed 0); beam {a.beam}, left-to-right; CER = edit distance / the "
             "editor's length.",
             "", md]
    write_table(lines, ["OMP_NUM_THREADS=1 infill bench " + shlex.join(args)], a.table)


if __name__ == "__main__":
    main()
