"""Summaries of a benchmark run: ``summary.json``, ``summary.md`` (paper-style tables), PNG plots.

Everything here is computed from the rows in ``results.jsonl``, so a resumed run reports exactly
what an uninterrupted one would.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

from infill.bench.metrics import corpus_bleu, usable_ks


def _mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def summarize_cell(rows: list[dict], ks: list[int], beam: int) -> dict:
    """Metrics of one (method, gap length) cell."""
    cell = {"count": len(rows)}
    for k in usable_ks(ks, beam):
        cell[f"top{k}"] = 100.0 * _mean(r["hits"][str(k)] for r in rows)
    cell["bleu"] = corpus_bleu([r["hyps"][0] if r["hyps"] else [] for r in rows],
                               [r["gold"] for r in rows])
    cell["sentence_bleu"] = _mean(r["bleu"] for r in rows)
    if rows and all("bertscore" in r for r in rows):
        cell["bertscore"] = 100.0 * _mean(r["bertscore"] for r in rows)
    cell["forward_calls_per_example"] = _mean(r["forward_calls"] for r in rows)
    cell["forward_rows_per_example"] = _mean(r["forward_rows"] for r in rows)
    secs = sum(r["seconds"] for r in rows)
    cell["examples_per_s"] = len(rows) / secs if secs > 0 else float("nan")
    return cell


def summarize(config, plan, rows: list[dict], bert_available: bool) -> dict:
    """The whole summary: counts, and metrics per method x gap length (plus all gaps pooled)."""
    by_cell: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for r in rows:
        by_cell[(r["method"], r["n"])].append(r)
    cells = []
    for m in plan.grid:
        for n in list(config.gaps) + ["all"]:
            rs = [r for nn in config.gaps for r in by_cell[(m.key, nn)]] if n == "all" \
                else by_cell[(m.key, n)]
            if not rs:
                continue
            cell = {"method": m.key, "name": m.name, "beam": m.beam, "pivot": m.pivot_label,
                    "n": n}
            cell.update(summarize_cell(rs, config.ks, m.beam))
            if n == "all":  # BLEU-n differs per gap length: pool as the mean of the per-n values
                per_n = [corpus_bleu([r["hyps"][0] for r in by_cell[(m.key, nn)]],
                                     [r["gold"] for r in by_cell[(m.key, nn)]])
                         for nn in config.gaps if by_cell[(m.key, nn)]]
                cell["bleu"] = _mean(per_n)
            cells.append(cell)
    expected = {n: len(plan.examples[n]) for n in config.gaps}
    done = sum(len(v) for v in by_cell.values())
    return {
        "config": config.to_json(),
        "counts": {
            "corpus_examples": plan.corpus_size,
            "examples_drawn": plan.n_texts,
            "used": {str(n): expected[n] for n in config.gaps},
            "skipped": {str(n): plan.skipped[n] for n in config.gaps},
            "rows": done, "rows_expected": plan.total_rows(),
        },
        "complete": done == plan.total_rows(),
        "bertscore": {"model": config.bertscore_model, "available": bert_available},
        "cells": cells,
    }


# ---- markdown -----------------------------------------------------------------------------------
def _fmt(x, digits=1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}"


def _table(summary: dict, metric: str, title: str, digits: int = 1) -> list[str]:
    gaps = summary["config"]["gaps"]
    cols = [str(n) for n in gaps] + ["all"]
    methods = list(dict.fromkeys(c["method"] for c in summary["cells"]))
    vals = {(c["method"], str(c["n"])): c.get(metric) for c in summary["cells"]}
    if not any(v is not None for v in vals.values()):
        return []
    out = [f"### {title}", "", "| method | " + " | ".join(f"n={c}" if c != "all" else "all"
                                                        for c in cols) + " |",
           "|---|" + "---:|" * len(cols)]
    for m in methods:
        out.append(f"| {m} | " + " | ".join(_fmt(vals.get((m, c)), digits) for c in cols) + " |")
    return out + [""]


def to_markdown(summary: dict) -> str:
    cfg, counts = summary["config"], summary["counts"]
    lines = [f"## infill bench: {cfg['model']} on {cfg['data']} (split: {cfg['split']})", ""]
    lines.append(f"{counts['examples_drawn']} of {counts['corpus_examples']} examples drawn "
                 f"(seed {cfg['seed']}); per gap length n, used / skipped (too short): " +
                 ", ".join(f"n={n}: {counts['used'][n]} / {counts['skipped'][n]}"
                           for n in counts["used"]) + ".")
    lines.append(f"Rows: {counts['rows']} of {counts['rows_expected']}"
                 + ("" if summary["complete"] else " (incomplete run)") + ".")
    lines.append("")
    ks = sorted({int(key[3:]) for c in summary["cells"] for key in c if key.startswith("top")})
    for k in ks:
        lines += _table(summary, f"top{k}", f"Top-{k} exact match (%)")
    lines += _table(summary, "bleu", "BLEU (sacrebleu corpus BLEU over model tokens, "
                                     "BLEU-n with n = min(4, gap length); all = mean over n)")
    if summary["bertscore"]["available"]:
        lines += _table(summary, "bertscore",
                        f"BERTScore F1 x100 (scorer: {summary['bertscore']['model']})")
    elif summary["bertscore"]["model"]:
        lines += [f"BERTScore left out: scorer model {summary['bertscore']['model']!r} "
                  "could not be loaded.", ""]
    lines += _table(summary, "forward_calls_per_example", "Forward passes per example", 2)
    lines += _table(summary, "examples_per_s", "Throughput (examples/s)", 2)
    return "\n".join(lines)


# ---- plots -------------------------------------------------------------------------------------
def _style(method: str, i: int) -> dict:
    """Distinct colour per method; solid = beam search, dashed = sampling, dotted = ablation."""
    import matplotlib

    name = method.split("/")[0]
    ls = ":" if name.startswith(("scramble", "swap")) else \
        "--" if name.startswith(("pure", "temp", "nucleus")) else "-"
    return {"color": matplotlib.colormaps["tab20"](i % 20), "linestyle": ls}


def plot(summary: dict, out: Path) -> list[str]:
    """topk_vs_k.png, accuracy_vs_gap.png and (with pivots) pivot_sweep.png; returns file names."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = summary["cells"]
    gaps = summary["config"]["gaps"]
    methods = list(dict.fromkeys(c["method"] for c in cells))
    pooled = {c["method"]: c for c in cells if c["n"] == "all"}
    written = []

    fig, ax = plt.subplots(figsize=(6, 4))
    all_ks: set[int] = set()
    for i, m in enumerate(methods):
        c = pooled.get(m)
        if not c:
            continue
        ks = sorted(int(key[3:]) for key in c if key.startswith("top"))
        all_ks.update(ks)
        ax.plot(ks, [c[f"top{k}"] for k in ks], marker="o", label=m, **_style(m, i))
    ax.set_xticks(sorted(all_ks))
    ax.set_xlabel("k")
    ax.set_ylabel("top-k exact match (%)")
    ax.set_title("Top-k accuracy (all gap lengths)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "topk_vs_k.png", dpi=110)
    plt.close(fig)
    written.append("topk_vs_k.png")

    fig, ax = plt.subplots(figsize=(6, 4))
    for i, m in enumerate(methods):
        pts = [(c["n"], c["top1"]) for c in cells if c["method"] == m and c["n"] != "all"]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=m,
                    **_style(m, i))
    ax.set_xticks(gaps)
    ax.set_xlabel("gap length (tokens)")
    ax.set_ylabel("top-1 exact match (%)")
    ax.set_title("Accuracy vs gap length")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "accuracy_vs_gap.png", dpi=110)
    plt.close(fig)
    written.append("accuracy_vs_gap.png")

    sweep = [c for c in cells if c["n"] == "all" and c["pivot"] is not None]
    if sweep:
        groups = list(dict.fromkeys(f"{c['name']}/b{c['beam']}" for c in sweep))
        labels = list(dict.fromkeys(c["pivot"] for c in sweep))
        width = 0.8 / len(groups)
        fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(labels) * len(groups)), 4))
        for gi, g in enumerate(groups):
            vals = {c["pivot"]: c["top1"] for c in sweep if f"{c['name']}/b{c['beam']}" == g}
            ax.bar([i + gi * width for i in range(len(labels))],
                   [vals.get(lab, 0.0) for lab in labels], width=width, label=g)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))])
        ax.set_xticklabels(labels, rotation=90, fontsize=7)
        ax.set_ylabel("top-1 exact match (%)")
        ax.set_title("HCB pivot sweep (all gap lengths)")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / "pivot_sweep.png", dpi=110)
        plt.close(fig)
        written.append("pivot_sweep.png")
    return written


def _clean(x):
    """NaN -> None so summary.json is strict JSON."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def write_report(out: Path, config, plan, rows: list[dict], bert_available: bool) -> dict:
    summary = _clean(summarize(config, plan, rows, bert_available))
    summary["plots"] = plot(summary, out) if summary["cells"] else []
    (out / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False))
    (out / "summary.md").write_text(to_markdown(summary) + "\n", encoding="utf-8")
    return summary
