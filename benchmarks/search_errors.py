"""Search error or model error? Where a builtin's first restoration of an editor's supplement is
wrong, would a wider beam have found the editor's letters?

For each supplement whose first restoration (a cache of ``benchmarks/iospe_lengths_report.py``,
which keeps each restoration's score) is not the editor's, the editor's letters are scored
exactly, in the same hidden text, under the same scorer and order (``infill.readings``: the sum
of the updates along the order the beam would fill them in -- no search). If they score higher
than the beam's first restoration, the beam missed a fill the model prefers: a **search error**,
which a wider beam can mend. If lower, the model prefers a wrong fill: a **model error**, which
no search mends. The beam's own first restoration is scored the same way where it is the
supplement's length, to check that the two scores are on one scale (they agree to 1e-3).

    OMP_NUM_THREADS=1 python benchmarks/search_errors.py --model builtin:latin \\
        --corpus EDH_DIR --split validation --files 300 --sample 200 --fold-uv \\
        --cache benchmarks/results/latin/s1500m15_std.edh.validation.jsonl

(the cache and the sample as ``iospe_lengths_report.py`` made them: the same ``--corpus``,
``--split``, ``--files``, ``--per-class`` and ``--sample``; results:
``benchmarks/results/search_errors.md``.)
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import warnings
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import iospe_lengths_report as report  # noqa: E402

import infill  # noqa: E402
from infill.errors import InputError  # noqa: E402

AGREE = 1e-3
"""How close the readings' score of the beam's first restoration must come to the beam's."""


def scored_cache(path: Path) -> dict[str, dict]:
    """{supplement key: its cached row (``fills`` and ``scores``, best first)}."""
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return {row["key"]: row for row in rows if row.get("fills") and row.get("scores")}


def exact_scores(model, task, fills: list[str]) -> dict[str, float]:
    """{fill: its exact score in the task's hidden text} for those of ``fills`` the lacuna holds
    (a fill of another length, or letters the model cannot write, is left out)."""
    out = {}
    for fill in dict.fromkeys(fills):
        try:
            result = infill.readings(model, task.text, [[fill]], beam_size=1, top_k=1)
        except InputError:
            continue
        out[fill] = result.combinations[0].score
    return out


def verdicts(model, tasks: list, rows: dict[str, dict], same) -> list[dict]:
    """Per supplement whose first restoration is wrong: its length, the beam's score of its
    first restoration, the editor's letters' exact score (None: not scoreable), and whether the
    readings reproduce the beam's score."""
    out = []
    for t in tasks:
        row = rows.get(report.key(t))
        if row is None or same(row["fills"][0]) == same(t.gold):
            continue
        exact = exact_scores(model, t, [t.gold, row["fills"][0]])
        mine = exact.get(row["fills"][0])
        out.append({"key": report.key(t), "length": len(t.gold), "gold": t.gold,
                    "first": row["fills"][0], "beam": row["scores"][0],
                    "last": row["scores"][-1], "listed": len(row["fills"]),
                    "in_list": same(t.gold) in map(same, row["fills"]),
                    "editor": exact.get(t.gold),
                    "agrees": None if mine is None else abs(mine - row["scores"][0]) <= AGREE})
    return out


def table(found: list[dict], right: dict[str, int]) -> list[str]:
    """Markdown rows per length class: supplements, first restoration right, wrong, of the wrong
    the search errors and model errors (with the median margin of the model's preference); of
    those the beam does not list at all, how many score above its last listed restoration (a
    search error of the list: a wider beam would list them)."""
    lines = ["| supplements | n | first right | wrong | search errors | model errors | "
             "not scoreable | median beam − editor (model errors) | not listed | "
             "of them above the last listed |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    classes = {**{f"{c} letters": r for c, r in report.CLASSES.items()}, "all": range(1, 11)}
    for name, lengths in classes.items():
        mine = [f for f in found if f["length"] in lengths]
        scored = [f for f in mine if f["editor"] is not None]
        search = [f for f in scored if f["editor"] > f["beam"]]
        model = [f for f in scored if f["editor"] <= f["beam"]]
        n = right[name] + len(mine)
        margin = np.median([f["beam"] - f["editor"] for f in model]) if model else float("nan")
        pct = lambda k: f"{k} ({100 * k / len(scored):.0f}%)" if scored else "0"  # noqa: E731
        unlisted = [f for f in scored if not f["in_list"]]
        above = sum(f["editor"] > f["last"] for f in unlisted)
        lines.append(f"| {name} | {n} | {right[name]} | {len(mine)} | {pct(len(search))} | "
                     f"{pct(len(model))} | {len(mine) - len(scored)} | {margin:.2f} | "
                     f"{len(unlisted)} | {above} |")
    return lines


def main() -> None:
    """Score the editors' letters where the first restoration is wrong; print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:greek")
    ap.add_argument("--cache", type=Path, required=True,
                    help="iospe_lengths_report.py's cache of the model's restorations")
    ap.add_argument("--corpus", default="iospe")
    ap.add_argument("--split", default="validation", choices=("validation", "test", "all"))
    ap.add_argument("--files", type=int, default=0)
    ap.add_argument("--per-class", type=int, default=0)
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--fold-uv", action="store_true",
                    help="compare u and v as one letter (Latin)")
    ap.add_argument("--json", type=Path, default=None, help="write each verdict here")
    args = ap.parse_args()
    if not args.cache.is_file():
        report.fail(f"--cache: no file {args.cache}")
    if args.fold_uv:
        from infill.data.latin import fold_uv as same
    else:
        same = lambda s: s  # noqa: E731
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")         # a long inscription's windows: not the question here
    tasks = report.chosen_tasks(args.split, args.per_class, args.corpus, args.files)
    if args.sample and args.sample < len(tasks):
        tasks = sorted(random.Random(0).sample(tasks, args.sample), key=lambda t: (t.file, t.index))
    rows = scored_cache(args.cache)
    tasks = [t for t in tasks if report.key(t) in rows]
    if not tasks:
        report.fail(f"--cache: {args.cache} holds none of the chosen supplements")
    found = verdicts(infill.load_model(args.model, device="cpu"), tasks, rows, same)
    wrong = {f["key"] for f in found}
    right = {name: sum(len(t.gold) in lengths and report.key(t) not in wrong for t in tasks)
             for name, lengths in {**{f"{c} letters": r for c, r in report.CLASSES.items()},
                                   "all": range(1, 11)}.items()}
    checked = [f["agrees"] for f in found if f["agrees"] is not None]
    print(f"`{args.model}`, {len(tasks)} editors' supplements of {args.corpus} {args.split} "
          f"({args.cache.name}); the readings reproduce the beam's score of its first "
          f"restoration in {sum(checked)} of {len(checked)}\n")
    print("\n".join(table(found, right)))
    if args.json:
        args.json.write_text("\n".join(json.dumps(f, ensure_ascii=False) for f in found) + "\n",
                             encoding="utf-8")


if __name__ == "__main__":
    main()
