"""Accuracy of a Greek character model against training time: the validation accuracy logged by
``infill train`` at every evaluation, and the restoration accuracy of 3-character gaps (HCB beam
search, left-to-right, beam 10, top-1 and top-10) of the model snapshots saved along the way
(``--snapshot-every``), on the same test examples.

    OMP_NUM_THREADS=1 python benchmarks/greek_curve.py RUN_DIR [--examples 100] [--every 500] \
        [--baseline OLD_MODEL_DIR]

``--baseline``: another model (e.g. the previous builtin) scored on the same examples, drawn as a
horizontal reference; a shorter-context model reads the longest window centred on each gap.
Writes RUN_DIR/curve.json, curve.md and curve.png (for the shipped model, copied to
benchmarks/results/greek_curve/; not into the model directory, whose files fingerprint the model).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import infill  # noqa: E402
from infill.api import run_decoder  # noqa: E402
from infill.bench.gaps import select_examples  # noqa: E402
from infill.bench.stats import wilson_interval  # noqa: E402
from infill.config import DecodeConfig  # noqa: E402
from infill.data.splits import heldout  # noqa: E402

CONFIG = DecodeConfig(scorer="hcb", order="left-to-right", beam_size=10)


def gap_accuracy(model_dir: Path | str, run: Path, n_examples: int, seed: int = 0) -> dict:
    """Top-1 / top-10 exact match of 3-character gaps on the run's test split."""
    lm = infill.load_model(str(model_dir), device="cpu")
    h = heldout(run)
    part = h.part("test")[:n_examples]
    exs, _ = select_examples(lm, {i: h.examples[i] for i in part}, [3], seed)
    top1 = top10 = 0
    for s in range(0, len(exs), 16):
        batch = exs[s:s + 16]
        for e, hyps in zip(batch, run_decoder(lm, [e.masked(lm.mask_id) for e in batch], None,
                                              CONFIG)):
            ranked = [h.tokens for h in hyps]
            top1 += ranked[:1] == [tuple(e.gold)]
            top10 += tuple(e.gold) in ranked[:10]
    return {"n": len(exs), "top1": top1, "top10": top10}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", type=Path, help="an `infill train greek` output folder with snapshots")
    ap.add_argument("--examples", type=int, default=100)
    ap.add_argument("--every", type=int, default=500, help="evaluate every N-th step's snapshot")
    ap.add_argument("--baseline", help="a model scored on the same examples, for reference")
    ap.add_argument("--baseline-label", default="previous model", help="its name in the plot")
    a = ap.parse_args()
    log = [json.loads(x) for x in (a.run / "train_log.jsonl").read_text().splitlines()]
    hours = {e["step"]: e["elapsed_s"] / 3600 for e in log}
    snaps = sorted((int(p.name[4:]), p) for p in (a.run / "snapshots").glob("step*"))
    last = max(hours)
    if (a.run / "charmodel.json").exists() and last not in dict(snaps):
        snaps.append((last, a.run))           # the finished run's final model
    # points of an earlier run of this script with the same options are reused (it is slow)
    old = json.loads((a.run / "curve.json").read_text()) if (a.run / "curve.json").exists() else {}
    done = {p["step"]: p for p in old.get("gaps", []) if p.get("n") == a.examples}
    points = []
    for step, path in snaps:
        if step % a.every == 0 or step == last:
            acc = done.get(step) or gap_accuracy(path, a.run, a.examples)
            acc = {k: acc[k] for k in ("n", "top1", "top10")}
            elapsed = hours.get(step, max(v for k, v in hours.items() if k <= step))
            points.append({"step": step, "hours": elapsed, **acc})
            print(points[-1], flush=True)
    base = None
    if a.baseline:
        prev = old.get("baseline") or {}
        base = prev if prev.get("model") == a.baseline and prev.get("n") == a.examples else \
            {"model": a.baseline, **gap_accuracy(a.baseline, a.run, a.examples)}
        print("baseline", base, flush=True)
    (a.run / "curve.json").write_text(json.dumps({"validation": log, "gaps": points,
                                                  "baseline": base}, indent=1))
    lines = ["| step | hours | validation accuracy (masked spans) | 3-char gaps top-1 % | top-10 % |",
             "|---:|---:|---:|---:|---:|"]
    val = {e["step"]: e["val_accuracy"] for e in log}
    for p in points:
        lines.append(f"| {p['step']} | {p['hours']:.1f} | {val.get(p['step'], float('nan')):.3f} | "
                     f"{100 * p['top1'] / p['n']:.1f} | {100 * p['top10'] / p['n']:.1f} |")
    if base:
        lines.append(f"| baseline `{base['model']}` | | | {100 * base['top1'] / base['n']:.1f} | "
                     f"{100 * base['top10'] / base['n']:.1f} |")
    (a.run / "curve.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    plot(log, points, a.run / "curve.png", a.examples, base and {**base, "label": a.baseline_label})


def plot(log, points, path: Path, n: int, base: dict | None = None) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    ax.plot([e["elapsed_s"] / 3600 for e in log], [100 * e["val_accuracy"] for e in log],
            marker=".", linestyle="-", label="validation accuracy, masked spans (per character)")
    for key, marker, label in (("top1", "o", "3-char gaps, top-1"), ("top10", "s", "3-char gaps, top-10")):
        xs = [p["hours"] for p in points]
        ys = [100 * p[key] / p["n"] for p in points]
        iv = [wilson_interval(p[key], p["n"]) for p in points]
        ax.errorbar(xs, ys, yerr=[[y - 100 * lo for y, (lo, _) in zip(ys, iv)],
                                  [100 * hi - y for y, (_, hi) in zip(ys, iv)]],
                    marker=marker, linestyle="--", capsize=3, label=f"{label} (95% CI)")
    if base:
        for key, style, label in (("top1", ":", "top-1"), ("top10", "-.", "top-10")):
            ax.axhline(100 * base[key] / base["n"], color="grey", linestyle=style,
                       label=f"{base['label']}: 3-char gaps, {label}")
    ax.set_xlabel("training time (hours of wall clock, as logged by infill train)")
    ax.set_ylabel("accuracy (%)")
    ax.set_title(f"Greek model during training: its test split, {n} examples, HCB beam 10",
                 fontsize=9)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


if __name__ == "__main__":
    main()
