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
from infill.bench.request import BenchRequest
from infill.data.units import infer_unit  # noqa: F401 (re-exported: summaries' units)
from infill.lazy import LazyModule

matplotlib = LazyModule("matplotlib")          # the plots, on first use
stats = LazyModule("infill.bench.stats")       # numpy


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
        for n in list(config.gap_lengths) + ["all"]:
            rs = [r for nn in config.gap_lengths for r in by_cell[(m.key, nn)]] if n == "all" \
                else by_cell[(m.key, n)]
            if not rs:
                continue
            beam_size = m.config.beam_size
            cell = {"method": m.key, "name": m.name, "beam": beam_size, "pivot": m.pivot_label,
                    "n": n}
            cell.update(summarize_cell(rs, list(config.top_k), beam_size))
            if n == "all":  # BLEU-n differs per gap length: pool as the mean of the per-n values
                per_n = [corpus_bleu([r["hyps"][0] for r in by_cell[(m.key, nn)]],
                                     [r["gold"] for r in by_cell[(m.key, nn)]])
                         for nn in config.gap_lengths if by_cell[(m.key, nn)]]
                cell["bleu"] = _mean(per_n)
            cells.append(cell)
    expected = {n: len(plan.examples[n]) for n in config.gap_lengths}
    done = sum(len(v) for v in by_cell.values())
    return {
        "config": config.to_json(),
        "unit": plan.unit,
        "counts": {
            "corpus_examples": plan.corpus_size,
            "pool": plan.pool_size or plan.corpus_size,
            "examples_drawn": plan.n_texts,
            "used": {str(n): expected[n] for n in config.gap_lengths},
            "skipped": {str(n): plan.skipped[n] for n in config.gap_lengths},
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


def gap_lengths(summary: dict) -> list[int]:
    """The grid's gap lengths of a summary (one written before the rename has them as ``gaps``:
    read through :meth:`BenchRequest.stored`)."""
    return BenchRequest.stored(summary["config"])["gap_lengths"]


def _table(summary: dict, metric: str, title: str, digits: int = 1) -> list[str]:
    gaps = gap_lengths(summary)
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
    model, data = display_names(summary)
    lines = [f"## infill bench: {model} on {data} (split: {cfg['split']})", ""]
    if (model, data) != (str(cfg["model"]), str(cfg["data"])):
        lines += [f"Model `{cfg['model']}`, data `{cfg['data']}`.", ""]
    lines.append(f"{counts['examples_drawn']:,} of {pool_sentence(summary)} drawn "
                 f"(seed {cfg['seed']}); gap length n in {summary.get('unit', 'tokens')}; per n, "
                 "used / skipped (too short): " +
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
        lines += [(f"BERTScore left out: scorer model {summary['bertscore']['model']!r} "
                   "could not be loaded."), ""]
    lines += _table(summary, "forward_calls_per_example", "Forward passes per example", 2)
    lines += _table(summary, "examples_per_s", "Throughput (examples/s)", 2)
    return "\n".join(lines)


def pool_sentence(summary: dict) -> str:
    """What the examples were drawn from: "the 1,293 examples of the test split (corpus:
    25,856)", or "25,856 examples" for ``--split all``."""
    cfg, counts = summary["config"], summary["counts"]
    pool = counts.get("pool") or counts["corpus_examples"]
    if cfg["split"] == "all":
        return f"{counts['corpus_examples']:,} examples"
    return (f"the {pool:,} examples of the {cfg['split']} split (corpus: "
            f"{counts['corpus_examples']:,})")


# ---- names and units ---------------------------------------------------------------------------
def display_name(name: str) -> str:
    """A short name for titles: builtin names and hub ids as they are, a path as its last two
    parts (``.../step200/esm2_protein.pt`` -> ``step200/esm2_protein.pt``)."""
    name = str(name)
    if "/" not in name or name.startswith("builtin:") or not (
            name.startswith(("/", ".", "~")) or Path(name).suffix):
        return name
    parts = Path(name).parts
    return "/".join(parts[-2:]) if len(parts) >= 2 else name


def display_names(summary: dict) -> tuple[str, str]:
    """(model, data) as titles show them: the labels stored in the summary (``model_label``,
    ``data_label``), else the configured names, paths shortened."""
    cfg = summary["config"]
    return (summary.get("model_label") or display_name(cfg["model"]),
            summary.get("data_label") or display_name(cfg["data"]))


# ---- plots -------------------------------------------------------------------------------------
_MARKERS = "osD^vP*Xh<>p"
_DASHES = ["-", "--", "-.", ":"]
_SHOWN_PIVOTS = 2          # per HCB method of a pivot sweep, the best and worst this many


def _style(method: str, i: int, total: int = 10) -> dict:
    """A distinct colour, marker AND line style per method (coinciding curves stay visible):
    solid = beam search, dashed = sampling, dotted = ablation; a marker and a dash pattern by
    position, so two methods never share all three (tab20 colours beyond ten methods)."""
    name = method.split("/")[0]
    kind = 2 if name.startswith(("scramble", "swap")) else 1 if name.startswith(
        ("pure", "temp", "nucleus")) else 0
    colour = (matplotlib.colormaps["tab10"](i % 10) if total <= 10
              else matplotlib.colormaps["tab20"](i % 20))
    return {"color": colour, "marker": _MARKERS[i % len(_MARKERS)],
            "linestyle": [_DASHES[0], _DASHES[1], _DASHES[3]][kind] if i < 10 else _DASHES[2],
            "markersize": 5, "linewidth": 1.4, "markerfacecolor": "none" if i % 2 else None}


def _interval(pct: float | None, n: int) -> tuple[float, float] | None:
    """95% Wilson interval (percent) of an accuracy measured on n examples."""
    if pct is None or not n:
        return None
    lo, hi = stats.wilson_interval(round(pct * n / 100.0), n)
    return 100.0 * lo, 100.0 * hi


def _yerr(ys: list[float], ivs: list) -> list[list[float]]:
    """Error bar lengths below / above each y (NaN where there is no interval)."""
    ivs = [iv or (float("nan"),) * 2 for iv in ivs]
    return [[y - iv[0] for y, iv in zip(ys, ivs)], [iv[1] - y for y, iv in zip(ys, ivs)]]


def _dodge(xs: list, i: int, n: int, span: float) -> list[float]:
    """x positions nudged apart per method so that error bars at the same x stay visible."""
    step = 0.9 * span / max(len(xs), 2) / max(n, 1) * 0.35
    return [x + (i - (n - 1) / 2) * step for x in xs]


def _title(summary: dict, what: str) -> str:
    cfg = summary["config"]
    model, data = display_names(summary)
    split = f", {cfg['split']} split" if cfg["split"] != "all" else ""
    return f"{what}\n{model} on {data}{split}"


def _finish(fig, ax, path: Path) -> None:
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")


def _pivot_label(lab: str) -> str:
    return repr(lab) if lab.strip() != lab or not lab else lab


def default_pivot(summary: dict) -> str | None:
    """The label of the pivot HCB uses when none is given: ``summary["default_pivot"]`` when
    recorded, else the adapters' rule (``-`` = missing for character models, the mask token
    for BERT-like and ESM models) when that label is among the swept pivots."""
    if summary.get("default_pivot") is not None:
        return summary["default_pivot"]
    pivots = {c["pivot"] for c in summary["cells"] if c.get("pivot") is not None}
    guesses = ["-"] if summary.get("unit") == "characters" else ["<mask>", "[MASK]"]
    return next((g for g in guesses if g in pivots), None)


def _gap_series(summary: dict) -> tuple[list[str], dict[str, str], str]:
    """The methods of the accuracy-vs-gap plot, their legend labels and a note for the title.
    A pivot sweep shows, per HCB method, the default pivot and the best and worst
    ``_SHOWN_PIVOTS`` pivots (pooled top-1) next to every method without a pivot: dozens of
    curves are unreadable, and pivot_sweep.png shows them all."""
    cells = summary["cells"]
    methods = list(dict.fromkeys(c["method"] for c in cells))
    pooled = {c["method"]: c for c in cells if c["n"] == "all"}
    pivoted = [m for m in methods if pooled.get(m, {}).get("pivot") is not None]
    if len(pivoted) <= 2 * _SHOWN_PIVOTS + 1:
        return methods, {m: m for m in methods}, ""
    default = default_pivot(summary)
    keep, labels, n_pivots = set(), {}, 0
    for g in dict.fromkeys(f"{pooled[m]['name']}/b{pooled[m]['beam']}" for m in pivoted):
        group = [m for m in pivoted if f"{pooled[m]['name']}/b{pooled[m]['beam']}" == g]
        n_pivots = max(n_pivots, len(group))
        ranked = sorted(group, key=lambda m: -(pooled[m].get("top1") or 0.0))   # stable: ties
        for tag, chosen in (("best", ranked[:_SHOWN_PIVOTS]), ("worst", ranked[-_SHOWN_PIVOTS:])):
            for m in chosen:
                keep.add(m)
                labels[m] = f"{g} pivot {pooled[m]['pivot']!r} ({tag})"
        for m in group:
            if default is not None and pooled[m]["pivot"] == default:
                keep.add(m)
                labels[m] = f"{g} pivot {default!r} (default)"
    shown = [m for m in methods if m in keep or m not in pivoted]
    labels.update({m: m for m in shown if m not in pivoted})
    note = (f"HCB: {'default, ' if default is not None else ''}{_SHOWN_PIVOTS} best and "
            f"{_SHOWN_PIVOTS} worst of {n_pivots} pivots (all in pivot_sweep.png)")
    return shown, labels, note


def _plot_topk(summary: dict, out: Path, plt) -> str | None:
    """topk_vs_k.png: top-k accuracy against k, all gap lengths pooled (needs two usable k)."""
    cells = summary["cells"]
    methods = list(dict.fromkeys(c["method"] for c in cells))
    pooled = {c["method"]: c for c in cells if c["n"] == "all"}
    all_ks = sorted({int(key[3:]) for c in pooled.values() for key in c if key.startswith("top")})
    if len(all_ks) < 2:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for i, m in enumerate(methods):
        c = pooled.get(m)
        if not c:
            continue
        ks = [k for k in all_ks if c.get(f"top{k}") is not None]
        ys = [c[f"top{k}"] for k in ks]
        ivs = [_interval(y, c["count"]) for y in ys]
        ax.errorbar(_dodge(ks, i, len(methods), max(all_ks) - min(all_ks)), ys,
                    yerr=_yerr(ys, ivs), capsize=2, label=m, **_style(m, i, len(methods)))
    ax.set_xticks(all_ks)
    ax.set_xlabel("k (completions read)")
    ax.set_ylabel("top-k exact match (%), 95% CI")
    n = max((c["count"] for c in pooled.values()), default=0)
    ax.set_title(_title(summary, f"Top-k accuracy, all gap lengths pooled (n = {n} gaps per "
                                 "method)"), fontsize=9)
    _finish(fig, ax, out / "topk_vs_k.png")
    plt.close(fig)
    return "topk_vs_k.png"


def _plot_gaps(summary: dict, out: Path, plt) -> str | None:
    """accuracy_vs_gap.png: top-1 accuracy against gap length (needs two gap lengths)."""
    cells, gaps = summary["cells"], gap_lengths(summary)
    if len(gaps) < 2:
        return None
    methods, labels, note = _gap_series(summary)
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for i, m in enumerate(methods):
        pts = [(c["n"], c.get("top1"), c["count"]) for c in cells
               if c["method"] == m and c["n"] != "all"]
        if not pts:
            continue
        xs = [p[0] for p in pts]
        ys = [float("nan") if p[1] is None else p[1] for p in pts]
        ivs = [_interval(p[1], p[2]) for p in pts]
        ax.errorbar(_dodge(xs, i, len(methods), max(gaps) - min(gaps)), ys, yerr=_yerr(ys, ivs),
                    capsize=2, label=labels[m], **_style(m, i, len(methods)))
    counts = sorted({c["count"] for c in cells if c["n"] != "all" and c["method"] in methods})
    ncount = f"n = {counts[0]}" if len(counts) == 1 else f"n = {counts[0]}–{counts[-1]}"
    ax.set_xticks(gaps)
    ax.set_xlabel(f"gap length ({summary.get('unit', 'tokens')})")
    ax.set_ylabel("top-1 exact match (%), 95% CI")
    what = f"Accuracy vs gap length ({ncount} per point)" + (f"\n{note}" if note else "")
    ax.set_title(_title(summary, what), fontsize=9)
    _finish(fig, ax, out / "accuracy_vs_gap.png")
    plt.close(fig)
    return "accuracy_vs_gap.png"


def _plot_sweep(summary: dict, out: Path, plt) -> str | None:
    """pivot_sweep.png: pooled top-1 per HCB pivot (bars, the default pivot hatched), the
    methods without a pivot as horizontal reference lines (needs two pivots, and top-1 among
    the k measured)."""
    cells = summary["cells"]
    sweep = [c for c in cells
             if c["n"] == "all" and c["pivot"] is not None and c.get("top1") is not None]
    labels = list(dict.fromkeys(c["pivot"] for c in sweep))
    if len(labels) < 2:
        return None

    default = default_pivot(summary)
    groups = list(dict.fromkeys(f"{c['name']}/b{c['beam']}" for c in sweep))
    width = 0.8 / len(groups)
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(labels) * len(groups)), 4.2))
    colours = matplotlib.colormaps["tab10"]
    for gi, g in enumerate(groups):
        vals = {c["pivot"]: (c["top1"], c["count"]) for c in sweep
                if f"{c['name']}/b{c['beam']}" == g}
        shown = [lab for lab in labels if lab in vals and vals[lab][0] is not None]
        xs = [labels.index(lab) + gi * width for lab in shown]
        ys = [vals[lab][0] for lab in shown]
        ivs = [_interval(*vals[lab]) for lab in shown]
        bars = ax.bar(xs, ys, width=width, label=g, color=colours(gi % 10), yerr=_yerr(ys, ivs),
                      capsize=1.5, error_kw={"elinewidth": 0.6})
        for lab, bar in zip(shown, bars):
            if lab == default:
                bar.set_hatch("///")
                bar.set_edgecolor("black")
                bar.set_label(f"{g}, default pivot {default!r}")
    plain = [c for c in cells
             if c["n"] == "all" and c["pivot"] is None and c.get("top1") is not None]
    for j, c in enumerate(plain):
        iv = _interval(c["top1"], c["count"])
        style = {"color": colours((len(groups) + j) % 10), "linestyle": _DASHES[1 + j % 3]}
        ax.axhline(c["top1"], linewidth=1.2, label=f"{c['method']} (no pivot)", **style)
        if iv:
            ax.axhspan(iv[0], iv[1], alpha=0.08, color=style["color"])
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))])
    shown = [_pivot_label(lab) for lab in labels]
    short = max(len(x) for x in shown) <= 3
    ax.set_xticklabels(shown, rotation=0 if short else 90, fontsize=10 if short else 7)
    ax.set_xlabel("HCB pivot token")
    ax.set_ylabel("top-1 exact match (%), 95% CI")
    counts = sorted({c["count"] for c in sweep})
    ncount = f"n = {counts[0]}" if len(counts) == 1 else f"n = {counts[0]}–{counts[-1]}"
    ax.set_title(_title(summary, f"HCB pivot sweep, all gap lengths pooled ({ncount} gaps per "
                                 "pivot; shaded: 95% CI of the reference lines)"), fontsize=9)
    _finish(fig, ax, out / "pivot_sweep.png")
    plt.close(fig)
    return "pivot_sweep.png"


def plot(summary: dict, out: Path) -> list[str]:
    """topk_vs_k.png, accuracy_vs_gap.png and (with pivots) pivot_sweep.png; returns file names.
    A plot needs at least two points on its x axis (else it is not drawn); a missing value is a
    gap in its curve, never a 0; accuracies carry 95% Wilson intervals."""
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drawn = [panel(summary, out, plt) for panel in (_plot_topk, _plot_gaps, _plot_sweep)]
    return [name for name in drawn if name]


def _clean(x):
    """NaN -> None so summary.json is strict JSON."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def render(summary: dict, out: Path) -> dict:
    """(Re)write a run's summary.json, summary.md and plots from its summary (the plots of an
    earlier rendering that are no longer drawn are removed)."""
    out = Path(out)
    for old in summary.get("plots", []):
        (out / old).unlink(missing_ok=True)
    summary["plots"] = plot(summary, out) if summary["cells"] else []
    (out / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False),
                                      encoding="utf-8")
    (out / "summary.md").write_text(to_markdown(summary) + "\n", encoding="utf-8")
    return summary


def write_report(out: Path, config, plan, rows: list[dict], bert_available: bool) -> dict:
    return render(_clean(summarize(config, plan, rows, bert_available)), out)
