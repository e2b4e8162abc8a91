"""Calibration of the readings proposed for two lacunae of one text (issue 48).

Per validation inscription, its editors' supplements of 1-10 letters are paired in text order
(the 1st with the 2nd, the 3rd with the 4th, ...) and each pair hidden together (``?`` per
letter, the inscription's other lost stretches shown as missing). Each lacuna gets as its
proposed readings the first three distinct restorations of the same supplement hidden alone
(the one-at-a-time caches of ``iospe_lengths_report.py``, ``--lengths``): readings a model would
propose, chosen without the editor's. ``infill.readings`` scores the nine combinations; per
lacuna, its most probable reading's stated probability against whether it is the editor's,
stated two ways from the same call:

- ``joint``: the reading's marginal over the combinations' calibrated joint probabilities, one
  unlisted mass set against the joint score of both lacunae -- what infill reported before;
- ``own`` (shipped): the lacuna's own calibrated probability (``ReadingsResult.lacunae``:
  its readings' letters' log-scores in the best combination holding each, beside u_k).

    OMP_NUM_THREADS=1 python benchmarks/readings_calibration.py --corpus iospe \\
        --lengths benchmarks/results/lengths/bare10.validation.jsonl \\
        --cache benchmarks/results/editions/readings.iospe.validation.jsonl

Results: ``benchmarks/results/greek_calibration.md`` ("Readings proposed for several lacunae").
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from greek_calibration import ece, ece_floor  # noqa: E402

import infill  # noqa: E402
from infill.bench.epidoc import epidoc_folder, tasks_for  # noqa: E402
from infill.data.epidoc import read_edition  # noqa: E402
from infill.errors import InputError  # noqa: E402

PROPOSED = 3


def pairs(corpus: str, split: str, singles: dict[str, list[str]]) -> list[tuple]:
    """(file, (index, index), (gold, gold)) per pair of supplements both in ``singles`` (the
    one-at-a-time restorations by ``file#index``), hidden as two separate ``?`` runs."""
    tasks = tasks_for(epidoc_folder(corpus), split, list(range(1, 11)))
    by_file: dict[str, list] = {}
    for t in tasks:
        if f"{Path(t.file).name}#{t.index}" in singles:
            by_file.setdefault(t.file, []).append(t)
    return [(f, (a.index, b.index), (a.gold, b.gold))
            for f, ts in by_file.items() for a, b in zip(ts[::2], ts[1::2])]


def proposed(fills: list[str]) -> list[str]:
    """The first :data:`PROPOSED` distinct restorations."""
    return list(dict.fromkeys(fills))[:PROPOSED]


def decode(model, todo: list[tuple], singles: dict, cache: Path) -> dict[str, dict]:
    """Per pair: its readings and each lacuna's probabilities stated both ways (cached)."""
    done = {}
    if cache.is_file():
        done = {r["pair"]: r for r in map(json.loads, cache.read_text("utf-8").splitlines())}
    t0 = time.perf_counter()
    with cache.open("a", encoding="utf-8") as out:
        for f, (a, b), gold in todo:
            name = f"{Path(f).name}#{a}+{b}"
            if name in done:
                continue
            r = read_edition(f, require_text=False).render(
                lambda x: "restore" if x.index in (a, b) else "missing")
            (_, s1, e1), (_, s2, e2) = r.restore
            row = {"pair": name, "gold": list(gold), "readings": [], "own": [], "joint": []}
            rs = []
            if s2 > e1 and "?" not in r.text[e1:s2]:
                rs = [proposed(singles[f"{Path(f).name}#{k}"]) for k in (a, b)]
                try:
                    res = infill.readings(model, r.text, ["|".join(x) for x in rs])
                except InputError as e:     # a text the reader refuses (iAph080027's stray ])
                    row["error"] = str(e)
                    rs = []
            if rs:
                row["readings"] = [[x.text for x in lac] for lac in res.lacunae]
                row["own"] = [[x.prob for x in lac] for lac in res.lacunae]
                row["joint"] = [[sum(c.prob for c in res.combinations if c.readings[k] == x)
                                 for x in lac] for k, lac in enumerate(row["readings"])]
            done[name] = row
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            if len(done) % 20 == 0:
                print(f"  {len(done)} pairs ({time.perf_counter() - t0:.0f} s)", flush=True)
    return done


def stated(rows: list[dict], how: str) -> tuple[np.ndarray, np.ndarray]:
    """(first reading's probability, right) per lacuna, stated ``how`` (``own`` or ``joint``)."""
    p, y = [], []
    for row in rows:
        for readings, probs, gold in zip(row["readings"], row[how], row["gold"]):
            best = int(np.argmax(probs))
            p.append(probs[best])
            y.append(float(readings[best] == gold))
    return np.array(p), np.array(y)


def main() -> None:
    """Decode (or read the cache) and print ECE both ways."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:greek")
    ap.add_argument("--corpus", default="iospe")
    ap.add_argument("--split", default="validation", choices=("validation", "test", "all"))
    ap.add_argument("--lengths", type=Path, required=True,
                    help="iospe_lengths_report.py's cache of the supplements hidden one at a time")
    ap.add_argument("--cache", type=Path, required=True)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    singles = {r["key"]: r["fills"] for r in
               map(json.loads, args.lengths.read_text("utf-8").splitlines()) if r.get("fills")}
    todo = pairs(args.corpus, args.split, singles)
    args.cache.parent.mkdir(parents=True, exist_ok=True)
    done = decode(infill.load_model(args.model, device="cpu"), todo, singles, args.cache)
    rows = [r for r in done.values() if r["readings"]]
    bad = sum("error" in r for r in done.values())
    print(f"{args.corpus} {args.split}: {len(rows)} pairs of lacunae "
          f"({len(done) - len(rows) - bad} adjacent, {bad} refused by the reader, left out)\n\n"
          "| stated | n | right | mean p | ECE | floor |\n|---|---:|---:|---:|---:|---:|")
    for how in ("joint", "own"):
        p, y = stated(rows, how)
        print(f"| {how} | {len(y)} | {y.mean():.3f} | {p.mean():.3f} | {ece(p, y):.3f} | "
              f"{ece_floor(p, 500):.3f} |")


if __name__ == "__main__":
    main()
