"""Pairwise joints from the builtin MLMs (Torroba Hennigen & Kim 2023, Table 1 layout).

    python benchmarks/joint.py [--models english,greek] [--examples 200] [--joint-size 50]
                               [--iterations 50] [--seed 0]

For every model and pair scheme (random, contiguous) one ``infill joint`` run on the model's
held-out test split (the training family's own test examples, ``--split test``) writes
benchmarks/results/joint/<model>_<scheme>/{joint.json, joint.md, distance.png}; the combined
tables, the exact commands and whether AG beats MLM on P-PPL go to
benchmarks/results/joint/summary.md (and summary.json).
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "joint"
SCHEMES = ("random", "contiguous")
METRICS = ("U-PPL", "P-PPL", "A-KL", "G-KL")
ROWS = ("MLM", "MRF-L", "MRF", "HCB", "AG", "AG*")


def run_joint(args: list[str]) -> tuple[dict, float]:
    """Run ``infill joint ARGS`` (echoing the command); return its joint.json and the seconds."""
    print("$ infill joint " + shlex.join(args), flush=True)
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    t0 = time.time()
    subprocess.run([sys.executable, "-m", "infill_cli.main", "joint", *args], cwd=ROOT, env=env,
                   check=True)
    out = Path(args[args.index("--out") + 1])
    out = out if out.is_absolute() else ROOT / out
    return json.loads((out / "joint.json").read_text()), time.time() - t0


def table_md(table: dict) -> list[str]:
    lines = ["| joint | " + " | ".join(METRICS) + " |", "|---|" + "---:|" * len(METRICS)]
    for r in ROWS:
        if r == "AG*" and r not in table:
            continue
        cells = [("n/a" if r not in table else f"{table[r][m]:.3f}" if m.endswith("PPL")
                  else f"{table[r][m]:.4f}") for m in METRICS]
        lines.append(f"| {r} | " + " | ".join(cells) + " |")
    return lines


def run_md(run: dict) -> list[str]:
    """The Markdown section of one (model, scheme) run."""
    t, name, scheme = run["table"], run["model"], run["scheme"]
    grid = run.get("grid") or [["?", "?"], ["?", "?"]]
    return [f"## builtin:{name}, {scheme} pairs", "",
            f"{run['settings']['n']} held-out pairs (test split, "
            f"{run['settings'].get('pairs_per_text', 1)} per example), grid "
            f"{grid[0][0]}x{grid[0][1]}..{grid[1][0]}x{grid[1][1]}, AG "
            f"{run['settings']['iterations']} iterations (max final TV change "
            f"{run['ag_final_change']:.1e}, objective monotone: {run['ag_monotone']}), "
            f"{run['seconds']:.0f} s on CPU. Command: `{run['command']}`", "",
            *table_md(t), "",
            f"AG vs MLM on P-PPL: {t['AG']['P-PPL']:.3f} vs {t['MLM']['P-PPL']:.3f} -> "
            + ("AG better (as in the paper)" if run["ag_beats_mlm_p_ppl"] else "AG NOT better")
            + (f"; AG* {t['AG*']['P-PPL']:.3f}" if "AG*" in t else ""),
            "", *([f"![pairwise NLL by distance]({name}_{scheme}/distance.png)", ""]
                  if (RESULTS / f"{name}_{scheme}" / "distance.png").exists() else [])]


def _args() -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="english,greek")
    ap.add_argument("--examples", "-n", "--n", dest="n", type=int, default=200,
                    help="pairs per table column (--n: the old spelling)")
    ap.add_argument("--joint-size", type=int, default=50)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--converged-tol", type=float, default=1e-8,
                    help="Also report AG* (AG until its TV change <= this); 0 to skip.")
    ap.add_argument("--pairs-per-text", type=int, default=2,
                    help="Pairs per held-out example (the English test split has only ~130 "
                         "blocks of <=126 tokens).")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--fresh", action="store_true",
                    help="Drop the runs of other models recorded in summary.json.")
    return ap.parse_args()


def main() -> None:
    a = _args()
    out_root = a.out if a.out.is_absolute() else ROOT / a.out
    runs: dict[tuple[str, str], dict] = {}
    if (out_root / "summary.json").exists() and not a.fresh:
        for r in json.loads((out_root / "summary.json").read_text())["runs"]:
            runs[(r["model"], r["scheme"])] = r
    for name in a.models.split(","):
        for scheme in SCHEMES:
            out = out_root / f"{name}_{scheme}"
            try:
                out_arg = str(out.relative_to(ROOT))
            except ValueError:
                out_arg = str(out)
            args = ["--model", f"builtin:{name}", "--data", name.split("-")[0], "--split", "test",
                    "--scheme", scheme, "--examples", str(a.n), "--joint-size", str(a.joint_size),
                    "--iterations", str(a.iterations), "--seed", str(a.seed),
                    "--pairs-per-text", str(a.pairs_per_text),
                    *(["--converged-tol", str(a.converged_tol)] if a.converged_tol else []),
                    "--device", a.device, "--out", out_arg, "--no-progress"]
            data, secs = run_joint(args)
            t = data["table"]
            grids = sorted(tuple(r["grid"]) for r in data["records"])
            runs[(name, scheme)] = {
                "model": name, "scheme": scheme, "command": "infill joint " + shlex.join(args),
                "seconds": round(secs, 1), "table": t,
                "ag_beats_mlm_p_ppl": t["AG"]["P-PPL"] < t["MLM"]["P-PPL"],
                "settings": data["settings"], "grid": [grids[0], grids[-1]],
                "ag_iterations": data["ag_iterations"],
                "ag_final_change": data["ag_final_change"], "ag_monotone": data["ag_monotone"]}
    models = sorted({m for m, _ in runs}, key=lambda m: (m != "english", m))
    md = ["# Pairwise joints from the builtin MLMs", "",
          "Regenerate: `python benchmarks/joint.py --models " + ",".join(models)
          + f" --examples {a.n} --joint-size {a.joint_size} --iterations {a.iterations} "
            f"--seed {a.seed} --pairs-per-text {a.pairs_per_text} "
            f"--converged-tol {a.converged_tol}`", "",
            "AG = Arnold-Gokhale with the paper's 50 iterations from the uniform joint; AG* = "
            "the same run until its total-variation change is <= the tolerance (the AG "
            "optimum).", ""]
    for m in models:
        for scheme in SCHEMES:
            if (m, scheme) in runs:
                md += run_md(runs[(m, scheme)])
    out_root.mkdir(parents=True, exist_ok=True)
    (out_root / "summary.md").write_text("\n".join(md))
    (out_root / "summary.json").write_text(json.dumps(
        {"runs": [runs[k] for k in sorted(runs)]}, indent=1))
    print("\n".join(md))


if __name__ == "__main__":
    main()
