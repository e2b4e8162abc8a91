"""Calibration of an edition's readings (issue 48): every editor's supplement of a file hidden at
once, as ``infill run EDITION.xml --hide-supplied`` restores them, and the stated probability of
each lacuna's first reading against whether it is the editor's.

An edition's completions fill all its lacunae together, so their scores are joint: a file with
ten lacunae scores about ten times as low as one supplement. Three ways to state a lacuna's
probability from the same completions (the model's temperature T throughout):

- ``joint``: the calibrated share of the completions holding the reading, u (one number, the
  last of the model's list) set against the joint scores -- what infill did before;
- ``per lacuna, u``: each lacuna's own log-score (its letters' log-probabilities in the
  completion), calibrated among its distinct readings, with that one u;
- ``per lacuna, u_k`` (shipped): the same with the u for as many readings as the lacuna lists.

    OMP_NUM_THREADS=1 python benchmarks/edition_calibration.py --corpus iospe --split validation \\
        --cache benchmarks/results/editions/iospe.validation.jsonl

Results: ``benchmarks/results/greek_calibration.md`` ("An edition's readings").
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
from infill.bench.epidoc import epidoc_folder  # noqa: E402
from infill.data.epidoc_corpus import _part  # noqa: E402
from infill.data.greek import normalize  # noqa: E402
from infill.epigraphy import read_for_restore, restore_files  # noqa: E402
from infill.filling.calibration import calibrated  # noqa: E402
from infill.filling.defaults import recommendation  # noqa: E402


def decode(model, files: list[Path], cache: Path) -> list[dict]:
    """Per file: each hidden supplement's editor's letters and, per completion, its fill and
    own log-score there, with the completions' joint scores (cached, one line per file). A file
    with lacunae of uncertain length is not decoded: its lengths are ranked together, and its
    readings keep the joint shares."""
    done = {}
    if cache.is_file():
        done = {r["file"]: r for r in map(json.loads, cache.read_text("utf-8").splitlines())}
    t0 = time.perf_counter()
    with cache.open("a", encoding="utf-8") as out:
        for k, f in enumerate(f for f in files if f.name not in done):
            row = {"file": f.name, "lacunae": []}
            if read_for_restore(str(f), None, model, True).rendered.ranges:
                row["ranked"] = True        # lacunae of uncertain length: joint shares, as shipped
                done[f.name] = row
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
                continue
            [r] = restore_files(model, [str(f)], hide_supplied=True, top_k=5)
            ranked = any(c.rank_score is not None for c in r.completions)
            row["ranked"] = ranked          # lengths ranked together: joint shares, as shipped
            if r.error is None and r.completions and not ranked and \
                    len(r.completions[0].spans) == len(r.rendered.restore):
                row["joint"] = [c.score for c in r.completions]
                for g, (index, _, _) in enumerate(r.rendered.restore):
                    lac = r.edition.lacunae[index]
                    row["lacunae"].append({
                        "editor": normalize(lac.editor or "", symbols=False),
                        "fills": [normalize(c.text[slice(*c.spans[g])], symbols=False)
                                  for c in r.completions],
                        "own": [sum(p.logq for p in c.positions if p.gap_index == g)
                                for c in r.completions]})
            done[f.name] = row
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            print(f"  {k + 1} files ({time.perf_counter() - t0:.0f} s)", flush=True)
    return [done[f.name] for f in files if f.name in done]


def stated(rows: list[dict], t: float, us, how: str) -> tuple[np.ndarray, np.ndarray]:
    """(first reading's probability, right) per editor's supplement, stated ``how``."""
    p, y = [], []
    last = us[-1] if isinstance(us, tuple) else us
    for row in rows:
        joint = calibrated(row["joint"], t, last) if row["lacunae"] else []
        for lac in row["lacunae"]:
            if not lac["editor"]:
                continue
            share: dict[str, float] = {}
            if how == "joint":
                for fill, w in zip(lac["fills"], joint):
                    share[fill] = share.get(fill, 0.0) + w
            else:
                first = {}
                for fill, own in zip(lac["fills"], lac["own"]):
                    first.setdefault(fill, own)
                u = us if how == "per lacuna, u_k" else last
                share = dict(zip(first, calibrated(list(first.values()), t, u)))
            best = max(share, key=share.get)
            p.append(share[best])
            y.append(float(best == lac["editor"]))
    return np.array(p), np.array(y)


def main() -> None:
    """Decode (or read the cache), print ECE of the three ways."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:greek")
    ap.add_argument("--corpus", default="iospe")
    ap.add_argument("--split", default="validation", choices=("validation", "test", "all"))
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--cached-only", action="store_true",
                    help="measure the files already in the cache, decoding none")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    files = _part(epidoc_folder(args.corpus), args.split)
    if args.cached_only:
        cached = {json.loads(line)["file"] for line in
                  args.cache.read_text("utf-8").splitlines()} if args.cache.is_file() else set()
        files = [f for f in files if f.name in cached]
    args.cache.parent.mkdir(parents=True, exist_ok=True)
    rows = decode(infill.load_model(args.model, device="cpu"), files, args.cache)
    rec = recommendation(args.model)
    print(f"{args.corpus} {args.split}: {len(rows)} files, "
          f"{sum(bool(r.get('ranked')) for r in rows)} with lengths ranked (left out), "
          f"{sum(len(r['lacunae']) for r in rows)} lacunae\n\n"
          "| stated | n | right | mean p | ECE | floor |\n|---|---:|---:|---:|---:|---:|")
    for how in ("joint", "per lacuna, u", "per lacuna, u_k"):
        p, y = stated(rows, rec.temperature, rec.unlisted, how)
        print(f"| {how} | {len(y)} | {y.mean():.3f} | {p.mean():.3f} | {ece(p, y):.3f} | "
              f"{ece_floor(p, 500):.3f} |")


if __name__ == "__main__":
    main()
