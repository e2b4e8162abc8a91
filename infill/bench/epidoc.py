"""``infill bench`` on EpiDoc editions: the editors' supplements as restoration tasks.

Example selector (:func:`editors_supplements`): DATA is a folder of EpiDoc files, or ``iospe``
(``greek/iospe`` under the data root). Each editor's ``<supplied reason="lost">`` whose
normalized length is one of ``--gap-lengths`` (default in the CLI: 2,3,4,5; the README's table uses
1-10) is hidden in turn, every other lost
stretch of its inscription shown as missing (:func:`infill.data.epidoc_corpus.supplement_tasks`);
``--split`` picks a part of the corpus's split by inscription (80/10/10, seed 0), and ``-n`` a
seeded sample of the tasks. An example's id is the task's position in the part's task list.

Besides the usual tables the run writes ``epidoc.json`` / ``epidoc.md``: per method top-1/5/10
exact match, the character error rate (Ithaca's: edit distance between the first restoration and
the editor's, divided by the editor's length, averaged over supplements), the same for the
supplements that are whole words, per-length rows, and paired bootstrap intervals of HCB minus
standard on the same supplements.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

from infill.bench.gaps import Example, pick_indices
from infill.bench.selection import Selection
from infill.data.corpora import data_root
from infill.data.epidoc import read_edition
from infill.data.epidoc_corpus import IOSPE, Task, _part, supplement_tasks
from infill.decoding.windows import body_bounds, truncate
from infill.errors import InputError
from infill.lazy import LazyModule

stats = LazyModule("infill.bench.stats")       # numpy, on first use

__all__ = ["cer", "edit_distance", "editors_supplements", "epidoc_folder", "epidoc_report",
           "tasks_for"]


def epidoc_folder(data: str, root: str | None = None) -> Path | None:
    """The EpiDoc folder DATA names (``iospe`` or a folder of ``*.xml``), or None."""
    if data == "iospe":
        base = data_root(root)
        if base is None or not (base / IOSPE).is_dir():
            raise InputError(f"IOSPE not found ({IOSPE} under the data folder); pass 'data_root' "
                             "DIR or set INFILL_DATA=DIR; docs/CORPORA.md says where to get it",
                             field="data_root")
        return base / IOSPE
    p = Path(data)
    if p.is_dir() and any(p.glob("*.xml")):
        return p
    return None


def tasks_for(folder: Path, split: str, lengths: list[int], files: int = 0) -> list[Task]:
    """Every supplement task of a part, in file order then text order; ``files`` > 0: of a
    seeded sample (seed 0) of that many of the part's files only (a large corpus, EDH)."""
    wanted = set(lengths)
    paths = _part(folder, split)
    if 0 < files < len(paths):
        paths = sorted(random.Random(0).sample(paths, files))
    return [t for f in paths
            for t in supplement_tasks(read_edition(f, require_text=False), wanted)]


def _example(model, k: int, task: Task) -> Example | None:
    enc = model.encode(task.text, 1)
    if len(enc.gaps) != 1:
        return None
    gap = enc.gaps[0]
    gold = [t for t in model.tokenize(task.gold) if t < model.vocab_size]
    if len(gold) != len(gap):
        return None
    ids = list(enc.input_ids)
    ids[gap[0]:gap[-1] + 1] = gold
    structural = {t for t in ids if t >= model.vocab_size}
    lo, hi = body_bounds(ids, structural)
    window, start = truncate(ids, gap[0], len(gap), lo, hi, model.max_length)
    return Example(k, len(gap), tuple(window), start)


def editors_supplements(model, request, folder: Path):
    """The example selector of an EpiDoc corpus (see the module docstring): a
    :class:`~infill.bench.selection.Selection` of the editors' supplements."""
    tasks = tasks_for(folder, request.split, list(request.gap_lengths))
    if not tasks:
        raise InputError(f"no editor's supplement of {', '.join(map(str, request.gap_lengths))} "
                         f"characters in {folder} (split {request.split})", field="data")
    chosen = pick_indices(list(range(len(tasks))), request.examples, request.seed)
    by_n: dict[int, list[Example]] = {n: [] for n in request.gap_lengths}
    skipped = {n: 0 for n in request.gap_lengths}
    for k in chosen:
        ex = _example(model, k, tasks[k])
        if ex is None:
            skipped[len(tasks[k].gold)] = skipped.get(len(tasks[k].gold), 0) + 1
        else:
            by_n[ex.n].append(ex)
    files = {t.file for t in tasks}
    return Selection(by_n, skipped, len(chosen), len(files), len(tasks),
                     report=lambda out, rows: epidoc_report(out, rows, tasks,
                                                            list(request.top_k)))


# ---- metrics and report -----------------------------------------------------------------------
def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions all cost 1)."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def cer(hyp: str, gold: str) -> float:
    """Character error rate of one restoration: edit distance / the gold's length."""
    return edit_distance(hyp, gold) / max(1, len(gold))


def _cell(rows: list[dict], ks: list[int]) -> dict:
    n = len(rows)
    out = {"n": n}
    for k in ks:
        hits = [r["hits"].get(str(k)) for r in rows]
        if n and all(h is not None for h in hits):
            out[f"top{k}"] = 100.0 * sum(bool(h) for h in hits) / n
    out["cer"] = sum(cer(r["fill"], r["gold_fill"]) for r in rows) / n if n else None
    return out


def _paired(rows: list[dict], a: str, b: str, ks: list[int]) -> dict:
    ra = {r["key"].split("|", 1)[1]: r for r in rows if r["method"] == a}
    rb = {r["key"].split("|", 1)[1]: r for r in rows if r["method"] == b}
    common = sorted(set(ra) & set(rb))
    out = {"a": a, "b": b, "n": len(common)}
    if len(common) < 2:
        return out
    for k in ks:
        if all(str(k) in ra[c]["hits"] and str(k) in rb[c]["hits"] for c in common):
            res = stats.paired_bootstrap([float(ra[c]["hits"][str(k)]) for c in common],
                                         [float(rb[c]["hits"][str(k)]) for c in common])
            out[f"top{k}"] = {key: 100.0 * res[key] for key in ("mean_diff", "lo", "hi")}
    res = stats.paired_bootstrap([cer(ra[c]["fill"], ra[c]["gold_fill"]) for c in common],
                                 [cer(rb[c]["fill"], rb[c]["gold_fill"]) for c in common])
    out["cer"] = {key: res[key] for key in ("mean_diff", "lo", "hi")}
    return out


def epidoc_report(out: Path, rows: list[dict], tasks: list[Task], ks: list[int]) -> dict:
    """``epidoc.json`` and ``epidoc.md`` in ``out`` (see the module docstring); returns the dict."""
    methods = list(dict.fromkeys(r["method"] for r in rows))
    whole = {k for k, t in enumerate(tasks) if t.whole_word}
    report: dict = {"methods": {}, "paired": []}
    for m in methods:
        mine = [r for r in rows if r["method"] == m]
        lengths = sorted({r["n"] for r in mine})
        report["methods"][m] = {
            "all": _cell(mine, ks),
            "whole_words": _cell([r for r in mine if r["example_id"] in whole], ks),
            "by_length": {str(n): _cell([r for r in mine if r["n"] == n], ks) for n in lengths}}
    hcb = [m for m in methods if m.startswith("hcb")]
    std = [m for m in methods if m.startswith("standard")]
    for a in hcb:
        b = next((s for s in std if s.split("/")[0].split("-")[1:] == a.split("/")[0].split("-")[1:]
                  and s.split("/")[1:] == a.split("/")[1:]), None)
        if b is not None:
            report["paired"].append(_paired(rows, a, b, ks))
    (out / "epidoc.json").write_text(json.dumps(report, indent=1, ensure_ascii=False),
                                     encoding="utf-8")
    (out / "epidoc.md").write_text(epidoc_markdown(report, ks), encoding="utf-8")
    return report


def _f(x, digits=1) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def epidoc_markdown(report: dict, ks: list[int]) -> str:
    """The report as Markdown tables."""
    cols = [f"top-{k} %" for k in ks]
    lines = ["| method | supplements | " + " | ".join(cols) + " | CER | whole words: n | top-1 % "
             "| CER |", "|---|---:|" + "---:|" * (len(ks) + 4)]
    for m, cell in report["methods"].items():
        a, w = cell["all"], cell["whole_words"]
        lines.append(f"| {m} | {a['n']} | " + " | ".join(_f(a.get(f"top{k}")) for k in ks)
                     + f" | {_f(a['cer'], 3)} | {w['n']} | {_f(w.get('top1'))} "
                     f"| {_f(w['cer'], 3)} |")
    for p in report["paired"]:
        parts = [f"top-{k} {_f(p[f'top{k}']['mean_diff'])} [{_f(p[f'top{k}']['lo'])}, "
                 f"{_f(p[f'top{k}']['hi'])}] points" for k in ks if f"top{k}" in p]
        if "cer" in p:
            c = p["cer"]
            parts.append(f"CER {c['mean_diff']:+.3f} [{c['lo']:+.3f}, {c['hi']:+.3f}]")
        lines += ["", f"{p['a']} − {p['b']} (paired bootstrap, 95%, n = {p['n']}): "
                  + "; ".join(parts)]
    lines += ["", "| method | length | n | " + " | ".join(cols) + " | CER |",
              "|---|---:|---:|" + "---:|" * (len(ks) + 1)]
    for m, cell in report["methods"].items():
        for n, c in cell["by_length"].items():
            lines.append(f"| {m} | {n} | {c['n']} | " + " | ".join(_f(c.get(f"top{k}")) for k in ks)
                         + f" | {_f(c['cer'], 3)} |")
    return "\n".join(lines) + "\n"
