"""Sharded runs: throughput of ``infill bench`` on 1 process vs N processes started by torchrun
(one thread each, gloo on CPU), and a check that the rows are the same.

    python benchmarks/distributed.py [--model builtin:protein] [--examples 1000] [--procs 2]

Writes benchmarks/results/distributed.md.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results"


def bench_args(a, out: Path) -> list[str]:
    data = a.model.split(":")[-1]
    return ["bench", data, "-m", a.model, "--split", "test", "-n", str(a.examples),
            "--gap-lengths", "2,3",
            "--methods", "hcb-l2r,standard-l2r", "--batch-size", "8", "--device", "cpu",
            "--no-progress", "--out", str(out)]


def timed(cmd: list[str]) -> float:
    env = dict(os.environ, OMP_NUM_THREADS="1", INFILL_DIST_BACKEND="gloo")
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def rows(path: Path) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        r = json.loads(line)
        r.pop("seconds")
        out.append(r)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="builtin:protein")
    ap.add_argument("--examples", type=int, default=1000)
    ap.add_argument("--procs", type=int, default=2)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    try:
        one = timed([sys.executable, "-m", "infill_cli.main", *bench_args(a, tmp / "one")])
        many = timed([sys.executable, "-m", "torch.distributed.run", "--standalone",
                      f"--nproc-per-node={a.procs}", "-m", "infill_cli.main",
                      *bench_args(a, tmp / "many")])
        same = rows(tmp / "one" / "results.jsonl") == rows(tmp / "many" / "results.jsonl")
        n = len(rows(tmp / "one" / "results.jsonl"))
    finally:
        shutil.rmtree(tmp)
    lines = ["# Sharded runs (torchrun, gloo on CPU)", "",
             f"`infill bench` on {a.model}'s test split: {a.examples} examples x gaps 2, 3 x "
             f"hcb-l2r, standard-l2r = {n} rows, batches of 8, one thread per process "
             "(wall time including start-up and model loading).", "",
             "| processes | wall time | rows/s | speed-up | rows identical to 1 process |",
             "|---:|---:|---:|---:|---|",
             f"| 1 | {one:.1f} s | {n / one:.2f} | 1.00x | – |",
             f"| {a.procs} | {many:.1f} s | {n / many:.2f} | {one / many:.2f}x | {'yes' if same else 'NO'} |",
             "", f"Command: `python benchmarks/distributed.py {' '.join(sys.argv[1:])}`", ""]
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "distributed.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
