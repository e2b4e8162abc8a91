"""The bench report from stored summaries (no decoding): pool sentence, units, display names,
the pivot-sweep selection, re-rendering old summaries (benchmarks/replot.py), joint plot."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from infill.bench.report import (
    _gap_series,
    default_pivot,
    display_name,
    infer_unit,
    render,
    to_markdown,
)

ROOT = Path(__file__).resolve().parents[2]


def _replot():
    spec = importlib.util.spec_from_file_location("replot", ROOT / "benchmarks" / "replot.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _cell(method, n, top1, count, pivot=None, name=None):
    return {"method": method, "name": name or method.split("/")[0], "beam": 5, "pivot": pivot,
            "n": n, "count": count, "top1": top1, "top5": min(100.0, top1 + 10), "bleu": 1.0,
            "forward_calls_per_example": 2.0, "examples_per_s": 3.0}


def _summary(cells, model="builtin:protein", data="protein", split="test", gaps=(2, 3),
             **extra):
    s = {"config": {"model": model, "data": data, "split": split, "gaps": list(gaps),
                    "seed": 0, "family": None},
         "counts": {"corpus_examples": 25856, "examples_drawn": 3,
                    "used": {str(n): 3 for n in gaps}, "skipped": {str(n): 0 for n in gaps},
                    "rows": 12, "rows_expected": 12},
         "complete": True, "bertscore": {"model": None, "available": False}, "cells": cells}
    s.update(extra)
    return s


def _plain_cells(methods=("hcb-l2r/b5", "standard-l2r/b5")):
    return [_cell(m, n, 30.0 - 5 * i, 3 if n != "all" else 6)
            for i, m in enumerate(methods) for n in (2, 3, "all")]


def test_pool_sentence_names_the_split_part():
    s = _summary(_plain_cells(), unit="residues")
    s["counts"]["pool"] = 1293
    md = to_markdown(s)
    assert "3 of the 1,293 examples of the test split (corpus: 25,856) drawn" in md
    assert "gap length n in residues" in md
    s["config"]["split"] = "all"
    assert "3 of 25,856 examples drawn" in to_markdown(s)


def test_old_summary_gets_pool_and_unit(tmp_path):
    replot = _replot()
    s = replot.complete(_summary(_plain_cells()))          # no pool, no unit stored
    assert s["counts"]["pool"] == 1293                     # data/models/protein/split.json
    assert s["unit"] == "residues"
    # a scratch model without split.json: the default split of the corpus
    s = _summary(_plain_cells(), model="/tmp/nowhere/step200/esm2_protein.pt",
                 data="/tmp/nowhere/corpus.fa", unit="tokens")
    s["counts"]["corpus_examples"] = 4000
    s = replot.complete(s)
    assert s["counts"]["pool"] == 200 and s["unit"] == "residues"
    assert "3 of the 200 examples of the test split (corpus: 4,000)" in to_markdown(s)


@pytest.mark.parametrize("config, unit", [
    ({"model": "builtin:protein", "data": "protein"}, "residues"),
    ({"model": "/tmp/x/esm2_protein.pt", "data": "/tmp/x/corpus.fa"}, "residues"),
    ({"model": "m", "data": "seqs.fasta"}, "residues"),
    ({"model": "builtin:greek", "data": "greek"}, "characters"),
    ({"model": "x", "data": "y", "family": "greek"}, "characters"),
    ({"model": "builtin:english", "data": "english"}, "tokens"),
])
def test_infer_unit(config, unit):
    assert infer_unit(config) == unit


def test_display_names_shorten_paths_and_prefer_labels():
    assert display_name("builtin:greek") == "builtin:greek"
    assert display_name("facebook/esm2_t6_8M_UR50D") == "facebook/esm2_t6_8M_UR50D"
    assert display_name("/tmp/infill_masking/static/step200/esm2_protein.pt") == \
        "step200/esm2_protein.pt"
    s = _summary(_plain_cells(), model="/tmp/a/b.pt", data="/tmp/a/c.fa", unit="residues",
                 model_label="ESM2 (static masking, step 200)", data_label="HypF")
    md = to_markdown(s)
    assert md.startswith("## infill bench: ESM2 (static masking, step 200) on HypF (split: test)")
    assert "Model `/tmp/a/b.pt`, data `/tmp/a/c.fa`." in md


def _sweep_cells(pivots):
    cells = []
    for k, p in enumerate(pivots):
        for n in (2, 3, "all"):
            cells.append(_cell(f"hcb-l2r/b5/pivot={p}", n, float(k), 24 if n != "all" else 48,
                               pivot=p, name="hcb-l2r"))
    return cells + [_cell("standard-l2r/b5", n, 5.0, 24 if n != "all" else 48)
                    for n in (2, 3, "all")]


def test_pivot_sweep_gap_plot_shows_default_best_worst_and_standard(tmp_path):
    pivots = ["<cls>", "A", "C", "D", "E", "F", "<mask>", "L", "M", "N"]
    s = _summary(_sweep_cells(pivots), unit="residues")
    assert default_pivot(s) == "<mask>"
    shown, labels, note = _gap_series(s)
    keys = {m.split("=")[-1] if "pivot=" in m else m for m in shown}
    assert keys == {"<cls>", "A", "M", "N", "<mask>", "standard-l2r/b5"}   # worst 2, best 2
    assert labels["hcb-l2r/b5/pivot=<mask>"].endswith("(default)")
    assert labels["hcb-l2r/b5/pivot=N"].endswith("(best)")
    assert "2 best and 2 worst of 10 pivots" in note
    out = render(s, tmp_path)
    assert out["plots"] == ["topk_vs_k.png", "accuracy_vs_gap.png", "pivot_sweep.png"]
    assert json.loads((tmp_path / "summary.json").read_text())["plots"] == out["plots"]
    assert (tmp_path / "summary.md").read_text().startswith("## infill bench: builtin:protein")
    # a character model's default pivot is '-' (missing)
    s = _summary(_sweep_cells(["^", " ", "-", "α"]), unit="characters")
    assert default_pivot(s) == "-"
    assert len(_gap_series(s)[0]) == 5                    # few pivots: all of them drawn


def test_render_removes_plots_no_longer_drawn(tmp_path):
    s = _summary(_plain_cells(), unit="residues")
    render(s, tmp_path)
    assert (tmp_path / "accuracy_vs_gap.png").exists()
    s["config"]["gaps"] = [2]
    s["cells"] = [c for c in s["cells"] if c["n"] != 3]
    s["counts"]["used"] = {"2": 3}
    s["counts"]["skipped"] = {"2": 0}
    render(s, tmp_path)
    assert not (tmp_path / "accuracy_vs_gap.png").exists()   # one gap length: no curve


def test_joint_distance_plot_unit_and_offsets(tmp_path, monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from infill.joint.metrics import plot_distance

    rows = [{"distance": "1", "lo": 1, "count": 3, "pair_nll": 1.0},
            {"distance": "2", "lo": 2, "count": 2, "pair_nll": 2.0}]
    br = {"MLM": rows, "HCB": rows, "AG": rows}             # identical curves
    seen = {}
    real_close = plt.close

    def keep(fig=None):
        seen["fig"] = fig
        real_close(fig)
    monkeypatch.setattr(plt, "close", keep)
    png = plot_distance(br, tmp_path / "d.png", "t", unit="characters")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ax = seen["fig"].axes[0]
    assert "characters" in ax.get_xlabel()
    xs = [tuple(line.get_xdata()) for line in ax.get_lines()]
    assert len(set(xs)) == 3                                 # each series nudged sideways
    assert plot_distance({"MLM": rows[:1]}, tmp_path / "e.png") is None
