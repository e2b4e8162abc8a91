"""Redraw the plots and rewrite ``summary.md`` of finished ``infill bench`` runs from their
``summary.json``, and the distance plot of ``infill joint`` runs from their ``joint.json`` (no
decoding): after a change to the report, or to look at a run again.

    python benchmarks/replot.py benchmarks/results/bench benchmarks/results/joint

Summaries written by older versions are completed first: the unit of a gap (from the model and
data when it was not stored, or stored as "tokens" for a protein / Greek run) and the size of the
pool the examples were drawn from (the split part, from the model's ``split.json`` or, without
one, the split that training computes by default).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from infill.bench.report import infer_unit, render
from infill.joint.metrics import plot_distance


def pool_size(config: dict, corpus_examples: int) -> int:
    """Examples of the configured split part: from the model's recorded ``split.json`` when it
    matches the corpus, else the split ``infill train`` makes by default (seed 0, 5% / 5%)."""
    from infill.data.splits import model_dir, split_indices

    split = config.get("split", "all")
    if split == "all":
        return corpus_examples
    d = model_dir(config["model"])
    if d is not None and (d / "split.json").is_file():
        rec = json.loads((d / "split.json").read_text(encoding="utf-8"))
        if rec.get("n_examples") == corpus_examples and split in rec:
            return len(rec[split])
    return len(split_indices(corpus_examples)[split])


def complete(summary: dict) -> dict:
    """Fill in what older summaries lack (pool size, unit); returns the summary."""
    cfg, counts = summary["config"], summary["counts"]
    if not counts.get("pool"):
        counts["pool"] = pool_size(cfg, counts["corpus_examples"])
    inferred = infer_unit(cfg)
    if summary.get("unit") in (None, "tokens") and inferred != "tokens":
        summary["unit"] = inferred
    summary.setdefault("unit", inferred)
    return summary


def replot_bench(path: Path) -> list[str] | None:
    summary = json.loads(path.read_text(encoding="utf-8"))
    if "cells" not in summary or "config" not in summary:
        return None                          # not an infill bench summary
    return render(complete(summary), path.parent)["plots"]


def replot_joint(path: Path) -> Path | None:
    data = json.loads(path.read_text(encoding="utf-8"))
    settings = data.get("settings", {})
    title = f"{data.get('title', '')}: {settings.get('n')} pairs"
    unit = settings.get("unit") or infer_unit(settings)
    old = path.parent / "distance.png"
    png = plot_distance(data["distance_breakdown"], old, title, unit=unit)
    if png is None:
        old.unlink(missing_ok=True)          # a stale plot of a run that now draws none
    return png


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path)
    a = ap.parse_args()
    for folder in a.folders:
        for path in sorted(folder.rglob("summary.json")):
            plots = replot_bench(path)
            if plots is not None:
                print(path.parent, plots)
        for path in sorted(folder.rglob("joint.json")):      # infill joint --out folders
            print(path.parent, replot_joint(path))


if __name__ == "__main__":
    main()
